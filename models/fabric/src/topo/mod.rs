//! Topologies as data and the packet-level network over them.
//!
//! ```text
//!  RON file ──parse/validate──► Checked ──build──► Topology ──► Network
//!  (spec.rs: TopologySpec,      (units parsed,   (graph.rs: chips, switches,   (network.rs: per-link
//!   errors file:line:col)        link resolved)   directed edges, routing)      FIFO servers, packets)
//! ```
//!
//! - [`spec`]: the RON schema. Kinds: `torus` (Trn2 4x4 server, 4x4x4 UltraServer),
//!   `full_mesh`, `switched` (Trn3 NL32x2 / NL72x2 switch tiers plus direct peer links),
//!   `fat_tree(radix, levels, link)` (a k-ary n-tree, k = radix / 2: a folded Clos with full
//!   bisection; not a documented Trainium shape, a reference for the switched presets).
//!   Presets live in models/configs/fabric/*.ron, each citing its sources.
//! - [`graph`]: nodes are chips (indices `0..chips`) then switches; each directed edge is a
//!   bundle of parallel links with a payload bandwidth (the link layer's analytic
//!   [`crate::link::effective_payload_bytes_per_s`] for the packet's transaction payload) and a
//!   latency (PHY + wire + link layer, plus switch port-to-port on edges leaving a switch).
//!   Tori route dimension-order; fat trees up/down with the up-port at level `l` the
//!   destination's base-k digit `l` (destination-mod-k: one path, contention-free for shifts);
//!   others minimal-hop adaptive.
//! - [`cluster`]: copies of one scale-up topology (an UltraServer) joined by a scale-out
//!   leaf/spine network of EFA NICs and Ethernet-class switches, as one topology.
//! - [`network`]: messages split into packets that traverse their route hop by hop, each link
//!   a FIFO server; per-link bytes, busy time and per-message latency.
//!
//! Not yet: non-minimal or adaptive fat-tree routing, tapered (oversubscribed) trees, link
//! failures.

pub mod cluster;
pub mod graph;
pub mod network;
pub mod spec;

#[cfg(test)]
mod tests;

pub use graph::{Edge, Node, NodeKind, RoutingKind, Topology};
pub use network::{EdgeStats, Message, MsgId, Network};
pub use spec::{Checked, Kind, LinkKind, Scope, Tier, TopoError, TopologySpec};

/// Loads, validates and builds the topology in a RON file (errors as text: `file:line:col:
/// field: message` for the spec, or the unreachable chips for the graph).
pub fn load(path: &std::path::Path) -> Result<Topology, String> {
    let c = spec::load(path).map_err(|e| e.to_string())?;
    let file = path.display().to_string();
    let text = trnsim_kernel::input::read_text(path).unwrap_or_default();
    Topology::build(&c).map_err(|e| at_kind(&file, &text, &e))
}

/// Parses, validates and builds topology text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Topology, String> {
    let c = spec::parse(file, text).map_err(|e| e.to_string())?;
    Topology::build(&c).map_err(|e| at_kind(file, text, &e))
}

/// A graph error (e.g. unreachable chips), located at the spec's `kind:`.
fn at_kind(file: &str, text: &str, e: &str) -> String {
    let pos = text.find("kind:").unwrap_or(0);
    let line = text[..pos].matches('\n').count() + 1;
    let col = pos - text[..pos].rfind('\n').map_or(0, |p| p + 1) + 1;
    format!("{file}:{line}:{col}: kind: {e}")
}

/// The directory of the topology presets (models/configs/fabric).
pub fn presets_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/fabric")
}
