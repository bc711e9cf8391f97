//! The cycle-level op runs (`--compute cycle`) give the same report whatever the threads that
//! simulate their programs (`--jobs`), and through the on-disk op cache (`--op-cache DIR`):
//! cold and warm byte for byte, a damaged entry noted at its file, line and column and
//! simulated again, a cache path that is not a directory refused with exit 2.

use crate::common::{scratch, trnsim};
use trnsim_harness::workload::{self, Compute, Options};
use trnsim_kernels::run::{self, OpRuns};
use trnsim_system::doc::SystemDoc;
use trnsim_workloads::format::parse;

const WORKLOAD: &str = "Workload(name: \"ops\", ranks: 1, nodes: [
    Node(id: 0, name: \"qkv\", op: Gemm(m: 8, k: 512, n: 1024, dtype: \"bf16\")),
    Node(id: 1, name: \"att\", op: Attention(batch: 2, heads: 4, seq: 1, kv_seq: Some(256), kv_heads: Some(1), head_dim: 64), data_deps: [0]),
    Node(id: 2, name: \"up\", op: Gemm(m: 8, k: 1024, n: 2048, dtype: \"mxfp8\", weight_dtype: Some(\"mxfp4\")), data_deps: [1]),
    Node(id: 3, name: \"act\", op: Elementwise(elements: 16384, ops: 4), data_deps: [2]),
    Node(id: 4, name: \"down\", op: Gemm(m: 8, k: 1024, n: 512, dtype: \"bf16\"), data_deps: [3]),
])";

#[test]
fn reports_do_not_depend_on_the_threads_that_simulate_the_programs() {
    let sys = SystemDoc::open("trn3-chip").unwrap().resolve().unwrap();
    let w = parse("ops.ron", WORKLOAD).unwrap();
    let text = |jobs: usize| {
        run::clear_cache();
        let opts = Options { efficiency: Some(0.5), compute: Compute::Cycle, ops: OpRuns { jobs, disk: None } };
        let r = workload::run(&w, &sys, &opts).unwrap();
        (workload::to_text(&r, "trn3-chip"), format!("{:?}", workload::headline(&r)))
    };
    let one = text(1);
    assert!(one.0.contains("(5 distinct programs)"), "{}", one.0);
    for jobs in [2, 3] {
        assert_eq!(text(jobs), one, "--jobs {jobs} against 1");
    }
}

#[test]
fn the_op_cache_gives_byte_identical_reports_cold_and_warm_and_recomputes_a_damaged_entry() {
    let dir = scratch("op-cache");
    let wf = dir.join("ops.ron");
    std::fs::write(&wf, WORKLOAD).unwrap();
    let cache = dir.join("cache");
    let run = || {
        let out = trnsim()
            .args(["run", "--workload"])
            .arg(&wf)
            .args(["--system", "trn3-chip", "--compute", "cycle", "--gemm-efficiency", "0.5", "--op-cache"])
            .arg(&cache)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    let (cold, cold_err) = run();
    assert!(cold_err.contains(": 0 program times read, 5 simulated and stored"), "{cold_err}");
    let (warm, warm_err) = run();
    assert_eq!(warm, cold, "warm against cold");
    assert!(warm_err.contains(": 5 program times read, 0 simulated and stored"), "{warm_err}");
    // One entry damaged (its time changed, its check not): noted where, simulated again.
    let entries: Vec<_> = walk(&cache).into_iter().filter(|p| p.extension().is_some_and(|e| e == "op")).collect();
    assert_eq!(entries.len(), 5, "{entries:?}");
    let text = std::fs::read_to_string(&entries[0]).unwrap();
    let ps = text.lines().find_map(|l| l.strip_prefix("ps ")).unwrap();
    std::fs::write(&entries[0], text.replace(&format!("ps {ps}"), "ps 1")).unwrap();
    let (again, again_err) = run();
    assert_eq!(again, cold, "a damaged entry changes no result");
    // Its head is then longer than its time (line 6), or its check fails (line 8).
    let at = format!("{}:6:6: head:", entries[0].display());
    let check = format!("{}:8:7: check:", entries[0].display());
    assert!(again_err.contains(&at) || again_err.contains(&check), "{again_err}");
    assert!(again_err.contains(": 4 program times read, 1 simulated and stored"), "{again_err}");
    assert_eq!(std::fs::read_to_string(&entries[0]).unwrap(), text, "the entry is written again");
    // A file where the cache directory should be.
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(&wf)
        .args(["--system", "trn3-chip", "--compute", "cycle", "--op-cache"])
        .arg(&wf)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--op-cache ") && err.contains("is not a directory"), "{err}");
    assert!(out.stdout.is_empty(), "nothing ran");
}

fn walk(d: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}
