//! A NeuronCore as data: every parameter the core's models run on ([`CoreSpec`]), read from
//! RON (or JSON) files such as `models/configs/core/nc-v4.ron`, with named presets built in.
//!
//! ```text
//!   CoreSpec ── clocks ────── tensor, vector, scalar, gpsimd, sync, mem (the SBUF/PSUM and semaphores)
//!            ├─ tensor ────── rows x columns of PEs, the matmul's minimum interval,
//!            │                per-format rates (MACs per PE per column, cycles per column)
//!            ├─ sbuf, psum ── SRAM geometry and port budget (trnsim_mem::sram::SramGeometry)
//!            ├─ dma ───────── the DMA block (crate::dma::DmaParams)
//!            ├─ semaphores ── count and link latency
//!            └─ costs ─────── each engine's instruction costs and latency ([`engines`])
//! ```
//!
//! Every figure names its source in the file's `source` line or is listed in `estimated`.
//! [`CoreSpec::validate`] checks every field and names it (`tensor.rows`); loaders with
//! located errors (`file:line:col: field: message`) live in `trnsim-system`.
//!
//! Leaves out: sparsity, and what [`engines`] leaves out. The ISA's MXFP8 operand
//! packs four K-rows per partition and every other format's one ([`isa_packing`]): a format
//! whose `macs_per_pe` differs (NC-v3's double-row FP8) or has no operand (`mxfp4`) serves the
//! workload layer's estimates only, and the cycle-level core refuses its matmuls.

pub mod engines;

pub use engines::{Cost, EngineCosts};

use crate::dma::DmaParams;
use crate::isa::{Dtype, Engine};
use serde::{Deserialize, Deserializer, Serialize};
use std::sync::{Arc, OnceLock};
use trnsim_kernel::Frequency;
use trnsim_mem::sram::SramGeometry;

/// A format's entry that must be written (`None` for a format the core lacks): a missing key
/// is an error, not a silent "unsupported".
fn required<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Rate>, D::Error> {
    Option::<Rate>::deserialize(d)
}

/// One NeuronCore generation. Unknown keys are rejected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreSpec {
    /// Name in reports and in chip files ("nc-v4").
    pub name: String,
    /// One line: what it is.
    pub description: String,
    /// Where the numbers come from (source keys of docs/sources.md).
    pub source: String,
    /// Values that are estimates, with the reasoning.
    pub estimated: Vec<String>,
    /// The NeuronLink generation a chip of this core has ("nl-v4").
    pub neuronlink: String,
    /// Engine clocks.
    pub clocks: Clocks,
    /// The tensor engine.
    pub tensor: TensorSpec,
    /// The state buffer (SBUF).
    pub sbuf: SramGeometry,
    /// The partial-sum buffer (PSUM).
    pub psum: SramGeometry,
    /// The DMA block.
    pub dma: DmaParams,
    /// The semaphore unit.
    pub semaphores: SemSpec,
    /// Each engine's instruction costs, latency and the sequencers' control cost.
    pub costs: EngineCosts,
}

/// Clock of each engine and of the memory-side units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clocks {
    /// Tensor engine (spec §2: 2.8 GHz v2, 2.4 GHz v3/v4).
    #[serde(with = "trnsim_kernel::time::text_freq")]
    pub tensor: Frequency,
    /// Vector engine (spec §2: 1.12 / 0.96 / 1.2 GHz).
    #[serde(with = "trnsim_kernel::time::text_freq")]
    pub vector: Frequency,
    /// Scalar engine (spec §2).
    #[serde(with = "trnsim_kernel::time::text_freq")]
    pub scalar: Frequency,
    /// GpSimd engine (spec §2).
    #[serde(with = "trnsim_kernel::time::text_freq")]
    pub gpsimd: Frequency,
    /// Sync engine (the DMA-issuing sequencer; spec §2).
    #[serde(with = "trnsim_kernel::time::text_freq")]
    pub sync: Frequency,
    /// SBUF/PSUM unit and semaphore unit (E: the tensor engine's clock, so that the tensor
    /// engine's reads are never quantized by a slower memory clock).
    #[serde(with = "trnsim_kernel::time::text_freq")]
    pub mem: Frequency,
}

