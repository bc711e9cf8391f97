//! Recorded port traces: a block's input ports, one line per cycle, captured from a running
//! system ([`Recorder`]) and replayed into a diff ([`PortTrace::stimulus_for`]).
//!
//! The format (text, UTF-8; `#` starts a comment line; blank lines are ignored):
//!
//! ```text
//! trnsim-port-trace 1          magic and version: the first non-comment line
//! block islip_n8_i1            optional: the registry block it was recorded from
//! ports rst:1 req:64           the columns: input port name:width, in column order
//! 1 0                          one line per cycle: one hex value per column
//! 0 80402010080402
//! 0 0x1                        (an optional 0x prefix; no value may exceed its width)
//! ```
//!
//! Every value line is one rising clock edge of the block, with the values its inputs held at
//! that edge. Replay matches columns to the block's ports by name and width; every input but
//! `clk` must have a column. Errors name `file:line:col: field`, never panic.

use crate::block::{Block, PortInfo, VltError};
use crate::stimulus::Stimulus;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::rc::Rc;

/// The first line of every trace.
pub const MAGIC: &str = "trnsim-port-trace 1";

/// A located problem in a trace file: `file:line:col: field: message` (line 0: the whole
/// file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// File name as given.
    pub file: String,
    /// 1-based line (0 when not about one line).
    pub line: usize,
    /// 1-based column of the token (0 when not about one line).
    pub col: usize,
    /// What was wrong: `header`, `ports`, `columns`, or a port name.
    pub field: String,
    /// Why.
    pub msg: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.col, self.field, self.msg)
    }
}

impl std::error::Error for TraceError {}

/// A parsed trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortTrace {
    /// The file it came from (for errors).
    pub file: String,
    /// The block it was recorded from, if stated.
    pub block: Option<String>,
    /// Columns: (port name, width).
    pub ports: Vec<(String, u32)>,
    /// The `ports` line's number.
    pub ports_line: usize,
    /// One row per cycle, one value per column.
    pub rows: Vec<Vec<u128>>,
}

fn fits(v: u128, width: u32) -> bool {
    width >= 128 || v >> width == 0
}

impl PortTrace {
    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<PortTrace, TraceError> {
        let file = path.display().to_string();
        let text = trnsim_kernel::input::read_text(path).map_err(|e| TraceError {
            file: file.clone(),
            line: 0,
            col: 0,
            field: "file".into(),
            msg: format!("cannot read: {e}"),
        })?;
        PortTrace::parse(&file, &text)
    }

