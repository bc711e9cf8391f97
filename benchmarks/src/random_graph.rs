//! Random graphs of chattering components: the kernel's stress system. Random clocks
//! (333 MHz-2.4 GHz), links with random latency, depth, credit latency and bandwidth, and
//! components that create, forward and consume messages with random hop budgets. Used by the
//! order-independence and partitioned-run tests, and by `trnsim run kernel-random-graph:SEED`
//! (serial, threads or MPI). Many seeds end in a deadlock (full cycles of links); that is part
//! of what they test.

use std::collections::VecDeque;
use trnsim_kernel::{
    Activity, Bandwidth, Component, Ctx, Cycles, Dur, Flow, Frequency, InPort, LinkSpec, OutPort, Payload, SimBuilder,
    SimOptions, SimRng, StatsWriter, TickOrder,
};

/// The seed of `kernel-random-graph:SEED` (a number, 0..=2^64-1).
pub fn seed_of(name: &str) -> Result<u64, String> {
    name.strip_prefix("kernel-random-graph:").and_then(|s| s.parse().ok()).ok_or_else(|| {
        format!("{name:?}: the seed after `kernel-random-graph:` must be a number (0..=18446744073709551615)")
    })
}

/// A message of the random graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    /// Unique id: creator << 32 | sequence.
    pub id: u64,
    /// Hops before it is consumed.
    pub hops_left: u8,
}

impl Payload for Msg {
    fn size_bytes(&self) -> u32 {
        8 + u32::from(self.hops_left) * 8
    }
    fn trace_bits(&self) -> u64 {
        self.id
    }
    fn encode(&self, out: &mut Vec<u8>) -> bool {
        out.extend_from_slice(&self.id.to_le_bytes());
        out.push(self.hops_left);
        true
    }
    fn decode(b: &[u8]) -> Option<Self> {
        let (id, h) = b.split_at_checked(8)?;
        match h {
            [hops_left] => Some(Msg { id: u64::from_le_bytes(id.try_into().ok()?), hops_left: *hops_left }),
            _ => None,
        }
    }
}

/// Receives, queues and forwards messages; creates new ones while its budget lasts; consumes
/// messages whose hop budget is spent.
pub struct Chatter {
    ins: Vec<InPort<Msg>>,
    outs: Vec<OutPort<Msg>>,
    queue: VecDeque<Msg>,
    cap: usize,
    budget: u64,
    rate: f64,
    rng: SimRng,
    me: u64,
    created: (u64, u64, u64),
    consumed: (u64, u64, u64),
}

impl Chatter {
    /// Messages created here: (count, sum of ids, sum of squared ids), wrapping.
    pub fn created(&self) -> (u64, u64, u64) {
        self.created
    }
    /// Messages consumed here, the same way.
    pub fn consumed(&self) -> (u64, u64, u64) {
        self.consumed
    }
    /// Messages still queued here.
    pub fn queued(&self) -> impl Iterator<Item = &Msg> {
        self.queue.iter()
    }
}

/// Adds id to a (count, sum, sum of squares) tally.
pub fn acc(a: &mut (u64, u64, u64), id: u64) {
    a.0 += 1;
    a.1 = a.1.wrapping_add(id);
    a.2 = a.2.wrapping_add(id.wrapping_mul(id));
}

impl Component for Chatter {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        for i in 0..self.ins.len() {
            while self.queue.len() < self.cap {
                let Some(m) = cx.recv(self.ins[i]) else { break };
                if m.hops_left == 0 {
                    acc(&mut self.consumed, m.id);
                    if let Some(mut t) = cx.tracer() {
                        let tr = t.own_track();
                        t.instant(tr, "consume", Flow::End(m.id), None);
                    }
                } else {
                    self.queue.push_back(Msg { id: m.id, hops_left: m.hops_left - 1 });
                }
            }
        }
        if self.budget > 0 && self.queue.len() < self.cap && self.rng.chance(self.rate) {
            self.budget -= 1;
            let id = (self.me << 32) | self.created.0;
            acc(&mut self.created, id);
            self.queue.push_back(Msg { id, hops_left: (id % 5) as u8 });
            let now = cx.now();
            if let Some(mut t) = cx.tracer() {
                let tr = t.own_track();
                t.slice(tr, "create", now, now, Flow::Step(id), None);
            }
        }
        let mut sent = 0;
        while let Some(&m) = self.queue.front() {
            if self.outs.is_empty() {
                break;
            }
            let o = self.outs[(m.id.wrapping_mul(0x9E37) as usize + m.hops_left as usize) % self.outs.len()];
            if cx.send(o, m).is_err() {
                break;
            }
            self.queue.pop_front();
            sent += 1;
            if sent == 2 {
                break;
            }
        }
        if self.budget > 0 || (!self.queue.is_empty() && sent > 0) {
            Activity::Busy
        } else {
            if !self.queue.is_empty() {
                cx.wake_after(Cycles(3));
            }
            Activity::Idle
        }
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("created", self.created.0);
        out.count("consumed", self.consumed.0);
        out.count("queued", self.queue.len() as u64);
    }
    fn has_outstanding_work(&self) -> bool {
        !self.queue.is_empty()
    }
}

/// Random graph `seed` (tick order `order`); also returns every link's depth.
pub fn builder(seed: u64, order: TickOrder) -> (SimBuilder, Vec<u32>) {
    let mut r = SimRng::new(seed, 999);
    let opts = SimOptions { seed, tick_order: order, deadlock_window: Dur::from_us(20) };
    let mut b = SimBuilder::with_options(opts);
    let freqs = [1400, 2400, 1000, 333, 1750];
    let nclk = 1 + r.below(4) as usize;
    let clocks: Vec<_> = (0..nclk).map(|i| b.clock(&format!("c{i}"), Frequency::from_mhz(freqs[i])).unwrap()).collect();
    let n = 3 + r.below(10) as usize;
    let ids: Vec<_> =
        (0..n).map(|i| b.reserve(&format!("g.n{i}"), clocks[r.below(nclk as u64) as usize]).unwrap()).collect();
    let mut ins = vec![Vec::new(); n];
    let mut outs = vec![Vec::new(); n];
    let mut depths = Vec::new();
    for i in 0..n {
        let fanout = 1 + r.below(3) as usize;
        for k in 0..fanout {
            let j = r.below(n as u64) as usize;
            let bw = match r.below(3) {
                0 => Bandwidth::Unlimited,
                1 => Bandwidth::BytesPerCycle(1 + r.below(32) as u32),
                _ => Bandwidth::MessagesPerCycle(1 + r.below(2) as u32),
            };
            let spec = LinkSpec {
                latency: Cycles(1 + r.below(4)),
                depth: 1 + r.below(4) as u32,
                credit_latency: Cycles(1 + r.below(3)),
                bandwidth: bw,
            };
            depths.push(spec.depth);
            let (tx, rx) = b.link::<Msg>(ids[i], &format!("o{k}"), ids[j], &format!("i{i}_{k}"), spec).unwrap();
            outs[i].push(tx);
            ins[j].push(rx);
        }
    }
    for i in 0..n {
        let c = Chatter {
            ins: std::mem::take(&mut ins[i]),
            outs: std::mem::take(&mut outs[i]),
            queue: VecDeque::new(),
            cap: 2 + r.below(6) as usize,
            budget: 20 + r.below(200),
            rate: 0.1 + r.unit_f64() * 0.8,
            rng: SimRng::new(seed, i as u64),
            me: i as u64,
            created: (0, 0, 0),
            consumed: (0, 0, 0),
        };
        b.install(ids[i], c).unwrap();
    }
    (b, depths)
}
