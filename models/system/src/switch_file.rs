//! Switch files: the switch presets are the files of models/configs/fabric/switch, and
//! `trnsim describe switch` takes a preset's name or a file's path (RON, `SwitchPreset(...)`).
//! [`parse`] checks every field, each of `config` written, and locates the first bad one in
//! the file (`file:line:col: config.ports: message`).

use crate::located::ConfigError;
use trnsim_fabric::switch::presets::SwitchPreset;

/// Parses and validates switch text named `file`; errors are located in it.
pub fn parse(file: &str, text: &str) -> Result<SwitchPreset, ConfigError> {
    // Syntax, types and unknown fields, located by the shared RON loader.
    let _: SwitchPreset = crate::located::from_ron(file, text)?;
    SwitchPreset::from_ron(text).map_err(|(field, message)| {
        let field = if field.is_empty() { "config".to_string() } else { field };
        crate::chip::core_file::locate_path(file, text, &field, message)
    })
}

/// Reads and checks the switch file at `path`.
pub fn load(path: &str) -> Result<SwitchPreset, String> {
    let (file, text) = crate::located::read_ron_file(std::path::Path::new(path)).map_err(|e| e.to_string())?;
    parse(&file, &text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_fabric::switch::presets::BUILTIN;

    #[test]
    fn errors_are_located_at_the_field_in_the_switch_file() {
        let base = BUILTIN[0].1;
        assert_eq!(&parse("s.ron", base).unwrap(), &*trnsim_fabric::switch::presets::PCIE6_160L_20P);
        let text = base.replace("ports: 20,", "ports: 1,");
        let e = parse("s.ron", &text).unwrap_err();
        let line = text.lines().position(|l| l.contains("ports: 1,")).unwrap() + 1;
        assert_eq!((e.line, e.field.as_str()), (line, "config.ports"), "{e}");
        assert!(e.to_string().starts_with(&format!("s.ron:{line}:9: config.ports: 1 is out of range")), "{e}");
        let e =
            parse("s.ron", &base.replace("        speedup: 1, // crossbar cycles per port cycle\n", "")).unwrap_err();
        assert_eq!(e.field, "config.speedup", "{e}");
        let e = parse("s.ron", &base.replace("speedup: 1,", "speedup: 1, speed: 2,")).unwrap_err();
        assert!(e.to_string().contains("speed"), "{e}");
        let e = parse("s.ron", &base.replace("speedup: 1,", "speedup: \"1\",")).unwrap_err();
        assert!(e.to_string().contains("speedup"), "{e}");
    }
}
