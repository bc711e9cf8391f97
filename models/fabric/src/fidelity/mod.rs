//! Two fidelities on one case: the same small switched system built flit by flit (link layer
//! and [`crate::switch::Switch`] as kernel components) and packet by packet
//! ([`crate::topo::Network`]), driven by the same messages, so their figures can be set side
//! by side.
//!
//! ```text
//!  flit level (kernel components):
//!   Chip i ─link::attach (Gen6 x8: flits, credits, ACK)─► Ingress i ─port link─► ┌────────┐
//!          ◄─link::attach───────────────────────────────── Egress i ◄─port link── │ Switch │
//!                                                                                 └────────┘
//!  packet level (topo::Network): chip i ══ 4 KiB packets, FIFO link servers ══ switch node
//! ```
//!
//! - [`adapter`]: [`Ingress`] and [`Egress`], which turn the link layer's [`crate::link::Packet`]
//!   (payload bytes) into the switch's [`crate::switch::Packet`] (TLP bytes = header +
//!   payload) and back.
//! - [`endpoint`]: [`Chip`], a source of a fixed list of packets and a sink that records
//!   arrivals.
//! - [`case`]: the all-to-all case ([`AllToAll`]), its two builds
//!   ([`AllToAll::run_flit`], [`AllToAll::run_packet`]) and the comparison table.
//!
//! Leaves out: bit errors (BER 0 in both), DMA engines and software overheads (chips inject as
//! fast as their link accepts).

pub mod adapter;
pub mod case;
pub mod endpoint;

#[cfg(test)]
mod tests;

pub use adapter::{Egress, Ingress};
pub use case::{AllToAll, Outcome};
pub use endpoint::Chip;
