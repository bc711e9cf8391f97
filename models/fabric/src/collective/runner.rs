//! Runs per-chip collective engines over the packet-level network as one kernel component.
//!
//! ```text
//!  ┌──────────────────────── FabricRun (one kernel component, 1 GHz) ───────────────────────┐
//!  │ engines[chip]: step, issued?, received[step]  ──send──►  Network (packets, link FIFOs) │
//!  │        ▲   timers (step ready + overhead)                     │ message delivered      │
//!  │        └──────────────────────────────────────────────────────┘                        │
//!  └────────────────────────────────────────────────────────────────────────────────────────┘
//! ```
//!
//! Events keep exact picosecond times; on each tick the component processes every event at or
//! before the tick's time in (time, kind, sequence) order (network arrivals before engine
//! timers at equal times), then sleeps until the next event's edge. The clock only decides
//! when the work is done, never its timestamps, so results do not depend on the clock.

use crate::collective::schedule::Program;
use crate::topo::Network;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use trnsim_kernel::{Activity, Component, Ctx, StatsWriter, Time};

/// One chip's collective engine.
#[derive(Clone, Debug)]
struct Engine {
    prog: Program,
    /// The current step.
    cur: usize,
    /// Whether the current step's sends are issued.
    issued: bool,
    /// Messages received, per step tag.
    received: Vec<u32>,
    /// When the last step completed, in picoseconds.
    done_ps: Option<u64>,
}

/// The whole fabric plus the chips' collective engines.
pub struct FabricRun {
    /// The network (its statistics are read after the run).
    pub net: Network,
    engines: Vec<Engine>,
    /// (time, chip): issue the chip's current step.
    timers: BinaryHeap<Reverse<(u64, usize)>>,
    overhead_ps: u64,
    /// Events processed (network arrivals + timers).
    pub events: u64,
}

impl FabricRun {
    /// Engines running `programs` (index = chip) over `net`, with `overhead_ps` of software
    /// time before each step's sends; every chip's step 0 becomes ready at time 0. A chip
    /// with an empty program takes no part (it is done at time 0).
    pub fn new(net: Network, programs: Vec<Program>, overhead_ps: u64) -> FabricRun {
        let mut timers = BinaryHeap::new();
        let engines = programs
            .into_iter()
            .enumerate()
            .map(|(c, prog)| {
                let done_ps = if prog.is_empty() { Some(0) } else { None };
                if done_ps.is_none() {
                    timers.push(Reverse((overhead_ps, c)));
                }
                Engine { received: vec![0; prog.len()], prog, cur: 0, issued: false, done_ps }
            })
            .collect();
        FabricRun { net, engines, timers, overhead_ps, events: 0 }
    }

    /// When chip `c` finished its program, in picoseconds (0 for a chip with none; None while
    /// it runs or for a chip outside the fabric).
    pub fn done_ps(&self, c: usize) -> Option<u64> {
        self.engines.get(c).and_then(|e| e.done_ps)
    }

    /// When the last chip finished, in picoseconds (None while any chip is still running).
    pub fn finish_ps(&self) -> Option<u64> {
        self.engines.iter().map(|e| e.done_ps).try_fold(0, |acc, d| d.map(|d| acc.max(d)))
    }

    fn next_time(&self) -> Option<u64> {
        let t = self.timers.peek().map(|Reverse((t, _))| *t);
        match (self.net.next_time(), t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Processes every event at or before `until_ps`.
    fn run_until(&mut self, until_ps: u64) {
        while let Some(t) = self.next_time().filter(|&t| t <= until_ps) {
            self.events += 1;
            if self.net.next_time() == Some(t) {
                if let Some(m) = self.net.step() {
                    self.delivered(m, t);
                }
            } else if let Some(Reverse((_, c))) = self.timers.pop() {
                self.issue(c, t);
            }
        }
    }

    fn issue(&mut self, c: usize, t: u64) {
        let e = &mut self.engines[c];
        let step = e.cur;
        e.issued = true;
        let sends = std::mem::take(&mut e.prog[step].sends);
        for &(dst, bytes) in &sends {
            let id = self.net.send(t, c, dst, bytes, step as u32);
            if self.net.msgs[id].done_ps.is_some() {
                self.delivered(id, t);
            }
        }
        self.engines[c].prog[step].sends = sends;
        self.try_complete(c, t);
    }

    fn delivered(&mut self, m: usize, t: u64) {
        let (dst, tag) = (self.net.msgs[m].dst, self.net.msgs[m].tag as usize);
        let e = &mut self.engines[dst];
        e.received[tag] += 1;
        if e.cur == tag && e.issued {
            self.try_complete(dst, t);
        }
    }

    fn try_complete(&mut self, c: usize, t: u64) {
        let e = &mut self.engines[c];
        if e.done_ps.is_some() || e.received[e.cur] < e.prog[e.cur].recvs {
            return;
        }
        if e.cur + 1 == e.prog.len() {
            e.done_ps = Some(t);
            return;
        }
        e.cur += 1;
        e.issued = false;
        self.timers.push(Reverse((t + self.overhead_ps, c)));
    }
}

impl Component for FabricRun {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        self.run_until(cx.now().as_ps());
        if let Some(t) = self.next_time() {
            cx.wake_at(Time::from_ps(t));
        }
        cx.progress();
        Activity::Idle
    }

    fn has_outstanding_work(&self) -> bool {
        self.finish_ps().is_none()
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        let end = self.finish_ps().unwrap_or(out.end_time().as_ps());
        let topo = self.net.topology();
        out.count("finish_ps", end);
        out.count("messages", self.net.msgs.len() as u64);
        out.count("events", self.events);
        out.histogram("msg_latency", "ns", &self.net.latency, 1e-3);
        for (i, e) in topo.edges.iter().enumerate() {
            let name = format!("edge.{}->{}", topo.nodes[e.from].name, topo.nodes[e.to].name);
            out.count(&format!("{name}.bytes"), self.net.edge_stats[i].bytes);
            out.value(&format!("{name}.utilization"), self.net.utilization(i, end));
        }
    }
}
