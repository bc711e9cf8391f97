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

/// Parses `text` of `file` as JSON when the file name ends in `.json`, else as RON
/// ([`from_ron`]); a JSON error is located at its line and column (field `(json)`).
pub fn from_json_or_ron<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, ConfigError> {
    if !file.ends_with(".json") {
        return from_ron(file, text);
    }
    serde_json::from_str(text).map_err(|e| {
        let (line, col) = (e.line(), e.column());
        let message = e.to_string().split(" at line ").next().unwrap_or_default().to_string();
        ConfigError { file: file.into(), line, col, field: "(json)".into(), message }
    })
}

/// A part a chip file names: a built-in preset of `builtin` by name, or a file by path,
/// relative to `chip_file`'s folder (the working directory for a built-in chip); its file name
/// and text. `kind` names the file in a read error ("core file"); `unknown` is the error for a
/// name that is neither.
pub fn preset_or_file(
    name: &str,
    chip_file: &str,
    builtin: &[(&str, &str)],
    kind: &str,
    unknown: impl FnOnce() -> String,
) -> Result<(String, String), String> {
    if is_path(name) {
        let base = Path::new(chip_file).parent().filter(|p| !chip_file.contains("(built in)") && p.is_dir());
        let path = base.map_or_else(|| Path::new(name).to_path_buf(), |b| b.join(name));
        return match trnsim_kernel::input::read_text(&path) {
            Ok(text) => Ok((path.display().to_string(), strip_bom(text))),
            Err(e) => Err(format!("{kind} {}: cannot read: {e}", path.display())),
        };
    }
    match builtin.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => Ok((format!("{n}.ron (built in)"), (*text).to_string())),
        None => Err(unknown()),
    }
}

/// True when a chip file's `name` for a part is a path rather than a preset name.
pub fn is_path(name: &str) -> bool {
    name.contains('/') || name.ends_with(".ron") || name.ends_with(".json")
}

/// Deserializes RON `text` (named `file` in errors); a syntax or schema error is located at
/// RON's line and column, with the field nearest before it ([`field_at`]) and, for a number
/// the field cannot hold, the number ([`trnsim_kernel::input::ron_error`]).
///
/// An unknown field or variant is located at its name with the nearest allowed names
/// suggested; a missing field at the struct that lacks it; a number RON reads but the
/// simulator cannot use (`NaN`, `inf`) is refused at the number.
pub fn from_ron<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, ConfigError> {
    let v = ron::from_str(text).map_err(|e| {
        let trnsim_kernel::input::RonError { line, col, field, message } = trnsim_kernel::input::ron_error(text, &e);
        let at = |line, col, field, message| ConfigError { file: file.into(), line, col, field, message };
        match &e.code {
            ron::Error::NoSuchStructField { expected, found, outer } => {
                let (line, col) = back_over(text, line, col, found);
                at(line, col, found.clone(), unknown("field", found, outer.as_deref(), expected))
            }
            ron::Error::NoSuchEnumVariant { expected, found, outer } => {
                let (line, col) = back_over(text, line, col, found);
                at(line, col, field, unknown("variant", found, outer.as_deref(), expected))
            }
            ron::Error::MissingStructField { field: missing, outer } => {
                let (line, col, field) = struct_start(text, line, col, missing);
                let of = outer.as_deref().map_or(String::new(), |o| format!(" (a {o} needs it)"));
                at(line, col, field, format!("missing field `{missing}`{of}"))
            }
            _ => at(line, col, field, message),
        }
    })?;
    non_finite(file, text)?;
    Ok(v)
}

/// The message for an unknown field or variant `found`: the nearest allowed names first.
fn unknown(what: &str, found: &str, outer: Option<&str>, expected: &[&str]) -> String {
    let near = crate::doc::suggest::names(found, expected.iter().copied(), 3);
    let hint = match near.as_slice() {
        [] => String::new(),
        n => format!("did you mean {}? ", n.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(" or ")),
    };
    let of = outer.map_or(String::new(), |o| format!(" of {o}"));
    let list = if expected.is_empty() { "none".to_string() } else { expected.join(", ") };
    format!("unknown {what} `{}`{of} ({hint}allowed: {list})", crate::doc::suggest::clip(found))
}

