//! `e2e-llm-layer`: an LLM-layer-like run on one whole chip (models/configs/system/trn3-chip.ron):
//! the up-projection and GELU of a feed-forward block, column-parallel over the 8 cores.
//!
//! Core `i` computes `Y_i = gelu(X · W_i)` for `tokens` tokens, `X` [tokens x d_model] and its
//! own weight shard `W_i` [d_model x d_ff_per_core], in BF16 with FP32 accumulation. The weights
//! are streamed from the core's HBM stack by DMA, a slab of `chunks_per_slab` 128-column chunks
//! at a time, into a ring of `slab_buffers` SBUF buffers; `X` is loaded once, block by block;
//! each chunk of `W_i` is LoadStationary'd per 128-row block of `d_model` and multiplied by that
//! block of `Xᵀ` (N = `tokens`), accumulating over `d_model` in one PSUM bank (two halves of 4
//! banks, one per group of chunks, double-buffered); the scalar engine applies GELU from PSUM
//! into one of 8 SBUF output buffers, and the GpSimd engine's DMA writes each chunk of `Yᵀ` back
//! to HBM. HBM tensors are stored pre-tiled (row `p` of a DMA = SBUF partition `p`), each row
//! padded by 512 B (`PAD`); the two cores on one stack use disjoint 4 GiB halves of its space.
//!
//! Per core, semaphores: s0 weight slabs landed (16 per slab), s1 `X` blocks landed (16 per
//! block), s2 chunks multiplied (signalled once per group of chunks, and per chunk in the last
//! group; their slabs consumed, their PSUM banks full), s3 chunks activated, s4 chunks stored
//! (16 per chunk). Queues: loads on q0 (QoS class 0), stores on q1 (class 1).

use crate::chip::{self, Chip, ChipIds};
use crate::cpu::Stopwatch;
use crate::neuroncore::assemble_text;
use crate::result::{BenchResult, Speed};
use std::fmt::Write as _;
use trnsim_core::engine::EngineUnit;
use trnsim_core::isa::Engine;
use trnsim_kernel::{Dur, SimBuilder, SimOptions, Simulation, TickOrder, TraceOptions, TraceSink};

/// The layer's shape, per core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Tokens (the moving free size N of every matmul; <= 512, one PSUM bank of FP32).
    pub tokens: u32,
    /// Model width: the contraction, a multiple of 128.
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

const X_SBUF: u32 = 0x0;
const W_SBUF: u32 = 0x10000;
const Y_SBUF: u32 = 0x20000;
const Y_BUFS: u32 = 8;
/// Padding after each HBM row: a DMA engine's packet covers 512 B of each of its 8 partitions,
/// and rows a power of two apart would put all 8 on one pseudo-channel and bank group (default
/// address map: 32 B bursts over 16 channels, then 2 PCs, then 4 bank groups); 512 B more per
/// row spreads them over every (PC, bank group).
const PAD: u32 = 512;
const W_HBM: u64 = 0;
const X_HBM: u64 = 0x1000_0000;
const Y_HBM: u64 = 0x2000_0000;
/// The two cores on a stack use address halves this far apart.
const CORE_HBM: u64 = 0x1_0000_0000;

