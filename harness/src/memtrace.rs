//! Memory request traces for `trnsim hbm --trace FILE`, in the two text formats the reference
//! DRAM simulators read, so one file runs here and there:
//!
//! - **DRAMsim3**: `0xADDR READ|WRITE CYCLE` per line. `CYCLE` is the decimal cycle at which the
//!   request may enter (open loop); cycles must not decrease.
//! - **Ramulator 2 `LoadStoreTrace`**: `LD 0xADDR` or `ST 0xADDR` per line, no timestamps (the
//!   frontend offers one request per cycle, paced by backpressure).
//!
//! Lines starting with `#` are comments and blank lines are skipped; both are extensions neither
//! reference tool accepts, so [`write_trace`] never emits them. The format is detected from the
//! first request line unless forced. Requests carry no size: each is one access of the memory's
//! native granule. [`synth`] generates the synthetic workloads the sweeps use.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::str::FromStr;

/// Which text format a trace is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// Detect from the first request line (reading only).
    Auto,
    /// DRAMsim3: `0xADDR READ|WRITE CYCLE`.
    Dramsim3,
    /// Ramulator 2 `LoadStoreTrace`: `LD 0xADDR` / `ST 0xADDR`.
    Ramulator,
}

impl TraceFormat {
    /// The CLI spelling: `auto`, `dramsim3` or `ramulator`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::Dramsim3 => "dramsim3",
            TraceFormat::Ramulator => "ramulator",
        }
    }

    /// The line syntax, for error messages.
    fn syntax(self) -> &'static str {
        match self {
            TraceFormat::Auto => "`0xADDR READ|WRITE CYCLE` (DRAMsim3) or `LD|ST 0xADDR` (Ramulator)",
            TraceFormat::Dramsim3 => "`0xADDR READ|WRITE CYCLE`",
            TraceFormat::Ramulator => "`LD|ST 0xADDR`",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;

    /// Parses the CLI spelling; the error lists the allowed values.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(TraceFormat::Auto),
            "dramsim3" => Ok(TraceFormat::Dramsim3),
            "ramulator" => Ok(TraceFormat::Ramulator),
            _ => Err(format!("unknown trace format `{s}` (allowed: auto, dramsim3, ramulator)")),
        }
    }
}

/// One memory request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemRequest {
    /// Byte address.
    pub addr: u64,
    /// True for a write (`WRITE`/`ST`), false for a read (`READ`/`LD`).
    pub write: bool,
    /// Earliest cycle the request may enter; only DRAMsim3 traces carry it.
    pub cycle: Option<u64>,
}

/// The longest line a trace may have, in bytes (a file with no newline is not read whole).
pub const MAX_LINE_BYTES: usize = 4096;

/// The largest DRAMsim3 cycle stamp (about 10 minutes of a 1.6 GHz memory clock).
pub const MAX_CYCLE: u64 = 1_000_000_000_000;

/// A trace that cannot be read, located by file, 1-based line and column (0 when it is about
/// the whole file). Always fatal: the run does not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The file, as given.
    pub path: String,
    /// 1-based line, or 0 for the whole file.
    pub line: u64,
    /// 1-based byte column of the field at fault (1 for a whole line, 0 for the whole file).
    pub col: u64,
    /// The field at fault: `file`, `format`, `address`, `op`, `cycle` or `line`.
    pub field: &'static str,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}:0:0: field `{}`: {}", self.path, self.field, self.message),
            n => write!(f, "{}:{}:{}: field `{}`: {}", self.path, n, self.col.max(1), self.field, self.message),
        }
    }
}

impl std::error::Error for TraceError {}

