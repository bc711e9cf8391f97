//! HBM stack files: a chip's `hbm.preset` names a built-in stack preset (`"hbm3e-9600"`, the
//! files of models/configs/mem/hbm) or a stack file by path (`"my-stack.ron"`,
//! `"stacks/hbm3-5200.json"`, relative to the chip file's folder). A stack file is RON
//! (`StackSpec(...)`) or, ending in `.json`, JSON with the same fields; [`parse`] checks every
//! field and locates the first bad one in the file (`file:line:col: timing.cl: message`).
//! `trnsim hbm --preset` and `trnsim describe hbm` take the same names and paths.

use crate::located::ConfigError;
use trnsim_mem::hbm::presets::{self, SpecError, StackSpec};

/// True when `name` is a path rather than a preset name.
pub fn is_path(name: &str) -> bool {
    crate::located::is_path(name)
}

/// The stack named `name` in a chip file `chip_file` (empty: the working directory): its file
/// name and text.
pub fn find(name: &str, chip_file: &str) -> Result<(String, String), String> {
    crate::located::preset_or_file(name, chip_file, presets::BUILTIN, "HBM stack file", || {
        format!("unknown HBM preset {name:?} (allowed: {}, or a stack file's path)", presets::names())
    })
}

/// Parses and validates stack text named `file`; errors are located in it.
pub fn parse(file: &str, text: &str) -> Result<StackSpec, ConfigError> {
    let stack: StackSpec = crate::located::from_json_or_ron(file, text)?;
    stack.validate().map_err(|e| locate(file, text, &e, ""))?;
    Ok(stack)
}

/// A stack by name or path (relative to `chip_file`'s folder), read and checked.
pub fn load(name: &str, chip_file: &str) -> Result<StackSpec, String> {
    let (file, text) = find(name, chip_file)?;
    parse(&file, &text).map_err(|e| e.to_string())
}

/// `e` located at its field in `text` of `file`; `prefix` is the path to the stack in that
/// text (`"hbm.preset"` when the stack is written inside a chip file, empty in a stack file).
pub fn locate(file: &str, text: &str, e: &SpecError, prefix: &str) -> ConfigError {
    let path = if prefix.is_empty() { e.field.clone() } else { format!("{prefix}.{}", e.field) };
    super::core_file::locate_path(file, text, &path, e.message.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v6400() -> &'static str {
        presets::BUILTIN.iter().find(|(n, _)| *n == "hbm3-6400").unwrap().1
    }

    #[test]
    fn errors_are_located_at_the_field_in_the_stack_file() {
        let text = v6400().replace("sids: 2,", "sids: 0,");
        let e = parse("s.ron", &text).unwrap_err();
        let line = text.lines().position(|l| l.contains("sids: 0")).unwrap() + 1;
        assert_eq!((e.line, e.col, e.field.as_str()), (line, 9, "org.sids"), "{e}");
        assert!(e.to_string().starts_with(&format!("s.ron:{line}:9: org.sids: 0 is out of range")), "{e}");
        let e = parse("s.ron", &v6400().replace("ck_mhz: 1600,", "ck_mhz: 0,")).unwrap_err();
        assert_eq!(e.field, "timing.ck_mhz", "{e}");
        let e = parse("s.ron", &v6400().replace("rows: 16384,", "rows: 16777216,")).unwrap_err();
        assert!(e.message.contains("capacity"), "{e}");
        let e = parse("s.ron", &v6400().replace("cl: 20,", "cl: 20, cx: 1,")).unwrap_err();
        assert_eq!(e.field, "cx", "{e}");
        let e = parse("s.ron", &v6400().replace("cl: 20,", "cl: \"20\",")).unwrap_err();
        assert!(e.to_string().contains("cl"), "{e}");
        let e = parse("s.ron", &v6400().replace("        refi_pb: 195, // CK, per-bank refresh interval\n", ""))
            .unwrap_err();
        assert!(e.to_string().contains("refi_pb"), "{e}");
    }

    #[test]
    fn json_twins_parse_to_the_same_stack() {
        let p = presets::find("hbm3e-9600").unwrap();
        let json = serde_json::to_string_pretty(p).unwrap();
        assert_eq!(&parse("s.json", &json).unwrap(), p);
        let bad = json.replace("\"rows\": 24576", "\"rows\": 0");
        assert_eq!(parse("s.json", &bad).unwrap_err().field, "org.rows");
        assert!(find("hbm9", "x.ron").unwrap_err().contains("hbm3e-9600"));
    }
}
