//! The transmitting end of a link: credit check, packing, serialization at the lane rate, CRC
//! error injection on the wire, and a bounded go-back-N replay buffer.
//!
//! ```text
//!  in: Packet ─► credits? ─► Packer ─► [replay buffer] ─► Wire (lane rate) ─► flits: Flit
//!                 ▲                       ▲  replay from NAK'd seq    corrupt: p = 1-(1-ber)^bits
//!  dllps: Dllp ───┴─ UpdateFc ────────────┴─ Ack (purge) / Nak (replay)
//! ```
//!
//! Each tick: take the DLLPs (ACKs purge the replay buffer, a NAK purges what it implicitly
//! acknowledges and restarts transmission from its sequence number, credit updates add
//! credits); replay everything if the replay timer expired; then, while the lanes are free,
//! start the next unit: a replayed one, or a new one packed from input packets (each takes a
//! header credit and its data credits when packed; a packet that lacks credits waits on the
//! input). A unit is handed to the kernel link when its last bit is out, so the kernel latency
//! carries only PHY + wire + link-layer time.
//!
//! Timing is exact: the lanes' free time is a rational number of picoseconds, and a unit
//! starts at `max(lanes free, data ready)`, where "data ready" is the tick at which the
//! transmitter first could have sent (every change that makes it ready is a message arrival,
//! which ticks it). So a saturated link runs at exactly the lane rate whatever the clock.
//!
//! Leaves out: aborting a unit mid-serialization when a NAK arrives (the unit in flight
//! finishes first, as on real links), sequence-number wrap-around, and errors on DLLPs.

use crate::link::encoding::{BondedLink, Framing};
use crate::link::flit::{unit_error_probability, Carried, Dllp, Flit, Packer, Packet, Wire};
use crate::link::params::LinkParams;
use crate::link::stats::TxStats;
use std::collections::VecDeque;
use trnsim_kernel::{Activity, Blocked, Component, Ctx, Dur, InPort, OutPort, SimRng, StatsWriter, Time};

/// The kernel ports of a [`LinkTx`].
#[derive(Clone, Copy, Debug)]
pub struct TxPorts {
    /// Packets to send.
    pub input: InPort<Packet>,
    /// Wire units to the receiver (latency = PHY + wire + link layer).
    pub flits: OutPort<Flit>,
    /// ACK, NAK and credit updates from the receiver.
    pub dllps: InPort<Dllp>,
}

/// The transmitter's go-back-N replay buffer: units sent and not yet acknowledged, in sequence
/// order, with the sequence numbers, the replay position and epoch, and the replay timer's
/// last progress. [`LinkTx`] keeps its replay state here (and only here); trnsim-rtl's replay
/// buffer block is checked against it.
///
/// Rules: an ACK of `s` drops the units up to `s`; a NAK of `s` drops those up to `s - 1`, then
/// replays the rest from the oldest; while replaying, the next unit sent is the next one in the
/// buffer (with the new epoch), otherwise a new unit, if the buffer has room. Progress (for the
/// timer) is a drop, the start of a replay, or a new unit entering an empty buffer.
#[derive(Clone, Debug)]
pub struct ReplayBuffer {
    units: VecDeque<Flit>,
    /// During a replay: index in `units` of the next unit to send again.
    next: Option<usize>,
    capacity: usize,
    timeout: Dur,
    next_seq: u64,
    epoch: u32,
    last_progress: Time,
}

impl ReplayBuffer {
    /// An empty buffer of `capacity` units whose replay timer expires `timeout` after the last
    /// progress.
    pub fn new(capacity: usize, timeout: Dur) -> ReplayBuffer {
        ReplayBuffer {
            units: VecDeque::new(),
            next: None,
            capacity,
            timeout,
            next_seq: 0,
            epoch: 0,
            last_progress: Time::ZERO,
        }
    }

    /// Units held.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Whether it holds no unit.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Whether it has no room for a new unit.
    pub fn is_full(&self) -> bool {
        self.units.len() >= self.capacity
    }

    /// Whether a replay is under way (the next unit sent is a replayed one).
    pub fn replaying(&self) -> bool {
        self.next.is_some()
    }

    /// The sequence number the next new unit gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Replays started so far (the epoch new and replayed units carry).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The held units, oldest first.
    pub fn units(&self) -> impl Iterator<Item = &Flit> {
        self.units.iter()
    }