    /// Parses `text` (named `file` in errors).
    pub fn parse(file: &str, text: &str) -> Result<PortTrace, TraceError> {
        let mut t = PortTrace { file: file.into(), ..PortTrace::default() };
        let mut seen_magic = false;
        for (k, raw) in text.lines().enumerate() {
            let line = k + 1;
            // Errors point at `token` (a slice of this line) or, for None, the line's start.
            let err = |token: Option<&str>, field: &str, msg: String| {
                let at =
                    token.map_or(raw.len() - raw.trim_start().len(), |t| t.as_ptr() as usize - raw.as_ptr() as usize);
                TraceError { file: file.into(), line, col: at + 1, field: field.into(), msg }
            };
            let s = raw.trim();
            if s.is_empty() || s.starts_with('#') {
                continue;
            }
            if !seen_magic {
                if s != MAGIC {
                    return Err(err(None, "header", format!("expected `{MAGIC}`, found `{s}`")));
                }
                seen_magic = true;
                continue;
            }
            if let Some(rest) = s.strip_prefix("block ") {
                if t.ports_line != 0 {
                    return Err(err(None, "block", "must come before the `ports` line".into()));
                }
                t.block = Some(rest.trim().to_string());
                continue;
            }
            if let Some(rest) = s.strip_prefix("ports") {
                if t.ports_line != 0 {
                    return Err(err(
                        None,
                        "ports",
                        format!("a second `ports` line (the first is line {})", t.ports_line),
                    ));
                }
                for col in rest.split_whitespace() {
                    let (name, w) = col
                        .split_once(':')
                        .ok_or_else(|| err(Some(col), "ports", format!("`{col}` is not name:width")))?;
                    let width: u32 = w
                        .parse()
                        .ok()
                        .filter(|w| (1..=128).contains(w))
                        .ok_or_else(|| err(Some(w), name, format!("width `{w}` is not 1..=128")))?;
                    if name.is_empty() || t.ports.iter().any(|(n, _)| n == name) {
                        return Err(err(Some(col), "ports", format!("empty or repeated port name `{name}`")));
                    }
                    t.ports.push((name.to_string(), width));
                }
                if t.ports.is_empty() {
                    return Err(err(None, "ports", "no columns".into()));
                }
                t.ports_line = line;
                continue;
            }
            if t.ports_line == 0 {
                return Err(err(None, "ports", "a value line before the `ports` line".into()));
            }
            let fields: Vec<&str> = s.split_whitespace().collect();
            if fields.len() != t.ports.len() {
                let msg = format!("{} values, {} columns (line {})", fields.len(), t.ports.len(), t.ports_line);
                return Err(err(None, "columns", msg));
            }
            let mut row = Vec::with_capacity(fields.len());
            for (f, (name, width)) in fields.iter().zip(&t.ports) {
                let hex = f.strip_prefix("0x").unwrap_or(f);
                let v = u128::from_str_radix(hex, 16)
                    .map_err(|_| err(Some(f), name, format!("`{f}` is not a hex number of at most 128 bits")))?;
                if !fits(v, *width) {
                    return Err(err(Some(f), name, format!("{f} does not fit in {width} bits")));
                }
                row.push(v);
            }
            t.rows.push(row);
        }
        let whole =
            |field: &str, msg: String| TraceError { file: file.into(), line: 0, col: 0, field: field.into(), msg };
        if !seen_magic {
            return Err(whole("header", format!("empty file (expected `{MAGIC}`)")));
        }
        if t.ports_line == 0 {
            return Err(whole("ports", "no `ports` line".into()));
        }
        Ok(t)
    }

    /// The replay of this trace into a block with `ports`: columns matched by name, widths
    /// equal, every input (but `clk`) covered.
    pub fn stimulus_for(&self, ports: &[PortInfo]) -> Result<TraceStimulus, TraceError> {
        let err = |field: &str, msg: String| TraceError {
            file: self.file.clone(),
            line: self.ports_line,
            col: 1,
            field: field.into(),
            msg,
        };
        let mut map = Vec::with_capacity(self.ports.len());
        for (name, width) in &self.ports {
            let i = ports
                .iter()
                .position(|p| p.name == name && p.input && p.name != "clk")
                .ok_or_else(|| err(name, "not an input port of the block".into()))?;
            if ports[i].width != *width {
                return Err(err(name, format!("{width} bits in the trace, {} on the block", ports[i].width)));
            }
            map.push(i);
        }
        if let Some(p) =
            ports.iter().find(|p| p.input && p.name != "clk" && !self.ports.iter().any(|(n, _)| n == p.name))
        {
            return Err(err("ports", format!("no column for input `{}` ({} bits)", p.name, p.width)));
        }
        Ok(TraceStimulus { rows: Rc::new(self.rows.clone()), map })
    }
}

/// Plays a [`PortTrace`] into a block's inputs (holding the last row after the end; the diff
/// stops at [`Stimulus::cycles`]).
#[derive(Clone)]
pub struct TraceStimulus {
    rows: Rc<Vec<Vec<u128>>>,
    map: Vec<usize>,
}

impl Stimulus for TraceStimulus {
    fn drive(&mut self, cycle: u64, inputs: &mut [u128]) {
        let Some(row) = self.rows.get(cycle as usize).or(self.rows.last()) else { return };
        for (&i, &v) in self.map.iter().zip(row) {
            inputs[i] = v;
        }
    }
    fn cycles(&self) -> Option<u64> {
        Some(self.rows.len() as u64)
    }
}

