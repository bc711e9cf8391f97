//! An UltraServer as data: a chip preset, a fabric topology preset and the published system
//! figures ([`UltraServerSpec`], models/configs/system/*-ultraserver.ron), resolved and checked
//! against each other with located errors (`file:line:col: field: message`).
//!
//! The spec names its parts: `chip: "trn3-chip"` is models/configs/system/trn3-chip.ron and
//! `fabric: "trn3-gen1-nl32x2"` is models/configs/fabric/trn3-gen1-nl32x2.ron. [`parse`] and the
//! built-ins ([`trn3_gen1`], [`trn3_gen2`], [`trn2_ultraserver`]) resolve names among the presets
//! compiled into the binary; [`load`] reads them from disk (the file's own directory, then
//! models/configs/system, for chips; `trnsim_fabric::topo::presets_dir()` for fabrics).
//!
//! Left out: the host CPUs, the EFA network and the servers' own boards; `servers` is a
//! documented count checked against the topology, not a modelled object.

use super::spec::{parse as parse_chip, Chip, ChipError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use trnsim_fabric::topo::{self, Kind, Topology};

/// One UltraServer: which chip, which fabric, how many chips, and the published figures it is
/// compared against. Unknown keys are rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UltraServerSpec {
    /// Name used in reports ("trn3-gen1-ultraserver").
    pub name: String,
    /// Where the numbers come from (spec sections and source keys).
    #[serde(default)]
    pub source: String,
    /// Values that are estimates, with the reasoning.
    #[serde(default)]
    pub estimated: Vec<String>,
    /// A chip preset name ("trn3-chip": models/configs/system/trn3-chip.ron).
    pub chip: String,
    /// A fabric topology preset name ("trn3-gen1-nl32x2": models/configs/fabric/*.ron).
    pub fabric: String,
    /// Chips in the UltraServer (must equal the topology's chip count).
    pub chips: u32,
    /// Published system figures.
    pub documented: UltraDocumented,
}

/// Published UltraServer figures (spec §1, §6).
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UltraDocumented {
    /// Servers (instances) the chips are spread over (divides `chips`; for a switched fabric,
    /// `chips / servers` must equal its `chips_per_server`).
    pub servers: u32,
    /// Documented scale-up (NeuronLink) bandwidth per chip in GB/s, as AWS states it (> 0).
    /// Reported beside the model's wired links; not required to match (see `estimated`).
    pub scale_up_GBps_per_chip: f64,
    /// Documented EFA bandwidth of the whole UltraServer in Tb/s (> 0; chips x the chip's
    /// `efa.Gbps` must be within 1 % of it).
    pub efa_Tbps: f64,
}

/// A validated UltraServer: the spec, its chip and its built topology.
#[derive(Clone, Debug)]
pub struct UltraServer {
    /// The spec as written.
    pub spec: UltraServerSpec,
    /// The chip preset it names (every chip is this one).
    pub chip: Chip,
    /// The fabric preset it names, built.
    pub topology: Topology,
}

impl UltraServer {
    /// Chips per server.
    pub fn chips_per_server(&self) -> u32 {
        self.spec.chips / self.spec.documented.servers
    }

    /// NeuronLink ports the fabric wires on the busiest chip (parallel links counted once each).
    pub fn links_per_chip(&self) -> u32 {
        links_per_chip(&self.topology)
    }

    /// Raw bandwidth of the wired ports of one chip in GB/s, both directions (links x lanes x
    /// lane rate x 2; no line-code or link-layer overhead).
    pub fn wired_raw_gbps_per_chip(&self) -> f64 {
        let nl = &self.chip.spec.neuronlink;
        let one = super::spec::NeuronLinkPart { ports: 1, ..nl.clone() };
        f64::from(self.links_per_chip()) * one.raw_gbps(self.chip.neuronlink)
    }

