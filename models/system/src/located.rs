//! Located errors for every RON file trnsim reads: `file:line:col: field: message`, one line,
//! with the allowed values or range in the message. The loaders of this crate (chips,
//! UltraServers, the system document and its overrides) and the harness's system configs share
//! them.

use std::fmt;
use std::path::Path;
/// The field a RON parse error is in (shared by the harness's RON loaders).
pub use trnsim_kernel::input::field_at;

/// An error located in a RON file trnsim reads: a system config, a chip or an UltraServer
/// (`crate::chip::ChipError` is this type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or the name given to a `parse`).
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The field path, e.g. `components[1].clock`.
    pub field: String,
    /// What is wrong, with the allowed values or range.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.col, self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Reads `path` for one of the harness's RON loaders: its name for errors and its text, or an
/// error naming the file.
pub fn read_ron_file(path: &Path) -> Result<(String, String), ConfigError> {
    let file = path.display().to_string();
    match trnsim_kernel::input::read_text(path) {
        Ok(text) => Ok((file, strip_bom(text))),
        Err(e) => {
            Err(ConfigError { file, line: 0, col: 0, field: "(file)".into(), message: format!("cannot read: {e}") })
        }
    }
}

/// `text` without a leading UTF-8 byte-order mark.
pub fn strip_bom(mut text: String) -> String {
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    text
}

/// Deserializes RON `text` (named `file` in errors); a syntax or schema error is located at
/// RON's line and column, with the field nearest before it ([`field_at`]) and, for a number
/// the field cannot hold, the number ([`trnsim_kernel::input::ron_error`]).
pub fn from_ron<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, ConfigError> {
    ron::from_str(text).map_err(|e| {
        let trnsim_kernel::input::RonError { line, col, field, message } = trnsim_kernel::input::ron_error(text, &e);
        ConfigError { file: file.into(), line, col, field, message }
    })
}

/// 1-based line and column of byte `pos` of `text`.
pub fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let line = text[..pos].matches('\n').count() + 1;
    let col = pos - text[..pos].rfind('\n').map_or(0, |p| p + 1) + 1;
    (line, col)
}
