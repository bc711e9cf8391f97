//! Microbenchmarks runnable from `trnsim run` and `trnsim bench`: each returns a result with
//! its simulated statistics and host-side speed figures.

use crate::cpu::Stopwatch;
use crate::ring::{self, RingParams};
use indicatif::ProgressBar;
use serde::Serialize;
use trnsim_kernel::{
    ClockId, Dur, RunError, SimOptions, Simulation, StatsReport, Stop, TickOrder, TraceOptions, TraceSink,
};

/// Benchmarks `trnsim run` knows by name; the default suite runs them all.
pub const BENCHES: &[(&str, &str)] = &[
    ("kernel-ring", "64-module ring, 16 tokens, depth 4, 200k cycles: the kernel's dense yardstick"),
    ("kernel-ring-sparse", "64-module ring, 2 tokens, depth 4, 200k cycles: mostly idle modules"),
    ("demo", "multi-clock sources -> relays -> sinks with credits and a bandwidth limit (models/configs/demo.ron)"),
    ("hbm-stream-read", "HBM3E stack (Trn3), sequential reads, 4096 in flight: bandwidth vs 1228.8 GB/s peak"),
    ("hbm-stream-write", "HBM3E stack, sequential writes"),
    ("hbm-random", "HBM3E stack, uniformly random reads"),
    ("hbm-mix", "HBM3E stack, random, 2 reads : 1 write"),
    ("hbm-same-bank", "HBM3E stack, reads to one bank, a new row each time (tRC-bound)"),
    ("hbm-trn3", "Trn3 chip: 4 HBM3E stacks streaming reads vs 4.9 TB/s"),
    ("nc-matmul-bf16", "NC-v4: 256 back-to-back BF16 matmuls, K = M = 128, N = 512: TFLOPS vs 78.6"),
    ("nc-matmul-mxfp8", "NC-v4: 256 back-to-back MXFP8 matmuls, K = 512, N = 512: TFLOPS vs 314.6"),
    ("nc-matmul-8cores", "8 NC-v4 cores, 256 BF16 matmuls each: 8x one core"),
    (
        "nc-attention",
        "NC-v4 attention-like block, 16 tiles: DMA -> matmul -> exp+sum -> max -> matmul, engines overlapped",
    ),
    (
        "nc-gemm-tiled",
        "NC-v4 tiled GEMM 512 x 512 x 2048 BF16, B streamed from HBM through 4 SBUF buffers, C drained and stored",
    ),
    (
        "nc-vector-scalar",
        "NC-v4 vector (64 FP32 adds) and scalar (64 exps) of N = 512 side by side: elements/s and utilization",
    ),
    (
        "nc-gemm-sweep",
        "NC-v4 weight-stationary GEMM sweep: tensor-engine cycles and utilization beside SCALE-Sim's closed form",
    ),
    (
        "nc-dma-bandwidth",
        "NC-v4 DMA, HBM3E -> SBUF, 4 x 128-partition DMAs: GB/s against bytes per partition (1.3 us start cost)",
    ),
    ("e2e-llm-layer", "Trn3 chip (8 NC-v4, 4 HBM3E): FFN up-projection + GELU, weights streamed by DMA, vs analytic"),
    (
        "tp-matmul-4",
        "Trn3 Gen1, 4 whole chips: row-parallel matmul 512 x 8192 x 4096 BF16, 4 all-reduces overlapped with compute",
    ),
    ("tp-matmul-16", "Trn3 Gen1, 16 whole chips (one server): the same matmul, all-reduces overlapped with compute"),
    ("tp-matmul-64", "Trn3 Gen1, 64 whole chips (4 servers): the same matmul, all-reduces overlapped with compute"),
    (
        "moe-alltoall-144",
        "Trn3 Gen2, 144 whole chips: MoE step, top-2 of 288 experts, dispatch all-to-all, experts on the cores, combine",
    ),
    ("fabric-link-efficiency", "PCIe Gen6 x8, UALink x4, Gen5 x16 saturated: goodput vs the analytic payload rate"),
    (
        "fabric-link-pingpong",
        "64 B unloaded: one PCIe Gen6 x8 link (cycle-level) and Trn3 Gen1 ping-pongs direct / via a switch / across servers, vs the path's analytic latency",
    ),
    ("fabric-switch-hol", "32-port switch, uniform random: saturation of VOQ + iSLIP-1/4 vs a single FIFO (58.6 %)"),
    ("fabric-switch-latency", "32-port switch: latency against load for iSLIP-1/4, RRM, FIFO (SVG with --plots)"),
    (
        "fabric-allreduce-trn2-16",
        "Trn2 server (4x4 torus), ring all-reduce as packet traffic: nccl-tests time and busbw",
    ),
    (
        "fabric-allreduce-nl72x2",
        "Trn3 Gen2 144 chips (NL72x2): ring and auto all-reduce, all-to-all, as packet traffic",
    ),
    (
        "fabric-allreduce-nl72x2-nodes",
        "Trn3 Gen2 144 chips: 16 MiB ring all-reduce built per chip and switch (splits with --threads)",
    ),
    (
        "fabric-allreduce-ultracluster-nodes",
        "Trn3 Gen1 UltraCluster, 2 UltraServers over EFA (128 chips): 4 MiB hierarchical all-reduce built per chip and switch (splits by UltraServer)",
    ),
    (
        "fabric-collectives-nl32x2",
        "Trn3 Gen1 64 chips (NL32x2): ring and halving-doubling all-reduce, all-to-all at 1 and 16 MiB",
    ),
    (
        "sbuf-bandwidth",
        "NC-v4 SBUF per engine interface: alone (128 elem/cycle), strided (64), disjoint banks, shared bank",
    ),
    (
        "hbm-latency-sweep",
        "HBM3E random reads: latency against achieved bandwidth as the offered rate rises (SVG with --plots)",
    ),
];

