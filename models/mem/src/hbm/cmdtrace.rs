//! HBM command traces as text: one issued command per line, for replay by the checker.
//!
//! ```text
//! # trnsim hbm command trace v1 preset=hbm3-6400 ck_mhz=1600
//! # cycle stack channel pc CMD sid bank_group bank row column
//! 0 0 0 0 ACT 0 0 0 7 0
//! 31 0 0 0 RD 0 0 0 7 3
//! ```
//!
//! The header line comes first (`#` comment lines and blank lines may precede it and appear
//! anywhere after it); every other line is one [`CommandRecord`] exactly as
//! [`CommandRecord::to_line`] writes it, with `CMD` a [`Command::name`]. Fields are separated by
//! any ASCII whitespace.
//!
//! Models do no file I/O: the writer and reader work on any [`Write`] / [`BufRead`] the caller
//! opens, and the reader takes a source name (usually the file name) for its errors. Leaves out:
//! compression, binary encodings and seeking.

use crate::hbm::command::{Command, CommandRecord, CommandSink};
use std::fmt;
use std::io::{self, BufRead, BufWriter, Write};

/// The start of the header line, up to and including the format version.
pub const MAGIC: &str = "# trnsim hbm command trace v1";

/// The header's prefix before the version word.
const MAGIC_STEM: &str = "# trnsim hbm command trace ";

/// The fields of a record line, in order (error messages name them).
pub const FIELDS: [&str; 10] =
    ["cycle", "stack", "channel", "pc", "command", "sid", "bank_group", "bank", "row", "column"];