/// Writes a trace: the header for a block's input ports, then one line per cycle.
pub struct TraceWriter {
    w: Box<dyn Write>,
    /// Port indices of the columns.
    cols: Vec<usize>,
    line: String,
}

impl TraceWriter {
    /// Writes the header for the inputs (but `clk`) of `ports`, recorded from `block`.
    pub fn new(mut w: Box<dyn Write>, block: &str, ports: &[PortInfo]) -> io::Result<TraceWriter> {
        let cols: Vec<usize> = (0..ports.len()).filter(|&i| ports[i].input && ports[i].name != "clk").collect();
        let names: Vec<String> = cols.iter().map(|&i| format!("{}:{}", ports[i].name, ports[i].width)).collect();
        writeln!(w, "{MAGIC}\nblock {block}\nports {}", names.join(" "))?;
        Ok(TraceWriter { w, cols, line: String::new() })
    }

    /// One cycle: `values` holds one value per port of the block (outputs ignored).
    pub fn row(&mut self, values: &[u128]) -> io::Result<()> {
        use std::fmt::Write as _;
        self.line.clear();
        for (k, &i) in self.cols.iter().enumerate() {
            let sep = if k == 0 { "" } else { " " };
            let _ = write!(self.line, "{sep}{:x}", values[i]);
        }
        self.line.push('\n');
        self.w.write_all(self.line.as_bytes())
    }

    /// Flushes the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// A [`Block`] that records its inputs at every rising edge into a trace, passing everything
/// through to the wrapped block: put it around a block running inside a system (e.g. the
/// switch's RTL arbiter) and replay the file with `trnsim diff BLOCK --stimulus trace:FILE`.
///
/// Recording never fails the run: the first I/O error stops the recording and is kept
/// ([`Recorder::error`]).
pub struct Recorder<B: Block> {
    inner: B,
    inputs: Vec<u128>,
    out: Option<TraceWriter>,
    error: Option<io::Error>,
    rows: u64,
}

impl<B: Block> Recorder<B> {
    /// Records `inner` (registry name `block`) into `w`.
    pub fn new(inner: B, block: &str, w: Box<dyn Write>) -> io::Result<Recorder<B>> {
        let out = TraceWriter::new(w, block, inner.ports())?;
        let inputs = vec![0; inner.ports().len()];
        Ok(Recorder { inner, inputs, out: Some(out), error: None, rows: 0 })
    }
    /// Records into a new file at `path`.
    pub fn to_file(inner: B, block: &str, path: &Path) -> io::Result<Recorder<B>> {
        let f = std::fs::File::create(path)?;
        Recorder::new(inner, block, Box::new(io::BufWriter::new(f)))
    }
    /// The wrapped block.
    pub fn inner(&self) -> &B {
        &self.inner
    }
    /// Cycles recorded.
    pub fn rows(&self) -> u64 {
        self.rows
    }
    /// The I/O error that stopped the recording, if any.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }
    /// Flushes the file (also done on drop).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().map_or(Ok(()), TraceWriter::flush)
    }
}

