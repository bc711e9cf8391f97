//! UltraClusters as data: N copies of an UltraServer preset joined by EFA through a scale-out
//! network of switch presets ([`UltraClusterSpec`], models/configs/system/*-ultracluster-*.ron;
//! [`ScaleOutSwitchSpec`], models/configs/scaleout/*.ron), checked with located errors
//! (`file:line:col: field: message`) and built into one `trnsim_fabric` topology
//! (`trnsim_fabric::topo::cluster`): every collective, the packet-level network and the per-node
//! kernel build run on it as on an UltraServer.
//!
//! ```text
//!   trn3-gen2-ultracluster-8.ron ── ultraserver: "trn3-gen2-ultraserver" ── chip, NeuronLink fabric
//!   (UltraClusterSpec)              ultraservers: 8
//!                                   scale_out: switch "eth-51.2t", link 200 Gb/s, leaves, spines
//!        + the chip's efa (NIC: Gbps, ports, latency)
//! ```
//!
//! Rules checked: the scale-out links run at the chips' NIC port rate and at the switch's port
//! rate; the chip's NIC has a latency; leaves and spines fit the switch's radix; at most
//! [`MAX_ULTRASERVERS`] UltraServers and [`MAX_CLUSTER_CHIPS`] chips for the packet-level
//! network (its simulation time grows with every packet), at most [`MAX_FLOW_ULTRASERVERS`] and
//! [`MAX_FLOW_CLUSTER_CHIPS`] for the flow-level network ([`Level`]).
//!
//! Left out: hosts, the NIC's message rate, switch buffers (documented, not modelled), and
//! three-tier networks (a two-tier Clos of radix-`R` switches connects at most `R^2 / 2`
//! NIC ports: 131,072 with 512-port switches such as
//! models/configs/system/flow-only/eth-102.4t.ron; the million-chip file takes 2,048-port
//! chassis switches instead, models/configs/system/flow-only/eth-409.6t-chassis.ron).

use crate::chip::spec::{efa_latency_ps, Chip, ChipError};
use crate::chip::ultraserver::UltraServer;
use serde::{Deserialize, Serialize};
use trnsim_fabric::topo::cluster::{self, Placement, ScaleOut};
use trnsim_fabric::topo::Topology;

/// One scale-out switch model: capacity, ports, latency, buffer. Unknown keys are rejected.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleOutSwitchSpec {
    /// Name used in reports ("eth-51.2t").
    pub name: String,
    /// Where the numbers come from.
    #[serde(default)]
    pub source: String,
    /// Values that are estimates, with the reasoning.
    #[serde(default)]
    pub estimated: Vec<String>,
    /// Switching capacity in Tb/s, one direction (> 0).
    pub capacity_Tbps: f64,
    /// Line rate of one port in Gb/s (> 0).
    pub port_Gbps: f64,
    /// Ports (2..=4096); `radix x port_Gbps` must not exceed the capacity by more than 1 %.
    pub radix: u32,
    /// Port-to-port latency, a quantity such as "200ns" (> 0, <= 1 ms).
    pub latency: String,
    /// Packet buffer in MiB (>= 0). Documented only: the packet-level network's queues are
    /// unbounded.
    pub buffer_MiB: f64,
}

/// One UltraCluster: which UltraServer, how many, and the scale-out network between them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UltraClusterSpec {
    /// Name used in reports ("trn3-gen2-ultracluster-8").
    pub name: String,
    /// Where the numbers come from.
    #[serde(default)]
    pub source: String,
    /// Values that are estimates, with the reasoning.
    #[serde(default)]
    pub estimated: Vec<String>,
    /// An UltraServer preset name (models/configs/system/*-ultraserver.ron).
    pub ultraserver: String,
    /// UltraServers in the cluster (1..=[`MAX_ULTRASERVERS`] for the packet-level network,
    /// 1..=[`MAX_FLOW_ULTRASERVERS`] for the flow-level one).
    pub ultraservers: u32,
    /// The scale-out network.
    pub scale_out: ScaleOutPart,
}

/// The scale-out (EFA) network of a cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleOutPart {
    /// A scale-out switch preset name (a file beside the cluster's, or
    /// models/configs/scaleout/*.ron), used for leaves and spines alike.
    pub switch: String,
    /// One scale-out link (NIC port to leaf, leaf to spine).
    pub link: EfaLinkPart,
    /// Chips whose NICs attach to one leaf (>= 1; with `rail`, a multiple of `ultraservers`).
    pub chips_per_leaf: u32,
    /// Spine switches (0 with a single leaf, else >= 1): a leaf's ports left after its NICs are
    /// split evenly over the spines, and each spine must have a port for each such link.
    pub spines: u32,
    /// `contiguous` (leaf = chip / chips_per_leaf) or `rail` (the same local index of every
    /// UltraServer on one leaf).
    pub placement: PlacementPart,
}