/// Streams the requests of a trace, one line at a time through one reused buffer.
///
/// Yields `Err` for each bad line and goes on with the next; after a read error, or after
/// reporting a trace with no request lines, it ends. Callers usually stop at the first `Err`.
#[derive(Debug)]
pub struct TraceReader<R: BufRead> {
    /// Where lines come from.
    src: R,
    /// The file name for errors.
    path: String,
    /// The format: `Auto` until the first request line decides it.
    format: TraceFormat,
    /// Line that fixed the format (0 when it was forced).
    format_line: u64,
    /// The current line's bytes (reused).
    buf: Vec<u8>,
    /// Number of the current line.
    line: u64,
    /// Request lines seen, good or bad.
    requests: u64,
    /// Cycle of the previous DRAMsim3 request, and its line.
    prev_cycle: Option<(u64, u64)>,
    /// Nothing more to yield.
    done: bool,
    /// Byte column (0-based) of the field being parsed, for errors.
    col: usize,
    /// Byte offsets of the current line's fields, and the line's length.
    starts: [usize; 4],
    line_len: usize,
    /// Addresses must be below this (the memory's capacity), if set.
    addr_limit: Option<u64>,
}

impl TraceReader<BufReader<File>> {
    /// Opens a trace file; `format` may be `Auto`.
    pub fn open(path: &Path, format: TraceFormat) -> Result<Self, TraceError> {
        let name = path.display().to_string();
        match File::open(path) {
            Ok(f) => Ok(TraceReader::new(BufReader::new(f), name, format)),
            Err(e) => {
                Err(TraceError { path: name, line: 0, col: 0, field: "file", message: format!("cannot read: {e}") })
            }
        }
    }
}

impl<R: BufRead> TraceReader<R> {
    /// Reads a trace from any buffered source; `path` names it in errors.
    pub fn new(src: R, path: impl Into<String>, format: TraceFormat) -> Self {
        let path = path.into();
        TraceReader {
            src,
            path,
            format,
            format_line: 0,
            buf: Vec::new(),
            line: 0,
            requests: 0,
            prev_cycle: None,
            done: false,
            col: 0,
            starts: [0; 4],
            line_len: 0,
            addr_limit: None,
        }
    }

    /// Refuses addresses at or above `bytes` (the capacity of the memory the trace drives)
    /// instead of letting the address map fold them silently.
    pub fn with_capacity(mut self, bytes: u64) -> Self {
        self.addr_limit = Some(bytes);
        self
    }