    /// Payload bandwidth chip 0 can inject into the fabric in GB/s, one direction (the link
    /// layer's analytic efficiency for the topology's packet size).
    pub fn injection_gbps_per_chip(&self) -> f64 {
        self.topology.injection_bytes_per_s(0) / 1e9
    }

    /// EFA of the whole UltraServer in Tb/s: chips x the chip's share.
    pub fn efa_tbps(&self) -> f64 {
        f64::from(self.spec.chips) * self.chip.spec.efa.Gbps / 1e3
    }
}

fn links_per_chip(t: &Topology) -> u32 {
    (0..t.chips).map(|c| t.out[c].iter().map(|&e| t.edges[e].servers).sum::<u32>()).max().unwrap_or(0)
}

/// Largest relative difference allowed between chips x the chip's EFA and the documented
/// UltraServer EFA: 1 % (the per-chip figure is the documented total divided, spec §1).
pub const EFA_TOLERANCE: f64 = 0.01;

/// models/configs/system/trn3-gen1-ultraserver.ron, built in.
pub const TRN3_GEN1_RON: &str = include_str!("../../../configs/system/trn3-gen1-ultraserver.ron");
/// models/configs/system/trn3-gen2-ultraserver.ron, built in.
pub const TRN3_GEN2_RON: &str = include_str!("../../../configs/system/trn3-gen2-ultraserver.ron");
/// models/configs/system/trn2-ultraserver.ron, built in.
pub const TRN2_ULTRASERVER_RON: &str = include_str!("../../../configs/system/trn2-ultraserver.ron");

/// The chip presets compiled in, by name.
pub const BUILTIN_CHIPS: &[(&str, &str)] = &[
    ("trn2-chip", super::TRN2_CHIP_RON),
    ("trn3-chip", super::TRN3_CHIP_RON),
    ("trn4-chip", include_str!("../../../configs/system/trn4-chip.ron")),
];

/// The fabric topology presets compiled in, by name (models/configs/fabric/*.ron).
pub const BUILTIN_FABRICS: &[(&str, &str)] = &[
    ("fat-tree-pcie6-r20-l2", include_str!("../../../configs/fabric/fat-tree-pcie6-r20-l2.ron")),
    ("trn2-server-4x4", include_str!("../../../configs/fabric/trn2-server-4x4.ron")),
    ("trn2-ultraserver-4x4x4", include_str!("../../../configs/fabric/trn2-ultraserver-4x4x4.ron")),
    ("trn3-gen1-nl32x2", include_str!("../../../configs/fabric/trn3-gen1-nl32x2.ron")),
    ("trn3-gen2-nl72x2", include_str!("../../../configs/fabric/trn3-gen2-nl72x2.ron")),
];

/// The built-in Trn3 Gen1 UltraServer (64 chips, NL32x2).
pub fn trn3_gen1() -> Result<UltraServer, String> {
    parse("models/configs/system/trn3-gen1-ultraserver.ron (built in)", TRN3_GEN1_RON)
}

/// The built-in Trn3 Gen2 UltraServer (144 chips, NL72x2).
pub fn trn3_gen2() -> Result<UltraServer, String> {
    parse("models/configs/system/trn3-gen2-ultraserver.ron (built in)", TRN3_GEN2_RON)
}

/// The built-in Trn2 UltraServer (64 chips, 4x4x4 torus).
pub fn trn2_ultraserver() -> Result<UltraServer, String> {
    parse("models/configs/system/trn2-ultraserver.ron (built in)", TRN2_ULTRASERVER_RON)
}

/// Where preset names are looked up.
#[derive(Clone, Debug)]
pub enum Presets {
    /// The presets compiled in.
    BuiltIn,
    /// Chip files in these directories (first match wins), fabric files in this directory.
    Disk {
        /// Directories searched for chip files, first match wins.
        chip_dirs: Vec<PathBuf>,
        /// The directory of fabric topology files.
        fabric_dir: PathBuf,
    },
}

/// A named preset's file name and text, or the names known.
pub type Found = Result<(String, String), Vec<String>>;

