//! A chip as data: the RON schema ([`ChipSpec`], models/configs/system/*.ron), parsing with
//! located errors (`file:line:col: field: message`, as the fabric topology loader) and
//! validation against the models' presets.

use serde::{Deserialize, Serialize};
use std::fmt;
use trnsim_core::core::NcVersion;
use trnsim_core::dma::DmaParams;
use trnsim_kernel::Dur;
use trnsim_mem::hbm::presets::{self, Preset};

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
    /// NeuronCore generation: "nc-v2", "nc-v3" or "nc-v4".
    pub core: String,
    /// NeuronCores on the chip (>= 1).
    pub cores: u32,
    /// Compute dies (>= 1; divides `cores` and `hbm.stacks`). Only documents the layout: no
    /// die-to-die path is modelled.
    pub dies: u32,
    /// The HBM stacks.
    pub hbm: HbmPart,
    /// Each core's DMA block.
    pub dma: DmaPart,
    /// Published chip figures, for comparison in reports (not used by the model).
    pub documented: Documented,
}

/// The chip's HBM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HbmPart {
    /// A stack preset of `trnsim_mem::hbm::presets` ("hbm3e-9600").
    pub preset: String,
    /// Stacks on the chip (>= 1).
    pub stacks: u32,
    /// Cores sharing one stack: core `i`'s DMA engines reach stack `i / cores_per_stack`, so
    /// `cores = stacks x cores_per_stack`.
    pub cores_per_stack: u32,
}

/// One core's DMA block (the rest of [`DmaParams`] is the generation's preset).
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
    /// Command arrival to first data ("1300ns").
    pub start_latency: String,
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

/// A chip spec that failed to parse or validate, located in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipError {
    /// The file (or the name given to [`parse`]).
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The field path, e.g. `hbm.cores_per_stack`.
    pub field: String,
    /// What is wrong, with the allowed values or range.
    pub message: String,
}

impl fmt::Display for ChipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.col, self.field, self.message)
    }
}

impl std::error::Error for ChipError {}

/// A validated chip: the spec plus what its strings name.
#[derive(Clone, Debug)]
pub struct Chip {
    /// The spec as written.
    pub spec: ChipSpec,
    /// The core generation.
    pub version: NcVersion,
    /// The HBM stack preset.
    pub hbm: &'static Preset,
    /// Each core's DMA parameters.
    pub dma: DmaParams,
}

impl Chip {
    /// The stack core `core` is wired to.
    pub fn stack_of(&self, core: u32) -> u32 {
        core / self.spec.hbm.cores_per_stack
    }

    /// Peak dense BF16 TFLOPS of the model: 128 x 128 MAC x 2 flops at the tensor clock, per core.
    pub fn peak_bf16_tflops(&self) -> f64 {
        let hz = self.version.clock(trnsim_core::isa::Engine::Tensor).as_hz() as f64;
        f64::from(self.spec.cores) * 128.0 * 128.0 * 2.0 * hz / 1e12
    }

    /// Peak HBM GB/s of the model (every stack's pins).
    pub fn peak_hbm_gbps(&self) -> f64 {
        f64::from(self.spec.hbm.stacks) * self.hbm.stack_peak_bytes_per_s() / 1e9
    }

    /// Peak DMA GB/s of the model (every engine at its peak).
    pub fn peak_dma_gbps(&self) -> f64 {
        f64::from(self.spec.cores * self.dma.engines) * self.dma.peak_bytes_per_ns
    }
}

/// Reads and validates a chip file.
pub fn load(path: &std::path::Path) -> Result<Chip, ChipError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ChipError {
        file: file.clone(),
        line: 0,
        col: 0,
        field: "(file)".into(),
        message: format!("cannot read: {e}"),
    })?;
    parse(&file, &text)
}

/// Parses and validates chip text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Chip, ChipError> {
    let spec: ChipSpec = ron::from_str(text).map_err(|e| {
        let (line, col) = (e.position.line, e.position.col);
        ChipError {
            file: file.into(),
            line,
            col,
            field: crate::config::field_at(text, line, col),
            message: e.code.to_string(),
        }
    })?;
    Validator { file, text }.check(spec)
}

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Validator<'_> {
    /// An error at the first `key:` in the text (the start when absent).
    fn err(&self, key: &str, field: &str, message: String) -> ChipError {
        let pos = self.text.find(&format!("{key}:")).unwrap_or(0);
        let line = self.text[..pos].matches('\n').count() + 1;
        let col = pos - self.text[..pos].rfind('\n').map_or(0, |p| p + 1) + 1;
        ChipError { file: self.file.into(), line, col, field: field.into(), message }
    }

    fn at_least(&self, field: &str, v: u32, min: u32) -> Result<(), ChipError> {
        if v < min {
            let key = field.rsplit('.').next().unwrap_or(field);
            return Err(self.err(key, field, format!("{v} is out of range (allowed: >= {min})")));
        }
        Ok(())
    }

    fn check(&self, spec: ChipSpec) -> Result<Chip, ChipError> {
        let version = match spec.core.as_str() {
            "nc-v2" => NcVersion::V2,
            "nc-v3" => NcVersion::V3,
            "nc-v4" => NcVersion::V4,
            other => {
                let m = format!("unknown core {other:?} (allowed: nc-v2, nc-v3, nc-v4)");
                return Err(self.err("core", "core", m));
            }
        };
        self.at_least("cores", spec.cores, 1)?;
        self.at_least("dies", spec.dies, 1)?;
        let h = &spec.hbm;
        let hbm = presets::find(&h.preset).ok_or_else(|| {
            let m = format!("unknown HBM preset {:?} (allowed: {})", h.preset, presets::names());
            self.err("preset", "hbm.preset", m)
        })?;
        self.at_least("hbm.stacks", h.stacks, 1)?;
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
        let partitions = 128;
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
        let mut dma = match version {
            NcVersion::V2 => DmaParams::v2(),
            NcVersion::V3 => DmaParams::v3(),
            NcVersion::V4 => DmaParams::v4(),
        };
        dma.engines = d.engines_per_core;
        dma.partitions_per_engine = partitions / d.engines_per_core;
        dma.queues = d.queues;
        dma.peak_bytes_per_ns = d.peak_GBps_per_engine;
        dma.start_latency = start;
        dma.validate().map_err(|e| self.err("dma", "dma", e))?;
        Ok(Chip { spec, version, hbm, dma })
    }
}