    /// The format: as forced, or as detected so far (`Auto` before the first request line).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    fn err(&self, field: &'static str, message: String) -> TraceError {
        TraceError { path: self.path.clone(), line: self.line, col: self.col as u64 + 1, field, message }
    }

    /// Reads the next line into `buf` (at most [`MAX_LINE_BYTES`]); false at end of file.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        self.col = 0;
        let cap = MAX_LINE_BYTES as u64 + 1;
        match io::Read::take(&mut self.src, cap).read_until(b'\n', &mut self.buf) {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.line += 1;
                if n > MAX_LINE_BYTES && self.buf.last() != Some(&b'\n') {
                    self.col = MAX_LINE_BYTES;
                    return Err(self.err(
                        "line",
                        format!("line longer than {MAX_LINE_BYTES} bytes (allowed: 1..={MAX_LINE_BYTES})"),
                    ));
                }
                Ok(true)
            }
            Err(e) => Err(self.err("file", format!("cannot read: {e}"))),
        }
    }

    /// Parses the line in `buf`; `None` for a blank or comment line.
    fn parse_line(&mut self) -> Option<Result<MemRequest, TraceError>> {
        let buf = std::mem::take(&mut self.buf); // moved, not copied: the allocation is reused
        let result = self.parse_fields(&buf);
        self.buf = buf;
        result
    }

    /// Splits a line into at most four whitespace-separated fields and parses them.
    fn parse_fields(&mut self, line: &[u8]) -> Option<Result<MemRequest, TraceError>> {
        let mut toks: [&[u8]; 4] = [&[]; 4];
        let mut n = 0;
        let mut at = 0;
        self.line_len = line.len();
        while at < line.len() && n < toks.len() {
            let start = at + line[at..].iter().take_while(|b| b.is_ascii_whitespace()).count();
            let len = line[start..].iter().take_while(|b| !b.is_ascii_whitespace()).count();
            if len == 0 {
                break;
            }
            self.starts[n] = start;
            toks[n] = &line[start..start + len];
            n += 1;
            at = start + len;
        }
        if n == 0 || toks[0][0] == b'#' {
            return None;
        }
        self.requests += 1;
        self.col = self.starts[0];
        let line_format = detect(toks[0]);
        let result = match self.check_format(line_format, toks[0]) {
            Err(e) => Err(e),
            Ok(TraceFormat::Dramsim3) => self.dramsim3(&toks[..n]),
            Ok(_) => self.ramulator(&toks[..n]),
        };
        Some(result)
    }

    /// Points errors at field `k` of the line (its end when the line has fewer fields).
    fn at_field(&mut self, k: usize, n: usize) {
        self.col = if k < n { self.starts[k] } else { self.line_len.saturating_sub(1) };
    }

    /// Fixes the format on the first request line, then rejects lines of the other format.
    fn check_format(&mut self, line_format: Option<TraceFormat>, first: &[u8]) -> Result<TraceFormat, TraceError> {
        match (self.format, line_format) {
            (TraceFormat::Auto, Some(f)) => {
                self.format = f;
                self.format_line = self.line;
                Ok(f)
            }
            (TraceFormat::Auto, None) => Err(self.err(
                "format",
                format!("cannot tell the trace format from `{}`; expected {}", show(first), TraceFormat::Auto.syntax()),
            )),
            (fixed, Some(f)) if f != fixed => Err(self.mixed(fixed, f)),
            (fixed, _) => Ok(fixed),
        }
    }

    fn mixed(&self, fixed: TraceFormat, found: TraceFormat) -> TraceError {
        let why = match self.format_line {
            0 => format!("format forced to {fixed}"),
            l => format!("format {fixed} fixed by line {l}"),
        };
        self.err("format", format!("a {found} line in a {fixed} trace ({why}); expected {}", fixed.syntax()))
    }

    /// `0xADDR READ|WRITE CYCLE`.
    fn dramsim3(&mut self, toks: &[&[u8]]) -> Result<MemRequest, TraceError> {
        let syntax = TraceFormat::Dramsim3.syntax();
        let n = toks.len();
        self.at_field(0, n);
        let addr = self.address(toks[0])?;
        self.at_field(1, n);
        let op = toks.get(1).ok_or_else(|| self.err("op", format!("missing READ or WRITE; expected {syntax}")))?;
        let write = match *op {
            b"READ" => false,
            b"WRITE" => true,
            other => return Err(self.err("op", format!("unknown op `{}`; allowed: READ, WRITE", show(other)))),
        };
        self.at_field(2, n);
        let cyc = toks.get(2).ok_or_else(|| self.err("cycle", format!("missing cycle; expected {syntax}")))?;
        self.at_field(3, n);
        self.no_extra(toks, 3, syntax)?;
        self.at_field(2, n);
        let cycle = parse_dec(cyc).filter(|&c| c <= MAX_CYCLE).ok_or_else(|| {
            let m =
                format!("expected a decimal cycle number like 120, found `{}` (allowed: 0..={MAX_CYCLE})", show(cyc));
            self.err("cycle", m)
        })?;
        self.check_order(cycle)?;
        Ok(MemRequest { addr, write, cycle: Some(cycle) })
    }

    /// `LD|ST 0xADDR`.
    fn ramulator(&mut self, toks: &[&[u8]]) -> Result<MemRequest, TraceError> {
        let syntax = TraceFormat::Ramulator.syntax();
        let n = toks.len();
        self.at_field(0, n);
        let write = match toks[0] {
            b"LD" => false,
            b"ST" => true,
            other => return Err(self.err("op", format!("unknown op `{}`; allowed: LD, ST", show(other)))),
        };
        self.at_field(1, n);
        let a = toks.get(1).ok_or_else(|| self.err("address", format!("missing address; expected {syntax}")))?;
        self.at_field(2, n);
        self.no_extra(toks, 2, syntax)?;
        self.at_field(1, n);
        Ok(MemRequest { addr: self.address(a)?, write, cycle: None })
    }

    fn address(&self, tok: &[u8]) -> Result<u64, TraceError> {
        let a = parse_hex(tok).map_err(|why| {
            self.err("address", format!("expected a hex address like 0x1f40, found `{}`{why}", show(tok)))
        })?;
        if let Some(limit) = self.addr_limit.filter(|&l| a >= l) {
            let m = format!("{a:#x} is past the memory's capacity (allowed: 0x0..={:#x})", limit.saturating_sub(1));
            return Err(self.err("address", m));
        }
        Ok(a)
    }

    fn no_extra(&self, toks: &[&[u8]], want: usize, syntax: &str) -> Result<(), TraceError> {
        match toks.get(want) {
            None => Ok(()),
            Some(t) => Err(self.err("line", format!("unexpected extra field `{}`; expected {syntax}", show(t)))),
        }
    }

    fn check_order(&mut self, cycle: u64) -> Result<(), TraceError> {
        if let Some((prev, line)) = self.prev_cycle {
            if cycle < prev {
                let msg = format!("cycle {cycle} is before the previous request's cycle {prev} (line {line})");
                return Err(self.err("cycle", msg + "; DRAMsim3 traces must not go back in time"));
            }
        }
        self.prev_cycle = Some((cycle, self.line));
        Ok(())
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<MemRequest, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.read_line() {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(false) => {
                    self.done = true;
                    if self.requests == 0 {
                        let msg = "empty trace: no request lines (only blank lines or `#` comments)".to_string();
                        let e = TraceError { path: self.path.clone(), line: 0, col: 0, field: "file", message: msg };
                        return Some(Err(e));
                    }
                }
                Ok(true) => {
                    if let Some(r) = self.parse_line() {
                        return Some(r);
                    }
                }
            }
        }
        None
    }
}

