//! The GEMM kernel: `Y_i = act(X · W_i)` on every core, the program of the chip benchmarks
//! (`e2e-llm-layer`, `tp-matmul-N`, `moe-alltoall-144`) and of `--compute cycle`'s GEMM nodes,
//! in any matmul format the core has.
//!
//! Core `i` computes `Y_i = act(X · W_i)` for `tokens` tokens, `X` [tokens x d_model] and its
//! own weight shard `W_i` [d_model x d_ff_per_core], with FP32 accumulation. The weights are
//! streamed from the core's HBM stack by DMA, a slab of `chunks_per_slab` 128-column chunks at
//! a time, into a ring of `slab_buffers` SBUF buffers; `X` is loaded once, block by block;
//! each chunk of `W_i` is LoadStationary'd per K-block of `d_model` (128 rows, 512 in MXFP8,
//! whose partitions pack 4 rows) and multiplied by that block of `Xᵀ` (N = `tokens`),
//! accumulating over `d_model` in one PSUM bank (two halves of 4 banks, one per group of
//! chunks, double-buffered); the scalar engine applies the activation from PSUM into one of 8
//! SBUF output buffers (BF16), and the GpSimd engine's DMA writes each chunk of `Yᵀ` back to
//! HBM. HBM tensors are stored pre-tiled (row `p` of a DMA = SBUF partition `p`), each row
//! padded by 512 B (`PAD`); the two cores on one stack use disjoint 4 GiB halves of its space.
//!
//! The decode form ([`Variant::w_moving`], `tokens` <= 128, as NKI's token-generation MLP
//! kernels do) swaps the operands: each K-block of `Xᵀ` is the stationary matrix (`tokens`
//! columns, a short LoadStationary) and each 128-column block of W streams through the array
//! as the moving operand (a column a cycle), accumulating `Y` un-transposed on `tokens` PSUM
//! partitions; the scalar engine activates those partitions and the store DMA moves them (one
//! DMA engine per 8 partitions). With W stationary, a matmul of a few tokens waits on each
//! 128 x 128 block's load through SBUF (about 190 cycles a block on NC-v4 against the
//! matmul's 64), which bounds the stream below the DMA engines' rate. `X` is then one DMA,
//! ahead of the weights, and with `dma_piece` the two cores of a stack read their weight
//! pieces from one region, piece by piece in turn, so their streams share open rows.
//!
//! MXFP8 operands carry their E8M0 scales (one byte per 32 K-rows per column, on partitions
//! 0..16), loaded by their own DMAs beside the elements'. MXFP4 weights ([`Variant::w_mxfp4`])
//! on a core whose tensor engine takes MXFP4 at MXFP8's MACs per PE
//! ([`Variant::w_native_mxfp4`], nc-v4) move 4 bits a weight and multiply as MXFP8 does (the
//! ISA has no MXFP4 operand; left out: the LoadStationary's SBUF read is MXFP8's bytes).
//! Elsewhere ([`Variant::w_mxfp4`]) they are loaded packed (two per byte, with their scales)
//! into a staging ring and dequantized by the vector engine into the matmul's format: to
//! MXFP8 one pass (the nibbles' unpack and cast, a `tensor_copy`; the block scales carry
//! over), to any other format two (that cast, then a `tensor_tensor mul` by the scales
//! broadcast over their 32-element blocks).
//!
//! Activations stored in BF16 against MX weights on a core with `quantize_mx`
//! ([`Variant::x_quantize`]) land in a BF16 staging area and the vector engine quantizes them
//! to MXFP8 (one `quantize_mx` per K-block: the block scales and the scaled cast), so the
//! matmul runs at the MX rate; the quantization is charged at the core's `quantize_mx` cost.
//!
//! Per core, semaphores: s0 weight slabs landed (16 per slab, 18 with scales), s1 `X` blocks
//! landed (16 per block, 18 with scales), s2 chunks multiplied (signalled once per group of
//! chunks, and per chunk in the last group; their slabs consumed, their PSUM banks full), s3
//! chunks activated, s4 chunks stored (16 per chunk; in the decode form one per 8 tokens),
//! s6 slabs dequantized (MXFP4 only), s7 K-blocks of X quantized (`x_quantize` only).
//! Queues: loads on q0 (QoS class 0), stores on q1 (class 1).
//!
//! On another core ([`program_in`] with its [`Geometry`]) every 128 above is the array's: a
//! K-block is `rows` rows, a chunk `columns` columns, the SBUF regions are shares of its
//! partition ([`Geometry::layout`]), the MX scales of a K-block sit on `rows / 8` partitions and
//! each DMA's semaphore increments are the DMA engines it touches; the presets' geometry gives
//! the text above byte for byte.
//!
//! Left out: the values (the programs time the work; `trnsim core --functional` runs values),
//! a K-block split across cores, and arrays wider than they are tall.

use crate::format::{Format, MX_BLOCK};
use crate::geometry::{Geometry, SbufLayout};
use std::fmt::Write as _;

