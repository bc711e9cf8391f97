//! The chip end to end (`trnsim run e2e-llm-layer`: 8 NC-v4 cores and 4 HBM3E stacks from
//! models/configs/system/trn3-chip.ron): its figures are within a stated tolerance of the
//! analytic estimate of docs/validation.md, its results JSON is byte-identical under a shuffled
//! tick order, and its Perfetto trace loads with a track for every engine, DMA engine, DMA queue
//! and HBM pseudo-channel it used.

use crate::common::{root, scratch, trnsim};
use serde_json::Value;
use std::path::Path;
use trnsim_traces::TraceProcessor;

/// Tolerance on simulated time, TFLOPS and HBM bandwidth against the estimate (relative).
const TOLERANCE: f64 = 0.05;
/// Tolerance on each core's tensor-engine utilization against the estimate (percentage points).
const UTIL_POINTS: f64 = 4.0;

fn run(args: &[&str], json: &Path) -> Vec<u8> {
    let out = trnsim().args(["run", "e2e-llm-layer"]).args(args).arg("--json").arg(json).current_dir(root()).output();
    let out = out.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Progress is for terminals: never in piped output.
    let both = format!("{err}{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        !both.contains("real time") && !both.contains('\r') && !both.contains('\x1b'),
        "progress in a pipe: {both}"
    );
    std::fs::read(json).unwrap()
}

/// The run in a pseudo-terminal (`script`), in a shuffled tick order: progress shows on its
/// stderr. None when `script` is missing (then the test is counted as skipped).
fn run_in_terminal(json: &Path, stdout: &Path) -> Option<(String, Vec<u8>)> {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        return None;
    }
    let exe = trnsim().get_program().to_string_lossy().into_owned();
    let cmd =
        format!("'{exe}' run e2e-llm-layer --order shuffled:7 --json '{}' > '{}'", json.display(), stdout.display());
    let out = std::process::Command::new("script").args(["-qec", &cmd, "/dev/null"]).current_dir(root()).output();
    let out = out.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), std::fs::read(json).unwrap()))
}

fn headline(json: &[u8]) -> Vec<(String, f64)> {
    let v: Value = serde_json::from_slice(json).unwrap();
    let h = v["benchmarks"][0]["headline"].as_array().unwrap();
    h.iter().map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_f64().unwrap())).collect()
}

#[test]
fn e2e_llm_layer_is_deterministic_and_within_tolerance_of_the_estimate() {
    let dir = scratch("e2e_llm_layer_figures");
    let a = run(&[], &dir.join("structural.json"));
    // The shuffled tick order runs in a terminal (progress shown) when `script` is there, piped
    // otherwise: either way its results JSON must be the structural run's, byte for byte.
    match run_in_terminal(&dir.join("terminal.json"), &dir.join("terminal.out")) {
        Some((tty, b)) => {
            assert!(tty.contains("simulated ") && tty.contains("x real time"), "no progress on a terminal: {tty:?}");
            assert!(a == b, "results JSON differs between structural (piped) and shuffled:7 (terminal) runs");
            let stdout = std::fs::read_to_string(dir.join("terminal.out")).unwrap();
            assert!(!stdout.contains("real time"), "progress on stdout: {stdout}");
        }
        None => {
            let b = run(&["--order", "shuffled:7"], &dir.join("shuffled.json"));
            assert!(a == b, "results JSON differs between structural and shuffled:7 tick orders");
            trnsim_traces::skip_test(&root(), "`script` (util-linux) is missing: cannot run in a pseudo-terminal");
        }
    }
    let h = headline(&a);
    let f = |name: &str| h.iter().find(|x| x.0 == name).unwrap_or_else(|| panic!("no figure {name}")).1;
    let chip = trnsim_system::chip::trn3().unwrap();
    let shape = trnsim_benchmarks::e2e::SHAPE;
    assert_eq!(f("hbm_bytes") as u64, 8 * shape.hbm_bytes(), "W and X read once, Y written once, per core");
    assert!((f("peak_tflops") - 8.0 * 78.6432).abs() < 1e-3);
    for (sim, est) in
        [("sim_time_ns", "analytic_sim_time_ns"), ("tflops", "analytic_tflops"), ("hbm_GBps", "analytic_hbm_GBps")]
    {
        let (s, e) = (f(sim), f(est));
        assert!((s / e - 1.0).abs() <= TOLERANCE, "{sim} = {s:.1}, analytic {e:.1}: off by more than {TOLERANCE}");
    }
    let est = trnsim_benchmarks::e2e::estimate(&shape, &chip);
    assert!((est.total_ns() - f("analytic_sim_time_ns")).abs() < 1e-6);
    for i in 0..8 {
        let u = f(&format!("nc{i}_tensor_utilization_pct"));
        let e = f("analytic_tensor_utilization_pct");
        assert!((u - e).abs() <= UTIL_POINTS, "nc{i}: tensor utilization {u:.1} %, analytic {e:.1} %");
    }
    // The flops are all there: every core did its share.
    let flops = f("tflops") * f("sim_time_ns") * 1e3;
    assert!((flops / (8.0 * shape.flops() as f64) - 1.0).abs() < 1e-9, "{flops}");
    // Written as a workload (`trnsim workload bench`) and run with its GEMM as NeuronCore
    // programs, the layer takes the benchmark's own time.
    let file = dir.join("e2e.ron");
    let out = trnsim().args(["workload", "bench", "e2e-llm-layer", "-o"]).arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let wl = dir.join("workload.json");
    let out = trnsim().args(["run", "--compute", "cycle", "--workload"]).arg(&file).arg("--json").arg(&wl).output();
    let out = out.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(&wl).unwrap()).unwrap();
    let figures = v["points"][0]["figures"].as_array().unwrap();
    let step_us = figures.iter().find(|p| p[0] == "step_us").and_then(|p| p[1].as_f64()).unwrap();
    let bench = f("sim_time_ns");
    assert!((step_us * 1e3 - bench).abs() < 1e-6 * bench, "workload {step_us} us, benchmark {bench} ns");
}