/// The format a request line's first field suggests.
fn detect(first: &[u8]) -> Option<TraceFormat> {
    match first {
        b"LD" | b"ST" => Some(TraceFormat::Ramulator),
        [b'0', b'x' | b'X', ..] => Some(TraceFormat::Dramsim3),
        _ => None,
    }
}

/// A field for an error message: lossy UTF-8, control characters escaped, at most 40 characters.
fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    let mut out: String = s.chars().take(40).flat_map(char::escape_debug).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// `0x` + 1 to 16 hex digits; the error is a suffix explaining what else is wrong.
fn parse_hex(tok: &[u8]) -> Result<u64, &'static str> {
    let digits = match tok {
        [b'0', b'x' | b'X', rest @ ..] => rest,
        _ => return Err(" (missing the 0x prefix)"),
    };
    if digits.is_empty() {
        return Err(" (no digits after 0x)");
    }
    let mut v: u64 = 0;
    for &d in digits {
        let x = (d as char).to_digit(16).ok_or(" (not a hex digit)")?;
        v = v.checked_mul(16).and_then(|v| v.checked_add(u64::from(x))).ok_or(" (more than 64 bits)")?;
    }
    Ok(v)
}

/// A non-empty run of decimal digits that fits in u64.
fn parse_dec(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &d in tok {
        let x = (d as char).to_digit(10)?;
        v = v.checked_mul(10)?.checked_add(u64::from(x))?;
    }
    Some(v)
}

