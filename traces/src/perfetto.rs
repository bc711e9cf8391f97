//! [`PerfettoWriter`]: streams a Perfetto protobuf trace (TrackEvent) in simulated time, for the
//! Perfetto UI (<https://ui.perfetto.dev>) and its trace processor.
//!
//! What it writes, one `TracePacket` at a time on one trusted packet sequence (id 1):
//! - a `TrackDescriptor` per declared track: [`TrackKind::Group`] tracks order their children
//!   explicitly (`child_ordering = EXPLICIT`, `sibling_order_rank` = declaration order),
//!   [`TrackKind::Slice`] tracks, and [`TrackKind::Counter`] tracks with a `CounterDescriptor`
//!   whose `unit_name` is the unit; parents via `parent_uuid`;
//! - each slice as a `TYPE_SLICE_BEGIN` and a `TYPE_SLICE_END` on its track, or on a lane track
//!   `"<name> #k"` (a sibling declared lazily, see [`crate::lanes`]) when it overlaps slices already
//!   placed, so nesting is always valid; flows as `flow_ids` / `terminating_flow_ids` (fixed64);
//!   the argument as an `int_value` debug annotation;
//! - instants as `TYPE_INSTANT`, counter samples as `TYPE_COUNTER` with `double_counter_value`;
//! - event names (category "trnsim") and annotation names interned, each sent in the
//!   `InternedData` of the packet that first uses it. The first packet carries
//!   `SEQ_INCREMENTAL_STATE_CLEARED`, every later one `SEQ_NEEDS_INCREMENTAL_STATE`.
//!
//! What it leaves out: [`TrackKind::Signal`] tracks and their records (VCD material), process and
//! thread descriptors (all tracks are global), delta-encoded timestamps, and compression.
//!
//! # Timestamps
//!
//! Perfetto timestamps are integer nanoseconds; simulated time is picoseconds, and a cycle of a
//! 2.4 GHz clock is 416 or 417 ps. No clock declaration helps: a `ClockSnapshot` clock may scale
//! by an integer number of nanoseconds per unit, never by a fraction. So [`TimeScale`] offers:
//! - [`TimeScale::Ns`] (default): ps rounded to the nearest ns (half up). Labels and every
//!   duration measured in the UI are true; each boundary is off by at most 0.5 ns, slices shorter
//!   than a nanosecond may show as zero-length, and events less than a nanosecond apart may share
//!   a timestamp. Rounding is monotone, so order and nesting survive: lanes are chosen in exact
//!   ps, and the slices of one lane stay disjoint after rounding. This is the scale at which the
//!   trace processor also reads this crate's Chrome JSON, so both formats show the same times.
//! - [`TimeScale::PsAsNs`]: picoseconds written as if they were nanoseconds. Exact, so every
//!   non-empty slice of one cycle has a non-zero width and sub-ns order is visible, but the UI
//!   labels are 1000x too large ("416 ns" means 416 ps, "1.2 ms" means 1.2 us). For cycle-level
//!   debugging of >1 GHz logic; runs of up to 106 days fit Perfetto's int64.
//!
//! The default is `Ns` because architects read absolute times and measure durations off the UI;
//! a silently mislabelled axis is worse than sub-ns rounding in a trace meant for them.

mod fields;
mod intern;
#[cfg(test)]
mod tests;

use crate::lanes::Lanes;
use crate::protobuf::ProtoBuf;
use crate::tracks::{wrong_kind, Registry};
use crate::{create_file, sink_error};
use fields::*;
use intern::Interner;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use trnsim_kernel::{Arg, Flow, RecordKind, Time, TraceError, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};

/// The trusted packet sequence id of every packet.
const SEQUENCE_ID: u64 = 1;
/// The iid of the single event category, "trnsim".
const CATEGORY_IID: u64 = 1;
/// The category name.
const CATEGORY: &str = "trnsim";
/// Sibling-rank slots per track: lane k of a track of rank r has rank `r * LANE_RANKS + k`, so
/// lanes sort right after their track.
const LANE_RANKS: i64 = 256;

/// How simulated picoseconds become Perfetto's nanosecond timestamps (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeScale {
    /// Nanoseconds, rounded half up from picoseconds: true units, sub-ns detail lost.
    #[default]
    Ns,
    /// Picoseconds written as nanoseconds: exact, but the UI's labels read 1000x too large.
    PsAsNs,
}

impl TimeScale {
    /// The Perfetto timestamp of simulated time `t`.
    pub fn timestamp(self, t: Time) -> u64 {
        let ps = t.as_ps();
        match self {
            TimeScale::Ns => ps / 1000 + u64::from(ps % 1000 >= 500),
            TimeScale::PsAsNs => ps,
        }
    }
}

