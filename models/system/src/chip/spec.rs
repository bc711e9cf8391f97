//! A chip as data: the RON schema ([`ChipSpec`], models/configs/system/*.ron), parsing with
//! located errors (`file:line:col: field: message`, as the fabric topology loader) and
//! validation against the models' presets.

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use trnsim_core::dma::DmaParams;
use trnsim_core::spec::CoreSpec;
use trnsim_fabric::link::encoding::{self, Encoding};
use trnsim_kernel::Dur;
use trnsim_mem::hbm::presets::StackSpec;

/// One chip: its NeuronCores, HBM stacks and DMA engines, with the documented figures the
/// model is compared against. Unknown keys are rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipSpec {
    /// Name used in reports ("trn3-chip").
    pub name: String,
    /// Where the numbers come from (spec sections and source keys).
    #[serde(default)]
    pub source: String,
    /// Values that are estimates, with the reasoning.
    #[serde(default)]
    pub estimated: Vec<String>,
    /// The NeuronCore: a core preset ("nc-v4"; `trnsim describe core` lists them) or a core
    /// file's path relative to this file ("my-core.ron"). A system's tree holds the core's
    /// fields in place of the name, so `--set chip.core.tensor.rows=256` reaches them.
    pub core: CoreRef,
    /// NeuronCores on the chip (1..=64).
    pub cores: u32,
    /// Compute dies (1..=64; divides `cores` and `hbm.stacks`). Only documents the layout: no
    /// die-to-die path is modelled.
    pub dies: u32,
    /// The HBM stacks.
    pub hbm: HbmPart,
    /// Each core's DMA block.
    pub dma: DmaPart,
    /// Collective-communication cores on the chip (>= 2 per NeuronCore, <= 1024: spec §7, A10). Only
    /// documented: collectives are modelled as fabric traffic, not by CC-core programs.
    pub cc_cores: u32,
    /// The chip's NeuronLink (scale-up) ports.
    pub neuronlink: NeuronLinkPart,
    /// The PCIe port to the host CPU. Only documented: no host is modelled.
    pub host: HostPart,
    /// The chip's EFA NIC (scale-out network): modelled when the chip is part of an
    /// UltraCluster (`crate::cluster`), else only documented.
    pub efa: EfaPart,
    /// Published chip figures, for comparison in reports (not used by the model).
    pub documented: Documented,
    /// Instances that run a registered RTL block beside their model (swap-in, docs/rtl.md):
    /// `hbm{k}.ch{c}.pc{p}.bank{b}`, bank `b` of pseudo-channel `p` of channel `c` of stack
    /// `k`, whose commands are clocked through the `hbm_bank` timing FSM (needs `hbm.fidelity`
    /// cycle); `nc{i}.sbuf.bank{b}` or `nc{i}.psum.bank{b}`, one bank of core `i`'s SBUF or
    /// PSUM, whose arbitration is clocked through the `sbuf_bank` or `psum_bank` block;
    /// `"SRC.PORT -> DST.PORT"`, a kernel link of the chip (names as in a chip alone),
    /// whose receive side is clocked through the `link_fifo` block of its depth. Needs a
    /// build with feature `rtl`; empty by default.
    #[serde(default)]
    pub rtl: Vec<String>,
    /// The chip's energy table: a built-in name (`trn3-energy`, models/configs/energy) or a
    /// file's path relative to this file. A system's tree holds the table under `energy`.
    /// Empty (the default): the chip reports no energy.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub energy: String,
}

/// A chip's core: by name (a preset or a file's path) as written in chip files, or the
/// description itself (as a system's tree holds it once the name is resolved).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CoreRef {
    /// A preset name or a core file's path.
    Name(String),
    /// The core's description.
    Spec(Box<CoreSpec>),
}

impl CoreRef {
    /// The core's name: the name written, or the description's `name`.
    pub fn name(&self) -> &str {
        match self {
            CoreRef::Name(n) => n,
            CoreRef::Spec(s) => &s.name,
        }
    }
}

