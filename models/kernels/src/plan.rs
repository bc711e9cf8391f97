//! How a GEMM node of a workload maps onto [`crate::gemm`] programs on one chip.
//!
//! A node `C[m x n] = A[m x k] x B[k x n]` (`count` of them) maps onto a per-core program
//! shape, tiled by the core's [`Geometry`] (below for every preset: a 128 x 128 array, 256 KiB
//! of SBUF per partition, 8 PSUM banks of 2 KiB; a `C`-column array takes chunks of `C`
//! columns, an `R`-row one K-blocks of `R` rows, a larger SBUF larger regions, as NKI's
//! kernels take their tiles from the hardware):
//! - the `count` GEMMs share the chip's cores evenly (`cores / count` cores each; more GEMMs
//!   than cores run in rounds of one per core, the rounds back to back in one program as
//!   more columns), each core taking `n / cores-per-GEMM` columns per round, in 128-column
//!   chunks (8 or more padded to a multiple of 4, so the tensor engine signals per 4);
//! - the tokens (`m`) are at most 512 per program (one PSUM bank of FP32), split evenly into
//!   tiles: a decode GEMM of m = 8 is one program of 8 tokens; tiles of at most 128 tokens
//!   whose weights stream from HBM run the decode form ([`crate::gemm::Variant::w_moving`]:
//!   the tokens stationary, the weights the moving operand; at most the array's columns); the
//!   contraction (`k`) at most what SBUF's A region (a quarter of each partition,
//!   [`Geometry::layout`]) holds (`k x m x bytes <= 8 MiB` over 128 partitions of 256 KiB;
//!   a third of that when the activations are quantized on the chip, which holds them in
//!   BF16 beside their MXFP8 copy), rounded up to the format's K-block (128 rows, 512 in
//!   MXFP8); the columns at most 64 chunks per core;
//! - a node larger than that is tiled: the tile programs run one after the other, each
//!   reading its operands, their edges (first loads, last stores) overlapped as consecutive
//!   nodes' are (`crate::cycle`); a split contraction's partial sums are not re-read. A node
//!   that fits is one program, its time the program's own.
//!
//! `a_resident` drops the loads of A, `b_resident` the loads of B (then all of B's slabs must
//! fit in SBUF at once, else the tile is narrowed).
//!
//! Left out: when the cores do not split evenly over the GEMMs, every core still runs the
//! program (the spare cores' DMA traffic is counted); tiles overlap only their edges.

use crate::format::Format;
use crate::gemm::{Shape, Variant};
use crate::geometry::Geometry;

/// Most chunks (of the array's columns) per core in one program (larger GEMMs are tiled).
pub const MAX_CHUNKS: u64 = 64;

/// How a GEMM node runs as programs: one program shape, run `reps` times.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Plan {
    /// Every core's program shape.
    pub shape: Shape,
    /// The program's format, residency and weight storage (its activation is `identity`).
    pub variant: Variant,
    /// Programs run one after the other for the whole node.
    pub reps: u64,
    /// The core geometry the shape is tiled for.
    pub geometry: Geometry,
}

/// What a GEMM node asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemmOp {
    /// Rows of A and C (tokens).
    pub m: u64,
    /// The contraction.
    pub k: u64,
    /// Columns of B and C.
    pub n: u64,
    /// Independent GEMMs of this shape.
    pub count: u32,
    /// A is in SBUF already.
    pub a_resident: bool,
    /// B is in SBUF already.
    pub b_resident: bool,
    /// The matmul's format.
    pub format: Format,
    /// B is stored in MXFP4 and dequantized on the vector engine.
    pub w_mxfp4: bool,
    /// B is stored in MXFP4 and the tensor engine takes it natively (at MXFP8's rate).
    pub w_native_mxfp4: bool,
    /// A is stored in BF16 and quantized to the MX `format` on the vector engine.
    pub a_quantize: bool,
}

/// The plan of `g` on `cores` cores of the presets' geometry ([`Geometry::NC_128`]).
pub fn plan(cores: u32, g: &GemmOp) -> Result<Plan, String> {
    plan_on(cores, &Geometry::NC_128, g)
}

