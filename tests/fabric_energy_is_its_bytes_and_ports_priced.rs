//! A fabric alone (`trnsim run fabric-*`, `--system FABRIC`, `--sweep energy.*`, `trnsim
//! collective --json`) reports its energy, priced by the table its fabric file names: the
//! bytes its collectives put on every link in NeuronLink bits (counted here from the
//! collectives' own arithmetic, not read back), the bytes out of switches in flits, and the
//! static power of every wired port over the collectives' time; the parts sum to the total,
//! and a price changed with `--set` moves exactly its part (a misprice fails these sums).

use serde_json::Value;

use crate::common::{root, scratch, trnsim};

fn run_json(args: &[&str], json: &std::path::Path) -> Value {
    let out = trnsim().args(args).arg("--json").arg(json).current_dir(root()).output().expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

fn get(doc: &Value, i: usize, k: &str) -> f64 {
    let h: Vec<(String, f64)> = serde_json::from_value(doc["benchmarks"][i]["headline"].clone()).unwrap();
    h.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k} in {h:?}")).1
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-30), "{what}: {a} vs {b}");
}

#[test]
fn a_fabric_benchmark_prices_its_ring_bytes_and_wired_ports() {
    let dir = scratch("fabric_energy");
    let doc = run_json(&["run", "fabric-allreduce-trn2-16"], &dir.join("plain.json"));
    // Ring all-reduce on 16 chips of a 4x4 torus, each step one hop: every chip sends
    // 2 x 15/16 of its buffer, 2 x 15 x size in all, for 64 KiB, 1 MiB and 16 MiB.
    let bytes = 2.0 * 15.0 * f64::from(65_536 + (1 << 20) + (16 << 20));
    let time_s: f64 = ["65536", "1048576", "16777216"]
        .iter()
        .map(|s| get(&doc, 0, &format!("all_reduce_ring_{s}B_time_us")) * 1e-6)
        .sum();
    // trn2-energy: 2.5 pJ per bit; 1.2 W per wired port, 16 chips x 4 neighbours x 4 links.
    close(get(&doc, 0, "energy_neuronlink_mJ"), bytes * 8.0 * 2.5e-12 * 1e3, "NeuronLink energy");
    assert_eq!(get(&doc, 0, "energy_switch_mJ"), 0.0, "a torus has no switches");
    let static_mj = get(&doc, 0, "energy_static_mJ");
    assert!((static_mj - 256.0 * 1.2 * time_s * 1e3).abs() <= 1e-3 * static_mj, "static {static_mj} mJ");
    let parts: f64 = ["neuronlink", "switch", "static"].iter().map(|p| get(&doc, 0, &format!("energy_{p}_mJ"))).sum();
    close(parts, get(&doc, 0, "energy_mJ"), "the parts' sum");
    // The same run on the fabric named with --system, and a sweep of the SerDes price.
    let sweep = run_json(
        &[
            "run",
            "fabric-allreduce-trn2-16",
            "--system",
            "trn2-server-4x4",
            "--sweep",
            "energy.neuronlink_serdes.pj_per_bit=2.5,5",
        ],
        &dir.join("sweep.json"),
    );
    close(get(&sweep, 0, "energy_mJ"), get(&doc, 0, "energy_mJ"), "--system trn2-server-4x4");
    close(get(&sweep, 1, "energy_neuronlink_mJ"), 2.0 * get(&doc, 0, "energy_neuronlink_mJ"), "5 pJ/bit");
    close(get(&sweep, 1, "energy_static_mJ"), get(&doc, 0, "energy_static_mJ"), "static at 5 pJ/bit");
}

#[test]
fn switched_fabrics_price_switch_flits_and_collectives_report_energy() {
    let dir = scratch("fabric_energy_switched");
    let doc = run_json(&["run", "fabric-collectives-nl32x2"], &dir.join("nl32.json"));
    assert!(get(&doc, 0, "energy_switch_mJ") > 0.0, "the Gen1 fabric's switches carry the traffic");
    let parts: f64 = ["neuronlink", "switch", "static"].iter().map(|p| get(&doc, 0, &format!("energy_{p}_mJ"))).sum();
    close(parts, get(&doc, 0, "energy_mJ"), "the parts' sum");
    // `trnsim collective --json`: each size's fabric energy, more for the larger size, and
    // at a doubled switch price more again.
    let coll = |sets: &[&str], name: &str| -> Vec<f64> {
        let json = dir.join(name);
        let mut args =
            vec!["collective", "all-reduce", "--system", "trn3-gen1-nl32x2", "-b", "1M", "-e", "4M", "-f", "4"];
        args.extend_from_slice(sets);
        let out = trnsim().args(&args).arg("--json").arg(&json).current_dir(root()).output().expect("run trnsim");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        v["rows"].as_array().unwrap().iter().map(|r| r["energy_uJ"].as_f64().expect("energy_uJ")).collect()
    };
    let plain = coll(&[], "c1.json");
    assert_eq!(plain.len(), 2);
    assert!(plain[1] > plain[0], "{plain:?}");
    let dear = coll(&["--set", "energy.fabric_switch.pj_per_flit=100000"], "c2.json");
    assert!(dear[0] > plain[0] && dear[1] > plain[1], "{dear:?} vs {plain:?}");
}

#[test]
fn a_bad_fabric_energy_figure_is_one_located_error() {
    let out = trnsim()
        .args(["run", "fabric-allreduce-trn2-16", "--system", "trn2-server-4x4"])
        .args(["--set", "energy.neuronlink_serdes.pj_per_bit=-1"])
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("trn2-energy.ron") && err.contains("energy.neuronlink_serdes.pj_per_bit"), "{err}");
}