impl<B: Block> Drop for Recorder<B> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl<B: Block> Block for Recorder<B> {
    fn ports(&self) -> &[PortInfo] {
        self.inner.ports()
    }
    fn set_input(&mut self, port: usize, v: u128) {
        self.inputs[port] = v;
        self.inner.set_input(port, v)
    }
    fn settle(&mut self) -> Result<(), VltError> {
        self.inner.settle()
    }
    fn output(&self, port: usize) -> u128 {
        self.inner.output(port)
    }
    fn posedge(&mut self) -> Result<(), VltError> {
        if let Some(out) = self.out.as_mut() {
            match out.row(&self.inputs) {
                Ok(()) => self.rows += 1,
                Err(e) => {
                    self.error = Some(e);
                    self.out = None;
                }
            }
        }
        self.inner.posedge()
    }
    fn open_vcd(&mut self, path: &Path) -> Result<(), VltError> {
        self.inner.open_vcd(path)
    }
    fn close_vcd(&mut self) {
        self.inner.close_vcd()
    }
    fn reset(&self) -> Option<crate::block::ResetInfo> {
        self.inner.reset()
    }
    fn failed_assertion(&self, e: &VltError) -> Option<(&'static str, String)> {
        self.inner.failed_assertion(e)
    }
    fn signals(&self) -> &[crate::block::SignalInfo] {
        self.inner.signals()
    }
    fn read_signals(&self, out: &mut [u128]) {
        self.inner.read_signals(out)
    }
    fn peek(&self, name: &str) -> Result<u128, String> {
        self.inner.peek(name)
    }
    fn cover_properties(&self) -> Vec<(&'static str, u64)> {
        self.inner.cover_properties()
    }
    fn assertion_passes(&self) -> Vec<(&'static str, u64)> {
        self.inner.assertion_passes()
    }
    fn take_assertion_notes(&mut self) -> Vec<crate::block::AssertionNote> {
        self.inner.take_assertion_notes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ArbMode, IslipArbiter};

    fn e(text: &str) -> String {
        PortTrace::parse("t.trace", text).unwrap_err().to_string()
    }

    #[test]
    fn parse_reads_header_ports_and_hex_rows() {
        let t =
            PortTrace::parse("t", "# hi\ntrnsim-port-trace 1\nblock x\n\nports rst:1 req:16\n1 0\n0 0xffff\n").unwrap();
        assert_eq!(t.block.as_deref(), Some("x"));
        assert_eq!(t.ports, [("rst".to_string(), 1), ("req".to_string(), 16)]);
        assert_eq!(t.rows, [vec![1, 0], vec![0, 0xffff]]);
        assert_eq!(t.ports_line, 5);
    }

    #[test]
    fn parse_errors_name_file_line_and_field() {
        assert_eq!(e(""), "t.trace:0:0: header: empty file (expected `trnsim-port-trace 1`)");
        assert_eq!(
            e("trnsim-port-trace 2\n"),
            "t.trace:1:1: header: expected `trnsim-port-trace 1`, found `trnsim-port-trace 2`"
        );
        assert_eq!(e("trnsim-port-trace 1\n1 0\n"), "t.trace:2:1: ports: a value line before the `ports` line");
        assert_eq!(e("trnsim-port-trace 1\nports a:0\n"), "t.trace:2:9: a: width `0` is not 1..=128");
        assert_eq!(e("trnsim-port-trace 1\nports a\n"), "t.trace:2:7: ports: `a` is not name:width");
        assert_eq!(
            e("trnsim-port-trace 1\nports a:1 b:4\n1 2\n1\n"),
            "t.trace:4:1: columns: 1 values, 2 columns (line 2)"
        );
        assert_eq!(e("trnsim-port-trace 1\nports a:1 b:4\n1 10\n"), "t.trace:3:3: b: 10 does not fit in 4 bits");
        assert_eq!(
            e("trnsim-port-trace 1\nports a:1 b:4\n1 g\n"),
            "t.trace:3:3: b: `g` is not a hex number of at most 128 bits"
        );
        assert_eq!(e("trnsim-port-trace 1\n"), "t.trace:0:0: ports: no `ports` line");
        assert_eq!(e("trnsim-port-trace 1\nports a:1 a:1\n"), "t.trace:2:11: ports: empty or repeated port name `a`");
    }

    #[test]
    fn stimulus_for_checks_names_widths_and_coverage() {
        let a = IslipArbiter::new(4, 1, ArbMode::Islip);
        let t = |p: &str| PortTrace::parse("t", &format!("trnsim-port-trace 1\nports {p}\n")).unwrap();
        let msg = |p: &str| t(p).stimulus_for(a.ports()).err().unwrap().to_string();
        assert!(t("rst:1 req:16").stimulus_for(a.ports()).is_ok());
        assert_eq!(msg("rst:1 req:8"), "t:2:1: req: 8 bits in the trace, 16 on the block");
        assert_eq!(msg("rst:1 req:16 foo:1"), "t:2:1: foo: not an input port of the block");
        assert_eq!(msg("rst:1 match_valid:4"), "t:2:1: match_valid: not an input port of the block");
        assert_eq!(msg("rst:1"), "t:2:1: ports: no column for input `req` (16 bits)");
    }

