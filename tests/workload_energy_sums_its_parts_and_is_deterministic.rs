//! A workload run's energy: the total is the sum of its components, the JSON is byte-identical
//! across runs and `--jobs` counts, the trace carries power counters per rank, and a bad
//! energy figure is one located error (exit 2).

use crate::common::{root, scratch, trnsim};
use std::path::Path;
use trnsim_traces::TraceProcessor;

fn workload(dir: &Path) -> std::path::PathBuf {
    let w = dir.join("dense.ron");
    let out = trnsim()
        .args(["workload", "llm", "--train", "--layers", "1", "--tp", "4", "--dp", "2", "--batch", "8", "--seq", "512"])
        .arg("-o")
        .arg(&w)
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    w
}

fn run_json(w: &Path, json: &Path, jobs: &str) {
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(w)
        .args([
            "--system",
            "trn3-gen1-ultraserver",
            "--compute",
            "roofline",
            "--gemm-efficiency",
            "0.7",
            "--sweep",
            "workload.repeat=1,2",
        ])
        .args(["--jobs", jobs, "--json"])
        .arg(json)
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn energy_is_the_sum_of_its_components_and_identical_across_runs_and_jobs() {
    let dir = scratch("workload_energy_sums");
    let w = workload(&dir);
    let (a, b, c) = (dir.join("a.json"), dir.join("b.json"), dir.join("c.json"));
    run_json(&w, &a, "1");
    run_json(&w, &b, "1");
    run_json(&w, &c, "2");
    let (a, b, c) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), std::fs::read(&c).unwrap());
    assert!(a == b, "two runs differ");
    assert!(a == c, "--jobs 2 differs from --jobs 1");
    let doc: serde_json::Value = serde_json::from_slice(&a).unwrap();
    let mut totals = Vec::new();
    for p in doc["points"].as_array().unwrap() {
        let figs: Vec<(String, f64)> = serde_json::from_value(p["figures"].clone()).unwrap();
        let get = |k: &str| figs.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1;
        let parts: Vec<(String, f64)> = serde_json::from_value(p["energy"]["parts_j"].clone()).unwrap();
        let part = |k: &str| parts.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1;
        let sum: f64 = parts.iter().map(|(_, j)| j).sum();
        let total = get("energy_J");
        // (JSON numbers read back within an ulp.)
        assert!((total - sum).abs() <= 1e-12 * total, "total {total} J vs its components' sum {sum} J");
        assert_eq!(p["energy"]["total_j"].as_f64(), Some(total));
        assert!(part("static_cores") > 0.0 && part("tensor") > 0.0 && part("neuronlink") > 0.0);
        // 56 of the 64 chips run nothing: each draws exactly its static power.
        let avg: Vec<f64> = serde_json::from_value(p["energy"]["chip_avg_w"].clone()).unwrap();
        let stat: Vec<f64> = serde_json::from_value(p["energy"]["chip_static_w"].clone()).unwrap();
        assert_eq!(avg.len(), 64);
        assert!((8..64).all(|k| avg[k] == stat[k]), "idle chips: {avg:?} vs {stat:?}");
        assert!((0..8).all(|k| avg[k] > stat[k]), "busy chips draw more");
        assert!(get("chip_peak_power_W") >= get("chip_avg_power_W"));
        assert!(get("server_peak_power_W") >= get("server_avg_power_W"));
        assert!(get("tokens_per_J") > 0.0 && get("GFLOPS_per_W") > 0.0);
        totals.push((total, get("step_us")));
    }
    // Twice the graph: twice the dynamic energy and twice the step, so twice the total.
    let (one, two) = (totals[0], totals[1]);
    assert!((two.0 / one.0 - two.1 / one.1).abs() < 1e-9, "{totals:?}");
}