/// The layer's shape, per core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    /// Tokens (the moving free size N of every matmul; 1..=512, one PSUM bank of FP32).
    pub tokens: u32,
    /// Model width: the contraction, a multiple of the format's K-block (128; MXFP8 512).
    pub d_model: u32,
    /// This core's share of the FFN width: a multiple of 128 x `chunks_per_group`.
    pub d_ff_per_core: u32,
    /// 128-column chunks of W per DMA'd slab.
    pub chunks_per_slab: u32,
    /// Chunks the tensor engine multiplies between two signals (a `sem_inc` waits for every
    /// earlier instruction to complete, draining the array, so signals are kept rare); PSUM's 8
    /// banks hold two groups (double-buffered), so at most 4.
    pub chunks_per_group: u32,
    /// SBUF slab buffers (a ring); a group's slabs are released together.
    pub slab_buffers: u32,
}

/// The benchmark's shape: 512 tokens, d_model 1024, d_ff 16384 over 8 cores (2048 each); slabs
/// of 2 chunks = 4 KiB per partition (spec §4: >= 4 KiB per partition saturates a DMA engine),
/// 4 slab buffers, a signal every 4 chunks.
pub const SHAPE: Shape =
    Shape { tokens: 512, d_model: 1024, d_ff_per_core: 2048, chunks_per_slab: 2, chunks_per_group: 4, slab_buffers: 4 };

/// Most output buffers of Y (fewer where Y's region holds fewer chunks).
const Y_BUFS: u32 = 8;
/// The MXFP4 staging ring's buffers (packed weights, and their scales').
const STAGE_BUFS: u32 = 2;
/// Padding after each HBM row: a DMA engine's packet covers 512 B of each of its 8 partitions,
/// and rows a power of two apart would put all 8 on one pseudo-channel and bank group (default
/// address map: 32 B bursts over 16 channels, then 2 PCs, then 4 bank groups); 512 B more per
/// row spreads them over every (PC, bank group).
const PAD: u32 = 512;
const W_HBM: u64 = 0;
const X_HBM: u64 = 0x1000_0000;
const Y_HBM: u64 = 0x2000_0000;
const WS_HBM: u64 = 0x3000_0000;
const XS_HBM: u64 = 0x3800_0000;
/// The two cores on a stack use address halves this far apart.
const CORE_HBM: u64 = 0x1_0000_0000;

