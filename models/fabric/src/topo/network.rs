//! The packet-level network: messages split into packets; every directed link is a FIFO server
//! (a packet occupies it for its serialization time at the link's payload bandwidth, then
//! arrives `latency` later at the far node); packets go hop by hop, store-and-forward.
//!
//! It is a discrete-event engine in exact picoseconds, driven by its owner (the collective
//! runner, one kernel component for the whole fabric): [`Network::next_time`] says when the
//! next packet arrives somewhere, [`Network::step`] processes that one arrival. Arrivals are
//! processed in (time, sequence number) order, so per-link FIFO order is arrival order and runs
//! repeat exactly. On a bundle of parallel links and among adaptive candidates a packet takes
//! the link that frees first (ties: lowest edge, then lowest link).
//!
//! Leaves out: cut-through (each hop serializes the whole packet), credits and buffer limits
//! (queues are unbounded, so no back-pressure or head-of-line blocking across links), the
//! link-layer replay, and DMA/injection limits of the chip other than its links.

use crate::topo::graph::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use trnsim_kernel::Histogram;

/// Identifies a message within one [`Network`] (dense, in send order).
pub type MsgId = usize;

/// Per-edge traffic counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EdgeStats {
    /// Payload bytes carried.
    pub bytes: u64,
    /// Packets carried.
    pub packets: u64,
    /// Serialization time summed over all its links, in picoseconds.
    pub busy_ps: u64,
}

/// One message.
#[derive(Clone, Debug)]
pub struct Message {
    /// Source chip.
    pub src: usize,
    /// Destination chip.
    pub dst: usize,
    /// Payload bytes.
    pub bytes: u64,
    /// The sender's tag (the collective step).
    pub tag: u32,
    /// When it was sent, in picoseconds.
    pub sent_ps: u64,
    /// Packets not yet delivered.
    pub left: u64,
    /// Bytes delivered so far.
    pub delivered_bytes: u64,
    /// When its last packet arrived, in picoseconds.
    pub done_ps: Option<u64>,
}

/// The network state.
pub struct Network {
    topo: Topology,
    /// Per edge, per parallel link: when it is free, in picoseconds.
    free_at: Vec<Vec<u64>>,
    /// Per edge counters.
    pub edge_stats: Vec<EdgeStats>,
    /// All messages, by id.
    pub msgs: Vec<Message>,
    /// Message latency (send to last packet delivered), in picoseconds.
    pub latency: Histogram,
    /// Packets in flight, earliest arrival first: forwarded packets, and the next first-hop
    /// arrival of each message whose packets are still leaving their source (flagged with
    /// [`FROM_SOURCE`] in the bytes field).
    events: BinaryHeap<Reverse<Event>>,
    seq: u64,
    /// Per message (by id), its first-hop arrivals not yet in `events`, latest first: a
    /// message's packets are all placed on their first links when it is sent, but enter the
    /// event heap one at a time. The order of events is the same as if every packet entered
    /// the heap at once ((time, sequence) is a total order), with a heap of messages instead
    /// of packets.
    pending: Vec<Vec<Event>>,
}

impl Network {
    /// Memory a message keeps per packet until the packet leaves its source (its first hop's
    /// arrival, in the message's pending list).
    pub const PENDING_BYTES_PER_PACKET: u64 = std::mem::size_of::<Event>() as u64;
}

/// Marks an event in the heap as its message's next first-hop arrival.
const FROM_SOURCE: u32 = 1 << 31;

/// A packet arriving at a node: (arrival time in ps, sequence, message, node, bytes). The
/// message id takes 64 bits (a run may send more than 2^32 messages); the tuple is 32 bytes
/// either way.
type Event = (u64, u64, u64, u32, u32);
const _: () = assert!(std::mem::size_of::<Event>() == 32, "an event (and a pending packet) is 32 bytes");

