//! The core's semaphore unit: 64 hardware semaphores that engines and DMA engines increment
//! or set, and that sequencers wait on (`sem_wait s >= v`).
//!
//! Operations arriving in the same cycle are applied in port order (structural, never host
//! order), then every waiting engine whose condition holds is granted. Leaves out: remote
//! semaphore writes between cores (`core_barrier`).

use crate::isa::Sem;
use crate::msg::{SemGrant, SemOp};
use trnsim_kernel::{Activity, Component, Ctx, Flow, InPort, OutPort, StatsWriter, Time, TrackId};

/// Semaphores per core (spec §10 estimate: the profiler shows `S[47]`; 64 is the next power of
/// two).
pub const SEMAPHORES: usize = 64;

/// One client's ports: operations in, grants out (engines that never wait have none).
pub struct SemPort {
    /// Operations from the client.
    pub ops: InPort<SemOp>,
    /// Grants to the client.
    pub grants: Option<OutPort<SemGrant>>,
}

/// The semaphore unit component.
pub struct SemUnit {
    ports: Vec<SemPort>,
    values: [u32; SEMAPHORES],
    flows: [u64; SEMAPHORES],
    waits: Vec<Option<(usize, u32)>>,
    ops: u64,
    grants: u64,
    collective: Option<SemCollective>,
    /// Doorbell deltas not yet forwarded.
    unrung: u32,
    /// Doorbell deltas forwarded.
    doorbells: u64,
    /// A counter track per semaphore shown (the Explorer layout's `S[k] (Engine)`).
    tracks: Vec<Option<TrackId>>,
    /// The Explorer layout's `CC-core 0` row, when traced so.
    cc_track: Option<TrackId>,
    /// The first doorbell since the last completion (traced only).
    rung_at: Option<Time>,
    /// The last completion.
    done_at: Option<Time>,
}

/// The semaphore unit's ends of the collective hookup (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct SemCollective {
    /// Increments of this semaphore are forwarded.
    pub doorbell: Sem,
    /// ... on this output, as deltas.
    pub ring: OutPort<u32>,
    /// Completions (values added to `done`).
    pub done_in: InPort<u32>,
    /// The semaphore completions increment.
    pub done: Sem,
}

impl SemUnit {
    /// A unit serving `ports`, all semaphores zero.
    pub fn new(ports: Vec<SemPort>) -> SemUnit {
        let n = ports.len();
        SemUnit {
            ports,
            values: [0; SEMAPHORES],
            flows: [0; SEMAPHORES],
            waits: vec![None; n],
            ops: 0,
            grants: 0,
            collective: None,
            unrung: 0,
            doorbells: 0,
            tracks: Vec::new(),
            cc_track: None,
            rung_at: None,
            done_at: None,
        }
    }

    /// Writes each semaphore's value, as it changes, to its counter track in `tracks` (index
    /// = semaphore; None: not shown).
    pub fn with_tracks(mut self, tracks: Vec<Option<TrackId>>) -> SemUnit {
        self.tracks = tracks;
        self
    }

    /// Semaphore `s` changed: its counter, when traced.
    fn show(&self, cx: &mut Ctx<'_>, s: usize) {
        if let Some(Some(track)) = self.tracks.get(s) {
            if let Some(mut tr) = cx.tracer() {
                tr.counter(*track, f64::from(self.values[s]));
            }
        }
    }

    /// The unit hooked to its chip's collective engine (see the module doc); doorbell deltas
    /// that find the link full are summed and sent together when it frees. With `cc_track`
    /// (the Explorer layout's `CC-core 0`), each completion ends a `collective` slice there
    /// that starts at the first doorbell rung since the previous completion (at the previous
    /// completion when none was: a collective that needs no doorbell follows the one before;
    /// at time 0 for the first). The collective engine's own steps are on the fabric's tracks.
    pub fn with_collective(mut self, c: SemCollective, cc_track: Option<TrackId>) -> SemUnit {
        self.collective = Some(c);
        self.cc_track = cc_track;
        self
    }

    /// A collective completed: its slice on the `CC-core` row.
    fn show_done(&mut self, cx: &mut Ctx<'_>) {
        let Some(track) = self.cc_track else { return };
        let end = cx.now();
        let start = self.rung_at.take().or(self.done_at).unwrap_or(Time::ZERO);
        self.done_at = Some(end);
        if let Some(mut tr) = cx.tracer() {
            tr.slice(track, "collective", start, end, Flow::None, None);
        }
    }

    /// Current value of semaphore `i`.
    pub fn value(&self, i: usize) -> u32 {
        self.values[i]
    }
}

impl Component for SemUnit {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        if let Some(c) = &self.collective {
            let c = *c;
            while let Some(v) = cx.recv(c.done_in) {
                let s = &mut self.values[c.done.0 as usize];
                *s = s.wrapping_add(v);
                self.flows[c.done.0 as usize] = 0;
                let done = c.done.0 as usize;
                self.show(cx, done);
                self.show_done(cx);
            }
        }
        for (k, p) in self.ports.iter().enumerate() {
            while let Some(op) = cx.recv(p.ops) {
                self.ops += 1;
                match op {
                    SemOp::Inc { sem, delta, flow } => {
                        let v = &mut self.values[sem.0 as usize];
                        *v = v.wrapping_add(delta);
                        self.flows[sem.0 as usize] = flow;
                        if self.collective.is_some_and(|c| c.doorbell == sem) {
                            self.unrung = self.unrung.wrapping_add(delta);
                        }
                        self.show(cx, sem.0 as usize);
                    }
                    SemOp::Set { sem, value, flow } => {
                        self.values[sem.0 as usize] = value;
                        self.flows[sem.0 as usize] = flow;
                        self.show(cx, sem.0 as usize);
                    }
                    SemOp::Wait { sem, value } => self.waits[k] = Some((sem.0 as usize, value)),
                }
            }
        }
        for (k, p) in self.ports.iter().enumerate() {
            let Some((s, v)) = self.waits[k] else { continue };
            if self.values[s] < v {
                continue;
            }
            let Some(out) = p.grants else { continue };
            let grant = SemGrant { sem: crate::isa::Sem(s as u8), flow: self.flows[s] };
            if cx.send(out, grant).is_ok() {
                self.waits[k] = None;
                self.grants += 1;
            }
        }
        if let (Some(c), true) = (&self.collective, self.unrung > 0) {
            if cx.send(c.ring, self.unrung).is_ok() {
                self.doorbells += u64::from(self.unrung);
                if self.cc_track.is_some() && self.rung_at.is_none() {
                    self.rung_at = Some(cx.now());
                }
                self.unrung = 0;
            }
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("ops", self.ops);
        out.count("grants", self.grants);
        if self.collective.is_some() {
            out.count("doorbells", self.doorbells);
        }
    }

    fn has_outstanding_work(&self) -> bool {
        self.unrung > 0
    }
}
