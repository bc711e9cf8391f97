//! The default suite's simulated results are stored (tests/baselines/suite-results.json,
//! written by `scripts/suite-baseline.sh update`): `make test` compares its determinism run's
//! results with it byte for byte. Here, cheaply: the baseline covers exactly the benchmarks
//! that run selects, and every nc-* benchmark run now gives its stored figures.

use crate::common::{root, scratch, trnsim};
use serde_json::Value;

fn baseline() -> Value {
    let path = root().join("tests/baselines/suite-results.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn names(results: &Value) -> Vec<String> {
    let list = results["benchmarks"].as_array().expect("a results JSON lists its benchmarks");
    list.iter().map(|b| b["name"].as_str().expect("a benchmark's name").to_string()).collect()
}

/// The benchmarks `make test`'s determinism run leaves out (the Makefile's regex).
fn left_out() -> Vec<String> {
    let make = std::fs::read_to_string(root().join("Makefile")).unwrap();
    let line = make.lines().find_map(|l| l.strip_prefix("DETERMINISM_LEAVE_OUT ?= ")).expect("the leave-out list");
    line.split('|').map(str::to_string).collect()
}

#[test]
fn the_baseline_holds_every_benchmark_the_determinism_run_selects() {
    let out = trnsim().arg("list").output().unwrap();
    assert!(out.status.success());
    let skip = left_out();
    let want: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !skip.iter().any(|s| s == n))
        .map(str::to_string)
        .collect();
    let mut have = names(&baseline());
    let mut want_sorted = want.clone();
    have.sort();
    want_sorted.sort();
    assert_eq!(have, want_sorted, "a benchmark was added or removed: scripts/suite-baseline.sh update");
}

#[test]
fn every_nc_benchmark_gives_its_stored_figures() {
    let base = baseline();
    let stored: Vec<&Value> = base["benchmarks"].as_array().unwrap().iter().collect();
    let nc: Vec<String> = names(&base).into_iter().filter(|n| n.starts_with("nc-")).collect();
    assert!(nc.len() >= 8, "{nc:?}");
    let dir = scratch("suite-baseline-nc");
    let json = dir.join("nc.json");
    let out = trnsim().args(["run", "--jobs", "2", "--json"]).arg(&json).args(&nc).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for b in now["benchmarks"].as_array().unwrap() {
        let name = b["name"].as_str().unwrap();
        let want = stored.iter().find(|s| s["name"] == name).unwrap();
        // Byte for byte: the same JSON text as the stored entry.
        let (got, want) = (serde_json::to_string_pretty(b).unwrap(), serde_json::to_string_pretty(want).unwrap());
        if got != want {
            let at = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{name} differs from tests/baselines/suite-results.json at its line {}: now {:?}, stored {:?} \
                 (if intended: scripts/suite-baseline.sh update, and say so in the commit)",
                at + 1,
                got.lines().nth(at),
                want.lines().nth(at)
            );
        }
    }
}