/// Counts of what a [`PerfettoWriter`] has written so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerfettoStats {
    /// TrackEvent packets (a slice counts two: BEGIN and END).
    pub events: u64,
    /// Bytes written, descriptors and interned data included.
    pub bytes: u64,
    /// Lane tracks opened for overlapping slices.
    pub lanes: u64,
}

/// Per-track state: the lanes of a slice track, and whether the track is shown at all.
#[derive(Debug)]
struct TrackState {
    lanes: Lanes,
    shown: bool,
}

/// One TrackEvent to encode.
struct Event {
    ty: u64,
    ts: u64,
    uuid: u64,
    name: Option<&'static str>,
    flow: Flow,
    arg: Option<Arg>,
    counter: Option<f64>,
}

/// A [`TraceSink`] writing a Perfetto protobuf trace (`.pftrace`). See the module docs for the
/// format, and [`TimeScale`] for how time is written.
///
/// Steady state does not allocate: packets are encoded in one reused buffer, names are interned
/// in hash maps keyed by the `&'static str` content.
#[derive(Debug)]
pub struct PerfettoWriter<W: Write> {
    out: W,
    sink: String,
    scale: TimeScale,
    tracks: Registry<TrackState>,
    names: Interner,
    arg_names: Interner,
    category_sent: bool,
    first_packet: bool,
    finished: bool,
    pb: ProtoBuf,
    stats: PerfettoStats,
}

impl PerfettoWriter<BufWriter<File>> {
    /// Creates (truncates) the file at `path`; errors name the path.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let (file, name) = create_file(path.as_ref())?;
        Ok(PerfettoWriter::new(file, name))
    }
}

impl<W: Write> PerfettoWriter<W> {
    /// A writer onto `writer` (buffer it: packets are written one `write_all` each); errors
    /// carry `sink_name`. Timestamps use [`TimeScale::Ns`] unless changed.
    pub fn new(writer: W, sink_name: impl Into<String>) -> Self {
        PerfettoWriter {
            out: writer,
            sink: sink_name.into(),
            scale: TimeScale::default(),
            tracks: Registry::default(),
            names: Interner::default(),
            arg_names: Interner::default(),
            category_sent: false,
            first_packet: true,
            finished: false,
            pb: ProtoBuf::default(),
            stats: PerfettoStats::default(),
        }
    }

    /// Sets how simulated time is written (see [`TimeScale`]); call before the first record.
    pub fn with_time_scale(mut self, scale: TimeScale) -> Self {
        self.scale = scale;
        self
    }