impl Presets {
    /// The presets on disk for a file at `path`: chips in its own directory, then in
    /// [`presets_dir`]; fabrics in `trnsim_fabric::topo::presets_dir()`.
    pub fn beside(path: &Path) -> Presets {
        let mut chip_dirs: Vec<PathBuf> = path.parent().map(Path::to_path_buf).into_iter().collect();
        chip_dirs.push(presets_dir());
        Presets::Disk { chip_dirs, fabric_dir: topo::presets_dir() }
    }

    /// The chip preset `name`: its file name and text, or the names known.
    pub fn chip(&self, name: &str) -> Found {
        match self {
            Presets::BuiltIn => builtin(BUILTIN_CHIPS, name),
            Presets::Disk { chip_dirs, .. } => {
                let mut known = Vec::new();
                for d in chip_dirs {
                    match on_disk(d, name, "ChipSpec") {
                        Ok(hit) => return Ok(hit),
                        Err(k) => known.extend(k),
                    }
                }
                known.sort();
                known.dedup();
                Err(known)
            }
        }
    }

    /// The fabric topology preset `name`: its file name and text, or the names known.
    pub fn fabric(&self, name: &str) -> Found {
        match self {
            Presets::BuiltIn => builtin(BUILTIN_FABRICS, name),
            Presets::Disk { fabric_dir, .. } => on_disk(fabric_dir, name, "TopologySpec"),
        }
    }

    /// The UltraServer preset `name` (looked up like chips): its file name and text, or the
    /// names known.
    pub fn ultraserver(&self, name: &str) -> Found {
        match self {
            Presets::BuiltIn => builtin(crate::doc::BUILTIN_ULTRASERVERS, name),
            Presets::Disk { chip_dirs, .. } => {
                let mut known = Vec::new();
                for d in chip_dirs {
                    match on_disk(d, name, "UltraServerSpec") {
                        Ok(hit) => return Ok(hit),
                        Err(k) => known.extend(k),
                    }
                }
                known.sort();
                known.dedup();
                Err(known)
            }
        }
    }

    /// The scale-out switch preset `name`: beside the file, then in models/configs/scaleout;
    /// its file name and text, or the names known.
    pub fn switch(&self, name: &str) -> Found {
        match self {
            Presets::BuiltIn => builtin(crate::cluster::BUILTIN_SWITCHES, name),
            Presets::Disk { chip_dirs, .. } => {
                let mut known = Vec::new();
                let beside = chip_dirs.first().filter(|d| **d != presets_dir());
                for d in beside.into_iter().cloned().chain([crate::cluster::presets_dir()]) {
                    match on_disk(&d, name, "ScaleOutSwitchSpec") {
                        Ok(hit) => return Ok(hit),
                        Err(k) => known.extend(k),
                    }
                }
                known.sort();
                known.dedup();
                Err(known)
            }
        }
    }
}

fn builtin(table: &[(&str, &str)], name: &str) -> Found {
    match table.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => Ok((format!("{n}.ron (built in)"), text.to_string())),
        None => Err(table.iter().map(|(n, _)| n.to_string()).collect()),
    }
}

/// `dir/name.ron` if it is a `kind` file, else the names of the `kind` files in `dir`.
fn on_disk(dir: &Path, name: &str, kind: &str) -> Found {
    let path = dir.join(format!("{name}.ron"));
    let is_kind = |text: &str| super::top_level_name(text).as_deref() == Some(kind);
    if let Ok(text) = trnsim_kernel::input::read_text(&path) {
        if is_kind(&text) && !name.contains('/') {
            return Ok((path.display().to_string(), text));
        }
    }
    let mut known: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let n = p.file_name()?.to_str()?.strip_suffix(".ron")?.to_string();
            is_kind(&trnsim_kernel::input::read_text(&p).ok()?).then_some(n)
        })
        .collect();
    known.sort();
    Err(known)
}

/// The directory of the chip and UltraServer presets (models/configs/system).
pub fn presets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/system")
}

