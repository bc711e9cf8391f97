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
    let exe = trnsim().get_program().to_owned();
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 524288 && exec \"$0\" \"$@\"")
        .arg(exe)
        .args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trnsim");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{args:?}: still running after two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
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
    let (code, _, err) = bounded(&["run", "--workload", p(&f), "--gemm-efficiency", "0.5"]);
    assert_eq!(code, 0, "{err}");
}
