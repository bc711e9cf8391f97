//! The flow-level network: the collectives' step programs run over fluid flows instead of
//! packets through link FIFOs. A message is one flow from its source to its destination.
//!
//! **Paths** ([`paths`]). Where the source has several candidate links (a server mate on a
//! Trn3 UltraServer: the server switch or any of 5 planes), the message splits over them as
//! the packet-level network places its packets on the link that frees first: the links with
//! the least queued (bytes of earlier messages still to cross them, over capacity) take it,
//! until every link used drains at the same time. Beyond the source a message spreads over
//! each node's candidates in proportion to their capacity (on the switched and cluster
//! presets there is no choice beyond the source but a cluster's spines, which are alike).
//!
//! **Sharing** ([`share`]). Older steps first, and the flows of one step max-min fairly among
//! themselves, as a link FIFO serves a step's packets before the next step's while the packets
//! of one step's messages interleave. Rates are recomputed once per time at which flows start
//! or end; flows of chips running in step end together, so a step costs a few passes.
//!
//! A flow's last byte arrives `pipeline + latency` after its fluid transfer ends: the latencies
//! of its path's first candidates, and one packet's serialization on every hop but the slowest
//! (store and forward).
//!
//! Costs events per message, not per packet: a pass is `O(flows x hops x bottleneck levels)`.
//! Scaled for clusters of 100,000 chips: programs are runs of equal steps (`schedule::Runs`)
//! flattened into two arrays, with one cache line of engine state per chip; timers and
//! deliveries are kept in buckets by time; paths and tails inside an UltraServer are computed
//! once per pair of local chips and shared by every copy, a flow holding only the pair, its
//! copy's offset and its split (a flow between UltraServers holds its four edges inline: no
//! list per message); and a leaf's uplinks (and the spines' downlinks to it) are one aggregate
//! link. Exact for one flow alone on a path.
//!
//! Leaves out: everything the packet-level network leaves out (docs/fabric.md), plus queues
//! inside the network (a flow's rate is set at once along its whole path), the order of one
//! source's messages of a step at its links (they share fairly; packets leave in send order),
//! and the switches' output queues that build up when an all-to-all's sources all feed the
//! same destination at once (docs/validation.md bounds the gap).

mod engine;
mod events;
mod paths;
mod share;

use crate::collective::schedule::{Program, Runs};
use crate::topo::Topology;
use engine::{flatten, try_complete};
use events::{Events, TIMER};
use paths::{Paths, Route};
use share::{Flow, Link};

/// The result of a flow-level run.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRun {
    /// When each chip finished its program, in picoseconds (0 for chips with none).
    pub done_ps: Vec<f64>,
    /// Rate updates (passes giving every flow its rate) computed.
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

/// The messages in flight: per message its destination, the time from its last part's end to
/// its last byte's arrival in ps, and its parts still moving; slots of delivered messages
/// reused.
#[derive(Default)]
struct InFlight {
    slots: Vec<(u32, f64, u32)>,
    free: Vec<u32>,
}

impl InFlight {
    /// A message to `dst` in `parts` parts (at least one).
    fn start(&mut self, dst: u32, tail_ps: f64, parts: usize) -> Result<u32, String> {
        let parts = u32::try_from(parts.max(1)).map_err(|_| "a message in too many parts".to_string())?;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = (dst, tail_ps, parts);
            return Ok(i);
        }
        let i = u32::try_from(self.slots.len()).map_err(|_| "too many messages in flight".to_string())?;
        self.slots.push((dst, tail_ps, parts));
        Ok(i)
    }

    /// One part of message `m` ended: its (destination, tail) if it was the last.
    fn part_done(&mut self, m: u32) -> Option<(u32, f64)> {
        let s = &mut self.slots[m as usize];
        s.2 -= 1;
        (s.2 == 0).then(|| {
            self.free.push(m);
            (s.0, s.1)
        })
    }
}

/// Runs per-chip step programs (index = chip) over `topo` as flows, with `overhead_ps` of
/// software time before each step's sends, until every chip is done or `limit_ps` passes.
pub fn run(topo: &Topology, progs: Vec<Program>, overhead_ps: u64, limit_ps: u64) -> Result<FlowRun, String> {
    run_runs(topo, progs.into_iter().map(crate::collective::schedule::runs_of), overhead_ps, limit_ps)
}