impl Shape {
    /// K-blocks of `d_model` in format `f` on a core of geometry `g` (`g.partitions` rows,
    /// 4x in MXFP8).
    pub fn kb_at(&self, f: Format, g: &Geometry) -> u32 {
        self.d_model / (g.partitions * f.rows_per_partition())
    }
    /// Chunks of `W` (and of `Yᵀ`) per core on a core of geometry `g` (`g.columns` wide).
    pub fn chunks_at(&self, g: &Geometry) -> u32 {
        self.d_ff_per_core / g.columns
    }
    /// Weight slabs per core on a core of geometry `g`.
    pub fn slabs_at(&self, g: &Geometry) -> u32 {
        self.chunks_at(g) / self.chunks_per_slab
    }
    /// Bytes per partition of one weight slab in format `f` on a core of geometry `g`.
    pub fn slab_bpp_at(&self, f: Format, g: &Geometry) -> u32 {
        self.chunks_per_slab * self.kb_at(f, g) * g.columns * f.rows_per_partition() * f.bytes()
    }
    /// K-blocks of `d_model` in BF16 (128 rows each).
    pub fn kb(&self) -> u32 {
        self.d_model / 128
    }
    /// K-blocks of `d_model` in format `f` (128 rows, 512 in MXFP8).
    pub fn kb_in(&self, f: Format) -> u32 {
        self.d_model / (128 * f.rows_per_partition())
    }
    /// 128-column chunks of `W` (and of `Yᵀ`) per core.
    pub fn chunks(&self) -> u32 {
        self.d_ff_per_core / 128
    }
    /// Weight slabs per core.
    pub fn slabs(&self) -> u32 {
        self.chunks() / self.chunks_per_slab
    }
    /// Bytes per partition of one BF16 weight slab.
    pub fn slab_bpp(&self) -> u32 {
        self.slab_bpp_in(Format::Bf16)
    }
    /// Bytes per partition of one weight slab in format `f`.
    pub fn slab_bpp_in(&self, f: Format) -> u32 {
        self.chunks_per_slab * self.kb_in(f) * 128 * f.rows_per_partition() * f.bytes()
    }
    /// Bytes per partition of one 128-row block of BF16 Xᵀ, and of one output chunk of Yᵀ.
    pub fn tok_bpp(&self) -> u32 {
        self.tokens * 2
    }
    /// Bytes per partition of one K-block of Xᵀ in format `f`.
    pub fn x_bpp_in(&self, f: Format) -> u32 {
        self.tokens * f.rows_per_partition() * f.bytes()
    }
    /// Matmuls per core (BF16).
    pub fn matmuls(&self) -> u64 {
        u64::from(self.chunks() * self.kb())
    }
    /// Flops per core.
    pub fn flops(&self) -> u64 {
        2 * u64::from(self.tokens) * u64::from(self.d_model) * u64::from(self.d_ff_per_core)
    }
    /// HBM bytes per core in BF16: W and X read once, Y written once.
    pub fn hbm_bytes(&self) -> u64 {
        let (t, d, f) = (u64::from(self.tokens), u64::from(self.d_model), u64::from(self.d_ff_per_core));
        2 * (d * f + t * d + t * f)
    }
    /// True if the tensor engine signals after chunk `c`: at the end of each group, and after
    /// every chunk of the last group (so the activation and the stores overlap the last
    /// matmuls).
    fn signals_after(&self, c: u32, chunks: u32) -> bool {
        c % self.chunks_per_group == self.chunks_per_group - 1 || c + self.chunks_per_group >= chunks
    }
    /// Tensor-engine signals per core.
    pub fn signals(&self) -> u32 {
        (0..self.chunks()).filter(|&c| self.signals_after(c, self.chunks())).count() as u32
    }
    /// Checks the shape fits the BF16 program's SBUF layout and the ISA's limits.
    pub fn check(&self) -> Result<(), String> {
        self.check_for(&Variant::default())
    }
    /// Checks the shape fits the SBUF layout of the program `v` makes and the ISA's limits.
    pub fn check_for(&self, v: &Variant) -> Result<(), String> {
        self.check_in(v, &Geometry::NC_128)
    }
    /// Checks the shape fits the SBUF layout of the program `v` makes on a core of geometry
    /// `g` ([`Geometry::layout`]) and the ISA's limits.
    pub fn check_in(&self, v: &Variant, g: &Geometry) -> Result<(), String> {
        let f = v.format;
        let kblk = g.partitions * f.rows_per_partition();
        let l = g.layout();
        let (slab, xb, kb) = (u64::from(self.slab_bpp_at(f, g)), u64::from(self.x_bpp_in(f)), self.kb_at(f, g));
        let yb = u64::from(if v.w_moving { 2 * g.columns } else { self.tok_bpp() });
        let mut ok = (1..=g.max_tokens()).contains(&self.tokens)
            && self.d_model.is_multiple_of(kblk)
            && self.d_model > 0
            && self.chunks_per_slab > 0
            && (1..=g.max_group()).contains(&self.chunks_per_group)
            && self.chunks_per_group.is_multiple_of(self.chunks_per_slab)
            && self.slab_buffers >= 2 * self.chunks_per_group / self.chunks_per_slab
            && self.d_ff_per_core.is_multiple_of(g.columns * self.chunks_per_group)
            && self.d_ff_per_core > 0
            && u64::from(kb) * xb <= u64::from(l.size(l.x))
            && u64::from(self.slab_buffers) * slab <= u64::from(l.size(l.w))
            && 2 * yb <= u64::from(l.size(l.y))
            && slab / u64::from(f.bytes()) <= 65535
            && v.dma_piece.is_multiple_of(4)
            && (!v.w_moving || (self.tokens <= g.columns && u64::from(kb) * xb / u64::from(f.bytes()) <= 65535));
        if f.is_mx() || v.w_mxfp4 {
            // Scales: X's per K-block on a 32nd of K's rows' partitions, W's in a ring like W's.
            ok &= u64::from(kb) * u64::from(self.tokens) <= u64::from(l.size(l.xs))
                && u64::from(self.slab_buffers) * u64::from(w_scale_bpp(self, f, g)) <= u64::from(l.size(l.ws));
        }
        if v.w_native_mxfp4 {
            ok &= f == Format::Mxfp8 && !v.w_mxfp4;
        }
        if v.x_quantize {
            // X's BF16 staging (twice X's bytes) follows X in its region.
            ok &= f == Format::Mxfp8 && !v.x_resident && 3 * u64::from(self.kb_at(f, g)) * xb <= u64::from(l.size(l.x));
        }
        if v.w_mxfp4 {
            ok &= STAGE_BUFS * packed_bpp(self, f, g) <= l.size(l.stage)
                && STAGE_BUFS * stage_scale_bpp(self, f, g) <= l.size(l.stage_scales);
        }
        if ok {
            Ok(())
        } else {
            Err(format!(
                "gemm shape {self:?} in {}{} does not fit the program's SBUF layout or the ISA limits",
                f.asm(),
                if v.w_mxfp4 { " (weights mxfp4)" } else { "" }
            ))
        }
    }
}

/// Partitions of the MX scales of a K-block ([`scale_parts`]).
fn scale_parts(g: &Geometry) -> u32 {
    // One scale per 32 K-rows: a K-block of `partitions` x 4 rows has `partitions / 8`.
    (g.partitions * Format::Mxfp8.rows_per_partition() / MX_BLOCK).max(1)
}

/// Bytes per partition (on the [`scale_parts`] first partitions) of one slab's MX scales in
/// the matmul's layout: one per 32 K-rows per column.
fn w_scale_bpp(s: &Shape, f: Format, g: &Geometry) -> u32 {
    s.chunks_per_slab * s.kb_at(f, g) * g.columns * g.partitions * f.rows_per_partition() / MX_BLOCK / scale_parts(g)
}

/// Bytes per partition of one slab packed in MXFP4 (two elements a byte).
fn packed_bpp(s: &Shape, f: Format, g: &Geometry) -> u32 {
    s.chunks_per_slab * s.kb_at(f, g) * g.columns * f.rows_per_partition() / 2
}

/// Bytes per partition of one MXFP4 slab's scales as the dequantization reads them: MXFP8's
/// layout ([`scale_parts`]) when the matmul is MXFP8, else one per 32 elements of a partition.
fn stage_scale_bpp(s: &Shape, f: Format, g: &Geometry) -> u32 {
    if f.is_mx() {
        w_scale_bpp(s, f, g)
    } else {
        (s.chunks_per_slab * s.kb_at(f, g) * g.columns).div_ceil(MX_BLOCK)
    }
}

/// Core `core`'s BF16 program (its HBM addresses in its half of the stack).
pub fn program(s: &Shape, core: u32) -> String {
    program_with(s, core, &Variant::default())
}

