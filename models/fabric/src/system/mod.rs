//! The packet-level fabric and the chips' collective engines built as **one kernel component
//! per topology node**, connected by **one kernel link per physical link direction**, so that a
//! partitioned (parallel) run can cut the system at kernel links with the smallest cut-link
//! latency as lookahead. The reference is [`crate::collective::run`] (the whole fabric as one
//! component over [`crate::topo::Network`]); this build gives the same collective times within
//! the clock quantization (see [`clock`] and docs/fabric.md "Per-node kernel build").
//!
//! ```text
//!   chip000 ──tx.sw144.0 → rx.chip000.0──► sw144 ──tx.chip001.0 → rx.sw144.0──► chip001
//!   (engine + per-link       kernel link: latency = PHY + wire + link layer (+ switch),
//!    output FIFOs)           bandwidth = payload bytes per cycle, credits that never bind
//! ```
//!
//! - [`packet`]: the payload ([`Packet`]).
//! - [`clock`]: the fabric clock and each edge's kernel [`trnsim_kernel::LinkSpec`].
//! - `ports`: a node's inputs, per-link output queues and routing (shared by chips and switches).
//! - [`chip`]: a chip ([`ChipNode`]): its collective engine and its NIC queues.
//! - [`switch`]: a switch ([`SwitchNode`]).
//! - [`timeline`]: a chip's compute as spans of given length, ringing its engine's doorbell
//!   after each ([`ComputeTimeline`]).
//! - [`build`]: [`build_collective`] (names `chip000`.., `sw000`..); [`reserve_nodes`] +
//!   [`build_jobs`] for a sequence of collectives ([`Job`]) triggered by the chips' cores
//!   through doorbells ([`ChipHooks`]).
//! - [`readout`]: [`result`] (the old model's [`crate::collective::RunResult`]) and [`run_kernel`].
//!
//! Same per-chip step programs ([`crate::collective::schedule`]), per-step software overhead,
//! 4 KiB packetization, store-and-forward hop by hop, link choice (the candidate link that
//! frees first) as the old model. Differences: times are fabric-clock edges, not exact
//! picoseconds; packets arriving at one node on the same edge are handled in input-port order
//! (the old model: exact arrival order); an empty message travels as one empty packet (the old
//! model delivers it at once); a chip may not send to itself. Deterministic whatever the tick
//! order.

pub mod build;
pub mod chip;
pub mod clock;
pub mod packet;
mod ports;
pub mod readout;
pub mod switch;
pub mod timeline;

#[cfg(test)]
mod tests;

pub use build::{build_collective, build_jobs, node_name, reserve_nodes, Job, JobHandles, Nodes};
pub use chip::{ChipHooks, ChipNode};
pub use clock::FabricClock;
pub use packet::Packet;
pub use readout::{result, run_kernel, run_kernel_with};
pub use switch::SwitchNode;
pub use timeline::ComputeTimeline;

use crate::collective::Collective;
use trnsim_kernel::{ClockId, ComponentId};

/// One message of the collective, fixed at build time (its id is its index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgMeta {
    /// Source chip.
    pub src: usize,
    /// Destination chip.
    pub dst: usize,
    /// Payload bytes.
    pub bytes: u64,
    /// The step it belongs to (the sender's step index).
    pub tag: u32,
    /// Its slot in the destination's inbound table.
    pub rx_slot: u32,
}

/// What [`build_collective`] added, for reading the result after the run.
#[derive(Clone, Debug)]
pub struct CollectiveHandles {
    /// The collective built (`auto` resolved).
    pub coll: Collective,
    /// Per-chip buffer size, in bytes.
    pub size: u64,
    /// The fabric clock.
    pub clock: FabricClock,
    /// Its id in the builder.
    pub clock_id: ClockId,
    /// Component of each topology node (chips first, then switches).
    pub nodes: Vec<ComponentId>,
    /// Number of chips.
    pub chips: usize,
    /// Per topology edge: (sender node, index of its first output link, parallel links).
    pub edge_links: Vec<(usize, usize, usize)>,
    /// Every message, in (source chip, step, send) order (empty in a partition's builder: see
    /// [`JobHandles::msgs`]).
    pub msgs: Vec<MsgMeta>,
    /// Number of topology edges.
    pub edge_count: usize,
}
