//! The per-instruction cost model (spec §5, from the `nki.isa` "Estimated instruction cost"
//! docstrings, A9), as data: each instruction kind maps to a formula over N, the free-axis
//! elements per partition, in the executing engine's cycles.
//!
//! A cost is an *initiation interval*: back-to-back instructions on one engine start that many
//! cycles apart. The time until results are visible adds the SBUF/PSUM access latency (the
//! ~60-cycle static overhead of spec §3 on each side), which overlaps the next instruction.

use crate::isa::{AluOp, Dtype, Engine, Instr, Mem};
use crate::spec::TensorSpec;
use serde::Serialize;

/// A cost formula over N (elements per partition of the main operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Formula {
    /// max(floor, num x N / den) + add.
    MaxLinear {
        /// Minimum initiation interval (MIN_II).
        floor: u64,
        /// Cycles per element, numerator.
        num: u64,
        /// Cycles per element, denominator.
        den: u64,
        /// Fixed cycles added after the max.
        add: u64,
    },
    /// base + N.
    Fixed {
        /// Fixed start cost (GpSimd's ~150 cycles).
        base: u64,
    },
    /// Tensor engine matmul: max(min(I, M), N) x C, I the core's `tensor.min_interval` (64),
    /// C the input format's `cycles_per_column` (4 for FP32).
    Matmul,
    /// Tensor engine LoadStationary in the background: ceil(M / 4) x C (fast LS, 4x an MM).
    LoadStationary,
    /// Tensor engine transpose: max(P, min(64, F)).
    Transpose,
    /// Control instructions: one cycle.
    Control,
}

/// One row of the cost table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CostRow {
    /// Which instruction (assembly mnemonic, with a qualifier where the formula differs).
    pub name: &'static str,
    /// The formula.
    pub formula: Formula,
    /// Where it comes from.
    pub source: &'static str,
}

const fn max_lin(floor: u64, num: u64, den: u64, add: u64) -> Formula {
    Formula::MaxLinear { floor, num, den, add }
}

/// The cost table, one row per instruction kind (spec §5).
pub const TABLE: &[CostRow] = &[
    CostRow { name: "matmul", formula: Formula::Matmul, source: "A9 nc_matmul: max(min(64, N_stat), N_mov), x4 FP32" },
    CostRow {
        name: "ldweights",
        formula: Formula::LoadStationary,
        source: "spec §2: fast LS up to 4x an MM (128 columns ~ 32 cycles), in the background",
    },
    CostRow { name: "transpose", formula: Formula::Transpose, source: "A9 nc_transpose (TE): max(P, min(64, F))" },
    CostRow { name: "transpose/vector", formula: max_lin(64, 1, 1, 0), source: "A9 nc_transpose (VE): max(64, N)" },
    CostRow { name: "activation", formula: max_lin(64, 1, 1, 0), source: "A9 activation: max(64, N)" },
    CostRow {
        name: "activation_reduce",
        formula: max_lin(64, 1, 1, 64),
        source: "A9 activation_reduce: max(64, N) + 64",
    },
    CostRow { name: "tensor_scalar", formula: max_lin(64, 1, 1, 0), source: "A9 tensor_scalar: max(64, N)" },
    CostRow { name: "tensor_copy", formula: max_lin(64, 1, 1, 0), source: "A9 tensor_copy: max(64, N)" },
    CostRow { name: "tensor_tensor", formula: max_lin(64, 2, 1, 0), source: "A9 tensor_tensor: max(64, 2N)" },
    CostRow {
        name: "tensor_tensor/fast",
        formula: max_lin(64, 1, 1, 0),
        source: "A9 tensor_tensor: max(64, N) with a PSUM input or all-BF16 add/mul/sub",
    },
    CostRow { name: "tensor_reduce", formula: max_lin(0, 1, 1, 0), source: "A9 tensor_reduce: N" },
    CostRow {
        name: "tensor_reduce/bf16",
        formula: max_lin(0, 1, 2, 0),
        source: "A9 tensor_reduce: N/2 for BF16 add/max",
    },
    CostRow { name: "memset", formula: max_lin(64, 1, 1, 0), source: "A9 memset: max(64, N)" },
    CostRow { name: "memset/zero-bf16", formula: max_lin(0, 1, 2, 0), source: "A9 memset: N/2 for zero BF16" },
    CostRow { name: "iota", formula: Formula::Fixed { base: 150 }, source: "A9 iota (GpSimd): 150 + N" },
    CostRow { name: "gpsimd", formula: Formula::Fixed { base: 150 }, source: "A9 GpSimd instructions: ~150 + N" },
    CostRow {
        name: "control",
        formula: Formula::Control,
        source: "estimate (spec §10): 1 instruction per cycle per sequencer",
    },
];

/// Looks a row up by name.
pub fn row(name: &str) -> &'static CostRow {
    TABLE.iter().find(|r| r.name == name).expect("cost table row")
}

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
    /// BF16 on a 128 x 128 array (I = 64, C = 1), the terms of formulas with no matmul.
    pub const BF16: MatmulTerms = MatmulTerms { min_interval: 64, cycles_per_column: 1 };

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