/// Host-side speed of one run (never part of the deterministic results).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Speed {
    /// Wall-clock seconds of the run loop.
    pub wall_s: f64,
    /// CPU seconds of the run loop.
    pub cpu_s: f64,
    /// Simulated time / wall time.
    pub slowdown: f64,
    /// Component ticks per wall second.
    pub ticks_per_s: f64,
}

impl Speed {
    /// The speed of a finished `sim` that took `wall_s` / `cpu_s` on the host.
    pub fn of(sim: &Simulation, wall_s: f64, cpu_s: f64) -> Speed {
        let sim_s = sim.now().as_ps() as f64 * 1e-12;
        let ticks = sim.counters().ticks as f64;
        Speed { wall_s, cpu_s, slowdown: wall_s / sim_s.max(1e-12), ticks_per_s: ticks / wall_s.max(1e-9) }
    }
}

/// The outcome of one benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Headline figures (simulated, deterministic), units in the names.
    pub headline: Vec<(String, f64)>,
    /// Benchmark name. (Fields in name order: results JSON lists them so.)
    pub name: String,
    /// Every statistic of the run.
    pub stats: StatsReport,
    /// Host speed (not deterministic; kept out of results JSON).
    #[serde(skip)]
    pub speed: Speed,
}

/// Options shared by all benchmarks of a run.
pub struct RunOpts {
    /// Tick order (for determinism checks).
    pub order: TickOrder,
    /// Trace sink for this benchmark, if any, with what to trace on links.
    pub trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    /// Show a progress bar for runs longer than a second.
    pub progress: bool,
    /// Fidelity of HBM stacks and DMA engines for the benchmarks that build their own
    /// (`hbm-*`, `nc-*`).
    pub fidelity: trnsim_mem::hbm::Fidelity,
}

