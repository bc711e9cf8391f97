//! The injector: Bernoulli arrivals at an offered load, destinations by a [`Pattern`],
//! fixed-size packets, an unbounded source queue (open loop, as in BookSim), so that offered
//! load does not bend to back-pressure and latency counts the time waiting at the source.

use super::pattern::Pattern;
use crate::switch::Packet;
use std::collections::VecDeque;
use trnsim_kernel::{Activity, Component, Ctx, OutPort, SimRng, StatsWriter, Time};

/// What an injector sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InjectorParams {
    /// Its endpoint id (the packets' `src`).
    pub src: u16,
    /// Endpoints `0..destinations` the pattern picks from.
    pub destinations: u16,
    /// How each packet's destination is chosen (uniform: the injector's own id included, as in
    /// the head-of-line model where inputs and outputs are different sides of the switch).
    pub pattern: Pattern,
    /// Offered load in cells per port cycle, in [0, 1].
    pub load: f64,
    /// Bytes per packet.
    pub packet_bytes: u32,
    /// Cells per packet (offered load / cells = packets per cycle).
    pub cells: u32,
    /// Stop creating packets after this many (None: never stop).
    pub limit: Option<u64>,
    /// Run seed (the stream is the source id).
    pub seed: u64,
}

/// Creates packets as a Bernoulli process (one trial per port cycle, drawn as geometric gaps so
/// an idle injector sleeps) and sends them, oldest first, as credits allow.
pub struct Injector {
    p: InjectorParams,
    out: OutPort<Packet>,
    rng: SimRng,
    /// Probability of a packet in a cycle.
    prob: f64,
    next_gen: u64,
    queue: VecDeque<(Time, u16)>,
    /// Packets created.
    pub created: u64,
    /// Packets sent.
    pub sent: u64,
    /// Largest source queue, packets.
    pub max_queue: u64,
}

impl Injector {
    /// An injector sending on `out`.
    pub fn new(p: InjectorParams, out: OutPort<Packet>) -> Injector {
        let prob = (p.load / f64::from(p.cells.max(1))).clamp(0.0, 1.0);
        let mut inj = Injector {
            p,
            out,
            rng: SimRng::new(p.seed, 0x1_0000 + u64::from(p.src)),
            prob,
            next_gen: u64::MAX,
            queue: VecDeque::new(),
            created: 0,
            sent: 0,
            max_queue: 0,
        };
        if prob > 0.0 {
            inj.next_gen = inj.gap() - 1;
        }
        inj
    }

    /// Cycles to the next packet (>= 1): geometric with success probability `load / cells`.
    fn gap(&mut self) -> u64 {
        if self.prob >= 1.0 {
            return 1;
        }
        let u = 1.0 - self.rng.unit_f64(); // (0, 1]
        1 + (u.ln() / (1.0 - self.prob).ln()).floor().min(1e15) as u64
    }

    /// Packets waiting at the source.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }
    /// Whether it has created its last packet (only with a limit).
    pub fn exhausted(&self) -> bool {
        self.p.limit.is_some_and(|l| self.created >= l)
    }

    fn generate(&mut self, cx: &mut Ctx<'_>, now: u64) {
        while self.next_gen <= now && !self.exhausted() {
            let dst = self.p.pattern.destination(self.p.src, self.created, self.p.destinations, &mut self.rng);
            let at = cx.clock().edge(self.next_gen);
            self.queue.push_back((at, dst));
            self.created += 1;
            self.next_gen = self.next_gen.saturating_add(self.gap());
        }
        self.max_queue = self.max_queue.max(self.queue.len() as u64);
    }
}

impl Component for Injector {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle().0;
        self.generate(cx, now);
        let mut sent = false;
        if let Some(&(created, dst)) = self.queue.front() {
            if cx.can_send(self.out) {
                let p = &self.p;
                let flow = (u32::from(p.src) << 16) | u32::from(dst);
                let pkt = Packet { src: p.src, dst, flow, seq: self.sent, bytes: p.packet_bytes, created };
                if cx.send(self.out, pkt).is_ok() {
                    self.queue.pop_front();
                    self.sent += 1;
                    sent = true;
                }
            }
        }
        if sent && !self.queue.is_empty() {
            return Activity::Busy;
        }
        if !self.exhausted() && self.next_gen != u64::MAX {
            let t = cx.clock().edge(self.next_gen);
            cx.wake_at(t);
        }
        Activity::Idle // a blocked send is retried when a credit returns or the link frees
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("created_packets", self.created);
        out.count("sent_packets", self.sent);
        out.count("queued_packets", self.queue.len() as u64);
        out.count("max_queue_packets", self.max_queue);
    }

    fn has_outstanding_work(&self) -> bool {
        !self.queue.is_empty()
    }
}