/// Writes requests in a concrete format, one per line, with no comments (the reference tools
/// accept none). DRAMsim3 lines take the request's cycle, or its index in `reqs` when it has
/// none; Ramulator lines drop the cycle. `Auto` is an `InvalidInput` error.
pub fn write_trace(w: &mut impl Write, format: TraceFormat, reqs: impl Iterator<Item = MemRequest>) -> io::Result<()> {
    match format {
        TraceFormat::Auto => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "write_trace needs dramsim3 or ramulator, not auto",
            ))
        }
        TraceFormat::Dramsim3 => {
            for (i, r) in reqs.enumerate() {
                let op = if r.write { "WRITE" } else { "READ" };
                writeln!(w, "{:#x} {op} {}", r.addr, r.cycle.unwrap_or(i as u64))?;
            }
        }
        TraceFormat::Ramulator => {
            for r in reqs {
                writeln!(w, "{} {:#x}", if r.write { "ST" } else { "LD" }, r.addr)?;
            }
        }
    }
    Ok(())
}

/// Synthetic workloads for [`synth`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynthKind {
    /// Sequential reads through the footprint, wrapping around.
    StreamRead,
    /// Sequential writes through the footprint, wrapping around.
    StreamWrite,
    /// Uniformly random reads.
    RandomRead,
    /// Uniformly random addresses, each request a read with probability 0.8 (as Ramulator's
    /// `perf_comparison` traces).
    Random,
    /// Uniformly random addresses, exactly two reads then one write, repeating.
    Mix,
}

impl FromStr for SynthKind {
    type Err = String;

