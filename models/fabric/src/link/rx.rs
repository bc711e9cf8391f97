//! The receiving end of a link: CRC check, go-back-N sequence check, ACK coalescing, NAK, the
//! receive buffer and credit return.
//!
//! ```text
//!  flits: Flit ──► CRC ok? ──no──► drop; NAK(expected) unless one is outstanding
//!                    │yes
//!                    ▼
//!                 seq == expected? ──► accept: packets ──► [rx buffer] ──► out: Packet
//!                 seq <  expected  ──► drop (duplicate), ACK now           │ freed credits
//!                 seq >  expected  ──► drop (a unit is missing)            ▼
//!  dllps: Dllp ◄── Ack(expected-1) every `ack_every` units or `ack_delay` ◄─ UpdateFc
//! ```
//!
//! After a NAK the receiver sends no other NAK until the unit it asked for arrives, except
//! when a good unit of a *newer replay epoch* arrives out of sequence: then the replay itself
//! lost the unit and the receiver asks again at once. Units carry the epoch for this (a
//! simplification of UALink's replay-request counting and PCIe flit mode's replay commands;
//! PCIe non-flit mode would wait for the transmitter's replay timer instead, which this model
//! keeps as the fallback when nothing follows a lost unit).
//!
//! Leaves out: posted / non-posted / completion credit classes (one shared pool of header and
//! data credits stands for them, as flit mode's shared credit pool does), credit scaling, and
//! errors on the DLLPs themselves.

use crate::link::encoding::{BondedLink, Encoding};
use crate::link::flit::{Carried, Dllp, Flit, Packet};
use crate::link::params::LinkParams;
use crate::link::stats::RxStats;
use std::collections::VecDeque;
use trnsim_kernel::{Activity, Component, Ctx, Dur, InPort, OutPort, StatsWriter, Time};

/// The kernel ports of a [`LinkRx`].
#[derive(Clone, Copy, Debug)]
pub struct RxPorts {
    /// Wire units from the transmitter.
    pub flits: InPort<Flit>,
    /// Delivered packets.
    pub output: OutPort<Packet>,
    /// ACK, NAK and credit updates to the transmitter.
    pub dllps: OutPort<Dllp>,
}

/// Test-only fault injection: deliberately breaks the link's delivery guarantee so tests can
/// show that an order checker notices (set with [`LinkRx::set_faults`]). Each fault fires
/// once, on the first delivered packet whose `seq` (in any flow) matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkFaults {
    /// Deliver this packet twice.
    pub duplicate_seq: Option<u64>,
    /// Never deliver this packet (its credits still return).
    pub drop_seq: Option<u64>,
}

/// The receiving end of one link direction (see the module docs).
pub struct LinkRx {
    enc: Encoding,
    ports: RxPorts,
    ack_every: u32,
    ack_delay: Dur,
    expected: u64,
    seen_epoch: u32,
    /// While a NAK is outstanding: the newest epoch seen when it was sent.
    nak_epoch: Option<u32>,
    unacked: u32,
    ack_due: Option<Time>,
    force_ack: bool,
    control: VecDeque<Dllp>,
    buf: VecDeque<Carried>,
    /// The buffer's front is a planted duplicate: do not return its credits again.
    phantom_front: bool,
    fc: (u32, u32),
    faults: LinkFaults,
    stats: RxStats,
}

impl LinkRx {
    /// A receiver for `link` (from [`LinkParams::validate`]) with `p`'s ACK policy.
    pub fn new(p: &LinkParams, link: &BondedLink, ports: RxPorts) -> LinkRx {
        LinkRx {
            enc: link.encoding,
            ports,
            ack_every: p.ack_every,
            ack_delay: p.ack_delay,
            expected: 0,
            seen_epoch: 0,
            nak_epoch: None,
            unacked: 0,
            ack_due: None,
            force_ack: false,
            control: VecDeque::new(),
            buf: VecDeque::new(),
            phantom_front: false,
            fc: (0, 0),
            faults: LinkFaults::default(),
            stats: RxStats::default(),
        }
    }

    /// Plants `faults` (tests only: the link then loses or duplicates a packet on purpose).
    /// Reach a built receiver with `Simulation::component_mut::<LinkRx>`.
    pub fn set_faults(&mut self, faults: LinkFaults) {
        self.faults = faults;
    }

    /// The statistics so far.
    pub fn stats(&self) -> &RxStats {
        &self.stats
    }

