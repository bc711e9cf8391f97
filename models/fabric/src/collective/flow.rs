//! The flow-level network: the collectives' step programs run over fluid flows instead of
//! packets through link FIFOs. A message is one flow from its source to its destination,
//! spread over the routing's candidate links in proportion to their capacity (as the
//! packet-level network's adaptive choice spreads packets). Links serve flows first come,
//! first served at fluid rates (each flow, oldest first, takes all it can of what older
//! flows left on its links), as the packet-level link FIFOs serve older packets first; max-min
//! fair sharing was tried and is 10 % slow on a hierarchical all-reduce, where a FIFO lets a
//! step's message finish before the next step's starts sharing its link. Rates are recomputed
//! whenever a flow starts or ends.
//! A flow's last byte arrives `pipeline + latency` after its fluid transfer ends: the
//! latencies of its path's first candidates, and one packet's serialization on every hop but
//! the slowest (store and forward).
//!
//! Costs events per message, not per packet: a step of `n` messages is `O(n x hops)` work per
//! rate update. Exact for one flow alone on a path. Its known gap: an all-to-all, where the
//! packet-level sources queue all their messages at once in destination order, so every
//! source feeds the same destinations at the same time and the switches' output queues
//! build up (17-22 % slower than the fluid flows, which leave no link idle).
//!
//! Leaves out: everything the packet-level network leaves out (docs/fabric.md), plus
//! queues inside the network: a flow's rate is set at once along its whole path.

use crate::collective::schedule::Program;
use crate::topo::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Timers and deliveries: (time in ps as f64 bits, sequence, kind (0 delivery, 1 timer),
/// chip, step tag), earliest first.
type Events = BinaryHeap<Reverse<(u64, u64, u8, usize, u32)>>;

/// One active flow.
struct Flow {
    dst: usize,
    tag: u32,
    /// Bytes still to move.
    left: f64,
    /// Current rate in bytes per picosecond.
    rate: f64,
    /// (edge, share of the flow on it).
    path: Vec<(u32, f64)>,
    /// Time from the end of the fluid transfer to the last byte's arrival, in ps.
    tail_ps: f64,
}

/// One chip's collective engine (as the packet-level runner's).
struct Engine {
    prog: Program,
    cur: usize,
    issued: bool,
    received: Vec<u32>,
    done_ps: Option<f64>,
}

/// The result of a flow-level run.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRun {
    /// When each chip finished its program, in picoseconds (0 for chips with none).
    pub done_ps: Vec<f64>,
    /// Rate updates (progressive fillings) computed.
    pub updates: u64,
    /// Messages moved.
    pub messages: u64,
}

impl FlowRun {
    /// When the last chip finished, in picoseconds.
    pub fn finish_ps(&self) -> f64 {
        self.done_ps.iter().copied().fold(0.0, f64::max)
    }
}

/// The share of a message from `src` to `dst` on each edge: split over each node's candidate
/// next edges in proportion to their capacity.
fn spread(topo: &Topology, src: usize, dst: usize, cap: &[f64]) -> Vec<(u32, f64)> {
    let mut at: Vec<(usize, f64)> = vec![(src, 1.0)];
    let mut out: Vec<(u32, f64)> = Vec::new();
    let mut guard = 0;
    while !at.is_empty() {
        guard += 1;
        if guard > 64 {
            break; // routes are minimal: never this long
        }
        let mut next: Vec<(usize, f64)> = Vec::new();
        for (n, share) in at {
            if n == dst {
                continue;
            }
            let cands = topo.next_edges(n, dst);
            let total: f64 = cands.iter().map(|&e| cap[e as usize]).sum();
            for &e in cands {
                let s = share * cap[e as usize] / total;
                match out.iter_mut().find(|(x, _)| *x == e) {
                    Some(x) => x.1 += s,
                    None => out.push((e, s)),
                }
                let to = topo.edges[e as usize].to;
                match next.iter_mut().find(|(x, _)| *x == to) {
                    Some(x) => x.1 += s,
                    None => next.push((to, s)),
                }
            }
        }
        at = next;
    }
    out
}

/// The tail of a message of `bytes` on the first-candidate path: every hop's latency, plus one
/// packet's serialization on every hop but the slowest, in ps.
fn tail(topo: &Topology, src: usize, dst: usize, bytes: u64) -> f64 {
    let pkt = bytes.min(u64::from(topo.packet_bytes)) as f64;
    let (mut n, mut lat, mut ser, mut worst) = (src, 0.0, 0.0, 0.0f64);
    while n != dst {
        let Some(&e) = topo.next_edges(n, dst).first() else { break };
        let edge = &topo.edges[e as usize];
        lat += edge.latency_ps as f64;
        let s = pkt * 1e12 / edge.bytes_per_s;
        ser += s;
        worst = worst.max(s);
        n = edge.to;
    }
    lat + ser - worst
}

/// First come, first served at fluid rates: flows in the order they started (`flows` is kept
/// in that order) each take all they can of what the older flows left on their edges, as a
/// link FIFO serves older packets first.
fn fifo(flows: &mut [Flow], cap: &[f64], residual: &mut [f64]) {
    for f in flows.iter() {
        for &(e, _) in &f.path {
            residual[e as usize] = cap[e as usize];
        }
    }
    for f in flows.iter_mut() {
        let r = f.path.iter().map(|&(e, s)| residual[e as usize].max(0.0) / s).fold(f64::INFINITY, f64::min);
        f.rate = if r.is_finite() { r } else { 0.0 };
        for &(e, s) in &f.path {
            residual[e as usize] -= f.rate * s;
        }
    }
}

