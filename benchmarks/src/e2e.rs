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

use crate::cpu::Stopwatch;
use crate::neuroncore::assemble_text;
use crate::result::{BenchResult, Speed};
use trnsim_core::engine::EngineUnit;
use trnsim_core::isa::Engine;
use trnsim_kernel::{Dur, SimBuilder, SimOptions, Simulation, TickOrder, TraceOptions, TraceSink};
/// The layer's program lives in the kernel library (`trnsim_kernels::gemm`), which
/// `--compute cycle` runs too.
pub use trnsim_kernels::gemm::{program, program_with, Shape, Variant, CC_DONE_SEM, DOORBELL_SEM, SHAPE};
use trnsim_system::chip::{self, Chip, ChipIds};

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
    s.check_for(v)?;
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