/// Where NICs attach (see `trnsim_fabric::topo::cluster::Placement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementPart {
    /// Leaf `c / chips_per_leaf`.
    Contiguous,
    /// Equal local indices of every UltraServer share a leaf.
    Rail,
}

/// One scale-out link.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EfaLinkPart {
    /// Line rate in Gb/s: must equal the chip's NIC port rate and the switch's port rate.
    pub Gbps: f64,
    /// Payload share of the line rate (0 < efficiency <= 1): headers, preamble and gap.
    pub efficiency: f64,
    /// PHY, cable and link layer of one link, a quantity (> 0, <= 1 ms).
    pub latency: String,
}

/// The scale-out switch presets compiled in, by name (models/configs/scaleout/*.ron).
pub const BUILTIN_SWITCHES: &[(&str, &str)] = &[
    ("eth-12.8t", include_str!("../../configs/scaleout/eth-12.8t.ron")),
    ("eth-25.6t", include_str!("../../configs/scaleout/eth-25.6t.ron")),
    ("eth-51.2t", include_str!("../../configs/scaleout/eth-51.2t.ron")),
];

/// The UltraCluster presets compiled in, by name (models/configs/system/*-ultracluster-*.ron).
pub const BUILTIN_CLUSTERS: &[(&str, &str)] = &[
    ("trn2-ultracluster-2", include_str!("../../configs/system/trn2-ultracluster-2.ron")),
    ("trn2-ultracluster-16", include_str!("../../configs/system/trn2-ultracluster-16.ron")),
    ("trn3-gen1-ultracluster-2", include_str!("../../configs/system/trn3-gen1-ultracluster-2.ron")),
    ("trn3-gen1-ultracluster-16", include_str!("../../configs/system/trn3-gen1-ultracluster-16.ron")),
    ("trn3-gen1-ultracluster-64", include_str!("../../configs/system/trn3-gen1-ultracluster-64.ron")),
    ("trn3-gen2-ultracluster-2", include_str!("../../configs/system/trn3-gen2-ultracluster-2.ron")),
    ("trn3-gen2-ultracluster-8", include_str!("../../configs/system/trn3-gen2-ultracluster-8.ron")),
];

/// The directory of the scale-out switch presets (models/configs/scaleout).
pub fn presets_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/scaleout")
}

/// The most UltraServers in a cluster for the packet-level network.
pub const MAX_ULTRASERVERS: u32 = 64;
/// The most chips of a cluster the packet-level network takes (its run time grows with every
/// packet of every message: 4,096 chips already take minutes per all-reduce).
pub const MAX_CLUSTER_CHIPS: usize = 4096;
/// The most UltraServers in a cluster for the flow-level network.
pub const MAX_FLOW_ULTRASERVERS: u32 = 8192;
/// The most chips of a cluster the flow-level network takes: 1,048,576 (2^20), room for the
/// 1,000,080-chip UltraCluster (6,945 Trn3 Gen2 UltraServers). Routes are computed from the
/// cluster's structure, so memory grows with chips and links: about 3.8 GB peak at 1,000,080 chips
/// with a hierarchical halving-doubling all-reduce in flight.
pub const MAX_FLOW_CLUSTER_CHIPS: usize = 1_048_576;

/// Which network a cluster is checked for: the limits differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The packet-level network (the default everywhere): at most [`MAX_ULTRASERVERS`]
    /// UltraServers and [`MAX_CLUSTER_CHIPS`] chips.
    Packet,
    /// The flow-level network (`trnsim collective --network flow`): at most
    /// [`MAX_FLOW_ULTRASERVERS`] UltraServers and [`MAX_FLOW_CLUSTER_CHIPS`] chips.
    Flow,
}

impl Level {
    /// (most UltraServers, most chips).
    pub fn limits(self) -> (u32, usize) {
        match self {
            Level::Packet => (MAX_ULTRASERVERS, MAX_CLUSTER_CHIPS),
            Level::Flow => (MAX_FLOW_ULTRASERVERS, MAX_FLOW_CLUSTER_CHIPS),
        }
    }
}

/// A checked switch preset.
#[derive(Clone, Debug)]
pub struct ScaleOutSwitch {
    /// The spec as written.
    pub spec: ScaleOutSwitchSpec,
    /// Port-to-port latency in picoseconds.
    pub latency_ps: u64,
}

