//! The switch as a kernel component: input buffers (virtual output queues or one FIFO),
//! a crossbar scheduled by an [`Arbiter`] `speedup` times per port cycle, output queues, and
//! credit-based back-pressure on both sides.
//!
//! ```text
//!  in p ──► arrival FIFO (the link's depth = credits upstream)
//!             │ admitted when the input buffer has room; keeps its header-arrival cycle
//!             ▼
//!           input buffer: VOQ[p][0..N] or FIFO[p]   (header in + latency = eligible)
//!             │ Requests ──► Arbiter ──► Matching, `speedup` crossbar cycles per port cycle
//!             ▼
//!           output queue[q] (output_buffer_cells) ──► out q, one cell per port cycle,
//!                                                      when the link has a credit
//! ```
//!
//! Timing, in port cycles (one cell per cycle per port): a packet of `k` cells whose tail
//! became visible on its input link at cycle `t` (links built by
//! [`SwitchConfig::port_link`] carry one cell per cycle) had its header at `h = t - (k - 1)`.
//! It may cross the crossbar from `max(h + L, t)` in cut-through and from `t + L` in
//! store-and-forward, where `L` = [`SwitchConfig::latency_cycles`]; the output sends its
//! header the cycle it crosses if the output is free. So at zero load the header leaves
//! exactly `L` cycles after it arrived in cut-through (while `k - 1 <= L`), and `k - 1` cycles
//! later in store-and-forward. A packet holds its input and output of the crossbar for `k`
//! crossbar cycles, and its output port for `k` port cycles.
//!
//! Left out: virtual channels and traffic classes, PCIe ordering rules, multicast, the link
//! layer (CRC, replay: see [`crate::link`]), and the header processing itself (a fixed
//! latency).

use super::arbiter::{self, Arbiter, Matching, Requests};
use super::config::{ConfigError, Forwarding, Queueing, SwitchConfig};
use super::portset::PortSet;
use super::routing::Routing;
use super::stats::SwitchStats;
use super::Packet;
use std::collections::VecDeque;
use trnsim_kernel::{Activity, Component, Ctx, InPort, OutPort, StatsWriter};

/// A packet inside the switch.
#[derive(Clone, Debug)]
struct Entry {
    pkt: Packet,
    out: u16,
    cells: u32,
    head: u64,
    eligible: u64,
}

struct Input {
    port: Option<InPort<Packet>>,
    /// Cycles at which the messages visible on the link but not yet admitted became visible.
    stamps: VecDeque<u64>,
    /// One queue per output (VOQ) or a single one (FIFO).
    queues: Vec<VecDeque<Entry>>,
    /// VOQ mode: the outputs whose queue is non-empty.
    nonempty: PortSet,
    cells: u32,
    free_round: u64,
}

struct Output {
    port: Option<OutPort<Packet>>,
    queue: VecDeque<Entry>,
    cells: u32,
    free_round: u64,
    /// First port cycle at which the next packet may start on the link.
    next_send: u64,
}

/// A crossbar switch of `ports` ports. See the module docs for its structure and timing.
pub struct Switch {
    cfg: SwitchConfig,
    latency: u64,
    arbiter: Box<dyn Arbiter>,
    routing: Box<dyn Routing>,
    inputs: Vec<Input>,
    outputs: Vec<Output>,
    req: Requests,
    matching: Matching,
    held: u64,
    stats: SwitchStats,
}

impl Switch {
    /// A switch for `cfg` (validated; the error names the field) routing with `routing`. Wire
    /// its ports with [`Switch::connect`] and put it on a clock at [`SwitchConfig::cell_clock`]
    /// (checked by [`SwitchConfig::check_clock`]).
    pub fn new(cfg: &SwitchConfig, routing: Box<dyn Routing>) -> Result<Switch, ConfigError> {
        cfg.validate()?;
        let n = usize::from(cfg.ports);
        let arbiter = arbiter::by_name(&cfg.arbiter, n, cfg.iterations).ok_or_else(|| ConfigError::BadField {
            field: "arbiter",
            value: cfg.arbiter.clone(),
            allowed: arbiter::names(),
        })?;
        Switch::with_arbiter(cfg, routing, arbiter)
    }

