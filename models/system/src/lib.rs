//! trnsim's system layer: whole chips, UltraServers and their fabrics described in RON and
//! assembled into one simulation.
//!
//! ```text
//!   trn3-gen2-ultraserver.ron ──► chip: "trn3-chip"        ──► chip::Chip (8 NeuronCores, 4 HBM
//!   (UltraServerSpec)              fabric: "trn3-gen2-nl72x2"     stacks, DMA, NeuronLink ports)
//!                                                             ──► trnsim_fabric::topo::Topology
//!   --set chip.hbm.stacks=2 ──► doc::SystemDoc (one tree: the file with its presets resolved)
//!                              ──► validated again, every error located
//! ```
//!
//! - [`located`]: the one-line `file:line:col: field: message` error every loader returns.
//! - [`chip`]: the chip schema ([`chip::ChipSpec`]), its validation and its assembly
//!   ([`chip::build`]); UltraServers ([`chip::ultraserver`]): a chip preset on a fabric preset.
//! - [`doc`]: a system file as one tree of named fields, `--set PATH=VALUE` overrides on it,
//!   and the resolved [`doc::Resolved`] system every benchmark and workload runs on.
//!
//! - [`energy`]: energy per action and static power as data (a chip names its table).
//! - [`cluster`]: UltraClusters: copies of an UltraServer joined by EFA NICs and a scale-out
//!   leaf/spine network of switch presets, built as one topology.
//!
//! Left out: hosts, three-tier scale-out networks.
#![warn(missing_docs)]

pub mod chip;
pub mod cluster;
pub mod doc;
pub mod energy;
pub mod energy_stats;
pub mod link_file;
pub mod located;
pub mod switch_file;
