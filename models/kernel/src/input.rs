//! Reading the files trnsim is given (system, chip, UltraServer, topology, workload and
//! program files, port traces, stimulus files): every one is read whole, so each read is
//! bounded. A file larger than [`MAX_INPUT_BYTES`], or a source that never ends (a device such
//! as `/dev/zero`, a pipe), is refused by name instead of read until memory runs out.

use std::io::Read;
use std::path::Path;

/// The most bytes trnsim reads of one input file: 256 MiB (a workload of the format's largest
/// graph, 2^20 nodes, written out in JSON, fits).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The bytes of `path`, at most [`MAX_INPUT_BYTES`]: a larger regular file is refused before
/// it is read, any other source after that many bytes.
pub fn read_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    read_bytes_within(path, MAX_INPUT_BYTES)
}

/// The text of `path` (UTF-8), at most [`MAX_INPUT_BYTES`]; see [`read_bytes`].
pub fn read_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_bytes(path)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

fn read_bytes_within(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let too_large =
        || std::io::Error::other(format!("larger than {} MiB, the most trnsim reads of an input file", limit >> 20));
    let f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large());
    }
    let mut out = Vec::new();
    f.take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(out)
}

/// A RON parse or schema error, located: 1-based line and column, the field it is in (the
/// nearest `name:` before it, [`field_at`]) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RonError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The field, e.g. `cc_cores` (`(top level)` before any).
    pub field: String,
    /// What is wrong: RON's message, or for a number the field's type cannot hold, the number
    /// and why.
    pub message: String,
}

/// Locates RON's error `e` in `text`. A number the field's integer type cannot hold is named
/// (`4294967296 is out of range: the field's integer type cannot hold it`), as are a negative
/// number where the field takes none and a fraction where it takes integers; other errors keep
/// RON's message.
pub fn ron_error(text: &str, e: &ron::error::SpannedError) -> RonError {
    let (line, col) = (e.position.line, e.position.col);
    let field = field_at(text, line, col);
    // RON places a range error just after the number, and a sign it cannot take at the sign.
    let message = match &e.code {
        ron::Error::IntegerOutOfBounds => number_near(text, line, col, false)
            .map(|n| format!("{n} is out of range: the field's integer type cannot hold it")),
        ron::Error::ExpectedInteger => number_near(text, line, col, true)
            .filter(|n| n.starts_with('-'))
            .map(|n| format!("{n} is out of range: the field takes no negative numbers")),
        // An integer field given a fraction: RON reads the whole part and stops at the point.
        ron::Error::ExpectedComma => number_near(text, line, col, false)
            .zip(fraction_at(text, line, col))
            .map(|(whole, frac)| format!("{whole}{frac} is not a whole number: the field takes integers")),
        _ => None,
    };
    RonError { line, col, field, message: message.unwrap_or_else(|| e.code.to_string()) }
}

/// The number literal ending just before (`starts_here`: starting at) 1-based (`line`, `col`)
/// of `text`, if one is there.
fn number_near(text: &str, line: usize, col: usize, starts_here: bool) -> Option<&str> {
    let (l, at) = line_at(text, line, col)?;
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-' | '.');
    let n = if starts_here {
        let rest = &l[at..];
        &rest[..rest.find(|c: char| !part(c)).unwrap_or(rest.len())]
    } else {
        let head = &l[..at];
        &head[head.rfind(|c: char| !part(c)).map_or(0, |i| i + 1)..]
    };
    let digits = n.trim_start_matches(['-', '+']);
    digits.starts_with(|c: char| c.is_ascii_digit()).then_some(n)
}

/// The fraction (`.5`) starting at 1-based (`line`, `col`) of `text`, if one is there.
fn fraction_at(text: &str, line: usize, col: usize) -> Option<&str> {
    let (l, at) = line_at(text, line, col)?;
    let rest = &l[at..];
    let digits = rest.strip_prefix('.')?;
    let n = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    (n > 0).then(|| &rest[..=n])
}

/// Line `line` of `text` (1-based) and the byte offset in it of 1-based column `col` (the
/// line's end when the column is past it).
fn line_at(text: &str, line: usize, col: usize) -> Option<(&str, usize)> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    Some((l, l.char_indices().nth(col.checked_sub(1)?).map_or(l.len(), |(i, _)| i)))
}

/// The `name:` nearest before 1-based (`line`, `col`) of `text`: the best guess of the field a
/// RON parse error is in (`(top level)` before any).
pub fn field_at(text: &str, line: usize, col: usize) -> String {
    let mut before = String::new();
    for (i, l) in text.lines().enumerate() {
        if i + 1 < line {
            before.push_str(l);
            before.push('\n');
        } else if i + 1 == line {
            before.extend(l.chars().take(col.saturating_sub(1)));
            break;
        }
    }
    let bytes = before.as_bytes();
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        if bytes[i] == b':' {
            let end = i;
            let mut s = end;
            while s > 0 && (bytes[s - 1].is_ascii_alphanumeric() || bytes[s - 1] == b'_') {
                s -= 1;
            }
            if s < end {
                return before[s..end].to_string();
            }
        }
    }
    "(top level)".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_that_never_ends_is_refused_after_the_limit() {
        let e = read_bytes_within(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "larger than 1 MiB, the most trnsim reads of an input file");
    }

    #[test]
    fn a_file_within_the_limit_is_read_whole_and_a_larger_one_refused_unread() {
        let dir = std::env::temp_dir().join(format!("trnsim-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f.txt");
        std::fs::write(&p, vec![b'a'; 3 << 20]).unwrap();
        assert_eq!(read_text(&p).unwrap().len(), 3 << 20);
        assert!(read_bytes_within(&p, 2 << 20).unwrap_err().to_string().starts_with("larger than 2 MiB"));
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(read_text(&p).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Small {
        name: String,
        count: u32,
        offset: i8,
    }

    fn ron_message(text: &str) -> RonError {
        ron_error(text, &ron::from_str::<Small>(text).expect_err("a bad file"))
    }

    #[test]
    fn a_ron_number_the_field_cannot_hold_is_named_with_its_field() {
        let e = ron_message("(\n  name: \"a\",\n  count: 4294967296,\n  offset: 0,\n)");
        assert_eq!((e.line, e.field.as_str()), (3, "count"));
        assert_eq!(e.message, "4294967296 is out of range: the field's integer type cannot hold it");
        let e = ron_message("(name: \"a\", count: 0x1FFFFFFFF, offset: 0)");
        assert_eq!(e.message, "0x1FFFFFFFF is out of range: the field's integer type cannot hold it");
        let e = ron_message("(name: \"a\", count: 1, offset: -129)");
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            ("offset", "-129 is out of range: the field's integer type cannot hold it")
        );
        let e = ron_message("(name: \"a\", count: -5, offset: 0)");
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            ("count", "-5 is out of range: the field takes no negative numbers")
        );
        let e = ron_message("(name: \"a\", count: 2.5, offset: 0)");
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            ("count", "2.5 is not a whole number: the field takes integers")
        );
        // Other errors keep RON's message.
        let e = ron_message("(name: \"a\", count: x, offset: 0)");
        assert_eq!((e.field.as_str(), e.message.as_str()), ("count", "Expected integer"));
        let e = ron_message("(name: 5, count: 1, offset: 0)");
        assert_eq!(e.field, "name");
        assert_eq!(field_at("x", 1, 1), "(top level)");
    }
}