    /// An ACK of `seq`: drops the units up to `seq`. Returns how many it dropped.
    pub fn ack(&mut self, seq: u64, now: Time) -> usize {
        let mut n = 0;
        while self.units.front().is_some_and(|f| f.seq <= seq) {
            self.units.pop_front();
            n += 1;
        }
        if n > 0 {
            self.last_progress = now;
            self.next = self.next.map(|i| i.saturating_sub(n)).filter(|_| !self.units.is_empty());
        }
        n
    }

    /// A NAK of `seq`: drops the units up to `seq - 1` and starts a replay. Returns whether a
    /// replay started (not if the buffer is empty).
    pub fn nak(&mut self, seq: u64, now: Time) -> bool {
        if seq > 0 {
            self.ack(seq - 1, now);
        }
        self.start_replay(now)
    }

    /// Whether the replay timer has expired at `now` (units held, no progress for `timeout`).
    pub fn timed_out(&self, now: Time) -> bool {
        !self.units.is_empty() && now >= self.last_progress + self.timeout
    }

    /// When the timer expires if nothing happens (units held), or `None`.
    pub fn deadline(&self) -> Option<Time> {
        (!self.units.is_empty()).then(|| self.last_progress + self.timeout)
    }

    /// Replays every held unit from the oldest. Returns whether a replay started.
    pub fn start_replay(&mut self, now: Time) -> bool {
        if self.units.is_empty() {
            return false;
        }
        self.next = Some(0);
        self.epoch += 1;
        self.last_progress = now;
        true
    }

    /// During a replay, the next unit to send again (with the current epoch), and the replay
    /// moves on; `None` when not replaying.
    pub fn next_replayed(&mut self) -> Option<Flit> {
        let i = self.next.take()?;
        let f = self.units.get(i)?;
        let f = Flit { epoch: self.epoch, ..f.clone() };
        self.next = Some(i + 1).filter(|&j| j < self.units.len());
        Some(f)
    }

    /// Keeps new unit `f` (made with [`ReplayBuffer::next_seq`] and the epoch) until it is
    /// acknowledged; the next new unit gets the next sequence number.
    pub fn push(&mut self, f: Flit, now: Time) {
        self.next_seq += 1;
        if self.units.is_empty() {
            self.last_progress = now;
        }
        self.units.push_back(f);
    }
}

/// The transmitting end of one link direction (see the module docs).
pub struct LinkTx {
    link: BondedLink,
    ports: TxPorts,
    ber: f64,
    packer: Packer,
    wire: Wire,
    on_wire: Option<(Flit, Time)>,
    /// Units sent and not yet acknowledged.
    replay: ReplayBuffer,
    hdr_credits: u32,
    data_credits: u32,
    ready_since: Option<Time>,
    rng: SimRng,
    stats: TxStats,
}

impl LinkTx {
    /// A transmitter for `link` (from [`LinkParams::validate`]) with `p`'s buffers and error
    /// rate, drawing bit errors from stream `stream` of run seed `seed`.
    pub fn new(p: &LinkParams, link: &BondedLink, seed: u64, stream: u64, ports: TxPorts) -> LinkTx {
        LinkTx {
            link: *link,
            ports,
            ber: p.ber,
            packer: Packer::new(link),
            wire: Wire::new(link),
            on_wire: None,
            replay: ReplayBuffer::new(p.replay_buffer_flits as usize, p.replay_timeout),
            hdr_credits: p.rx_buffer_packets,
            data_credits: p.rx_buffer_bytes / link.encoding.data_credit_bytes,
            ready_since: None,
            rng: SimRng::new(seed, stream),
            stats: TxStats::default(),
        }
    }

    /// The statistics so far.
    pub fn stats(&self) -> &TxStats {
        &self.stats
    }

    /// Units in the replay buffer now.
    pub fn replay_buffer_len(&self) -> usize {
        self.replay.len()
    }

    fn drain_dllps(&mut self, cx: &mut Ctx<'_>, now: Time) {
        while let Some(d) = cx.recv(self.ports.dllps) {
            match d {
                Dllp::Ack(s) => {
                    self.stats.acks += 1;
                    let n = self.replay.ack(s, now);
                    self.purged(n, now);
                }
                Dllp::Nak(s) => {
                    self.stats.naks += 1;
                    let before = self.replay.len();
                    let replay = self.replay.nak(s, now);
                    self.purged(before - self.replay.len(), now);
                    self.stats.replays += u64::from(replay);
                }
                Dllp::UpdateFc { hdr, data } => {
                    self.hdr_credits += hdr;
                    self.data_credits += data;
                }
            }
        }
    }

    /// `n` acknowledged units were dropped.
    fn purged(&mut self, n: usize, now: Time) {
        if n > 0 {
            self.stats.replay_occupancy.set(now, self.replay.len() as u64);
        }
    }

