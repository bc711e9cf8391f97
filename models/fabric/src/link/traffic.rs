//! A packet source and an order-checking sink, for link (and later switch) tests and benchmarks.
//!
//! ```text
//!  PacketSource ──Packet──► (device under test) ──Packet──► OrderedSink
//!  flows x seq 0,1,2..                                       per flow: next seq expected
//! ```
//!
//! The source numbers packets per flow; the sink checks that each flow's packets arrive
//! exactly once and in order, and says what went wrong first. Leaves out: payload contents
//! (packets carry sizes only), and closed-loop (request/response) traffic.

use crate::link::flit::Packet;
use trnsim_kernel::{Activity, Blocked, Component, Ctx, Dur, Histogram, InPort, OutPort, SimRng, StatsWriter, Time};

/// What a [`PacketSource`] offers.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceSpec {
    /// Flows, chosen uniformly per packet (>= 1).
    pub flows: u32,
    /// Packets to send in all.
    pub count: u64,
    /// Payload sizes in bytes, chosen uniformly per packet (non-empty).
    pub sizes: Vec<u32>,
    /// One packet per interval; `None` sends as fast as the output accepts (saturation).
    pub interval: Option<Dur>,
    /// Source endpoint id stamped on packets.
    pub src: u32,
    /// Destination endpoint id stamped on packets.
    pub dst: u32,
}

/// Sends `count` seeded random packets (flow and size drawn per packet), numbered per flow.
pub struct PacketSource {
    out: OutPort<Packet>,
    spec: SourceSpec,
    rng: SimRng,
    per_flow: Vec<u64>,
    pending: Option<Packet>,
    sent: u64,
    next_at: Time,
}

impl PacketSource {
    /// A source on `out` drawing from stream `stream` of run seed `seed`.
    pub fn new(out: OutPort<Packet>, spec: SourceSpec, seed: u64, stream: u64) -> PacketSource {
        let flows = spec.flows.max(1) as usize;
        PacketSource {
            out,
            spec,
            rng: SimRng::new(seed, stream),
            per_flow: vec![0; flows],
            pending: None,
            sent: 0,
            next_at: Time::ZERO,
        }
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Packets sent (or drawn and waiting) per flow.
    pub fn per_flow(&self) -> &[u64] {
        &self.per_flow
    }

    /// True once all packets are sent.
    pub fn done(&self) -> bool {
        self.sent >= self.spec.count
    }

    fn draw(&mut self, now: Time) -> Packet {
        let flow = self.rng.below(self.per_flow.len() as u64) as usize;
        let sizes = &self.spec.sizes;
        let bytes = if sizes.is_empty() { 0 } else { sizes[self.rng.below(sizes.len() as u64) as usize] };
        let seq = self.per_flow[flow];
        self.per_flow[flow] += 1;
        Packet { flow: flow as u32, bytes, seq, src: self.spec.src, dst: self.spec.dst, born: now }
    }
}

impl Component for PacketSource {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.now();
        while !self.done() && now >= self.next_at {
            let p = match self.pending.take() {
                Some(p) => p,
                None => self.draw(now),
            };
            if let Err(Blocked(p)) = cx.send(self.out, p) {
                self.pending = Some(p);
                return Activity::Idle;
            }
            self.sent += 1;
            if let Some(i) = self.spec.interval {
                self.next_at = now + i;
            }
        }
        if !self.done() {
            cx.wake_at(self.next_at);
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets_sent", self.sent);
    }

    fn has_outstanding_work(&self) -> bool {
        !self.done()
    }
}

/// Receives packets and checks that every flow's arrive exactly once, in order; optionally
/// accepts at most one packet per interval (a slow consumer, to exercise back-pressure).
pub struct OrderedSink {
    input: InPort<Packet>,
    interval: Option<Dur>,
    next_at: Time,
    next: Vec<u64>,
    /// Packets received.
    pub received: u64,
    /// Payload bytes received.
    pub bytes: u64,
    /// Packets that arrived a second time (or after a later one of their flow).
    pub duplicates: u64,
    /// Packets skipped: a later one of their flow arrived first.
    pub missing: u64,
    /// End-to-end latency from the source's `born` stamp, in picoseconds.
    pub latency_ps: Histogram,
    /// Time of the last arrival.
    pub last_arrival: Time,
    first_violation: Option<String>,
}

impl OrderedSink {
    /// A sink on `input`, taking at most one packet per `interval` if given.
    pub fn new(input: InPort<Packet>, interval: Option<Dur>) -> OrderedSink {
        OrderedSink {
            input,
            interval,
            next_at: Time::ZERO,
            next: Vec::new(),
            received: 0,
            bytes: 0,
            duplicates: 0,
            missing: 0,
            latency_ps: Histogram::new(),
            last_arrival: Time::ZERO,
            first_violation: None,
        }
    }

    fn check(&mut self, p: &Packet) {
        let flow = p.flow as usize;
        if self.next.len() <= flow {
            self.next.resize(flow + 1, 0);
        }
        let want = self.next[flow];
        if p.seq == want {
            self.next[flow] += 1;
            return;
        }
        let what = if p.seq < want {
            self.duplicates += 1;
            format!("flow {flow}: seq {} arrived again (expected {want})", p.seq)
        } else {
            self.missing += p.seq - want;
            self.next[flow] = p.seq + 1;
            format!("flow {flow}: seq {} arrived while {want} was expected", p.seq)
        };
        self.first_violation.get_or_insert(what);
    }

    /// Checks the run against what the source sent per flow: `Err` names the first
    /// duplicate, gap or missing tail.
    pub fn verify(&self, sent_per_flow: &[u64]) -> Result<(), String> {
        if let Some(v) = &self.first_violation {
            return Err(v.clone());
        }
        for (flow, &sent) in sent_per_flow.iter().enumerate() {
            let got = self.next.get(flow).copied().unwrap_or(0);
            if got != sent {
                return Err(format!("flow {flow}: {got} of {sent} packets arrived"));
            }
        }
        Ok(())
    }
}

impl Component for OrderedSink {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.now();
        while now >= self.next_at {
            let Some(p) = cx.recv(self.input) else { break };
            self.check(&p);
            self.received += 1;
            self.bytes += u64::from(p.bytes);
            self.latency_ps.record(now.since(p.born).as_ps());
            self.last_arrival = now;
            if let Some(i) = self.interval {
                self.next_at = now + i;
            }
        }
        if cx.arrived(self.input) > 0 {
            cx.wake_at(self.next_at);
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets", self.received);
        out.count("payload_bytes", self.bytes);
        out.count("duplicates", self.duplicates);
        out.count("missing", self.missing);
        out.histogram("latency", "ns", &self.latency_ps, 1e-3);
    }
}