/// The tensor engine: a weight-stationary systolic array of `rows` x `columns` processing
/// elements. A matmul streams N moving columns of K <= `rows` partitions through a stationary
/// matrix of M <= `columns` columns, one column per cycle per [`Rate::cycles_per_column`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorSpec {
    /// PE rows: the contraction (K) partitions of one pass (spec §2: 128). Equal to the SBUF's
    /// partitions.
    pub rows: u32,
    /// PE columns: the stationary matrix's most columns (M) and the PSUM partitions a matmul
    /// writes (spec §2: 128). Equal to the PSUM's partitions.
    pub columns: u32,
    /// A matmul's minimum interval in cycles for a narrow stationary: it costs
    /// max(min(`min_interval`, M), N) cycles per column rate (A9 nc_matmul: 64).
    pub min_interval: u32,
    /// Rates per number format of the stationary and moving operands.
    pub formats: Formats,
}

impl TensorSpec {
    /// The matmul rate of `dtype` (None: the core has no such matmul).
    pub fn rate(&self, dtype: Dtype) -> Option<Rate> {
        let f = &self.formats;
        match dtype {
            Dtype::Bf16 => f.bf16,
            Dtype::Fp16 => f.fp16,
            Dtype::Fp32 => f.fp32,
            Dtype::Fp8E4m3 => f.fp8e4m3,
            Dtype::Fp8E5m2 => f.fp8e5m2,
            Dtype::MxFp8E4m3 => f.mxfp8,
            Dtype::I32 => None,
        }
    }
}

/// Rates per input format; `None` where the core has no such matmul.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Formats {
    /// BF16 inputs.
    #[serde(deserialize_with = "required")]
    pub bf16: Option<Rate>,
    /// FP16 inputs.
    #[serde(deserialize_with = "required")]
    pub fp16: Option<Rate>,
    /// FP32 inputs (spec §2: a quarter of the BF16 rate).
    #[serde(deserialize_with = "required")]
    pub fp32: Option<Rate>,
    /// FP8 E4M3 inputs.
    #[serde(deserialize_with = "required")]
    pub fp8e4m3: Option<Rate>,
    /// FP8 E5M2 inputs.
    #[serde(deserialize_with = "required")]
    pub fp8e5m2: Option<Rate>,
    /// MXFP8 (E4M3 elements, one E8M0 scale per 32 along K).
    #[serde(deserialize_with = "required")]
    pub mxfp8: Option<Rate>,
    /// MXFP4 (E2M1 elements, one E8M0 scale per 32 along K). No ISA operand yet: used by the
    /// workload layer's estimates only.
    #[serde(deserialize_with = "required")]
    pub mxfp4: Option<Rate>,
}

/// K-rows per partition the ISA's matmul operand of `dtype` packs: 4 for MXFP8 (K = 512 on a
/// 128-row array), 1 otherwise. A core whose rate for a format differs (`macs_per_pe`) runs
/// it in the workload layer's estimates only: the cycle-level core refuses its matmuls.
pub fn isa_packing(dtype: Dtype) -> u32 {
    if dtype == Dtype::MxFp8E4m3 {
        4
    } else {
        1
    }
}

impl Formats {
    /// Every format with its rate (None: the core lacks it), in a fixed order.
    pub fn entries(&self) -> impl Iterator<Item = (&'static str, Option<Rate>)> {
        [
            ("bf16", self.bf16),
            ("fp16", self.fp16),
            ("fp32", self.fp32),
            ("fp8e4m3", self.fp8e4m3),
            ("fp8e5m2", self.fp8e5m2),
            ("mxfp8", self.mxfp8),
            ("mxfp4", self.mxfp4),
        ]
        .into_iter()
    }
}

/// How fast the array multiplies one format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rate {
    /// Multiply-accumulates each PE does per moving column (1; 4 for MXFP8 on NC-v4, whose
    /// operand packs four K-rows per partition: spec §2).
    pub macs_per_pe: u32,
    /// Cycles each moving column takes (1; 4 for FP32: spec §2).
    pub cycles_per_column: u32,
}

/// The semaphore unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemSpec {
    /// Semaphores per core (spec §10, E: 64).
    pub count: u32,
    /// Link latency each way between an engine and the unit, in the sender's cycles (spec §10,
    /// E: a wait releases 10-20 cycles after the signal).
    pub latency_cycles: u64,
}

/// A field that failed validation: its path in the file (`tensor.rows`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Dotted path of the field.
    pub field: String,
    /// What is wrong, with the allowed range.
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

fn bad(field: &str, message: String) -> SpecError {
    SpecError { field: field.to_string(), message }
}

