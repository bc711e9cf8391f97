//! Each engine's datapath costs as data: the per-instruction initiation intervals of spec §5
//! (the `nki.isa` "Estimated instruction cost" docstrings, source A9) as rates and overheads,
//! each engine's pipeline latency, the sequencers' control-instruction cost, and the tensor
//! engine's warm-up throttle ([`Throttle`]).
//!
//! ```text
//!   costs ── control_cycles ─ every sequencer instruction (register ALU, branch, semaphore, DMA start)
//!         ├─ tensor ───────── latency, LoadStationary columns per cycle, transpose cap, throttle
//!         ├─ vector ───────── latency, a Cost per instruction kind (BF16 fast paths apart)
//!         ├─ scalar ───────── latency, activation (with and without reduce), tensor_scalar, tensor_copy
//!         └─ gpsimd ───────── latency, one Cost for every data instruction (150 + N)
//! ```
//!
//! A [`Cost`] charges max(`min_interval`, ceil(N x `cycles` / `elements`)) + `overhead`
//! cycles of the engine's clock for N free elements per partition (every partition in
//! parallel: the lanes are the partitions). The matmul's own terms are the tensor engine's
//! (`tensor.min_interval`, each format's `cycles_per_column`).
//!
//! Leaves out: per-format rates beyond the BF16 fast paths A9 documents (an FP8 or FP16
//! operand costs what FP32 does on the vector and scalar engines), the v3/v4 vector-engine
//! performance modes, and GpSimd's eight programmable cores (one 150 + N cost stands for them).

use serde::{Deserialize, Serialize};

/// The largest cycle count a cost field may hold (a million cycles: far above any documented
/// figure, small enough that sums of them cannot overflow).
pub const MAX_CYCLES: u64 = 1_000_000;
/// The most elements per partition a cost's rate may give per `cycles` (and the most cycles).
pub const MAX_RATE: u32 = 1024;

/// The engines' costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineCosts {
    /// Cycles a control instruction (register ALU, branch, semaphore signal, DMA start) takes
    /// on any sequencer (spec §10, E: one instruction per cycle).
    pub control_cycles: u64,
    /// The tensor engine.
    pub tensor: TensorCosts,
    /// The vector engine (DVE).
    pub vector: VectorCosts,
    /// The scalar engine (ACT).
    pub scalar: ScalarCosts,
    /// The GpSimd engine.
    pub gpsimd: GpSimdCosts,
}

/// An optional cost every core file must still write (`None` or `Some(...)`): serde would
/// otherwise take a missing one as `None`, a silent default.
fn required_cost<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cost>, D::Error> {
    Option::<Cost>::deserialize(d)
}

/// One instruction kind's initiation interval: max(`min_interval`, ceil(N x `cycles` /
/// `elements`)) + `overhead`, in the engine's cycles, for N free elements per partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// The least interval however short the operand (A9's MIN_II, 64 on most rows).
    pub min_interval: u64,
    /// Elements per partition the datapath takes each `cycles` cycles.
    pub elements: u32,
    /// See `elements`.
    pub cycles: u32,
    /// Cycles added after the max (activation_reduce's 64, GpSimd's ~150 start).
    pub overhead: u64,
}

impl Cost {
    /// The interval for `n` free elements per partition (saturating: a cost never wraps).
    pub fn eval(&self, n: u64) -> u64 {
        let streamed = n.saturating_mul(u64::from(self.cycles)).div_ceil(u64::from(self.elements.max(1)));
        self.min_interval.max(streamed).saturating_add(self.overhead)
    }
}