/// Runs `sim` to `end` (or idle) in chunks, with a progress bar after the first second: on
/// stderr, only when it is a terminal (indicatif hides it otherwise), showing the simulated
/// time reached of the goal, the slowdown against real time and the ETA.
pub fn drive(sim: &mut Simulation, limit: Dur, progress: bool) -> Result<(Stop, Speed), RunError> {
    let sw = Stopwatch::start();
    let start = sim.now();
    let chunk = Dur::from_ps((limit.as_ps() / 100).max(1));
    let mut bar: Option<ProgressBar> = None;
    let mut done = Dur::ZERO;
    let stop = loop {
        let step = if done + chunk > limit { Dur::from_ps(limit.as_ps() - done.as_ps()) } else { chunk };
        let stop = sim.run_for(step)?;
        done = sim.now().since(start);
        if stop != Stop::Limit || done >= limit {
            break stop;
        }
        if progress && bar.is_none() && sw.elapsed().0 > 1.0 {
            bar = Some(crate::progress::line(true));
        }
        if let Some(b) = &bar {
            b.set_position(done.as_ps() * 100 / limit.as_ps().max(1));
            // Simulated time reached of the goal, and how much slower than real time it runs.
            let slow = crate::progress::slowdown(sw.elapsed().0, done);
            b.set_message(format!("{done} of {limit}, {slow:.3e}x real time"));
        }
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (wall_s, cpu_s) = sw.elapsed();
    let sim_s = sim.now().since(start).as_secs_f64();
    let ticks = sim.counters().ticks as f64;
    Ok((
        stop,
        Speed {
            wall_s,
            cpu_s,
            slowdown: if sim_s > 0.0 { wall_s / sim_s } else { 0.0 },
            ticks_per_s: ticks / wall_s.max(1e-9),
        },
    ))
}

/// A many-chip report cut to a readable size for results JSON: every statistic of chip 0
/// (`chip000.*` components and their links), of every fabric node and fabric link, and of the
/// kernel; the other chips' internal components and links are dropped (they run the same
/// program; their figures are in the headline, e.g. per-chip phase times). A `results` owner
/// records how many were left out, `left_out` more (owners already left out of `report`:
/// links that kept no statistics). 64 chips' full report is ~40 MB of JSON.
pub fn keep_first_chip(report: StatsReport, left_out: u64) -> StatsReport {
    let mut out = StatsReport::default();
    let mut dropped = left_out;
    for (owner, stats) in report.owners {
        if internal_of_other_chip(&owner) {
            dropped += 1;
        } else {
            out.owners.insert(owner, stats);
        }
    }
    with_left_out_note(out, dropped)
}

/// [`keep_first_chip`] of `sim`'s report, gathering only what is kept (the other chips'
/// internals are never written: on 144 chips that is most of the report's memory).
pub fn first_chip_report(sim: &trnsim_kernel::Simulation) -> StatsReport {
    let (report, dropped) = sim.report_where(&|owner| !internal_of_other_chip(owner));
    with_left_out_note(report, dropped)
}

/// Whether [`first_chip_report`] keeps the figures of the link called `name`: a run reported
/// that way tells its builder so ([`trnsim_kernel::SimBuilder::keep_link_stats_where`]), and
/// the other chips' internal links keep no statistics at all.
pub fn first_chip_keeps_link(name: &str) -> bool {
    !internal_of_other_chip(name)
}

/// Whether a partitioned run of whole chips reports owner `owner` at all: not the SBUF/PSUM
/// unit, DMA block or semaphore unit of a chip other than the first (the bulk of a chip's
/// statistics), which [`keep_first_chip`] would leave out and no headline or check reads; a
/// partition counts them as left out instead. Engines (a headline reads the tensor engines'
/// and the merged run is checked for unfinished streams), HBM stacks and nodes are reported.
pub fn partition_reports(owner: &str) -> bool {
    !(internal_of_other_chip(owner) && (owner.ends_with(".sbuf") || owner.ends_with(".dma") || owner.ends_with(".sem")))
}

/// An owner of chip 1 or later whose figures [`keep_first_chip`] leaves out.
fn internal_of_other_chip(owner: &str) -> bool {
    let name = owner.strip_prefix("link:").unwrap_or(owner);
    let Some(rest) = name.strip_prefix("chip") else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest[..digits].bytes().all(|b| b == b'0') {
        return false;
    }
    // "chip003.nc0..." or "chip003.hbm1...": inside the chip; "chip003.tx...": fabric.
    let after = &rest[digits..];
    after.starts_with(".nc") || after.starts_with(".hbm")
}

fn with_left_out_note(mut out: StatsReport, dropped: u64) -> StatsReport {
    let mut note = std::collections::BTreeMap::new();
    note.insert("owners_left_out_other_chips".to_string(), trnsim_kernel::StatValue::Int(dropped));
    out.owners.insert("results".to_string(), note);
    out
}

/// Runs a partitionable system (see [`crate::parallel`]) serially.
pub fn run_partitionable(name: &str, opts: RunOpts) -> Result<BenchResult, String> {
    let sys = crate::parallel::system(name, opts.order)?;
    // Components only (no link tracks), as partitioned runs trace: the traces then match.
    let trace = opts.trace.map(|(sink, _)| (sink, TraceOptions::default()));
    let (stats, wall_s) = sys.run_serial(trace)?;
    let headline = sys.headline(&stats)?;
    let sim_s = stats.int("kernel", "sim_time_ps").unwrap_or(0) as f64 * 1e-12;
    let ticks = stats.int("kernel", "ticks").unwrap_or(0) as f64;
    let speed = Speed {
        wall_s,
        cpu_s: 0.0,
        slowdown: if sim_s > 0.0 { wall_s / sim_s } else { 0.0 },
        ticks_per_s: ticks / wall_s.max(1e-9),
    };
    Ok(BenchResult { name: name.into(), headline, stats, speed })
}

/// Runs the ring for `cycles` cycles and checks its token invariant.
pub fn run_ring(name: &str, p: RingParams, cycles: u64, opts: RunOpts) -> Result<BenchResult, String> {
    let mut sim = ring::build(p, SimOptions { tick_order: opts.order, ..SimOptions::default() })?;
    if let Some((sink, topts)) = opts.trace {
        sim.attach_trace(sink, &topts);
    }
    let limit = sim.clock(ClockId::first()).cycles_to_dur(trnsim_kernel::Cycles(cycles));
    let (_, speed) = drive(&mut sim, limit, opts.progress).map_err(|e| e.to_string())?;
    sim.finish_trace().map_err(|e| e.to_string())?;
    let (hops, count, sum) = ring::tally(&mut sim)?;
    let t = u64::from(p.tokens);
    let expect = (t * t.saturating_sub(1) / 2).wrapping_add(hops);
    if count != t {
        return Err(format!("{name}: {count} tokens left in the ring, {t} expected: a token was lost or duplicated"));
    }
    if sum != expect {
        return Err(format!("{name}: token checksum {sum} != T(T-1)/2 + hops = {expect}: a token was lost, duplicated or mis-incremented"));
    }
    let headline = vec![
        ("cycles".to_string(), cycles as f64),
        ("hops".to_string(), hops as f64),
        ("hops_per_cycle".to_string(), hops as f64 / cycles as f64),
    ];
    Ok(BenchResult { name: name.into(), headline, stats: sim.report(), speed })
}

/// A figure as printed in tables: whole numbers without decimals, others with four, `n/a`
/// for a figure that was not measured (NaN).
pub fn fmt_figure(v: f64) -> String {
    let v = v + 0.0; // -0 prints as 0
    if v.is_nan() {
        "n/a".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::keep_first_chip;
    use std::collections::BTreeMap;
    use trnsim_kernel::{StatValue, StatsReport};

    #[test]
    fn keep_first_chip_drops_only_other_chips_internals() {
        let mut r = StatsReport::default();
        for owner in [
            "chip000.nc0.tensor",
            "link:chip000.nc0.tensor.sem -> chip000.nc0.sem.tensor.op",
            "chip003.nc1.sem",
            "chip003.hbm2",
            "link:chip012.nc7.dma.hbm3 -> chip012.hbm3.chip012.nc7.dma3.req",
            "chip003",
            "link:chip003.tx.sw064.0 -> sw064.rx.chip003.0",
            "link:chip003.done.chip003.nc0 -> chip003.nc0.sem.cc.done",
            "sw064",
            "kernel",
        ] {
            r.owners.insert(owner.to_string(), BTreeMap::from([("x".to_string(), StatValue::Int(1))]));
        }
        let kept: Vec<String> = keep_first_chip(r, 0).owners.into_keys().collect();
        let dropped =
            ["chip003.nc1.sem", "chip003.hbm2", "link:chip012.nc7.dma.hbm3 -> chip012.hbm3.chip012.nc7.dma3.req"];
        for d in dropped {
            assert!(!kept.iter().any(|k| k == d), "{d} kept");
        }
        assert_eq!(kept.len(), 10 - dropped.len() + 1, "the rest kept, plus the `results` note: {kept:?}");
    }
}
