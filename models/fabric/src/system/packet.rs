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
}
