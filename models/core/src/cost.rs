//! The per-instruction cost model (spec §5, from the `nki.isa` "Estimated instruction cost"
//! docstrings, A9): each instruction kind maps to a formula over N, the free-axis elements per
//! partition, in the executing engine's cycles. The formulas' shapes are here; every figure in
//! them is the core's (`tensor` for the matmul's terms, `costs` for the rest:
//! [`crate::spec::engines`]), so a core file changes them.
//!
//! A cost is an *initiation interval*: back-to-back instructions on one engine start that many
//! cycles apart. The time until results are visible adds the SBUF/PSUM access latency (the
//! ~60-cycle static overhead of spec §3 on each side), which overlaps the next instruction.

use crate::isa::{AluOp, Dtype, Engine, Instr, Mem};
use crate::spec::{CoreSpec, Cost, EngineCosts, TensorSpec};

/// The tensor engine's terms of the matmul formulas: the minimum interval I and the input
/// format's cycles per moving column C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulTerms {
    /// I: `tensor.min_interval`.
    pub min_interval: u64,
    /// C: the format's `cycles_per_column`.
    pub cycles_per_column: u64,
}

impl MatmulTerms {
    /// The terms of `dtype` on `tensor` (a format the core lacks, refused when the core is
    /// built, counts as one cycle per column).
    pub fn of(tensor: &TensorSpec, dtype: Dtype) -> MatmulTerms {
        let rate = tensor.rate(dtype);
        MatmulTerms {
            min_interval: u64::from(tensor.min_interval),
            cycles_per_column: rate.map_or(1, |r| u64::from(r.cycles_per_column)),
        }
    }
}

/// The matmul (MultiplyMoving) interval: max(min(I, M), N) x C for N moving columns through
/// a stationary of M columns (A9 nc_matmul).
pub fn matmul(n: u64, m: u64, t: MatmulTerms) -> u64 {
    m.min(t.min_interval).max(n).saturating_mul(t.cycles_per_column)
}

/// A background LoadStationary of M columns: ceil(M / L) x C, L the core's
/// `costs.tensor.load_stationary_columns_per_cycle` (spec §2: fast LS, 4).
pub fn load_stationary(m: u64, per_cycle: u32, t: MatmulTerms) -> u64 {
    m.div_ceil(u64::from(per_cycle.max(1))).max(1).saturating_mul(t.cycles_per_column)
}

/// A transpose through the array: max(P, min(cap, F)) (A9 nc_transpose on the tensor engine).
pub fn transpose(p: u64, f: u64, cap: u64) -> u64 {
    p.max(f.min(cap))
}

/// The core's costs and array, what [`cycles`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// The tensor array (matmul terms).
    pub tensor: TensorSpec,
    /// Every other engine's costs.
    pub costs: EngineCosts,
    /// The tensor engine's clock (the throttle's ramp and window in its cycles).
    pub tensor_clock: trnsim_kernel::Frequency,
}

impl CostModel {
    /// The cost model of `spec`.
    pub fn of(spec: &CoreSpec) -> CostModel {
        CostModel { tensor: spec.tensor, costs: spec.costs, tensor_clock: spec.clocks.tensor }
    }

    /// Cycles after an instruction's interval on `engine` before its results are written.
    pub fn latency(&self, engine: Engine) -> u64 {
        let c = &self.costs;
        match engine {
            Engine::Tensor => c.tensor.latency_cycles,
            Engine::Vector => c.vector.latency_cycles,
            Engine::Scalar => c.scalar.latency_cycles,
            Engine::GpSimd => c.gpsimd.latency_cycles,
            Engine::Sync => 0,
        }
    }
}