/// How [`program_with`] departs from the plain BF16 layer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variant {
    /// Activation applied from PSUM ("gelu", "identity", ..).
    pub act_fn: &'static str,
    /// Collective completions (on [`CC_DONE_SEM`]) the core waits for before it halts (0: none).
    pub collectives: u32,
    /// Collective completions the core waits for before it loads `X` (the weights are fetched
    /// before; 0: none): `X` arrives by a collective (an MoE dispatch).
    pub x_after: u32,
    /// `X` is already in SBUF (an earlier program loaded it): not loaded.
    pub x_resident: bool,
    /// All of `W` is already in SBUF, one slab per buffer (`slab_buffers >= slabs`): not
    /// loaded.
    pub w_resident: bool,
    /// The matmul's operand format (X and W; Y is BF16).
    pub format: Format,
    /// W is stored in MXFP4 and dequantized by the vector engine into `format`.
    pub w_mxfp4: bool,
    /// X is stored in BF16 and quantized to MXFP8 on the chip (`format` must be mxfp8): it lands
    /// in a BF16 staging area after X's and the vector engine's `quantize_mx` (the block scales
    /// and the scaled cast, one instruction per K-block) writes X and its scales for the
    /// matmul, as NKI's MX kernels quantize their activations.
    pub x_quantize: bool,
    /// W is stored in MXFP4 and the tensor engine takes it as it is (a core whose
    /// `tensor.formats.mxfp4` has MXFP8's MACs per PE): its DMAs move 4 bits a weight into
    /// W's ring, and the matmuls run as MXFP8's (`format` must be mxfp8).
    pub w_native_mxfp4: bool,
    /// Most bytes per partition of one weight DMA (0: a slab is one DMA). A larger slab is
    /// stored in HBM as pieces of this many bytes per partition, each a contiguous block of
    /// 128 padded rows, and loaded piece by piece: the rows the cores of a stack stream at
    /// once then stay within its open rows (`trnsim_workloads::costs::dma_bytes_per_partition`).
    pub dma_piece: u32,
    /// The decode form (`tokens` <= 128): `Xᵀ`'s K-block is the stationary matrix (`tokens`
    /// columns) and W's 128-column blocks stream through the array as the moving operand, as
    /// NKI's token-generation MLP kernels do; `Y` lands un-transposed on `tokens` partitions.
    /// A LoadStationary of `tokens` columns per matmul instead of 128: the array streams the
    /// weights at a column a cycle rather than waiting on each weight block's load.
    pub w_moving: bool,
}

impl Default for Variant {
    fn default() -> Self {
        Variant {
            act_fn: "gelu",
            collectives: 0,
            x_after: 0,
            x_resident: false,
            w_resident: false,
            format: Format::Bf16,
            w_mxfp4: false,
            x_quantize: false,
            w_native_mxfp4: false,
            dma_piece: 0,
            w_moving: false,
        }
    }
}

/// Semaphore whose increments (the stores of `Yᵀ`, 16 per chunk) ring the chip's collective
/// engine when the core is hooked to one ([`program_with`]).
pub const DOORBELL_SEM: u8 = 4;
/// Semaphore the collective engine increments once per completed collective.
pub const CC_DONE_SEM: u8 = 5;
/// Semaphore the vector engine increments once per dequantized MXFP4 slab.
const DEQUANT_SEM: u8 = 6;
/// Semaphore the vector engine increments once per K-block of X quantized to MXFP8.
const QUANT_SEM: u8 = 7;

/// Per-core layout figures of one program.
struct Layout {
    g: Geometry,
    sb: SbufLayout,
    /// Output buffers of Y.
    y_bufs: u32,
    f: Format,
    dt: &'static str,
    kb: u32,
    /// Bytes per partition: a slab, a K-block of X, a chunk of Y.
    slab: u32,
    xb: u32,
    yb: u32,
    /// One stationary block (128 columns x the K-block) per partition.
    wblk: u32,
    /// Semaphore increments per landed slab and per landed X block.
    per_slab: u32,
    per_x: u32,
    ws: u32,
    /// Partitions of a stored chunk of Y (128 for `Yᵀ`; `tokens` in the decode form) and the
    /// semaphore increments its store gives (one per DMA engine it touches).
    y_parts: u32,
    per_y: u32,
}

impl Layout {
    fn of(s: &Shape, v: &Variant, g: &Geometry) -> Layout {
        let f = v.format;
        let (sb, p, c) = (g.layout(), g.partitions, g.columns);
        let scales = if f.is_mx() || v.w_mxfp4 { g.engines(scale_parts(g)) } else { 0 };
        let yb = if v.w_moving { 2 * c } else { s.tok_bpp() };
        Layout {
            g: *g,
            sb,
            y_bufs: (sb.size(sb.y) / yb.max(1)).min(Y_BUFS),
            f,
            dt: f.asm(),
            kb: s.kb_at(f, g),
            slab: s.slab_bpp_at(f, g),
            xb: s.x_bpp_in(f),
            yb,
            wblk: c * f.rows_per_partition() * f.bytes(),
            per_slab: g.engines(p) * pieces(dma_bytes(s, v, f, g), v.dma_piece) + scales,
            per_x: g.engines(p) + if f.is_mx() && !v.x_quantize { g.engines(scale_parts(g)) } else { 0 },
            ws: w_scale_bpp(s, f, g),
            y_parts: if v.w_moving { s.tokens } else { c },
            per_y: g.engines(if v.w_moving { s.tokens } else { c }),
        }
    }
}

