//! [`ChromeJsonWriter`]: streams a Chrome Trace Event Format JSON array, for small traces,
//! scripts (`jq`, Python) and viewers that read JSON (Perfetto UI, chrome://tracing).
//!
//! What it writes: one process (pid 1, named "trnsim"); one thread per slice track and per lane
//! (lanes as in [`crate::lanes`]), named by the full track path "parent/child" (lanes
//! "parent/child #k") and ordered by `thread_sort_index` in declaration order; slices as `X`
//! events; instants as `i` events (thread scope); counter samples as `C` events named by the
//! counter's path with `args {"value": v}`; the argument in `args`; category "trnsim". Times
//! are exact decimal microseconds of the simulated picoseconds (ps 1234567 → `1.234567`).
//!
//! Flows are v1 flow events written right after the slice or instant they bind to, at its
//! start: `s` for a flow's first step, `t` (`"bp":"e"`) for later steps, `f` (`"bp":"e"`) for its
//! end; chain order is record order. Not v2 (`bind_id` on the `X` event): Perfetto reads JSON
//! times as whole ns and processes events of one ns longest first, so a hop whose slice starts
//! in the same ns as the previous hop's, but lasts longer, was linked before it, breaking the
//! chain (measured at 1.4 GHz; flow events have no duration and keep file order). The v1
//! caveat: a flow binds to the innermost slice open on its thread at that ns, so a slice that
//! rounds to zero length in the same ns just before it on the same lane would take the arrow.
//!
//! One adjustment for Perfetto: its trace processor reads whole ns and rounds `ts` and `dur`
//! separately, so a slice's end can land 1 ns away from where the end time itself rounds to:
//! 1 ns past the start of the next slice on the thread (Perfetto then drops that slice as
//! overlapping), or 1 ns short. Where `round(ts) + round(dur) != round(ts + dur)`, `dur` is
//! written as the whole-ns difference of the rounded start and end instead (within 1 ns of
//! exact, and sums of back-to-back durations stay within 1 ns of exact; `ts` is always exact).
//! Perfetto then shows the same boundaries as a `.pftrace` written with
//! [`crate::TimeScale::Ns`], with one cosmetic difference: a slice that rounds to zero length at
//! the ns where the next slice of its lane starts is drawn nested under that slice (Perfetto
//! orders same-ns `X` events longest first).
//!
//! What it leaves out: group tracks (they only contribute path prefixes), signal tracks, counter
//! units, and non-finite counter samples (JSON has no NaN or infinity; such a sample is skipped).
//! The array is closed by [`TraceSink::finish`]; a file cut short still loads in Perfetto.

mod format;

use crate::lanes::Lanes;
use crate::tracks::{wrong_kind, Registry};
use crate::{create_file, sink_error};
use format::{dur_for_perfetto, push_str, push_u64, push_us};
use fxhash::FxHashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use trnsim_kernel::{Arg, Flow, RecordKind, Time, TraceError, TraceRecord, TraceSink, TrackDecl, TrackKind};

/// `thread_sort_index` slots per slice track, so a track's lanes sort right after it.
const LANE_SORT_SLOTS: u64 = 256;

/// Per-track state: the display path, and for slice tracks the lanes and their thread ids.
#[derive(Debug)]
struct JsonTrack {
    path: String,
    lanes: Lanes,
    tids: Vec<u64>,
    sort_base: u64,
}

/// A [`TraceSink`] writing Chrome Trace Event Format JSON (`.json`). See the module docs.
///
/// Steady state does not allocate: each event is formatted into one reused buffer.
#[derive(Debug)]
pub struct ChromeJsonWriter<W: Write> {
    out: W,
    sink: String,
    tracks: Registry<JsonTrack>,
    open_flows: FxHashSet<u64>,
    buf: Vec<u8>,
    next_tid: u64,
    slice_tracks: u64,
    started: bool,
    finished: bool,
}

impl ChromeJsonWriter<BufWriter<File>> {
    /// Creates (truncates) the file at `path`; errors name the path.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let (file, name) = create_file(path.as_ref())?;
        Ok(ChromeJsonWriter::new(file, name))
    }
}

