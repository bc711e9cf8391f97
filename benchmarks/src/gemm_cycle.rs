//! GEMM nodes of a workload as NeuronCore programs on the cycle-level chip (`--compute
//! cycle`), the programs the chip benchmarks run: each core streams its share of the
//! columns of B through SBUF slab by slab, multiplies them with A on the tensor engine into
//! PSUM, evacuates C through the scalar engine and stores it, the DMA traffic going through
//! the chip's HBM stacks (e2e-llm-layer's program, [`crate::e2e::program_with`]).
//!
//! A node `C[m x n] = A[m x k] x B[k x n]` (`count` of them) maps onto a per-core program
//! shape:
//! - the `count` GEMMs share the chip's cores evenly (`cores / count` cores each; more GEMMs
//!   than cores run in rounds of one per core), each core taking `n / cores-per-GEMM`
//!   columns, in 128-column chunks;
//! - the tokens (`m`) are at most 512 per program (one PSUM bank of FP32), rounded up to a
//!   multiple of 64; the contraction (`k`) at most what SBUF's A region holds
//!   (`k x m x 2 B <= 8 MiB` over 128 partitions); the columns at most 64 chunks per core;
//! - a node larger than that is tiled: its time is the tile program's time times the tiles
//!   (tiles run one after the other, each reading its operands; a split contraction's
//!   partial sums are not re-read). A node that fits is one program, its time the program's
//!   own.
//!
//! `a_resident` drops the loads of A, `b_resident` the loads of B (then all of B's slabs must
//! fit in SBUF at once, else the tile is narrowed). Each distinct program is simulated once
//! per run and cached.
//!
//! Left out: tensor engines other than 128 x 128 (refused: the programs address 128
//! partitions); dtypes other than BF16/FP16 (the generated programs are BF16; others are refused,
//! use the roofline); when the cores do not split evenly over the GEMMs, every core still runs
//! the program (the spare cores' DMA traffic is counted); tiles do not overlap one another.

use crate::e2e::{self, Shape, Variant};
use std::collections::HashMap;
use trnsim_workloads::costs::SystemCosts;
use trnsim_workloads::exec::Costs;
use trnsim_workloads::format::Op;

/// Most 128-column chunks per core in one program (larger GEMMs are tiled).
pub const MAX_CHUNKS: u64 = 64;
/// Most tokens per program: one PSUM bank of FP32.
pub const MAX_TOKENS: u64 = 512;
/// Bytes per partition of SBUF's A region (the program's X area).
const A_REGION_BPP: u64 = 0x1_0000;

/// How a GEMM node runs as programs: one program shape, run `reps` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// Every core's program shape.
    pub shape: Shape,
    /// A is not loaded.
    pub a_resident: bool,
    /// B is not loaded.
    pub b_resident: bool,
    /// Programs run one after the other for the whole node.
    pub reps: u64,
}

/// The plan of GEMM `m x k x n` (`count` of them) on `cores` cores.
pub fn plan(
    cores: u32,
    m: u64,
    k: u64,
    n: u64,
    count: u32,
    a_resident: bool,
    b_resident: bool,
) -> Result<Plan, String> {
    let what = || format!("gemm {m} x {k} x {n} (count {count})");
    if cores == 0 || m == 0 || k == 0 || n == 0 || count == 0 {
        return Err(format!("{}: every dimension, the count and the chip's cores must be at least 1", what()));
    }
    let (cores, c) = (u64::from(cores), u64::from(count));
    let (rounds, cores_per) = if c >= cores { (c.div_ceil(cores), 1) } else { (1, cores / c) };
    let n_pc = n.div_ceil(cores_per);
    let m_tiles = m.div_ceil(MAX_TOKENS);
    let m_t = m.div_ceil(m_tiles).div_ceil(64) * 64;
    let kb = k.div_ceil(128);
    let chunks = n_pc.div_ceil(128);
    let u = |v: u64| u32::try_from(v).map_err(|_| format!("{}: a tile dimension does not fit 32 bits", what()));
    // The largest contraction block and column tile that fit, halving each until they do.
    let mut kb_t = kb.min(A_REGION_BPP / (2 * m_t));
    while kb_t >= 1 {
        let mut ch = chunks.min(MAX_CHUNKS);
        while ch >= 1 {
            for (cpg, cps) in [(4u64, 2u64), (2, 2), (2, 1), (1, 1)] {
                if ch % cpg != 0 {
                    continue;
                }
                let min_bufs = (2 * cpg / cps).max(2);
                let bufs = if b_resident { (ch / cps).max(min_bufs) } else { min_bufs };
                let shape = Shape {
                    tokens: u(m_t)?,
                    d_model: u(kb_t * 128)?,
                    d_ff_per_core: u(ch * 128)?,
                    chunks_per_slab: u(cps)?,
                    chunks_per_group: u(cpg)?,
                    slab_buffers: u(bufs)?,
                };
                if shape.check().is_ok() {
                    let reps = [m_tiles, kb.div_ceil(kb_t), chunks.div_ceil(ch)]
                        .iter()
                        .try_fold(rounds, |a, &b| a.checked_mul(b))
                        .ok_or_else(|| format!("{}: more than 2^64 program runs", what()))?;
                    return Ok(Plan { shape, a_resident, b_resident, reps });
                }
            }
            ch /= 2;
        }
        kb_t /= 2;
    }
    Err(format!("{}: no program shape fits SBUF (tokens {m_t})", what()))
}