/// [`program`] with the changes of `v`: its format and activation, a last wait for
/// `v.collectives` completions on [`CC_DONE_SEM`] (the chip's collective engine reduces or
/// sends the stored chunks; the core's work ends when they are), `X` loaded only after
/// `v.x_after` completions, and MXFP4 weights dequantized by the vector engine. The text of a
/// BF16 program is e2e-llm-layer's, byte for byte.
pub fn program_with(s: &Shape, core: u32, v: &Variant) -> String {
    program_in(s, core, v, &Geometry::NC_128)
}

/// [`program_with`] on a core of geometry `g`: K-blocks of `g.partitions` rows, chunks of
/// `g.columns`, the SBUF regions of [`Geometry::layout`], PSUM's halves of `g.psum_banks`,
/// semaphore counts of `g.dma_ppe` partitions per DMA engine. On [`Geometry::NC_128`] it is
/// [`program_with`]'s text.
pub fn program_in(s: &Shape, core: u32, v: &Variant, g: &Geometry) -> String {
    let (act_fn, collectives) = (v.act_fn, v.collectives);
    let base = u64::from(core % 2) * CORE_HBM;
    let l = Layout::of(s, v, g);
    let (kb, chunks, cps, cpg) = (l.kb, s.chunks_at(g), s.chunks_per_slab, s.chunks_per_group);
    let (slab, tok, sb, p) = (l.slab, l.yb, l.sb, g.partitions);
    let tok_stride = u64::from(tok + PAD);
    let x_stride = u64::from(l.xb + PAD);
    let w_buf = |sl: u32| sb.w + (sl % s.slab_buffers) * slab;
    let ws_buf = |sl: u32| sb.ws + (sl % s.slab_buffers) * l.ws;
    let y_buf = |c: u32| sb.y + (c % l.y_bufs) * tok;
    let half = g.psum_half();
    let bank = |c: u32| (c / cpg % 2) * half + c % cpg;
    let sp = scale_parts(g);
    let mut sync = String::from(".engine sync\n");
    let mut te = String::from(".engine tensor\n");
    let mut act = String::from(".engine scalar\n");
    let mut pool = String::from(".engine gpsimd\n");
    // Slab 0 first, then X block by block (the first chunk's matmuls consume X as it lands),
    // then the other slabs; a slab waits for the group that used its buffer to be multiplied.
    // What is resident in SBUF already is not loaded (nor waited for).
    let loads_w = !v.w_resident;
    if loads_w {
        load_slab(&mut sync, s, v, &l, base, 0);
    }
    if v.x_after > 0 {
        let _ = writeln!(sync, "    sem_wait s{CC_DONE_SEM} >= {}", v.x_after);
    }
    // The decode form loads all of X (a few KiB) in one DMA (and its scales in one more), so
    // the weights do not queue behind a DMA per K-block.
    let x_dmas = if v.w_moving { 1 } else { kb };
    let x_len = l.xb * (kb / x_dmas);
    let x_stride = if v.w_moving { u64::from(x_len + PAD) } else { x_stride };
    // X quantized on the chip lands in BF16 in its staging area, twice MXFP8's bytes.
    let (x_sbuf, x_dt, x_stride) = if v.x_quantize {
        (x_stage(s, &l), "bf16", if v.w_moving { u64::from(2 * x_len + PAD) } else { u64::from(2 * l.xb + PAD) })
    } else {
        (sb.x, l.dt, x_stride)
    };
    let x_scale = if v.x_quantize { 2 } else { 1 };
    for k in (0..x_dmas).filter(|_| !v.x_resident) {
        let hbm = base + X_HBM + u64::from(k) * u64::from(p) * x_stride;
        let _ = writeln!(
            sync,
            "    dma_start q0 hbm {hbm:#x} stride {x_stride} -> sbuf[0:{p}] +{:#x} [{}:1] {x_dt}, sem=s1",
            x_sbuf + k * l.xb * x_scale,
            x_len / l.f.bytes(),
        );
        if l.f.is_mx() && !v.x_quantize {
            let xs_len = s.tokens * (kb / x_dmas);
            let hbm = base + XS_HBM + u64::from(k) * u64::from(sp) * u64::from(xs_len + PAD);
            let _ = writeln!(
                sync,
                "    dma_start q0 hbm {hbm:#x} stride {} -> sbuf[0:{sp}] +{:#x} [{}:1] fp8e4m3, sem=s1",
                xs_len + PAD,
                sb.xs + k * s.tokens,
                xs_len
            );
        }
    }
    for sl in (1..s.slabs_at(g)).filter(|_| loads_w) {
        if v.w_mxfp4 {
            // The staging buffer this slab lands in was dequantized.
            if sl >= STAGE_BUFS {
                let _ = writeln!(sync, "    sem_wait s{DEQUANT_SEM} >= {}", sl - STAGE_BUFS + 1);
            }
        } else if sl >= s.slab_buffers {
            let _ = writeln!(sync, "    sem_wait s2 >= {}", (sl - s.slab_buffers + 1) * cps);
        }
        load_slab(&mut sync, s, v, &l, base, sl);
    }
    let dequant = v.w_mxfp4 && loads_w;
    let vector = dequant || v.x_quantize;
    let vec = if vector {
        let mut out = String::from(".engine vector\n");
        if v.x_quantize {
            quantize_x(&mut out, s, &l, x_dmas);
        }
        if dequant {
            dequant_stream(&mut out, s, v, &l);
        }
        out.push_str("    halt\n");
        out
    } else {
        String::new()
    };
    let mut signalled = 0;
    for c in 0..chunks {
        let (g, sl, j) = (c / cpg, c / cps, c % cps);
        if j == 0 && loads_w {
            let _ = if dequant {
                writeln!(te, "    sem_wait s{DEQUANT_SEM} >= {}", sl + 1)
            } else {
                writeln!(te, "    sem_wait s0 >= {}", l.per_slab * (sl + 1))
            };
        }
        if c % cpg == 0 && g >= 2 {
            let _ = writeln!(te, "    sem_wait s3 >= {}", (g - 1) * cpg); // group g - 2's banks drained by the activation
        }
        for k in 0..kb {
            if c == 0 && v.x_quantize {
                let _ = writeln!(te, "    sem_wait s{QUANT_SEM} >= {}", k + 1);
            } else if c == 0 && !v.x_resident && k < x_dmas {
                let _ = writeln!(te, "    sem_wait s1 >= {}", l.per_x * (k + 1));
            }
            let w = w_buf(sl) + (j * kb + k) * l.wblk;
            let acc = if k == 0 { "overwrite" } else { "accumulate" };
            let (wsc, xsc) = if l.f.is_mx() {
                (
                    format!(
                        ", scales=sbuf[0:{sp}] +{:#x} [{}:1] fp8e4m3",
                        ws_buf(sl) + (j * kb + k) * l.g.columns,
                        l.g.columns
                    ),
                    format!(", scales=sbuf[0:{sp}] +{:#x} [{}:1] fp8e4m3", sb.xs + k * s.tokens, s.tokens),
                )
            } else {
                (String::new(), String::new())
            };
            let w_ap = format!("sbuf[0:{p}] +{w:#x} [{}:1] {}", l.wblk / l.f.bytes(), l.dt);
            let x_ap = format!("sbuf[0:{p}] +{:#x} [{}:1] {}", sb.x + k * l.xb, l.xb / l.f.bytes(), l.dt);
            let (stat, stat_sc, mov, mov_sc) = if v.w_moving { (x_ap, xsc, w_ap, wsc) } else { (w_ap, wsc, x_ap, xsc) };
            let _ = writeln!(te, "    ldweights {stat}{stat_sc}");
            let _ = writeln!(
                te,
                "    matmul {mov} -> psum[0:{}] bank{} +0 [{}:1] fp32, {acc}{mov_sc}",
                l.y_parts,
                bank(c),
                l.yb / 2
            );
        }
        if s.signals_after(c, chunks) {
            let _ = writeln!(te, "    sem_inc s2, {}", c + 1 - signalled);
            signalled = c + 1;
        }
    }
    for c in 0..chunks {
        let _ = writeln!(act, "    sem_wait s2 >= {}", c + 1);
        if c >= l.y_bufs {
            let _ = writeln!(act, "    sem_wait s4 >= {}", l.per_y * (c - l.y_bufs + 1));
            // output buffer stored
        }
        let (yp, ye) = (l.y_parts, l.yb / 2);
        let _ = writeln!(
            act,
            "    activation {act_fn} psum[0:{yp}] bank{} +0 [{ye}:1] fp32 -> sbuf[0:{yp}] +{:#x} [{ye}:1] bf16, scale=1.0, bias=0.0",
            bank(c),
            y_buf(c),
        );
        let _ = writeln!(act, "    sem_inc s3, 1");
        let _ = writeln!(pool, "    sem_wait s3 >= {}", c + 1);
        let hbm = base + Y_HBM + u64::from(c) * u64::from(l.y_parts) * tok_stride;
        let _ = writeln!(
            pool,
            "    dma_start q1 sbuf[0:{}] +{:#x} [{}:1] bf16 -> hbm {hbm:#x} stride {tok_stride}, sem=s4",
            l.y_parts,
            y_buf(c),
            l.yb / 2
        );
    }
    let _ = writeln!(pool, "    sem_wait s4 >= {}", l.per_y * chunks);
    if collectives > 0 {
        let _ = writeln!(pool, "    sem_wait s{CC_DONE_SEM} >= {collectives}");
    }
    for st in [&mut sync, &mut te, &mut act, &mut pool] {
        st.push_str("    halt\n");
    }
    if vector {
        format!("{sync}\n{te}\n{act}\n{pool}\n{vec}")
    } else {
        format!("{sync}\n{te}\n{act}\n{pool}")
    }
}

