//! The multi-chip end-to-end runs (`tp-matmul-*`, `moe-alltoall-144`: whole chips joined by
//! the per-node fabric, collectives triggered by the cores' semaphores), on small shapes:
//! the tensor-parallel all-reduces overlap the compute exactly as the pipeline model says, an
//! MoE step conserves tokens and bytes, and both are identical under another tick order.

use trnsim_benchmarks::moe::{self, MoeShape};
use trnsim_benchmarks::tp::{self, TpShape};
use trnsim_fabric::system::ChipNode;
use trnsim_fabric::topo::{self, Topology};
use trnsim_kernel::TickOrder;

use crate::kernel_random_graphs_are_order_independent::SharedBuf;

fn preset(name: &str) -> Topology {
    topo::load(&topo::presets_dir().join(format!("{name}.ron"))).unwrap()
}

/// A small TP run: 4 chips of Gen1, 128 tokens, d_in 1024 (256 per chip), d_out 4096 in 4
/// all-reduces of 256 KiB.
const TP: TpShape = TpShape { tokens: 128, d_in: 1024, d_out: 4096, phases: 4 };

#[test]
fn tp_allreduces_overlap_the_compute_as_the_pipeline_model_says() {
    let chip = trnsim_system::chip::trn3().unwrap();
    let t = preset("trn3-gen1-nl32x2");
    let r = tp::run(&chip, &t, &TP, 4, TickOrder::Structural, None, &|_| true).unwrap();
    let h = tp::headline(&r, &chip, &t, &TP, 4).unwrap();
    let f = |name: &str| h.iter().find(|x| x.0 == name).unwrap_or_else(|| panic!("no figure {name}")).1;
    // The collective engine adds no HBM traffic, so the compute ends as it does alone (the
    // doorbell travels 4 fast cycles).
    let (ce, ca) = (f("compute_end_ns"), f("compute_alone_ns"));
    assert!((ce - ca).abs() < 5.0, "compute ends at {ce} ns joined, {ca} ns alone");
    // The all-reduces end where the pipeline model puts them (each starts when its chunks are
    // stored everywhere and the previous one is done, then takes what it takes alone); chips
    // finish a phase a few packet times apart, hence the 1 %.
    let (end, model) = (f("allreduce_end_ns"), f("overlap_model_ns"));
    assert!((end / model - 1.0).abs() < 0.01, "all-reduces end at {end} ns, the model says {model} ns");
    // Overlap is real: the run is shorter than compute + all-reduces back to back, and not
    // shorter than either alone.
    let (total, comm) = (f("sim_time_ns"), f("allreduce_alone_ns"));
    assert!(total < ca + comm, "{total} ns: no overlap (compute {ca} + all-reduce {comm})");
    assert!(total >= ca.max(comm), "{total} ns is shorter than compute {ca} or all-reduce {comm} alone");
    assert!(f("first_phase_ready_ns") < ca, "the first all-reduce must be triggered before compute ends");
    // Every core's flops were done.
    let flops = f("tflops") * total * 1e3;
    assert!((flops / TP.flops() - 1.0).abs() < 1e-9);
}

#[test]
fn tp_run_is_identical_under_a_shuffled_tick_order() {
    let chip = trnsim_system::chip::trn3().unwrap();
    let t = preset("trn3-gen1-nl32x2");
    // Traced into memory: the suite's determinism check (`make test`) leaves `tp-matmul-4` out,
    // so this test is where a multi-chip run's trace bytes are compared.
    let traced = |order| {
        let buf = SharedBuf::default();
        let sink = Box::new(trnsim_traces::PerfettoWriter::new(buf.clone(), "perfetto"));
        let r = tp::run(&chip, &t, &TP, 4, order, Some((sink, Default::default())), &|_| true).unwrap();
        (serde_json::to_string(&r.sim.report()).unwrap(), buf.take())
    };
    let (ja, ta) = traced(TickOrder::Structural);
    let (jb, tb) = traced(TickOrder::Shuffled(11));
    assert!(ja == jb, "statistics differ between structural and shuffled:11 tick orders");
    assert!(ta.len() > 1000, "the trace is empty");
    assert!(ta == tb, "trace bytes differ between structural and shuffled:11 tick orders");
}

/// A small MoE step on the 16-chip Trn2 server torus.
const MOE: MoeShape =
    MoeShape { tokens: 32, d_model: 512, top_k: 2, experts_per_chip: 2, capacity_factor: 1.5, skew: 1.0, seed: 3 };

