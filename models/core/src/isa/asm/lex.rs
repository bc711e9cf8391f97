//! Tokens of one assembly line, a cursor over them, and number parsing (no regex, no allocation
//! beyond the reused token buffer).

use std::fmt;

/// One token. Words cover identifiers, mnemonics, numbers and floats alike (`sbuf`, `bank2`,
/// `r7`, `0x100`, `-3`, `1.5e-3`, `-inf`); the parser decides what a word means where it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tok<'a> {
    /// A run of `[A-Za-z0-9_.]`, optionally starting with `-`, with `e+`/`e-` inside decimals.
    Word(&'a str),
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `[`
    LBrack,
    /// `]`
    RBrack,
    /// `+`
    Plus,
    /// `=`
    Eq,
    /// `>=`
    Ge,
    /// `->`
    Arrow,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Tok::Word(w) => return write!(f, "`{w}`"),
            Tok::Comma => "`,`",
            Tok::Colon => "`:`",
            Tok::LBrack => "`[`",
            Tok::RBrack => "`]`",
            Tok::Plus => "`+`",
            Tok::Eq => "`=`",
            Tok::Ge => "`>=`",
            Tok::Arrow => "`->`",
        };
        f.write_str(s)
    }
}

/// A token and the byte offset in its line where it starts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Token<'a> {
    /// The token.
    pub tok: Tok<'a>,
    /// Byte offset of its first character in the line.
    pub at: u32,
}

/// An error inside one line: where (byte offset), which field, what.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct LineError {
    /// Byte offset in the line.
    pub at: u32,
    /// The instruction field (operand name) it concerns; empty for lexical errors.
    pub field: &'static str,
    /// Lower-case message without a trailing period.
    pub msg: String,
}

/// Shorthand for an `Err(LineError)`.
pub(super) fn fail<T>(at: u32, field: &'static str, msg: impl Into<String>) -> Result<T, LineError> {
    Err(LineError { at, field, msg: msg.into() })
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

/// True when `w` (a word so far) is a decimal number ending in an exponent marker, so a
/// following `+`/`-` belongs to it (`1e-3`).
fn wants_exponent_sign(w: &[u8]) -> bool {
    let w = w.strip_prefix(b"-").unwrap_or(w);
    let decimal = matches!(w.first(), Some(b'0'..=b'9' | b'.')) && !w.starts_with(b"0x") && !w.starts_with(b"0X");
    decimal && matches!(w.last(), Some(b'e' | b'E'))
}

fn word_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        let c = b[i];
        let sign = (c == b'+' || c == b'-') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if is_word_char(c) || (sign && wants_exponent_sign(&b[start..i])) {
            i += 1;
        } else {
            break;
        }
    }
    i
}

fn punct(b: &[u8], i: usize) -> Option<(Tok<'static>, usize)> {
    let next = b.get(i + 1).copied();
    Some(match (b[i], next) {
        (b',', _) => (Tok::Comma, 1),
        (b':', _) => (Tok::Colon, 1),
        (b'[', _) => (Tok::LBrack, 1),
        (b']', _) => (Tok::RBrack, 1),
        (b'+', _) => (Tok::Plus, 1),
        (b'=', _) => (Tok::Eq, 1),
        (b'>', Some(b'=')) => (Tok::Ge, 2),
        (b'-', Some(b'>')) => (Tok::Arrow, 2),
        _ => return None,
    })
}

/// Splits `line` into tokens (into `out`, cleared first), stopping at `#`.
pub(super) fn tokenize<'a>(line: &'a str, out: &mut Vec<Token<'a>>) -> Result<(), LineError> {
    out.clear();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let at = i as u32;
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
        } else if c == b'#' {
            break;
        } else if let Some((tok, n)) = punct(b, i) {
            out.push(Token { tok, at });
            i += n;
        } else if is_word_char(c) || (c == b'-' && b.get(i + 1).is_some_and(|&n| is_word_char(n))) {
            let end = word_end(b, i);
            out.push(Token { tok: Tok::Word(&line[i..end]), at });
            i = end;
        } else {
            // Every byte consumed so far was ASCII, so `i` is on a character boundary.
            let ch = line[i..].chars().next().unwrap_or('?');
            return fail(at, "", format!("unexpected character `{}`", ch.escape_debug()));
        }
    }
    Ok(())
}

/// A cursor over one line's tokens.
pub(super) struct Cursor<'t, 'a> {
    toks: &'t [Token<'a>],
    pos: usize,
    eol: u32,
}

impl<'t, 'a> Cursor<'t, 'a> {
    /// A cursor at the first token; `eol` is the line length (where "end of line" errors point).
    pub fn new(toks: &'t [Token<'a>], eol: u32) -> Self {
        Cursor { toks, pos: 0, eol }
    }

    /// The next token, without consuming it.
    pub fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).map(|t| t.tok)
    }

    /// The token after the next one.
    pub fn peek2(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos + 1).map(|t| t.tok)
    }

    /// Byte offset of the next token (or the end of the line).
    pub fn at(&self) -> u32 {
        self.toks.get(self.pos).map_or(self.eol, |t| t.at)
    }

    /// True when every token has been consumed.
    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// Consumes the next token.
    pub fn bump(&mut self) {
        self.pos += 1;
    }

    /// Describes the next token for "found ..." messages.
    pub fn found(&self) -> String {
        self.peek().map_or("end of line".to_string(), |t| t.to_string())
    }

    /// Consumes a word, or fails with "expected WHAT, found ...".
    pub fn word(&mut self, field: &'static str, what: &str) -> Result<(&'a str, u32), LineError> {
        let at = self.at();
        match self.peek() {
            Some(Tok::Word(w)) => {
                self.bump();
                Ok((w, at))
            }
            _ => fail(at, field, format!("expected {what}, found {}", self.found())),
        }
    }

    /// Consumes `tok`, or fails with "expected `tok`, found ...".
    pub fn expect(&mut self, tok: Tok<'static>, field: &'static str) -> Result<u32, LineError> {
        let at = self.at();
        if self.peek() == Some(tok) {
            self.bump();
            return Ok(at);
        }
        fail(at, field, format!("expected {tok}, found {}", self.found()))
    }

    /// Consumes `tok` if it is next.
    pub fn eat(&mut self, tok: Tok<'static>) -> bool {
        let hit = self.peek() == Some(tok);
        if hit {
            self.bump();
        }
        hit
    }

    /// Fails unless every token has been consumed.
    pub fn finish(&self) -> Result<(), LineError> {
        if self.at_end() {
            return Ok(());
        }
        fail(self.at(), "operands", format!("unexpected {} after the last operand", self.found()))
    }
}

