//! A chip as a traffic endpoint: sends a fixed list of packets as fast as its link takes
//! them, and records what arrives.
//!
//! ```text
//!   list of (dst, bytes) ──► out: link::Packet      in: link::Packet ──► bytes, last arrival
//! ```
//!
//! Leaves out: DMA engines, HBM, software step overheads; any ordering beyond the list's.

use crate::link::Packet;
use std::collections::VecDeque;
use trnsim_kernel::{Activity, Component, Ctx, InPort, OutPort, StatsWriter, Time};

/// A chip endpoint (see the module docs).
pub struct Chip {
    id: u32,
    out: OutPort<Packet>,
    input: InPort<Packet>,
    /// Packets still to send: (destination, payload bytes).
    todo: VecDeque<(u32, u32)>,
    /// Next sequence number per destination (one flow per destination).
    seq: Vec<u64>,
    /// Packets sent.
    pub sent: u64,
    /// Packets received.
    pub received: u64,
    /// Payload bytes received.
    pub received_bytes: u64,
    /// When the last packet arrived.
    pub last_arrival: Time,
}

impl Chip {
    /// Chip `id` of `chips`, sending `todo` in order on `out` (flow = destination).
    pub fn new(id: u32, chips: u32, todo: Vec<(u32, u32)>, out: OutPort<Packet>, input: InPort<Packet>) -> Chip {
        Chip {
            id,
            out,
            input,
            todo: todo.into(),
            seq: vec![0; chips as usize],
            sent: 0,
            received: 0,
            received_bytes: 0,
            last_arrival: Time::ZERO,
        }
    }
}

impl Component for Chip {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        let now = cx.now();
        while let Some(p) = cx.recv(self.input) {
            self.received += 1;
            self.received_bytes += u64::from(p.bytes);
            self.last_arrival = now;
        }
        while let Some(&(dst, bytes)) = self.todo.front() {
            if !cx.can_send(self.out) {
                break;
            }
            let seq = &mut self.seq[dst as usize];
            let p = Packet { flow: dst, bytes, seq: *seq, src: self.id, dst, born: now };
            if cx.send(self.out, p).is_err() {
                unreachable!("can_send said yes");
            }
            *seq += 1;
            self.sent += 1;
            self.todo.pop_front();
        }
        Activity::Idle
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("sent", self.sent);
        out.count("received", self.received);
        out.count("received_bytes", self.received_bytes);
    }
    fn has_outstanding_work(&self) -> bool {
        !self.todo.is_empty()
    }
}
