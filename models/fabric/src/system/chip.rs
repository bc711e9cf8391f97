//! One chip as a kernel component: its collective engine and its NIC (output queues, one per
//! physical link; on a torus it also forwards packets passing through).
//!
//! ```text
//!            rx.<node>.<k> ──► drain: own packet? ──yes──► inbound message table ─► step done?
//!                                   │ no (torus transit)                               │
//!   engine: step timer ──issue──► enqueue ◄──┘                          timer = now + overhead
//!                                   │
//!                     per-link FIFOs ──► tx.<node>.<k>  (sent when the link's bandwidth allows)
//! ```
//!
//! The engine follows [`crate::collective::runner`]'s rules: step 0 issues one step overhead
//! after time 0; a step completes when its sends are issued and its receives have arrived; the
//! next step issues one overhead later. Arrivals are handled before the step timer on the same
//! edge, as the old model handles network events before timers at equal times. All times are
//! the fabric clock's edges (see [`super::clock`]). Leaves out: DMA and HBM costs (folded into
//! the step overhead, as before), the reduction arithmetic.
//!
//! **Phases and hooks** ([`super::build_jobs`]): a chip's steps may be grouped into phases, one
//! per collective of a sequence. Phase `p` starts (its first step issues one overhead later)
//! once the previous phase is complete *and* each of its doorbell inputs (one per core) has
//! been rung at least `need[p]` times in total: that is how a NeuronCore triggers a collective (spec §7:
//! the compute engines only trigger; the trigger is a write). When a phase completes, the
//! engine sends one completion (value 1) on each of its done outputs (spec §7: completion is
//! signalled by semaphores). A plain collective is one phase that needs no doorbell.

use super::packet::Packet;
use super::ports::Ports;
use trnsim_kernel::{Activity, Arg, Component, Ctx, Flow, InPort, OutPort, StatsWriter, Time};

/// One send of the engine, with the ids its packets carry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Send {
    pub dst: u32,
    pub bytes: u64,
    pub msg: u32,
    pub rx_slot: u32,
    /// The receiver's step index this message counts for.
    pub rx_tag: u32,
}

/// A chip engine's hookups to its chip's cores (see the module doc): doorbells in (each
/// message adds its value to the doorbell count) and completions out (one message of value 1
/// per finished phase on each).
#[derive(Clone, Debug, Default)]
pub struct ChipHooks {
    /// Doorbell inputs, drained in this order.
    pub doorbells: Vec<InPort<u32>>,
    /// Completion outputs.
    pub done: Vec<OutPort<u32>>,
}

/// One phase of a chip's program: its steps and the doorbell count (cumulative since time 0)
/// it waits for before its first step.
pub(crate) struct PhaseSteps {
    pub steps: Vec<(Vec<Send>, u32)>,
    pub need: u64,
}

/// One inbound message: packets still to come, bytes received, completion time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Inbound {
    pub left: u32,
    pub got: u64,
    pub done_ps: Option<u64>,
}

/// The chip component (see the module doc).
pub struct ChipNode {
    chip: u32,
    packet_bytes: u32,
    overhead_ps: u64,
    pub(crate) ports: Ports,
    /// `sends[step_off[s]..step_off[s + 1]]`: step `s`'s sends.
    step_off: Vec<u32>,
    sends: Vec<Send>,
    /// Receives step `s` waits for.
    recvs: Vec<u32>,
    /// Messages received, per step tag.
    received: Vec<u32>,
    /// When each step's sends were issued, in picoseconds.
    pub(crate) issued_ps: Vec<Option<u64>>,
    pub(crate) inbound: Vec<Inbound>,
    cur: usize,
    issued: bool,
    /// `phase_first[p]`: the first step of phase `p`; last entry = step count.
    phase_first: Vec<u32>,
    /// Cumulative doorbells phase `p` waits for.
    phase_need: Vec<u64>,
    /// When each phase completed, in picoseconds.
    pub(crate) phase_done_ps: Vec<Option<u64>>,
    phase: usize,
    /// The current phase waits for its doorbells (the previous one is complete).
    waiting: bool,
    /// Doorbell count received on each doorbell input.
    rung: Vec<u64>,
    /// When the last doorbell arrived, in picoseconds.
    last_doorbell_ps: Option<u64>,
    /// When each phase had its doorbells (whether or not the previous phase was complete).
    phase_ready_ps: Vec<Option<u64>>,
    /// First phase not yet ready.
    next_ready: usize,
    hooks: ChipHooks,
    /// Completions not yet sent, per done output.
    done_due: Vec<u32>,
    /// When the current step's sends issue, in picoseconds.
    timer: Option<u64>,
    pub(crate) done_ps: Option<u64>,
    /// Packets that passed through this chip (torus forwarding).
    forwarded: u64,
    /// Ticks taken (how often the kernel woke this node).
    ticks: u64,
}

