//! Values no run can mean are refused where they are read, in one located line (exit 2) and
//! before anything prints: sizes with stray or repeated units, sizes that are not whole
//! elements, a node run on an empty rank list, a GEMM whose operations overflow, a duplicate
//! node id (located at the duplicate, not the first), a Chakra trace whose merged workload
//! breaks a limit (located in the trace's own file with the trace's field names, not in text
//! trnsim generated), a path swept twice.

use crate::common::{root, scratch, trnsim};
use std::path::Path;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Exit 2, nothing on stdout, the first stderr line containing every `want` (clap adds a
/// hint line to its own flag errors).
fn refused(args: &[&str], want: &[&str]) {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(out.is_empty(), "{args:?}: nothing prints before the refusal: {out}");
    let first = err.lines().next().unwrap_or("");
    for w in want {
        assert!(first.contains(w), "{args:?}: expected {w:?} in {err}");
    }
}

#[test]
fn collective_sizes_are_whole_elements_with_strict_units() {
    let c = ["collective", "all-reduce", "--system", "trn3-gen1-ultraserver"];
    refused(&[&c[..], &["-b", "1iBiBiB", "-e", "1M"]].concat(), &["unknown unit \"iBiBiB\""]);
    refused(&[&c[..], &["-b", "4BBBB", "-e", "4BBBB"]].concat(), &["unknown unit \"BBBB\""]);
    refused(
        &[&c[..], &["-b", "5", "-e", "5", "-d", "fp32"]].concat(),
        &["-b 5 is not a whole number of fp32 elements (4 B each; 4 would be)"],
    );
    refused(&[&c[..], &["-b", "4", "-e", "6", "-d", "fp32"]].concat(), &["-e 6 is not a whole number of fp32"]);
    refused(
        &[&c[..], &["-b", "1M", "-e", "1M", "--network", "flow", "-r", "4"]].concat(),
        &["--network flow runs every chip"],
    );
    let (code, out, err) = run(&[&c[..], &["-b", "2MB", "-e", "2MiB", "-d", "fp32"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2097152") && out.contains("524288"), "2 MB of fp32 is 524288 elements: {out}");
}

#[test]
fn workload_nodes_on_no_rank_or_with_a_repeated_id_are_located() {
    let d = scratch("hostile_absurd_workloads");
    let w = d.join("w.ron");
    let gen = ["workload", "llm", "--layers", "1", "--hidden", "512", "--ffn", "1024", "--heads", "4", "--tp", "4"];
    let (code, _, err) = run(&[&gen[..], &["--seq", "128", "--batch", "1", "-o", p(&w)]].concat());
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&w).unwrap();
    let line_of = |t: &str, s: &str| t.lines().position(|l| l.contains(s)).expect(s) + 1;
    let f = d.join("empty.ron");
    let empty = text.replacen("ranks: None", "ranks: Some([])", 1);
    std::fs::write(&f, &empty).unwrap();
    refused(
        &["config", "check", p(&f)],
        &[&format!("empty.ron:{}:", line_of(&empty, "Some([])")), ".ranks: an empty rank list"],
    );
    refused(&["run", "--workload", p(&f)], &[".ranks: an empty rank list"]);
    // A GEMM of 2^150 operations: each dimension in range, the product not.
    let f = d.join("huge.ron");
    let huge = text.replacen("m: 128,", "m: 1125899906842624,", 1).replacen("n: 512,", "n: 1125899906842624,", 1);
    std::fs::write(&f, &huge).unwrap();
    refused(&["config", "check", p(&f)], &["huge.ron:", ".op.m: the node's operations exceed 1152921504606846976"]);
    let f = d.join("dup.ron");
    let dup = text.replacen("id: 5,", "id: 4,", 1);
    std::fs::write(&f, &dup).unwrap();
    let second = dup.lines().enumerate().filter(|(_, l)| l.trim() == "id: 4,").nth(1).expect("second id 4").0 + 1;
    refused(&["config", "check", p(&f)], &[&format!("dup.ron:{second}:"), "nodes[5].id: 4 is out of order"]);
}

#[test]
fn chakra_errors_found_after_the_merge_are_located_in_the_trace() {
    let d = scratch("hostile_absurd_chakra");
    let rank = "{\"version\": \"0.0.4\"}\n{\"id\": \"1\", \"name\": \"mm\", \"type\": \"COMP_NODE\", \"durationMicros\": \"1\"}\n{\"id\": \"2\", \"name\": \"ar\", \"type\": \"COMM_COLL_NODE\", \"dataDeps\": [\"1\"],\n  \"attr\": [{\"name\": \"comm_type\", \"int64Val\": \"0\"}, {\"name\": \"comm_size\", \"int64Val\": \"1152921504606846976\"}]}\n";
    let (a, b) = (d.join("et.0.json"), d.join("et.1.json"));
    std::fs::write(&a, rank).unwrap();
    std::fs::write(&b, rank).unwrap();
    let (code, out, err) = run(&["workload", "chakra", p(&a), p(&b)]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.starts_with(&format!("error: {}:3:1: node 2: attr.comm_size: ", p(&a))), "{err}");
    assert!(err.contains("is out of range") && !err.contains("read from Chakra"), "{err}");
}

#[test]
fn a_path_swept_twice_is_refused_before_anything_runs() {
    refused(
        &["run", "fabric-allreduce-trn2-16", "--sweep", "fabric.phy=40ns,50ns", "--sweep", "fabric.phy=60ns"],
        &["--sweep fabric.phy: the path is swept twice"],
    );
    refused(&["run", "e2e-llm-layer", "--sweep", "chip.hbm.stacks+chip.hbm.stacks=2+4"], &["swept twice"]);
}
