//! The kernel side of tracing: declared tracks, the per-step record buffer that makes trace
//! bytes independent of tick order, and the link signals derived for waveforms.

use crate::time::{Dur, Time};
use crate::trace::{RecordKind, TraceError, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};

/// What the kernel traces on one link when a sink is attached.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LinkTracks {
    /// Counter track of messages in the link (in flight + buffered).
    pub occupancy: Option<TrackId>,
    /// VCD signals: valid, data, credits.
    pub valid: Option<TrackId>,
    pub data: Option<TrackId>,
    pub credits: Option<TrackId>,
    pub src_period: Dur,
    /// Credits the sender holds, as shown on the `credits` signal.
    pub credit_level: u32,
}

/// A signal change scheduled for later: a fixed record, or "one credit comes back on link l".
#[derive(Clone, Copy, Debug)]
enum Future {
    Rec(TraceRecord),
    CreditBack(usize),
}

/// Records captured by a partition: (step time, component, record), in emission order.
pub(crate) type Captured = Vec<(Time, u32, TraceRecord)>;

/// What a step-buffer entry does when the step is flushed.
#[derive(Clone, Copy, Debug)]
enum Action {
    /// Emit this record.
    Emit(TraceRecord),
    /// Emit this record on link `l`'s credits signal and make `value` its current level.
    Credits(TraceRecord, usize, u32),
    /// Schedule a signal change for later (registered in flush order, so deterministically).
    Later(Time, Future),
}

/// An entry waiting in the step buffer, keyed by who made it.
#[derive(Clone, Copy, Debug)]
struct Pending {
    comp: u32,
    seq: u32,
    action: Action,
}

/// Tracing state of a simulation with at least one sink attached.
pub(crate) struct TraceState {
    pub sink: Box<dyn TraceSink>,
    pub links: Vec<LinkTracks>,
    step: Vec<Pending>,
    /// Signal changes scheduled for a later time (a valid pulse's fall, a credit's return).
    future: Vec<(Time, u64, Future)>,
    future_seq: u64,
    seq: u32,
    pub error: Option<TraceError>,
    pub records: u64,
    /// Links whose occupancy changed this step (their counter is sampled once, at step end, so
    /// the value cannot depend on the order of sends and receives within the step).
    pub dirty: Vec<u32>,
    /// Partitioned runs: records go here as (step time, component, record) instead of to the
    /// sink; the parallel runner merges the partitions' captures into the one real sink.
    pub capture: Option<Captured>,
}

impl TraceState {
    pub fn new(sink: Box<dyn TraceSink>, decls: &[TrackDecl], links: Vec<LinkTracks>) -> TraceState {
        let mut st = TraceState {
            sink,
            links,
            step: Vec::with_capacity(1024),
            future: Vec::new(),
            future_seq: 0,
            seq: 0,
            error: None,
            records: 0,
            dirty: Vec::new(),
            capture: None,
        };
        for d in decls {
            if let Err(e) = st.sink.declare(d) {
                st.error.get_or_insert(e);
            }
        }
        st
    }

    /// A tracing state that captures records for a merge instead of writing them (no sink, no
    /// link tracks).
    pub fn capturing(links: usize) -> TraceState {
        let mut st = TraceState::new(Box::new(NullSink), &[], vec![LinkTracks::default(); links]);
        st.capture = Some(Vec::with_capacity(1024));
        st
    }

    /// Emits merged records from partition captures (in merged order) to the sink.
    pub fn emit_merged(&mut self, recs: impl Iterator<Item = TraceRecord>) {
        for r in recs {
            self.emit(u32::MAX, &r);
        }
    }

    /// Buffers one record made by component `comp` during the current step.
    #[inline]
    pub fn push(&mut self, comp: u32, rec: TraceRecord) {
        self.push_action(comp, Action::Emit(rec));
    }

    fn push_action(&mut self, comp: u32, action: Action) {
        self.seq = self.seq.wrapping_add(1);
        self.step.push(Pending { comp, seq: self.seq, action });
    }

    /// Schedules a signal change at a later time.
    fn push_future(&mut self, at: Time, f: Future) {
        self.future_seq += 1;
        self.future.push((at, self.future_seq, f));
    }