impl<W: Write> ChromeJsonWriter<W> {
    /// A writer onto `writer` (buffer it); errors carry `sink_name`.
    pub fn new(writer: W, sink_name: impl Into<String>) -> Self {
        ChromeJsonWriter {
            out: writer,
            sink: sink_name.into(),
            tracks: Registry::default(),
            open_flows: FxHashSet::default(),
            buf: Vec::with_capacity(256),
            next_tid: 1,
            slice_tracks: 0,
            started: false,
            finished: false,
        }
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Gives back the underlying writer (call [`TraceSink::finish`] first).
    pub fn into_inner(self) -> W {
        self.out
    }

    fn err(&self, message: impl Into<String>) -> TraceError {
        sink_error(&self.sink, message)
    }

    /// Starts an event in the buffer: the array opening or the separator, then `{"ph":"<ph>"`.
    fn begin_event(&mut self, ph: &str) {
        self.buf.clear();
        if !self.started {
            self.started = true;
            self.buf.extend_from_slice(b"[\n");
            self.buf.extend_from_slice(br#"{"ph":"M","pid":1,"name":"process_name","args":{"name":"trnsim"}}"#);
        }
        self.buf.extend_from_slice(b",\n{\"ph\":\"");
        self.buf.extend_from_slice(ph.as_bytes());
        self.buf.extend_from_slice(b"\",\"pid\":1");
    }

    fn field(&mut self, key: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    fn field_u64(&mut self, key: &str, v: u64) {
        self.field(key);
        push_u64(&mut self.buf, v);
    }

    fn field_us(&mut self, key: &str, ps: u64) {
        self.field(key);
        push_us(&mut self.buf, ps);
    }

    /// Closes the event and writes it.
    fn emit(&mut self) -> Result<(), TraceError> {
        self.buf.push(b'}');
        self.out.write_all(&self.buf).map_err(|e| sink_error(&self.sink, format!("write failed: {e}")))
    }

    /// Names thread `tid` "`path`" and sorts it at `sort`.
    fn thread_metadata(&mut self, tid: u64, path: &str, sort: u64) -> Result<(), TraceError> {
        self.begin_event("M");
        self.field_u64("tid", tid);
        self.buf.extend_from_slice(br#","name":"thread_name","args":{"name":"#);
        push_str(&mut self.buf, path);
        self.buf.push(b'}');
        self.emit()?;
        self.begin_event("M");
        self.field_u64("tid", tid);
        self.buf.extend_from_slice(br#","name":"thread_sort_index","args":{"sort_index":"#);
        push_u64(&mut self.buf, sort);
        self.buf.push(b'}');
        self.emit()
    }

    /// Name, category and argument fields shared by slices and instants.
    fn name_arg(&mut self, name: &str, arg: Option<Arg>) {
        self.field("name");
        push_str(&mut self.buf, name);
        self.buf.extend_from_slice(br#","cat":"trnsim""#);
        if let Some(arg) = arg {
            self.buf.extend_from_slice(br#","args":{"#);
            push_str(&mut self.buf, arg.key);
            self.buf.push(b':');
            if arg.value < 0 {
                self.buf.push(b'-');
            }
            push_u64(&mut self.buf, arg.value.unsigned_abs());
            self.buf.push(b'}');
        }
    }

    /// Writes the v1 flow event binding `flow` to the slice or instant just written at `ps` on
    /// `tid`: `s` for the first step of a flow, `t` for later steps, `f` for the end.
    fn flow_event(&mut self, tid: u64, ps: u64, flow: Flow) -> Result<(), TraceError> {
        let (id, ph) = match flow {
            Flow::None => return Ok(()),
            Flow::Step(id) if self.open_flows.insert(id) => (id, "s"),
            Flow::Step(id) => (id, "t"),
            Flow::End(id) => {
                self.open_flows.remove(&id);
                (id, "f")
            }
        };
        self.begin_event(ph);
        self.field_u64("tid", tid);
        self.field_us("ts", ps);
        self.buf.extend_from_slice(br#","name":"flow","cat":"trnsim","id":"0x"#);
        self.buf.extend_from_slice(hex_digits(id).as_ref());
        self.buf.push(b'"');
        if ph != "s" {
            self.buf.extend_from_slice(br#","bp":"e""#);
        }
        self.emit()
    }

    fn slice_tid(&self, rec: &TraceRecord, what: &str) -> Result<u64, TraceError> {
        let track = self.tracks.get(rec.track).map_err(|m| self.err(m))?;
        match track.decl.kind {
            TrackKind::Slice => Ok(track.data.tids[0]),
            _ => Err(self.err(wrong_kind(what, &track.decl))),
        }
    }

    /// The thread of the lane `[start, end)` is placed on, opening the lane if needed.
    fn lane_tid(&mut self, rec: &TraceRecord, start: u64, end: u64) -> Result<u64, TraceError> {
        let track = self.tracks.get_mut(rec.track).map_err(|m| sink_error(&self.sink, m))?;
        let place = track.data.lanes.place(start, end);
        if !place.is_new {
            return Ok(track.data.tids[place.lane]);
        }
        let tid = self.next_tid;
        self.next_tid += 1;
        track.data.tids.push(tid);
        let path = crate::lanes::lane_name(&track.data.path, place.lane);
        let sort = track.data.sort_base + (place.lane as u64).min(LANE_SORT_SLOTS - 1);
        self.thread_metadata(tid, &path, sort)?;
        Ok(tid)
    }

    fn slice(
        &mut self,
        rec: &TraceRecord,
        name: &str,
        start: Time,
        end: Time,
        flow: Flow,
        arg: Option<Arg>,
    ) -> Result<(), TraceError> {
        self.slice_tid(rec, "slice")?;
        let (start, end) = (start.as_ps(), end.as_ps());
        if end < start {
            return Err(self.err(format!("slice {name:?} on track {} ends before it starts", rec.track.0)));
        }
        let tid = self.lane_tid(rec, start, end)?;
        self.begin_event("X");
        self.field_u64("tid", tid);
        self.field_us("ts", start);
        self.field_us("dur", dur_for_perfetto(start, end));
        self.name_arg(name, arg);
        self.emit()?;
        self.flow_event(tid, start, flow)
    }

    fn instant(&mut self, rec: &TraceRecord, name: &str, flow: Flow, arg: Option<Arg>) -> Result<(), TraceError> {
        let tid = self.slice_tid(rec, "instant")?;
        self.begin_event("i");
        self.buf.extend_from_slice(br#","s":"t""#);
        self.field_u64("tid", tid);
        self.field_us("ts", rec.time.as_ps());
        self.name_arg(name, arg);
        self.emit()?;
        self.flow_event(tid, rec.time.as_ps(), flow)
    }

    fn counter(&mut self, rec: &TraceRecord, value: f64) -> Result<(), TraceError> {
        let track = self.tracks.get(rec.track).map_err(|m| self.err(m))?;
        if !matches!(track.decl.kind, TrackKind::Counter { .. }) {
            return Err(self.err(wrong_kind("counter", &track.decl)));
        }
        if !value.is_finite() {
            return Ok(());
        }
        self.begin_event("C");
        self.field_us("ts", rec.time.as_ps());
        self.field("name");
        let track = self.tracks.get(rec.track).map_err(|m| sink_error(&self.sink, m))?;
        push_str(&mut self.buf, &track.data.path);
        self.buf.extend_from_slice(br#","args":{"value":"#);
        // Display of a finite f64 is a valid JSON number (no exponent, no NaN).
        let _ = write!(self.buf, "{value}");
        self.buf.push(b'}');
        self.emit()
    }
}

/// The lower-case hex digits of `v`, without leading zeros, in a fixed buffer.
fn hex_digits(v: u64) -> impl AsRef<[u8]> {
    struct Hex([u8; 16], usize);
    impl AsRef<[u8]> for Hex {
        fn as_ref(&self) -> &[u8] {
            &self.0[self.1..]
        }
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [b'0'; 16];
    let mut n = v;
    let mut i = 16;
    loop {
        i -= 1;
        digits[i] = HEX[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    Hex(digits, i)
}

impl<W: Write> TraceSink for ChromeJsonWriter<W> {
    fn declare(&mut self, track: &TrackDecl) -> Result<(), TraceError> {
        if self.finished {
            return Err(self.err("declare after finish"));
        }
        let path = match track.parent.map(|p| self.tracks.get(p)) {
            Some(Ok(parent)) => format!("{}/{}", parent.data.path, track.name),
            _ => track.name.clone(),
        };
        let is_slice = track.kind == TrackKind::Slice;
        let tid = self.next_tid;
        let sort_base = self.slice_tracks * LANE_SORT_SLOTS;
        let tids = if is_slice { vec![tid] } else { Vec::new() };
        let state = JsonTrack { path, lanes: Lanes::default(), tids, sort_base };
        let declared = self.tracks.declare(track, state).map_err(|m| sink_error(&self.sink, m))?;
        if !is_slice {
            return Ok(());
        }
        let path = declared.data.path.clone();
        self.next_tid += 1;
        self.slice_tracks += 1;
        self.thread_metadata(tid, &path, sort_base)
    }

    fn record(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        if self.finished {
            return Err(self.err("record after finish"));
        }
        match rec.kind {
            RecordKind::Slice { name, start, end, flow, arg } => self.slice(rec, name, start, end, flow, arg),
            RecordKind::Instant { name, flow, arg } => self.instant(rec, name, flow, arg),
            RecordKind::Counter { value } => self.counter(rec, value),
            RecordKind::Signal { .. } => Ok(()),
        }
    }

    fn finish(&mut self, _end: Time) -> Result<(), TraceError> {
        if !self.finished {
            self.finished = true;
            let tail: &[u8] = if self.started { b"\n]\n" } else { b"[]\n" };
            self.out.write_all(tail).map_err(|e| sink_error(&self.sink, format!("write failed: {e}")))?;
        }
        self.out.flush().map_err(|e| self.err(format!("flush failed: {e}")))
    }
}

#[cfg(test)]
mod tests;
