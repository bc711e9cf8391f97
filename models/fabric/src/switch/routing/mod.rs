//! Routing: which output port a packet leaves by.
//!
//! **Contract.** A routing function maps a packet (in practice its destination id; later the
//! Trn3 (rack, server, chip) address bits that switches match on BARs, spec §6) to one output
//! port of this switch, or to none when it has no route. It sees only the packet, is fixed for
//! the run (no adaptive state), and is evaluated once, when the packet's header arrives. The
//! switch counts and drops unroutable packets (`unroutable_packets`) and packets routed to a
//! port that does not exist or is not wired.
//!
//! Registry: [`ROUTINGS`]. One file per implementation.

mod address;
mod table;

pub use address::{AddressFields, AddressRouting, BitField, Level};
pub use table::TableRouting;

use super::Packet;

/// Maps packets to output ports. See the module docs for the contract.
pub trait Routing: Send {
    /// Name used in configs (see [`ROUTINGS`]).
    fn name(&self) -> &'static str;
    /// The output port for `pkt`, or `None` if there is no route.
    fn route(&self, pkt: &Packet) -> Option<u16>;
}

/// Every routing function by name: the registry.
pub const ROUTINGS: &[(&str, &str)] = &[
    ("table", "a table from destination id to output port, as data"),
    ("address", "Trn3 (rack, server, chip) bit fields of the destination id, down per level or up by dst mod uplinks"),
];
