//! A node's side of the fabric: its input links, its output links each with a FIFO of
//! packets waiting to be sent, and its routing rows. Chips and switches both use it.
//!
//! A packet that arrives at (or starts at) a node picks, among the physical links of the
//! candidate next edges ([`crate::topo::Topology::next_edges`]), the one that frees first
//! (ties: lowest edge, then lowest link), exactly as [`crate::topo::Network`] does, and joins
//! that link's queue (early binding: the choice accounts for every packet already queued).
//! A queue's head is sent when the kernel link's bandwidth allows; the link then serializes it
//! and delivers it after its latency. Queues are unbounded here and credits never bind (see
//! [`super::clock`]), so there is no back-pressure, as in the old model.

use super::packet::Packet;
use std::collections::VecDeque;
use trnsim_kernel::{Arg, Ctx, Flow, InPort, InputIndex, OutPort, PendingInputs, StatsWriter, TrackId};

/// One physical output link of a node.
pub(crate) struct OutLink {
    port: OutPort<Packet>,
    /// Payload bytes per cycle (the kernel link's bandwidth).
    bytes_per_cycle: u32,
    /// Cycle at which the last packet queued (or sent) on this link finishes serializing.
    free: u64,
    /// Cycle from which the kernel link accepts the next send.
    next_send: u64,
    queue: VecDeque<Packet>,
    /// Trace track of this link (a slice per packet while it serializes), if declared.
    track: Option<TrackId>,
    /// Packets and payload bytes sent, and cycles spent serializing.
    pub packets: u64,
    pub bytes: u64,
    pub busy_cycles: u64,
}

/// The ports, queues and routing of one node.
pub(crate) struct Ports {
    /// Input links, drained in this order on every tick.
    pub inputs: Vec<InPort<Packet>>,
    /// The inputs by key (to drain only those that may hold a packet).
    input_index: InputIndex,
    outs: Vec<OutLink>,
    /// Indices into `outs` with a non-empty queue.
    active: Vec<u32>,
    /// `route[row_off[r]..row_off[r + 1]]` with `r = row_of[d]`: candidate output links
    /// towards chip `d`. Equal rows are stored once (a leaf switch sends every chip behind
    /// the spines to the same uplinks).
    row_of: Vec<u32>,
    row_off: Vec<u32>,
    route: Vec<u32>,
    /// Packets queued on all output links.
    queued: usize,
    /// Most packets ever queued at once.
    max_queued: usize,
    /// Times a link's bandwidth allowed a send but it had no credit (0 by construction).
    credit_stalls: u64,
}

impl Ports {
    /// Ports with `inputs`, output links `(port, bytes per cycle)` and, per destination chip,
    /// the candidate output links (indices into the output list, in preference order).
    pub fn new(inputs: Vec<InPort<Packet>>, outs: Vec<(OutPort<Packet>, u32)>, routes: &[Vec<u32>]) -> Ports {
        let outs = outs
            .into_iter()
            .map(|(port, bytes_per_cycle)| OutLink {
                port,
                bytes_per_cycle,
                free: 0,
                next_send: 0,
                queue: VecDeque::new(),
                track: None,
                packets: 0,
                bytes: 0,
                busy_cycles: 0,
            })
            .collect::<Vec<_>>();
        let mut row_of = Vec::with_capacity(routes.len());
        let (mut row_off, mut route) = (vec![0u32], Vec::new());
        let mut seen: fxhash::FxHashMap<&[u32], u32> = fxhash::FxHashMap::default();
        for r in routes {
            let next = seen.len() as u32;
            let row = *seen.entry(r.as_slice()).or_insert_with(|| {
                route.extend_from_slice(r);
                row_off.push(route.len() as u32);
                next
            });
            row_of.push(row);
        }
        let active = Vec::with_capacity(outs.len());
        let mut input_index = InputIndex::new();
        inputs.iter().for_each(|p| input_index.push(p.key()));
        Ports { inputs, input_index, outs, active, row_of, row_off, route, queued: 0, max_queued: 0, credit_stalls: 0 }
    }

