//! What travels over a link: packets in, wire units (flits, or framed packets in non-flit mode)
//! across, data-link control packets back; and the two pieces of arithmetic that turn packets
//! into wire time: packing bytes into units, and serializing units at the lane rate.

use crate::link::encoding::{BondedLink, Framing};
use std::collections::VecDeque;
use trnsim_kernel::{Payload, Time};

/// A transaction-layer packet (a PCIe TLP or a UALink request) as the link sees it: who it
/// belongs to and how big its payload is. Headers and framing are added by the link from its
/// [`crate::link::Encoding`]; no data bytes are carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Flow (e.g. a source-destination-queue triple); order is guaranteed within a flow.
    pub flow: u32,
    /// Payload size, in bytes.
    pub bytes: u32,
    /// Sequence number within the flow, set by the source (0, 1, 2, ...).
    pub seq: u64,
    /// Source endpoint id.
    pub src: u32,
    /// Destination endpoint id.
    pub dst: u32,
    /// When the source created it (for end-to-end latency).
    pub born: Time,
}

impl Payload for Packet {
    /// The payload size.
    fn size_bytes(&self) -> u32 {
        self.bytes
    }
    fn trace_bits(&self) -> u64 {
        (u64::from(self.flow) << 40) | (self.seq & ((1 << 40) - 1))
    }
}

/// A packet inside a link, stamped with the time the transmitter took it from its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carried {
    /// The packet.
    pub packet: Packet,
    /// When the transmitter took it (the start of the link latency).
    pub accepted: Time,
}

/// One wire unit: a flit in flit mode, one framed packet in non-flit mode. It carries the
/// packets whose *last* byte it holds; a packet's earlier bytes ride in the units before it,
/// which go-back-N guarantees were accepted first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flit {
    /// Link-layer sequence number (0, 1, 2, ...; the model does not wrap it).
    pub seq: u64,
    /// Replay epoch: how many replays the transmitter had started when it sent this copy. It
    /// stands in for the replay command bits of a flit header (see [`crate::link::rx`]).
    pub epoch: u32,
    /// Size on the wire, in bytes.
    pub bytes: u32,
    /// The CRC check will fail at the receiver (a bit error was injected on the wire).
    pub corrupt: bool,
    /// Packets that end in this unit, in order.
    pub tails: Vec<Carried>,
}

impl Payload for Flit {
    /// The unit's size on the wire.
    fn size_bytes(&self) -> u32 {
        self.bytes
    }
    fn trace_bits(&self) -> u64 {
        self.seq
    }
}

/// A data-link control packet from receiver back to transmitter. Their bandwidth is not
/// modelled: in flit mode they ride in the 6 DLLP bytes every reverse flit has anyway.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dllp {
    /// Every unit up to and including this sequence number was accepted.
    Ack(u64),
    /// Units before this sequence number were accepted; replay from it.
    Nak(u64),
    /// Receive buffer freed: this many header credits and data credits return.
    UpdateFc {
        /// Header credits (packets).
        hdr: u32,
        /// Data credits (units of the encoding's `data_credit_bytes`).
        data: u32,
    },
}

impl Payload for Dllp {
    /// 8 bytes: a 6-byte DLLP plus framing.
    fn size_bytes(&self) -> u32 {
        8
    }
}

/// Packs packets into wire units: back to back across fixed flits, or one per unit in
/// non-flit mode.
#[derive(Clone, Debug)]
pub(crate) struct Packer {
    link: BondedLink,
    /// Packets not yet fully packed, with their stream bytes still to go.
    queue: VecDeque<(Carried, u32)>,
    queued_bytes: u64,
}

impl Packer {
    pub fn new(link: &BondedLink) -> Packer {
        Packer { link: *link, queue: VecDeque::new(), queued_bytes: 0 }
    }

