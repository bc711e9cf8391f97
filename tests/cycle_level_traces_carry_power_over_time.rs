//! A traced cycle-level run of chips (`trnsim run tp-matmul-2 --trace t.json`) carries power
//! counters per chip and component in simulated time, whose step functions integrate to the
//! energy the run reports; the trace is byte-identical under another tick order. The run is
//! on fast HBM and DMA (`--fidelity fast`: the engines and fabric at cycle level, every power
//! counter still written), a quarter of the cycle-level stacks' CPU time for the same rule.

use std::collections::BTreeMap;
use trnsim_system::energy_stats::PARTS;

use crate::common::{root, scratch, trnsim};

/// Each counter's samples (time in us, value), by the counter's track path.
fn counters(trace: &[u8]) -> BTreeMap<String, Vec<(f64, f64)>> {
    let events: Vec<serde_json::Value> = serde_json::from_slice(trace).expect("trace JSON");
    let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "C") {
        let name = e["name"].as_str().unwrap_or_default().to_string();
        let (ts, v) = (e["ts"].as_f64().unwrap(), e["args"]["value"].as_f64().unwrap());
        out.entry(name).or_default().push((ts, v));
    }
    out
}

/// The integral of a counter's step function (J, from W and us), up to its last sample.
fn integral(samples: &[(f64, f64)]) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    s.windows(2).map(|w| w[0].1 * (w[1].0 - w[0].0) * 1e-6).sum()
}

fn run(order: &str, dir: &std::path::Path) -> (Vec<u8>, Vec<(String, f64)>) {
    let (trace, json) = (dir.join(format!("t-{order}.json")), dir.join(format!("r-{order}.json")));
    let out = trnsim()
        .args(["run", "tp-matmul-2", "--fidelity", "fast", "--order", order, "--trace"])
        .arg(&trace)
        .arg("--json")
        .arg(&json)
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let figs = serde_json::from_value(doc["benchmarks"][0]["headline"].clone()).unwrap();
    (std::fs::read(&trace).unwrap(), figs)
}

#[test]
fn traced_chip_runs_carry_power_counters_that_integrate_to_their_energy() {
    let dir = scratch("power_trace");
    let (trace, figs) = run("structural", &dir);
    let get = |k: &str| figs.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k}")).1;
    let c = counters(&trace);
    let totals: Vec<&String> = c.keys().filter(|k| k.ends_with(" total (W)")).collect();
    // 64 chips of the Gen1 UltraServer (62 idle at their static power) and the switches.
    assert_eq!(totals.len(), 65, "{totals:?}");
    for part in ["tensor", "hbm", "dma", "sbuf", "psum", "neuronlink"] {
        let name = format!("power/chip000/power, {part} (W)");
        assert!(c.contains_key(&name), "no {name}");
    }
    assert!(c.contains_key("power/switches/power, switch (W)"), "no switch counter");
    let energy_j: f64 = totals.iter().map(|k| integral(&c[*k])).sum();
    let want = get("energy_mJ") * 1e-3;
    assert!(
        (energy_j - want).abs() <= 1e-6 * want,
        "the power counters integrate to {energy_j} J, the run reports {want} J"
    );
    // Each component's counter integrates to its share: the counters the sampler reads are
    // the counts the report prices, component by component.
    for part in PARTS.iter().filter(|p| **p != "static") {
        let want = get(&format!("energy_{part}_mJ")) * 1e-3;
        let suffix = format!("power, {part} (W)");
        let got: f64 = c.iter().filter(|(k, _)| k.ends_with(&suffix)).map(|(_, s)| integral(s)).sum();
        assert!(
            (got - want).abs() <= 1e-6 * want,
            "{part}: the counters integrate to {got} J, the run reports {want} J"
        );
    }
    // An idle chip draws its static power throughout.
    let idle = &c["power/chip063/power, chip total (W)"];
    assert!(idle.iter().all(|s| s.1 == idle[0].1), "chip063 runs nothing: {idle:?}");
    let (again, _) = run("shuffled:5", &dir);
    assert!(trace == again, "another tick order changed the trace");
}