impl Network {
    /// An idle network over `topo`.
    pub fn new(topo: Topology) -> Network {
        let free_at = topo.edges.iter().map(|e| vec![0; e.servers as usize]).collect();
        let edge_stats = vec![EdgeStats::default(); topo.edges.len()];
        let (msgs, events) = (Vec::new(), BinaryHeap::new());
        Network { topo, free_at, edge_stats, msgs, latency: Histogram::new(), events, seq: 0, pending: Vec::new() }
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Sends `bytes` from chip `src` to chip `dst` at `now_ps`, split into packets of the
    /// topology's packet size, all queued on their first hop now. Returns the message id; a
    /// message to itself or of 0 bytes is delivered at once (see [`Message::done_ps`]).
    pub fn send(&mut self, now_ps: u64, src: usize, dst: usize, bytes: u64, tag: u32) -> MsgId {
        let id = self.msgs.len();
        let pkt = u64::from(self.topo.packet_bytes);
        let n = bytes.div_ceil(pkt);
        let mut m = Message { src, dst, bytes, tag, sent_ps: now_ps, left: n, delivered_bytes: 0, done_ps: None };
        if src == dst || n == 0 {
            m.left = 0;
            m.delivered_bytes = bytes;
            m.done_ps = Some(now_ps);
            self.msgs.push(m);
            return id;
        }
        self.msgs.push(m);
        // (Room for every packet's first hop: callers check the size first, see
        // `collective::pending_bytes`; a count beyond the address space reserves nothing.)
        let mut first = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
        for k in 0..n {
            let b = (bytes - k * pkt).min(pkt) as u32;
            first.push(self.place(now_ps, id, src, b));
        }
        first.sort_unstable_by(|a, b| b.cmp(a));
        if self.pending.len() <= id {
            self.pending.resize_with(id + 1, Vec::new);
        }
        if let Some(mut head) = first.pop() {
            head.4 |= FROM_SOURCE;
            self.events.push(Reverse(head));
        }
        self.pending[id] = first;
        id
    }

    /// When the next packet arrives at a node, if any is in flight, in picoseconds.
    pub fn next_time(&self) -> Option<u64> {
        self.events.peek().map(|Reverse(e)| e.0)
    }

    /// Processes the next packet arrival: forwards it, or delivers it at its destination.
    /// Returns the message id when that packet completed its message.
    pub fn step(&mut self) -> Option<MsgId> {
        let Reverse((t, _, msg, node, mut bytes)) = self.events.pop()?;
        let (msg, node) = (msg as usize, node as usize);
        if bytes & FROM_SOURCE != 0 {
            bytes &= !FROM_SOURCE;
            if let Some(mut next) = self.pending[msg].pop() {
                next.4 |= FROM_SOURCE;
                self.events.push(Reverse(next));
            } else {
                // The message's last packet has left its source: free its list (a 1 GiB
                // all-reduce on 144 chips would otherwise keep ~2 GB of spent lists).
                self.pending[msg] = Vec::new();
            }
        }
        if node != self.msgs[msg].dst {
            self.forward(t, msg, node, bytes);
            return None;
        }
        let m = &mut self.msgs[msg];
        m.left -= 1;
        m.delivered_bytes += u64::from(bytes);
        if m.left > 0 {
            return None;
        }
        m.done_ps = Some(t);
        self.latency.record(t - m.sent_ps);
        Some(msg)
    }

    /// Queues one packet at `node` on the candidate link that frees first.
    fn forward(&mut self, now: u64, msg: MsgId, node: usize, bytes: u32) {
        let ev = self.place(now, msg, node, bytes);
        self.events.push(Reverse(ev));
    }

    /// Places one packet at `node` on the candidate link that frees first; returns its arrival
    /// at the far node.
    fn place(&mut self, now: u64, msg: MsgId, node: usize, bytes: u32) -> Event {
        let dst = self.msgs[msg].dst;
        let mut best: Option<(u64, usize, usize)> = None;
        for e in self.topo.next_edges(node, dst) {
            let e = e as usize;
            for (s, &f) in self.free_at[e].iter().enumerate() {
                if best.is_none_or(|(bf, _, _)| f.max(now) < bf) {
                    best = Some((f.max(now), e, s));
                }
            }
        }
        let (start, e, s) = best.expect("every chip reaches every chip (checked when the topology is built)");
        let edge = &self.topo.edges[e];
        let ser = edge.serialization_ps(bytes);
        let end = start + ser;
        self.free_at[e][s] = end;
        let st = &mut self.edge_stats[e];
        st.bytes += u64::from(bytes);
        st.packets += 1;
        st.busy_ps += ser;
        self.seq += 1;
        (end + edge.latency_ps, self.seq, msg as u64, edge.to as u32, bytes)
    }

    /// Utilization of edge `e` over `[0, end_ps)`: busy time / (links x time).
    pub fn utilization(&self, e: usize, end_ps: u64) -> f64 {
        let servers = f64::from(self.topo.edges[e].servers);
        if end_ps == 0 {
            return 0.0;
        }
        self.edge_stats[e].busy_ps as f64 / (servers * end_ps as f64)
    }
}