    /// Whether one more packet is needed to fill the next unit.
    pub fn wants_more(&self) -> bool {
        match self.link.encoding.framing {
            Framing::Packet { .. } => self.queue.is_empty(),
            Framing::Flit { payload_bytes, .. } => self.queued_bytes < u64::from(payload_bytes),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn push(&mut self, c: Carried) {
        let stream = self.link.encoding.stream_bytes(c.packet.bytes);
        self.queued_bytes += u64::from(stream);
        self.queue.push_back((c, stream));
    }

    /// The next unit, numbered `seq`, or `None` when nothing is queued. A flit that runs out
    /// of packets is padded.
    pub fn next_unit(&mut self, seq: u64, epoch: u32) -> Option<Flit> {
        if self.queue.is_empty() {
            return None;
        }
        let mut flit = Flit { seq, epoch, bytes: 0, corrupt: false, tails: Vec::new() };
        match self.link.encoding.framing {
            Framing::Packet { .. } => {
                let (c, stream) = self.queue.pop_front()?;
                self.queued_bytes -= u64::from(stream);
                flit.bytes = self.link.unit_bytes(c.packet.bytes);
                flit.tails.push(c);
            }
            Framing::Flit { flit_bytes, payload_bytes } => {
                flit.bytes = flit_bytes;
                let mut space = payload_bytes;
                while let Some((c, left)) = self.queue.front_mut() {
                    let take = space.min(*left);
                    *left -= take;
                    space -= take;
                    self.queued_bytes -= u64::from(take);
                    if *left > 0 {
                        break;
                    }
                    flit.tails.push(*c);
                    self.queue.pop_front();
                    if space == 0 {
                        break;
                    }
                }
            }
        }
        Some(flit)
    }
}

/// The serializer: when the lanes are free, in exact rational time (units of `1/per_ps` ps),
/// so back-to-back units never drift however the clock quantizes the component's ticks.
#[derive(Clone, Debug)]
pub(crate) struct Wire {
    per_ps: u128,
    per_byte: u128,
    free_at: u128,
}

impl Wire {
    pub fn new(link: &BondedLink) -> Wire {
        let e = &link.encoding;
        let per_ps = u128::from(link.lanes) * u128::from(e.lane_mbit_per_s) * u128::from(e.code_num);
        Wire { per_ps, per_byte: 8 * u128::from(e.code_den) * 1_000_000, free_at: 0 }
    }

    /// When a unit that is ready at `ready` starts: `max(lanes free, ready)`, rounded down to
    /// a picosecond.
    pub fn next_start(&self, ready: Time) -> Time {
        let start = self.free_at.max(u128::from(ready.as_ps()) * self.per_ps);
        Time::from_ps(u64::try_from(start / self.per_ps).unwrap_or(u64::MAX))
    }

    /// Serializes `bytes` from `max(free, ready)`; returns when the last bit is out (rounded
    /// up to a picosecond).
    pub fn transmit(&mut self, ready: Time, bytes: u32) -> Time {
        let start = self.free_at.max(u128::from(ready.as_ps()) * self.per_ps);
        self.free_at = start + u128::from(bytes) * self.per_byte;
        Time::from_ps(u64::try_from(self.free_at.div_ceil(self.per_ps)).unwrap_or(u64::MAX))
    }
}

/// Probability that a unit of `bytes` has at least one bit error at bit error rate `ber`.
pub(crate) fn unit_error_probability(ber: f64, bytes: u32) -> f64 {
    let bits = f64::from(bytes) * 8.0;
    -(bits * (-ber).ln_1p()).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::encoding::{PCIE_GEN5, PCIE_GEN6};

    fn carried(flow: u32, seq: u64, bytes: u32) -> Carried {
        let packet = Packet { flow, bytes, seq, src: 0, dst: 1, born: Time::ZERO };
        Carried { packet, accepted: Time::ZERO }
    }

    #[test]
    fn flits_pack_packets_back_to_back() {
        let link = BondedLink::new(&PCIE_GEN6, 8).unwrap();
        let mut p = Packer::new(&link);
        // 3 x (16 + 100) = 348 stream bytes: flit 0 holds two tails (232 B) + 4 B of the third.
        for s in 0..3 {
            p.push(carried(0, s, 100));
        }
        assert!(!p.wants_more());
        let f0 = p.next_unit(0, 0).unwrap();
        assert_eq!((f0.bytes, f0.tails.len()), (256, 2));
        let f1 = p.next_unit(1, 0).unwrap();
        assert_eq!(f1.tails.iter().map(|c| c.packet.seq).collect::<Vec<_>>(), vec![2]);
        assert!(p.is_empty() && p.next_unit(2, 0).is_none());
        // A 4096 B packet spans ceil(4112 / 236) = 18 flits, its tail in the last.
        p.push(carried(0, 3, 4096));
        let units: Vec<Flit> = (0..18).map_while(|s| p.next_unit(s, 0)).collect();
        assert_eq!(units.len(), 18);
        assert!(units[..17].iter().all(|f| f.tails.is_empty()) && units[17].tails.len() == 1);
    }

    #[test]
    fn packet_mode_frames_each_packet() {
        let link = BondedLink::new(&PCIE_GEN5, 16).unwrap();
        let mut p = Packer::new(&link);
        p.push(carried(0, 0, 256));
        assert!(!p.wants_more());
        let f = p.next_unit(7, 0).unwrap();
        assert_eq!((f.seq, f.bytes, f.tails.len()), (7, 256 + 16 + 8, 1));
    }

    #[test]
    fn wire_time_is_exact_and_does_not_drift() {
        let link = BondedLink::new(&PCIE_GEN5, 16).unwrap();
        let mut w = Wire::new(&link);
        let mut end = Time::ZERO;
        for _ in 0..1000 {
            end = w.transmit(Time::ZERO, 280);
        }
        let exact = 1000.0 * link.serialization_ps(280);
        assert!((end.as_ps() as f64 - exact).abs() <= 1.0, "{} vs {exact}", end.as_ps());
        let later = w.transmit(Time::from_ps(10_000_000), 256);
        assert_eq!(later.as_ps(), 10_000_000 + link.serialization_ps(256).ceil() as u64);
    }

    #[test]
    fn error_probability_per_unit() {
        assert_eq!(unit_error_probability(0.0, 256), 0.0);
        let p = unit_error_probability(1e-6, 256);
        let direct = 1.0 - (1.0 - 1e-6f64).powi(2048);
        assert!((p - direct).abs() < 1e-12 && (p - 2048e-6).abs() < 3e-6, "{p}");
        assert!(unit_error_probability(1e-3, 4120) > 0.96);
    }
}
