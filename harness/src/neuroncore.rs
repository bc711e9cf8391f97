//! NeuronCore microbenchmarks: programs written in the core's text assembly (generated here),
//! assembled, run on one or more cores, and reported as TFLOPS and per-engine utilization.

use crate::cpu::Stopwatch;
use crate::suite::{BenchResult, Speed};
use std::fmt::Write as _;
use trnsim_core::core::{build, CoreIds, CoreOptions};
use trnsim_core::engine::EngineUnit;
use trnsim_core::isa::asm::{assemble, render_errors, AsmOptions};
use trnsim_core::isa::Program;
use trnsim_kernel::{Dur, SimBuilder, SimOptions, Simulation, TickOrder, TraceOptions, TraceSink};

/// Assembles `text` (named `source` in errors).
pub fn assemble_text(source: &str, text: &str) -> Result<Program, String> {
    assemble(source, text, &AsmOptions::default()).map_err(|e| render_errors(&e))
}

/// `count` back-to-back nc_matmuls (LoadStationary + MultiplyMoving, K = M = 128) of N columns in
/// `dtype` ("bf16", "fp32", "mxfp8"), cycling over the 8 PSUM banks.
pub fn matmul_program(count: usize, n: u32, dtype: &str) -> String {
    let mut s = String::from(".engine tensor\n");
    let mx = dtype == "mxfp8";
    let cols = if mx { n * 4 } else { n };
    let wcols = if mx { 512 } else { 128 };
    let scales = |c: u32| if mx { format!(", scales=sbuf[0:128] +0x3f000 [{c}:1] fp8e4m3") } else { String::new() };
    for i in 0..count {
        let w_off = (i % 2) * 0x1000;
        let bank = i % 8;
        let _ = writeln!(s, "    ldweights sbuf[0:128] +{w_off:#x} [{wcols}:1] {dtype}{}", scales(wcols / 32));
        let _ = writeln!(
            s,
            "    matmul sbuf[0:128] +0x4000 [{cols}:1] {dtype} -> psum[0:128] bank{bank} +0 [{}:1] fp32, overwrite{}",
            n.min(512),
            scales(cols / 32)
        );
    }
    s.push_str("    halt\n");
    s
}

/// Runs `cores` copies of `program`; returns the simulation and each core's ids.
pub fn run_cores(
    program: &Program,
    cores: usize,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<(Simulation, Vec<CoreIds>), String> {
    let mut b = SimBuilder::with_options(SimOptions { tick_order: order, ..SimOptions::default() });
    let mut ids = Vec::new();
    for c in 0..cores {
        ids.push(build(&mut b, &format!("nc{c}"), program, &CoreOptions::default(), None)?);
    }
    let mut sim = b.build().map_err(|e| e.to_string())?;
    if let Some((sink, opts)) = trace {
        sim.attach_trace(sink, &opts);
    }
    sim.run_until_idle(Dur::from_us(100_000)).map_err(|e| e.to_string())?;
    sim.finish_trace().map_err(|e| e.to_string())?;
    for core in &ids {
        for (e, id) in &core.engines {
            let unit = sim.component::<EngineUnit>(*id).ok_or("engine")?;
            if !unit.finished() {
                return Err(format!("{e} engine did not finish its stream"));
            }
        }
    }
    Ok((sim, ids))
}

/// Headline figures of a run: TFLOPS over the tensor engines' span, and utilizations.
fn headline(sim: &Simulation, ids: &[CoreIds], peak_tflops: f64) -> Vec<(String, f64)> {
    let mut flops = 0u64;
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut busy = 0u64;
    for core in ids {
        for (_, id) in &core.engines {
            let u = sim.component::<EngineUnit>(*id).expect("engine");
            flops += u.stats.flops;
            busy += u.stats.busy_cycles;
            first = first.min(u.stats.first.unwrap_or(u64::MAX));
            last = last.max(u.stats.last);
        }
    }
    let secs = last.saturating_sub(first) as f64 / 2.4e9;
    let tflops = if secs > 0.0 { flops as f64 / secs / 1e12 } else { 0.0 };
    vec![
        ("cores".into(), ids.len() as f64),
        ("tflops".into(), tflops),
        ("peak_tflops".into(), peak_tflops * ids.len() as f64),
        ("efficiency_pct".into(), 100.0 * tflops / (peak_tflops * ids.len() as f64)),
        ("tensor_busy_cycles".into(), busy as f64),
        ("tensor_span_cycles".into(), last.saturating_sub(first) as f64),
    ]
}

/// Runs one NeuronCore benchmark.
pub fn run_named(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<BenchResult, String> {
    let (text, cores, peak) = match name {
        "nc-matmul-bf16" => (matmul_program(256, 512, "bf16"), 1, 78.64),
        "nc-matmul-mxfp8" => (matmul_program(256, 512, "mxfp8"), 1, 314.57),
        "nc-matmul-8cores" => (matmul_program(256, 512, "bf16"), 8, 78.64),
        _ => return Err(format!("unknown NeuronCore benchmark `{name}`")),
    };
    let program = assemble_text(&format!("{name}.asm (generated)"), &text)?;
    let sw = Stopwatch::start();
    let (sim, ids) = run_cores(&program, cores, order, trace)?;
    let (wall_s, cpu_s) = sw.elapsed();
    let headline = headline(&sim, &ids, peak);
    let sim_s = sim.now().as_ps() as f64 * 1e-12;
    let speed = Speed { wall_s, cpu_s, slowdown: wall_s / sim_s.max(1e-12), ticks_per_s: 0.0 };
    Ok(BenchResult { name: name.into(), headline, stats: sim.report(), speed })
}
