//! Switches: a crossbar with input buffers organized as virtual output queues (or one FIFO
//! per input, for the head-of-line study), scheduled each crossbar cycle by an arbiter (iSLIP
//! or round-robin matching), with speedup, cut-through or store-and-forward forwarding, a
//! port-to-port latency, routing by destination, and credit-based back-pressure.
//!
//! ```text
//!   Injector p ──► in p ┐                        ┌──► out q ──► Sink q
//!                       │  VOQs ─► crossbar ─► output queues
//!   Injector r ──► in r ┘     (Arbiter, speedup)  └──► out s ──► Sink s
//! ```
//!
//! - [`config`]: [`SwitchConfig`], every parameter with its unit; [`presets`]: the 160-lane
//!   and 320-lane PCIe Gen6 switches and a UALink switch, with sources.
//! - [`arbiter`]: the [`Arbiter`] role (iSLIP, round robin) and its registry.
//! - [`routing`]: the [`Routing`] role (a table from destination to port) and its registry.
//! - [`component`]: the [`Switch`] kernel component; [`stats`]: its per-port statistics.
//! - [`traffic`]: Bernoulli injectors, latency-recording sinks, a single-switch bench and the
//!   BookSim-style offered-load sweep with warm-up, convergence and saturation detection.
//!
//! Time inside a switch counts in *port cycles*, the time one cell takes through a port.
//!
//! [`Packet`] is this module's own payload for now; the link layer ([`crate::link`]) defines
//! its own, and the two will be unified.

pub mod arbiter;
pub mod component;
pub mod config;
pub mod portset;
pub mod presets;
pub mod routing;
pub mod stats;
pub mod traffic;

#[cfg(test)]
mod tests;

pub use arbiter::{Arbiter, ArbiterProvider, ConfigArbiters, Islip, Matching, Requests, RoundRobin};
pub use component::Switch;
pub use config::{ConfigError, Forwarding, Queueing, SwitchConfig};
pub use presets::Preset;
pub use routing::{Routing, TableRouting};
pub use stats::{PortStats, SwitchStats};

use trnsim_kernel::{Payload, Time};

/// A packet crossing the fabric: who sent it to whom, and when it was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Sending endpoint id.
    pub src: u16,
    /// Destination endpoint id (what routing looks at).
    pub dst: u16,
    /// Flow id (free for the traffic source; packets of one flow stay in order).
    pub flow: u32,
    /// Sequence number within its source (0, 1, 2, ...).
    pub seq: u64,
    /// Size on the wire, bytes (header included).
    pub bytes: u32,
    /// When the source created it (latency is measured from here).
    pub created: Time,
}

impl Payload for Packet {
    fn size_bytes(&self) -> u32 {
        self.bytes
    }
    /// Source (16 bits), destination (16 bits), low 32 bits of the sequence number.
    fn trace_bits(&self) -> u64 {
        (u64::from(self.src) << 48) | (u64::from(self.dst) << 32) | (self.seq & 0xffff_ffff)
    }
}