/// Evaluates a formula. `n` = free elements per partition of the main operand, `m` = the
/// stationary free size (matmul), `p` = partitions (transpose), `t` = the matmul terms.
pub fn eval(f: Formula, n: u64, m: u64, p: u64, t: MatmulTerms) -> u64 {
    match f {
        Formula::MaxLinear { floor, num, den, add } => floor.max((num * n).div_ceil(den)) + add,
        Formula::Fixed { base } => base + n,
        Formula::Matmul => m.min(t.min_interval).max(n) * t.cycles_per_column,
        Formula::LoadStationary => m.div_ceil(4).max(1) * t.cycles_per_column,
        Formula::Transpose => p.max(n.min(64)),
        Formula::Control => 1,
    }
}

/// The initiation interval of `instr` on `engine`, in that engine's cycles. `stationary_cols`
/// is the M of the last LoadStationary (for MultiplyMoving); `tensor` the core's array.
pub fn cycles(engine: Engine, instr: &Instr, stationary_cols: u64, tensor: &TensorSpec) -> u64 {
    const B: MatmulTerms = MatmulTerms::BF16;
    match instr {
        Instr::LoadStationary { src, .. } => {
            eval(row("ldweights").formula, 0, src.matmul_columns(), 0, MatmulTerms::of(tensor, src.dtype))
        }
        Instr::MultiplyMoving { src, .. } => {
            eval(row("matmul").formula, src.matmul_columns(), stationary_cols, 0, MatmulTerms::of(tensor, src.dtype))
        }
        Instr::Transpose { src, .. } => {
            let name = if engine == Engine::Tensor { "transpose" } else { "transpose/vector" };
            eval(row(name).formula, src.free_elems(), 0, src.partitions as u64, B)
        }
        Instr::Activation { src, reduce, .. } => {
            let name = if reduce.is_some() { "activation_reduce" } else { "activation" };
            eval(row(name).formula, src.free_elems(), 0, 0, B)
        }
        Instr::TensorScalar { src, .. } => gp_or(engine, "tensor_scalar", src.free_elems()),
        Instr::TensorCopy { src, .. } => gp_or(engine, "tensor_copy", src.free_elems()),
        Instr::TensorTensor { op, a, b, .. } => {
            let all_bf16 = a.dtype == Dtype::Bf16 && b.dtype == Dtype::Bf16;
            let fast = a.mem == Mem::Psum
                || b.mem == Mem::Psum
                || (all_bf16 && matches!(op, AluOp::Add | AluOp::Mul | AluOp::Sub) && a.innermost_stride_bytes() <= 2);
            let name = if fast { "tensor_tensor/fast" } else { "tensor_tensor" };
            gp_or(engine, name, a.free_elems())
        }
        Instr::TensorReduce { op, src, .. } => {
            let half = src.dtype == Dtype::Bf16 && matches!(op, AluOp::Add | AluOp::Max);
            gp_or(engine, if half { "tensor_reduce/bf16" } else { "tensor_reduce" }, src.free_elems())
        }
        Instr::Memset { dst, value } => {
            let zero_bf16 = *value == 0.0 && dst.dtype == Dtype::Bf16;
            gp_or(engine, if zero_bf16 { "memset/zero-bf16" } else { "memset" }, dst.free_elems())
        }
        Instr::Iota { dst, .. } => eval(row("iota").formula, dst.free_elems(), 0, 0, MatmulTerms::BF16),
        _ => eval(row("control").formula, 0, 0, 0, MatmulTerms::BF16),
    }
}

/// GpSimd runs every data instruction at its own 150 + N; other engines use `name`'s row.
fn gp_or(engine: Engine, name: &str, n: u64) -> u64 {
    if engine == Engine::GpSimd {
        eval(row("gpsimd").formula, n, 0, 0, MatmulTerms::BF16)
    } else {
        eval(row(name).formula, n, 0, 0, MatmulTerms::BF16)
    }
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
            (Engine::Vector, Instr::Transpose { src: b(32), dst: s(32) }, 0, 64),
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
        for (e, i, m, want) in cases {
            assert_eq!(cycles(e, &i, m, &crate::spec::nc_v4().tensor), want, "{e} {}", i.mnemonic());
        }
    }

    #[test]
    fn bf16_matmul_n512_at_2_4_ghz_is_78_6_tflops() {
        // 128 x 128 MACs per cycle, 2 flops each, 2.4 GHz: the spec §2 check.
        let n = 512u64;
        let cyc = eval(Formula::Matmul, n, 128, 0, MatmulTerms::BF16);
        let flops = 2.0 * 128.0 * 128.0 * n as f64;
        let tflops = flops / (cyc as f64 / 2.4e9) / 1e12;
        assert!((tflops - 78.64).abs() < 0.01, "{tflops}");
    }
}