/// Node times with GEMMs run as NeuronCore programs on the cycle-level chip; every other
/// node as `inner` gives it.
pub struct CycleCosts<'a> {
    /// Everything but GEMMs (its chip is the one the programs run on).
    pub inner: SystemCosts<'a>,
    programs: HashMap<Plan, f64>,
}

impl<'a> CycleCosts<'a> {
    /// GEMMs on `inner`'s chip, the rest from `inner`.
    pub fn new(inner: SystemCosts<'a>) -> CycleCosts<'a> {
        CycleCosts { inner, programs: HashMap::new() }
    }

    /// Distinct programs simulated so far.
    pub fn programs_run(&self) -> usize {
        self.programs.len()
    }

    /// One program of `p` on the cycle-level chip, in ns (cached).
    pub fn program_ns(&mut self, p: &Plan) -> Result<f64, String> {
        let key = Plan { reps: 1, ..*p };
        if let Some(t) = self.programs.get(&key) {
            return Ok(*t);
        }
        let v =
            Variant { act_fn: "identity", x_resident: p.a_resident, w_resident: p.b_resident, ..Variant::default() };
        let (sim, _) = e2e::run_variant(self.inner.chip, &p.shape, &v, trnsim_kernel::TickOrder::Structural, None)?;
        let t = sim.now().as_ns_f64();
        self.programs.insert(key, t);
        Ok(t)
    }
}

impl Costs for CycleCosts<'_> {
    fn compute_ns(&mut self, op: &Op) -> Result<f64, String> {
        match op {
            Op::Gemm { m, k, n, dtype, count, a_resident, b_resident, weight_dtype } => {
                let dtype = weight_dtype.as_ref().filter(|w| *w != dtype).unwrap_or(dtype);
                if !matches!(dtype.as_str(), "bf16" | "fp16") {
                    return Err(format!(
                        "gemm {m} x {k} x {n} {dtype}: --compute cycle runs BF16 programs only (use --compute roofline)"
                    ));
                }
                let t = &self.inner.chip.core.tensor;
                if (t.rows, t.columns) != (128, 128) {
                    return Err(format!(
                        "gemm {m} x {k} x {n}: --compute cycle's GEMM programs are written for a 128 x 128 tensor engine, not {} x {} (use --compute roofline, which takes the core's rates)",
                        t.rows, t.columns
                    ));
                }
                let p = plan(self.inner.chip.spec.cores, *m, *k, *n, *count, *a_resident, *b_resident)?;
                Ok(self.program_ns(&p)? * p.reps as f64)
            }
            other => self.inner.compute_ns(other),
        }
    }
    fn memory_ns(&mut self, op: &Op) -> Result<f64, String> {
        self.inner.memory_ns(op)
    }
    fn comm_ns(&mut self, op: &Op, groups: &[Vec<usize>]) -> Result<Vec<f64>, String> {
        self.inner.comm_ns(op, groups)
    }
    fn send_recv_ns(&mut self, bytes: u64, pairs: &[(usize, usize)]) -> Result<Vec<f64>, String> {
        self.inner.send_recv_ns(bytes, pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gemm_that_fits_is_one_program_of_its_own_shape() {
        let p = plan(8, 512, 1024, 16384, 1, false, false).unwrap();
        assert_eq!(p.reps, 1);
        assert_eq!((p.shape.tokens, p.shape.d_model, p.shape.d_ff_per_core), (512, 1024, 2048));
        assert_eq!((p.shape.chunks_per_group, p.shape.chunks_per_slab), (4, 2));
    }

    #[test]
    fn larger_gemms_are_tiled_and_counts_share_the_cores() {
        let p = plan(8, 4096, 8192, 65536, 1, false, false).unwrap();
        assert_eq!(p.shape.tokens, 512);
        assert_eq!(p.reps, 8, "8 token tiles, k 8192 fits at 512 tokens, 64 chunks per core");
        let e = plan(8, 64, 512, 512, 2, false, true).unwrap();
        assert_eq!((e.shape.tokens, e.shape.d_ff_per_core, e.reps), (64, 128, 1), "2 experts on 4 cores each");
        assert!(e.shape.slab_buffers >= e.shape.slabs());
        let many = plan(8, 64, 128, 128, 20, false, false).unwrap();
        assert_eq!(many.reps, 3, "20 GEMMs on 8 cores: 3 rounds");
    }

    #[test]
    fn odd_sizes_round_up_and_nothing_overflows() {
        let p = plan(8, 100, 1000, 1000, 1, false, false).unwrap();
        assert_eq!((p.shape.tokens, p.shape.d_model), (128, 1024));
        assert!(plan(8, 1 << 50, 1 << 50, 1 << 50, u32::MAX, false, false).is_err());
        assert!(plan(0, 1, 1, 1, 1, false, false).is_err());
    }
}
