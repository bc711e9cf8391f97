//! The payload every fabric kernel link carries: one packet of one message.

use trnsim_kernel::Payload;

/// One packet (at most the topology's packet size, 4 KiB in the presets) of one collective
/// message, travelling chip → (switches or chips) → chip store-and-forward.
///
/// Plain data: the ids are fixed when the collective is built (see
/// [`super::CollectiveHandles`]), so a packet needs no shared state to be delivered.
/// [`Payload::size_bytes`] is the packet's payload: link bandwidths are the link layer's
/// effective payload rate (headers, framing and flits folded in, as in
/// [`crate::topo::Network`]), so the kernel's per-link byte counts equal the old model's
/// per-edge `EdgeStats::bytes`. Leaves out: headers as separate bytes, the data itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Message id: index into [`super::CollectiveHandles::msgs`].
    pub msg: u32,
    /// The message's slot in the destination chip's table of inbound messages.
    pub rx_slot: u32,
    /// Destination chip (node index).
    pub dst: u32,
    /// The collective step the message belongs to (the receiver's step tag).
    pub tag: u32,
    /// Payload bytes in this packet (0 only for an empty message's single packet).
    pub bytes: u32,
}

impl Payload for Packet {
    fn size_bytes(&self) -> u32 {
        self.bytes
    }
    fn trace_bits(&self) -> u64 {
        u64::from(self.msg)
    }
    /// Five little-endian u32s (for runs partitioned across processes).
    fn encode(&self, out: &mut Vec<u8>) -> bool {
        for v in [self.msg, self.rx_slot, self.dst, self.tag, self.bytes] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        true
    }
    fn decode(b: &[u8]) -> Option<Self> {
        if b.len() != 20 {
            return None;
        }
        let w = |i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        Some(Packet { msg: w(0), rx_slot: w(1), dst: w(2), tag: w(3), bytes: w(4) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_round_trip_through_bytes() {
        let p = Packet { msg: 1, rx_slot: 2, dst: 3, tag: 4, bytes: 4096 };
        let mut b = Vec::new();
        assert!(p.encode(&mut b));
        assert_eq!(Packet::decode(&b), Some(p));
        assert_eq!(Packet::decode(&b[..19]), None);
    }
}