/// The tensor engine's costs beside the array's matmul terms (`tensor` of the core).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorCosts {
    /// Cycles after an instruction's interval before its results are written (the datapath's
    /// own latency; the SBUF/PSUM access latencies are the memories').
    pub latency_cycles: u64,
    /// Stationary columns a background LoadStationary loads per cycle (per `cycles_per_column`
    /// of its format): ceil(M / this) cycles (spec §2: fast LS, up to 4x a matmul).
    pub load_stationary_columns_per_cycle: u32,
    /// A transpose through the array costs max(P, min(this, F)) cycles for P partitions of F
    /// elements (A9 nc_transpose on the tensor engine: 64).
    pub transpose_free_cap: u64,
    /// The warm-up throttle.
    pub throttle: Throttle,
}

/// The vector engine's costs (A9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorCosts {
    /// Cycles after an instruction's interval before its results are written.
    pub latency_cycles: u64,
    /// tensor_tensor: max(64, 2N).
    pub tensor_tensor: Cost,
    /// tensor_tensor with a PSUM input, or BF16 add/mul/sub on both inputs: max(64, N).
    pub tensor_tensor_fast: Cost,
    /// tensor_scalar: max(64, N).
    pub tensor_scalar: Cost,
    /// tensor_copy: max(64, N).
    pub tensor_copy: Cost,
    /// tensor_reduce: N.
    pub tensor_reduce: Cost,
    /// tensor_reduce of BF16 by add or max: N/2.
    pub tensor_reduce_bf16: Cost,
    /// memset: max(64, N).
    pub memset: Cost,
    /// memset of BF16 to zero: N/2.
    pub memset_zero_bf16: Cost,
    /// quantize_mx (NC-v4 and later: 4 elements per partition per cycle, spec §2); None on a
    /// core without it, which refuses the instruction.
    #[serde(deserialize_with = "required_cost")]
    pub quantize_mx: Option<Cost>,
}

/// The scalar engine's costs (A9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalarCosts {
    /// Cycles after an instruction's interval before its results are written.
    pub latency_cycles: u64,
    /// activation: max(64, N).
    pub activation: Cost,
    /// activation with a reduction along the free axis: max(64, N) + 64.
    pub activation_reduce: Cost,
    /// tensor_scalar: max(64, N).
    pub tensor_scalar: Cost,
    /// tensor_copy: max(64, N).
    pub tensor_copy: Cost,
}

/// The GpSimd engine's costs (A9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpSimdCosts {
    /// Cycles after an instruction's interval before its results are written.
    pub latency_cycles: u64,
    /// Every data instruction (iota, tensor_copy, tensor_tensor, ...): ~150 + N.
    pub data: Cost,
}

/// The tensor engine's warm-up throttle (Neuron Explorer's `Throttling` row, source A11: on
/// Trn2 and Trn3 the array starts at roughly 50 % of its maximum utilization, ramps to full
/// over about the first 3 us after work begins, and re-engages that limit when utilization
/// drops below 50 % over any ~3 us window). Modelled on the array's matmuls: a MultiplyMoving's
/// interval is stretched to interval x 100 / limit, the limit rising linearly from
/// `start_percent` to 100 over `ramp` from the matmul that engaged it (a matmul's cycles are
/// the least whose work at the rising limit is its full-rate interval); a matmul engages it
/// when the array was busy less than half of the `window` before its issue, a window that
/// begins after the throttle last engaged (the first matmul always does). `enabled: false` runs at the full rate from the first instruction.
///
/// Leaves out: the ramp's true shape (AWS documents its ends, not its curve: linear is an
/// estimate) and any throttle of LoadStationary, transposes or the other engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Throttle {
    /// Whether the array throttles at all.
    pub enabled: bool,
    /// The rate it starts at, in % of full (A11: roughly 50).
    pub start_percent: u32,
    /// How long the ramp to full takes once work begins (A11: about 3 us).
    #[serde(with = "trnsim_kernel::time::text_dur")]
    pub ramp: trnsim_kernel::Dur,
    /// The window whose utilization below 50 % re-engages the limit (A11: about 3 us).
    #[serde(with = "trnsim_kernel::time::text_dur")]
    pub window: trnsim_kernel::Dur,
}