/// The most PE rows or columns of a tensor engine (the ISA's partition ranges are u16; SBUF and
/// PSUM partitions grow with the array).
pub const MAX_ARRAY: u32 = 1024;
/// The most semaphores of a core (the ISA's semaphore index is a byte).
pub const MAX_SEMS: u32 = 256;
/// The largest clock (10 GHz) and the largest semaphore latency a core file may give.
pub const MAX_CLOCK_HZ: u64 = 10_000_000_000;
/// See [`MAX_CLOCK_HZ`].
pub const MAX_SEM_LATENCY: u64 = 1_000_000;

impl CoreSpec {
    /// The clock of `engine`.
    pub fn clock(&self, engine: Engine) -> Frequency {
        let c = &self.clocks;
        match engine {
            Engine::Tensor => c.tensor,
            Engine::Vector => c.vector,
            Engine::Scalar => c.scalar,
            Engine::GpSimd => c.gpsimd,
            Engine::Sync => c.sync,
        }
    }

    /// PSUM's geometry with `psum`, else SBUF's.
    pub fn sram(&self, psum: bool) -> SramGeometry {
        if psum {
            self.psum
        } else {
            self.sbuf
        }
    }

    /// The matmul rate of `dtype` (None: the core has no such matmul).
    pub fn rate(&self, dtype: Dtype) -> Option<Rate> {
        self.tensor.rate(dtype)
    }

    /// Peak dense matmul flops per second of one core in a format whose rate is `rate`: rows x
    /// columns PEs, `macs_per_pe` MACs of 2 flops per column, a column per `cycles_per_column`
    /// tensor cycles.
    pub fn peak_flops(&self, rate: Rate) -> f64 {
        let pes = f64::from(self.tensor.rows) * f64::from(self.tensor.columns);
        let per_cycle = pes * 2.0 * f64::from(rate.macs_per_pe) / f64::from(rate.cycles_per_column.max(1));
        per_cycle * self.clocks.tensor.as_hz() as f64
    }

    /// Peak dense BF16 flops per second of one core (0 without BF16).
    pub fn peak_bf16_flops(&self) -> f64 {
        self.tensor.formats.bf16.map_or(0.0, |r| self.peak_flops(r))
    }

