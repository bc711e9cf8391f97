//! NeuronCore microbenchmarks: programs written in the core's text assembly (generated here),
//! assembled, run on one or more cores, and reported as TFLOPS and per-engine utilization.

use crate::cpu::Stopwatch;
use crate::result::{BenchResult, Speed};
use std::fmt::Write as _;
use trnsim_core::core::{build, CoreIds, CoreOptions, HbmHookup};
use trnsim_core::dma::DmaBlock;
use trnsim_core::engine::EngineUnit;
use trnsim_core::isa::asm::{assemble, render_errors, AsmOptions};
use trnsim_core::isa::Program;
use trnsim_kernel::{Dur, SimBuilder, SimOptions, Simulation, TickOrder, TraceOptions, TraceSink};
use trnsim_mem::hbm::{Fidelity, HbmStack, StackConfig};

/// Assembles `text` (named `source` in errors).
pub fn assemble_text(source: &str, text: &str) -> Result<Program, String> {
    assemble(source, text, &AsmOptions::default()).map_err(|e| render_errors(&e))
}

/// [`assemble_text`] for a core of description `core` (its SBUF and PSUM partitions and
/// partition size).
pub fn assemble_for(source: &str, text: &str, core: &trnsim_core::spec::CoreSpec) -> Result<Program, String> {
    assemble(source, text, &AsmOptions::for_core(core)).map_err(|e| render_errors(&e))
}

/// `count` back-to-back nc_matmuls (LoadStationary + MultiplyMoving, K = M = 128) of N columns in
/// `dtype` ("bf16", "fp32", "mxfp8"), cycling over the 8 PSUM banks.
pub fn matmul_program(count: usize, n: u32, dtype: &str) -> String {
    let mut s = String::from(".engine tensor\n");
    let mx = dtype == "mxfp8";
    let cols = if mx { n * 4 } else { n };
    let wcols = if mx { 512 } else { 128 };
    // MXFP8 scales: one E8M0 byte per 32 K-rows per column, K/32 = 16 partitions x columns.
    let scales = |c: u32| if mx { format!(", scales=sbuf[0:16] +0x3f000 [{c}:1] fp8e4m3") } else { String::new() };
    for i in 0..count {
        let w_off = (i % 2) * 0x1000;
        let bank = i % 8;
        let _ = writeln!(s, "    ldweights sbuf[0:128] +{w_off:#x} [{wcols}:1] {dtype}{}", scales(wcols / 4));
        let _ = writeln!(
            s,
            "    matmul sbuf[0:128] +0x4000 [{cols}:1] {dtype} -> psum[0:128] bank{bank} +0 [{}:1] fp32, overwrite{}",
            n.min(512),
            scales(cols / 4)
        );
    }
    s.push_str("    halt\n");
    s
}

/// The simulated time a program may run before [`run_cores`] stops it (`trnsim core
/// --max-sim-time` sets another).
pub const DEFAULT_MAX_SIM_TIME: Dur = Dur::from_ms(100);

