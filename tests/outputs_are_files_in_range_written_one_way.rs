//! What a run writes is a file, in range, written one way: `-` as an output path is refused
//! for every output flag (nothing is written to a file called `-`), a traced workload whose
//! simulated time is beyond a trace's timestamps (2^64 ps) is refused before its report
//! prints (its slices would all sit at the last timestamp with no length), and the HBM
//! command's `--json` goes through the one JSON writer (pretty, zeros unsigned) that `run`
//! uses.

use crate::common::{scratch, trnsim};
use std::path::Path;

fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = trnsim().current_dir(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_dash_is_refused_for_every_output_flag_and_no_file_called_dash_is_written() {
    let dir = scratch("outputs-dash");
    let w = dir.join("w.ron");
    std::fs::write(&w, "Workload(name: \"w\", ranks: 1, nodes: [(id: 0, op: Gemm(m: 128, k: 128, n: 128))])\n")
        .unwrap();
    let w = w.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "kernel-ring", "--json", "-"], "--json"),
        (&["run", "kernel-ring", "--trace", "-"], "--trace"),
        (&["run", "kernel-ring", "demo", "--trace", "-"], "--trace"),
        (&["run", "hbm-random", "--plots", "-"], "--plots"),
        (&["run", "--workload", w, "--system", "trn3-chip", "--json", "-"], "--json"),
        (&["hbm", "--requests", "10", "--json", "-"], "--json"),
        (&["collective", "all_reduce", "-b", "1M", "--json", "-"], "--json"),
        (&["workload", "llm", "--layers", "1", "-o", "-"], "-o"),
    ];
    for (args, flag) in cases {
        let (code, out, err) = run_in(&dir, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.contains(&format!("{flag} -: standard output")), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: nothing printed before the refusal: {out}");
        assert!(!dir.join("-").exists(), "{args:?}: a file called `-` was written");
    }
}

#[test]
fn a_traced_workload_beyond_the_traces_range_is_refused_before_its_report() {
    let dir = scratch("trace-range");
    // 100,000 GEMMs of 2^58 flops: about 7e7 s of simulated time, past 2^64 ps (1.8e7 s).
    let w = dir.join("huge.ron");
    std::fs::write(
        &w,
        "Workload(name: \"huge\", ranks: 1, repeat: 100000, nodes: [(id: 0, op: Gemm(m: 524288, k: 524288, n: 524288))])\n",
    )
    .unwrap();
    let t = dir.join("huge.pftrace");
    // The roofline: a cycle-level run of a GEMM this size would simulate its tile first.
    let args = [
        "run",
        "--workload",
        w.to_str().unwrap(),
        "--system",
        "trn3-chip",
        "--compute",
        "roofline",
        "--trace",
        t.to_str().unwrap(),
    ];
    let (code, out, err) = run_in(&dir, &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--trace") && err.contains("beyond a trace's range (2^64 ps"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.is_empty(), "the report is not printed: {out}");
    assert!(!t.exists(), "no trace is written");
    // Untraced, the same workload runs and reports.
    let (code, out, err) = run_in(&dir, &args[..7]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("step time"), "{out}");
}

#[test]
fn hbm_json_is_written_by_the_runs_json_writer() {
    let dir = scratch("hbm-json-writer");
    let j = dir.join("h.json");
    let (code, _, err) = run_in(&dir, &["hbm", "--pattern", "mix", "--requests", "200", "--json", j.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&j).unwrap();
    assert!(text.starts_with("{\n  \"") && text.ends_with("}\n"), "pretty, one final newline: {}", &text[..80]);
    assert!(!text.contains("-0.0"), "no signed zero");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["stats"].is_object() && v["headline"].is_array(), "{v}");
}