    /// What has been written so far.
    pub fn stats(&self) -> PerfettoStats {
        self.stats
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Gives back the underlying writer (call [`TraceSink::finish`] first to flush it).
    pub fn into_inner(self) -> W {
        self.out
    }

    fn err(&self, message: impl Into<String>) -> TraceError {
        sink_error(&self.sink, message)
    }

    fn check_open(&self) -> Result<(), TraceError> {
        if self.finished {
            return Err(self.err("declare or record after finish"));
        }
        Ok(())
    }

    /// The uuid of the nearest shown ancestor of a track with parent `parent`.
    fn parent_uuid(&self, mut parent: Option<TrackId>) -> Option<u64> {
        while let Some(p) = parent {
            let track = self.tracks.get(p).ok()?;
            if track.data.shown {
                return lane_uuid(p, 0);
            }
            parent = track.decl.parent;
        }
        None
    }

    /// Writes the fields every packet carries: the sequence id and the sequence flags.
    fn sequence_fields(&mut self) {
        let flags = if self.first_packet { SEQ_INCREMENTAL_STATE_CLEARED } else { SEQ_NEEDS_INCREMENTAL_STATE };
        self.first_packet = false;
        self.pb.varint(PACKET_SEQUENCE_ID, SEQUENCE_ID);
        self.pb.varint(PACKET_SEQUENCE_FLAGS, flags);
    }

    /// Writes the encoded packet to the output.
    fn emit(&mut self) -> Result<(), TraceError> {
        let bytes = self.pb.bytes();
        if let Err(e) = self.out.write_all(bytes) {
            return Err(sink_error(&self.sink, format!("write failed: {e}")));
        }
        self.stats.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Writes a TrackDescriptor packet.
    fn descriptor(
        &mut self,
        uuid: u64,
        name: &str,
        parent: Option<u64>,
        rank: i64,
        kind: &TrackKind,
    ) -> Result<(), TraceError> {
        self.pb.clear();
        let packet = self.pb.begin(TRACE_PACKET);
        self.sequence_fields();
        let pb = &mut self.pb;
        let desc = pb.begin(PACKET_TRACK_DESCRIPTOR);
        pb.varint(TRACK_UUID, uuid);
        pb.bytes_field(TRACK_NAME, name.as_bytes());
        if let Some(parent) = parent {
            pb.varint(TRACK_PARENT_UUID, parent);
        }
        match kind {
            TrackKind::Group => pb.varint(TRACK_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT),
            TrackKind::Counter { unit } if !unit.is_empty() => {
                let counter = pb.begin(TRACK_COUNTER);
                pb.bytes_field(COUNTER_UNIT_NAME, unit.as_bytes());
                pb.end(counter);
            }
            TrackKind::Counter { .. } => {
                let counter = pb.begin(TRACK_COUNTER);
                pb.end(counter);
            }
            TrackKind::Slice | TrackKind::Signal { .. } => {}
        }
        pb.varint(TRACK_SIBLING_ORDER_RANK, rank.min(i64::from(i32::MAX)) as u64);
        pb.end(desc);
        self.pb.end(packet);
        self.emit()
    }

    /// Declares lane `lane` (>= 1) of slice track `id`.
    fn declare_lane(&mut self, id: TrackId, lane: usize) -> Result<u64, TraceError> {
        let uuid = lane_uuid(id, lane).ok_or_else(|| self.err(format!("track {} needs more than 2^24 lanes", id.0)))?;
        let track = self.tracks.get(id).map_err(|m| self.err(m))?;
        let name = crate::lanes::lane_name(&track.decl.name, lane);
        let rank = i64::from(track.rank) * LANE_RANKS + (lane as i64).min(LANE_RANKS - 1);
        let parent = self.parent_uuid(track.decl.parent);
        self.descriptor(uuid, &name, parent, rank, &TrackKind::Slice)?;
        self.stats.lanes += 1;
        Ok(uuid)
    }

    /// Encodes and writes one TrackEvent packet, with the interned data it introduces.
    fn event(&mut self, ev: Event) -> Result<(), TraceError> {
        let name = ev.name.map(|n| (n, self.names.intern(n)));
        let arg = ev.arg.map(|a| (a.key, self.arg_names.intern(a.key)));
        let new_category = name.is_some() && !self.category_sent;
        self.category_sent |= new_category;
        self.pb.clear();
        let packet = self.pb.begin(TRACE_PACKET);
        self.pb.varint(PACKET_TIMESTAMP, ev.ts);
        self.sequence_fields();
        track_event(&mut self.pb, &ev, name.map(|(_, (iid, _))| iid), arg.map(|(_, (iid, _))| iid));
        let new = |entry: Option<(&'static str, (u64, bool))>| {
            entry.filter(|(_, (_, new))| *new).map(|(n, (iid, _))| (iid, n))
        };
        let category = new_category.then_some((CATEGORY_IID, CATEGORY));
        interned_data(&mut self.pb, category, new(name), new(arg));
        self.pb.end(packet);
        self.stats.events += 1;
        self.emit()
    }

    fn slice_track(&self, rec: &TraceRecord, what: &str) -> Result<(), TraceError> {
        let track = self.tracks.get(rec.track).map_err(|m| self.err(m))?;
        match track.decl.kind {
            TrackKind::Slice => Ok(()),
            _ => Err(self.err(wrong_kind(what, &track.decl))),
        }
    }

    fn slice(
        &mut self,
        rec: &TraceRecord,
        name: &'static str,
        start: Time,
        end: Time,
        flow: Flow,
        arg: Option<Arg>,
    ) -> Result<(), TraceError> {
        self.slice_track(rec, "slice")?;
        if end < start {
            return Err(
                self.err(format!("slice {name:?} on track {} ends ({end}) before it starts ({start})", rec.track.0))
            );
        }
        let track = self.tracks.get_mut(rec.track).map_err(|m| sink_error(&self.sink, m))?;
        let place = track.data.lanes.place(start.as_ps(), end.as_ps());
        let uuid = match (place.is_new, lane_uuid(rec.track, place.lane)) {
            (true, _) => self.declare_lane(rec.track, place.lane)?,
            (false, Some(uuid)) => uuid,
            (false, None) => return Err(self.err("lane uuid out of range")),
        };
        let (ts, te) = (self.scale.timestamp(start), self.scale.timestamp(end));
        self.event(Event { ty: TYPE_SLICE_BEGIN, ts, uuid, name: Some(name), flow, arg, counter: None })?;
        self.event(Event { ty: TYPE_SLICE_END, ts: te, uuid, name: None, flow: Flow::None, arg: None, counter: None })
    }
}

/// Encodes the TrackEvent of `ev`, with the iids of its name and argument name.
fn track_event(pb: &mut ProtoBuf, ev: &Event, name_iid: Option<u64>, arg_iid: Option<u64>) {
    let te = pb.begin(PACKET_TRACK_EVENT);
    pb.varint(EVENT_TYPE, ev.ty);
    pb.varint(EVENT_TRACK_UUID, ev.uuid);
    if let Some(iid) = name_iid {
        pb.varint(EVENT_CATEGORY_IIDS, CATEGORY_IID);
        pb.varint(EVENT_NAME_IID, iid);
    }
    if let (Some(arg), Some(iid)) = (ev.arg, arg_iid) {
        let da = pb.begin(EVENT_DEBUG_ANNOTATIONS);
        pb.varint(ANNOTATION_NAME_IID, iid);
        pb.varint(ANNOTATION_INT_VALUE, arg.value as u64);
        pb.end(da);
    }
    match ev.flow {
        Flow::None => {}
        Flow::Step(id) => pb.fixed64(EVENT_FLOW_IDS, id),
        Flow::End(id) => pb.fixed64(EVENT_TERMINATING_FLOW_IDS, id),
    }
    if let Some(v) = ev.counter {
        pb.double(EVENT_DOUBLE_COUNTER_VALUE, v);
    }
    pb.end(te);
}

/// Encodes the InternedData of the strings first used by this packet, if any, as (iid, name).
fn interned_data(
    pb: &mut ProtoBuf,
    category: Option<(u64, &str)>,
    name: Option<(u64, &str)>,
    arg: Option<(u64, &str)>,
) {
    if category.is_none() && name.is_none() && arg.is_none() {
        return;
    }
    let interned = pb.begin(PACKET_INTERNED_DATA);
    for (field, entry) in
        [(INTERNED_EVENT_CATEGORIES, category), (INTERNED_EVENT_NAMES, name), (INTERNED_DEBUG_ANNOTATION_NAMES, arg)]
    {
        if let Some((iid, name)) = entry {
            let e = pb.begin(field);
            pb.varint(INTERNED_IID, iid);
            pb.bytes_field(INTERNED_NAME, name.as_bytes());
            pb.end(e);
        }
    }
    pb.end(interned);
}

/// The deterministic uuid of lane `lane` of track `id` (lane 0 is the track itself):
/// `(id + 1) << 8 | lane` for the first 256 lanes, so the first 8191 tracks have 3-byte varint
/// uuids; `1 << 62 | (id + 1) << 24 | lane` beyond (a disjoint range); `None` past 2^24 lanes.
/// No offset is added: the writer owns every track of the trace.
pub(crate) fn lane_uuid(id: TrackId, lane: usize) -> Option<u64> {
    let base = u64::from(id.0) + 1;
    match lane as u64 {
        k @ 0..=255 => Some(base << 8 | k),
        k @ 256..=0xff_ffff => Some(1 << 62 | base << 24 | k),
        _ => None,
    }
}

impl<W: Write> TraceSink for PerfettoWriter<W> {
    fn declare(&mut self, track: &TrackDecl) -> Result<(), TraceError> {
        self.check_open()?;
        let shown = !matches!(track.kind, TrackKind::Signal { .. });
        let state = TrackState { lanes: Lanes::default(), shown };
        let rank = self.tracks.declare(track, state).map_err(|m| sink_error(&self.sink, m))?.rank;
        if !shown {
            return Ok(());
        }
        let uuid = lane_uuid(track.id, 0).unwrap_or_default();
        let parent = self.parent_uuid(track.parent);
        self.descriptor(uuid, &track.name, parent, i64::from(rank) * LANE_RANKS, &track.kind)
    }

    fn record(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        self.check_open()?;
        match rec.kind {
            RecordKind::Slice { name, start, end, flow, arg } => self.slice(rec, name, start, end, flow, arg),
            RecordKind::Instant { name, flow, arg } => {
                self.slice_track(rec, "instant")?;
                let (ts, uuid) = (self.scale.timestamp(rec.time), lane_uuid(rec.track, 0).unwrap_or_default());
                self.event(Event { ty: TYPE_INSTANT, ts, uuid, name: Some(name), flow, arg, counter: None })
            }
            RecordKind::Counter { value } => {
                let track = self.tracks.get(rec.track).map_err(|m| self.err(m))?;
                if !matches!(track.decl.kind, TrackKind::Counter { .. }) {
                    return Err(self.err(wrong_kind("counter", &track.decl)));
                }
                let (ts, uuid) = (self.scale.timestamp(rec.time), lane_uuid(rec.track, 0).unwrap_or_default());
                self.event(Event {
                    ty: TYPE_COUNTER,
                    ts,
                    uuid,
                    name: None,
                    flow: Flow::None,
                    arg: None,
                    counter: Some(value),
                })
            }
            RecordKind::Signal { .. } => Ok(()),
        }
    }

    fn finish(&mut self, _end: Time) -> Result<(), TraceError> {
        self.finished = true;
        self.out.flush().map_err(|e| self.err(format!("flush failed: {e}")))
    }
}