impl Shape {
    fn kb(&self) -> u32 {
        self.d_model / 128
    }
    /// 128-column chunks of `W` (and of `Yᵀ`) per core.
    pub fn chunks(&self) -> u32 {
        self.d_ff_per_core / 128
    }
    /// Weight slabs per core.
    pub fn slabs(&self) -> u32 {
        self.chunks() / self.chunks_per_slab
    }
    /// Bytes per partition of one weight slab.
    fn slab_bpp(&self) -> u32 {
        self.chunks_per_slab * self.kb() * 128 * 2
    }
    /// Bytes per partition of one 128-row block of Xᵀ, and of one output chunk of Yᵀ.
    fn tok_bpp(&self) -> u32 {
        self.tokens * 2
    }
    /// Matmuls per core.
    pub fn matmuls(&self) -> u64 {
        u64::from(self.chunks() * self.kb())
    }
    /// Flops per core.
    pub fn flops(&self) -> u64 {
        2 * u64::from(self.tokens) * u64::from(self.d_model) * u64::from(self.d_ff_per_core)
    }
    /// HBM bytes per core: W and X read once, Y written once.
    pub fn hbm_bytes(&self) -> u64 {
        let (t, d, f) = (u64::from(self.tokens), u64::from(self.d_model), u64::from(self.d_ff_per_core));
        2 * (d * f + t * d + t * f)
    }
    /// True if the tensor engine signals after chunk `c`: at the end of each group, and after
    /// every chunk of the last group (so GELU and the stores overlap the last matmuls).
    fn signals_after(&self, c: u32) -> bool {
        c % self.chunks_per_group == self.chunks_per_group - 1 || c + self.chunks_per_group >= self.chunks()
    }
    /// Tensor-engine signals per core.
    pub fn signals(&self) -> u32 {
        (0..self.chunks()).filter(|&c| self.signals_after(c)).count() as u32
    }
    /// Checks the shape fits the program's SBUF layout and the ISA's limits.
    pub fn check(&self) -> Result<(), String> {
        let ok = (1..=512).contains(&self.tokens)
            && self.tokens.is_multiple_of(64)
            && self.d_model.is_multiple_of(128)
            && self.d_model > 0
            && self.chunks_per_slab > 0
            && (1..=4).contains(&self.chunks_per_group)
            && self.chunks_per_group.is_multiple_of(self.chunks_per_slab)
            && self.slab_buffers >= 2 * self.chunks_per_group / self.chunks_per_slab
            && self.d_ff_per_core.is_multiple_of(128 * self.chunks_per_group)
            && self.d_ff_per_core > 0
            && self.kb() * self.tok_bpp() <= W_SBUF
            && self.slab_buffers * self.slab_bpp() <= Y_SBUF - W_SBUF
            && self.slab_bpp() / 2 <= 65535;
        if ok {
            Ok(())
        } else {
            Err(format!("e2e shape {self:?} does not fit the program's SBUF layout or the ISA limits"))
        }
    }
}

/// Core `core`'s program (its HBM addresses in its half of the stack).
pub fn program(s: &Shape, core: u32) -> String {
    program_with(s, core, &Variant::default())
}

/// How [`program_with`] departs from the plain layer.
#[derive(Clone, Debug, PartialEq, Eq)]
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
}

impl Default for Variant {
    fn default() -> Self {
        Variant { act_fn: "gelu", collectives: 0, x_after: 0, x_resident: false, w_resident: false }
    }
}

/// Semaphore whose increments (the stores of `Yᵀ`, 16 per chunk) ring the chip's collective
/// engine when the core is hooked to one ([`program_with`]).
pub const DOORBELL_SEM: u8 = 4;
/// Semaphore the collective engine increments once per completed collective.
pub const CC_DONE_SEM: u8 = 5;

