//! One check per class of hostile input: each gives a one-line located error (exit 2) or runs
//! correctly, never a destroyed file, a crash, a hang, a memory blow-up or a wrapped number.

use crate::common::{root, scratch, trnsim};
use std::path::Path;

/// Runs trnsim with `args` in the workspace root; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Asserts a usage error (exit 2) whose first line contains `expect` (clap adds a hint line
/// to flag errors; trnsim's own errors are one line).
fn refused(args: &[&str], expect: &str) {
    let (code, _, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("error: ") && first.contains(expect), "{args:?}: expected {expect:?} in {err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

const SMALL: &str = r#"(
    seed: 7,
    clocks: [(name: "core", freq: "1GHz")],
    components: [
        (name: "src", clock: "core", kind: Source(count: 3, bytes: 64, rate: 1.0)),
        (name: "relay", clock: "core", kind: Relay(delay: 3, slots: 4)),
        (name: "sink", clock: "core", kind: Sink),
    ],
    links: [
        (from: "src.out", to: "relay.in", latency: 2, depth: 4),
        (from: "relay.out", to: "sink.in", latency: 3, depth: 4),
    ],
    run: (limit: "50us"),
)
"#;

#[test]
fn outputs_never_clobber_inputs_or_each_other() {
    let d = scratch("hostile_outputs");
    let trace = d.join("in.trace");
    std::fs::write(&trace, "0x100 READ 0\n0x200 READ 10\n").unwrap();
    refused(&["hbm", "--trace", p(&trace), "--cmd-trace", p(&trace)], "same file as input --trace");
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "0x100 READ 0\n0x200 READ 10\n");
    let cfg = d.join("c.json");
    std::fs::write(&cfg, SMALL).unwrap();
    refused(&["run", "--config", p(&cfg), "--trace", p(&cfg)], "same file as input --config");
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), SMALL);
    // The same file by another spelling.
    let dotted = d.join(".").join("c.json");
    refused(&["run", "--config", p(&cfg), "--json", p(&dotted)], "same file as input --config");
    let x = d.join("x.json");
    refused(&["run", "demo", "--trace", p(&x), "--json", p(&x)], "--json");
    assert!(!x.exists(), "nothing was written");
    refused(&["--profile", p(&d), "run", "demo"], "is a directory");
    refused(&["core", "models/programs/softmax_rows.asm", "--trace", "models/programs/softmax_rows.asm"], "same file");
    // Outputs appear complete under their names, with no temporary file left behind.
    let (code, _, err) = run(&["run", "demo", "--trace", p(&d.join("t.json")), "--json", p(&d.join("r.json"))]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<String> =
        std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("partial")), "{names:?}");
    let body = std::fs::read_to_string(d.join("r.json")).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&body).is_ok());
}

/// Writes `SMALL` with `from` replaced by `to`; returns its path.
fn variant(d: &Path, name: &str, from: &str, to: &str) -> String {
    assert!(SMALL.contains(from), "{from}");
    let f = d.join(name);
    std::fs::write(&f, SMALL.replacen(from, to, 1)).unwrap();
    f.display().to_string()
}