/// The initiation interval of `instr` on `engine`, in that engine's cycles. `stationary_cols`
/// is the M of the last LoadStationary (for MultiplyMoving).
pub fn cycles(engine: Engine, instr: &Instr, stationary_cols: u64, model: &CostModel) -> u64 {
    let (tensor, c) = (&model.tensor, &model.costs);
    match instr {
        Instr::LoadStationary { src, .. } => load_stationary(
            src.matmul_columns(),
            c.tensor.load_stationary_columns_per_cycle,
            MatmulTerms::of(tensor, src.dtype),
        ),
        Instr::MultiplyMoving { src, .. } => {
            matmul(src.matmul_columns(), stationary_cols, MatmulTerms::of(tensor, src.dtype))
        }
        // (The ISA runs transposes on the tensor engine only.)
        Instr::Transpose { src, .. } => transpose(src.partitions as u64, src.free_elems(), c.tensor.transpose_free_cap),
        _ => match data_cost(engine, instr, c) {
            Some((cost, n)) => cost.eval(n),
            None => c.control_cycles,
        },
    }
}

/// The cost row and N of a vector, scalar or GpSimd data instruction (None: a control
/// instruction). GpSimd runs every data instruction at its one cost.
fn data_cost(engine: Engine, instr: &Instr, c: &EngineCosts) -> Option<(Cost, u64)> {
    let (v, s) = (&c.vector, &c.scalar);
    let on = |vector: Cost, scalar: Cost| if engine == Engine::Scalar { scalar } else { vector };
    let (cost, n) = match instr {
        Instr::Activation { src, reduce, .. } => {
            (if reduce.is_some() { s.activation_reduce } else { s.activation }, src.free_elems())
        }
        Instr::TensorScalar { src, .. } => (on(v.tensor_scalar, s.tensor_scalar), src.free_elems()),
        Instr::TensorCopy { src, .. } => (on(v.tensor_copy, s.tensor_copy), src.free_elems()),
        // A core without QuantizeMX (None) refuses the instruction before it runs
        // (`core::build`); its tensor_copy's cost stands in for any other caller.
        Instr::QuantizeMx { src, .. } => (v.quantize_mx.unwrap_or(v.tensor_copy), src.free_elems()),
        Instr::TensorTensor { op, a, b, .. } => {
            let all_bf16 = a.dtype == Dtype::Bf16 && b.dtype == Dtype::Bf16;
            let fast = a.mem == Mem::Psum
                || b.mem == Mem::Psum
                || (all_bf16 && matches!(op, AluOp::Add | AluOp::Mul | AluOp::Sub) && a.innermost_stride_bytes() <= 2);
            (if fast { v.tensor_tensor_fast } else { v.tensor_tensor }, a.free_elems())
        }
        Instr::TensorReduce { op, src, .. } => {
            let half = src.dtype == Dtype::Bf16 && matches!(op, AluOp::Add | AluOp::Max);
            (if half { v.tensor_reduce_bf16 } else { v.tensor_reduce }, src.free_elems())
        }
        Instr::Memset { dst, value } => {
            let zero_bf16 = *value == 0.0 && dst.dtype == Dtype::Bf16;
            (if zero_bf16 { v.memset_zero_bf16 } else { v.memset }, dst.free_elems())
        }
        Instr::Iota { dst, .. } => (c.gpsimd.data, dst.free_elems()),
        _ => return None,
    };
    Some(if engine == Engine::GpSimd { (c.gpsimd.data, n) } else { (cost, n) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{Ap, Dim, Mem};

    fn ap(mem: Mem, n: u16, dtype: Dtype) -> Ap {
        let mut dims = [Dim::default(); 4];
        dims[0] = Dim { size: n, stride: 1 };
        Ap { mem, partition_start: 0, partitions: 128, offset: 0, dims, ndims: 1, dtype }
    }

    #[test]
    fn every_row_of_spec_section_5_is_charged_as_written() {
        let s = |n| ap(Mem::Sbuf, n, Dtype::Fp32);
        let b = |n| ap(Mem::Sbuf, n, Dtype::Bf16);
        let cases: Vec<(Engine, Instr, u64, u64)> = vec![
            // nc_matmul: max(min(64, N_stat), N_mov), x4 for FP32.
            (
                Engine::Tensor,
                Instr::MultiplyMoving {
                    src: b(512),
                    scales: None,
                    dst: s(512),
                    acc: crate::isa::Accumulate::Overwrite,
                },
                128,
                512,
            ),
            (
                Engine::Tensor,
                Instr::MultiplyMoving { src: b(16), scales: None, dst: s(16), acc: crate::isa::Accumulate::Overwrite },
                128,
                64,
            ),
            (
                Engine::Tensor,
                Instr::MultiplyMoving { src: b(16), scales: None, dst: s(16), acc: crate::isa::Accumulate::Overwrite },
                32,
                32,
            ),
            (
                Engine::Tensor,
                Instr::MultiplyMoving {
                    src: s(512),
                    scales: None,
                    dst: s(512),
                    acc: crate::isa::Accumulate::Overwrite,
                },
                128,
                2048,
            ),
            (Engine::Tensor, Instr::Transpose { src: b(32), dst: s(32) }, 0, 128),
            (
                Engine::Scalar,
                Instr::Activation {
                    func: crate::isa::ActFn::Exp,
                    src: s(512),
                    dst: b(512),
                    scale: 1.0,
                    bias: 0.0,
                    reduce: None,
                },
                0,
                512,
            ),
            (
                Engine::Scalar,
                Instr::Activation {
                    func: crate::isa::ActFn::Exp,
                    src: s(10),
                    dst: b(10),
                    scale: 1.0,
                    bias: 0.0,
                    reduce: None,
                },
                0,
                64,
            ),
            (
                Engine::Scalar,
                Instr::Activation {
                    func: crate::isa::ActFn::Exp,
                    src: s(512),
                    dst: b(512),
                    scale: 1.0,
                    bias: 0.0,
                    reduce: Some((AluOp::Add, s(1))),
                },
                0,
                576,
            ),
            (Engine::Vector, Instr::TensorScalar { op: AluOp::Mul, src: s(300), imm: 2.0, dst: s(300) }, 0, 300),
            (Engine::Vector, Instr::TensorCopy { src: s(20), dst: s(20) }, 0, 64),
            (Engine::Vector, Instr::TensorTensor { op: AluOp::Add, a: s(300), b: s(300), dst: s(300) }, 0, 600),
            (
                Engine::Vector,
                Instr::TensorTensor { op: AluOp::Add, a: ap(Mem::Psum, 300, Dtype::Fp32), b: s(300), dst: s(300) },
                0,
                300,
            ),
            (Engine::Vector, Instr::TensorTensor { op: AluOp::Mul, a: b(300), b: b(300), dst: b(300) }, 0, 300),
            (Engine::Vector, Instr::TensorTensor { op: AluOp::Max, a: b(300), b: b(300), dst: b(300) }, 0, 600),
            (Engine::Vector, Instr::TensorReduce { op: AluOp::Add, src: s(300), dst: s(1) }, 0, 300),
            (Engine::Vector, Instr::TensorReduce { op: AluOp::Max, src: b(300), dst: b(1) }, 0, 150),
            (Engine::Vector, Instr::Memset { dst: s(300), value: 1.0 }, 0, 300),
            (Engine::Vector, Instr::Memset { dst: b(300), value: 0.0 }, 0, 150),
            (Engine::GpSimd, Instr::Iota { dst: s(100), base: 0, step: 1, partition_step: 0 }, 0, 250),
            (Engine::GpSimd, Instr::TensorCopy { src: s(100), dst: s(100) }, 0, 250),
            (Engine::Sync, Instr::Halt, 0, 1),
        ];
        let model = CostModel::of(&crate::spec::nc_v4());
        for (e, i, m, want) in cases {
            assert_eq!(cycles(e, &i, m, &model), want, "{e} {}", i.mnemonic());
        }
    }

    #[test]
    fn bf16_matmul_n512_at_2_4_ghz_is_78_6_tflops() {
        // 128 x 128 MACs per cycle, 2 flops each, 2.4 GHz: the spec §2 check.
        let n = 512u64;
        let cyc = matmul(n, 128, MatmulTerms { min_interval: 64, cycles_per_column: 1 });
        let flops = 2.0 * 128.0 * 128.0 * n as f64;
        let tflops = flops / (cyc as f64 / 2.4e9) / 1e12;
        assert!((tflops - 78.64).abs() < 0.01, "{tflops}");
    }
}