    fn fits(&self, p: &Packet) -> bool {
        self.hdr_credits >= 1 && self.data_credits >= self.link.encoding.data_credits(p.bytes)
    }

    /// Whether a unit could start now if the lanes were free; keeps `ready_since` and the
    /// stall timers.
    fn refresh_ready(&mut self, cx: &mut Ctx<'_>, now: Time) -> bool {
        let head = cx.peek(self.ports.input).copied();
        let head_fits = head.as_ref().is_some_and(|p| self.fits(p));
        let replaying = self.replay.replaying();
        let full = self.replay.is_full();
        let has_new = !self.packer.is_empty() || head_fits;
        let ready = replaying || (!full && has_new);
        self.stats.replay_full.set(now, !replaying && full && has_new);
        self.stats.credit_stall.set(now, head.is_some() && !head_fits);
        if !ready {
            self.ready_since = None;
        } else if self.ready_since.is_none() {
            self.ready_since = Some(now);
        }
        ready
    }

    /// Takes input packets (within credits) until the packer can fill a unit.
    fn top_up(&mut self, cx: &mut Ctx<'_>, start: Time) {
        while self.packer.wants_more() {
            match cx.peek(self.ports.input) {
                Some(p) if self.fits(p) => {}
                _ => return,
            }
            let Some(packet) = cx.recv(self.ports.input) else { return };
            self.hdr_credits -= 1;
            self.data_credits -= self.link.encoding.data_credits(packet.bytes);
            self.stats.packets += 1;
            self.stats.payload_bytes += u64::from(packet.bytes);
            self.packer.push(Carried { packet, accepted: start });
        }
    }

    /// The next unit to put on the lanes: the next one of a replay, else a new one.
    fn next_unit(&mut self, cx: &mut Ctx<'_>, start: Time, now: Time) -> Option<Flit> {
        if let Some(f) = self.replay.next_replayed() {
            self.stats.flits_replayed += 1;
            return Some(f);
        }
        if self.replay.is_full() {
            return None;
        }
        self.top_up(cx, start);
        let f = self.packer.next_unit(self.replay.next_seq(), self.replay.epoch())?;
        self.replay.push(f.clone(), now);
        self.stats.replay_occupancy.set(now, self.replay.len() as u64);
        self.stats.replay_peak = self.stats.replay_peak.max(self.replay.len() as u64);
        self.stats.flits_new += 1;
        Some(f)
    }

    /// Serializes `f` from `ready` and decides whether the wire corrupts it.
    fn launch(&mut self, mut f: Flit, ready: Time) {
        let end = self.wire.transmit(ready, f.bytes);
        if self.ber > 0.0 {
            let p = match self.link.encoding.framing {
                Framing::Flit { flit_bytes, .. } => unit_error_probability(self.ber, flit_bytes),
                Framing::Packet { .. } => unit_error_probability(self.ber, f.bytes),
            };
            f.corrupt = self.rng.chance(p);
        }
        self.stats.wire_bytes += u64::from(f.bytes);
        self.stats.flits_corrupted += u64::from(f.corrupt);
        self.on_wire = Some((f, end));
    }

    /// Hands finished units to the kernel link and starts new ones while the lanes are free.
    fn pump(&mut self, cx: &mut Ctx<'_>, now: Time) {
        loop {
            if let Some((_, end)) = &self.on_wire {
                if *end > now {
                    self.refresh_ready(cx, now);
                    return;
                }
                let Some((f, end)) = self.on_wire.take() else { return };
                if let Err(Blocked(f)) = cx.send(self.ports.flits, f) {
                    self.stats.refused_sends += 1;
                    self.on_wire = Some((f, end));
                    return;
                }
            }
            if !self.refresh_ready(cx, now) {
                return;
            }
            let ready = self.ready_since.unwrap_or(now);
            let start = self.wire.next_start(ready);
            let Some(f) = self.next_unit(cx, start, now) else { return };
            self.launch(f, ready);
        }
    }
}

impl Component for LinkTx {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.now();
        self.drain_dllps(cx, now);
        if self.replay.timed_out(now) {
            self.stats.replay_timeouts += 1;
            self.stats.replays += u64::from(self.replay.start_replay(now));
        }
        self.pump(cx, now);
        if let Some((_, end)) = &self.on_wire {
            cx.wake_at(*end);
        }
        if let Some(t) = self.replay.deadline() {
            cx.wake_at(t);
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        self.stats.report(out);
    }

    fn has_outstanding_work(&self) -> bool {
        !self.replay.is_empty() || !self.packer.is_empty() || self.on_wire.is_some()
    }
}
