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

use super::packet::Packet;
use super::ports::Ports;
use trnsim_kernel::{Activity, Arg, Component, Ctx, Flow, StatsWriter, Time};

/// One send of the engine, with the ids its packets carry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Send {
    pub dst: u32,
    pub bytes: u64,
    pub msg: u32,
    pub rx_slot: u32,
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
        steps: Vec<(Vec<Send>, u32)>,
        inbound_packets: Vec<u32>,
    ) -> ChipNode {
        let mut step_off = vec![0];
        let mut sends = Vec::new();
        let mut recvs = Vec::with_capacity(steps.len());
        for (s, r) in steps {
            sends.extend(s);
            step_off.push(sends.len() as u32);
            recvs.push(r);
        }
        let n = recvs.len();
        let inbound = inbound_packets.into_iter().map(|left| Inbound { left, got: 0, done_ps: None }).collect();
        ChipNode {
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
            timer: Some(overhead_ps),
            done_ps: None,
            forwarded: 0,
            ticks: 0,
        }
    }

    /// When this chip finished its last step, in picoseconds.
    pub fn done_ps(&self) -> Option<u64> {
        self.done_ps
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
                let p = Packet { msg: s.msg, rx_slot: s.rx_slot, dst: s.dst, tag: step as u32, bytes };
                self.ports.enqueue(cycle, p);
            }
        }
        self.try_complete(t);
    }

    fn try_complete(&mut self, t: u64) {
        if self.done_ps.is_some() || self.received[self.cur] < self.recvs[self.cur] {
            return;
        }
        if self.cur + 1 == self.recvs.len() {
            self.done_ps = Some(t);
            return;
        }
        self.cur += 1;
        self.issued = false;
        self.timer = Some(t + self.overhead_ps);
    }
}

impl Component for ChipNode {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let (t, cycle) = (cx.now().as_ps(), cx.cycle().0);
        self.ticks += 1;
        let before = (self.cur, self.done_ps.is_some());
        for i in 0..self.ports.inputs.len() {
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
        if before != (self.cur, self.done_ps.is_some()) {
            // A step completed: a slice from its issue to now on this chip's track.
            if let (Some(mut tr), Some(start)) = (cx.tracer(), self.issued_ps[before.0]) {
                let track = tr.own_track();
                let arg = Some(Arg { key: "step", value: before.0 as i64 });
                tr.slice(track, "step", Time::from_ps(start), Time::from_ps(t), Flow::None, arg);
            }
        }
        if let Some(at) = self.timer {
            cx.wake_at(Time::from_ps(at));
        }
        // Busy output links wake this component when they free (kernel contract for Idle).
        Activity::Idle
    }

    fn has_outstanding_work(&self) -> bool {
        self.done_ps.is_none() || self.ports.has_queued()
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("finish_ps", self.done_ps.unwrap_or(out.end_time().as_ps()));
        out.count("steps_done", self.issued_ps.iter().filter(|t| t.is_some()).count() as u64);
        out.count("messages_received", self.inbound.iter().filter(|m| m.done_ps.is_some()).count() as u64);
        out.count("bytes_received", self.inbound.iter().map(|m| m.got).sum());
        out.count("packets_forwarded", self.forwarded);
        out.count("ticks", self.ticks);
        self.ports.report(out);
    }
}