/// Reads and validates an UltraServer file, resolving its chip in the file's own directory,
/// then in [`presets_dir`], and its fabric in `trnsim_fabric::topo::presets_dir()`.
pub fn load(path: &Path) -> Result<UltraServer, String> {
    let (file, text) = crate::located::read_ron_file(path).map_err(|e| e.to_string())?;
    check(&file, &text, &Presets::beside(path))
}

/// Parses and validates UltraServer text, resolving names among the built-in presets; `origin`
/// names it in errors.
pub fn parse(origin: &str, text: &str) -> Result<UltraServer, String> {
    check(origin, text, &Presets::BuiltIn)
}

/// The UltraServer `spec` read from `text` of `file`, checked against a chip and a fabric that
/// were validated already (the [`crate::doc`] path: the parts may carry overrides). Errors are
/// located in `text`.
pub fn check_parts(
    file: &str,
    text: &str,
    spec: UltraServerSpec,
    chip: Chip,
    checked: topo::Checked,
) -> Result<UltraServer, ChipError> {
    Validator { file, text }.check_parts(spec, chip, checked)
}

fn check(file: &str, text: &str, presets: &Presets) -> Result<UltraServer, String> {
    let spec: UltraServerSpec = crate::located::from_ron(file, text).map_err(|e| e.to_string())?;
    Validator { file, text }.check(spec, presets).map_err(|e| e.to_string())
}

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Validator<'_> {
    /// An error at the first line whose text starts with `key:` (the start when absent).
    fn err(&self, key: &str, field: &str, message: String) -> ChipError {
        let needle = format!("{key}:");
        let at_line_start = |p: usize| self.text[..p].rsplit('\n').next().is_some_and(|s| s.trim().is_empty());
        let pos = self.text.match_indices(&needle).map(|(p, _)| p).find(|&p| at_line_start(p)).unwrap_or(0);
        let (line, col) = crate::located::line_col(self.text, pos);
        ChipError { file: self.file.into(), line, col, field: field.into(), message }
    }

    /// `kind` preset `name`, or an error at `key` listing the known names.
    fn resolve(&self, key: &str, kind: &str, name: &str, found: Found) -> Result<(String, String), ChipError> {
        found.map_err(|known| {
            let m = format!("unknown {kind} preset {name:?} (known: {})", known.join(", "));
            self.err(key, key, m)
        })
    }

    fn check(&self, spec: UltraServerSpec, presets: &Presets) -> Result<UltraServer, ChipError> {
        let (cfile, ctext) = self.preset("chip", &spec.chip, presets)?;
        let chip = parse_chip(&cfile, &ctext).map_err(|e| self.err("chip", "chip", format!("preset {e}")))?;
        let (ffile, ftext) = self.preset("fabric", &spec.fabric, presets)?;
        let checked =
            topo::spec::parse(&ffile, &ftext).map_err(|e| self.err("fabric", "fabric", format!("preset {e}")))?;
        self.check_parts(spec, chip, checked)
    }

    /// The file name and text of the `kind` ("chip" or "fabric") preset `name`, or an error at
    /// the `kind:` field listing the known names.
    fn preset(&self, kind: &str, name: &str, presets: &Presets) -> Result<(String, String), ChipError> {
        let found = if kind == "chip" { presets.chip(name) } else { presets.fabric(name) };
        self.resolve(kind, kind, name, found)
    }

    /// The UltraServer's own checks, on a chip and a fabric already validated.
    fn check_parts(&self, spec: UltraServerSpec, chip: Chip, checked: topo::Checked) -> Result<UltraServer, ChipError> {
        let topology = Topology::build(&checked).map_err(|e| self.err("fabric", "fabric", e))?;
        if spec.chips as usize != topology.chips {
            let m = format!("{} differs from fabric {:?}'s {} chips", spec.chips, spec.fabric, topology.chips);
            return Err(self.err("chips", "chips", m));
        }
        self.servers(&spec, &checked.spec.kind)?;
        self.links(&spec, &chip, &checked, &topology)?;
        self.documented(&spec, &chip)?;
        Ok(UltraServer { spec, chip, topology })
    }

    /// `servers` divides the chips and, on a switched fabric, matches its servers.
    fn servers(&self, spec: &UltraServerSpec, kind: &Kind) -> Result<(), ChipError> {
        let s = spec.documented.servers;
        if s == 0 || !spec.chips.is_multiple_of(s) {
            let m = format!("{s} is out of range (allowed: >= 1, dividing chips = {})", spec.chips);
            return Err(self.err("servers", "documented.servers", m));
        }
        if let Kind::Switched { chips_per_server, .. } = kind {
            if spec.chips / s != *chips_per_server {
                let m = format!(
                    "{s} servers of {} chips, but fabric {:?} has {chips_per_server} chips per server",
                    spec.chips / s,
                    spec.fabric
                );
                return Err(self.err("servers", "documented.servers", m));
            }
        }
        Ok(())
    }

    /// The fabric's links are the chip's NeuronLink ports: same encoding and width, no more
    /// of them than the chip has.
    fn links(&self, spec: &UltraServerSpec, chip: &Chip, c: &topo::Checked, t: &Topology) -> Result<(), ChipError> {
        let nl = &chip.spec.neuronlink;
        let (enc, lanes) = (c.link.encoding.name, c.link.lanes);
        if enc != nl.encoding || lanes != nl.lanes_per_port {
            let m = format!(
                "fabric {:?} links are {enc} x{lanes}, but chip {:?}'s NeuronLink ports are {} x{}",
                spec.fabric, spec.chip, nl.encoding, nl.lanes_per_port
            );
            return Err(self.err("fabric", "fabric", m));
        }
        let used = links_per_chip(t);
        if used > nl.ports {
            let m = format!(
                "fabric {:?} wires {used} links per chip, but chip {:?} has {} NeuronLink ports",
                spec.fabric, spec.chip, nl.ports
            );
            return Err(self.err("fabric", "fabric", m));
        }
        Ok(())
    }

    /// Positive documented figures; the EFA total equals chips x the chip's share.
    fn documented(&self, spec: &UltraServerSpec, chip: &Chip) -> Result<(), ChipError> {
        let d = &spec.documented;
        if !(d.scale_up_GBps_per_chip > 0.0 && d.scale_up_GBps_per_chip < 1e9) {
            let m = format!("{} is out of range (allowed: > 0)", d.scale_up_GBps_per_chip);
            return Err(self.err("scale_up_GBps_per_chip", "documented.scale_up_GBps_per_chip", m));
        }
        if !(d.efa_Tbps > 0.0 && d.efa_Tbps < 1e9) {
            let m = format!("{} is out of range (allowed: > 0)", d.efa_Tbps);
            return Err(self.err("efa_Tbps", "documented.efa_Tbps", m));
        }
        let model = f64::from(spec.chips) * chip.spec.efa.Gbps / 1e3;
        if (model / d.efa_Tbps - 1.0).abs() > EFA_TOLERANCE {
            let m = format!(
                "{} Tb/s differs from chips ({}) x the chip's efa.Gbps ({}) = {model} Tb/s by more than {:.0} %",
                d.efa_Tbps,
                spec.chips,
                chip.spec.efa.Gbps,
                EFA_TOLERANCE * 100.0
            );
            return Err(self.err("efa_Tbps", "documented.efa_Tbps", m));
        }
        Ok(())
    }
}

/// Checks that the chip and fabric names of `spec` (read from `text` of `file`) resolve among
/// `presets`; an unknown name is located at its field and lists the known ones.
pub fn check_file_names(file: &str, text: &str, spec: &UltraServerSpec, presets: &Presets) -> Result<(), ChipError> {
    let v = Validator { file, text };
    v.preset("chip", &spec.chip, presets)?;
    v.preset("fabric", &spec.fabric, presets)?;
    Ok(())
}