/// [`run`] with each program as runs of equal steps ([`crate::collective::schedule::runs_of`]),
/// taken one chip at a time (a generator's programs are never all held as steps at once).
pub fn run_runs<I>(topo: &Topology, progs: I, overhead_ps: u64, limit_ps: u64) -> Result<FlowRun, String>
where
    I: IntoIterator<Item = Runs>,
    I::IntoIter: ExactSizeIterator,
{
    let progs = progs.into_iter();
    if progs.len() != topo.chips {
        return Err(format!("{} programs for {} chips", progs.len(), topo.chips));
    }
    let (prog, mut engines) = flatten(progs)?;
    let mut far: Vec<Vec<(u32, u32)>> = std::iter::repeat_with(Vec::new).take(engines.len()).collect();
    let mut paths = Paths::new(topo)?;
    let mut links: Vec<Link> = paths.cap.iter().map(|&cap| Link::new(cap)).collect();
    // Active flows per link.
    let mut users = vec![0u32; links.len()];
    let overhead = overhead_ps as f64;
    let mut events = Events::default();
    // Chips number below `TIMER` (`flatten`): the casts keep every chip number.
    for (c, e) in engines.iter().enumerate() {
        if !e.done() {
            events.push(overhead, (c as u32 | TIMER, 0));
        }
    }
    let mut flows: Vec<Flow> = Vec::new();
    let mut msgs = InFlight::default();
    let mut parts = Vec::new();
    let mut scratch = share::Scratch::default();
    let (mut now, mut updates, mut messages) = (0.0f64, 0u64, 0u64);
    // The rate pass the links' residuals belong to, and the event their queues belong to.
    let (mut pass, mut tick) = (0u64, 0u64);
    // When the next transfer ends: the earliest `now + left / rate` of the moving flows.
    let mut t_flow = f64::INFINITY;
    // Paths of ended flows, reused by new ones (off a cluster: no allocation per message).
    let mut spent: Vec<Vec<(u32, f64)>> = Vec::new();
    loop {
        let t = match events.next_time() {
            Some(te) if te <= t_flow => te,
            _ if t_flow.is_finite() => t_flow,
            _ => break,
        };
        if t > limit_ps as f64 {
            return Err(format!("the collective did not finish within {} us", limit_ps / 1_000_000));
        }
        let dt = t - now;
        now = t;
        tick += 1;
        // Whether a flow that shared a link with another started or ended: then every rate is
        // computed again (a flow alone on its links takes its path's capacity, and leaving
        // changes no other's rate).
        let mut shared = false;
        // Every flow advances to `now`; those whose transfer ended (or ends within a
        // picosecond: a step's flows end together) leave, a message's last byte arriving a
        // tail after its last part's.
        t_flow = f64::INFINITY;
        flows.retain_mut(|f| {
            f.left -= f.rate * dt;
            let done = f.rate > 0.0 && f.left <= f.rate * 1.0 + 1e-6;
            if done {
                if let Some((dst, tail)) = msgs.part_done(f.msg) {
                    events.push(now + tail, (dst, f.tag));
                }
                let mut alone = true;
                paths.each(&f.route, |e, _| {
                    let u = &mut users[e as usize];
                    alone &= *u == 1;
                    *u -= 1;
                });
                shared |= !alone;
                if let Route::Any(p) = &mut f.route {
                    spent.push(std::mem::take(p));
                }
            } else {
                if f.rate > 0.0 {
                    t_flow = t_flow.min(now + f.left / f.rate);
                }
            }
            !done
        });
        // The bytes still to leave each source link, which a new message's split reads: summed
        // once per time, at the first send (most times only deliver).
        let mut queued = false;
        while let Some((who, tag)) = events.pop_due(now) {
            if who & TIMER == 0 {
                let c = who as usize;
                let e = &mut engines[c];
                e.receive(tag, &mut far[c]);
                if e.cur == tag && e.issued {
                    try_complete(&mut engines, &prog.runs, &mut far, c, now, overhead, &mut events);
                }
                continue;
            }
            if !queued {
                queued = true;
                for f in &flows {
                    if let Some(e) = paths.first(&f.route).filter(|_| f.queues) {
                        links[e as usize].queue(tick, f.left);
                    }
                }
            }
            let c = (who & !TIMER) as usize;
            let e = &mut engines[c];
            let step = e.cur;
            e.issued = true;
            let (s0, s1) = e.sends;
            for &(dst, bytes) in &prog.sends[s0 as usize..s1 as usize] {
                messages += 1;
                if dst == who & !TIMER || bytes == 0 {
                    events.push(now, (dst, step));
                    continue;
                }
                let (src, d, b) = (c, dst as usize, bytes as f64);
                parts.clear();
                paths.parts((src, d, b), &links, tick, &mut spent, &mut parts);
                let msg = msgs.start(dst, paths.tail(src, d, bytes), parts.len())?;
                for (route, left) in parts.drain(..) {
                    let first = paths.first(&route).filter(|&e| paths.choice[e as usize]);
                    if let Some(e) = first {
                        links[e as usize].queue(tick, left);
                    }
                    let (mut alone, mut rate) = (true, f64::INFINITY);
                    paths.each(&route, |e, sh| {
                        let u = &mut users[e as usize];
                        alone &= *u == 0;
                        *u += 1;
                        rate = rate.min(links[e as usize].cap / sh);
                    });
                    let rate = if alone && rate.is_finite() { rate } else { 0.0 };
                    shared |= !alone;
                    if rate > 0.0 {
                        t_flow = t_flow.min(now + left / rate);
                    }
                    flows.push(Flow { msg, tag: step, left, rate, route, queues: first.is_some() });
                }
            }
            try_complete(&mut engines, &prog.runs, &mut far, c, now, overhead, &mut events);
        }
        if shared && !flows.is_empty() {
            (updates, pass) = (updates + 1, pass + 1);
            t_flow = share::rates(&mut flows, &mut links, &paths, pass, now, &mut scratch);
        }
    }
    let done_ps: Vec<f64> = engines.iter().map(|e| e.done_ps).collect();
    if let Some(c) = done_ps.iter().position(|d| d.is_nan()) {
        return Err(format!("chip {c} never finished (a receive that no send matches)"));
    }
    Ok(FlowRun { done_ps, updates, messages })
}
