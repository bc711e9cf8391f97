//! Link encoding files: the encodings are the files of models/configs/fabric/link, and
//! `trnsim describe link` takes an encoding's name or a file's path (RON, `Encoding(...)`, or
//! JSON with the same fields). [`parse`] checks every field and locates the first bad one in
//! the file (`file:line:col: framing.payload_bytes: message`).

use crate::located::ConfigError;
use trnsim_fabric::link::encoding::EncodingFile;

/// Parses and validates encoding text named `file`; errors are located in it.
pub fn parse(file: &str, text: &str) -> Result<EncodingFile, ConfigError> {
    let enc: EncodingFile = crate::located::from_json_or_ron(file, text)?;
    enc.validate().map_err(|(field, message)| crate::chip::core_file::locate_path(file, text, &field, message))?;
    Ok(enc)
}

/// Reads and checks the encoding file at `path`.
pub fn load(path: &str) -> Result<EncodingFile, String> {
    let (file, text) = crate::located::read_ron_file(std::path::Path::new(path)).map_err(|e| e.to_string())?;
    parse(&file, &text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_fabric::link::encoding::BUILTIN;

    #[test]
    fn errors_are_located_at_the_field_in_the_encoding_file() {
        let base = BUILTIN[1].1;
        assert_eq!(parse("l.ron", base).unwrap().name, "pcie-gen6");
        let line_of = |t: &str, needle: &str| t.lines().position(|l| l.contains(needle)).unwrap() + 1;
        let text = base.replace("payload_bytes: 236", "payload_bytes: 300");
        let e = parse("l.ron", &text).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (line_of(&text, "payload_bytes: 300"), "framing.payload_bytes"), "{e}");
        assert!(e.message.contains("300 is out of range (allowed: 1..=flit_bytes = 256)"), "{e}");
        let text = base.replace("lane_mbit_per_s: 64000", "lane_mbit_per_s: -1");
        let e = parse("l.ron", &text).unwrap_err();
        assert_eq!(e.line, line_of(&text, "lane_mbit_per_s: -1"), "{e}");
        let e = parse("l.ron", &base.replace("    granule_bytes: 4,\n", "")).unwrap_err();
        assert!(e.to_string().contains("granule_bytes"), "{e}");
        let json = serde_json::to_string(&parse("l.ron", base).unwrap()).unwrap();
        assert_eq!(parse("l.json", &json).unwrap(), parse("l.ron", base).unwrap());
    }
}