/// The 1-based byte offset of 1-based (`line`, `col`) in `text` (its end past the last line).
fn offset(text: &str, line: usize, col: usize) -> usize {
    let mut pos = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return pos + l.char_indices().nth(col.saturating_sub(1)).map_or(l.len(), |(b, _)| b);
        }
        pos += l.len();
    }
    text.len()
}

/// (`line`, `col`) moved back to the start of `name` when the text just before it is `name`
/// (RON reports an unknown name after reading it).
fn back_over(text: &str, line: usize, col: usize, name: &str) -> (usize, usize) {
    let pos = offset(text, line, col);
    match text[..pos].trim_end_matches(|c: char| c == ':' || c.is_whitespace()).strip_suffix(name) {
        Some(head) if !name.is_empty() => line_col(text, head.len()),
        _ => (line, col),
    }
}

/// Where the struct closed at (`line`, `col`) starts (its name, or the `key:` it is the value
/// of), and the field path of the `missing` field in it.
fn struct_start(text: &str, line: usize, col: usize, missing: &str) -> (usize, usize, String) {
    let pos = offset(text, line, col);
    let Some(open) = opener_at(text, pos) else { return (line, col, missing.to_string()) };
    let head = text[..open].trim_end();
    let name_start = head.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_').len();
    if name_start < head.len() {
        let (l, c) = line_col(text, name_start);
        let key = head[..name_start]
            .trim_end()
            .strip_suffix(':')
            .map(|k| field_at(text, line_col(text, k.len()).0, line_col(text, k.len()).1 + 1));
        let field = key.map_or(missing.to_string(), |k| format!("{k}.{missing}"));
        return (l, c, field);
    }
    if let Some(k) = head.strip_suffix(':') {
        let key_end = k.trim_end().trim_end_matches('"').len();
        let key_start = k[..key_end].trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_').len();
        let (l, c) = line_col(text, key_start);
        return (l, c, format!("{}.{missing}", &k[key_start..key_end]));
    }
    let (l, c) = line_col(text, open);
    (l, c, missing.to_string())
}

/// The byte offset of the bracket open at byte `pos` of `text`, or of the one just closed
/// there (strings and comments skipped).
fn opener_at(text: &str, pos: usize) -> Option<usize> {
    let mut stack = Vec::new();
    let mut closed: Option<(usize, usize)> = None;
    scan(&text[..pos], |i, b| {
        match b {
            b'(' | b'[' | b'{' => stack.push(i),
            b')' | b']' | b'}' => closed = stack.pop().map(|o| (o, i)),
            _ => {}
        }
        true
    });
    match closed {
        Some((o, c)) if text[c + 1..pos].trim().is_empty() => Some(o),
        _ => stack.last().copied(),
    }
}

/// Calls `f(offset, byte)` for each byte of `text` outside strings and comments, until it
/// returns false.
fn scan(text: &str, mut f: impl FnMut(usize, u8) -> bool) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            c => {
                if !f(i, c) {
                    return;
                }
            }
        }
        i += 1;
    }
}

/// Refuses a number RON reads but the simulator cannot use: `NaN` or `inf` (either sign)
/// as a value, located at the number with its field.
fn non_finite(file: &str, text: &str) -> Result<(), ConfigError> {
    let b = text.as_bytes();
    let mut bad = None;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    scan(text, |i, c| {
        if !ident(c) || (i > 0 && ident(b[i - 1])) {
            return true;
        }
        let end = (i..b.len()).find(|&j| !ident(b[j])).unwrap_or(b.len());
        let word = &text[i..end];
        let is_key = text[end..].trim_start().starts_with(':');
        if matches!(word, "NaN" | "inf") && !is_key {
            let signed = i > 0 && matches!(b[i - 1], b'-' | b'+');
            bad = Some(if signed { i - 1 } else { i });
            return false;
        }
        true
    });
    match bad {
        None => Ok(()),
        Some(pos) => {
            let (line, col) = line_col(text, pos);
            let word: String =
                text[pos..].chars().take_while(|c| !matches!(c, ',' | ')' | ']' | '}') && !c.is_whitespace()).collect();
            Err(ConfigError {
                file: file.into(),
                line,
                col,
                field: field_at(text, line, col),
                message: format!("{word} is not a number the simulator can use (allowed: a finite number)"),
            })
        }
    }
}

