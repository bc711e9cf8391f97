//! The fast fidelity against the cycle-level stack it stands in for (its lone read's
//! latency is checked with the cycle model's, in `latency.rs`).

use super::latency::run;
use crate::hbm::traffic::Pattern;
use crate::hbm::{presets, Fidelity, StackConfig};

fn figures(cfg: &StackConfig, pattern: Pattern, n: u64) -> (f64, f64) {
    let r = run(cfg, pattern, n, 4096, 64);
    let bw = r.get("hbm", "bandwidth_GBps").unwrap().as_f64();
    let hits = r.int("hbm", "row_hits").unwrap() as f64 / n as f64;
    (bw, hits)
}

#[test]
fn fast_bandwidth_and_row_hits_stay_near_the_cycle_level_stack() {
    // Measured on 400 k requests (docs/validation.md): stream +6.0 %, random +2.5 %, mix
    // +3.5 %, same bank +1.5 %; the bounds leave room for the shorter runs here.
    let p = presets::find("hbm3e-9600").unwrap();
    for (pattern, n, tol) in
        [(Pattern::StreamRead, 60_000, 0.08), (Pattern::RandomRead, 40_000, 0.06), (Pattern::Mix, 40_000, 0.10)]
    {
        let cycle = StackConfig::from_preset(p);
        let mut fast = cycle.clone();
        fast.fidelity = Fidelity::Fast;
        let (bc, hc) = figures(&cycle, pattern, n);
        let (bf, hf) = figures(&fast, pattern, n);
        assert!((bf / bc - 1.0).abs() < tol, "{pattern:?}: fast {bf:.1} GB/s, cycle {bc:.1} GB/s");
        assert!((hf - hc).abs() < 0.02, "{pattern:?}: row hits fast {hf:.4}, cycle {hc:.4}");
    }
}

#[test]
fn the_fast_fidelity_is_deterministic() {
    let mut cfg = StackConfig::from_preset(presets::find("hbm3-6400").unwrap());
    cfg.fidelity = Fidelity::Fast;
    let a = run(&cfg, Pattern::Mix, 20_000, 256, 16).to_table();
    let b = run(&cfg, Pattern::Mix, 20_000, 256, 16).to_table();
    assert_eq!(a, b);
}