/// A field that failed its check: its path below `costs` and the message.
type Bad = (String, String);

fn range(field: &str, v: u64, lo: u64, hi: u64, unit: &str) -> Result<(), Bad> {
    if (lo..=hi).contains(&v) {
        return Ok(());
    }
    Err((field.to_string(), format!("{v} is out of range (allowed: {lo}..={hi}{unit})")))
}

impl Cost {
    fn validate(&self, field: &str) -> Result<(), Bad> {
        range(&format!("{field}.min_interval"), self.min_interval, 0, MAX_CYCLES, " cycles")?;
        range(&format!("{field}.elements"), u64::from(self.elements), 1, u64::from(MAX_RATE), "")?;
        range(&format!("{field}.cycles"), u64::from(self.cycles), 1, u64::from(MAX_RATE), "")?;
        range(&format!("{field}.overhead"), self.overhead, 0, MAX_CYCLES, " cycles")?;
        Ok(())
    }
}

impl EngineCosts {
    /// Checks every field; `columns` is the array's (LoadStationary's rate is at most one
    /// stationary per cycle). The error's field is the path below `costs`.
    pub fn validate(&self, columns: u32) -> Result<(), Bad> {
        range("control_cycles", self.control_cycles, 1, MAX_CYCLES, " cycles")?;
        let t = &self.tensor;
        range("tensor.latency_cycles", t.latency_cycles, 0, MAX_CYCLES, " cycles")?;
        let ls = u64::from(t.load_stationary_columns_per_cycle);
        range("tensor.load_stationary_columns_per_cycle", ls, 1, u64::from(columns), " = tensor.columns")?;
        range("tensor.transpose_free_cap", t.transpose_free_cap, 1, MAX_CYCLES, " cycles")?;
        t.throttle.validate()?;
        let v = &self.vector;
        range("vector.latency_cycles", v.latency_cycles, 0, MAX_CYCLES, " cycles")?;
        for (name, c) in [
            ("tensor_tensor", v.tensor_tensor),
            ("tensor_tensor_fast", v.tensor_tensor_fast),
            ("tensor_scalar", v.tensor_scalar),
            ("tensor_copy", v.tensor_copy),
            ("tensor_reduce", v.tensor_reduce),
            ("tensor_reduce_bf16", v.tensor_reduce_bf16),
            ("memset", v.memset),
            ("memset_zero_bf16", v.memset_zero_bf16),
        ] {
            c.validate(&format!("vector.{name}"))?;
        }
        if let Some(c) = v.quantize_mx {
            c.validate("vector.quantize_mx")?;
        }
        let s = &self.scalar;
        range("scalar.latency_cycles", s.latency_cycles, 0, MAX_CYCLES, " cycles")?;
        for (name, c) in [
            ("activation", s.activation),
            ("activation_reduce", s.activation_reduce),
            ("tensor_scalar", s.tensor_scalar),
            ("tensor_copy", s.tensor_copy),
        ] {
            c.validate(&format!("scalar.{name}"))?;
        }
        range("gpsimd.latency_cycles", self.gpsimd.latency_cycles, 0, MAX_CYCLES, " cycles")?;
        self.gpsimd.data.validate("gpsimd.data")
    }
}

/// The longest throttle ramp or window a core file may give (1 ms).
pub const MAX_THROTTLE_PS: u64 = 1_000_000_000;

impl Throttle {
    fn validate(&self) -> Result<(), Bad> {
        range("tensor.throttle.start_percent", u64::from(self.start_percent), 1, 100, " %")?;
        for (name, d) in [("ramp", self.ramp), ("window", self.window)] {
            if d.as_ps() == 0 || d.as_ps() > MAX_THROTTLE_PS {
                let m = format!("{d} is out of range (allowed: 1ps..=1ms)");
                return Err((format!("tensor.throttle.{name}"), m));
            }
        }
        Ok(())
    }
}