/// [`program`] with the changes of `v`: its activation, a last wait for `v.collectives`
/// completions on [`CC_DONE_SEM`] (the chip's collective engine reduces or sends the stored
/// chunks; the core's work ends when they are), and `X` loaded only after `v.x_after`
/// completions.
pub fn program_with(s: &Shape, core: u32, v: &Variant) -> String {
    let (act_fn, collectives) = (v.act_fn, v.collectives);
    let base = u64::from(core % 2) * CORE_HBM;
    let (kb, chunks, slabs, cps, cpg) = (s.kb(), s.chunks(), s.slabs(), s.chunks_per_slab, s.chunks_per_group);
    let (slab, tok) = (s.slab_bpp(), s.tok_bpp());
    let (slab_stride, tok_stride) = (u64::from(slab + PAD), u64::from(tok + PAD));
    let w_buf = |sl: u32| W_SBUF + (sl % s.slab_buffers) * slab;
    let y_buf = |c: u32| Y_SBUF + (c % Y_BUFS) * tok;
    let bank = |c: u32| (c / cpg % 2) * 4 + c % cpg;
    let mut sync = String::from(".engine sync\n");
    let mut te = String::from(".engine tensor\n");
    let mut act = String::from(".engine scalar\n");
    let mut pool = String::from(".engine gpsimd\n");
    let load_slab = |sync: &mut String, sl: u32| {
        let hbm = base + W_HBM + u64::from(sl) * 128 * slab_stride;
        let _ = writeln!(
            sync,
            "    dma_start q0 hbm {hbm:#x} stride {slab_stride} -> sbuf[0:128] +{:#x} [{}:1] bf16, sem=s0",
            w_buf(sl),
            slab / 2
        );
    };
    // Slab 0 first, then X block by block (the first chunk's matmuls consume X as it lands),
    // then the other slabs; a slab waits for the group that used its buffer to be multiplied.
    // What is resident in SBUF already is not loaded (nor waited for).
    if !v.w_resident {
        load_slab(&mut sync, 0);
    }
    if v.x_after > 0 {
        let _ = writeln!(sync, "    sem_wait s{CC_DONE_SEM} >= {}", v.x_after);
    }
    for k in (0..kb).filter(|_| !v.x_resident) {
        let hbm = base + X_HBM + u64::from(k) * 128 * tok_stride;
        let _ = writeln!(
            sync,
            "    dma_start q0 hbm {hbm:#x} stride {tok_stride} -> sbuf[0:128] +{:#x} [{}:1] bf16, sem=s1",
            X_SBUF + k * tok,
            s.tokens
        );
    }
    for sl in (1..slabs).filter(|_| !v.w_resident) {
        if sl >= s.slab_buffers {
            let _ = writeln!(sync, "    sem_wait s2 >= {}", (sl - s.slab_buffers + 1) * cps);
        }
        load_slab(&mut sync, sl);
    }
    let mut signalled = 0;
    for c in 0..chunks {
        let (g, sl, j) = (c / cpg, c / cps, c % cps);
        if j == 0 && !v.w_resident {
            let _ = writeln!(te, "    sem_wait s0 >= {}", 16 * (sl + 1));
        }
        if c % cpg == 0 && g >= 2 {
            let _ = writeln!(te, "    sem_wait s3 >= {}", (g - 1) * cpg); // group g - 2's banks drained by GELU
        }
        for k in 0..kb {
            if c == 0 && !v.x_resident {
                let _ = writeln!(te, "    sem_wait s1 >= {}", 16 * (k + 1));
            }
            let w = w_buf(sl) + (j * kb + k) * 256;
            let acc = if k == 0 { "overwrite" } else { "accumulate" };
            let _ = writeln!(te, "    ldweights sbuf[0:128] +{w:#x} [128:1] bf16");
            let _ = writeln!(
                te,
                "    matmul sbuf[0:128] +{:#x} [{}:1] bf16 -> psum[0:128] bank{} +0 [{}:1] fp32, {acc}",
                X_SBUF + k * tok,
                s.tokens,
                bank(c),
                s.tokens
            );
        }
        if s.signals_after(c) {
            let _ = writeln!(te, "    sem_inc s2, {}", c + 1 - signalled);
            signalled = c + 1;
        }
    }
    for c in 0..chunks {
        let _ = writeln!(act, "    sem_wait s2 >= {}", c + 1);
        if c >= Y_BUFS {
            let _ = writeln!(act, "    sem_wait s4 >= {}", 16 * (c - Y_BUFS + 1));
            // output buffer stored
        }
        let _ = writeln!(
            act,
            "    activation {act_fn} psum[0:128] bank{} +0 [{}:1] fp32 -> sbuf[0:128] +{:#x} [{}:1] bf16, scale=1.0, bias=0.0",
            bank(c),
            s.tokens,
            y_buf(c),
            s.tokens
        );
        let _ = writeln!(act, "    sem_inc s3, 1");
        let _ = writeln!(pool, "    sem_wait s3 >= {}", c + 1);
        let hbm = base + Y_HBM + u64::from(c) * 128 * tok_stride;
        let _ = writeln!(
            pool,
            "    dma_start q1 sbuf[0:128] +{:#x} [{}:1] bf16 -> hbm {hbm:#x} stride {tok_stride}, sem=s4",
            y_buf(c),
            s.tokens
        );
    }
    let _ = writeln!(pool, "    sem_wait s4 >= {}", 16 * chunks);
    if collectives > 0 {
        let _ = writeln!(pool, "    sem_wait s{CC_DONE_SEM} >= {collectives}");
    }
    for st in [&mut sync, &mut te, &mut act, &mut pool] {
        st.push_str("    halt\n");
    }
    format!("{sync}\n{te}\n{act}\n{pool}")
}

