//! Microbenchmarks runnable from `trnsim run` and `trnsim bench`: their names, and the runs of
//! the partitionable systems and the ring. Each returns a result with its simulated statistics
//! and host-side speed figures ([`crate::result`], re-exported here).

pub use crate::result::{
    drive, first_chip_keeps_link, first_chip_report, fmt_figure, keep_first_chip, partition_reports, BenchResult,
    RunOpts, Speed,
};
use crate::ring::{self, RingParams};
use trnsim_kernel::{ClockId, SimOptions, TraceOptions};

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
    ("nc-matmul-bf16", "NC-v4 at full rate (no warm-up throttle): 256 back-to-back BF16 matmuls, K = M = 128, N = 512: TFLOPS vs 78.6"),
    ("nc-matmul-mxfp8", "NC-v4 at full rate (no warm-up throttle): 256 back-to-back MXFP8 matmuls, K = 512, N = 512: TFLOPS vs 314.6"),
    ("nc-matmul-8cores", "8 NC-v4 cores at full rate, 256 BF16 matmuls each: 8x one core"),
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
        "NC-v4 at full rate (no warm-up throttle), weight-stationary GEMM sweep: tensor-engine cycles and utilization beside SCALE-Sim's closed form",
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