impl ChipNode {
    /// Chip `chip` running the steps `(sends, recvs)` with `overhead_ps` before each step's
    /// sends, expecting the inbound messages whose packet counts are `inbound_packets`.
    pub(crate) fn new(
        chip: u32,
        packet_bytes: u32,
        overhead_ps: u64,
        ports: Ports,
        phases: Vec<PhaseSteps>,
        inbound_packets: Vec<u32>,
        hooks: ChipHooks,
    ) -> ChipNode {
        let mut step_off = vec![0];
        let mut sends = Vec::new();
        let mut recvs = Vec::new();
        let (mut phase_first, mut phase_need) = (Vec::new(), Vec::new());
        for ph in phases.into_iter().filter(|p| !p.steps.is_empty()) {
            phase_first.push(recvs.len() as u32);
            phase_need.push(ph.need);
            for (s, r) in ph.steps {
                sends.extend(s);
                step_off.push(sends.len() as u32);
                recvs.push(r);
            }
        }
        let n = recvs.len();
        phase_first.push(n as u32);
        let phases = phase_need.len();
        let first_need = phase_need.first().copied().unwrap_or(0);
        let done_due = vec![0; hooks.done.len()];
        let inbound = inbound_packets.into_iter().map(|left| Inbound { left, got: 0, done_ps: None }).collect();
        let mut node = ChipNode {
            chip,
            packet_bytes,
            overhead_ps,
            ports,
            step_off,
            sends,
            recvs,
            received: vec![0; n],
            issued_ps: vec![None; n],
            inbound,
            cur: 0,
            issued: false,
            phase_first,
            phase_need,
            phase_done_ps: vec![None; phases],
            phase: 0,
            waiting: n > 0 && first_need > 0,
            rung: vec![0; hooks.doorbells.len()],
            last_doorbell_ps: None,
            phase_ready_ps: vec![None; phases],
            next_ready: 0,
            hooks,
            done_due,
            timer: (n > 0 && first_need == 0).then_some(overhead_ps),
            done_ps: (n == 0).then_some(0),
            forwarded: 0,
            ticks: 0,
        };
        node.mark_ready(0);
        node
    }

    /// When this chip finished its last step, in picoseconds.
    pub fn done_ps(&self) -> Option<u64> {
        self.done_ps
    }

    /// When each of this chip's phases (those with steps) completed, in picoseconds.
    pub fn phase_done_ps(&self) -> &[Option<u64>] {
        &self.phase_done_ps
    }

    /// When each step's sends were issued, in picoseconds.
    pub fn issued_ps(&self) -> &[Option<u64>] {
        &self.issued_ps
    }

    /// Doorbells received so far, over all inputs.
    pub fn doorbells(&self) -> u64 {
        self.rung.iter().sum()
    }

    /// When the last doorbell arrived, in picoseconds (None: none yet).
    pub fn last_doorbell_ps(&self) -> Option<u64> {
        self.last_doorbell_ps
    }

    /// When each phase had rung enough doorbells to start (it starts one overhead after both
    /// this and the previous phase's completion), in picoseconds.
    pub fn phase_ready_ps(&self) -> &[Option<u64>] {
        &self.phase_ready_ps
    }

    /// Marks the phases whose doorbells have all rung by `t` as ready.
    fn mark_ready(&mut self, t: u64) {
        while self.next_ready < self.phase_need.len() && self.rung_enough(self.phase_need[self.next_ready]) {
            self.phase_ready_ps[self.next_ready] = Some(t);
            self.next_ready += 1;
        }
    }

    /// Whether every doorbell input has rung at least `need` times.
    fn rung_enough(&self, need: u64) -> bool {
        self.rung.iter().all(|&r| r >= need)
    }

    fn deliver(&mut self, p: Packet, t: u64) {
        let m = &mut self.inbound[p.rx_slot as usize];
        m.left -= 1;
        m.got += u64::from(p.bytes);
        if m.left > 0 {
            return;
        }
        m.done_ps = Some(t);
        let tag = p.tag as usize;
        self.received[tag] += 1;
        if tag == self.cur && self.issued {
            self.try_complete(t);
        }
    }

    fn issue(&mut self, t: u64, cycle: u64) {
        let step = self.cur;
        self.issued = true;
        self.issued_ps[step] = Some(t);
        let pkt = u64::from(self.packet_bytes);
        for i in self.step_off[step] as usize..self.step_off[step + 1] as usize {
            let s = self.sends[i];
            let n = s.bytes.div_ceil(pkt).max(1);
            for k in 0..n {
                let bytes = (s.bytes - k * pkt).min(pkt) as u32;
                let p = Packet { msg: s.msg, rx_slot: s.rx_slot, dst: s.dst, tag: s.rx_tag, bytes };
                self.ports.enqueue(cycle, p);
            }
        }
        self.try_complete(t);
    }