    /// Which inputs (by index in `inputs`) may hold a packet: the others hold none.
    pub fn pending(&self, cx: &Ctx<'_>) -> PendingInputs {
        cx.pending_in(&self.input_index)
    }

    /// The output links, in creation order.
    pub fn outs(&self) -> &[OutLink] {
        &self.outs
    }

    /// Gives output link `k` a trace track: each packet it sends becomes a slice (`msg` = the
    /// message id) over its serialization cycles.
    pub fn set_track(&mut self, k: usize, track: TrackId) {
        self.outs[k].track = Some(track);
    }

    /// Whether any packet waits to be sent.
    pub fn has_queued(&self) -> bool {
        self.queued > 0
    }

    /// Queues `p` at cycle `now` on the candidate link towards `p.dst` that frees first.
    pub fn enqueue(&mut self, now: u64, p: Packet) {
        let d = p.dst as usize;
        let r = self.row_of[d] as usize;
        let (lo, hi) = (self.row_off[r] as usize, self.row_off[r + 1] as usize);
        let mut best = (u64::MAX, u32::MAX);
        for &l in &self.route[lo..hi] {
            let start = self.outs[l as usize].free.max(now);
            if start < best.0 {
                best = (start, l);
            }
        }
        let (start, l) = best;
        assert!(l != u32::MAX, "every chip reaches every chip (checked when the topology is built)");
        let o = &mut self.outs[l as usize];
        o.free = start + u64::from(p.bytes.div_ceil(o.bytes_per_cycle).max(1));
        if o.queue.is_empty() {
            self.active.push(l);
        }
        o.queue.push_back(p);
        self.queued += 1;
        self.max_queued = self.max_queued.max(self.queued);
    }

    /// Sends the head of every queue whose link is free at cycle `now`, and sets a timer for
    /// the earliest link that frees later with packets waiting (the kernel also wakes a
    /// component whose output is busy, but its busy time counts whole picoseconds per cycle and
    /// may end a little before the edge this model computes).
    pub fn transmit(&mut self, cx: &mut Ctx<'_>, now: u64) {
        let mut wake = u64::MAX;
        let mut i = 0;
        while i < self.active.len() {
            let o = &mut self.outs[self.active[i] as usize];
            if now >= o.next_send {
                if cx.can_send(o.port) {
                    let p = o.queue.pop_front().expect("active queues are non-empty");
                    let c = u64::from(p.bytes.div_ceil(o.bytes_per_cycle).max(1));
                    o.next_send = now + c;
                    o.packets += 1;
                    o.bytes += u64::from(p.bytes);
                    o.busy_cycles += c;
                    self.queued -= 1;
                    let (msg, track) = (p.msg, o.track);
                    let sent = cx.send(o.port, p);
                    debug_assert!(sent.is_ok(), "can_send said yes");
                    if let Some(track) = track {
                        let (start, end) = (cx.clock().edge(now), cx.clock().edge(now + c));
                        if let Some(mut tr) = cx.tracer() {
                            let arg = Some(Arg { key: "msg", value: i64::from(msg) });
                            tr.slice(track, "packet", start, end, Flow::None, arg);
                        }
                    }
                } else {
                    self.credit_stalls += 1;
                }
            }
            let o = &self.outs[self.active[i] as usize];
            if o.queue.is_empty() {
                self.active.swap_remove(i);
            } else {
                if o.next_send > now {
                    wake = wake.min(o.next_send);
                }
                i += 1;
            }
        }
        if wake != u64::MAX {
            let t = cx.clock().edge(wake);
            cx.wake_at(t);
        }
    }

    /// Writes the queue statistics.
    pub fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets_sent", self.outs.iter().map(|o| o.packets).sum());
        out.count("bytes_sent", self.outs.iter().map(|o| o.bytes).sum());
        out.count("max_queued_packets", self.max_queued as u64);
        out.count("credit_stalls", self.credit_stalls);
    }
}