#[test]
fn the_trace_holds_a_power_counter_per_rank_and_component() {
    let dir = scratch("workload_energy_trace");
    let w = workload(&dir);
    let trace = dir.join("w.pftrace");
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(&w)
        .args(["--system", "trn3-gen1-ultraserver", "--compute", "roofline", "--gemm-efficiency", "0.7", "--trace"])
        .arg(&trace)
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("energy (trn3-energy; 64 chips, 4 servers)"), "{text}");
    // A second run writes the same bytes.
    let again = dir.join("again.pftrace");
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(&w)
        .args(["--system", "trn3-gen1-ultraserver", "--compute", "roofline", "--gemm-efficiency", "0.7", "--trace"])
        .arg(&again)
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read(&trace).unwrap() == std::fs::read(&again).unwrap(), "trace bytes differ between runs");
    // The same run's Chrome JSON trace: counters named by rank and component.
    let json = dir.join("w.json");
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(&w)
        .args(["--system", "trn3-gen1-ultraserver", "--compute", "roofline", "--gemm-efficiency", "0.7", "--trace"])
        .arg(&json)
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let events = doc.get("traceEvents").unwrap_or(&doc).as_array().unwrap().clone();
    let totals: Vec<(String, f64)> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"].as_str().is_some_and(|n| n.ends_with("/power, chip total (W)")))
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["args"]["value"].as_f64().unwrap()))
        .collect();
    let ranks: std::collections::BTreeSet<&str> = totals.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(ranks.len(), 8, "a total per rank: {ranks:?}");
    let lo = totals.iter().map(|t| t.1).fold(f64::MAX, f64::min);
    let hi = totals.iter().map(|t| t.1).fold(0.0, f64::max);
    assert!(lo > 0.0 && hi > lo, "static power at rest, more while busy: {lo} .. {hi}");
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let sql = [
        "select count(*) from counter_track where name = 'power, chip total (W)'",
        "select count(*) from counter_track where name = 'power, tensor (W)'",
        "select min(c.value), max(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'power, chip total (W)'",
    ];
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows[0][0][0], 8, "a total per rank");
    assert_eq!(rows[1][0][0], 8, "a tensor track per rank");
    let (lo, hi) = (rows[2][0][0].as_f64().unwrap(), rows[2][0][1].as_f64().unwrap());
    assert!(lo > 0.0 && hi > lo, "static power at rest, more while busy: {lo} .. {hi}");
}

#[test]
fn a_negative_energy_figure_is_one_located_error() {
    let dir = scratch("workload_energy_bad");
    let w = workload(&dir);
    let out = trnsim()
        .args(["run", "--workload"])
        .arg(&w)
        .args(["--system", "trn3-gen1-ultraserver", "--compute", "roofline", "--gemm-efficiency", "0.7"])
        .args(["--set", "energy.fabric_switch.pj_per_flit=-5"])
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let err = err.trim();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("trn3-energy.ron (built in):") && err.contains("energy.fabric_switch.pj_per_flit: -5"),
        "{err}"
    );
}

#[test]
fn a_benchmark_on_a_system_reports_its_energy_the_same_in_any_tick_order() {
    let dir = scratch("bench_energy");
    let run = |json: &Path, order: &str| {
        let out = trnsim()
            .args(["run", "e2e-llm-layer", "--system", "trn3-chip", "--order", order, "--json"])
            .arg(json)
            .current_dir(root())
            .output()
            .expect("run trnsim");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    run(&a, "structural");
    run(&b, "shuffled:7");
    let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(a == b, "the tick order changed the results");
    let doc: serde_json::Value = serde_json::from_slice(&a).unwrap();
    let figs: Vec<(String, f64)> = serde_json::from_value(doc["benchmarks"][0]["headline"].clone()).unwrap();
    let get = |k: &str| figs.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1;
    let parts: f64 = figs
        .iter()
        .filter(|(n, _)| n.starts_with("energy_") && n.ends_with("_mJ") && n != "energy_mJ")
        .map(|x| x.1)
        .sum();
    let total = get("energy_mJ");
    assert!((total - parts).abs() <= 1e-12 * total, "total {total} mJ vs components {parts} mJ");
    assert!(get("energy_tensor_mJ") > 0.0 && get("energy_hbm_mJ") > 0.0 && get("energy_static_mJ") > 0.0);
    assert!(get("chip_avg_power_W") > 0.0 && get("GFLOPS_per_W") > 0.0);
}