    /// As [`Switch::new`], but crossbar matchings come from `arbiter` (e.g. an RTL-backed one)
    /// instead of the one `cfg.arbiter` names; it must be for `cfg.ports` ports. It is called
    /// once per crossbar cycle that has requests (`speedup` times per port cycle at most).
    pub fn with_arbiter(
        cfg: &SwitchConfig,
        routing: Box<dyn Routing>,
        arbiter: Box<dyn Arbiter>,
    ) -> Result<Switch, ConfigError> {
        cfg.validate()?;
        let n = usize::from(cfg.ports);
        let queues = if cfg.queueing == Queueing::Voq { n } else { 1 };
        let input = || Input {
            port: None,
            stamps: VecDeque::new(),
            queues: vec![VecDeque::new(); queues],
            nonempty: PortSet::new(n),
            cells: 0,
            free_round: 0,
        };
        let output = || Output { port: None, queue: VecDeque::new(), cells: 0, free_round: 0, next_send: 0 };
        Ok(Switch {
            cfg: cfg.clone(),
            latency: cfg.latency_cycles(),
            arbiter,
            routing,
            inputs: (0..n).map(|_| input()).collect(),
            outputs: (0..n).map(|_| output()).collect(),
            req: Requests::new(n),
            matching: Matching::new(n),
            held: 0,
            stats: SwitchStats::new(n),
        })
    }

    /// Wires port `port`: packets arrive on `input` and leave on `output`.
    pub fn connect(&mut self, port: u16, input: InPort<Packet>, output: OutPort<Packet>) -> Result<(), ConfigError> {
        let n = self.cfg.ports;
        if port >= n {
            return Err(ConfigError::BadField { field: "port", value: port.to_string(), allowed: format!("< {n}") });
        }
        self.inputs[usize::from(port)].port = Some(input);
        self.outputs[usize::from(port)].port = Some(output);
        Ok(())
    }