/// A chip's HBM stack: by name (a preset or a file's path) as written in chip files, or the
/// description itself (as a system's tree holds it once the name is resolved).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StackRef {
    /// A preset name or a stack file's path.
    Name(String),
    /// The stack's description.
    Spec(Box<StackSpec>),
}

impl StackRef {
    /// The stack's name: the name written, or the description's `name`.
    pub fn name(&self) -> &str {
        match self {
            StackRef::Name(n) => n,
            StackRef::Spec(s) => &s.name,
        }
    }
}

/// The chip's HBM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HbmPart {
    /// The stack: a preset ("hbm3e-9600"; `trnsim describe hbm` lists them) or a stack file's
    /// path relative to this file ("my-stack.ron"). A system's tree holds the stack's fields in
    /// place of the name, so `--set chip.hbm.preset.timing.cl=22` (or `chip.hbm.cl=22`)
    /// reaches them.
    pub preset: StackRef,
    /// Stacks on the chip (1..=64).
    pub stacks: u32,
    /// Cores sharing one stack: core `i`'s DMA engines reach stack `i / cores_per_stack`, so
    /// `cores = stacks x cores_per_stack`.
    pub cores_per_stack: u32,
    /// "cycle" (default: controllers scheduling every command) or "fast" (each request's
    /// completion computed on arrival, no reordering: `trnsim_mem::hbm::fast`).
    #[serde(default)]
    pub fidelity: trnsim_mem::hbm::Fidelity,
    /// The stacks' address map (docs/memory.md, "Address maps"), e.g. "ro-ba-bg-sid-pc-ch-co"
    /// or a reference tool's by name ("RoBaRaCoCh"); absent: the default map
    /// (`trnsim_mem::hbm::AddressMap::DEFAULT`, channels interleaved every 64 B).
    #[serde(default = "default_address_map")]
    pub address_map: String,
}

fn default_address_map() -> String {
    trnsim_mem::hbm::AddressMap::DEFAULT.into()
}

/// One core's DMA block (the rest of [`DmaParams`] is the core's, `core.dma`).
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmaPart {
    /// DMA engines per core (divides the 128 SBUF partitions: each serves 128 / n).
    pub engines_per_core: u32,
    /// Queues per engine (1..=32).
    pub queues: u32,
    /// Peak GB/s of one engine (> 0).
    pub peak_GBps_per_engine: f64,
    /// Command arrival to first data ("1300ns"; 0ns..=1ms).
    pub start_latency: String,
    /// "cycle" (default: one HBM request per 32 B burst) or "fast" (one request per
    /// partition row of a packet, as many bursts as fit the outstanding limit; needs
    /// `hbm.fidelity: "fast"`, whose stack serves a request of several bursts).
    #[serde(default)]
    pub fidelity: trnsim_mem::hbm::Fidelity,
}

/// The NeuronLink ports of one chip: how many, of which lane encoding and width, and the
/// documented per-chip bandwidth their raw lane rate must reproduce (within
/// [`NEURONLINK_TOLERANCE`]). The fabric presets wire some of these ports into a topology.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeuronLinkPart {
    /// NeuronLink generation: "nl-v2", "nl-v3" or "nl-v4" (must match the core generation).
    pub version: String,
    /// Lane encoding of a port, a `trnsim_fabric::link::encoding` name ("pcie-gen6").
    pub encoding: String,
    /// Ports on the chip (1..=256).
    pub ports: u32,
    /// Lanes per port (one of the encoding's widths).
    pub lanes_per_port: u32,
    /// Documented NeuronLink bandwidth of the chip in GB/s, both directions (spec §1).
    pub documented_GBps: f64,
}

impl NeuronLinkPart {
    /// Raw bandwidth of all ports in GB/s, both directions: ports x lanes x lane rate x 2.
    /// Line-code and link-layer overheads are left out (the documented figures are raw).
    pub fn raw_gbps(&self, encoding: &Encoding) -> f64 {
        let per_dir = f64::from(self.ports * self.lanes_per_port) * encoding.lane_mbit_per_s as f64 / 8e3;
        2.0 * per_dir
    }
}