/// Runs `cores` copies of `program`, two cores per HBM3E stack (Trn3: 8 cores, 4 stacks) when
/// the program starts DMAs, for at most [`DEFAULT_MAX_SIM_TIME`]; returns the simulation and
/// each core's ids.
pub fn run_cores(
    program: &Program,
    cores: usize,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<(Simulation, Vec<CoreIds>), String> {
    run_cores_for(program, cores, order, trace, DEFAULT_MAX_SIM_TIME)
}

/// [`run_cores`] for at most `max_sim_time`: a program still running then (e.g. a `branch
/// always` loop) is an error located at the source line each unfinished engine was at.
pub fn run_cores_for(
    program: &Program,
    cores: usize,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    max_sim_time: Dur,
) -> Result<(Simulation, Vec<CoreIds>), String> {
    run_cores_with(program, cores, order, trace, max_sim_time, Fidelity::Cycle, &|_| {})
}

/// [`run_cores_for`] with the HBM stacks and DMA engines at `fidelity` (fast: the
/// transaction-level models of docs/validation.md, "The fast fidelity") and each HBM stack's
/// configuration (Trn3's stack) changed by `stack` before it is built: a what-if on the
/// memory, such as its refresh policy (`&|_| {}`: the stack as the chip has it).
pub fn run_cores_with(
    program: &Program,
    cores: usize,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    max_sim_time: Dur,
    fidelity: Fidelity,
    stack: &dyn Fn(&mut StackConfig),
) -> Result<(Simulation, Vec<CoreIds>), String> {
    let core = trnsim_core::spec::nc_v4();
    run_cores_on(program, core, cores, order, trace, max_sim_time, fidelity, stack)
}

/// NC-v4 with its tensor engine's warm-up throttle off: the array at its full rate from the
/// first matmul. The benchmarks whose references have no warm-up (AWS's peak TFLOPS, SCALE-Sim's
/// closed form) run on it, so that they compare like with like; the others run the preset as
/// it is, throttled (docs/neuroncore.md, "Throttle").
pub fn nc_v4_full_rate() -> std::sync::Arc<trnsim_core::spec::CoreSpec> {
    let mut core = (*trnsim_core::spec::nc_v4()).clone();
    core.costs.tensor.throttle.enabled = false;
    std::sync::Arc::new(core)
}

/// Whether benchmark `name` runs on [`nc_v4_full_rate`] (its reference has no warm-up).
pub fn runs_at_full_rate(name: &str) -> bool {
    matches!(name, "nc-matmul-bf16" | "nc-matmul-mxfp8" | "nc-matmul-8cores" | "nc-gemm-sweep")
}

/// [`run_cores_with`] on cores of the description `core` (a preset or a core file).
#[allow(clippy::too_many_arguments)]
pub fn run_cores_on(
    program: &Program,
    core: std::sync::Arc<trnsim_core::spec::CoreSpec>,
    cores: usize,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    max_sim_time: Dur,
    fidelity: Fidelity,
    stack: &dyn Fn(&mut StackConfig),
) -> Result<(Simulation, Vec<CoreIds>), String> {
    if program.streams.iter().all(|(_, s)| s.instrs.is_empty()) {
        return Err(format!(
            "{}:1: no instructions: a program needs an `.engine NAME` section with at least one",
            program.source
        ));
    }
    let mut b = SimBuilder::with_options(SimOptions { tick_order: order, ..SimOptions::default() });
    let needs_hbm = program
        .streams
        .iter()
        .any(|(_, s)| s.instrs.iter().any(|i| matches!(i, trnsim_core::isa::Instr::DmaStart { .. })));
    let mut stacks = Vec::new();
    if needs_hbm {
        // One Trn3 stack as the chip has it (preset and address map of trn3-chip).
        let mut cfg = trnsim_system::chip::trn3()?.stack_config();
        cfg.fidelity = fidelity;
        stack(&mut cfg);
        let clk = b.clock("hbm", cfg.timing.frequency()).map_err(|e| e.to_string())?;
        for k in 0..cores.div_ceil(2) {
            let mut c = cfg.clone();
            c.index = k as u32;
            let id = b.reserve(&format!("hbm{k}"), clk).map_err(|e| e.to_string())?;
            let mut st = HbmStack::new(&c)?;
            if trace.is_some() {
                st.declare_tracks(&mut b, id);
            }
            stacks.push((id, st));
        }
    }
    // The cores share their clock domains (one per frequency), as a chip's do: a step then
    // gathers one pending list per frequency, not one per core.
    let mut opts = CoreOptions {
        spec: core,
        trace_tracks: trace.is_some(),
        shared_clocks: Some("nc".into()),
        ..CoreOptions::default()
    };
    if fidelity == Fidelity::Fast {
        let mut d = opts.spec.dma.clone();
        d.bulk = true;
        opts.dma = Some(d);
    }
    let mut ids = Vec::new();
    for c in 0..cores {
        let hbm = stacks.get_mut(c / 2).map(|(id, st)| HbmHookup { id: *id, stack: st });
        ids.push(build(&mut b, &format!("nc{c}"), program, &opts, hbm)?);
    }
    for (id, st) in stacks {
        b.install(id, st).map_err(|e| e.to_string())?;
    }
    let mut sim = b.build().map_err(|e| e.to_string())?;
    if let Some((sink, opts)) = trace {
        sim.attach_trace(sink, &opts);
    }
    let stop = match crate::progress::run_until_idle(&mut sim, max_sim_time) {
        Ok(stop) => stop,
        Err(e) => {
            // Locate a deadlock at the first engine that did not finish (e.g. a sem_wait that
            // nothing signals).
            let stuck = ids.iter().flat_map(|c| &c.engines).find_map(|(e, id)| {
                let unit = sim.component::<EngineUnit>(*id)?;
                (!unit.finished()).then(|| (e, &sim.component_names()[id.index()], unit.line().unwrap_or(0)))
            });
            let msg = e.to_string().replace('\n', "; ");
            return Err(match stuck {
                Some((e, name, line)) => format!("{}:{line}: {name} ({e} engine): {msg}", program.source),
                None => format!("{}: {msg}", program.source),
            });
        }
    };
    sim.finish_trace().map_err(|e| e.to_string())?;
    for core in &ids {
        for (e, id) in &core.engines {
            let unit = sim.component::<EngineUnit>(*id).ok_or("engine")?;
            if !unit.finished() {
                let name = &sim.component_names()[id.index()];
                let line = unit.line().map_or(0, |l| l as usize);
                let why = if stop == trnsim_kernel::Stop::Limit {
                    format!("did not halt within --max-sim-time {max_sim_time} (a loop that never ends?)")
                } else {
                    "stopped without finishing its stream".to_string()
                };
                return Err(format!("{}:{line}: {name} ({e} engine): {why}", program.source));
            }
        }
    }
    Ok((sim, ids))
}

/// DMA bandwidth from HBM into SBUF against transfer size: for each size, four 128-partition
/// DMAs on four queues, waited for together.
pub fn dma_program(bytes_per_partition: u32) -> String {
    let mut s = String::from(".engine sync\n");
    let elems = bytes_per_partition / 2;
    for q in 0..4u32 {
        let hbm = q as u64 * 128 * bytes_per_partition as u64;
        let off = q * bytes_per_partition;
        let _ = writeln!(
            s,
            "    dma_start q{q} hbm {hbm:#x} stride {bytes_per_partition} -> sbuf[0:128] +{off:#x} [{elems}:1] bf16, sem=s0"
        );
    }
    s.push_str("    sem_wait s0 >= 64\n    halt\n");
    s
}

/// An attention-like block over `tiles` tiles of 128 x 512: per tile, DMA the input tile from
/// HBM (four buffers deep), matmul by W (tensor) into PSUM, exp with row sums (scalar), row
/// maxima (vector), and a second matmul by V (tensor); semaphores chain the engines so that
/// later tiles' loads and first matmuls overlap earlier tiles' activation and reduction.
/// Semaphores: s0 DMA parts done (16 per tile), s1 first matmuls, s5 exps, s2 maxima, s3 second
/// matmuls, s4 the weights' DMA.
pub fn attention_program(tiles: u32) -> String {
    const NB: u32 = 4;
    let x = |i: u32| 0x1000 + (i % NB) * 0x400;
    let e = |i: u32| 0x3000 + (i % 2) * 0x400;
    let mut sync = String::from(
        ".engine sync\n    dma_start q15 hbm 0x4000000 stride 512 -> sbuf[0:128] +0x0 [256:1] bf16, sem=s4\n",
    );
    let mut te = String::from(".engine tensor\n    sem_wait s4 >= 16\n");
    let mut act = String::from(".engine scalar\n");
    let mut dve = String::from(".engine vector\n");
    let mm2 = |te: &mut String, j: u32| {
        let _ = writeln!(te, "    sem_wait s2 >= {}", j + 1);
        let _ = writeln!(te, "    ldweights sbuf[0:128] +0x100 [128:1] bf16");
        let out = 4 + j % 4;
        let _ = writeln!(
            te,
            "    matmul sbuf[0:128] +{:#x} [512:1] bf16 -> psum[0:128] bank{out} +0 [512:1] fp32, overwrite",
            e(j)
        );
        let _ = writeln!(te, "    sem_inc s3, 1");
    };
    for i in 0..tiles {
        if i >= NB {
            let _ = writeln!(sync, "    sem_wait s1 >= {}", i - NB + 1); // buffer read by tile i - NB's first matmul
        }
        let _ = writeln!(
            sync,
            "    dma_start q{} hbm {:#x} stride 1024 -> sbuf[0:128] +{:#x} [512:1] bf16, sem=s0",
            i % 4,
            i as u64 * 0x20000,
            x(i)
        );
        let _ = writeln!(te, "    sem_wait s0 >= {}", 16 * (i + 1));
        if i >= 4 {
            let _ = writeln!(te, "    sem_wait s5 >= {}", i - 3); // PSUM bank i % 4 read by exp(i - 4)
        }
        let _ = writeln!(te, "    ldweights sbuf[0:128] +0x0 [128:1] bf16");
        let _ = writeln!(
            te,
            "    matmul sbuf[0:128] +{:#x} [512:1] bf16 -> psum[0:128] bank{} +0 [512:1] fp32, overwrite",
            x(i),
            i % 4
        );
        let _ = writeln!(te, "    sem_inc s1, 1");
        if i >= 1 {
            mm2(&mut te, i - 1);
        }
        let _ = writeln!(act, "    sem_wait s1 >= {}", i + 1);
        if i >= 2 {
            let _ = writeln!(act, "    sem_wait s3 >= {}", i - 1); // e buffer read by matmul 2 of tile i - 2
        }
        let _ = writeln!(
            act,
            "    activation exp psum[0:128] bank{} +0 [512:1] fp32 -> sbuf[0:128] +{:#x} [512:1] bf16, scale=0.0625, bias=0.0, reduce=add sbuf[0:128] +{:#x} [1:1] fp32",
            i % 4,
            e(i),
            0x4000 + (i % 2) * 4
        );
        let _ = writeln!(act, "    sem_inc s5, 1");
        let _ = writeln!(dve, "    sem_wait s5 >= {}", i + 1);
        let _ = writeln!(
            dve,
            "    tensor_reduce max sbuf[0:128] +{:#x} [512:1] bf16 -> sbuf[0:128] +{:#x} [1:1] fp32",
            e(i),
            0x4100 + (i % 2) * 4
        );
        let _ = writeln!(dve, "    sem_inc s2, 1");
    }
    mm2(&mut te, tiles - 1);
    for st in [&mut sync, &mut te, &mut act, &mut dve] {
        st.push_str("    halt\n");
    }
    format!("{sync}\n{te}\n{act}\n{dve}")
}

/// A weight-stationary GEMM C[M x N] = A[M x K] x B[K x N] on the tensor engine, data already in
/// SBUF: for each 128-column block of M and 128-row block of K, one LoadStationary and one
/// MultiplyMoving per 512-column block of N, accumulating over K in PSUM (one bank per N block).
pub fn gemm_program(m: u32, k: u32, n: u32) -> String {
    let mut s = String::from(".engine tensor\n");
    let (mt, kt) = (m.div_ceil(128), k.div_ceil(128));
    let nt = n.div_ceil(512);
    for mi in 0..mt {
        let cols = (m - mi * 128).min(128);
        for ki in 0..kt {
            let rows = (k - ki * 128).min(128);
            let _ = writeln!(s, "    ldweights sbuf[0:{rows}] +{:#x} [{cols}:1] bf16", (ki % 2) * 0x100);
            for ni in 0..nt {
                let w = (n - ni * 512).min(512);
                let acc = if ki == 0 { "overwrite" } else { "accumulate" };
                let _ = writeln!(
                    s,
                    "    matmul sbuf[0:{rows}] +{:#x} [{w}:1] bf16 -> psum[0:{cols}] bank{} +0 [{w}:1] fp32, {acc}",
                    0x1000 + (ni % 8) * 0x400,
                    ni % 8
                );
            }
        }
    }
    s.push_str("    halt\n");
    s
}

/// SCALE-Sim's weight-stationary closed form for an R x C array: per fold 2R + C + T - 2
/// cycles, with T the moving (temporal) columns, and one fold per (K block, M block) pair.
pub fn scalesim_ws_cycles(m: u32, k: u32, n: u32) -> u64 {
    let (r, c) = (128u64, 128u64);
    let folds = u64::from(m.div_ceil(128)) * u64::from(k.div_ceil(128));
    folds * (2 * r + c + u64::from(n) - 2)
}

/// The GEMM sweep: tensor-engine cycles and utilization per shape, beside SCALE-Sim's cycles.
fn gemm_sweep(order: TickOrder) -> Result<(Vec<(String, f64)>, Simulation), String> {
    let mut headline = Vec::new();
    let mut last = None;
    for (m, k, n) in [
        (128, 128, 128),
        (128, 128, 512),
        (128, 128, 2048),
        (256, 256, 512),
        (512, 512, 512),
        (1024, 1024, 1024),
        (128, 1024, 4096),
        (1024, 128, 256),
    ] {
        let program = assemble_text(&format!("gemm-{m}x{k}x{n}.asm (generated)"), &gemm_program(m, k, n))?;
        let (sim, ids) =
            run_cores_on(&program, nc_v4_full_rate(), 1, order, None, DEFAULT_MAX_SIM_TIME, Fidelity::Cycle, &|_| {})?;
        let u = sim.component::<EngineUnit>(ids[0].engines[0].1).ok_or("tensor engine")?;
        let cycles = u.stats.last - u.stats.first.unwrap_or(0);
        let ideal = (m as f64 * k as f64 * n as f64) / (128.0 * 128.0);
        let tag = format!("{m}x{k}x{n}");
        headline.push((format!("{tag}_cycles"), cycles as f64));
        headline.push((format!("{tag}_utilization_pct"), 100.0 * ideal / cycles as f64));
        headline.push((format!("{tag}_scalesim_cycles"), scalesim_ws_cycles(m, k, n) as f64));
        last = Some(sim);
    }
    Ok((headline, last.ok_or("no run")?))
}

/// A tiled GEMM with double-buffered loads: C[M x N] = A[M x K] x B[K x N] in BF16 with FP32
/// accumulation (M, K multiples of 128, N of 512). The sync engine DMAs A (all of it, as K-row
/// blocks) once, then streams B's 128 x 512 tiles from HBM through four SBUF buffers; the tensor
/// engine multiplies each tile by every 128-column block of A, accumulating over K in PSUM
/// (banks double-buffered across N blocks); the vector engine drains each finished N block from
/// PSUM to SBUF and the GpSimd engine's DMA writes it back to HBM (so the sync engine's loads
/// never wait behind a store). Semaphores: s0 A loaded, s1 B tiles
/// landed (16 per tile), s2 tiles consumed, s3 N blocks multiplied, s4 N blocks drained, s5
/// N blocks stored.
pub fn tiled_gemm_program(m: u32, k: u32, n: u32) -> String {
    const NB: u32 = 4;
    let (mt, kt, nt) = (m / 128, k / 128, n / 512);
    let mut sync = String::from(".engine sync\n");
    let mut te = String::from(".engine tensor\n");
    let mut dve = String::from(".engine vector\n");
    let mut pool = String::from(".engine gpsimd\n");
    let a_bytes = kt * m * 2; // per partition: K blocks x M columns of BF16
    let _ = writeln!(
        sync,
        "    dma_start q15 hbm 0x10000000 stride {a_bytes} -> sbuf[0:128] +0x0 [{}:1] bf16, sem=s0",
        a_bytes / 2
    );
    let b_base = a_bytes.next_multiple_of(0x400);
    let c_base = b_base + NB * 0x400;
    let _ = writeln!(te, "    sem_wait s0 >= 16");
    let mut t = 0u32;
    for nb in 0..nt {
        if nb >= 2 {
            let _ = writeln!(te, "    sem_wait s4 >= {}", nb - 1); // banks of N block nb - 2 drained
        }
        for kb in 0..kt {
            if t >= NB {
                let _ = writeln!(sync, "    sem_wait s2 >= {}", t - NB + 1);
            }
            let hbm = (nb as u64 * kt as u64 + kb as u64) * 128 * 1024;
            let buf = b_base + (t % NB) * 0x400;
            let _ = writeln!(
                sync,
                "    dma_start q{} hbm {hbm:#x} stride 1024 -> sbuf[0:128] +{buf:#x} [512:1] bf16, sem=s1",
                t % 4
            );
            let _ = writeln!(te, "    sem_wait s1 >= {}", 16 * (t + 1));
            for mb in 0..mt {
                let a_off = (kb * m + mb * 128) * 2;
                let bank = (nb % 2) * 4 + mb % 4;
                let acc = if kb == 0 { "overwrite" } else { "accumulate" };
                let _ = writeln!(te, "    ldweights sbuf[0:128] +{a_off:#x} [128:1] bf16");
                let _ = writeln!(
                    te,
                    "    matmul sbuf[0:128] +{buf:#x} [512:1] bf16 -> psum[0:128] bank{bank} +0 [512:1] fp32, {acc}"
                );
            }
            let _ = writeln!(te, "    sem_inc s2, 1");
            t += 1;
        }
        let _ = writeln!(te, "    sem_inc s3, 1");
        let _ = writeln!(dve, "    sem_wait s3 >= {}", nb + 1);
        if nb >= 1 {
            let _ = writeln!(dve, "    sem_wait s5 >= {}", nb); // C buffer stored
        }
        for mb in 0..mt.min(4) {
            let bank = (nb % 2) * 4 + mb;
            let _ = writeln!(
                dve,
                "    tensor_copy psum[0:128] bank{bank} +0 [512:1] fp32 -> sbuf[0:128] +{:#x} [512:1] bf16",
                c_base + mb * 0x400
            );
        }
        let _ = writeln!(dve, "    sem_inc s4, 1");
        let _ = writeln!(pool, "    sem_wait s4 >= {}", nb + 1);
        let c_hbm = 0x20000000u64 + nb as u64 * 0x100000;
        let _ = writeln!(
            pool,
            "    dma_start q4 sbuf[0:128] +{c_base:#x} [{}:1] bf16 -> hbm {c_hbm:#x} stride 4096, sem=s6",
            512 * mt.min(4)
        );
        let _ = writeln!(pool, "    sem_wait s6 >= {}", 16 * (nb + 1));
        let _ = writeln!(pool, "    sem_inc s5, 1");
    }
    for st in [&mut sync, &mut te, &mut dve, &mut pool] {
        st.push_str("    halt\n");
    }
    format!("{sync}\n{te}\n{dve}\n{pool}")
}

/// Vector and scalar throughput: 64 FP32 tensor_tensor adds (vector) and 64 exp activations
/// (scalar) of N = 512, on separate SBUF regions so they run side by side.
pub fn vector_scalar_program() -> String {
    let mut s = String::from(".engine vector\n");
    for _ in 0..64 {
        s.push_str("    tensor_tensor add sbuf[0:128] +0x0 [512:1] fp32, sbuf[0:128] +0x800 [512:1] fp32 -> sbuf[0:128] +0x1000 [512:1] fp32\n");
    }
    s.push_str("    halt\n.engine scalar\n");
    for _ in 0..64 {
        s.push_str("    activation exp sbuf[0:128] +0x2000 [512:1] fp32 -> sbuf[0:128] +0x3000 [512:1] bf16, scale=1.0, bias=0.0\n");
    }
    s.push_str("    halt\n");
    s
}

fn dma_bench(order: TickOrder, fidelity: Fidelity) -> Result<(Vec<(String, f64)>, Simulation), String> {
    dma_bandwidths(order, fidelity, &|_| {})
}

/// `nc-dma-bandwidth`'s figures (one core's four DMAs from HBM of 1, 4, 16, 32 and 60 KiB per
/// partition, each size a run of its own) with the stack changed by `stack`, and the last
/// run's simulation.
pub fn dma_bandwidths(
    order: TickOrder,
    fidelity: Fidelity,
    stack: &dyn Fn(&mut StackConfig),
) -> Result<(Vec<(String, f64)>, Simulation), String> {
    let mut headline = Vec::new();
    let mut last = None;
    for kib in [1u32, 4, 16, 32, 60] {
        let bytes = kib * 1024;
        let program = assemble_text("nc-dma.asm (generated)", &dma_program(bytes))?;
        let (sim, ids) = run_cores_with(&program, 1, order, None, DEFAULT_MAX_SIM_TIME, fidelity, stack)?;
        let dma = ids[0].dma.ok_or("no DMA block")?;
        let block = sim.component::<DmaBlock>(dma).ok_or("dma block")?;
        let moved: u64 = block.bytes_per_engine().iter().sum();
        let end_ns = sim.now().as_ns_f64();
        let gbps = moved as f64 / end_ns;
        headline.push((format!("{kib}KiB_per_partition_GBps"), gbps));
        last = Some(sim);
    }
    Ok((headline, last.ok_or("no run")?))
}

/// Headline figures of a run: TFLOPS over the span from the first issue to the last completion
/// on any engine (each engine's cycles at its own clock), and the tensor engines' busy cycles.
fn headline(sim: &Simulation, ids: &[CoreIds], peak_tflops: f64) -> Vec<(String, f64)> {
    let mut flops = 0u64;
    let (mut first, mut last) = (f64::MAX, 0f64);
    let (mut busy, mut te_first, mut te_last) = (0u64, u64::MAX, 0u64);
    for core in ids {
        for (e, id) in &core.engines {
            let u = sim.component::<EngineUnit>(*id).expect("engine");
            let Some(f0) = u.stats.first else { continue };
            let hz = trnsim_core::spec::nc_v4().clock(*e).as_hz() as f64;
            flops += u.stats.flops;
            first = first.min(f0 as f64 / hz);
            last = last.max(u.stats.last as f64 / hz);
            if *e == trnsim_core::isa::Engine::Tensor {
                busy += u.stats.busy_cycles;
                te_first = te_first.min(f0);
                te_last = te_last.max(u.stats.last);
            }
        }
    }
    let secs = (last - first).max(0.0);
    let tflops = if secs > 0.0 { flops as f64 / secs / 1e12 } else { 0.0 };
    vec![
        ("cores".into(), ids.len() as f64),
        ("tflops".into(), tflops),
        ("peak_tflops".into(), peak_tflops * ids.len() as f64),
        ("efficiency_pct".into(), 100.0 * tflops / (peak_tflops * ids.len() as f64)),
        // Busy cycles are a per-core figure (mean over the cores), comparable with the span
        // from the first matmul on any core to the last completion on any core.
        ("tensor_busy_cycles_per_core".into(), busy as f64 / ids.len().max(1) as f64),
        ("tensor_span_cycles".into(), te_last.saturating_sub(te_first.min(te_last)) as f64),
    ]
}

/// Runs one NeuronCore benchmark.
pub fn run_named(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<BenchResult, String> {
    run_named_at(name, order, trace, Fidelity::Cycle)
}

/// [`run_named`] with the HBM stacks and DMA engines at `fidelity`.
pub fn run_named_at(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    fidelity: Fidelity,
) -> Result<BenchResult, String> {
    if name == "nc-dma-bandwidth" || name == "nc-gemm-sweep" {
        let sw = Stopwatch::start();
        let (mut headline, sim) =
            if name == "nc-gemm-sweep" { gemm_sweep(order)? } else { dma_bench(order, fidelity)? };
        if name == "nc-dma-bandwidth" {
            headline.push(("peak_GBps".into(), 16.0 * 38.4));
        }
        let (wall_s, cpu_s) = sw.elapsed();
        return Ok(BenchResult {
            name: name.into(),
            headline,
            stats: sim.report(),
            speed: Speed { wall_s, cpu_s, ..Speed::default() },
        });
    }
    let (text, cores, peak) = match name {
        "nc-attention" => (attention_program(16), 1, 78.64),
        "nc-gemm-tiled" => (tiled_gemm_program(512, 512, 2048), 1, 78.64),
        "nc-vector-scalar" => (vector_scalar_program(), 1, 78.64),
        "nc-matmul-bf16" => (matmul_program(256, 512, "bf16"), 1, 78.64),
        "nc-matmul-mxfp8" => (matmul_program(256, 512, "mxfp8"), 1, 314.57),
        "nc-matmul-8cores" => (matmul_program(256, 512, "bf16"), 8, 78.64),
        _ => return Err(format!("unknown NeuronCore benchmark `{name}`")),
    };
    let program = assemble_text(&format!("{name}.asm (generated)"), &text)?;
    let sw = Stopwatch::start();
    let core = if runs_at_full_rate(name) { nc_v4_full_rate() } else { trnsim_core::spec::nc_v4() };
    let (sim, ids) = run_cores_on(&program, core, cores, order, trace, DEFAULT_MAX_SIM_TIME, fidelity, &|_| {})?;
    let (wall_s, cpu_s) = sw.elapsed();
    let mut headline = headline(&sim, &ids, peak);
    // Per engine kind, over every core: busy cycles over each engine's own span. Engines that
    // did no datapath work (e.g. a sync engine that only starts DMAs) have no utilization.
    for (k, (e, _)) in ids[0].engines.iter().enumerate() {
        let (mut busy, mut span) = (0u64, 0u64);
        for core in &ids {
            let u = sim.component::<EngineUnit>(core.engines[k].1).ok_or("engine")?;
            busy += u.stats.busy_cycles;
            span += u.stats.last.saturating_sub(u.stats.first.unwrap_or(0)).max(1);
        }
        if busy > 0 {
            headline.push((format!("{e}_utilization_pct"), 100.0 * busy as f64 / span as f64));
        }
    }
    headline.push(("sim_time_ns".into(), sim.now().as_ns_f64()));
    if name == "nc-vector-scalar" {
        // Not a matmul benchmark: report element rates instead of TFLOPS.
        headline.retain(|h| !h.0.contains("tflops") && !h.0.starts_with("efficiency") && !h.0.starts_with("tensor_"));
        for (e, id) in &ids[0].engines {
            let u = sim.component::<EngineUnit>(*id).ok_or("engine")?;
            let hz = trnsim_core::spec::nc_v4().clock(*e).as_hz() as f64;
            let secs = u.stats.last.saturating_sub(u.stats.first.unwrap_or(0)) as f64 / hz;
            headline.push((format!("{e}_Gelem_per_s"), u.stats.flops as f64 / secs.max(1e-12) / 1e9));
        }
    }
    let speed = Speed::of(&sim, wall_s, cpu_s);
    Ok(BenchResult { name: name.into(), headline, stats: sim.report(), speed })
}