#[test]
fn numbers_out_of_range_are_located_errors_not_crashes_or_wraps() {
    let d = scratch("hostile_ranges");
    let deep = variant(&d, "deep.ron", "latency: 3, depth: 4", "latency: 3, depth: 4294967295");
    refused(&["config", "check", &deep], "deep.ron:11:56: links[1].depth");
    refused(&["run", "--config", &deep], "links[1].depth: 4294967295 is out of range (allowed: 1..=1048576");
    let delay = variant(&d, "delay.ron", "delay: 3", "delay: 18446744073709551615");
    refused(&["config", "check", &delay], "components[1].kind.delay: 18446744073709551615 is out of range");
    let freq = variant(&d, "freq.ron", "\"1GHz\"", "\"600GHz\"");
    refused(&["config", "check", &freq], "freq.ron:3:35: clocks[0].freq:");
    let dup = variant(&d, "dup.ron", "(name: \"sink\"", "(name: \"src\"");
    refused(&["config", "check", &dup], "dup.ron:7:16: components[2].name: duplicate component name \"src\"");
    let chip = std::fs::read_to_string(root().join("models/configs/system/trn3-chip.ron")).unwrap();
    let cf = d.join("chip.ron");
    std::fs::write(&cf, chip.replacen("cores: 8,", "cores: 2147483648,", 1)).unwrap();
    refused(&["config", "check", p(&cf)], "cores: 2147483648 is out of range (allowed: 1..=64)");
    refused(&["bench", "nc-gemm", "--k", "536870912"], "must fit in 96 KiB of SBUF");
    let ring = ["bench", "kernel-ring", "--modules", "1000000", "--depth", "1000000", "--tokens", "4000000000"];
    refused(&ring, "GiB of memory, more than the");
    let topo = std::fs::read_to_string(root().join("models/configs/fabric/trn2-server-4x4.ron")).unwrap();
    let tf = d.join("torus.ron");
    let huge = topo.replacen("dims: [4, 4]", "dims: [100000]", 1).replacen(
        "links_per_neighbor: [4, 4]",
        "links_per_neighbor: [4]",
        1,
    );
    std::fs::write(&tf, huge).unwrap();
    refused(&["config", "check", p(&tf)], "kind.dims: [100000] is out of range");
    let hbm = d.join("far.trace");
    std::fs::write(&hbm, "0x100 READ 0\n0xffffffffffff0 READ 1\n").unwrap();
    refused(
        &["hbm", "--trace", p(&hbm)],
        "far.trace:2:1: field `address`: 0xffffffffffff0 is past the memory's capacity",
    );
}

#[test]
fn long_legal_silences_are_not_deadlocks_and_windows_take_plain_quantities() {
    let d = scratch("hostile_windows");
    // 1 MiB packets on a 1 B/cycle link: each takes ~1 ms to serialize.
    let big = variant(&d, "big.ron", "bytes: 64", "bytes: 1048576");
    let text = std::fs::read_to_string(&big)
        .unwrap()
        .replacen("latency: 2, depth: 4)", "latency: 2, depth: 4, bandwidth: \"1B/cycle\")", 1)
        .replacen("50us", "10ms", 1);
    std::fs::write(&big, text).unwrap();
    let (code, out, err) = run(&["run", "--config", &big]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.contains("packets_delivered") && l.trim_end().ends_with(" 3")), "{out}");
    // A 200 us link latency.
    let slow = variant(&d, "slow.ron", "latency: 3, depth: 4", "latency: 200000, depth: 4");
    let text = std::fs::read_to_string(&slow).unwrap().replacen("50us", "1ms", 1);
    std::fs::write(&slow, text).unwrap();
    let (code, out, err) = run(&["run", "--config", &slow]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.contains("packets_delivered") && l.trim_end().ends_with(" 3")), "{out}");
    let w = variant(&d, "w.ron", "limit: \"50us\"", "limit: \"50us\", deadlock_window: \"1ms\"");
    let (code, _, err) = run(&["config", "check", &w]);
    assert_eq!(code, 0, "{err}");
    let short = variant(&d, "short.ron", "limit: \"50us\"", "limit: \"50us\", deadlock_window: \"1ns\"");
    refused(&["config", "check", &short], "run.deadlock_window: 1ns is shorter than the longest legal silence");
    // A DMA command waits out its start latency with nothing moving: a long one (the range
    // allows up to 1 ms) is a slow chip, not a deadlock.
    let (code, out, err) =
        run(&["run", "e2e-llm-layer", "--fidelity", "fast", "--set", "chip.dma.start_latency=500us"]);
    assert_eq!(code, 0, "{err}");
    let ns: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("e2e-llm-layer")?.trim().strip_prefix("sim_time_ns")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sim_time_ns in {out}"));
    assert!(ns > 1_000_000.0, "two rounds of 500 us start latencies at least: {ns} ns");
    refused(
        &["run", "e2e-llm-layer", "--set", "chip.dma.start_latency=2ms"],
        "dma.start_latency: 2ms is out of range (allowed: 0ns..=1ms)",
    );
}