/// Largest relative difference allowed between [`NeuronLinkPart::raw_gbps`] and the documented
/// per-chip figure: 2 %, room for rounding in published figures (2.56 TB/s, 1.28 TB/s) but not
/// for a wrong port or lane count (one x8 port of 20 is 5 %).
pub const NEURONLINK_TOLERANCE: f64 = 0.02;

/// The chip's PCIe port to its host CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostPart {
    /// Lane encoding, a `trnsim_fabric::link::encoding` name ("pcie-gen5").
    pub encoding: String,
    /// Lanes (one of the encoding's widths).
    pub lanes: u32,
}

/// The chip's EFA NIC: its share of the scale-out network.
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EfaPart {
    /// EFA bandwidth per chip in Gb/s, all ports together (> 0; spec §1: an instance's EFA
    /// divided by its chips).
    pub Gbps: f64,
    /// NIC ports, each `Gbps / ports` (1..=64; default 1).
    #[serde(default = "one")]
    pub ports: u32,
    /// Fixed latency of the NICs at both ends of a transfer together, one way (doorbell to
    /// data in the far chip's HBM, less the switches and cables): a quantity such as "12us"
    /// (0 < latency <= 1 s). Needed only when the chip is part of an UltraCluster; absent
    /// (or ""), a cluster of this chip is refused.
    #[serde(default)]
    pub latency: String,
}

fn one() -> u32 {
    1
}

/// An EFA latency in picoseconds: a quantity in `(0, 1 s]`.
pub fn efa_latency_ps(s: &str) -> Result<u64, String> {
    let d = s.parse::<trnsim_kernel::Dur>().map_err(|e| e.to_string())?;
    let ps = d.as_ps();
    if ps == 0 || ps > 1_000_000_000_000 {
        return Err(format!("{s} is out of range (allowed: > 0, <= 1s)"));
    }
    Ok(ps)
}

/// The most EFA NIC ports of a chip.
pub const MAX_EFA_PORTS: u32 = 64;

impl EfaPart {
    /// One port's line rate in Gb/s.
    pub fn port_gbps(&self) -> f64 {
        self.Gbps / f64::from(self.ports.max(1))
    }
}

/// Published chip figures (spec §1).
#[allow(non_snake_case)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Documented {
    /// Dense BF16 TFLOPS of the chip.
    pub bf16_tflops: f64,
    /// HBM capacity in GiB.
    pub hbm_GiB: u32,
    /// HBM bandwidth in GB/s.
    pub hbm_GBps: f64,
    /// DMA engines on the chip.
    pub dma_engines: u32,
    /// DMA bandwidth in GB/s.
    pub dma_GBps: f64,
    /// SBUF on the chip in MiB.
    pub sbuf_MiB: u32,
}

/// A chip spec that failed to parse or validate, located in its file: the harness's one
/// located RON error ([`crate::located::ConfigError`]).
pub type ChipError = crate::located::ConfigError;

/// A validated chip: the spec plus what its strings name.
#[derive(Clone, Debug)]
pub struct Chip {
    /// The spec as written.
    pub spec: ChipSpec,
    /// The NeuronCore (every core of the chip is one of these).
    pub core: Arc<CoreSpec>,
    /// The HBM stack (every stack of the chip is one of these).
    pub hbm: Arc<StackSpec>,
    /// Each core's DMA parameters.
    pub dma: DmaParams,
    /// The NeuronLink ports' lane encoding.
    pub neuronlink: &'static Encoding,
    /// The host port's lane encoding.
    pub host: &'static Encoding,
    /// Where each `rtl` entry is written (`FILE:LINE:COL: rtl[i]`), for errors found when the
    /// chip is built (a link that does not exist).
    pub rtl_at: Vec<String>,
    /// The chip's energy table as its system resolves it (overrides applied), for the power
    /// tracks of traced runs; None for a chip read alone or one that names no table.
    pub energy: Option<Arc<crate::energy::EnergyTable>>,
}

impl Chip {
    /// One stack's configuration: the preset's, with the chip's address map.
    pub fn stack_config(&self) -> trnsim_mem::hbm::StackConfig {
        let mut c = trnsim_mem::hbm::StackConfig::from_preset(&self.hbm);
        c.controller.address_map = self.spec.hbm.address_map.clone();
        c
    }