/// The analytic estimate of a run (docs/validation.md, "The chip end to end"), in ns.
#[derive(Clone, Copy, Debug)]
pub struct Estimate {
    /// Until the first chunk's last matmul has issued: paced by `X` landing block by block
    /// behind weight slab 0, or by the matmuls themselves, whichever is later.
    pub first_chunk_ns: f64,
    /// The other matmuls back to back.
    pub stream_ns: f64,
    /// Each signal but the last drains the array and reloads the weights before the next matmul.
    pub signals_ns: f64,
    /// After the last matmul issues: its drain, the last GELU, the last store.
    pub tail_ns: f64,
    /// The tensor engine's busy time (every matmul's interval).
    pub busy_ns: f64,
    /// A core's DMA bandwidth in GB/s: min(its engines' peak, its share of the stack, what its
    /// engines' outstanding bursts sustain at the loaded HBM latency).
    pub core_gbps: f64,
}

impl Estimate {
    /// The whole run.
    pub fn total_ns(&self) -> f64 {
        self.first_chunk_ns + self.stream_ns + self.signals_ns + self.tail_ns
    }
}

/// Loaded HBM round trip a DMA engine's outstanding bursts see (E): hbm-trn3's 58 ns mean read
/// latency at 92 % load plus the DMA block's and links' cycles.
pub const HBM_LOADED_LATENCY_NS: f64 = 75.0;

/// SBUF/PSUM static overhead per access in memory cycles (spec §3, ~60).
const ACCESS_OVERHEAD: f64 = 60.0;

/// The analytic estimate for `s` on `chip`.
pub fn estimate(s: &Shape, chip: &Chip) -> Estimate {
    let ns = |cycles: f64, e: Engine| cycles / chip.core.clock(e).as_hz() as f64 * 1e9;
    let n = f64::from(s.tokens);
    // Tensor engine (spec §5: interval max(64, N)); memory accesses at the 2.4 GHz memory clock
    // (the tensor clock): 60 + elements + access latency (SBUF 4, PSUM 2; docs/memory.md).
    let t_mm = ns(n.max(64.0), Engine::Tensor);
    let sbuf_read = |elems: f64| ns(ACCESS_OVERHEAD + elems + 4.0, Engine::Tensor);
    let psum_access = |elems: f64| ns(ACCESS_OVERHEAD + elems + 2.0, Engine::Tensor);
    let l_mm = sbuf_read(n) + psum_access(n); // reads back, then the PSUM write
    let t_ls = sbuf_read(128.0); // LoadStationary's read when nothing runs to hide it
    let l_act = psum_access(n) + ns(n.max(64.0), Engine::Scalar);
    // DMA.
    let d = &chip.dma;
    let engines = f64::from(d.engines);
    let core_gbps = (engines * d.peak_bytes_per_ns)
        .min(chip.hbm.stack_peak_bytes_per_s() / 1e9 / f64::from(chip.spec.hbm.cores_per_stack))
        .min(engines * f64::from(d.outstanding * d.access_bytes) / HBM_LOADED_LATENCY_NS);
    let start = d.start_latency.as_ps() as f64 / 1e3;
    let bytes = |bpp: u32| 128.0 * f64::from(bpp) / core_gbps;
    let (kb, slab, tok) = (f64::from(s.kb()), s.slab_bpp(), s.tok_bpp());
    let by_matmuls = start + bytes(slab) + bytes(tok) + t_ls + kb * t_mm;
    let by_x = start + bytes(slab) + kb * bytes(tok) + t_mm;
    let first_chunk_ns = by_matmuls.max(by_x);
    let stream_ns = (s.matmuls() as f64 - kb) * t_mm;
    let signals_ns = f64::from(s.signals() - 1) * (l_mm - t_mm + t_ls);
    let tail_ns = (l_mm - t_mm) + l_act + start + bytes(tok);
    Estimate { first_chunk_ns, stream_ns, signals_ns, tail_ns, busy_ns: s.matmuls() as f64 * t_mm, core_gbps }
}

