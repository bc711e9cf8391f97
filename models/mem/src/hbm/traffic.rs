//! Request sources and the traffic-generator component that drives a stack with them.
//!
//! A [`RequestSource`] yields requests (synthetic patterns here; trace files in the harness,
//! which does the I/O). [`TrafficGen`] offers them to a stack open-loop with back-pressure: up
//! to `width` per cycle, never more than `in_flight` outstanding, never before a request's own
//! cycle stamp (DRAMsim3 traces), and at most `rate` per cycle on average (for loaded-latency
//! sweeps). It measures latency from offer to response.

use crate::hbm::mapping::AddressMap;
use crate::hbm::org::Location;
use crate::hbm::stack::{MemReq, MemResp};
use trnsim_kernel::{Activity, Component, Ctx, Histogram, InPort, OutPort, SimRng, StatsWriter};

/// One request from a source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceReq {
    /// Byte address.
    pub addr: u64,
    /// Write (else read).
    pub write: bool,
    /// Earliest cycle it may be offered (DRAMsim3 traces), in the generator's clock.
    pub cycle: Option<u64>,
}

/// Yields requests in order. `None` ends the stream.
pub trait RequestSource {
    /// The next request.
    fn next_request(&mut self) -> Option<SourceReq>;
}

/// Synthetic access patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Sequential reads over the footprint, wrapping.
    StreamRead,
    /// Sequential writes over the footprint, wrapping.
    StreamWrite,
    /// Uniformly random reads.
    RandomRead,
    /// Uniformly random, two reads to one write.
    Mix,
    /// Reads to one bank (channel 0, pseudo-channel 0, bank 0), a new row each time: every
    /// access is a row conflict, bounded by tRC.
    SameBank,
}

impl Pattern {
    /// Every pattern with its benchmark name.
    pub const ALL: [(Pattern, &'static str); 5] = [
        (Pattern::StreamRead, "stream-read"),
        (Pattern::StreamWrite, "stream-write"),
        (Pattern::RandomRead, "random"),
        (Pattern::Mix, "mix"),
        (Pattern::SameBank, "same-bank"),
    ];
}

/// A seeded synthetic source of `count` requests of `access` bytes over `footprint` bytes.
pub struct Synthetic {
    pattern: Pattern,
    count: u64,
    i: u64,
    rng: SimRng,
    footprint: u64,
    access: u64,
    map: AddressMap,
    rows: u32,
}

impl Synthetic {
    /// A source; `map` is the stack's map (used by [`Pattern::SameBank`]).
    pub fn new(
        pattern: Pattern,
        count: u64,
        seed: u64,
        footprint: u64,
        access: u64,
        map: &AddressMap,
        rows: u32,
    ) -> Self {
        let footprint = (footprint.min(map.capacity()) / access).max(1) * access;
        Synthetic { pattern, count, i: 0, rng: SimRng::new(seed, 7), footprint, access, map: map.clone(), rows }
    }
}

impl RequestSource for Synthetic {
    fn next_request(&mut self) -> Option<SourceReq> {
        if self.i >= self.count {
            return None;
        }
        let i = self.i;
        self.i += 1;
        let blocks = self.footprint / self.access;
        let random = |rng: &mut SimRng| rng.below(blocks) * self.access;
        let (addr, write) = match self.pattern {
            Pattern::StreamRead => ((i % blocks) * self.access, false),
            Pattern::StreamWrite => ((i % blocks) * self.access, true),
            Pattern::RandomRead => (random(&mut self.rng), false),
            Pattern::Mix => (random(&mut self.rng), i % 3 == 2),
            Pattern::SameBank => {
                let loc = Location { row: (i % self.rows as u64) as u32, ..Location::default() };
                (self.map.encode(&loc), false)
            }
        };
        Some(SourceReq { addr, write, cycle: None })
    }
}

/// Generator parameters.
#[derive(Clone, Copy, Debug)]
pub struct GenParams {
    /// Most requests offered per cycle.
    pub width: u32,
    /// Most requests outstanding.
    pub in_flight: u32,
    /// Average requests per cycle (f64::INFINITY = as fast as allowed).
    pub rate: f64,
    /// Bytes per request (the stack's access size).
    pub bytes: u32,
}

/// Offers a source's requests to a stack and measures what comes back.
pub struct TrafficGen {
    src: Box<dyn RequestSource>,
    p: GenParams,
    out: OutPort<MemReq>,
    inp: InPort<MemResp>,
    pending: Option<SourceReq>,
    offered_at: Vec<u64>,
    free_tags: Vec<u32>,
    outstanding: u32,
    credit: f64,
    exhausted: bool,
    /// Requests sent.
    pub sent: u64,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Latency from offer to response, in cycles of this component's clock.
    pub latency: Histogram,
    first_cycle: Option<u64>,
    last_cycle: u64,
    /// Cycles the generator had a request to offer but waited because `in_flight` requests
    /// were outstanding (the cap bound it).
    pub capped_cycles: u64,
    capped_at: Option<u64>,
}

impl TrafficGen {
    /// A generator on the given ports.
    pub fn new(src: Box<dyn RequestSource>, p: GenParams, out: OutPort<MemReq>, inp: InPort<MemResp>) -> TrafficGen {
        let n = p.in_flight.max(1);
        TrafficGen {
            src,
            p,
            out,
            inp,
            pending: None,
            offered_at: vec![0; n as usize],
            free_tags: (0..n).rev().collect(),
            outstanding: 0,
            credit: 0.0,
            exhausted: false,
            sent: 0,
            reads: 0,
            writes: 0,
            latency: Histogram::new(),
            first_cycle: None,
            last_cycle: 0,
            capped_cycles: 0,
            capped_at: None,
        }
    }