    /// The stack core `core` is wired to.
    pub fn stack_of(&self, core: u32) -> u32 {
        core / self.spec.hbm.cores_per_stack
    }

    /// Peak dense BF16 TFLOPS of the model: rows x columns MACs x 2 flops at the tensor clock,
    /// per core.
    pub fn peak_bf16_tflops(&self) -> f64 {
        f64::from(self.spec.cores) * self.core.peak_bf16_flops() / 1e12
    }

    /// HBM bytes of one stack of the model (its preset's organization).
    pub fn stack_bytes(&self) -> u64 {
        self.hbm.org.stack_bytes()
    }

    /// HBM bytes of the whole chip (every stack).
    pub fn hbm_capacity_bytes(&self) -> u64 {
        self.stack_bytes().saturating_mul(u64::from(self.spec.hbm.stacks))
    }

    /// Peak HBM GB/s of the model (every stack's pins).
    pub fn peak_hbm_gbps(&self) -> f64 {
        f64::from(self.spec.hbm.stacks) * self.hbm.stack_peak_bytes_per_s() / 1e9
    }

    /// Raw NeuronLink GB/s of the chip, both directions (every port's lanes at the lane rate).
    pub fn neuronlink_raw_gbps(&self) -> f64 {
        self.spec.neuronlink.raw_gbps(self.neuronlink)
    }

    /// Peak DMA GB/s of the model (every engine at its peak).
    pub fn peak_dma_gbps(&self) -> f64 {
        f64::from(self.spec.cores * self.dma.engines) * self.dma.peak_bytes_per_ns
    }
}

/// Reads and validates a chip file.
pub fn load(path: &std::path::Path) -> Result<Chip, ChipError> {
    let (file, text) = crate::located::read_ron_file(path)?;
    parse(&file, &text)
}

/// Parses and validates chip text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Chip, ChipError> {
    let spec: ChipSpec = crate::located::from_ron(file, text)?;
    check(file, text, spec)
}

/// Validates `spec`, which was read from (or overrides a spec read from) `text` of `file`:
/// errors are located at the field's place in that text.
pub fn check(file: &str, text: &str, spec: ChipSpec) -> Result<Chip, ChipError> {
    Validator { file, text, core: None, stack: None }.check(spec)
}

/// [`check`] for a spec whose core description came from `core_file` with `core_text` (a
/// core file, or a preset's): core errors are located there.
pub fn check_with_core(
    file: &str,
    text: &str,
    spec: ChipSpec,
    core_file: &str,
    core_text: &str,
) -> Result<Chip, ChipError> {
    Validator { file, text, core: Some((core_file, core_text)), stack: None }.check(spec)
}

/// [`check`] for a spec whose core and stack descriptions came from the files (or presets'
/// texts) `core` and `stack`, as (file, text): their errors are located there.
pub fn check_with_parts(
    file: &str,
    text: &str,
    spec: ChipSpec,
    core: Option<(&str, &str)>,
    stack: Option<(&str, &str)>,
) -> Result<Chip, ChipError> {
    Validator { file, text, core, stack }.check(spec)
}

/// The most NeuronCores (and dies, and HBM stacks) a chip may have: each is built as its own
/// components.
pub const MAX_CORES: u32 = 64;

/// The most collective-communication cores and NeuronLink ports of a chip.
pub const MAX_CC_CORES: u32 = 1024;
/// See [`MAX_CC_CORES`].
pub const MAX_PORTS: u32 = 256;

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
    /// Where a core description in the spec was read from.
    core: Option<(&'a str, &'a str)>,
    /// Where a stack description in the spec was read from.
    stack: Option<(&'a str, &'a str)>,
}

