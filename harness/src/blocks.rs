//! Generic traffic blocks that config-described systems are made of: a packet source, a
//! pipelined relay and a sink that measures end-to-end latency. They exercise the kernel
//! (multi-clock links, credits, bandwidth limits, traces) before real hardware models exist.

use trnsim_kernel::{
    Activity, Arg, Component, Ctx, Cycles, Flow, Histogram, InPort, OutPort, Payload, SimRng, StatsWriter, Time,
};

/// A packet: an id (unique per run), its size, and when it was created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique id: source index in the high bits, sequence number in the low bits.
    pub id: u64,
    /// Size on the wire, bytes.
    pub bytes: u32,
    /// Creation time (for end-to-end latency).
    pub born: Time,
}

impl Payload for Packet {
    fn size_bytes(&self) -> u32 {
        self.bytes
    }
    fn trace_bits(&self) -> u64 {
        self.id
    }
}

/// Injects `count` packets of `bytes` bytes, each cycle with probability `rate`, as fast as
/// credits allow. Leaves out: destinations (one output), traffic patterns beyond Bernoulli.
pub struct Source {
    /// Output port.
    pub out: OutPort<Packet>,
    /// Packets still to send.
    pub remaining: u64,
    /// Packet size, bytes.
    pub bytes: u32,
    /// Injection probability per cycle (0..=1).
    pub rate: f64,
    /// Stream of random draws.
    pub rng: SimRng,
    /// Id prefix (source index << 32).
    pub id_base: u64,
    sent: u64,
    stalled_cycles: u64,
    ready: Option<Packet>,
}

impl Source {
    /// A source sending `count` packets on `out`.
    pub fn new(out: OutPort<Packet>, count: u64, bytes: u32, rate: f64, rng: SimRng, index: u32) -> Source {
        Source {
            out,
            remaining: count,
            bytes,
            rate,
            rng,
            id_base: u64::from(index) << 32,
            sent: 0,
            stalled_cycles: 0,
            ready: None,
        }
    }
}

impl Component for Source {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        if self.ready.is_none() && self.remaining > 0 && self.rng.chance(self.rate) {
            self.ready = Some(Packet { id: self.id_base | self.sent, bytes: self.bytes, born: cx.now() });
            self.remaining -= 1;
            self.sent += 1;
        }
        if let Some(p) = self.ready.take() {
            match cx.send(self.out, p) {
                Ok(()) => {
                    if let Some(mut t) = cx.tracer() {
                        let track = t.own_track();
                        t.instant(
                            track,
                            "inject",
                            Flow::Step(p.id),
                            Some(Arg { key: "bytes", value: i64::from(p.bytes) }),
                        );
                    }
                }
                Err(b) => {
                    self.stalled_cycles += 1;
                    self.ready = Some(b.0);
                    return Activity::Idle;
                }
            }
        }
        if self.remaining > 0 || self.ready.is_some() {
            Activity::Busy
        } else {
            Activity::Idle
        }
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets_sent", self.sent);
        out.count("stalled_cycles", self.stalled_cycles);
    }
    fn has_outstanding_work(&self) -> bool {
        self.ready.is_some()
    }
}

/// Forwards packets from `input` to `output` after `delay` cycles, holding at most `slots`
/// packets. Models a pipelined stage (a switch hop, a retimer). Leaves out: reordering.
pub struct Relay {
    /// Input port.
    pub input: InPort<Packet>,
    /// Output port.
    pub output: OutPort<Packet>,
    /// Pipeline delay in this component's cycles (>= 1).
    pub delay: u64,
    pipe: std::collections::VecDeque<(u64, Time, Packet)>,
    slots: usize,
    forwarded: u64,
}

impl Relay {
    /// A relay with a `delay`-cycle pipeline of `slots` entries.
    pub fn new(input: InPort<Packet>, output: OutPort<Packet>, delay: u64, slots: usize) -> Relay {
        Relay {
            input,
            output,
            delay: delay.max(1),
            pipe: std::collections::VecDeque::with_capacity(slots.min(64)),
            slots,
            forwarded: 0,
        }
    }
}

impl Component for Relay {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now_cycle = cx.cycle().0;
        if let Some(&(ready, entered, p)) = self.pipe.front() {
            if ready <= now_cycle && cx.send(self.output, p).is_ok() {
                self.pipe.pop_front();
                self.forwarded += 1;
                let now = cx.now();
                if let Some(mut t) = cx.tracer() {
                    let track = t.own_track();
                    t.slice(track, "forward", entered, now, Flow::Step(p.id), None);
                }
            }
        }
        if self.pipe.len() < self.slots {
            if let Some(p) = cx.recv(self.input) {
                self.pipe.push_back((now_cycle.saturating_add(self.delay), cx.now(), p));
            }
        }
        match self.pipe.front() {
            Some(&(ready, _, _)) if ready > now_cycle => {
                cx.wake_after(Cycles(ready - now_cycle));
                if self.pipe.len() < self.slots && cx.peek(self.input).is_some() {
                    Activity::Busy
                } else {
                    Activity::Idle
                }
            }
            Some(_) => Activity::Busy,
            None if cx.peek(self.input).is_some() => Activity::Busy,
            None => Activity::Idle,
        }
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets_forwarded", self.forwarded);
    }
    fn has_outstanding_work(&self) -> bool {
        !self.pipe.is_empty()
    }
}

/// Consumes packets and records their end-to-end latency.
pub struct Sink {
    /// Input port.
    pub input: InPort<Packet>,
    latency_ps: Histogram,
    bytes: u64,
}

impl Sink {
    /// A sink on `input`.
    pub fn new(input: InPort<Packet>) -> Sink {
        Sink { input, latency_ps: Histogram::new(), bytes: 0 }
    }
    /// Packets received.
    pub fn received(&self) -> u64 {
        self.latency_ps.count()
    }
    /// Bytes received.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Component for Sink {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        while let Some(p) = cx.recv(self.input) {
            self.latency_ps.record(cx.now().since(p.born).as_ps());
            self.bytes += u64::from(p.bytes);
            if let Some(mut t) = cx.tracer() {
                let track = t.own_track();
                t.instant(track, "deliver", Flow::End(p.id), None);
            }
        }
        Activity::Idle
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("packets_received", self.latency_ps.count());
        out.count("bytes", self.bytes);
        out.histogram("latency", "ns", &self.latency_ps, 1e-3);
        let secs = out.end_time().as_ps() as f64 * 1e-12;
        if secs > 0.0 {
            out.value("bytes_per_s", self.bytes as f64 / secs);
        }
    }
}