/// Builds and runs the layer on `chip`; returns the simulation and the chip's ids.
pub fn run_layer(
    chip: &Chip,
    s: &Shape,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<(Simulation, ChipIds), String> {
    run_program(chip, s, "gelu", order, trace)
}

/// [`run_layer`] with activation `act_fn` (see [`program_with`]; no collective).
pub fn run_program(
    chip: &Chip,
    s: &Shape,
    act_fn: &'static str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<(Simulation, ChipIds), String> {
    run_variant(chip, s, &Variant { act_fn, ..Variant::default() }, order, trace)
}

/// The layer of shape `s` as [`program_with`] writes it with `v`, on every core of `chip`
/// (no collective).
pub fn run_variant(
    chip: &Chip,
    s: &Shape,
    v: &Variant,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<(Simulation, ChipIds), String> {
    s.check()?;
    if v.w_resident && s.slab_buffers < s.slabs() {
        return Err(format!("e2e shape {s:?}: a resident W needs a slab buffer per slab"));
    }
    let programs = (0..chip.spec.cores)
        .map(|i| assemble_text(&format!("e2e-llm-layer nc{i}.asm (generated)"), &program_with(s, i, v)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut b = SimBuilder::with_options(SimOptions { tick_order: order, ..SimOptions::default() });
    let ids = chip::build(&mut b, chip, &programs, trace.is_some())?;
    let sim =
        crate::progress::run_to_end_powered(b, std::slice::from_ref(&ids), trace, Dur::from_us(100_000), chip, None)?;
    Ok((sim, ids))
}

/// Headline figures: simulated time, TFLOPS (the tensor engines' matmul flops) against the chip's
/// peak, HBM bandwidth used, and
/// each core's tensor-engine utilization over the whole run; beside the analytic estimate.
pub fn headline(sim: &Simulation, ids: &ChipIds, chip: &Chip, s: &Shape) -> Result<Vec<(String, f64)>, String> {
    // Only the stacks' statistics are read: the rest are not gathered.
    let (stats, _) = sim.report_where(&|owner| owner.starts_with("hbm"));
    let end_ns = sim.now().as_ns_f64();
    let te_hz = chip.core.clock(Engine::Tensor).as_hz() as f64;
    let mut flops = 0u64;
    let mut util = Vec::new();
    for (i, core) in ids.cores.iter().enumerate() {
        for (e, id) in &core.engines {
            let u = sim.component::<EngineUnit>(*id).ok_or("engine")?;
            if *e == Engine::Tensor {
                flops += u.stats.flops;
                let busy_ns = u.stats.busy_cycles as f64 / te_hz * 1e9;
                util.push((format!("nc{i}_tensor_utilization_pct"), 100.0 * busy_ns / end_ns));
            }
        }
    }
    let hbm_bytes: u64 = (0..chip.spec.hbm.stacks).map(|k| stats.int(&format!("hbm{k}"), "bytes").unwrap_or(0)).sum();
    let tflops = flops as f64 / end_ns / 1e3;
    let est = estimate(s, chip);
    let est_ns = est.total_ns();
    let est_flops = s.flops() as f64 * f64::from(chip.spec.cores);
    let mut h = vec![
        ("sim_time_ns".to_string(), end_ns),
        ("tflops".into(), tflops),
        ("peak_tflops".into(), chip.peak_bf16_tflops()),
        ("efficiency_pct".into(), 100.0 * tflops / chip.peak_bf16_tflops()),
        ("hbm_bytes".into(), hbm_bytes as f64),
        ("hbm_GBps".into(), hbm_bytes as f64 / end_ns),
        ("hbm_peak_GBps".into(), chip.peak_hbm_gbps()),
        ("hbm_utilization_pct".into(), 100.0 * hbm_bytes as f64 / end_ns / chip.peak_hbm_gbps()),
    ];
    h.extend(util);
    h.extend([
        ("analytic_sim_time_ns".to_string(), est_ns),
        ("analytic_tflops".into(), est_flops / est_ns / 1e3),
        ("analytic_hbm_GBps".into(), s.hbm_bytes() as f64 * f64::from(chip.spec.cores) / est_ns),
        ("analytic_tensor_utilization_pct".into(), 100.0 * est.busy_ns / est_ns),
    ]);
    Ok(h)
}

/// Runs `e2e-llm-layer` on the built-in Trn3 chip.
pub fn run_named(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<BenchResult, String> {
    run_on(name, &chip::with_energy(chip::trn3()?, "trn3-chip")?, order, trace)
}

/// Runs `e2e-llm-layer` on `chip`.
pub fn run_on(
    name: &str,
    chip: &Chip,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<BenchResult, String> {
    let sw = Stopwatch::start();
    let (sim, ids) = run_layer(chip, &SHAPE, order, chip::whole_chip_trace(trace))?;
    let (wall_s, cpu_s) = sw.elapsed();
    let headline = headline(&sim, &ids, chip, &SHAPE)?;
    let speed = Speed::of(&sim, wall_s, cpu_s);
    Ok(BenchResult { name: name.into(), headline, stats: sim.report(), speed })
}
