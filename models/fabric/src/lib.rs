//! # trnsim-fabric
//!
//! Interconnect models: SerDes lanes bonded into links with a link layer (credits, CRC errors,
//! NAK and replay) in [`link`], and switches (virtual output queues, iSLIP or round-robin
//! crossbar arbitration, cut-through or store-and-forward) in [`switch`]. Topologies, traffic
//! and collectives build on them.
#![warn(missing_docs)]

pub mod collective;
pub mod fidelity;
pub mod link;
pub mod switch;
pub mod system;
pub mod topo;