#[test]
fn moe_step_conserves_tokens_and_bytes_and_runs_its_phases_in_order() {
    let chip = trnsim_system::chip::trn3().unwrap();
    let t = preset("trn2-server-4x4");
    let r = moe::run(&chip, &t, &MOE, TickOrder::Structural, None, &|_| true).unwrap();
    let n = t.chips;
    let rt = &r.routing;
    // Tokens: every assignment is either taken by an expert within its capacity or dropped.
    let taken: u32 = rt.per_expert.iter().sum();
    assert_eq!(taken + rt.dropped, n as u32 * MOE.tokens * MOE.top_k);
    assert!(rt.per_expert.iter().all(|&x| x <= rt.capacity));
    assert!(rt.dropped > 0, "skew 1.0 at capacity factor 1.5 must drop some tokens");
    let by_chip: Vec<u32> = (0..n).map(|d| (0..n).map(|c| rt.sent[c][d]).sum()).collect();
    for (d, &got) in by_chip.iter().enumerate() {
        assert_eq!(got, rt.per_expert[2 * d] + rt.per_expert[2 * d + 1], "chip {d} receives its experts' tokens");
    }
    // Bytes: each chip receives its remote tokens in dispatch and its own tokens' results back
    // in combine, d_model x 2 B each.
    let tok = u64::from(MOE.d_model) * 2;
    let report = r.sim.report();
    for c in 0..n {
        let name = trnsim_fabric::system::node_name(&t, c);
        let got = report.int(&name, "bytes_received").unwrap();
        let dispatch: u64 = (0..n).filter(|&s| s != c).map(|s| u64::from(rt.sent[s][c])).sum();
        let combine: u64 = (0..n).filter(|&d| d != c).map(|d| u64::from(rt.sent[c][d])).sum();
        assert_eq!(got, (dispatch + combine) * tok, "{name}");
    }
    // Phases in order on every chip: dispatch, then the experts' stores, then combine.
    for &id in &r.engines {
        let node = r.sim.component::<ChipNode>(id).unwrap();
        let ph = node.phase_done_ps();
        let (dispatch, combine) = (ph[0].unwrap(), ph[1].unwrap());
        let stored = node.last_doorbell_ps().unwrap();
        assert!(dispatch < stored && stored < combine, "{dispatch} < {stored} < {combine}");
        assert!(node.phase_ready_ps()[1].unwrap() >= dispatch, "combine cannot be ready before the experts ran");
    }
    let h = moe::headline(&r, &chip, &MOE).unwrap();
    let f = |name: &str| h.iter().find(|x| x.0 == name).unwrap().1;
    assert_eq!(f("tokens_dropped") as u32, rt.dropped);
    assert!(f("expert_imbalance") >= 1.0);
}

#[test]
fn moe_step_is_identical_under_a_shuffled_tick_order() {
    let chip = trnsim_system::chip::trn3().unwrap();
    let t = preset("trn2-server-4x4");
    let a = moe::run(&chip, &t, &MOE, TickOrder::Structural, None, &|_| true).unwrap();
    let b = moe::run(&chip, &t, &MOE, TickOrder::Shuffled(5), None, &|_| true).unwrap();
    let (ja, jb) = (serde_json::to_string(&a.sim.report()).unwrap(), serde_json::to_string(&b.sim.report()).unwrap());
    assert!(ja == jb, "statistics differ between structural and shuffled:5 tick orders");
}

