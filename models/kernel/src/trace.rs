//! The kernel's trace hook: what components and links may record, and the sink trait that
//! trace writers (crate `trnsim-traces`: Perfetto protobuf, Chrome JSON, VCD) implement.
//!
//! Design:
//! - Tracks are declared once, at assembly or when a sink is attached, with a [`TrackId`] chosen by
//!   the kernel; every record names its track. Names are interned by the writers, not here.
//! - Records are buffered per time step and handed to the sinks sorted by (component id,
//!   emission sequence) at the end of the step, so the bytes a sink writes cannot depend on the
//!   order in which components were ticked within that step.
//! - When no sink is attached, recording costs one branch: [`crate::Ctx::tracer`] returns `None`.
//!
//! What it leaves out: begin/end pairs. Every slice is recorded complete, with its start and end,
//! when its end is known (possibly after the fact); writers place overlapping slices of one track
//! on extra "lane" tracks so nesting is always valid.

use crate::time::Time;
use std::fmt;

/// Identifies a declared trace track. Dense, assigned by the kernel in declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TrackId(pub u32);

/// What a track shows.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackKind {
    /// A grouping node only: no records of its own (e.g. "links", a chip, a core).
    Group,
    /// Slices and instants (e.g. a component's activity, an engine's instructions).
    Slice,
    /// A numeric time series; `unit` is printed by viewers (e.g. "msgs", "GB/s").
    Counter {
        /// Unit name shown beside the values, e.g. "msgs" or "bytes".
        unit: &'static str,
    },
    /// A waveform signal of `width` bits, for VCD writers (Perfetto writers ignore these).
    Signal {
        /// Width in bits, 1..=64.
        width: u32,
    },
}

/// A declared track: its id, its parent group (if any), a display name and its kind.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackDecl {
    /// The id records refer to.
    pub id: TrackId,
    /// Parent group track, for nesting in viewers (and scopes in VCD).
    pub parent: Option<TrackId>,
    /// Display name, unique among its siblings, e.g. "ring.m3" or "occupancy".
    pub name: String,
    /// What the track shows.
    pub kind: TrackKind,
}

/// A flow arrow between slices (e.g. from a DMA issue to its completion). Ids are chosen by the
/// model and must be unique per flow within a run (use [`crate::Ctx::new_flow_id`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Flow {
    /// This slice has no flow.
    #[default]
    None,
    /// This slice starts or continues flow `id` (Perfetto `flow_ids`).
    Step(u64),
    /// This slice terminates flow `id` (Perfetto `terminating_flow_ids`).
    End(u64),
}

/// One named integer argument attached to a slice or instant (a Perfetto debug annotation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    /// Argument name, e.g. "bytes".
    pub key: &'static str,
    /// Its value.
    pub value: i64,
}

/// What happened, on which track.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RecordKind {
    /// A complete slice `[start, end)`; `end >= start`. The record's `time` is when it was
    /// recorded, which may be later than `end`.
    Slice {
        /// Slice name (interned by the writer).
        name: &'static str,
        /// Start time.
        start: Time,
        /// End time (exclusive).
        end: Time,
        /// Flow attached to this slice.
        flow: Flow,
        /// Optional argument.
        arg: Option<Arg>,
    },
    /// A zero-duration event at `time`.
    Instant {
        /// Event name.
        name: &'static str,
        /// Flow attached to this instant.
        flow: Flow,
        /// Optional argument.
        arg: Option<Arg>,
    },
    /// A counter sample at `time` on a [`TrackKind::Counter`] track.
    Counter {
        /// The new value.
        value: f64,
    },
    /// A signal value change at `time` on a [`TrackKind::Signal`] track.
    Signal {
        /// The new value (low `width` bits are meaningful).
        value: u64,
    },
}

/// One trace record: the simulated time it takes effect (for slices: when recorded), the track,
/// and what happened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRecord {
    /// Simulated time of the record; non-decreasing across steps for counters, instants and
    /// signals. Slice records carry their own `start`/`end`.
    pub time: Time,
    /// The track it belongs to.
    pub track: TrackId,
    /// What happened.
    pub kind: RecordKind,
}

/// An error from a trace sink, carried back to the caller of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// Which sink (usually its output path).
    pub sink: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace sink {}: {}", self.sink, self.message)
    }
}

impl std::error::Error for TraceError {}

/// A trace writer. The kernel calls `declare` for every track before any record on it, then
/// `record` in deterministic order (steps in time order; within a step sorted by component and
/// emission order), then `finish` once.
///
/// Contract: a sink may ignore record kinds it cannot show (a VCD writer ignores slices, a
/// Perfetto writer ignores signals) but must not reorder what it keeps in a way that depends on
/// anything but the records. It must not panic on any record sequence.
pub trait TraceSink {
    /// A track exists from now on.
    fn declare(&mut self, track: &TrackDecl) -> Result<(), TraceError>;
    /// One record on a declared track.
    fn record(&mut self, rec: &TraceRecord) -> Result<(), TraceError>;
    /// The run is over: flush and close. `end` is the final simulated time.
    fn finish(&mut self, end: Time) -> Result<(), TraceError>;
}