    /// Samples the occupancy counters of the links that changed this step; `len(l)` gives a
    /// link's message count now. Recorded after every component's records, by link id.
    pub fn sample_dirty(&mut self, now: Time, mut len: impl FnMut(usize) -> usize) {
        if self.dirty.is_empty() {
            return;
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for &l in &dirty {
            if let Some(tr) = self.links[l as usize].occupancy {
                let value = len(l as usize) as f64;
                self.push(u32::MAX, rec(now, tr, RecordKind::Counter { value }));
            }
        }
        dirty.clear();
        self.dirty = dirty;
    }

    /// Hands the step's records to the sink in structural order: first scheduled signal changes
    /// due by `now`, then this step's records sorted by (component, emission order).
    pub fn flush(&mut self, now: Time) {
        if !self.future.is_empty() {
            self.future.sort_unstable_by_key(|&(t, s, _)| (t, s));
            let due = self.future.partition_point(|&(t, _, _)| t <= now);
            for i in 0..due {
                let (at, _, f) = self.future[i];
                match f {
                    Future::Rec(rec) => self.emit(u32::MAX, &rec),
                    Future::CreditBack(l) => {
                        let lt = &mut self.links[l];
                        lt.credit_level += 1;
                        let value = u64::from(lt.credit_level);
                        if let Some(c) = lt.credits {
                            self.emit(u32::MAX, &rec(at, c, RecordKind::Signal { value }));
                        }
                    }
                }
            }
            self.future.drain(..due);
        }
        if self.step.is_empty() {
            return;
        }
        self.step.sort_unstable_by_key(|p| (p.comp, p.seq));
        let step = std::mem::take(&mut self.step);
        for p in &step {
            match p.action {
                Action::Emit(rec) => self.emit(p.comp, &rec),
                Action::Credits(rec, l, level) => {
                    self.links[l].credit_level = level;
                    self.emit(p.comp, &rec);
                }
                Action::Later(at, f) => self.push_future(at, f),
            }
        }
        self.step = step;
        self.step.clear();
        self.seq = 0;
    }

    fn emit(&mut self, comp: u32, rec: &TraceRecord) {
        if self.error.is_some() {
            return;
        }
        self.records += 1;
        if let Some(c) = self.capture.as_mut() {
            c.push((rec.time, comp, *rec));
            return;
        }
        if let Err(e) = self.sink.record(rec) {
            self.error = Some(e);
        }
    }

    /// Flushes everything still scheduled and closes the sink.
    pub fn finish(&mut self, end: Time) -> Result<(), TraceError> {
        self.flush(Time::NEVER);
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.sink.finish(end)
    }

    /// Records a send on link `l` at `now` by component `comp`.
    /// `credits` is what the sender holds after the send.
    pub fn link_sent(&mut self, comp: u32, l: usize, now: Time, credits: u32, bits: u64) {
        let lt = self.links[l];
        if lt.occupancy.is_some() {
            self.dirty.push(l as u32);
        }
        if let (Some(v), Some(d), Some(c)) = (lt.valid, lt.data, lt.credits) {
            self.push(comp, rec(now, v, RecordKind::Signal { value: 1 }));
            self.push(comp, rec(now, d, RecordKind::Signal { value: bits }));
            let r = rec(now, c, RecordKind::Signal { value: u64::from(credits) });
            self.push_action(comp, Action::Credits(r, l, credits));
            let fall = now + lt.src_period;
            let f = Future::Rec(rec(fall, v, RecordKind::Signal { value: 0 }));
            self.push_action(comp, Action::Later(fall, f));
        }
    }

    /// Records a receive on link `l` at `now`.
    pub fn link_received(&mut self, l: usize) {
        if self.links[l].occupancy.is_some() {
            self.dirty.push(l as u32);
        }
    }

    /// Records a credit on link `l` that becomes visible to the sender at `at`.
    pub fn credit_returned(&mut self, comp: u32, l: usize, at: Time) {
        if self.links[l].credits.is_some() {
            self.push_action(comp, Action::Later(at, Future::CreditBack(l)));
        }
    }
}

/// The sink of a capturing state: never written to.
struct NullSink;

impl TraceSink for NullSink {
    fn declare(&mut self, _: &TrackDecl) -> Result<(), TraceError> {
        Ok(())
    }
    fn record(&mut self, _: &TraceRecord) -> Result<(), TraceError> {
        Ok(())
    }
    fn finish(&mut self, _: Time) -> Result<(), TraceError> {
        Ok(())
    }
}

fn rec(time: Time, track: TrackId, kind: RecordKind) -> TraceRecord {
    TraceRecord { time, track, kind }
}

/// Builds the declaration list of a group-or-leaf hierarchy from dotted names: "a.b.c" becomes
/// group "a" > group "b" > leaf "c". Returns the leaf's track id.
pub(crate) fn declare_path(
    decls: &mut Vec<TrackDecl>,
    groups: &mut fxhash::FxHashMap<(Option<TrackId>, String), TrackId>,
    root: Option<TrackId>,
    path: &str,
    kind: TrackKind,
) -> TrackId {
    let mut parent = root;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            let id = TrackId(decls.len() as u32);
            decls.push(TrackDecl { id, parent, name: part.to_string(), kind });
            return id;
        }
        let key = (parent, part.to_string());
        let next = match groups.get(&key) {
            Some(&g) => g,
            None => {
                let id = TrackId(decls.len() as u32);
                decls.push(TrackDecl { id, parent, name: part.to_string(), kind: TrackKind::Group });
                groups.insert(key, id);
                id
            }
        };
        parent = Some(next);
    }
    unreachable!("split always yields at least one part")
}