    /// True once every request was sent and answered.
    pub fn finished(&self) -> bool {
        self.exhausted && self.pending.is_none() && self.outstanding == 0
    }

    /// Cycles from the first offer to the last response.
    pub fn active_cycles(&self) -> u64 {
        self.first_cycle.map_or(0, |f| self.last_cycle.saturating_sub(f))
    }

    fn receive(&mut self, cx: &mut Ctx<'_>, now: u64) {
        while let Some(r) = cx.recv(self.inp) {
            let tag = r.tag as u32;
            self.latency.record(now - self.offered_at[tag as usize]);
            self.free_tags.push(tag);
            self.outstanding -= 1;
            if r.write {
                self.writes += 1;
            } else {
                self.reads += 1;
            }
            self.last_cycle = now;
        }
    }

    /// Sends what it may this cycle; returns the cycle it next wants to run (if any).
    fn offer(&mut self, cx: &mut Ctx<'_>, now: u64) -> Option<u64> {
        if self.p.rate.is_finite() {
            self.credit = (self.credit + self.p.rate).min(self.p.width as f64);
        }
        let mut sent = 0;
        while sent < self.p.width && self.outstanding < self.p.in_flight {
            if self.p.rate.is_finite() && self.credit < 1.0 {
                return Some(now + 1);
            }
            if self.pending.is_none() && !self.exhausted {
                self.pending = self.src.next_request();
                self.exhausted = self.pending.is_none();
            }
            let req = self.pending?;
            if let Some(c) = req.cycle {
                if c > now {
                    return Some(c);
                }
            }
            let tag = *self.free_tags.last().expect("a free tag while below in_flight");
            let msg = MemReq { tag: tag as u64, addr: req.addr, write: req.write, bytes: self.p.bytes, data: None };
            if cx.send(self.out, msg).is_err() {
                return None; // woken by the credit return
            }
            self.free_tags.pop();
            self.offered_at[tag as usize] = now;
            self.first_cycle.get_or_insert(now);
            self.outstanding += 1;
            self.pending = None;
            self.sent += 1;
            sent += 1;
            self.credit -= 1.0;
        }
        if self.outstanding >= self.p.in_flight {
            if !self.exhausted {
                self.capped_at = Some(now);
            }
            None // woken by a response
        } else {
            Some(now + 1)
        }
    }
}

impl Component for TrafficGen {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.cycle().0;
        if let Some(at) = self.capped_at.take() {
            self.capped_cycles += now - at;
        }
        self.receive(cx, now);
        match self.offer(cx, now) {
            Some(n) if n == now + 1 => Activity::Busy,
            Some(n) => {
                let t = cx.clock().edge(n);
                cx.wake_at(t);
                Activity::Idle
            }
            None => Activity::Idle,
        }
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("sent", self.sent);
        out.count("reads", self.reads);
        out.count("writes", self.writes);
        out.count("active_cycles", self.active_cycles());
        out.histogram("latency", "cycles", &self.latency, 1.0);
    }

    fn has_outstanding_work(&self) -> bool {
        self.outstanding > 0
    }
}

/// Wires a generator to a new stack: `name` (the stack) and `name.gen`, both on `clock`.
/// Request and response links have one cycle of latency and `in_flight` slots, so they never
/// limit a generator that respects its in-flight bound. Returns (stack, generator) ids.
pub fn attach(
    b: &mut trnsim_kernel::SimBuilder,
    name: &str,
    clock: trnsim_kernel::ClockId,
    cfg: &crate::hbm::StackConfig,
    src: Box<dyn RequestSource>,
    p: GenParams,
    trace_tracks: bool,
) -> Result<(trnsim_kernel::ComponentId, trnsim_kernel::ComponentId), String> {
    use trnsim_kernel::{Bandwidth, Cycles, LinkSpec};
    let mut stack = crate::hbm::HbmStack::new(cfg)?;
    let sid = b.reserve(name, clock).map_err(|e| e.to_string())?;
    let gid = b.reserve(&format!("{name}.gen"), clock).map_err(|e| e.to_string())?;
    let depth = p.in_flight.max(1);
    let spec = LinkSpec { latency: Cycles(1), depth, credit_latency: Cycles(1), bandwidth: Bandwidth::Unlimited };
    let (req_out, req_in) = b.link::<MemReq>(gid, "req", sid, "req", spec).map_err(|e| e.to_string())?;
    let (resp_out, resp_in) = b.link::<MemResp>(sid, "resp", gid, "resp", spec).map_err(|e| e.to_string())?;
    stack.add_port(req_in, resp_out);
    if trace_tracks {
        stack.declare_tracks(b, sid);
    }
    b.install(sid, stack).map_err(|e| e.to_string())?;
    b.install(gid, TrafficGen::new(src, p, req_out, resp_in)).map_err(|e| e.to_string())?;
    Ok((sid, gid))
}