/// Runs per-chip step programs (index = chip) over `topo` as flows, with `overhead_ps` of
/// software time before each step's sends, until every chip is done or `limit_ps` passes.
pub fn run(topo: &Topology, progs: Vec<Program>, overhead_ps: u64, limit_ps: u64) -> Result<FlowRun, String> {
    if progs.len() != topo.chips {
        return Err(format!("{} programs for {} chips", progs.len(), topo.chips));
    }
    let cap: Vec<f64> = topo.edges.iter().map(|e| e.bytes_per_s * f64::from(e.servers) / 1e12).collect();
    let mut residual = vec![0.0; cap.len()];
    let overhead = overhead_ps as f64;
    let mut engines: Vec<Engine> = progs
        .into_iter()
        .map(|prog| {
            let done_ps = prog.is_empty().then_some(0.0);
            Engine { received: vec![0; prog.len()], prog, cur: 0, issued: false, done_ps }
        })
        .collect();
    // Timers and deliveries as (time bits, sequence, kind, chip or destination, tag): f64
    // times of non-negative values order as their bits do.
    let mut events: Events = BinaryHeap::new();
    let mut seq = 0u64;
    for (c, e) in engines.iter().enumerate() {
        if e.done_ps.is_none() {
            seq += 1;
            events.push(Reverse((overhead.to_bits(), seq, 1, c, 0)));
        }
    }
    let mut flows: Vec<Flow> = Vec::new();
    let (mut now, mut updates, mut messages) = (0.0f64, 0u64, 0u64);
    loop {
        let t_event = events.peek().map(|Reverse(e)| f64::from_bits(e.0));
        let t_flow = flows.iter().filter(|f| f.rate > 0.0).map(|f| now + f.left / f.rate).fold(f64::INFINITY, f64::min);
        let t = match t_event {
            Some(te) if te <= t_flow => te,
            _ if t_flow.is_finite() => t_flow,
            _ => break,
        };
        if t > limit_ps as f64 {
            return Err(format!("the collective did not finish within {} us", limit_ps / 1_000_000));
        }
        for f in flows.iter_mut() {
            f.left -= f.rate * (t - now);
        }
        now = t;
        let mut changed = false;
        // Flows whose transfer ended (or ends within a picosecond: a step's flows end
        // together) leave; their last byte arrives after the tail. `retain` keeps the others
        // in start order, which the FIFO sharing needs, in one pass.
        flows.retain(|f| {
            let done = f.rate > 0.0 && f.left <= f.rate * 1.0 + 1e-6;
            if done {
                seq += 1;
                events.push(Reverse(((now + f.tail_ps).to_bits(), seq, 0, f.dst, f.tag)));
                changed = true;
            }
            !done
        });
        while let Some(Reverse((tb, _, kind, who, tag))) = events.peek().copied() {
            if f64::from_bits(tb) > now {
                break;
            }
            events.pop();
            if kind == 0 {
                let e = &mut engines[who];
                e.received[tag as usize] += 1;
                if e.cur == tag as usize && e.issued {
                    try_complete(&mut engines, who, now, overhead, &mut events, &mut seq);
                }
            } else {
                let c = who;
                let step = engines[c].cur;
                engines[c].issued = true;
                let sends = std::mem::take(&mut engines[c].prog[step].sends);
                for &(dst, bytes) in &sends {
                    messages += 1;
                    if dst == c || bytes == 0 {
                        seq += 1;
                        events.push(Reverse((now.to_bits(), seq, 0, dst, step as u32)));
                        continue;
                    }
                    let path = spread(topo, c, dst, &cap);
                    let tail_ps = tail(topo, c, dst, bytes);
                    flows.push(Flow { dst, tag: step as u32, left: bytes as f64, rate: 0.0, path, tail_ps });
                    changed = true;
                }
                engines[c].prog[step].sends = sends;
                try_complete(&mut engines, c, now, overhead, &mut events, &mut seq);
            }
        }
        if changed && !flows.is_empty() {
            fifo(&mut flows, &cap, &mut residual);
            updates += 1;
        }
    }
    let done_ps: Vec<f64> = engines.iter().map(|e| e.done_ps.unwrap_or(f64::NAN)).collect();
    if let Some(c) = done_ps.iter().position(|d| d.is_nan()) {
        return Err(format!("chip {c} never finished (a receive that no send matches)"));
    }
    Ok(FlowRun { done_ps, updates, messages })
}

fn try_complete(engines: &mut [Engine], c: usize, now: f64, overhead: f64, events: &mut Events, seq: &mut u64) {
    let e = &mut engines[c];
    if e.done_ps.is_some() || e.received[e.cur] < e.prog[e.cur].recvs {
        return;
    }
    if e.cur + 1 == e.prog.len() {
        e.done_ps = Some(now);
        return;
    }
    e.cur += 1;
    e.issued = false;
    *seq += 1;
    events.push(Reverse(((now + overhead).to_bits(), *seq, 1, c, 0)));
}