/// Bytes per partition one weight slab's DMAs move.
fn dma_bytes(s: &Shape, v: &Variant, f: Format, g: &Geometry) -> u32 {
    if v.w_mxfp4 || v.w_native_mxfp4 {
        packed_bpp(s, f, g)
    } else {
        s.slab_bpp_at(f, g)
    }
}

/// DMAs of at most `piece` bytes per partition (0: any) that move `bytes`.
fn pieces(bytes: u32, piece: u32) -> u32 {
    if piece == 0 {
        1
    } else {
        bytes.div_ceil(piece).max(1)
    }
}

/// The DMAs of weight slab `sl` (and its scales): into W's ring, or packed MXFP4 into the
/// staging ring; in pieces of at most `v.dma_piece` bytes per partition.
fn load_slab(sync: &mut String, s: &Shape, v: &Variant, l: &Layout, base: u64, sl: u32) {
    let (g, sb) = (&l.g, &l.sb);
    let p = g.partitions;
    let bytes = dma_bytes(s, v, l.f, g);
    let (sbuf, dt, elem) = if v.w_mxfp4 {
        (sb.stage + (sl % STAGE_BUFS) * bytes, "fp8e4m3", 1)
    } else if v.w_native_mxfp4 {
        (sb.w + (sl % s.slab_buffers) * l.slab, "fp8e4m3", 1)
    } else {
        (sb.w + (sl % s.slab_buffers) * l.slab, l.dt, l.f.bytes())
    };
    let n = pieces(bytes, v.dma_piece);
    let piece = if n == 1 { bytes } else { v.dma_piece };
    let stride = u64::from(piece + PAD);
    for q in 0..n {
        let (off, len) = (q * piece, piece.min(bytes - q * piece));
        let j = u64::from(sl * n + q);
        // The decode form in pieces: the two cores of a stack take turns through one region,
        // piece by piece, so their streams share open rows rather than close each other's (a
        // weight matrix sharded over them is laid out so). Otherwise each core keeps its own
        // half (the benchmarks' layout, which the workload path reproduces to the cycle).
        let hbm = if v.dma_piece > 0 && v.w_moving {
            W_HBM + (2 * j + base / CORE_HBM) * u64::from(p) * stride
        } else {
            base + W_HBM + j * u64::from(p) * stride
        };
        let _ = writeln!(
            sync,
            "    dma_start q0 hbm {hbm:#x} stride {stride} -> sbuf[0:{p}] +{:#x} [{}:1] {dt}, sem=s0",
            sbuf + off,
            len / elem
        );
    }
    if l.f.is_mx() || v.w_mxfp4 {
        let (parts, bpp, sbuf) = if v.w_mxfp4 {
            let b = stage_scale_bpp(s, l.f, g);
            (if l.f.is_mx() { scale_parts(g) } else { p }, b, sb.stage_scales + (sl % STAGE_BUFS) * b)
        } else {
            (scale_parts(g), l.ws, sb.ws + (sl % s.slab_buffers) * l.ws)
        };
        let stride = u64::from(bpp + PAD);
        let hbm = base + WS_HBM + u64::from(sl) * u64::from(parts) * stride;
        let _ = writeln!(
            sync,
            "    dma_start q0 hbm {hbm:#x} stride {stride} -> sbuf[0:{parts}] +{sbuf:#x} [{bpp}:1] fp8e4m3, sem=s0"
        );
    }
}