#[test]
fn tp_trace_loads_with_a_track_per_engine_queue_pseudo_channel_and_link_used() {
    use crate::common::{root, scratch};
    use trnsim_traces::TraceProcessor;
    let dir = scratch("multichip_tp_trace");
    let path = dir.join("tp.pftrace");
    let chip = trnsim_system::chip::trn3().unwrap();
    let t = preset("trn3-gen1-nl32x2");
    let sink = trnsim_traces::create_sink(&path).unwrap();
    let r = tp::run(&chip, &t, &TP, 4, TickOrder::Structural, Some((sink, Default::default())), &|_| true).unwrap();
    // Fabric links that carried packets, from the kernel's link statistics.
    let report = r.sim.report();
    let used_links = report
        .owners
        .iter()
        .filter(|(owner, st)| {
            let Some(name) = owner.strip_prefix("link:") else { return false };
            let node = name.split('.').next().unwrap_or("");
            let fabric = (node.starts_with("chip") || node.starts_with("sw")) && name[node.len()..].starts_with(".tx.");
            fabric && matches!(st.get("msgs"), Some(trnsim_kernel::StatValue::Int(n)) if *n > 0)
        })
        .count() as i64;
    assert!(used_links >= 4 * 3, "4 chips exchanging: at least 3 links out of each chip, got {used_links}");
    let sql = [
        // 0: compute engines with a stream, per core, per chip
        "select count(*) from track t join track p on t.parent_id = p.id join track c on p.parent_id = c.id where c.name glob 'chip00[0-3]' and p.name glob 'nc[0-7]' and t.name in ('Tensor Engine - Row 0', 'Scalar Engine - Row 0', 'Sync Engine - Row 0', 'GpSimd Engine - Row 0')",
        // 1: DMA queues used: (chip, core, queue) with a dma slice, lanes folded
        "select count(distinct t.parent_id || ':' || substr(t.name || ' #', 1, instr(t.name || ' #', ' #') - 1)) from slice s join track t on s.track_id = t.id where s.name = 'dma'",
        // 2: HBM pseudo-channels with bandwidth counters, per stack, per chip
        "select count(distinct t.id) from counter k join track t on k.track_id = t.id join track p on t.parent_id = p.id where p.name glob 'hbm[0-3]' and t.name glob 'ch*.pc* bandwidth'",
        // 3: fabric link tracks with packet slices
        "select count(distinct t.id) from slice s join track t on s.track_id = t.id where s.name = 'packet' and t.name glob 'tx.*'",
        // 4: collective phases on the collective engines (one slice per all-reduce per chip)
        "select count(*) from slice s join track t on s.track_id = t.id where s.name = 'collective' and t.name not glob 'CC-core*'",
        // 5: slices that never end
        "select count(*) from slice where dur < 0",
        // 6: the cores' CC-core rows (one slice per all-reduce per core)
        "select count(*) from slice s join track t on s.track_id = t.id where s.name = 'collective' and t.name glob 'CC-core*'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&path, &sql).unwrap_or_else(|e| panic!("{e}"));
    let one = |i: usize| rows[i][0][0].as_i64().unwrap();
    assert_eq!(one(0), 4 * 8 * 4, "sync, tensor, scalar, gpsimd on 8 cores of 4 chips");
    assert_eq!(one(1), 4 * 8 * 2, "q0 (loads) and q1 (stores) on every core of every chip");
    assert_eq!(one(2), 4 * 4 * 32, "every pseudo-channel of every stack of every chip");
    assert_eq!(one(3), used_links, "a packet track for every fabric link that carried traffic");
    assert_eq!(one(4), 4 * i64::from(TP.phases), "a collective slice per all-reduce per chip");
    assert_eq!(one(5), 0);
    assert_eq!(one(6), 4 * 8 * i64::from(TP.phases), "a CC-core slice per all-reduce per core");
}

/// Whole chips split by chip (each partition makes only its own chips' engines, memories and
/// HBM stacks) run as they do serially: statistics identical, and the headline the serial
/// run's; a rule that would split a chip is refused, naming the chip.
#[test]
fn tp_run_partitioned_by_chip_equals_the_serial_run() {
    use trnsim_benchmarks::parallel::tp_system;
    use trnsim_kernel::PartitionRule;
    let chip = trnsim_system::chip::trn3().unwrap();
    let t = preset("trn3-gen1-nl32x2");
    let sys = tp_system(chip.clone(), t.clone(), TP, 4, TickOrder::Structural).unwrap().full_reports();
    let (serial, _) = sys.run_serial(None).unwrap();
    let rule = sys.default_rule(2);
    assert_eq!(rule, PartitionRule::ByNameSinglesAttached { depth: 1 });
    let (run, _) = sys.run_parallel(2, &rule, None).unwrap();
    assert!(run.plan.cut.len() >= 4, "only {} links cut", run.plan.cut.len());
    let json = |r: &trnsim_kernel::StatsReport| serde_json::to_string(r).unwrap();
    assert!(json(&serial) == json(&run.report), "statistics differ between serial and 2 partitions by chip");
    let r = tp::run(&chip, &t, &TP, 4, TickOrder::Structural, None, &|_| true).unwrap();
    assert_eq!(sys.headline(&run.report).unwrap(), tp::headline(&r, &chip, &t, &TP, 4).unwrap());
    let err = sys.run_parallel(3, &PartitionRule::ByName { depth: 2 }, None).unwrap_err();
    assert!(err.starts_with("--partition by-name:2: splits chip chip"), "{err}");
    let sink = Box::new(trnsim_traces::PerfettoWriter::new(SharedBuf::default(), "perfetto"));
    let err = sys.run_parallel(2, &rule, Some((sink, Default::default()))).unwrap_err();
    assert!(err.contains("not traced yet"), "{err}");
}

/// An MoE step split by chip runs as it does serially: statistics identical, the headline
/// read from the merged statistics the serial run's (read from its components), the same
/// on three partitions as on two; a rule that would split a chip is refused.
#[test]
fn moe_run_partitioned_by_chip_equals_the_serial_run() {
    use trnsim_benchmarks::parallel::moe_system;
    use trnsim_kernel::PartitionRule;
    let chip = trnsim_system::chip::trn3().unwrap();
    let t = preset("trn2-server-4x4");
    let filtered = moe_system(chip.clone(), t.clone(), MOE, TickOrder::Structural).unwrap();
    let sys = moe_system(chip.clone(), t.clone(), MOE, TickOrder::Structural).unwrap().full_reports();
    let (serial, _) = sys.run_serial(None).unwrap();
    let rule = sys.default_rule(3);
    assert_eq!(rule, PartitionRule::ByNameSinglesAttached { depth: 1 });
    let r = moe::run(&chip, &t, &MOE, TickOrder::Structural, None, &|_| true).unwrap();
    let want = moe::headline(&r, &chip, &MOE).unwrap();
    let json = |r: &trnsim_kernel::StatsReport| serde_json::to_string(r).unwrap();
    for parts in [2, 3] {
        let (run, _) = sys.run_parallel(parts, &rule, None).unwrap();
        assert!(run.plan.cut.len() >= 16, "only {} links cut", run.plan.cut.len());
        assert!(json(&serial) == json(&run.report), "statistics differ between serial and {parts} partitions by chip");
        assert_eq!(sys.headline(&run.report).unwrap(), want, "{parts} partitions");
        // Partitions that report only what the result keeps or the headline reads give the
        // same result, the count of owners left out included.
        let (part, _) = filtered.run_parallel(parts, &rule, None).unwrap();
        assert!(part.report.owners.len() < run.report.owners.len(), "the filter left nothing out");
        assert_eq!(filtered.headline(&part.report).unwrap(), want, "{parts} partitions, filtered");
        let kept =
            |r: trnsim_kernel::ParallelRun| json(&trnsim_benchmarks::suite::keep_first_chip(r.report, r.left_out));
        assert!(kept(part) == kept(run), "{parts} partitions: the filtered result differs");
    }
    let err = sys.run_parallel(3, &PartitionRule::ByName { depth: 2 }, None).unwrap_err();
    assert!(err.starts_with("--partition by-name:2: splits chip chip"), "{err}");
}

/// A named run of whole chips (`trnsim run tp-matmul-8`, `moe-alltoall-144`, here in fast
/// fidelity on smaller fabrics) simulates in windows on its own thread, partitions of whole
/// chips taking turns; its result (headline and statistics JSON) is the serial run's (a traced
/// run is serial), and the same under another tick order.
#[test]
fn named_runs_in_windows_equal_the_serial_runs() {
    use trnsim_benchmarks::parallel::{moe_system, run_in_windows, tp_system};
    let mut chip = trnsim_system::chip::trn3().unwrap();
    chip.spec.hbm.fidelity = trnsim_mem::hbm::Fidelity::Fast;
    chip.dma.bulk = true;
    let json = |r: &trnsim_benchmarks::suite::BenchResult| {
        (serde_json::to_string(&r.headline).unwrap(), serde_json::to_string(&r.stats).unwrap())
    };
    let traced = || {
        Some((Box::new(trnsim_traces::PerfettoWriter::new(SharedBuf::default(), "perfetto")) as _, Default::default()))
    };
    let t = preset("trn3-gen1-nl32x2");
    let sys = tp_system(chip.clone(), t.clone(), tp::SHAPE, 8, TickOrder::Structural).unwrap();
    assert_eq!(sys.window_parts(), Some(2), "8 fast chips, 4 a partition");
    let windows = run_in_windows("tp-matmul-8", &sys).unwrap().expect("splits by chip");
    let serial = tp::run_on("tp-matmul-8", &chip, &t, TickOrder::Structural, traced(), None).unwrap();
    assert!(json(&windows) == json(&serial), "tp-matmul-8: the run in windows differs from the serial run");
    let named = tp::run_on("tp-matmul-8", &chip, &t, TickOrder::Shuffled(3), None, None).unwrap();
    assert!(json(&named) == json(&serial), "tp-matmul-8: a named run (in windows, shuffled) differs");
    // Links between chips shorter than the window floor: no windows (the caller runs serially).
    let mut short = t.clone();
    short.edges.iter_mut().for_each(|e| e.latency_ps = 500);
    let sys = tp_system(chip.clone(), short, tp::SHAPE, 8, TickOrder::Structural).unwrap();
    assert!(run_in_windows("tp-matmul-8", &sys).unwrap().is_none(), "windows of 0.5 ns");
    let t = preset("trn2-server-4x4");
    let sys = moe_system(chip.clone(), t.clone(), moe::SHAPE, TickOrder::Structural).unwrap();
    assert_eq!(sys.window_parts(), Some(4), "16 fast chips, 4 a partition");
    let windows = moe::run_on("moe-alltoall-144", &chip, &t, TickOrder::Structural, None).unwrap();
    let serial = moe::run_on("moe-alltoall-144", &chip, &t, TickOrder::Structural, traced()).unwrap();
    assert!(json(&windows) == json(&serial), "moe: the run in windows differs from the serial run");
    // Four fast chips run serially (their state fits the cache as it is); in cycle fidelity
    // a chip a partition, or three for the MoE step.
    let few = tp_system(chip.clone(), preset("trn3-gen1-nl32x2"), tp::SHAPE, 4, TickOrder::Structural).unwrap();
    assert_eq!(few.window_parts(), None);
    let cycle = trnsim_system::chip::trn3().unwrap();
    let tp4 = tp_system(cycle.clone(), preset("trn3-gen1-nl32x2"), tp::SHAPE, 4, TickOrder::Structural).unwrap();
    assert_eq!(tp4.window_parts(), Some(4));
    // A chip with RTL blocks swapped in runs serially: its blocks are checked after the run.
    let mut rtl = cycle.clone();
    rtl.spec.rtl = vec!["hbm0.ch0.pc0.bank0".into()];
    let swapped = tp_system(rtl, preset("trn3-gen1-nl32x2"), tp::SHAPE, 4, TickOrder::Structural).unwrap();
    assert_eq!(swapped.window_parts(), None);
    assert_eq!(moe_system(cycle, t, moe::SHAPE, TickOrder::Structural).unwrap().window_parts(), Some(6));
}

/// A partitioned run (`trnsim run tp-matmul-4 --threads 4`) shows its progress on a terminal
/// (`script`'s pseudo-terminal), after each window, and never in piped output or on stdout;
/// its headline is the same either way. Counted as skipped when `script` is missing.
#[test]
fn a_partitioned_run_shows_progress_on_a_terminal_only() {
    use crate::common::{root, scratch, trnsim};
    let dir = scratch("partitioned_progress");
    let headline = |p: &std::path::Path| {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        v["benchmarks"][0]["headline"].clone()
    };
    let piped = dir.join("piped.json");
    let out =
        trnsim().args(["run", "tp-matmul-4", "--threads", "4", "--json"]).arg(&piped).current_dir(root()).output();
    let out = out.unwrap();
    let both = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
    assert!(out.status.success(), "{both}");
    assert!(
        !both.contains("real time") && !both.contains('\r') && !both.contains('\x1b'),
        "progress in a pipe: {both}"
    );
    if std::process::Command::new("script").arg("--version").output().is_err() {
        trnsim_traces::skip_test(&root(), "`script` (util-linux) is missing: cannot run in a pseudo-terminal");
        return;
    }
    let (tty_json, stdout) = (dir.join("tty.json"), dir.join("tty.out"));
    let exe = trnsim().get_program().to_string_lossy().into_owned();
    let cmd = format!("'{exe}' run tp-matmul-4 --threads 4 --json '{}' > '{}'", tty_json.display(), stdout.display());
    let out = std::process::Command::new("script").args(["-qec", &cmd, "/dev/null"]).current_dir(root()).output();
    let out = out.unwrap();
    let tty = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{tty}");
    assert!(tty.contains("simulated ") && tty.contains("x real time"), "no progress on a terminal: {tty:?}");
    let printed = std::fs::read_to_string(&stdout).unwrap();
    assert!(!printed.contains("real time"), "progress on stdout: {printed}");
    assert_eq!(headline(&piped), headline(&tty_json), "the headline depends on the terminal");
}