    fn on_flit(&mut self, f: Flit, now: Time) {
        self.stats.flits_received += 1;
        if f.corrupt {
            self.stats.crc_errors += 1;
            if self.nak_epoch.is_none() {
                self.nak(self.seen_epoch);
            }
            return;
        }
        self.seen_epoch = self.seen_epoch.max(f.epoch);
        if f.seq == self.expected {
            self.accept(f, now);
        } else if f.seq < self.expected {
            self.stats.duplicates += 1;
            self.force_ack = true;
        } else {
            self.stats.out_of_sequence += 1;
            match self.nak_epoch {
                Some(e) if f.epoch <= e => {}
                _ => self.nak(f.epoch),
            }
        }
    }

    fn accept(&mut self, f: Flit, now: Time) {
        self.expected += 1;
        self.nak_epoch = None;
        self.stats.flits_accepted += 1;
        self.unacked += 1;
        self.ack_due.get_or_insert(now + self.ack_delay);
        self.buf.extend(f.tails);
        self.stats.buffer_occupancy.set(now, self.buf.len() as u64);
    }

    /// Asks for a replay from `expected` (which also acknowledges everything before it).
    fn nak(&mut self, epoch: u32) {
        self.control.push_back(Dllp::Nak(self.expected));
        self.stats.naks += 1;
        self.nak_epoch = Some(epoch);
        self.unacked = 0;
        self.ack_due = None;
    }

    /// Moves buffered packets to the output while it accepts them, returning their credits.
    fn deliver(&mut self, cx: &mut Ctx<'_>, now: Time) {
        while let Some(&c) = self.buf.front() {
            if self.faults.drop_seq == Some(c.packet.seq) {
                self.faults.drop_seq = None;
                self.pop_front();
                continue;
            }
            if cx.send(self.ports.output, c.packet).is_err() {
                break;
            }
            self.pop_front();
            self.stats.packets += 1;
            self.stats.payload_bytes += u64::from(c.packet.bytes);
            self.stats.latency_ps.record(now.since(c.accepted).as_ps());
            let first = self.stats.first_accepted.map_or(c.accepted, |t| t.min(c.accepted));
            self.stats.first_accepted = Some(first);
            self.stats.last_delivery = now;
            if self.faults.duplicate_seq == Some(c.packet.seq) {
                self.faults.duplicate_seq = None;
                self.buf.push_front(c);
                self.phantom_front = true;
            }
        }
        self.stats.buffer_occupancy.set(now, self.buf.len() as u64);
    }

    fn pop_front(&mut self) {
        let Some(c) = self.buf.pop_front() else { return };
        if std::mem::take(&mut self.phantom_front) {
            return;
        }
        self.fc.0 += 1;
        self.fc.1 += self.enc.data_credits(c.packet.bytes);
    }

    /// Queues an ACK when enough units or enough time has gone by, and a credit update when
    /// credits were freed.
    fn schedule_control(&mut self, now: Time) {
        let due = self.ack_due.is_some_and(|t| t <= now);
        if self.force_ack || self.unacked >= self.ack_every || (due && self.unacked > 0) {
            if self.expected > 0 {
                self.control.push_back(Dllp::Ack(self.expected - 1));
                self.stats.acks += 1;
            }
            self.unacked = 0;
            self.ack_due = None;
            self.force_ack = false;
        }
        if self.fc != (0, 0) {
            let (hdr, data) = std::mem::take(&mut self.fc);
            self.control.push_back(Dllp::UpdateFc { hdr, data });
            self.stats.fc_updates += 1;
        }
    }

    fn flush(&mut self, cx: &mut Ctx<'_>) {
        while let Some(&d) = self.control.front() {
            if cx.send(self.ports.dllps, d).is_err() {
                return;
            }
            self.control.pop_front();
        }
    }
}

impl Component for LinkRx {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.now();
        while let Some(f) = cx.recv(self.ports.flits) {
            self.on_flit(f, now);
        }
        self.deliver(cx, now);
        self.schedule_control(now);
        self.flush(cx);
        if let Some(t) = self.ack_due {
            cx.wake_at(t);
        }
        Activity::Idle
    }

    fn report(&self, out: &mut StatsWriter<'_>) {
        self.stats.report(out);
    }

    fn has_outstanding_work(&self) -> bool {
        !self.buf.is_empty() || !self.control.is_empty() || self.unacked > 0
    }
}