/// Where X's BF16 staging starts (right after X's MXFP8 K-blocks).
fn x_stage(s: &Shape, l: &Layout) -> u32 {
    l.sb.x + s.kb_at(l.f, &l.g) * l.xb
}

/// The vector engine's quantization of X (landed in BF16 by `x_dmas` DMAs) into MXFP8, one
/// `quantize_mx` per K-block, each signalled on [`QUANT_SEM`] for the tensor engine.
fn quantize_x(out: &mut String, s: &Shape, l: &Layout, x_dmas: u32) {
    let (p, sp) = (l.g.partitions, scale_parts(&l.g));
    let per_dma = l.kb / x_dmas;
    let n = l.xb; // elements per partition of one K-block (4 K-rows per token)
    for k in 0..l.kb {
        if k % per_dma == 0 {
            let _ = writeln!(out, "    sem_wait s1 >= {}", l.per_x * (k / per_dma + 1));
        }
        let _ = writeln!(
            out,
            "    quantize_mx sbuf[0:{p}] +{:#x} [{n}:1] bf16 -> sbuf[0:{p}] +{:#x} [{n}:1] mxfp8, scales=sbuf[0:{sp}] +{:#x} [{}:1] fp8e4m3",
            x_stage(s, l) + k * 2 * l.xb,
            l.sb.x + k * l.xb,
            l.sb.xs + k * s.tokens,
            s.tokens
        );
        let _ = writeln!(out, "    sem_inc s{QUANT_SEM}, 1");
    }
}