    /// The configuration.
    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }
    /// Statistics so far.
    pub fn stats(&self) -> &SwitchStats {
        &self.stats
    }
    /// Packets inside the switch (input buffers and output queues).
    pub fn held_packets(&self) -> u64 {
        self.held
    }
    /// The arbiter's name.
    pub fn arbiter_name(&self) -> &'static str {
        self.arbiter.name()
    }
    /// The routing function's name.
    pub fn routing_name(&self) -> &'static str {
        self.routing.name()
    }

    /// Admits arrived packets while their input buffer has room. Returns whether any moved.
    fn receive(&mut self, cx: &mut Ctx<'_>, now: u64) -> bool {
        let mut moved = false;
        for p in 0..self.inputs.len() {
            let Some(port) = self.inputs[p].port else { continue };
            let visible = cx.arrived(port);
            let stamps = &mut self.inputs[p].stamps;
            while stamps.len() < visible {
                stamps.push_back(now);
            }
            while let Some(bytes) = cx.peek(port).map(|m| m.bytes) {
                let cells = self.cfg.cells(bytes);
                let inp = &self.inputs[p];
                if inp.cells > 0 && inp.cells + cells > self.cfg.input_buffer_cells {
                    break;
                }
                let Some(pkt) = cx.recv(port) else { break };
                let stamp = self.inputs[p].stamps.pop_front().unwrap_or(now);
                self.admit(p, pkt, cells, stamp, cx);
                moved = true;
            }
        }
        moved
    }

    fn admit(&mut self, p: usize, pkt: Packet, cells: u32, stamp: u64, cx: &mut Ctx<'_>) {
        let st = &mut self.stats.ports[p];
        st.in_packets += 1;
        st.in_bytes += u64::from(pkt.bytes);
        let out =
            self.routing.route(&pkt).filter(|&o| self.outputs.get(usize::from(o)).is_some_and(|o| o.port.is_some()));
        let Some(out) = out else {
            self.stats.unroutable_packets += 1;
            return;
        };
        let head = stamp.saturating_sub(u64::from(cells) - 1);
        let eligible = match self.cfg.forwarding {
            Forwarding::CutThrough => (head + self.latency).max(stamp),
            Forwarding::StoreAndForward => stamp + self.latency,
        };
        let q = if self.cfg.queueing == Queueing::Voq { usize::from(out) } else { 0 };
        let inp = &mut self.inputs[p];
        inp.queues[q].push_back(Entry { pkt, out, cells, head, eligible });
        inp.nonempty.insert(q);
        inp.cells += cells;
        self.held += 1;
        let st = &mut self.stats.ports[p];
        st.max_queue_packets = st.max_queue_packets.max(inp.queues[q].len() as u64);
        st.occupancy_cells.set(cx.now(), u64::from(inp.cells));
    }

    /// Whether output `j` can take `cells` in crossbar cycle `round`.
    fn output_ready(&self, j: usize, cells: u32, round: u64) -> bool {
        let o = &self.outputs[j];
        o.free_round <= round && (o.cells == 0 || o.cells + cells <= self.cfg.output_buffer_cells)
    }

    /// One crossbar cycle: requests, arbitration, transfers. Returns whether any moved.
    fn crossbar(&mut self, cx: &mut Ctx<'_>, now: u64, round: u64) -> bool {
        self.req.clear();
        for i in 0..self.inputs.len() {
            let inp = &self.inputs[i];
            if inp.free_round > round {
                continue;
            }
            for q in inp.nonempty.iter() {
                let e = inp.queues[q].front().expect("non-empty queue");
                if e.eligible <= now && self.output_ready(usize::from(e.out), e.cells, round) {
                    self.req.add(i, usize::from(e.out));
                }
            }
        }
        if self.req.is_empty() {
            return false;
        }
        self.stats.arbitrations += 1;
        self.arbiter.arbitrate(&self.req, &mut self.matching);
        debug_assert_eq!(self.matching.check(&self.req), Ok(()), "arbiter {}", self.arbiter.name());
        let mut moved = false;
        for i in 0..self.inputs.len() {
            if let Some(j) = self.matching.out_of[i] {
                self.transfer(cx, i, usize::from(j), now, round);
                moved = true;
            }
        }
        moved
    }

    fn transfer(&mut self, cx: &mut Ctx<'_>, i: usize, j: usize, now: u64, round: u64) {
        let q = if self.cfg.queueing == Queueing::Voq { j } else { 0 };
        let inp = &mut self.inputs[i];
        let e = inp.queues[q].pop_front().expect("a matched input holds a packet for its output");
        if inp.queues[q].is_empty() {
            inp.nonempty.remove(q);
        }
        inp.cells -= e.cells;
        inp.free_round = round + u64::from(e.cells);
        let st = &mut self.stats.ports[i];
        st.queueing_cycles.record(now - e.eligible);
        st.occupancy_cells.set(cx.now(), u64::from(inp.cells));
        self.stats.crossbar_cells += u64::from(e.cells);
        let o = &mut self.outputs[j];
        o.free_round = round + u64::from(e.cells);
        o.cells += e.cells;
        o.queue.push_back(e);
    }

    /// Sends output-queue heads on links that have a credit. Returns whether any moved.
    fn drain(&mut self, cx: &mut Ctx<'_>, now: u64) -> bool {
        let mut moved = false;
        for j in 0..self.outputs.len() {
            let o = &mut self.outputs[j];
            let Some(port) = o.port else { continue };
            while o.next_send <= now && !o.queue.is_empty() && cx.can_send(port) {
                let e = o.queue.pop_front().expect("non-empty");
                let (bytes, cells) = (e.pkt.bytes, e.cells);
                if let Err(b) = cx.send(port, e.pkt) {
                    unreachable!("can_send said yes: {:?}", b.0);
                }
                o.cells -= cells;
                o.next_send = now + u64::from(cells);
                self.held -= 1;
                let st = &mut self.stats.ports[j];
                st.out_packets += 1;
                st.out_bytes += u64::from(bytes);
                st.out_cells += u64::from(cells);
                st.latency_cycles.record(now - e.head);
                moved = true;
            }
        }
        moved
    }

    /// The first port cycle after `now` at which something internal (a packet leaving the
    /// pipeline, a crossbar port or an output link freeing) could let a packet move.
    fn next_internal_event(&self, now: u64) -> Option<u64> {
        let s = u64::from(self.cfg.speedup);
        let later = |c: u64| if c > now { c } else { u64::MAX };
        let mut next = u64::MAX;
        for inp in &self.inputs {
            for q in inp.nonempty.iter() {
                next = next.min(inp.queues[q].front().map_or(u64::MAX, |e| later(e.eligible)));
            }
            next = next.min(later(inp.free_round / s));
        }
        for o in &self.outputs {
            next = next.min(later(o.free_round / s));
            if !o.queue.is_empty() {
                next = next.min(later(o.next_send));
            }
        }
        (next != u64::MAX).then_some(next)
    }
}

impl Component for Switch {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle().0;
        let mut moved = self.receive(cx, now);
        let s = u64::from(self.cfg.speedup);
        for r in 0..s {
            moved |= self.crossbar(cx, now, now * s + r);
        }
        moved |= self.drain(cx, now);
        if self.held == 0 {
            return Activity::Idle; // woken by the next arrival
        }
        if moved {
            return Activity::Busy;
        }
        // Nothing moved: wait for an internal event, an arrival, or a credit or free link on
        // an output (the kernel wakes us for the last two).
        if let Some(c) = self.next_internal_event(now) {
            let t = cx.clock().edge(c);
            cx.wake_at(t);
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        self.stats.report(out, self.cfg.cycle_ps());
        out.count("held_packets", self.held);
    }

    fn has_outstanding_work(&self) -> bool {
        self.held > 0
    }
}