/// The layer's program on a quarter of the benchmark's FFN width and half its model width (an
/// eighth of its trace: the trace processor's load is most of this test's time), on the whole
/// chip: every engine, DMA engine and pseudo-channel is still used.
const TRACED: trnsim_benchmarks::e2e::Shape =
    trnsim_benchmarks::e2e::Shape { d_model: 512, d_ff_per_core: 512, ..trnsim_benchmarks::e2e::SHAPE };

#[test]
fn e2e_llm_layer_trace_loads_with_a_track_per_engine_queue_and_pseudo_channel() {
    let dir = scratch("e2e_llm_layer_trace");
    let trace = dir.join("e2e.pftrace");
    let chip = trnsim_system::chip::trn3().unwrap();
    let sink = trnsim_traces::create_sink(&trace).unwrap();
    let order = trnsim_kernel::TickOrder::Structural;
    trnsim_benchmarks::e2e::run_program(&chip, &TRACED, "gelu", order, Some((sink, Default::default()))).unwrap();
    let sql = [
        // 0: compute engines with a stream, per core
        "select count(*) from track t join track p on t.parent_id = p.id where p.name glob 'nc[0-7]' and t.name in ('Sync Engine - Row 0', 'Tensor Engine - Row 0', 'Scalar Engine - Row 0', 'GpSimd Engine - Row 0')",
        // 1: DMA engines, per core
        "select count(*) from track t join track p on t.parent_id = p.id where p.name glob 'nc[0-7]' and t.name glob 'DMA Engine [0-9]* - Row 0'",
        // 2: queue tracks the run used: (core, queue) pairs with a dma slice, lanes folded
        "select count(distinct t.parent_id || ':' || substr(t.name || ' #', 1, instr(t.name || ' #', ' #') - 1)) from slice s join track t on s.track_id = t.id where s.name = 'dma'",
        // 3: pseudo-channel command tracks, per stack
        "select count(*) from track t join track p on t.parent_id = p.id where p.name glob 'hbm[0-3]' and t.name glob 'ch*.pc* commands'",
        // 4: pseudo-channels that issued commands (lanes folded)
        "select count(distinct t.parent_id || ':' || substr(t.name, 1, instr(t.name, ' ') - 1)) from slice s join track t on s.track_id = t.id join track p on t.parent_id = p.id where p.name glob 'hbm[0-3]' and t.name glob 'ch*.pc* commands*'",
        // 5-8: slices per instruction kind
        "select count(*) from slice where name = 'matmul'",
        "select count(*) from slice where name = 'ldweights'",
        "select count(*) from slice where name = 'activation'",
        "select count(*) from slice where name = 'dma'",
        // 9: DMA engines that moved packets
        "select count(distinct t.parent_id || ':' || substr(t.name || ' - Row', 1, instr(t.name || ' - Row', ' - Row') - 1)) from slice s join track t on s.track_id = t.id where s.name = 'packet'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    let one = |i: usize| rows[i][0][0].as_i64().unwrap();
    let s = TRACED;
    let (chunks, kb) = (i64::from(s.d_ff_per_core / 128), i64::from(s.d_model / 128));
    assert_eq!(one(0), 8 * 4, "a track per engine with a stream: sync, tensor, scalar, gpsimd on 8 cores");
    assert_eq!(one(1), 8 * 16, "a track per DMA engine: 16 on each of 8 cores");
    assert_eq!(one(2), 8 * 2, "dma slices on the tracks of the queues used: q0 (loads) and q1 (stores) per core");
    assert_eq!(one(3), 4 * 32, "a command track per pseudo-channel: 32 on each of 4 stacks");
    assert_eq!(one(4), 4 * 32, "every pseudo-channel of every stack served the run");
    assert_eq!(one(5), 8 * chunks * kb, "a slice per matmul");
    assert_eq!(one(6), 8 * chunks * kb, "a slice per ldweights");
    assert_eq!(one(7), 8 * chunks, "a GELU per chunk");
    let slabs = chunks / i64::from(s.chunks_per_slab);
    assert_eq!(one(8), 8 * (slabs + kb + chunks), "a dma slice per weight slab, X block and Y chunk");
    assert_eq!(one(9), 8 * 16, "every DMA engine moved packets");
}