/// Deserializes JSON `text` (named `file` in errors): an error is located at serde_json's
/// line and column with the field's path (`nodes[3].op.Gemm.m`); an unknown field or
/// variant suggests the nearest allowed names; a missing field is located at the object that
/// lacks it.
pub fn from_json<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, ConfigError> {
    serde_json::from_str(text).map_err(|e| json_error(file, text, &e))
}

/// [`from_json`]'s error for `e`.
pub fn json_error(file: &str, text: &str, e: &serde_json::Error) -> ConfigError {
    let (line, col) = (e.line().max(1), e.column().max(1));
    let raw = e.to_string();
    let message = raw.rsplit_once(" at line ").map_or(raw.as_str(), |(m, _)| m).to_string();
    let pos = offset(text, line, col);
    let tick = |m: &str, after: &str| -> Option<String> {
        let rest = m.split_once(after)?.1;
        Some(rest.split('`').next()?.to_string())
    };
    let expected = |m: &str| -> Vec<String> {
        m.split_once("expected").map_or(vec![], |(_, r)| r.split('`').skip(1).step_by(2).map(String::from).collect())
    };
    let at = |pos: usize, field: String, message: String| {
        let (line, col) = line_col(text, pos.min(text.len()));
        ConfigError { file: file.into(), line, col, field, message }
    };
    if let Some(missing) = tick(&message, "missing field `") {
        let open = opener_at(text, pos).unwrap_or(0);
        let path = json_path_at(text, open);
        let field = if path.is_empty() { missing.clone() } else { format!("{path}.{missing}") };
        return at(open, field, format!("missing field `{missing}`"));
    }
    for what in ["field", "variant"] {
        if let Some(found) = tick(&message, &format!("unknown {what} `")) {
            let exp = expected(&message);
            let start = text[..pos].rfind(&format!("\"{found}\"")).unwrap_or(pos);
            let list: Vec<&str> = exp.iter().map(String::as_str).collect();
            let within = json_path(text, start, false);
            let field = if what == "variant" {
                json_path_at(text, start)
            } else if within.is_empty() {
                found.clone()
            } else {
                format!("{within}.{found}")
            };
            return at(start, field, unknown(what, &found, None, &list));
        }
    }
    let path = json_path_at(text, pos);
    at(pos, if path.is_empty() { "(top level)".into() } else { path }, message)
}

/// The path of the JSON value at byte `pos` of `text`: keys joined by `.`, indices `[i]`.
pub fn json_path_at(text: &str, pos: usize) -> String {
    json_path(text, pos, true)
}

/// [`json_path_at`], or with `last_key` false the path of the object whose key is at `pos`.
fn json_path(text: &str, pos: usize, last_key: bool) -> String {
    enum Frame {
        Obj { key: String, expect_key: bool },
        Arr(usize),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let b = text.as_bytes();
    let end = pos.min(b.len());
    let mut i = 0;
    while i < end {
        match b[i] {
            b'{' => stack.push(Frame::Obj { key: String::new(), expect_key: true }),
            b'[' => stack.push(Frame::Arr(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Obj { expect_key, .. }) => *expect_key = true,
                Some(Frame::Arr(n)) => *n += 1,
                None => {}
            },
            b':' => {
                if let Some(Frame::Obj { expect_key, .. }) = stack.last_mut() {
                    *expect_key = false;
                }
            }
            b'"' => {
                let s = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Obj { key, expect_key: true }) = stack.last_mut() {
                    *key =
                        text.get(s..i.min(b.len())).unwrap_or("").chars().take(crate::doc::suggest::MAX_LEN).collect();
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut out = String::new();
    let n = stack.len();
    for (k, f) in stack.iter().enumerate() {
        match f {
            Frame::Obj { key, .. } if !key.is_empty() && (last_key || k + 1 < n) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&crate::doc::suggest::clip(key));
            }
            Frame::Arr(n) => out.push_str(&format!("[{n}]")),
            _ => {}
        }
    }
    out
}

/// 1-based line and column of byte `pos` of `text`.
pub fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let line = text[..pos].matches('\n').count() + 1;
    let col = pos - text[..pos].rfind('\n').map_or(0, |p| p + 1) + 1;
    (line, col)
}