    /// `stream-read`, `stream-write`, `random-read`, `random` or `mix`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stream-read" => Ok(SynthKind::StreamRead),
            "stream-write" => Ok(SynthKind::StreamWrite),
            "random-read" => Ok(SynthKind::RandomRead),
            "random" => Ok(SynthKind::Random),
            "mix" => Ok(SynthKind::Mix),
            _ => Err(format!("unknown workload `{s}` (allowed: stream-read, stream-write, random-read, random, mix)")),
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, seedable with any value, good enough for traffic.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n >= 1), by multiply-shift.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// `n` requests of workload `kind` over `footprint_bytes` bytes from address 0, each
/// `access_bytes` long and aligned to it, request `i` at cycle `i` (one per cycle). The same
/// arguments give the same trace. A zero access size counts as 1 and a footprint smaller than
/// one access as one access.
pub fn synth(
    kind: SynthKind,
    n: usize,
    seed: u64,
    footprint_bytes: u64,
    access_bytes: u64,
) -> impl Iterator<Item = MemRequest> {
    let access = access_bytes.max(1);
    let slots = (footprint_bytes / access).max(1);
    let mut rng = SplitMix64(seed);
    (0..n as u64).map(move |i| {
        let (slot, write) = match kind {
            SynthKind::StreamRead => (i % slots, false),
            SynthKind::StreamWrite => (i % slots, true),
            SynthKind::RandomRead => (rng.below(slots), false),
            SynthKind::Random => (rng.below(slots), rng.below(5) == 0),
            SynthKind::Mix => (rng.below(slots), i % 3 == 2),
        };
        MemRequest { addr: slot * access, write, cycle: Some(i) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str, format: TraceFormat) -> Vec<Result<MemRequest, TraceError>> {
        TraceReader::new(text.as_bytes(), "traces/x.trace", format).collect()
    }

    /// The first error's Display, or "ok" when every line parsed.
    fn first_err(text: &str, format: TraceFormat) -> String {
        read_all(text, format).into_iter().find_map(|r| r.err()).map_or("ok".into(), |e| e.to_string())
    }

    fn check(text: &str, format: TraceFormat, expect: &str) {
        let got = first_err(text, format);
        assert!(got.contains(expect), "input {text:?}\n  got:  {got}\n  want: …{expect}…");
    }

    fn req(addr: u64, write: bool, cycle: Option<u64>) -> MemRequest {
        MemRequest { addr, write, cycle }
    }

    #[test]
    fn parses_dramsim3_with_comments_and_blank_lines() {
        let text = "# header\n\n0x1f40 READ 0\r\n  0X40\tWRITE 0\n0xffffffffffffffff READ 7\n";
        let got: Vec<_> = read_all(text, TraceFormat::Auto).into_iter().map(Result::unwrap).collect();
        let want = vec![req(0x1f40, false, Some(0)), req(0x40, true, Some(0)), req(u64::MAX, false, Some(7))];
        assert_eq!(got, want);
    }

    #[test]
    fn parses_ramulator_and_reports_detected_format() {
        let mut r = TraceReader::new("LD 0x40\nST 0x80\n".as_bytes(), "t", TraceFormat::Auto);
        assert_eq!(r.format(), TraceFormat::Auto);
        assert_eq!(r.next().unwrap().unwrap(), req(0x40, false, None));
        assert_eq!(r.format(), TraceFormat::Ramulator);
        assert_eq!(r.next().unwrap().unwrap(), req(0x80, true, None));
        assert!(r.next().is_none());
    }

    #[test]
    fn error_display_names_file_line_and_field() {
        let got = first_err("0x10 READ 0\n\n0xZZ READ 1\n", TraceFormat::Auto);
        assert_eq!(
            got,
            "traces/x.trace:3:1: field `address`: expected a hex address like 0x1f40, found `0xZZ` (not a hex digit)"
        );
    }

    #[test]
    fn unreadable_file_names_path_and_os_reason() {
        let e = TraceReader::open(Path::new("/nonexistent/dir/x.trace"), TraceFormat::Auto).unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("/nonexistent/dir/x.trace:0:0: field `file`: cannot read: "), "{s}");
        assert!(s.contains("No such file"), "{s}");
    }

    #[test]
    fn open_reads_a_real_file() {
        let path = std::env::temp_dir().join(format!("trnsim-memtrace-{}.trace", std::process::id()));
        std::fs::write(&path, "ST 0x1000\n").unwrap();
        let got: Vec<_> = TraceReader::open(&path, TraceFormat::Ramulator).unwrap().collect();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(got, vec![Ok(req(0x1000, true, None))]);
    }

    #[test]
    fn empty_trace_is_an_error() {
        for text in ["", "\n\n", "# only a comment\n   \n"] {
            check(text, TraceFormat::Auto, "traces/x.trace:0:0: field `file`: empty trace");
        }
    }

    #[test]
    fn unknown_op_names_the_allowed_ones() {
        check("0x10 LOAD 0\n", TraceFormat::Auto, ":1:6: field `op`: unknown op `LOAD`; allowed: READ, WRITE");
        check("0x10 read 0\n", TraceFormat::Dramsim3, "unknown op `read`; allowed: READ, WRITE");
        check("LD 0x10\nRD 0x20\n", TraceFormat::Ramulator, ":2:1: field `op`: unknown op `RD`; allowed: LD, ST");
        check("RD 0x20\n", TraceFormat::Auto, ":1: field `format`: cannot tell the trace format from `RD`");
    }

    #[test]
    fn bad_hex_says_why() {
        check(
            "LD 1234\n",
            TraceFormat::Auto,
            "field `address`: expected a hex address like 0x1f40, found `1234` (missing the 0x prefix)",
        );
        check("LD 0x\n", TraceFormat::Auto, "(no digits after 0x)");
        check("LD 0x1g\n", TraceFormat::Auto, "(not a hex digit)");
        check("0x1_0 READ 0\n", TraceFormat::Auto, "found `0x1_0` (not a hex digit)");
        check("ST 0x10000000000000000\n", TraceFormat::Auto, "(more than 64 bits)");
    }

    #[test]
    fn missing_fields_are_named() {
        check(
            "0x10\n",
            TraceFormat::Auto,
            ":1:5: field `op`: missing READ or WRITE; expected `0xADDR READ|WRITE CYCLE`",
        );
        check("0x10 READ\n", TraceFormat::Auto, ":1:10: field `cycle`: missing cycle");
        check("LD\n", TraceFormat::Auto, ":1:3: field `address`: missing address; expected `LD|ST 0xADDR`");
    }

    #[test]
    fn extra_fields_are_rejected() {
        check("0x10 READ 5 64\n", TraceFormat::Auto, ":1:13: field `line`: unexpected extra field `64`");
        check("LD 0x10 0x20 0x30 0x40\n", TraceFormat::Auto, ":1:9: field `line`: unexpected extra field `0x20`");
    }

    #[test]
    fn cycle_must_be_a_decimal_number() {
        check(
            "0x10 READ 12a\n",
            TraceFormat::Auto,
            "field `cycle`: expected a decimal cycle number like 120, found `12a`",
        );
        check("0x10 READ -1\n", TraceFormat::Auto, "found `-1`");
        check("0x10 READ 99999999999999999999\n", TraceFormat::Auto, "found `99999999999999999999`");
    }

    #[test]
    fn decreasing_cycles_name_the_previous_value() {
        let text = "0x10 READ 5\n0x20 READ 10\n0x30 WRITE 10\n0x40 READ 9\n";
        check(
            text,
            TraceFormat::Auto,
            ":4:11: field `cycle`: cycle 9 is before the previous request's cycle 10 (line 3)",
        );
    }

    #[test]
    fn mixed_formats_are_rejected() {
        check(
            "0x10 READ 0\nLD 0x20\n",
            TraceFormat::Auto,
            ":2:1: field `format`: a ramulator line in a dramsim3 trace (format dramsim3 fixed by line 1)",
        );
        check("LD 0x20\n0x10 READ 0\n", TraceFormat::Auto, "a dramsim3 line in a ramulator trace");
        check(
            "LD 0x20\n",
            TraceFormat::Dramsim3,
            ":1: field `format`: a ramulator line in a dramsim3 trace (format forced to dramsim3)",
        );
    }

    #[test]
    fn non_utf8_bytes_are_reported_not_fatal() {
        let got = TraceReader::new(&b"LD 0x\xff\xfe\nST 0x8\n"[..], "t", TraceFormat::Auto).collect::<Vec<_>>();
        assert!(got[0].as_ref().unwrap_err().message.contains("not a hex digit"));
        assert_eq!(got[1], Ok(req(8, true, None)));
    }

    #[test]
    fn format_names_round_trip() {
        for f in [TraceFormat::Auto, TraceFormat::Dramsim3, TraceFormat::Ramulator] {
            assert_eq!(f.name().parse::<TraceFormat>(), Ok(f));
        }
        assert!("DRAMsim".parse::<TraceFormat>().unwrap_err().contains("allowed: auto, dramsim3, ramulator"));
        assert_eq!("mix".parse::<SynthKind>(), Ok(SynthKind::Mix));
        assert!("stream".parse::<SynthKind>().unwrap_err().contains("allowed: stream-read"));
    }

    #[test]
    fn write_then_read_round_trips_both_formats() {
        let reqs: Vec<_> = synth(SynthKind::Random, 500, 3, 1 << 20, 64).collect();
        for format in [TraceFormat::Dramsim3, TraceFormat::Ramulator] {
            let mut out = Vec::new();
            write_trace(&mut out, format, reqs.iter().copied()).unwrap();
            let back: Vec<_> = TraceReader::new(&out[..], "t", TraceFormat::Auto).map(Result::unwrap).collect();
            let keep = format == TraceFormat::Dramsim3;
            let want: Vec<_> = reqs.iter().map(|r| MemRequest { cycle: r.cycle.filter(|_| keep), ..*r }).collect();
            assert_eq!(back, want, "{format}");
        }
    }

    #[test]
    fn write_trace_text_matches_reference_syntax() {
        let reqs = [req(0x1f40, false, None), req(0x80, true, Some(9))];
        let mut d = Vec::new();
        write_trace(&mut d, TraceFormat::Dramsim3, reqs.into_iter()).unwrap();
        assert_eq!(String::from_utf8(d).unwrap(), "0x1f40 READ 0\n0x80 WRITE 9\n");
        let mut r = Vec::new();
        write_trace(&mut r, TraceFormat::Ramulator, reqs.into_iter()).unwrap();
        assert_eq!(String::from_utf8(r).unwrap(), "LD 0x1f40\nST 0x80\n");
        let e = write_trace(&mut Vec::new(), TraceFormat::Auto, reqs.into_iter()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn synth_is_deterministic_aligned_and_in_footprint() {
        let kinds =
            [SynthKind::StreamRead, SynthKind::StreamWrite, SynthKind::RandomRead, SynthKind::Random, SynthKind::Mix];
        for kind in kinds {
            let a: Vec<_> = synth(kind, 1000, 42, 1 << 16, 64).collect();
            assert_eq!(a, synth(kind, 1000, 42, 1 << 16, 64).collect::<Vec<_>>());
            for (i, r) in a.iter().enumerate() {
                assert_eq!((r.addr % 64, r.addr < 1 << 16, r.cycle), (0, true, Some(i as u64)), "{kind:?}");
            }
        }
        let b: Vec<_> = synth(SynthKind::Random, 1000, 43, 1 << 16, 64).collect();
        assert_ne!(b, synth(SynthKind::Random, 1000, 42, 1 << 16, 64).collect::<Vec<_>>());
    }

    #[test]
    fn synth_read_write_mixes() {
        let writes = |kind| synth(kind, 30_000, 1, 1 << 30, 64).filter(|r| r.write).count();
        assert_eq!(writes(SynthKind::StreamRead), 0);
        assert_eq!(writes(SynthKind::RandomRead), 0);
        assert_eq!(writes(SynthKind::StreamWrite), 30_000);
        assert_eq!(writes(SynthKind::Mix), 10_000);
        let w = writes(SynthKind::Random);
        assert!((5_400..6_600).contains(&w), "random: {w} writes of 30000, want about 20%");
        let stream: Vec<_> = synth(SynthKind::StreamRead, 5, 0, 192, 64).map(|r| r.addr).collect();
        assert_eq!(stream, [0, 64, 128, 0, 64]);
    }

    #[test]
    fn synth_degenerate_sizes_do_not_panic() {
        assert!(synth(SynthKind::Random, 10, 0, 0, 0).all(|r| r.addr == 0));
        assert!(synth(SynthKind::StreamRead, 10, 0, 10, 64).all(|r| r.addr == 0));
        assert!(synth(SynthKind::Random, 100, 0, u64::MAX, 1).all(|r| r.addr < u64::MAX));
    }

    /// xorshift64 for the fuzz test.
    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    #[test]
    fn random_bytes_never_panic() {
        const WORDS: [&[u8]; 14] =
            [b"0x", b"0X1f", b"LD", b"ST", b"READ", b"WRITE", b"12", b"#", b" ", b"\t", b"\n", b"\r", b"\xff", b"-"];
        let mut s = 0x2545_f491_4f6c_dd1d;
        for _ in 0..300 {
            let mut text = Vec::new();
            for _ in 0..xorshift(&mut s) % 200 {
                let r = xorshift(&mut s);
                match r % 3 {
                    0 => text.push((r >> 8) as u8),
                    _ => text.extend_from_slice(WORDS[(r >> 8) as usize % WORDS.len()]),
                }
            }
            for format in [TraceFormat::Auto, TraceFormat::Dramsim3, TraceFormat::Ramulator] {
                let n = TraceReader::new(&text[..], "fuzz", format).take(10_000).count();
                assert!(n <= text.len() + 1);
            }
        }
    }
}
