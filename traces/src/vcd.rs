//! [`VcdWriter`]: writes the signal tracks as a Value Change Dump, for waveform viewers
//! (GTKWave, Surfer) and for comparing against RTL simulations.
//!
//! What it writes: `$timescale 1 ps`; a root `$scope module trnsim`, inside it one
//! `$scope module` per [`TrackKind::Group`] track that contains signals (nested like the groups),
//! and one `$var wire <width>` per [`TrackKind::Signal`] track, in declaration order; names are
//! made VCD identifiers (characters other than ASCII letters, digits and `_` become `_`, a
//! leading digit gets a `_` prefix, and clashes within a scope get `_2`, `_3`, ...). All
//! signals start at 0 in `$dumpvars` at `#0`. Signal records become value changes; several
//! records for one signal at one time coalesce (the last wins), and each time's changes are
//! written once, when time moves on or at finish, leaving out values that did not change.
//! Finish writes a last `#<end>` so viewers show the whole run.
//!
//! What it leaves out: slices, instants and counters (ignored), groups without signals, and
//! signal tracks declared after the first signal record (the header is written then, and VCD
//! cannot add variables later: that is an error). A signal record earlier than the previous
//! one is an error, not a panic.

use crate::tracks::{wrong_kind, Registry};
use crate::{create_file, sink_error};
use ::vcd::{IdCode, TimescaleUnit, Value};
use fxhash::FxHashSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use trnsim_kernel::{RecordKind, Time, TraceError, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};

/// One signal: its VCD id code, width, last written value and value pending at the current time.
#[derive(Debug)]
struct Signal {
    code: IdCode,
    width: u32,
    written: u64,
    pending: Option<u64>,
}

/// A [`TraceSink`] writing the signal tracks as VCD (`.vcd`). See the module docs.
pub struct VcdWriter<W: Write> {
    out: ::vcd::Writer<W>,
    sink: String,
    /// For each track: the index of its signal in `signals`, if it is a signal track.
    tracks: Registry<Option<usize>>,
    signals: Vec<Signal>,
    /// Signals with a value pending at `time`, in order of their first record there.
    pending: Vec<usize>,
    /// Time of the latest signal record.
    time: Option<u64>,
    /// Latest timestamp written (`#t`).
    written_time: Option<u64>,
    header_written: bool,
    finished: bool,
}

impl VcdWriter<BufWriter<File>> {
    /// Creates (truncates) the file at `path`; errors name the path.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let (file, name) = create_file(path.as_ref())?;
        Ok(VcdWriter::new(file, name))
    }
}

impl<W: Write> VcdWriter<W> {
    /// A writer onto `writer` (buffer it); errors carry `sink_name`.
    pub fn new(writer: W, sink_name: impl Into<String>) -> Self {
        VcdWriter {
            out: ::vcd::Writer::new(writer),
            sink: sink_name.into(),
            tracks: Registry::default(),
            signals: Vec::new(),
            pending: Vec::new(),
            time: None,
            written_time: None,
            header_written: false,
            finished: false,
        }
    }

    /// The underlying writer (call [`TraceSink::finish`] first to see everything).
    pub fn get_mut(&mut self) -> &mut W {
        self.out.writer()
    }

    fn err(&self, message: impl Into<String>) -> TraceError {
        sink_error(&self.sink, message)
    }

    fn io_err(&self, e: io::Error) -> TraceError {
        self.err(format!("write failed: {e}"))
    }

    /// Writes the header: timescale, scopes and variables, `$enddefinitions`.
    fn write_header(&mut self) -> Result<(), TraceError> {
        self.header_written = true;
        let tree = ScopeTree::new(&self.tracks);
        let version = concat!("trnsim-traces ", env!("CARGO_PKG_VERSION"));
        let result = (|| {
            self.out.version(version)?;
            self.out.timescale(1, TimescaleUnit::PS)?;
            self.out.add_module("trnsim")?;
            tree.write(&mut self.out, &self.tracks, &mut self.signals, None)?;
            self.out.upscope()?;
            self.out.enddefinitions()
        })();
        result.map_err(|e| self.io_err(e))
    }

    /// Writes the changes pending at `t`; the first call also writes `$dumpvars` at `#0`.
    fn flush_changes(&mut self, t: u64) -> Result<(), TraceError> {
        let result = self.try_flush(t);
        self.pending.clear();
        result.map_err(|e| self.io_err(e))
    }

    fn try_flush(&mut self, t: u64) -> io::Result<()> {
        if self.written_time.is_none() {
            self.out.timestamp(0)?;
            self.out.begin(::vcd::SimulationCommand::Dumpvars)?;
            for sig in &mut self.signals {
                if t == 0 {
                    sig.written = sig.pending.take().unwrap_or(0);
                }
                write_value(&mut self.out, sig)?;
            }
            self.out.end()?;
            self.written_time = Some(0);
        }
        let mut stamped = false;
        for &i in &self.pending {
            let sig = &mut self.signals[i];
            let Some(v) = sig.pending.take() else { continue };
            if v == sig.written {
                continue;
            }
            if !stamped {
                self.out.timestamp(t)?;
                self.written_time = Some(t);
                stamped = true;
            }
            sig.written = v;
            write_value(&mut self.out, sig)?;
        }
        Ok(())
    }