    #[test]
    fn recorder_output_replays_to_the_same_inputs() {
        let path = std::env::temp_dir().join(format!("trnsim-rtl-rec-{}.trace", std::process::id()));
        let mut rec = Recorder::to_file(IslipArbiter::new(4, 1, ArbMode::Islip), "islip_n4_i1", &path).unwrap();
        let inputs: Vec<(u128, u128)> = (0..50).map(|c| ((c < 2) as u128, (c * 0x9e37) as u128 & 0xffff)).collect();
        for &(rst, req) in &inputs {
            rec.set_input(1, rst);
            rec.set_input(2, req);
            rec.settle().unwrap();
            rec.posedge().unwrap();
        }
        assert_eq!(rec.rows(), 50);
        drop(rec);
        let t = PortTrace::read(&path).unwrap();
        assert_eq!(t.block.as_deref(), Some("islip_n4_i1"));
        let mut s = t.stimulus_for(IslipArbiter::new(4, 1, ArbMode::Islip).ports()).unwrap();
        assert_eq!(s.cycles(), Some(50));
        let mut v = vec![0; 7];
        for (c, &(rst, req)) in inputs.iter().enumerate() {
            s.drive(c as u64, &mut v);
            assert_eq!((v[1], v[2]), (rst, req));
        }
        let _ = std::fs::remove_file(path);
    }

    /// Property: hostile edits of a valid trace (from a fixed seed; `TRNSIM_FUZZ_CASES` raises
    /// the count) parse or give a one-line `file:line:col:` error; none panics.
    #[test]
    fn fuzz_hostile_port_traces_parse_or_are_located() {
        let base = "trnsim-port-trace 1\nblock link_fifo\nports rst:1 push:1 data:64\n1 0 0\n0 1 dead\n0 1 0xffffffffffffffff\n";
        let pieces = [
            "ports",
            "x:0",
            "x:129",
            ":",
            "0x",
            "ffffffffffffffffffffffffffffffffff",
            "\u{feff}",
            "\n",
            " ",
            "#",
            "g",
            "-1",
            "999999999999999999999999999999999999999",
        ];
        let cases: u64 = std::env::var("TRNSIM_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n.max(1) as u64) as usize
        };
        for _ in 0..cases {
            let mut t = base.to_string();
            for _ in 0..1 + next(4) {
                let at = t.char_indices().map(|c| c.0).nth(next(t.chars().count())).unwrap_or(0);
                match next(3) {
                    0 => t.insert_str(at, pieces[next(pieces.len())]),
                    1 => t.truncate(at),
                    _ => {
                        let end = t[at..].char_indices().nth(1 + next(6)).map_or(t.len(), |c| at + c.0);
                        t.replace_range(at..end, "");
                    }
                }
            }
            match std::panic::catch_unwind(|| PortTrace::parse("f.trace", &t)) {
                Err(_) => panic!("the trace reader panicked on {t:?}"),
                Ok(Ok(p)) => assert!(p.rows.iter().all(|r| r.len() == p.ports.len())),
                Ok(Err(e)) => {
                    let m = e.to_string();
                    let mut parts = m.splitn(4, ':');
                    let (f, l, c) = (parts.next(), parts.next(), parts.next());
                    let located = f == Some("f.trace")
                        && l.is_some_and(|l| l.parse::<usize>().is_ok())
                        && c.is_some_and(|c| c.parse::<usize>().is_ok());
                    assert!(located && !m.contains('\n'), "unlocated: {m} for {t:?}");
                }
            }
        }
    }
}