#[test]
fn programs_that_never_halt_stop_at_max_sim_time_with_their_line() {
    let d = scratch("hostile_loop");
    let f = d.join("loop.asm");
    std::fs::write(&f, ".engine vector\nloop:\n    sem_inc s1, 1\n    branch always loop\n    halt\n").unwrap();
    let (code, _, err) = run(&["core", p(&f), "--max-sim-time", "20us"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("loop.asm:") && err.contains("nc0.") && err.contains("did not halt within --max-sim-time 20us"),
        "{err}"
    );
    refused(&["core", p(&f), "--max-sim-time", "2s"], "out of range (allowed: 1ns..=1s)");
    // A wait nothing signals is located at the wait (line 3), not at the line after it.
    let w = d.join("wait.asm");
    std::fs::write(&w, ".engine vector\n    sem_inc s1, 1\n    sem_wait s0 >= 5\n    sem_inc s1, 1\n    halt\n")
        .unwrap();
    let (code, _, err) = run(&["core", p(&w)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with(&format!("error: {}:3: nc0.vector (vector engine): deadlock", p(&w))), "{err}");
    // Counts of work: a range, not the whole of u64 (which would run for ages).
    refused(&["hbm", "--requests", "18446744073709551615"], "is not in 1..=1000000000000");
    refused(&["hbm", "--requests", "0"], "is not in 1..=1000000000000");
    refused(&["bench", "kernel-ring", "--cycles", "1000000000001"], "is not in 1..=1000000000000");
}

#[test]
fn hostile_files_stay_cheap_and_are_told_apart() {
    let d = scratch("hostile_files");
    // A BOM or a leading block comment does not hide a topology's struct name.
    let topo = std::fs::read_to_string(root().join("models/configs/fabric/trn2-server-4x4.ron")).unwrap();
    for (name, pre) in [("bom.ron", "\u{feff}"), ("blk.ron", "/* a\n (b) */\n")] {
        let f = d.join(name);
        std::fs::write(&f, format!("{pre}{topo}")).unwrap();
        let (code, out, err) = run(&["config", "check", p(&f)]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("topology trn2-server-4x4"), "{out}");
    }
    // A trace with no newline is refused at the line cap, not read whole.
    let f = d.join("nonl.trace");
    std::fs::write(&f, "0x1".repeat(100_000)).unwrap();
    refused(&["hbm", "--trace", p(&f)], "nonl.trace:1:4097: field `line`: line longer than 4096 bytes");
    // Validation is linear in links: a 20k-link chain checks quickly.
    let n = 20_000;
    let mut comps = vec!["(name: \"src\", clock: \"c\", kind: Source(count: 1, bytes: 64, rate: 1.0))".to_string()];
    let mut links = Vec::new();
    let mut prev = "src.out".to_string();
    for i in 0..n - 1 {
        comps.push(format!("(name: \"r{i}\", clock: \"c\", kind: Relay(delay: 1, slots: 2))"));
        links.push(format!("(from: \"{prev}\", to: \"r{i}.in\", latency: 1, depth: 2)"));
        prev = format!("r{i}.out");
    }
    comps.push("(name: \"sink\", clock: \"c\", kind: Sink)".into());
    links.push(format!("(from: \"{prev}\", to: \"sink.in\", latency: 1, depth: 2)"));
    let text = format!(
        "(seed: 1, clocks: [(name: \"c\", freq: \"1GHz\")], components: [{}], links: [{}], run: (limit: \"1us\"))",
        comps.join(",\n"),
        links.join(",\n")
    );
    let t = std::time::Instant::now();
    let sys = trnsim_harness::config::parse("chain.ron", &text).expect("valid");
    assert_eq!(sys.cfg.links.len(), n);
    assert!(t.elapsed().as_secs_f64() < 10.0, "validation took {:?}", t.elapsed());
}

#[test]
fn an_output_that_cannot_be_written_fails_the_run() {
    // `/dev/full` takes the open and refuses every write (no space left): each output must
    // say so and fail the run, its last buffered bytes included, never exit 0 with nothing
    // written, never panic.
    let full = Path::new("/dev/full");
    if !full.exists() {
        trnsim_traces::skip_test(&root(), "/dev/full is missing (not Linux?)");
        return;
    }
    for args in [
        &["hbm", "--requests", "10", "--cmd-trace", "/dev/full"][..],
        &["hbm", "--requests", "10", "--json", "/dev/full"][..],
        &["bench", "kernel-ring", "--cycles", "100", "--json", "/dev/full"][..],
        &["run", "nc-gemm-tiled", "--vcd", "/dev/full"][..],
        // (The profiler writes from its own thread, which panicked on a write error.)
        &["bench", "kernel-ring", "--cycles", "100", "--profile", "/dev/full"][..],
        &["run", "hbm-random", "--json", "/dev/full"][..],
        &["collective", "all-reduce", "-b", "1M", "-e", "1M", "--json", "/dev/full"][..],
    ] {
        let (code, _, err) = run(args);
        // A failed run (exit 1), not a usage error: the file opened; writing what the run
        // produced failed.
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_plot_never_overwrites_a_file_the_command_line_names() {
    // Plot names are made up by the run (one per figure of a sweep), so they cannot be checked
    // before it starts; each is checked as it is written. Here the system file itself sits in
    // the plot directory under the name of one of the sweep's plots.
    let d = scratch("hostile_plots");
    let system = d.join("sweep-all_reduce_ring_65536B_time_us.svg");
    let text = std::fs::read_to_string(root().join("models/configs/system/trn2-ultraserver.ron")).unwrap();
    std::fs::write(&system, &text).unwrap();
    let sweep = ["run", "fabric-allreduce-trn2-16", "--sweep", "fabric.phy=40ns,80ns", "--plots", p(&d)];
    let (code, _, err) = run(&[&sweep[..], &["--system", p(&system)]].concat());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--plots") && err.contains("same file as --system"), "{err}");
    assert_eq!(std::fs::read_to_string(&system).unwrap(), text, "the input was overwritten");
    // Nor an output of the run's own (a plain benchmark's plot this time).
    let json = d.join("hbm-latency-sweep.svg");
    let (code, _, err) = run(&["run", "hbm-latency-sweep", "--plots", p(&d), "--json", p(&json)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("same file as --json"), "{err}");
    // Elsewhere the same runs write their plots.
    let other = d.join("plots");
    let (code, _, err) = run(&[&sweep[..4], &["--plots", p(&other), "--system", p(&system)]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(other.join("sweep-all_reduce_ring_65536B_time_us.svg").is_file());
}

#[test]
fn a_collective_too_large_for_memory_is_a_located_error() {
    // A workload's all-reduce of 2^48 bytes (within the format's range): the packet-level
    // network would keep 2 TiB of pending packets. It once ran in 9 us (its packet count
    // wrapped to 0 in 32 bits); at 2^45 bytes it aborted on a 64 GiB allocation.
    let d = scratch("hostile_big_collective");
    let w = d.join("w.ron");
    let gen = ["workload", "llm", "--layers", "1", "--hidden", "1024", "--ffn", "2048", "--heads", "8", "--tp", "4"];
    let (code, _, err) = run(&[&gen[..], &["--seq", "256", "--batch", "2", "-o", p(&w)]].concat());
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&w).unwrap();
    let first = text.find("AllReduce(Comm(bytes: ").expect("the layer all-reduces") + "AllReduce(Comm(bytes: ".len();
    let end = first + text[first..].find(',').unwrap();
    std::fs::write(&w, format!("{}{}{}", &text[..first], 1u64 << 48, &text[end..])).unwrap();
    let line = text[..first].lines().count();
    for cmd in [&["run", "--workload", p(&w)][..], &["compare", "--workload", p(&w)][..]] {
        let (code, out, err) = run(&[cmd, &["--system", "trn3-gen1-ultraserver", "--compute", "roofline"]].concat());
        assert_eq!(code, 1, "{cmd:?}: {out}{err}");
        let want = format!("{}:{line}:", p(&w));
        assert!(err.contains(&want) && err.contains(".op.bytes") && err.contains("needs about"), "{cmd:?}: {err}");
        assert!(!err.contains("panicked") && !out.contains("step time"), "{cmd:?}: {out}{err}");
    }
}