    fn try_complete(&mut self, t: u64) {
        if self.done_ps.is_some() || self.received[self.cur] < self.recvs[self.cur] {
            return;
        }
        let next = self.cur + 1;
        self.issued = false;
        if next as u32 == self.phase_first[self.phase + 1] {
            self.phase_done_ps[self.phase] = Some(t);
            self.done_due.iter_mut().for_each(|d| *d += 1);
            self.phase += 1;
            if next == self.recvs.len() {
                self.done_ps = Some(t);
                return;
            }
            self.cur = next;
            if self.rung_enough(self.phase_need[self.phase]) {
                self.timer = Some(t + self.overhead_ps);
            } else {
                self.waiting = true;
            }
            return;
        }
        self.cur = next;
        self.timer = Some(t + self.overhead_ps);
    }

    /// Takes doorbells; starts the waiting phase's timer once enough have rung.
    fn ring(&mut self, cx: &mut Ctx<'_>, t: u64) {
        for i in 0..self.hooks.doorbells.len() {
            while let Some(v) = cx.recv(self.hooks.doorbells[i]) {
                self.rung[i] += u64::from(v);
                self.last_doorbell_ps = Some(t);
            }
        }
        self.mark_ready(t);
        if self.waiting && self.rung_enough(self.phase_need[self.phase]) {
            self.waiting = false;
            self.timer = Some(t + self.overhead_ps);
            cx.progress();
        }
    }

    /// Sends due completions (a blocked output retries when the kernel wakes this node as it
    /// frees).
    fn signal(&mut self, cx: &mut Ctx<'_>) {
        for (k, due) in self.done_due.iter_mut().enumerate() {
            if *due > 0 && cx.send(self.hooks.done[k], *due).is_ok() {
                *due = 0;
            }
        }
    }
}

impl Component for ChipNode {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let (t, cycle) = (cx.now().as_ps(), cx.cycle().0);
        self.ticks += 1;
        let before = (self.cur, self.done_ps.is_some());
        let phase_before = self.phase;
        if !self.hooks.doorbells.is_empty() {
            self.ring(cx, t);
        }
        let pending = self.ports.pending(cx);
        for i in 0..self.ports.inputs.len() {
            if !pending.may_hold(i) {
                continue; // nothing in flight or arrived on it
            }
            let inp = self.ports.inputs[i];
            while let Some(p) = cx.recv(inp) {
                if p.dst == self.chip {
                    self.deliver(p, t);
                } else {
                    self.forwarded += 1;
                    self.ports.enqueue(cycle, p);
                }
            }
        }
        if self.timer.is_some_and(|at| at <= t) {
            self.timer = None;
            self.issue(t, cycle);
            cx.progress();
        }
        self.ports.transmit(cx, cycle);
        if !self.done_due.is_empty() {
            self.signal(cx);
        }
        if before != (self.cur, self.done_ps.is_some()) {
            // A step completed: a slice from its issue to now on this chip's track.
            if let (Some(mut tr), Some(start)) = (cx.tracer(), self.issued_ps[before.0]) {
                let track = tr.own_track();
                let arg = Some(Arg { key: "step", value: before.0 as i64 });
                tr.slice(track, "step", Time::from_ps(start), Time::from_ps(t), Flow::None, arg);
                if self.phase != phase_before && self.phase_first.len() > 2 {
                    // A phase (one collective of a sequence) completed: from its first issue.
                    let first = self.phase_first[phase_before] as usize;
                    let start = self.issued_ps[first].unwrap_or(start);
                    let arg = Some(Arg { key: "phase", value: phase_before as i64 });
                    tr.slice(track, "collective", Time::from_ps(start), Time::from_ps(t), Flow::None, arg);
                }
            }
        }
        if let Some(at) = self.timer {
            cx.wake_at(Time::from_ps(at));
        }
        // Busy output links wake this component when they free (kernel contract for Idle).
        Activity::Idle
    }

    fn has_outstanding_work(&self) -> bool {
        self.done_ps.is_none() || self.ports.has_queued() || self.done_due.iter().any(|&d| d > 0)
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("finish_ps", self.done_ps.unwrap_or(out.end_time().as_ps()));
        out.count("steps_done", self.issued_ps.iter().filter(|t| t.is_some()).count() as u64);
        out.count("messages_received", self.inbound.iter().filter(|m| m.done_ps.is_some()).count() as u64);
        out.count("bytes_received", self.inbound.iter().map(|m| m.got).sum());
        out.count("packets_forwarded", self.forwarded);
        out.count("ticks", self.ticks);
        if !self.hooks.doorbells.is_empty() {
            out.count("doorbells", self.doorbells());
            // What a run of whole chips reads back from statistics (partitioned runs have no
            // single simulation to ask): the compute's end and each phase's start and end.
            if let Some(t) = self.last_doorbell_ps {
                out.count("last_doorbell_ps", t);
            }
            for (p, t) in self.phase_ready_ps.iter().enumerate() {
                if let Some(t) = t {
                    out.count(&format!("phase{p}_ready_ps"), *t);
                }
            }
            for (p, t) in self.phase_done_ps.iter().enumerate() {
                if let Some(t) = t {
                    out.count(&format!("phase{p}_done_ps"), *t);
                }
            }
        }
        self.ports.report(out);
    }
}
