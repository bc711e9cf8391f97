//! NeuronCore files: a chip's `core` names a built-in core preset (`"nc-v4"`, the files of
//! models/configs/core) or a core file by path (`"my-core.ron"`, `"cores/wide.json"`, relative
//! to the chip file's folder). A core file is RON (`CoreSpec(...)`) or, ending in `.json`,
//! JSON with the same fields; [`parse`] checks every field and locates the first bad one in
//! the file (`file:line:col: tensor.rows: message`).

use crate::located::ConfigError;
use trnsim_core::spec::{self, CoreSpec, SpecError};

/// True when `name` is a path rather than a preset name.
pub fn is_path(name: &str) -> bool {
    crate::located::is_path(name)
}

/// The core named `name` in a chip file `chip_file`: its file name and text.
pub fn find(name: &str, chip_file: &str) -> Result<(String, String), String> {
    crate::located::preset_or_file(name, chip_file, spec::BUILTIN, "core file", || {
        format!("unknown core {name:?} (allowed: {}, or a core file's path)", spec::names())
    })
}

/// Parses and validates core text named `file`; errors are located in it.
pub fn parse(file: &str, text: &str) -> Result<CoreSpec, ConfigError> {
    let core: CoreSpec = crate::located::from_json_or_ron(file, text)?;
    core.validate().map_err(|e| locate(file, text, &e, ""))?;
    Ok(core)
}

/// `e` located at its field in `text` of `file`; `prefix` is the path to the core in that text
/// (`"core"` when the core is written inside a chip file, empty in a core file).
pub fn locate(file: &str, text: &str, e: &SpecError, prefix: &str) -> ConfigError {
    let path = if prefix.is_empty() { e.field.clone() } else { format!("{prefix}.{}", e.field) };
    locate_path(file, text, &path, e.message.clone())
}

/// An error about the field at dotted `path` (`org.rows`), located at its key in `text` of
/// `file`: each segment's key searched after the previous one's (the text's start when the
/// first is absent).
pub fn locate_path(file: &str, text: &str, path: &str, message: String) -> ConfigError {
    let mut pos = 0;
    for key in path.split('.') {
        let found = [format!("{key}:"), format!("\"{key}\":")].iter().filter_map(|k| text[pos..].find(k)).min();
        match found {
            Some(p) => pos += p,
            None => break,
        }
    }
    let (line, col) = crate::located::line_col(text, pos);
    ConfigError { file: file.into(), line, col, field: path.to_string(), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_located_at_the_field_in_the_core_file() {
        let text = spec::BUILTIN[2].1.replace("rows: 128", "rows: 0");
        let e = parse("w.ron", &text).unwrap_err();
        let line = text.lines().position(|l| l.contains("rows: 0")).unwrap() + 1;
        assert_eq!((e.line, e.field.as_str()), (line, "tensor.rows"), "{e}");
        assert!(e.to_string().starts_with(&format!("w.ron:{line}:9: tensor.rows: 0 is out of range")), "{e}");
        let text = spec::BUILTIN[2].1.replace("latency_cycles: 4", "latency_cycles: 0");
        let e = parse("w.ron", &text).unwrap_err();
        assert_eq!(e.field, "semaphores.latency_cycles");
        let e = parse("w.ron", &spec::BUILTIN[2].1.replace("tensor: \"2.4GHz\"", "tensor: \"0GHz\"")).unwrap_err();
        assert_eq!(e.field, "tensor", "{e}");
        assert!(e.message.contains("frequency"), "{e}");
    }

    #[test]
    fn cost_errors_are_located_at_the_field_in_the_core_file() {
        let text = spec::BUILTIN[2].1;
        let line_of = |t: &str, needle: &str| t.lines().position(|l| l.contains(needle)).unwrap() + 1;
        let zero = text.replacen(
            "tensor_copy: (min_interval: 64, elements: 1,",
            "tensor_copy: (min_interval: 64, elements: 0,",
            1,
        );
        let e = parse("c.ron", &zero).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (line_of(&zero, "elements: 0"), "costs.vector.tensor_copy.elements"));
        assert!(e.message.contains("0 is out of range (allowed: 1..=1024)"), "{e}");
        // A negative latency cannot be read at all: one located error naming the field.
        let neg = text.replacen(
            "            latency_cycles: 0,\n            tensor_tensor",
            "            latency_cycles: -5,\n            tensor_tensor",
            1,
        );
        assert_ne!(neg, text);
        let e = parse("c.ron", &neg).unwrap_err();
        assert_eq!(e.line, line_of(&neg, "latency_cycles: -5"), "{e}");
        assert!(e.to_string().contains("latency_cycles"), "{e}");
        let ctl = text.replace("control_cycles: 1,", "control_cycles: 0,");
        let e = parse("c.ron", &ctl).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (line_of(&ctl, "control_cycles: 0"), "costs.control_cycles"));
        let missing = text.replace("            transpose_free_cap: 64,\n", "");
        assert!(parse("c.ron", &missing).unwrap_err().to_string().contains("transpose_free_cap"));
    }

    #[test]
    fn json_twins_parse_to_the_same_core() {
        let v4 = spec::nc_v4();
        let json = serde_json::to_string_pretty(&*v4).unwrap();
        assert_eq!(parse("c.json", &json).unwrap(), *v4);
        let bad = json.replace("\"rows\": 128", "\"rows\": 3");
        assert_eq!(parse("c.json", &bad).unwrap_err().field, "tensor.rows");
        assert!(find("nc-v9", "x.ron").unwrap_err().contains("nc-v4"));
    }
}