impl Validator<'_> {
    /// An error at the first `key:` in the text (the start when absent).
    fn err(&self, key: &str, field: &str, message: String) -> ChipError {
        let pos = self.text.find(&format!("{key}:")).unwrap_or(0);
        let (line, col) = crate::located::line_col(self.text, pos);
        ChipError { file: self.file.into(), line, col, field: field.into(), message }
    }

    /// An error at the first `key:` after the first `section:` (nested fields with common names).
    fn err_in(&self, section: &str, key: &str, field: &str, message: String) -> ChipError {
        let start = self.text.find(&format!("{section}:")).unwrap_or(0);
        let pos = self.text[start..].find(&format!("{key}:")).map_or(start, |p| start + p);
        let (line, col) = crate::located::line_col(self.text, pos);
        ChipError { file: self.file.into(), line, col, field: field.into(), message }
    }

    /// The encoding `name` of section `section`, with `lanes` one of its widths.
    fn encoding(&self, section: &str, name: &str, lanes_key: &str, lanes: u32) -> Result<&'static Encoding, ChipError> {
        let enc = encoding::find(name).ok_or_else(|| {
            let m = format!("unknown encoding {name:?} (allowed: {})", encoding::names());
            self.err_in(section, "encoding", &format!("{section}.encoding"), m)
        })?;
        if !enc.widths.contains(&lanes) {
            let m = format!("{lanes} is out of range (allowed: {:?}, the widths of {name})", enc.widths);
            return Err(self.err_in(section, lanes_key, &format!("{section}.{lanes_key}"), m));
        }
        Ok(enc)
    }

    /// The NeuronLink ports: generation matching the core's, a known encoding and width, and a
    /// raw bandwidth within [`NEURONLINK_TOLERANCE`] of the documented figure.
    fn neuronlink(&self, spec: &ChipSpec, core: &CoreSpec) -> Result<&'static Encoding, ChipError> {
        let n = &spec.neuronlink;
        let want = &core.neuronlink;
        if &n.version != want {
            let m = format!("{:?} does not go with core {:?} (allowed: {want:?})", n.version, core.name);
            return Err(self.err_in("neuronlink", "version", "neuronlink.version", m));
        }
        let enc = self.encoding("neuronlink", &n.encoding, "lanes_per_port", n.lanes_per_port)?;
        if !(1..=MAX_PORTS).contains(&n.ports) {
            let m = format!("{} is out of range (allowed: 1..={MAX_PORTS})", n.ports);
            return Err(self.err_in("neuronlink", "ports", "neuronlink.ports", m));
        }
        if !(n.documented_GBps > 0.0 && n.documented_GBps < 1e9) {
            let m = format!("{} is out of range (allowed: > 0)", n.documented_GBps);
            return Err(self.err_in("neuronlink", "documented_GBps", "neuronlink.documented_GBps", m));
        }
        let raw = n.raw_gbps(enc);
        if (raw / n.documented_GBps - 1.0).abs() > NEURONLINK_TOLERANCE {
            let m = format!(
                "ports ({}) x lanes_per_port ({}) x {} Mb/s x 2 directions = {raw:.1} GB/s, not within {:.0} % of documented_GBps ({})",
                n.ports,
                n.lanes_per_port,
                enc.lane_mbit_per_s,
                NEURONLINK_TOLERANCE * 100.0,
                n.documented_GBps
            );
            return Err(self.err_in("neuronlink", "ports", "neuronlink.ports", m));
        }
        Ok(enc)
    }

    /// CC cores (>= 2 per NeuronCore, spec §7) and the EFA share (> 0).
    fn cc_and_efa(&self, spec: &ChipSpec) -> Result<(), ChipError> {
        let min = u64::from(spec.cores) * 2;
        if u64::from(spec.cc_cores) < min || spec.cc_cores > MAX_CC_CORES {
            let m = format!(
                "{} is out of range (allowed: >= 2 per NeuronCore = {min}, <= {MAX_CC_CORES}; spec §7: 2 CC cores per NC)",
                spec.cc_cores
            );
            return Err(self.err("cc_cores", "cc_cores", m));
        }
        let g = spec.efa.Gbps;
        if !(g > 0.0 && g < 1e9) {
            return Err(self.err_in("efa", "Gbps", "efa.Gbps", format!("{g} is out of range (allowed: > 0)")));
        }
        let p = spec.efa.ports;
        if !(1..=MAX_EFA_PORTS).contains(&p) {
            let m = format!("{p} is out of range (allowed: 1..={MAX_EFA_PORTS})");
            return Err(self.err_in("efa", "ports", "efa.ports", m));
        }
        if !spec.efa.latency.is_empty() {
            efa_latency_ps(&spec.efa.latency).map_err(|m| self.err_in("efa", "latency", "efa.latency", m))?;
        }
        Ok(())
    }

    fn at_least(&self, field: &str, v: u32, min: u32) -> Result<(), ChipError> {
        if v < min {
            let key = field.rsplit('.').next().unwrap_or(field);
            return Err(self.err(key, field, format!("{v} is out of range (allowed: >= {min})")));
        }
        Ok(())
    }

    fn between(&self, field: &str, v: u32, min: u32, max: u32) -> Result<(), ChipError> {
        if !(min..=max).contains(&v) {
            let key = field.rsplit('.').next().unwrap_or(field);
            return Err(self.err(key, field, format!("{v} is out of range (allowed: {min}..={max})")));
        }
        Ok(())
    }

    /// An error at entry `i` (`name`) of the `rtl` list.
    fn rtl_err(&self, i: usize, name: &str, message: String) -> ChipError {
        let key = self.text.find("rtl:").unwrap_or(0);
        let pos = self.text[key..].find(&format!("{name:?}")).map_or(key, |p| key + p);
        let (line, col) = crate::located::line_col(self.text, pos);
        ChipError { file: self.file.into(), line, col, field: format!("rtl[{i}]"), message }
    }

    /// The `rtl` list: each a swappable instance that exists, once (every entry checked for
    /// that first), with its block built: the built-in one of its kind and size, or the block
    /// named by `INSTANCE=BLOCK`, registered and with the instance's port boundary. A link's
    /// name is checked once the chip is assembled (`build::check_rtl_links`).
    fn rtl(&self, spec: &ChipSpec, hbm: &StackSpec, core: &CoreSpec, dma: &DmaParams) -> Result<(), ChipError> {
        use trnsim_rtl::registry::{HAS_RTL, NO_RTL};
        use trnsim_rtl::swap_in::INSTANCE_FORMS;
        use trnsim_rtl::swap_in::{
            bound_block, dma_queue_block, hbm_bank_block, parse_binding, sram_bank_block, Instance,
        };
        let mut found: Vec<trnsim_rtl::swap_in::Binding> = Vec::new();
        for (i, name) in spec.rtl.iter().enumerate() {
            let at = |m: String| self.rtl_err(i, name, m);
            let Some(bind) = parse_binding(name) else {
                return Err(at(format!(
                    "unknown instance {name:?} (swappable: {INSTANCE_FORMS}; INSTANCE=BLOCK runs a registered block with its ports)"
                )));
            };
            let checks: Vec<(&str, u32, u32)> = match &bind.instance {
                Instance::HbmBank(b) => {
                    let org = &hbm.org;
                    vec![
                        ("stack hbm", b.stack, spec.hbm.stacks),
                        ("channel ch", b.ch, org.channels),
                        ("pseudo-channel pc", b.pc, org.pseudo_channels),
                        ("bank", b.bank, org.banks_per_pc()),
                    ]
                }
                Instance::SramBank(b) => {
                    let g = core.sram(b.psum);
                    vec![("core nc", b.core, spec.cores), ("bank", b.bank, g.banks)]
                }
                Instance::DmaQueue(b) => vec![("core nc", b.core, spec.cores), ("engine", b.engine, dma.engines)],
                Instance::Link(_) => Vec::new(),
            };
            for (what, v, n) in checks {
                if v >= n {
                    return Err(at(format!("unknown instance {name:?}: {what}{v} does not exist (0..{n})")));
                }
            }
            if found.iter().any(|f| f.instance == bind.instance) {
                let other = if spec.rtl[..i].contains(name) { "" } else { " (the same instance with another block)" };
                return Err(at(format!("{name:?} is listed twice{other}")));
            }
            found.push(bind);
        }
        for (i, (name, bind)) in spec.rtl.iter().zip(&found).enumerate() {
            let at = |m: String| self.rtl_err(i, name, m);
            if let Some(b) = &bind.block {
                if !HAS_RTL {
                    return Err(at(format!("{name:?}: block {b} is not built: this trnsim was {NO_RTL}")));
                }
                bound_block(&bind.instance, b).map_err(|e| at(format!("{name:?}: {e}")))?;
            }
            let block = match &bind.instance {
                Instance::HbmBank(_) => {
                    if spec.hbm.fidelity != trnsim_mem::hbm::Fidelity::Cycle {
                        let m = format!("{name:?}: needs hbm.fidelity cycle (a fast stack issues no DRAM commands)");
                        return Err(at(m));
                    }
                    if bind.block.is_some() {
                        continue;
                    }
                    let built = trnsim_mem::hbm::presets::find(&hbm.name);
                    if built.is_none_or(|p| p.org != hbm.org || p.timing != hbm.timing) {
                        let m = format!(
                            "{name:?}: the hbm_bank blocks are built for the presets' own timings; stack {:?} differs from every built-in preset of that name",
                            hbm.name
                        );
                        return Err(at(m));
                    }
                    hbm_bank_block(&hbm.name).map_err(|e| at(format!("{name:?}: {e}")))?.name
                }
                _ if bind.block.is_some() => continue,
                Instance::SramBank(b) => {
                    let g = core.sram(b.psum);
                    sram_bank_block(b.psum, g.read_ports, g.write_ports).map_err(|e| at(format!("{name:?}: {e}")))?.name
                }
                Instance::DmaQueue(_) => {
                    let qos = dma.scheduling == trnsim_core::dma::Scheduling::Qos4;
                    dma_queue_block(dma.queues, qos).map_err(|e| at(format!("{name:?}: {e}")))?.name
                }
                Instance::Link(_) => "link_fifo",
            };
            if !HAS_RTL {
                return Err(at(format!("{name:?}: block {block} is not built: this trnsim was {NO_RTL}")));
            }
        }
        Ok(())
    }

    /// The chip's core: a name resolved and its file checked, or a description checked where
    /// it was read from.
    fn core(&self, spec: &ChipSpec) -> Result<Arc<CoreSpec>, ChipError> {
        match &spec.core {
            CoreRef::Name(n) => {
                let (file, text) = super::core_file::find(n, self.file).map_err(|m| self.err("core", "core", m))?;
                super::core_file::parse(&file, &text).map(Arc::new)
            }
            CoreRef::Spec(c) => {
                c.validate().map_err(|e| match self.core {
                    Some((file, text)) => {
                        let mut located = super::core_file::locate(file, text, &e, "");
                        located.field = format!("core.{}", e.field);
                        located
                    }
                    None => super::core_file::locate(self.file, self.text, &e, "core"),
                })?;
                Ok(Arc::new((**c).clone()))
            }
        }
    }

    /// The chip's HBM stack: a name resolved and its file checked, or a description checked
    /// where it was read from.
    fn stack(&self, spec: &ChipSpec) -> Result<Arc<StackSpec>, ChipError> {
        use super::stack_file;
        match &spec.hbm.preset {
            StackRef::Name(n) => {
                let (file, text) = stack_file::find(n, self.file).map_err(|m| self.err("preset", "hbm.preset", m))?;
                stack_file::parse(&file, &text).map(Arc::new)
            }
            StackRef::Spec(s) => {
                s.validate().map_err(|e| match self.stack {
                    Some((file, text)) => {
                        let mut located = stack_file::locate(file, text, &e, "");
                        located.field = format!("hbm.preset.{}", e.field);
                        located
                    }
                    None => stack_file::locate(self.file, self.text, &e, "hbm.preset"),
                })?;
                Ok(Arc::new((**s).clone()))
            }
        }
    }

    fn check(&self, spec: ChipSpec) -> Result<Chip, ChipError> {
        let core = self.core(&spec)?;
        self.between("cores", spec.cores, 1, MAX_CORES)?;
        self.between("dies", spec.dies, 1, MAX_CORES)?;
        let h = &spec.hbm;
        let hbm = self.stack(&spec)?;
        self.between("hbm.stacks", h.stacks, 1, MAX_CORES)?;
        let map = trnsim_mem::hbm::AddressMap::new(&h.address_map, &hbm.org, 1)
            .map_err(|e| self.err("address_map", "hbm.address_map", e.0))?;
        if map.has_stack_level() {
            let m = format!("{:?} has a stack level (`st`): each stack maps its own addresses", h.address_map);
            return Err(self.err("address_map", "hbm.address_map", m));
        }
        self.at_least("hbm.cores_per_stack", h.cores_per_stack, 1)?;
        if h.stacks.checked_mul(h.cores_per_stack) != Some(spec.cores) {
            let m = format!(
                "stacks ({}) x cores_per_stack ({}) must equal cores ({}): core i uses stack i / cores_per_stack",
                h.stacks, h.cores_per_stack, spec.cores
            );
            return Err(self.err("cores_per_stack", "hbm.cores_per_stack", m));
        }
        for (what, n) in [("cores", spec.cores), ("hbm.stacks", h.stacks)] {
            if n % spec.dies != 0 {
                return Err(self.err("dies", "dies", format!("{} does not divide {what} = {n}", spec.dies)));
            }
        }
        let d = &spec.dma;
        let partitions = core.sbuf.partitions;
        if d.engines_per_core == 0 || partitions % d.engines_per_core != 0 {
            let m =
                format!("{} is out of range (allowed: divides the {partitions} SBUF partitions)", d.engines_per_core);
            return Err(self.err("engines_per_core", "dma.engines_per_core", m));
        }
        if !(1..=32).contains(&d.queues) {
            return Err(self.err("queues", "dma.queues", format!("{} is out of range (allowed: 1..=32)", d.queues)));
        }
        if !(d.peak_GBps_per_engine > 0.0 && d.peak_GBps_per_engine < 1e6) {
            let m = format!("{} is out of range (allowed: > 0)", d.peak_GBps_per_engine);
            return Err(self.err("peak_GBps_per_engine", "dma.peak_GBps_per_engine", m));
        }
        let start = d
            .start_latency
            .parse::<Dur>()
            .map_err(|e| self.err("start_latency", "dma.start_latency", e.to_string()))?;
        if start > Dur::from_ms(1) {
            let m = format!("{start} is out of range (allowed: 0ns..=1ms)");
            return Err(self.err("start_latency", "dma.start_latency", m));
        }
        let mut dma = core.dma.clone();
        dma.engines = d.engines_per_core;
        dma.partitions_per_engine = partitions / d.engines_per_core;
        dma.queues = d.queues;
        dma.peak_bytes_per_ns = d.peak_GBps_per_engine;
        dma.start_latency = start;
        dma.bulk = d.fidelity == trnsim_mem::hbm::Fidelity::Fast;
        if dma.bulk && spec.hbm.fidelity != trnsim_mem::hbm::Fidelity::Fast {
            let m = "fast needs hbm.fidelity fast (a cycle-level stack takes one burst per request)".to_string();
            return Err(self.err("fidelity", "dma.fidelity", m));
        }
        dma.validate().map_err(|e| self.err("dma", "dma", e))?;
        self.cc_and_efa(&spec)?;
        let neuronlink = self.neuronlink(&spec, &core)?;
        let host = self.encoding("host", &spec.host.encoding, "lanes", spec.host.lanes)?;
        self.rtl(&spec, &hbm, &core, &dma)?;
        let rtl_at = (0..spec.rtl.len())
            .map(|i| {
                let e = self.rtl_err(i, &spec.rtl[i], String::new());
                format!("{}:{}:{}: {}", e.file, e.line, e.col, e.field)
            })
            .collect();
        let chip = Chip { spec, core, hbm, dma, neuronlink, host, rtl_at, energy: None };
        // A link that does not exist is found here, before anything runs.
        super::build::check_rtl_links(&chip).map_err(|(i, m)| self.rtl_err(i, &chip.spec.rtl[i], m))?;
        Ok(chip)
    }
}