    /// Checks every field; the error names the first bad one by its path.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.validate_clocks()?;
        self.validate_tensor()?;
        for (name, g) in [("sbuf", &self.sbuf), ("psum", &self.psum)] {
            g.validate().map_err(|e| bad(&format!("{name}.{}", e.field), e.detail.to_string()))?;
        }
        self.validate_sizes()?;
        self.dma.validate().map_err(|m| match m.split_once(": ") {
            Some((field, rest)) if !field.contains(' ') => bad(&format!("dma.{field}"), rest.to_string()),
            _ => bad("dma", m),
        })?;
        if self.dma.engines.checked_mul(self.dma.partitions_per_engine) != Some(self.sbuf.partitions) {
            let m = format!(
                "engines ({}) x partitions_per_engine ({}) must equal the SBUF's {} partitions",
                self.dma.engines, self.dma.partitions_per_engine, self.sbuf.partitions
            );
            return Err(bad("dma.partitions_per_engine", m));
        }
        let s = &self.semaphores;
        if !(1..=MAX_SEMS).contains(&s.count) {
            return Err(bad("semaphores.count", format!("{} is out of range (allowed: 1..={MAX_SEMS})", s.count)));
        }
        if !(1..=MAX_SEM_LATENCY).contains(&s.latency_cycles) {
            let m = format!("{} is out of range (allowed: 1..={MAX_SEM_LATENCY} cycles)", s.latency_cycles);
            return Err(bad("semaphores.latency_cycles", m));
        }
        self.costs.validate(self.tensor.columns).map_err(|(f, m)| bad(&format!("costs.{f}"), m))
    }

    fn validate_clocks(&self) -> Result<(), SpecError> {
        let c = &self.clocks;
        for (name, f) in [
            ("tensor", c.tensor),
            ("vector", c.vector),
            ("scalar", c.scalar),
            ("gpsimd", c.gpsimd),
            ("sync", c.sync),
            ("mem", c.mem),
        ] {
            if f.as_hz() == 0 || f.as_hz() > MAX_CLOCK_HZ {
                return Err(bad(&format!("clocks.{name}"), format!("{f} is out of range (allowed: 1Hz..=10GHz)")));
            }
        }
        Ok(())
    }

    fn validate_tensor(&self) -> Result<(), SpecError> {
        let t = &self.tensor;
        for (name, v) in [("rows", t.rows), ("columns", t.columns)] {
            if !(4..=MAX_ARRAY).contains(&v) || v % 4 != 0 {
                let m = format!("{v} is out of range (allowed: a multiple of 4 in 4..={MAX_ARRAY})");
                return Err(bad(&format!("tensor.{name}"), m));
            }
        }
        if !(1..=t.columns).contains(&t.min_interval) {
            let m = format!("{} is out of range (allowed: 1..=columns = {})", t.min_interval, t.columns);
            return Err(bad("tensor.min_interval", m));
        }
        let f = &t.formats;
        if f.bf16.is_none() {
            return Err(bad("tensor.formats.bf16", "every core multiplies BF16 (the reference format)".into()));
        }
        for (name, r) in [
            ("bf16", f.bf16),
            ("fp16", f.fp16),
            ("fp32", f.fp32),
            ("fp8e4m3", f.fp8e4m3),
            ("fp8e5m2", f.fp8e5m2),
            ("mxfp8", f.mxfp8),
            ("mxfp4", f.mxfp4),
        ] {
            let Some(r) = r else { continue };
            for (k, v) in [("macs_per_pe", r.macs_per_pe), ("cycles_per_column", r.cycles_per_column)] {
                if !(1..=64).contains(&v) {
                    let m = format!("{v} is out of range (allowed: 1..=64)");
                    return Err(bad(&format!("tensor.formats.{name}.{k}"), m));
                }
            }
        }
        Ok(())
    }

    fn validate_sizes(&self) -> Result<(), SpecError> {
        let t = &self.tensor;
        if self.sbuf.partitions != t.rows {
            let m = format!(
                "{} must equal tensor.rows = {} (a matmul contracts over the partitions)",
                self.sbuf.partitions, t.rows
            );
            return Err(bad("sbuf.partitions", m));
        }
        if self.psum.partitions != t.columns {
            let m = format!(
                "{} must equal tensor.columns = {} (a matmul writes one partition per column)",
                self.psum.partitions, t.columns
            );
            return Err(bad("psum.partitions", m));
        }
        // One tile of the widest matmul operand: a stationary of `columns` BF16 elements per
        // partition must fit in SBUF, and a PSUM bank must hold at least one FP32 column.
        let tile = u64::from(t.columns) * 2;
        if u64::from(self.sbuf.partition_bytes) < tile {
            let m = format!(
                "{} bytes per partition is smaller than one stationary tile ({tile} bytes: {} BF16 columns)",
                self.sbuf.partition_bytes, t.columns
            );
            return Err(bad("sbuf.partition_bytes", m));
        }
        if self.psum.bank_bytes() < 4 {
            return Err(bad("psum.partition_bytes", "a PSUM bank holds less than one FP32 element".into()));
        }
        Ok(())
    }

    /// Parses RON text (no location: the loaders in `trnsim-system` locate errors).
    pub fn from_ron(text: &str) -> Result<CoreSpec, String> {
        ron::from_str(text).map_err(|e| e.to_string())
    }
}

/// The built-in core presets: (name, RON text of models/configs/core/NAME.ron).
pub const BUILTIN: &[(&str, &str)] = &[
    ("nc-v2", include_str!("../../../configs/core/nc-v2.ron")),
    ("nc-v3", include_str!("../../../configs/core/nc-v3.ron")),
    ("nc-v4", include_str!("../../../configs/core/nc-v4.ron")),
    ("nc-v5", include_str!("../../../configs/core/nc-v5.ron")),
];

/// The built-in preset `name`, parsed once (None: no such preset).
pub fn preset(name: &str) -> Option<Arc<CoreSpec>> {
    static PARSED: OnceLock<Vec<Arc<CoreSpec>>> = OnceLock::new();
    let all = PARSED.get_or_init(|| {
        BUILTIN
            .iter()
            .map(|(n, text)| {
                // The built-in files are part of the program: `built_in_presets_are_valid` holds them.
                let spec = CoreSpec::from_ron(text).unwrap_or_else(|e| panic!("built-in core {n}: {e}"));
                Arc::new(spec)
            })
            .collect()
    });
    BUILTIN.iter().position(|(n, _)| *n == name).map(|i| all[i].clone())
}

/// The built-in preset names, comma separated (for messages).
pub fn names() -> String {
    BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// NC-v4 (Trn3), the default core.
pub fn nc_v4() -> Arc<CoreSpec> {
    preset("nc-v4").expect("nc-v4 is built in")
}

#[cfg(test)]
mod tests;
