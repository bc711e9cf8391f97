//! A small input costs little: each command below runs (or is refused in one located line)
//! within 512 MB of address space, where the cost used to grow with a count the input names
//! (a Chakra trace replicated to a million ranks was copied per rank, a dependency named a
//! million times was compared with every other, a chain of metadata nodes multiplied their
//! dependencies). A hang is caught by a generous deadline, not timed: speed is measured in
//! benchmarks.

use crate::common::{root, scratch, trnsim};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Runs trnsim with `args` under a 512 MB address-space limit; returns (exit code, stdout,
/// stderr). Fails the test if it runs for more than two minutes.
fn bounded(args: &[&str]) -> (i32, String, String) {
    bounded_mb(512, args)
}

/// [`bounded`] under a limit of `mb` MB.
fn bounded_mb(mb: u32, args: &[&str]) -> (i32, String, String) {
    bounded_in(&root(), mb, args)
}

/// [`bounded_mb`] run in `dir`.
fn bounded_in(dir: &Path, mb: u32, args: &[&str]) -> (i32, String, String) {
    let exe = trnsim().get_program().to_owned();
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mb * 1024))
        .arg(exe)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trnsim");
    // Read as it is written: a long output must not fill the pipe and stall the child.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{args:?}: still running after two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code().unwrap_or(-1), out.join().expect("stdout"), err.join().expect("stderr"))
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

const META: &str = "{\"version\": \"0.0.4\"}\n";