/// The plan of `g` on `cores` cores of geometry `geo`.
pub fn plan_on(cores: u32, geo: &Geometry, g: &GemmOp) -> Result<Plan, String> {
    let GemmOp { m, k, n, count, .. } = *g;
    let what = || format!("gemm {m} x {k} x {n} (count {count}) in {}", g.format.asm());
    if cores == 0 || m == 0 || k == 0 || n == 0 || count == 0 {
        return Err(format!("{}: every dimension, the count and the chip's cores must be at least 1", what()));
    }
    let f = g.format;
    let (rows, cols) = (u64::from(geo.partitions), u64::from(geo.columns));
    let kblk = rows * u64::from(f.rows_per_partition());
    let layout = geo.layout();
    let (a_region, w_region) = (u64::from(layout.size(layout.x)), u64::from(layout.size(layout.w)));
    let (cores, c) = (u64::from(cores), u64::from(count));
    let (rounds, cores_per) = if c >= cores { (c.div_ceil(cores), 1) } else { (1, cores / c) };
    // GEMMs beyond one per core run back to back in one program, as more columns: their
    // weights stream on without a new program's start (their A, one per GEMM, is loaded
    // once: left out).
    let n_pc = n.div_ceil(cores_per).checked_mul(rounds).ok_or_else(|| format!("{}: too many columns", what()))?;
    let m_tiles = m.div_ceil(u64::from(geo.max_tokens()));
    let m_t = m.div_ceil(m_tiles);
    let kb = k.div_ceil(kblk);
    // Chunks in groups of 4 (a signal per group, not per chunk: each drains the array);
    // the padding is at most 3 chunks of a node of 8 or more.
    let chunks = match n_pc.div_ceil(cols) {
        c if c >= 8 => c.div_ceil(4) * 4,
        c => c,
    };
    // A quantized on the chip also holds its BF16 staging (twice its bytes) in A's region.
    let staged = if g.a_quantize { 3 } else { 1 };
    let x_block = m_t * u64::from(f.rows_per_partition()) * u64::from(f.bytes()) * staged;
    let u = |v: u64| u32::try_from(v).map_err(|_| format!("{}: a tile dimension does not fit 32 bits", what()));
    let variant = Variant {
        act_fn: "identity",
        x_resident: g.a_resident,
        w_resident: g.b_resident,
        format: f,
        w_mxfp4: g.w_mxfp4,
        w_native_mxfp4: g.w_native_mxfp4,
        x_quantize: g.a_quantize,
        // Weights streamed from HBM at <= 128 tokens: the decode form. Resident weights keep
        // the stationary form: no stream to keep up with, and its `Yᵀ` tail (activation and
        // store over 128 partitions of `tokens` each) is the shorter one (the MoE benchmark's
        // 64 x 512 x 512 resident experts: 9.252 us a step against 9.659 in the decode form).
        w_moving: m_t <= cols && !g.b_resident,
        ..Variant::default()
    };
    // The largest contraction block and column tile that fit, halving each until they do.
    let mut kb_t = kb.min(a_region / x_block);
    while kb_t >= 1 {
        // Column tiles of equal size (rounded up to a group of 4 where that is how they run).
        let col_tiles = chunks.div_ceil(MAX_CHUNKS);
        let mut ch = match chunks.div_ceil(col_tiles) {
            c if c >= 8 => (c.div_ceil(4) * 4).min(MAX_CHUNKS),
            c => c,
        };
        while ch >= 1 {
            for (cpg, cps) in [(4u64, 2u64), (2, 2), (2, 1), (1, 1)] {
                if ch % cpg != 0 || cpg > u64::from(geo.max_group()) {
                    continue;
                }
                let min_bufs = (2 * cpg / cps).max(2);
                // As many slab buffers as W's region holds (up to every slab): the deeper the
                // ring, the more weight DMAs in flight.
                let slab = cps * kb_t.min(kb) * cols * u64::from(f.rows_per_partition()) * u64::from(f.bytes());
                let fit = (w_region / slab.max(1)).min(ch / cps);
                let bufs = if g.b_resident { (ch / cps).max(min_bufs) } else { fit.max(min_bufs) };
                let shape = Shape {
                    tokens: u(m_t)?,
                    d_model: u(kb_t * kblk)?,
                    d_ff_per_core: u(ch * cols)?,
                    chunks_per_slab: u(cps)?,
                    chunks_per_group: u(cpg)?,
                    slab_buffers: u(bufs)?,
                };
                if shape.check_in(&variant, geo).is_ok() && (!g.b_resident || shape.slab_buffers >= shape.slabs_at(geo))
                {
                    let reps = [m_tiles, kb.div_ceil(kb_t), chunks.div_ceil(ch)]
                        .iter()
                        .try_fold(1u64, |a, &b| a.checked_mul(b))
                        .ok_or_else(|| format!("{}: more than 2^64 program runs", what()))?;
                    return Ok(Plan { shape, variant, reps, geometry: *geo });
                }
            }
            ch /= 2;
        }
        kb_t /= 2;
    }
    Err(format!(
        "{}: core.sbuf.partition_bytes: {} bytes per partition hold no tile of it (tokens {m_t}; the kernel gives A and W a quarter each, Y a 32nd)",
        what(),
        geo.sbuf_bpp
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(m: u64, k: u64, n: u64, count: u32) -> GemmOp {
        GemmOp {
            m,
            k,
            n,
            count,
            a_resident: false,
            b_resident: false,
            format: Format::Bf16,
            w_mxfp4: false,
            w_native_mxfp4: false,
            a_quantize: false,
        }
    }

    #[test]
    fn a_gemm_that_fits_is_one_program_of_its_own_shape() {
        let p = plan(8, &g(512, 1024, 16384, 1)).unwrap();
        assert_eq!(p.reps, 1);
        assert_eq!((p.shape.tokens, p.shape.d_model, p.shape.d_ff_per_core), (512, 1024, 2048));
        assert_eq!((p.shape.chunks_per_group, p.shape.chunks_per_slab), (4, 2));
    }

    #[test]
    fn larger_gemms_are_tiled_and_counts_share_the_cores() {
        let p = plan(8, &g(4096, 8192, 65536, 1)).unwrap();
        assert_eq!(p.shape.tokens, 512);
        assert_eq!(p.reps, 8, "8 token tiles, k 8192 fits at 512 tokens, 64 chunks per core");
        let e = plan(8, &GemmOp { b_resident: true, ..g(64, 512, 512, 2) }).unwrap();
        assert_eq!((e.shape.tokens, e.shape.d_ff_per_core, e.reps), (64, 128, 1), "2 experts on 4 cores each");
        assert!(e.shape.slab_buffers >= e.shape.slabs());
        let many = plan(8, &g(64, 128, 128, 20)).unwrap();
        assert_eq!((many.reps, many.shape.d_ff_per_core), (1, 384), "20 GEMMs on 8 cores: 3 rounds, one program");
        let odd = plan(8, &g(8, 64, 8 * 128 * 9, 1)).unwrap();
        assert_eq!((odd.shape.d_ff_per_core, odd.shape.chunks_per_group), (12 * 128, 4), "9 chunks padded to 12");
    }

    #[test]
    fn decode_shapes_keep_their_tokens_and_odd_sizes_round_the_contraction_up() {
        for m in [1, 8, 37, 64] {
            assert_eq!(plan(8, &g(m, 2880, 5120, 1)).unwrap().shape.tokens, m as u32);
        }
        let p = plan(8, &g(100, 1000, 1000, 1)).unwrap();
        assert_eq!((p.shape.tokens, p.shape.d_model), (100, 1024));
        let mx = plan(8, &GemmOp { format: Format::Mxfp8, ..g(8, 1000, 1000, 1) }).unwrap();
        assert_eq!(mx.shape.d_model, 1024, "two K-blocks of 512");
        assert!(plan(8, &g(1 << 50, 1 << 50, 1 << 50, u32::MAX)).is_err());
        assert!(plan(0, &g(1, 1, 1, 1)).is_err());
    }
}