/// Why a word is not the number wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NumError {
    /// Not written as a number at all.
    NotNumber,
    /// A number outside the allowed range.
    OutOfRange,
}

/// Parses an unsigned integer: decimal or `0x` hex, `_` allowed between digits.
pub(super) fn parse_u64(w: &str) -> Result<u64, NumError> {
    let (digits, radix) = match w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (w, 10),
    };
    let b = digits.as_bytes();
    if b.is_empty() || b[0] == b'_' || b[b.len() - 1] == b'_' {
        return Err(NumError::NotNumber);
    }
    let mut v: u64 = 0;
    let mut overflow = false;
    for &c in b {
        let d = match c {
            b'_' => continue,
            _ => (c as char).to_digit(radix).ok_or(NumError::NotNumber)?,
        };
        match v.checked_mul(radix as u64).and_then(|x| x.checked_add(d as u64)) {
            Some(x) => v = x,
            None => overflow = true,
        }
    }
    if overflow {
        return Err(NumError::OutOfRange);
    }
    Ok(v)
}

/// Parses a signed integer: an optional `-` before [`parse_u64`]'s forms.
pub(super) fn parse_i64(w: &str) -> Result<i64, NumError> {
    match w.strip_prefix('-') {
        Some(m) => {
            let v = parse_u64(m)?;
            if v > i64::MAX as u64 + 1 {
                return Err(NumError::OutOfRange);
            }
            Ok((v as i64).wrapping_neg())
        }
        None => i64::try_from(parse_u64(w)?).map_err(|_| NumError::OutOfRange),
    }
}

/// Parses a float the way Rust does (`1`, `0.5`, `-2.5e-3`, `inf`, `-inf`, `nan`).
pub(super) fn parse_f32(w: &str) -> Option<f32> {
    w.parse::<f32>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        match tokenize(line, &mut out) {
            Ok(()) => out.iter().map(|t| format!("{}@{}", t.tok, t.at)).collect(),
            Err(e) => vec![format!("error@{}: {}", e.at, e.msg)],
        }
    }

    #[test]
    fn tokenize_cases() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("  # only a comment", &[]),
            ("sbuf[0:128]", &["`sbuf`@0", "`[`@4", "`0`@5", "`:`@6", "`128`@7", "`]`@10"]),
            ("a -> b", &["`a`@0", "`->`@2", "`b`@5"]),
            ("s1 >= 1", &["`s1`@0", "`>=`@3", "`1`@6"]),
            ("+0x10 -3", &["`+`@0", "`0x10`@1", "`-3`@6"]),
            ("1e-3,-2.5E+4", &["`1e-3`@0", "`,`@4", "`-2.5E+4`@5"]),
            ("0x1e-3", &["`0x1e`@0", "`-3`@4"]),
            ("a - b", &["error@2: unexpected character `-`"]),
            ("bank1+2", &["`bank1`@0", "`+`@5", "`2`@6"]),
            ("x=-inf", &["`x`@0", "`=`@1", "`-inf`@2"]),
            ("a\r", &["`a`@0"]),
            ("a $", &["error@2: unexpected character `$`"]),
            ("é", &["error@0: unexpected character `é`"]),
        ];
        for (line, expect) in cases {
            let got = toks(line);
            let got: Vec<&str> = got.iter().map(|s| s.as_str()).collect();
            if got.last().is_some_and(|s| s.starts_with("error")) {
                assert_eq!(got.last(), expect.last(), "line {line:?}");
            } else {
                assert_eq!(&got[..], *expect, "line {line:?}");
            }
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64("0"), Ok(0));
        assert_eq!(parse_u64("0x1_0000"), Ok(65536));
        assert_eq!(parse_u64("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_u64("18446744073709551616"), Err(NumError::OutOfRange));
        assert_eq!(parse_u64("12a"), Err(NumError::NotNumber));
        assert_eq!(parse_u64("0x"), Err(NumError::NotNumber));
        assert_eq!(parse_u64("_1"), Err(NumError::NotNumber));
        assert_eq!(parse_i64("-0x10"), Ok(-16));
        assert_eq!(parse_i64("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_i64("9223372036854775808"), Err(NumError::OutOfRange));
        assert_eq!(parse_i64("--1"), Err(NumError::NotNumber));
        assert_eq!(parse_f32("-inf"), Some(f32::NEG_INFINITY));
        assert_eq!(parse_f32("1e-3"), Some(1e-3));
        assert_eq!(parse_f32("x"), None);
        assert!(parse_f32("NaN").is_some_and(f32::is_nan), "the printer writes NaN as `NaN`");
    }
}