#[test]
fn chakra_replication_and_dependency_lists_cost_what_the_trace_holds() {
    let d = scratch("hostile_bounded_chakra");
    // One node run by 2^20 ranks: the trace is read once, not copied per rank.
    let one = d.join("one.json");
    std::fs::write(
        &one,
        format!("{META}{{\"id\": \"1\", \"name\": \"mm\", \"type\": \"COMP_NODE\", \"durationMicros\": \"3\"}}\n"),
    )
    .unwrap();
    let out = d.join("rep.ron");
    let (code, _, err) = bounded(&["workload", "chakra", p(&one), "--replicate", "1048576", "-o", p(&out)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1048576 ranks, 1 nodes"), "{err}");
    // A node naming one dependency 300,000 times, run by 100,000 ranks.
    let deps: Vec<String> = vec!["\"1\"".to_string(); 300_000];
    let many = d.join("deps.json");
    std::fs::write(
        &many,
        format!(
            "{META}{{\"id\": \"1\", \"type\": \"COMP_NODE\", \"durationMicros\": \"1\"}}\n{{\"id\": \"2\", \"type\": \"COMP_NODE\", \"durationMicros\": \"1\", \"dataDeps\": [{}]}}\n",
            deps.join(",")
        ),
    )
    .unwrap();
    let out = d.join("deps.ron");
    let (code, _, err) = bounded(&["workload", "chakra", p(&many), "--replicate", "100000", "-o", p(&out)]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("data_deps: [0]"), "the dependency is kept once: {text}");
    // Metadata nodes that each pass on their dependencies and the one before's: refused at
    // the stated cap, at the node in the trace, not after gigabytes.
    let mut chain = String::from(META);
    for i in 1..6000u64 {
        if i % 2 == 1 {
            let dep = if i > 1 { format!("\"{}\"", i - 1) } else { String::new() };
            chain += &format!(
                "{{\"id\": \"{i}\", \"type\": \"COMP_NODE\", \"durationMicros\": \"1\", \"dataDeps\": [{dep}]}}\n"
            );
        } else {
            chain += &format!(
                "{{\"id\": \"{i}\", \"type\": \"METADATA_NODE\", \"dataDeps\": [\"{}\", \"{}\"]}}\n",
                i - 1,
                i - 2
            );
        }
    }
    let meta = d.join("meta.json");
    std::fs::write(&meta, &chain).unwrap();
    let (code, out, err) = bounded(&["workload", "chakra", p(&meta), "--replicate", "64"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() && err.lines().count() == 1, "{err}");
    assert!(err.contains("meta.json:") && err.contains("dependencies (metadata nodes pass theirs"), "{err}");
    // Too many nodes over the replicated ranks: refused before any copy.
    let (code, _, err) = bounded(&["workload", "chakra", p(&many), "--replicate", "1048576"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("deps.json:1:1: nodes: more than 1048576 nodes over all ranks"), "{err}");
}

#[test]
fn a_workload_naming_one_dependency_a_million_times_checks_and_runs() {
    let d = scratch("hostile_bounded_deps");
    let w = d.join("w.ron");
    let gen = ["workload", "llm", "--layers", "1", "--hidden", "512", "--ffn", "1024", "--heads", "4", "--tp", "4"];
    let (code, _, err) = bounded(&[&gen[..], &["--seq", "128", "--batch", "1", "-o", p(&w)]].concat());
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&w).unwrap();
    let ones = vec!["0"; 1_000_000].join(", ");
    let text = text.replacen("data_deps: [0]", &format!("data_deps: [{ones}]"), 1);
    let f = d.join("dup.ron");
    std::fs::write(&f, text).unwrap();
    let (code, out, err) = bounded(&["config", "check", p(&f)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok (workload"), "{out}");
    let (code, _, err) = bounded(&["run", "--workload", p(&f), "--compute", "roofline", "--gemm-efficiency", "0.5"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn sweep_points_share_the_workload_text_and_the_systems_validation() {
    let d = scratch("hostile_bounded_sweeps");
    // A 1 MB workload (a long comment and one GEMM) swept over 5,000 points: the points
    // share its text (a copy each was 5 GB).
    let big = d.join("big.ron");
    let mut text = format!("// {}\n", "x".repeat(97)).repeat(10_486);
    text.push_str("Workload(name: \"big\", ranks: 1, nodes: [(id: 0, op: Gemm(m: 128, k: 128, n: 128))])\n");
    std::fs::write(&big, text).unwrap();
    let ms: Vec<String> = (1..=5000).map(|i| (128 * i).to_string()).collect();
    let sweep = format!("workload.nodes[0].m={}", ms.join(","));
    let (code, out, err) =
        bounded(&["run", "--workload", p(&big), "--system", "trn3-chip", "--compute", "roofline", "--sweep", &sweep]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("m=640000"), "every point reported");
    // 10,000 points on a 128-chip cluster that sweep only the workload: the cluster is
    // validated once, not once a point (3.8 ms each, twice).
    let small = d.join("small.ron");
    std::fs::write(&small, "Workload(name: \"w\", ranks: 1, nodes: [(id: 0, op: Gemm(m: 128, k: 128, n: 128))])\n")
        .unwrap();
    let reps: Vec<String> = (1..=100).map(|i| i.to_string()).collect();
    let ms: Vec<String> = (1..=100).map(|i| (128 * i).to_string()).collect();
    let (a, b) = (format!("workload.repeat={}", reps.join(",")), format!("workload.nodes[0].m={}", ms.join(",")));
    // The roofline: 100 GEMM shapes would be 100 programs on the cycle-level chip, and what is
    // checked is the sweep's memory.
    let args = ["run", "--workload", p(&small), "--system", "trn3-gen1-ultracluster-2", "--compute", "roofline"];
    let args = [&args[..], &["--sweep", &a, "--sweep", &b]].concat();
    let (code, out, err) = bounded(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("repeat=100,workload.nodes[0].m=12800"), "the last point reported");
}

/// A sweep whose points each change the system holds a few systems at a time, not one per
/// point (`trnsim run --workload` and a benchmark's `--sweep`): 1,000 settings of a 128-chip UltraCluster's energy table (each point kept its own
/// validated cluster until the runs ended: 689 MB) run within 256 MB, and a bad value at the
/// last point is refused in one located line before any point runs.
#[test]
fn sweep_points_that_change_the_system_hold_a_few_systems_at_a_time() {
    let d = scratch("hostile_bounded_system_sweeps");
    let w = d.join("w.ron");
    std::fs::write(&w, "Workload(name: \"w\", ranks: 1, nodes: [(id: 0, op: Gemm(m: 128, k: 128, n: 128))])\n")
        .unwrap();
    let vals: Vec<String> = (100..1100).map(|v| v.to_string()).collect();
    let sweep = format!("energy.static_w.host_per_chip={}", vals.join(","));
    // The roofline: what is checked is the systems a sweep holds, not the op programs.
    let args = [
        "run",
        "--workload",
        p(&w),
        "--system",
        "trn3-gen1-ultracluster-2",
        "--compute",
        "roofline",
        "--sweep",
        &sweep,
    ];
    let (code, out, err) = bounded_mb(256, &args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("host_per_chip=1099"), "the last point reported");
    assert!(err.contains("[1000/1000] w on trn3-gen1-ultracluster-2"), "{err}");
    let bad = format!("{sweep},-1");
    let args = ["run", "--workload", p(&w), "--system", "trn3-gen1-ultracluster-2", "--sweep", &bad];
    let (code, out, err) = bounded_mb(256, &args);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() && err.lines().count() == 1, "nothing runs before the refusal: {out}{err}");
    assert!(err.contains("energy.static_w.host_per_chip: -1 is not allowed"), "{err}");
    // A benchmark's sweep keeps its points, not their systems (1,500 validated 64-chip
    // UltraServers held until the runs: 370 MB).
    let vals: Vec<String> = (100..1600).map(|v| v.to_string()).collect();
    let bad = format!("energy.static_w.host_per_chip={},-1", vals.join(","));
    let (code, out, err) = bounded_mb(256, &["run", "tp-matmul-4", "--sweep", &bad]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() && err.lines().count() == 1, "nothing runs before the refusal: {out}{err}");
    assert!(err.contains("energy.static_w.host_per_chip: -1 is not allowed"), "{err}");
}

/// An override into one node of a million-node workload, or a mistyped one, turns that node
/// into a tree of values, not every node (the whole workload as a tree took 2.6 GB to say
/// "unknown path", 5.0 GB to apply a valid override). The workload alone takes about 430 MB,
/// so the limit here is 1 GB.
#[test]
fn an_override_on_a_million_node_workload_costs_what_its_node_does() {
    let d = scratch("hostile_bounded_million_nodes");
    let big = d.join("big.ron");
    let mut text = String::from("Workload(name: \"big\", ranks: 1, nodes: [\n");
    for i in 0..1_000_000 {
        text.push_str(&format!("(id: {i}, op: Gemm(m: 128, k: 128, n: 128)),\n"));
    }
    text.push_str("])\n");
    std::fs::write(&big, text).unwrap();
    let typo = ["run", "--workload", p(&big), "--system", "trn3-chip", "--set", "workload.nodes[5].op.Gemm.mm=5"];
    let (code, out, err) = bounded_mb(1024, &typo);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(
            "unknown path nodes[5].op.Gemm.mm: nodes[5].op.Gemm has no field \"mm\" (nearest: nodes[5].op.Gemm.m,"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let far = ["run", "--workload", p(&big), "--system", "trn3-chip", "--set", "workload.nodes[999999].m=0"];
    let (code, _, err) = bounded_mb(1024, &far);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nodes[999999]"), "the last node's error names it: {err}");
}

/// 100,000 Chakra rank files named on the command line (the most a command line holds at
/// short names) read into one workload within 512 MB: each file is read once and its nodes
/// shared where the ranks' traces are alike (measured: 137 MB peak, 1.4 CPU-s).
#[test]
fn a_hundred_thousand_chakra_rank_files_read_within_the_limit() {
    let d = scratch("hostile_bounded_chakra_files");
    let body =
        format!("{META}{{\"id\": \"1\", \"name\": \"mm\", \"type\": \"COMP_NODE\", \"durationMicros\": \"3\"}}\n");
    let names: Vec<String> = (0..100_000).map(|i| format!("r{i}.json")).collect();
    for n in &names {
        std::fs::write(d.join(n), &body).unwrap();
    }
    let mut args: Vec<&str> = vec!["workload", "chakra", "-o", "all.ron"];
    args.extend(names.iter().map(String::as_str));
    let (code, _, err) = bounded_in(&d, 512, &args);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("100000 ranks, 1 nodes"), "{err}");
}