/// Writes the header line: `# trnsim hbm command trace v1 preset=<name> ck_mhz=<n>`.
///
/// Fails with `InvalidInput` if the preset name is empty or holds whitespace or `=`, which the
/// reader could not parse back.
pub fn write_header<W: Write>(w: &mut W, preset_name: &str, ck_mhz: u64) -> io::Result<()> {
    if preset_name.is_empty() || preset_name.contains(|c: char| c.is_whitespace() || c == '=') {
        let msg = format!("preset name `{preset_name}` must be one word without `=`");
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    writeln!(w, "{MAGIC} preset={preset_name} ck_mhz={ck_mhz}")
}

/// Writes one record line, as [`CommandRecord::to_line`] does, without allocating.
pub fn write_record<W: Write>(w: &mut W, r: &CommandRecord) -> io::Result<()> {
    writeln!(
        w,
        "{} {} {} {} {} {} {} {} {} {}",
        r.cycle,
        r.stack,
        r.channel,
        r.pc,
        r.cmd.name(),
        r.sid,
        r.bank_group,
        r.bank,
        r.row,
        r.column
    )
}

/// Records commands to a text trace as a controller issues them (a [`CommandSink`]).
///
/// Output is buffered. [`CommandSink::command`] cannot return errors, so the first write error is
/// kept, later records are dropped, and [`CmdTraceWriter::finish`] returns it.
#[derive(Debug)]
pub struct CmdTraceWriter<W: Write> {
    out: BufWriter<W>,
    error: Option<io::Error>,
    records: u64,
}

impl<W: Write> CmdTraceWriter<W> {
    /// A writer that starts `inner` with the header for `preset_name` at `ck_mhz`.
    pub fn new(inner: W, preset_name: &str, ck_mhz: u64) -> CmdTraceWriter<W> {
        let mut out = BufWriter::new(inner);
        let error = write_header(&mut out, preset_name, ck_mhz).err();
        CmdTraceWriter { out, error, records: 0 }
    }

    /// Writes one record (dropped if an earlier write failed).
    pub fn record(&mut self, rec: &CommandRecord) {
        if self.error.is_some() {
            return;
        }
        match write_record(&mut self.out, rec) {
            Ok(()) => self.records += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Records written so far.
    pub fn records_written(&self) -> u64 {
        self.records
    }

    /// Flushes and returns the inner writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

impl<W: Write + 'static> CommandSink for CmdTraceWriter<W> {
    /// Writes the command's line.
    fn command(&mut self, rec: &CommandRecord) {
        self.record(rec);
    }
}

/// A bad line in a command trace: where it is, which field, and what is wrong.
///
/// `Display`: `file.cmd:12: field `cycle`: expected an unsigned integer, found `x1``; errors
/// about a whole line (field count, read failures) have an empty `field` and omit that part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CmdTraceError {
    /// The source name given to the reader (usually the file name).
    pub source: String,
    /// 1-based line number.
    pub line: u64,
    /// The field at fault: one of [`FIELDS`], "header", "preset" or "ck_mhz"; empty for the whole
    /// line.
    pub field: &'static str,
    /// What is wrong, lower-case, no trailing period.
    pub message: String,
}

impl fmt::Display for CmdTraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.source, self.line)?;
        if !self.field.is_empty() {
            write!(f, "field `{}`: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for CmdTraceError {}

/// What a trace's header line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHeader {
    /// The preset name (`preset=`), e.g. "hbm3-6400".
    pub preset: String,
    /// The memory clock in MHz (`ck_mhz=`): what the record cycles count.
    pub ck_mhz: u64,
}

/// Reads a command trace: an iterator of records, each `Ok` or a located [`CmdTraceError`].
///
/// Reads one line at a time into one reused buffer; parsing a good line allocates nothing. After
/// a bad record the iterator goes on with the next line; after a read error (including invalid
/// UTF-8) it ends.
#[derive(Debug)]
pub struct CmdTraceReader<R: BufRead> {
    input: R,
    source: String,
    line: u64,
    buf: String,
    header: TraceHeader,
    ended: bool,
}

impl<R: BufRead> CmdTraceReader<R> {
    /// Reads up to and including the header line; `source` names the input in errors.
    pub fn new(input: R, source: &str) -> Result<CmdTraceReader<R>, CmdTraceError> {
        let header = TraceHeader { preset: String::new(), ck_mhz: 0 };
        let mut r =
            CmdTraceReader { input, source: source.to_string(), line: 0, buf: String::new(), header, ended: false };
        while r.read_line()? {
            let text = r.buf.trim();
            if text.starts_with(MAGIC_STEM.trim_end()) {
                r.header = parse_header(text).map_err(|(field, message)| r.error(field, message))?;
                return Ok(r);
            }
            if !text.is_empty() && !text.starts_with('#') {
                let found = clip(text);
                return Err(
                    r.error("header", format!("expected the header `{MAGIC} preset=NAME ck_mhz=N`, found `{found}`"))
                );
            }
        }
        Err(r.error("header", format!("no header: expected `{MAGIC} preset=NAME ck_mhz=N`")))
    }

    /// The header's preset name and clock.
    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// The number of the last line read (1-based).
    pub fn line(&self) -> u64 {
        self.line
    }

    fn error(&self, field: &'static str, message: String) -> CmdTraceError {
        CmdTraceError { source: self.source.clone(), line: self.line, field, message }
    }

    /// Reads the next line into the buffer; false at the end of input.
    fn read_line(&mut self) -> Result<bool, CmdTraceError> {
        self.buf.clear();
        self.line += 1;
        match self.input.read_line(&mut self.buf) {
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => Err(self.error("", "line is not valid UTF-8".into())),
            Err(e) => Err(self.error("", format!("read error: {e}"))),
        }
    }
}

impl<R: BufRead> Iterator for CmdTraceReader<R> {
    type Item = Result<CommandRecord, CmdTraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.ended {
            match self.read_line() {
                Ok(true) => {}
                Ok(false) => self.ended = true,
                Err(e) => {
                    self.ended = true;
                    return Some(Err(e));
                }
            }
            let text = self.buf.trim();
            if !self.ended && !text.is_empty() && !text.starts_with('#') {
                return Some(parse_record(text).map_err(|(field, message)| self.error(field, message)));
            }
        }
        None
    }
}

/// A token for an error message, cut to 40 characters.
fn clip(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// Parses `# trnsim hbm command trace v1 preset=NAME ck_mhz=N` (keys in any order).
fn parse_header(line: &str) -> Result<TraceHeader, (&'static str, String)> {
    let mut words = line[MAGIC_STEM.len() - 1..].split_ascii_whitespace();
    match words.next() {
        Some("v1") => {}
        Some(v) => return Err(("header", format!("unsupported version `{}` (this reader knows v1)", clip(v)))),
        None => return Err(("header", "missing version after `# trnsim hbm command trace`".into())),
    }
    let (mut preset, mut ck_mhz) = (None, None);
    for word in words {
        match word.split_once('=') {
            Some(("preset", v)) if !v.is_empty() => preset = Some(v.to_string()),
            Some(("ck_mhz", v)) => ck_mhz = Some(number(v, "ck_mhz")?),
            _ => {
                return Err(("header", format!("unknown header item `{}` (expected preset=NAME ck_mhz=N)", clip(word))))
            }
        }
    }
    let preset = preset.ok_or(("preset", "missing `preset=NAME` in the header".to_string()))?;
    let ck_mhz = ck_mhz.ok_or(("ck_mhz", "missing `ck_mhz=N` in the header".to_string()))?;
    Ok(TraceHeader { preset, ck_mhz })
}

fn number(token: &str, field: &'static str) -> Result<u64, (&'static str, String)> {
    token.parse().map_err(|_| (field, format!("expected an unsigned integer, found `{}`", clip(token))))
}

fn number32(token: &str, field: &'static str) -> Result<u32, (&'static str, String)> {
    let v = number(token, field)?;
    u32::try_from(v).map_err(|_| (field, format!("`{}` is out of range (at most {})", clip(token), u32::MAX)))
}

/// Parses one record line (already trimmed, not a comment).
fn parse_record(text: &str) -> Result<CommandRecord, (&'static str, String)> {
    let mut t = [""; 10];
    let mut count = 0;
    for token in text.split_ascii_whitespace() {
        if let Some(slot) = t.get_mut(count) {
            *slot = token;
        }
        count += 1;
    }
    if count != FIELDS.len() {
        return Err((
            "",
            format!("expected 10 fields (cycle stack channel pc CMD sid bank_group bank row column), found {count}"),
        ));
    }
    let cmd = Command::from_name(t[4]).ok_or_else(|| {
        let names: Vec<_> = Command::ALL.iter().map(|c| c.name()).collect();
        ("command", format!("unknown command `{}` (expected one of {})", clip(t[4]), names.join(", ")))
    })?;
    Ok(CommandRecord {
        cycle: number(t[0], "cycle")?,
        stack: number32(t[1], "stack")?,
        channel: number32(t[2], "channel")?,
        pc: number32(t[3], "pc")?,
        cmd,
        sid: number32(t[5], "sid")?,
        bank_group: number32(t[6], "bank_group")?,
        bank: number32(t[7], "bank")?,
        row: number32(t[8], "row")?,
        column: number32(t[9], "column")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator (the crate has no random-number dependency).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u32 {
            (self.next() % n) as u32
        }
    }

    fn random_records(n: usize) -> Vec<CommandRecord> {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut cycle = 0;
        (0..n)
            .map(|k| {
                cycle += rng.next() % 50;
                let big = k % 97 == 0;
                CommandRecord {
                    cycle: if big { u64::MAX - k as u64 } else { cycle },
                    stack: rng.below(4),
                    channel: rng.below(16),
                    pc: rng.below(2),
                    cmd: Command::ALL[rng.below(Command::COUNT as u64) as usize],
                    sid: rng.below(4),
                    bank_group: rng.below(4),
                    bank: rng.below(4),
                    row: if big { u32::MAX } else { rng.below(1 << 15) },
                    column: rng.below(64),
                }
            })
            .collect()
    }

    #[test]
    fn random_records_round_trip() {
        let recs = random_records(5000);
        let mut w = CmdTraceWriter::new(Vec::new(), "hbm3-6400", 1600);
        recs.iter().for_each(|r| w.command(r));
        assert_eq!(w.records_written(), 5000);
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        let lines: Vec<_> = text.lines().skip(1).collect();
        assert_eq!(lines, recs.iter().map(|r| r.to_line()).collect::<Vec<_>>(), "writer matches to_line");
        let reader = CmdTraceReader::new(text.as_bytes(), "t.cmd").unwrap();
        assert_eq!(reader.header(), &TraceHeader { preset: "hbm3-6400".into(), ck_mhz: 1600 });
        let back: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
        assert_eq!(back, recs);
    }

    #[test]
    fn comments_blank_lines_and_extra_whitespace_are_accepted() {
        let text = "# made by a test\n\n# trnsim hbm command trace v1 ck_mhz=2400 preset=hbm3e-9600\r\n\
                    # cycle ...\n  5\t0 1 0  ACT 2 3 1 100 0  \r\n\n# done\n";
        let r = CmdTraceReader::new(text.as_bytes(), "t.cmd").unwrap();
        assert_eq!(r.header().ck_mhz, 2400);
        let recs: Vec<_> = r.collect::<Result<_, _>>().unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].to_line(), "5 0 1 0 ACT 2 3 1 100 0");
    }

    const HEAD: &str = "# trnsim hbm command trace v1 preset=hbm3-6400 ck_mhz=1600\n";

    /// Reads `text` to its first error and returns it as displayed.
    fn first_error(text: &str) -> String {
        match CmdTraceReader::new(text.as_bytes(), "t.cmd") {
            Err(e) => e.to_string(),
            Ok(r) => r.filter_map(Result::err).map(|e| e.to_string()).next().unwrap_or_default(),
        }
    }

    #[test]
    fn each_error_names_its_line_and_field() {
        // (header line first?, rest of the input, error as displayed)
        let cases = [
            (false, "", "t.cmd:1: field `header`: no header: expected `# trnsim hbm command trace v1 preset=NAME ck_mhz=N`"),
            (false, "0 0 0 0 ACT 0 0 0 0 0\n", "t.cmd:1: field `header`: expected the header `# trnsim hbm command trace v1 preset=NAME ck_mhz=N`, found `0 0 0 0 ACT 0 0 0 0 0`"),
            (false, "# trnsim hbm command trace v2 preset=x ck_mhz=1\n", "t.cmd:1: field `header`: unsupported version `v2` (this reader knows v1)"),
            (false, "# c\n# trnsim hbm command trace v1 ck_mhz=1600\n", "t.cmd:2: field `preset`: missing `preset=NAME` in the header"),
            (false, "# trnsim hbm command trace v1 preset=a\n", "t.cmd:1: field `ck_mhz`: missing `ck_mhz=N` in the header"),
            (false, "# trnsim hbm command trace v1 preset=a ck_mhz=fast\n", "t.cmd:1: field `ck_mhz`: expected an unsigned integer, found `fast`"),
            (false, "# trnsim hbm command trace v1 preset=a ck_mhz=1 x=2\n", "t.cmd:1: field `header`: unknown header item `x=2` (expected preset=NAME ck_mhz=N)"),
            (true, "# c\n1 0 0 0 ACT 0 0 0 0\n", "t.cmd:3: expected 10 fields (cycle stack channel pc CMD sid bank_group bank row column), found 9"),
            (true, "\n1 0 0 0 ACT 0 0 0 0 0 0\n", "t.cmd:3: expected 10 fields (cycle stack channel pc CMD sid bank_group bank row column), found 11"),
            (true, "0 0 0 0 ACT 0 0 0 0 0\nx1 0 0 0 ACT 0 0 0 0 0\n", "t.cmd:3: field `cycle`: expected an unsigned integer, found `x1`"),
            (true, "1 0 -1 0 RD 0 0 0 0 0\n", "t.cmd:2: field `channel`: expected an unsigned integer, found `-1`"),
            (true, "1 0 0 0 RD 0 0 0 4294967296 0\n", "t.cmd:2: field `row`: `4294967296` is out of range (at most 4294967295)"),
            (true, "1 0 0 0 RD 0 0 0 0 1.5\n", "t.cmd:2: field `column`: expected an unsigned integer, found `1.5`"),
            (true, "1 0 0 0 rd 0 0 0 0 0\n", "t.cmd:2: field `command`: unknown command `rd` (expected one of ACT, PRE, PREA, RD, WR, RDA, WRA, REF, REFPB)"),
            (true, "99999999999999999999 0 0 0 RD 0 0 0 0 0\n", "t.cmd:2: field `cycle`: expected an unsigned integer, found `99999999999999999999`"),
        ];
        for (head, body, want) in cases {
            let text = if head { format!("{HEAD}{body}") } else { body.to_string() };
            assert_eq!(first_error(&text), want, "input {text:?}");
        }
    }

    #[test]
    fn reading_goes_on_after_a_bad_record_but_stops_after_bad_utf8() {
        let text = format!("{HEAD}1 0 0 0 NOP 0 0 0 0 0\n2 0 0 0 PRE 0 0 0 0 0\n");
        let results: Vec<_> = CmdTraceReader::new(text.as_bytes(), "t.cmd").unwrap().collect();
        assert_eq!(results.len(), 2);
        assert!(results[0].is_err() && results[1].is_ok());
        let mut bytes = HEAD.as_bytes().to_vec();
        bytes.extend_from_slice(b"1 0 0 0 PRE 0 0 0 0 \xff\n2 0 0 0 PRE 0 0 0 0 0\n");
        let results: Vec<_> = CmdTraceReader::new(&bytes[..], "t.cmd").unwrap().collect();
        let errors: Vec<_> = results.iter().map(|r| r.as_ref().map_err(|e| e.to_string())).collect();
        assert_eq!(errors, vec![Err("t.cmd:2: line is not valid UTF-8".to_string())]);
    }

    /// A writer that fails after `room` bytes.
    #[derive(Debug)]
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn write_errors_are_kept_for_finish() {
        let mut w = CmdTraceWriter::new(Full { room: 100 }, "hbm3-6400", 1600);
        random_records(10_000).iter().for_each(|r| w.command(r));
        assert!(w.records_written() < 10_000);
        assert_eq!(w.finish().unwrap_err().kind(), io::ErrorKind::StorageFull);
        let bad = CmdTraceWriter::new(Vec::new(), "hbm 3", 1600).finish().unwrap_err();
        assert_eq!(bad.to_string(), "preset name `hbm 3` must be one word without `=`");
    }
}