/// The vector engine's stream that dequantizes each MXFP4 slab from the staging ring into W's
/// ring (and its scales into W's scale ring, for an MXFP8 matmul).
fn dequant_stream(out: &mut String, s: &Shape, v: &Variant, l: &Layout) {
    let elems = l.slab / l.f.bytes();
    let (g, sb) = (&l.g, &l.sb);
    let (p, sp) = (g.partitions, scale_parts(g));
    let packed = packed_bpp(s, l.f, g);
    let ssz = stage_scale_bpp(s, l.f, g);
    for sl in 0..s.slabs_at(g) {
        let _ = writeln!(out, "    sem_wait s0 >= {}", l.per_slab * (sl + 1));
        if sl >= s.slab_buffers {
            let _ = writeln!(out, "    sem_wait s2 >= {}", (sl - s.slab_buffers + 1) * s.chunks_per_slab);
        }
        let (stage, w) = (sb.stage + (sl % STAGE_BUFS) * packed, sb.w + (sl % s.slab_buffers) * l.slab);
        let scales = sb.stage_scales + (sl % STAGE_BUFS) * ssz;
        // Each packed byte read twice: its two nibbles.
        let _ = writeln!(
            out,
            "    tensor_copy sbuf[0:{p}] +{stage:#x} [{}:1, 2:0] fp8e4m3 -> sbuf[0:{p}] +{w:#x} [{elems}:1] {}",
            elems / 2,
            l.dt
        );
        if l.f.is_mx() {
            let ws = sb.ws + (sl % s.slab_buffers) * l.ws;
            let _ = writeln!(
                out,
                "    tensor_copy sbuf[0:{sp}] +{scales:#x} [{ssz}:1] fp8e4m3 -> sbuf[0:{sp}] +{ws:#x} [{ssz}:1] fp8e4m3"
            );
        } else {
            let _ = writeln!(
                out,
                "    tensor_tensor mul sbuf[0:{p}] +{w:#x} [{elems}:1] {dt}, sbuf[0:{p}] +{scales:#x} [{}:1, {MX_BLOCK}:0] fp8e4m3 -> sbuf[0:{p}] +{w:#x} [{elems}:1] {dt}",
                elems / MX_BLOCK,
                dt = l.dt
            );
        }
        let _ = writeln!(out, "    sem_inc s{DEQUANT_SEM}, 1");
    }
    let _ = v;
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_core::isa::asm::{assemble, render_errors};

    fn assembles(src: &str) {
        assemble("gemm", src, &Default::default()).map_err(|e| render_errors(&e)).unwrap();
    }

    #[test]
    fn every_format_and_mxfp4_weights_assemble() {
        let s = Shape { tokens: 8, d_model: 1024, d_ff_per_core: 1024, ..SHAPE };
        for (f, w_mxfp4, w_moving) in
            Format::ALL.iter().flat_map(|&f| [(f, false, false), (f, true, false), (f, false, true), (f, true, true)])
        {
            let v = Variant { format: f, w_mxfp4, w_moving, dma_piece: 2048, ..Variant::default() };
            s.check_for(&v).unwrap();
            let src = program_with(&s, 1, &v);
            assembles(&src);
            let x = format!("sbuf[0:128] +0x0 [{}:1] {}", 8 * f.rows_per_partition(), f.asm());
            if w_moving {
                assert!(src.contains(&format!("ldweights {x}")), "X stationary");
                assert!(src.contains("-> psum[0:8] bank0 +0 [128:1] fp32"), "Y on the tokens' partitions");
                assert_eq!(src.matches("sem=s1").count(), if f.is_mx() { 2 } else { 1 }, "X in one DMA");
            } else {
                assert!(src.contains(&format!("matmul {x}")), "X moving");
            }
            assert_eq!(src.contains(".engine vector"), w_mxfp4);
            assert_eq!(src.contains("scales="), f.is_mx());
        }
    }

    #[test]
    fn bf16_activations_are_quantized_to_mxfp8_per_k_block_before_the_tensor_engine_takes_them() {
        let s = Shape { tokens: 8, d_model: 2048, d_ff_per_core: 1024, ..SHAPE };
        for (w_moving, w_native_mxfp4, w_mxfp4) in [(true, true, false), (false, true, false), (true, false, true)] {
            let v = Variant {
                format: Format::Mxfp8,
                x_quantize: true,
                w_moving,
                w_native_mxfp4,
                w_mxfp4,
                dma_piece: 2048,
                ..Variant::default()
            };
            s.check_for(&v).unwrap();
            let src = program_with(&s, 0, &v);
            assembles(&src);
            assert_eq!(src.matches("quantize_mx").count(), 4, "one per K-block of 512");
            assert_eq!(src.matches("sem_inc s7").count(), 4);
            assert!(!src.contains("fp8e4m3, sem=s1"), "no scales of X are loaded: they are computed");
            assert!(src.contains("bf16, sem=s1"), "X lands in BF16");
            assert_eq!(src.contains("sem_wait s6"), w_mxfp4, "the tensor engine waits for dequantized slabs only then");
        }
        let resident = Variant { format: Format::Mxfp8, x_quantize: true, x_resident: true, ..Variant::default() };
        assert!(s.check_for(&resident).is_err(), "X resident is already quantized");
        let bf = Variant { x_quantize: true, ..Variant::default() };
        assert!(s.check_for(&bf).is_err(), "quantized X multiplies in MXFP8");
    }

    #[test]
    fn mxfp8_halves_the_k_blocks_bytes_and_quarters_the_matmuls() {
        let s = SHAPE;
        let mx = Variant { format: Format::Mxfp8, ..Variant::default() };
        assert_eq!(s.kb_in(Format::Mxfp8) * 4, s.kb());
        assert_eq!(s.slab_bpp_in(Format::Mxfp8) * 2, s.slab_bpp());
        let (bf, m) = (program(&s, 0), program_with(&s, 0, &mx));
        assert_eq!(bf.matches("matmul").count(), 4 * m.matches("matmul").count());
    }

    #[test]
    fn bad_shapes_are_refused() {
        let v = Variant { format: Format::Mxfp8, ..Variant::default() };
        assert!(Shape { d_model: 128, ..SHAPE }.check_for(&v).is_err(), "mxfp8 needs K-blocks of 512");
        assert!(Shape { tokens: 0, ..SHAPE }.check().is_err());
        assert!(Shape { tokens: 513, ..SHAPE }.check().is_err());
    }
}