/// A validated UltraCluster: the spec, its UltraServer, its switch and its built topology.
#[derive(Clone, Debug)]
pub struct UltraCluster {
    /// The spec as written.
    pub spec: UltraClusterSpec,
    /// The UltraServer it copies.
    pub ultraserver: UltraServer,
    /// The scale-out switch.
    pub switch: ScaleOutSwitch,
    /// Scale-up fabrics and the scale-out network as one topology.
    pub topology: Topology,
    /// The scale-out network in model units.
    pub scale_out: ScaleOut,
}

impl UltraCluster {
    /// The chip (every chip is this one).
    pub fn chip(&self) -> &Chip {
        &self.ultraserver.chip
    }
}

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Validator<'_> {
    /// An error at the first `key:` after the first `section:` (or after the start).
    fn err(&self, section: &str, key: &str, field: &str, message: String) -> ChipError {
        let start = if section.is_empty() { 0 } else { self.text.find(&format!("{section}:")).unwrap_or(0) };
        let pos = self.text[start..].find(&format!("{key}:")).map_or(start, |p| start + p);
        let (line, col) = crate::located::line_col(self.text, pos);
        ChipError { file: self.file.into(), line, col, field: field.into(), message }
    }

    fn quantity(&self, section: &str, key: &str, field: &str, s: &str, max_ps: u64) -> Result<u64, ChipError> {
        let d = s.parse::<trnsim_kernel::Dur>().map_err(|e| self.err(section, key, field, e.to_string()))?;
        let ps = d.as_ps();
        if ps == 0 || ps > max_ps {
            let m = format!("{s} is out of range (allowed: > 0, <= {})", trnsim_kernel::Dur::from_ps(max_ps));
            return Err(self.err(section, key, field, m));
        }
        Ok(ps)
    }
}

/// The most switch ports.
pub const MAX_RADIX: u32 = 4096;
const MS: u64 = 1_000_000_000;

/// Validates a switch spec read from `text` of `file`.
pub fn check_switch(file: &str, text: &str, spec: ScaleOutSwitchSpec) -> Result<ScaleOutSwitch, ChipError> {
    let v = Validator { file, text };
    let pos = |x: f64| x > 0.0 && x < 1e9;
    if !pos(spec.capacity_Tbps) {
        return Err(v.err(
            "",
            "capacity_Tbps",
            "capacity_Tbps",
            format!("{} is out of range (allowed: > 0)", spec.capacity_Tbps),
        ));
    }
    if !pos(spec.port_Gbps) {
        return Err(v.err("", "port_Gbps", "port_Gbps", format!("{} is out of range (allowed: > 0)", spec.port_Gbps)));
    }
    if !(2..=MAX_RADIX).contains(&spec.radix) {
        return Err(v.err("", "radix", "radix", format!("{} is out of range (allowed: 2..={MAX_RADIX})", spec.radix)));
    }
    let total = f64::from(spec.radix) * spec.port_Gbps / 1e3;
    if total > spec.capacity_Tbps * 1.01 {
        let m = format!(
            "{} ports x {} Gb/s = {total} Tb/s exceeds the capacity of {} Tb/s",
            spec.radix, spec.port_Gbps, spec.capacity_Tbps
        );
        return Err(v.err("", "radix", "radix", m));
    }
    if !(spec.buffer_MiB >= 0.0 && spec.buffer_MiB < 1e9) {
        return Err(v.err(
            "",
            "buffer_MiB",
            "buffer_MiB",
            format!("{} is out of range (allowed: >= 0)", spec.buffer_MiB),
        ));
    }
    let latency_ps = v.quantity("", "latency", "latency", &spec.latency, MS)?;
    Ok(ScaleOutSwitch { spec, latency_ps })
}

/// Validates a cluster spec read from `text` of `file` on a checked UltraServer and switch,
/// for the packet-level network ([`check_for`] with [`Level::Packet`]).
pub fn check(
    file: &str,
    text: &str,
    spec: UltraClusterSpec,
    ultraserver: UltraServer,
    switch: ScaleOutSwitch,
) -> Result<UltraCluster, ChipError> {
    check_for(file, text, spec, ultraserver, switch, Level::Packet)
}