    fn signal(&mut self, rec: &TraceRecord, value: u64) -> Result<(), TraceError> {
        let track = self.tracks.get(rec.track).map_err(|m| self.err(m))?;
        let Some(idx) = track.data else {
            return Err(self.err(wrong_kind("signal", &track.decl)));
        };
        if !self.header_written {
            self.write_header()?;
        }
        let t = rec.time.as_ps();
        match self.time {
            Some(cur) if t < cur => {
                return Err(self.err(format!(
                    "signal record at {} goes back in time (previous record at {})",
                    rec.time,
                    Time::from_ps(cur)
                )));
            }
            Some(cur) if t > cur => self.flush_changes(cur)?,
            _ => {}
        }
        self.time = Some(t);
        let sig = &mut self.signals[idx];
        let width = sig.width;
        if sig.pending.replace(value & mask(width)).is_none() {
            self.pending.push(idx);
        }
        Ok(())
    }
}

/// The low `width` bits set.
fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// Writes the signal's `written` value: a scalar for 1-bit signals, else a vector without
/// leading zeros (VCD left-extends with 0).
fn write_value<W: Write>(out: &mut ::vcd::Writer<W>, sig: &Signal) -> io::Result<()> {
    let v = sig.written;
    if sig.width == 1 {
        return out.change_scalar(sig.code, if v & 1 == 1 { Value::V1 } else { Value::V0 });
    }
    let bits = (64 - v.leading_zeros()).max(1);
    out.change_vector(sig.code, (0..bits).rev().map(|i| if v >> i & 1 == 1 { Value::V1 } else { Value::V0 }))
}

/// Makes `name` a VCD identifier: ASCII letters, digits and `_`, not starting with a digit.
fn sanitize(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The scope tree of the header: for each scope (a group track, or the root), its groups with
/// signals and its signals, in declaration order.
struct ScopeTree {
    /// `children[0]` is the root; `children[id + 1]` belongs to track `id`.
    children: Vec<Vec<TrackId>>,
    has_signals: Vec<bool>,
}

impl ScopeTree {
    fn new(tracks: &Registry<Option<usize>>) -> ScopeTree {
        let n = tracks.iter().map(|t| t.decl.id.0 as usize + 2).max().unwrap_or(1);
        let mut tree = ScopeTree { children: vec![Vec::new(); n], has_signals: vec![false; n] };
        for track in tracks.iter() {
            let is_group = track.decl.kind == TrackKind::Group;
            if !is_group && track.data.is_none() {
                continue;
            }
            let scope = Self::scope_of(tracks, track.decl.parent);
            tree.children[Self::slot(scope)].push(track.decl.id);
            if track.data.is_some() {
                let mut s = scope;
                while let Some(g) = s {
                    tree.has_signals[Self::slot(Some(g))] = true;
                    s = Self::scope_of(tracks, tracks.get(g).ok().and_then(|t| t.decl.parent));
                }
            }
        }
        tree
    }

    fn slot(scope: Option<TrackId>) -> usize {
        scope.map_or(0, |id| id.0 as usize + 1)
    }

    /// The nearest group at or above `parent`.
    fn scope_of(tracks: &Registry<Option<usize>>, mut parent: Option<TrackId>) -> Option<TrackId> {
        while let Some(p) = parent {
            let track = tracks.get(p).ok()?;
            if track.decl.kind == TrackKind::Group {
                return Some(p);
            }
            parent = track.decl.parent;
        }
        None
    }

    /// Writes the contents of `scope` (its `$scope`/`$upscope` are the caller's).
    fn write<W: Write>(
        &self,
        out: &mut ::vcd::Writer<W>,
        tracks: &Registry<Option<usize>>,
        signals: &mut [Signal],
        scope: Option<TrackId>,
    ) -> io::Result<()> {
        let mut used = FxHashSet::default();
        for &id in &self.children[Self::slot(scope)] {
            let Ok(track) = tracks.get(id) else { continue };
            if track.data.is_none() && !self.has_signals[Self::slot(Some(id))] {
                continue;
            }
            let base = sanitize(&track.decl.name);
            let mut name = base.clone();
            for k in 2.. {
                if used.insert(name.clone()) {
                    break;
                }
                name = format!("{base}_{k}");
            }
            match track.data {
                Some(idx) => signals[idx].code = out.add_wire(signals[idx].width, &name)?,
                None => {
                    out.add_module(&name)?;
                    self.write(out, tracks, signals, Some(id))?;
                    out.upscope()?;
                }
            }
        }
        Ok(())
    }
}

impl<W: Write> TraceSink for VcdWriter<W> {
    fn declare(&mut self, track: &TrackDecl) -> Result<(), TraceError> {
        if self.finished {
            return Err(self.err("declare after finish"));
        }
        let signal = match track.kind {
            TrackKind::Signal { .. } if self.header_written => {
                return Err(self.err(format!(
                    "signal track {:?} declared after the first signal record; VCD needs every \
                     signal in its header",
                    track.name
                )));
            }
            TrackKind::Signal { width } => Some((self.signals.len(), width)),
            _ => None,
        };
        self.tracks.declare(track, signal.map(|(i, _)| i)).map_err(|m| sink_error(&self.sink, m))?;
        if let Some((_, width)) = signal {
            self.signals.push(Signal { code: IdCode::FIRST, width, written: 0, pending: None });
        }
        Ok(())
    }

    fn record(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        if self.finished {
            return Err(self.err("record after finish"));
        }
        match rec.kind {
            RecordKind::Signal { value } => self.signal(rec, value),
            _ => Ok(()),
        }
    }

    fn finish(&mut self, end: Time) -> Result<(), TraceError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        if !self.header_written {
            self.write_header()?;
        }
        self.flush_changes(self.time.unwrap_or(0))?;
        let end = end.as_ps();
        if self.written_time.is_some_and(|t| end > t) {
            self.out.timestamp(end).map_err(|e| self.io_err(e))?;
        }
        self.out.flush().map_err(|e| self.err(format!("flush failed: {e}")))
    }
}

#[cfg(test)]
mod tests;