/// Validates a cluster spec read from `text` of `file` on a checked UltraServer and switch,
/// within the limits of the network `level`; errors are located in `text` (the chip's NIC is
/// named in the message).
pub fn check_for(
    file: &str,
    text: &str,
    spec: UltraClusterSpec,
    ultraserver: UltraServer,
    switch: ScaleOutSwitch,
    level: Level,
) -> Result<UltraCluster, ChipError> {
    let v = Validator { file, text };
    let so = &spec.scale_out;
    let (max_us, max_chips) = level.limits();
    let flow_way = "the flow-level network (--network flow)";
    if !(1..=max_us).contains(&spec.ultraservers) {
        let mut m = format!("{} is out of range (allowed: 1..={max_us})", spec.ultraservers);
        if level == Level::Packet && (1..=MAX_FLOW_ULTRASERVERS).contains(&spec.ultraservers) {
            m += &format!(" for the packet-level network; {flow_way} takes up to {MAX_FLOW_ULTRASERVERS}");
        }
        return Err(v.err("", "ultraservers", "ultraservers", m));
    }
    let per_us = ultraserver.topology.chips;
    let chips = usize::try_from(spec.ultraservers).ok().and_then(|u| per_us.checked_mul(u));
    if chips.is_none_or(|c| c > max_chips) {
        let total = chips.map_or_else(|| "too many".to_string(), |c| c.to_string());
        let m = match level {
            Level::Packet => format!(
                "{} UltraServers of {per_us} chips = {total} chips; the packet-level network takes at most {MAX_CLUSTER_CHIPS}; {flow_way} takes up to {MAX_FLOW_CLUSTER_CHIPS}",
                spec.ultraservers
            ),
            Level::Flow => format!(
                "{} UltraServers of {per_us} chips = {total} chips; the flow-level network takes at most {MAX_FLOW_CLUSTER_CHIPS}",
                spec.ultraservers
            ),
        };
        return Err(v.err("", "ultraservers", "ultraservers", m));
    }
    let efa = &ultraserver.chip.spec.efa;
    let chip_name = &ultraserver.spec.chip;
    let g = so.link.Gbps;
    if !(g > 0.0 && g < 1e9) {
        return Err(v.err("link", "Gbps", "scale_out.link.Gbps", format!("{g} is out of range (allowed: > 0)")));
    }
    let close = |a: f64, b: f64| (a / b - 1.0).abs() <= 1e-9;
    if !close(g, efa.port_gbps()) {
        let m = format!(
            "EFA links of {g} Gb/s do not match chip {chip_name:?}'s NIC ports ({} Gb/s each: efa.Gbps {} / efa.ports {})",
            efa.port_gbps(),
            efa.Gbps,
            efa.ports
        );
        return Err(v.err("link", "Gbps", "scale_out.link.Gbps", m));
    }
    if !close(g, switch.spec.port_Gbps) {
        let m = format!(
            "EFA links of {g} Gb/s do not match switch {:?}'s ports of {} Gb/s",
            switch.spec.name, switch.spec.port_Gbps
        );
        return Err(v.err("link", "Gbps", "scale_out.link.Gbps", m));
    }
    let eff = so.link.efficiency;
    if !(eff > 0.0 && eff <= 1.0) {
        let m = format!("{eff} is out of range (allowed: > 0, <= 1)");
        return Err(v.err("link", "efficiency", "scale_out.link.efficiency", m));
    }
    let link_ps = v.quantity("link", "latency", "scale_out.link.latency", &so.link.latency, MS)?;
    let nic_ps = match Some(&efa.latency).filter(|l| !l.is_empty()) {
        Some(l) => efa_latency_ps(l)
            .map_err(|m| v.err("", "ultraserver", "ultraserver", format!("chip {chip_name:?}: efa.latency: {m}")))?,
        None => {
            let m = format!("chip {chip_name:?} has no efa.latency: a cluster needs its NIC's latency (e.g. \"14us\")");
            return Err(v.err("", "ultraserver", "ultraserver", m));
        }
    };
    let net = ScaleOut {
        ultraservers: spec.ultraservers as usize,
        nic_ports: efa.ports,
        port_bytes_per_s: g * 1e9 / 8.0 * eff,
        nic_latency_ps: nic_ps,
        link_latency_ps: link_ps,
        switch_latency_ps: switch.latency_ps,
        radix: switch.spec.radix,
        chips_per_leaf: so.chips_per_leaf,
        spines: so.spines,
        placement: match so.placement {
            PlacementPart::Contiguous => Placement::Contiguous,
            PlacementPart::Rail => Placement::Rail,
        },
    };
    if let Err((field, m)) = net.shape(per_us) {
        return Err(match field {
            "radix" => v.err("scale_out", "switch", "scale_out.switch", format!("switch {:?}: {m}", switch.spec.name)),
            "ultraservers" => v.err("", "ultraservers", "ultraservers", m),
            f => v.err("scale_out", f, &format!("scale_out.{f}"), m),
        });
    }
    let topology =
        cluster::build(&spec.name, &ultraserver.topology, &net).map_err(|m| v.err("", "scale_out", "scale_out", m))?;
    Ok(UltraCluster { spec, ultraserver, switch, topology, scale_out: net })
}
