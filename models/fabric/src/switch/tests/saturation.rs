//! Saturation throughput under uniform random traffic (Bernoulli arrivals, uniform
//! destinations, one cell per packet, speedup 1) on a 32-port switch, against the classic
//! results: VOQ + iSLIP near 100 % (McKeown 1999), one FIFO per input at the head-of-line
//! limit 2 - sqrt(2) = 58.6 % (Karol, Hluchyj and Morgan 1987; 59.0 % for N = 32), and
//! round-robin matching (RRM) near 63 % (McKeown 1999 §II).

use crate::switch::traffic::{
    saturation_load, saturation_throughput, study_config, sweep, BenchParams, LoadPoint, SweepParams,
};
use crate::switch::{Queueing, SwitchConfig};

const N: u16 = 32;
/// Karol, Hluchyj and Morgan's large-N head-of-line saturation throughput, 2 - sqrt(2).
const HOL_LIMIT: f64 = 0.5858;

pub(super) fn cfg(queueing: Queueing, arbiter: &str, iterations: u32) -> SwitchConfig {
    SwitchConfig { queueing, arbiter: arbiter.into(), iterations, ..study_config(N) }
}

/// Accepted load at offered load 1 after `warmup` cycles (the input buffers fill at the rate
/// offered minus accepted, so a switch near 100 % needs a long warm-up to reach steady state).
pub(super) fn saturated(cfg: &SwitchConfig, warmup: u64) -> f64 {
    let sp = SweepParams { warmup_cycles: warmup, sample_cycles: 5_000, max_samples: 4, ..SweepParams::default() };
    saturation_throughput(cfg, &BenchParams { seed: 7, ..BenchParams::default() }, &sp).expect("bench runs")
}

pub(super) fn sweep_of(cfg: &SwitchConfig, loads: &[f64]) -> Vec<LoadPoint> {
    sweep(cfg, &BenchParams { seed: 7, ..BenchParams::default() }, &SweepParams::default(), loads).expect("bench runs")
}

#[test]
fn voq_islip_saturates_near_100_percent() {
    for it in [1, 4] {
        let th = saturated(&cfg(Queueing::Voq, "islip", it), 40_000);
        assert!(th >= 0.97, "VOQ + iSLIP-{it}: {th:.4}");
    }
}

#[test]
fn single_fifo_saturates_at_the_head_of_line_limit() {
    let th = saturated(&cfg(Queueing::Fifo, "islip", 1), 5_000);
    assert!((th - HOL_LIMIT).abs() <= 0.03, "FIFO: {th:.4} vs {HOL_LIMIT}");
    assert!((th - 0.590).abs() <= 0.01, "FIFO: {th:.4} vs 0.590 for N = 32 (Karol et al., Table I)");
    let rr = saturated(&cfg(Queueing::Fifo, "round-robin", 1), 5_000);
    assert!((rr - HOL_LIMIT).abs() <= 0.03, "FIFO, round-robin: {rr:.4}: the arbiter cannot help a FIFO");
}

#[test]
fn four_islip_iterations_beat_one() {
    let (one, four) = (cfg(Queueing::Voq, "islip", 1), cfg(Queueing::Voq, "islip", 4));
    let (t1, t4) = (saturated(&one, 40_000), saturated(&four, 40_000));
    assert!(t4 >= t1, "throughput: 4 iterations {t4:.4} < 1 iteration {t1:.4}");
    let (p1, p4) = (&sweep_of(&one, &[0.9])[0], &sweep_of(&four, &[0.9])[0]);
    assert!(!p1.saturated && !p4.saturated, "{p1:?} {p4:?}");
    assert!(p4.latency_mean_cycles * 5.0 < p1.latency_mean_cycles, "latency at 0.9: {p4:?} vs {p1:?}");
}

#[test]
fn round_robin_matching_saturates_near_63_percent() {
    let pts = sweep_of(&cfg(Queueing::Voq, "round-robin", 1), &[0.5, 0.55, 0.6, 0.65, 0.7]);
    let sat = saturation_load(&pts).expect("RRM saturates below 0.7");
    assert!((0.6..=0.7).contains(&sat), "{pts:#?}");
}

#[test]
fn latency_rises_with_load_to_saturation() {
    let loads = [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95];
    let pts = sweep_of(&cfg(Queueing::Voq, "islip", 4), &loads);
    for w in pts.windows(2) {
        assert!(w[1].latency_mean_cycles > w[0].latency_mean_cycles, "{:?} then {:?}", w[0], w[1]);
    }
    for p in &pts {
        assert!(!p.saturated && (p.accepted - p.offered).abs() < 0.01, "accepted tracks offered: {p:?}");
    }
    assert!(pts[0].latency_mean_cycles < 2.5 && pts[6].latency_mean_cycles > 10.0, "{pts:#?}");
    // Past the head-of-line limit a FIFO switch is unstable: accepted load stays near 0.59.
    let fifo = sweep_of(&cfg(Queueing::Fifo, "islip", 1), &[0.3, 0.5, 0.7, 0.9]);
    assert_eq!(saturation_load(&fifo), Some(0.7), "{fifo:#?}");
    assert!(fifo[3].accepted < 0.62 && fifo[3].latency_mean_cycles > fifo[1].latency_mean_cycles * 10.0);
}

/// The figures of the report: `cargo test --release -p trnsim-fabric -- --ignored --nocapture
/// switch_figures`.
#[test]
#[ignore = "prints the report's figures (about 10 s in release)"]
fn switch_figures() {
    let runs = [
        ("VOQ + iSLIP-1", cfg(Queueing::Voq, "islip", 1)),
        ("VOQ + iSLIP-4", cfg(Queueing::Voq, "islip", 4)),
        ("VOQ + RRM", cfg(Queueing::Voq, "round-robin", 1)),
        ("FIFO", cfg(Queueing::Fifo, "islip", 1)),
    ];
    let loads = [0.1, 0.3, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9, 0.95, 0.98];
    for (name, c) in &runs {
        println!("{name}: saturation throughput (offered 1.0, 40k warm-up) {:.4}", saturated(c, 40_000));
        let pts = sweep_of(c, &loads);
        println!("  saturation load {:?}", saturation_load(&pts));
        for p in &pts {
            println!(
                "  offered {:.2} accepted {:.4} latency mean {:7.1} p99 {:7.1} cycles{}",
                p.offered,
                p.accepted,
                p.latency_mean_cycles,
                p.latency_p99_cycles,
                if p.saturated { "  saturated" } else { "" }
            );
        }
    }
}

#[test]
fn permutations_remove_head_of_line_blocking_and_a_hotspot_caps_throughput() {
    use crate::switch::traffic::Pattern;
    let sp = SweepParams { warmup_cycles: 5_000, sample_cycles: 5_000, max_samples: 4, ..SweepParams::default() };
    let run = |c: &SwitchConfig, pattern| {
        saturation_throughput(c, &BenchParams { seed: 7, pattern, ..BenchParams::default() }, &sp).expect("bench runs")
    };
    // A permutation sends each input's packets to one output that no other input targets: even a
    // FIFO switch carries full load (N = 32 is a power of two for bit reverse; transpose needs a
    // square, so it runs on 16 ports).
    let fifo = cfg(Queueing::Fifo, "islip", 1);
    assert!(run(&fifo, Pattern::BitReverse) >= 0.99, "FIFO, bit reverse");
    let fifo16 = SwitchConfig { queueing: Queueing::Fifo, ..study_config(16) };
    assert!(run(&fifo16, Pattern::Transpose) >= 0.99, "FIFO, transpose");
    // A hotspot taking a share h of every input's packets: the hot output carries at most one
    // cell per cycle, so it saturates at an offered load of 1 / (h N + (1 - h)) per input.
    // Beyond that the hot VOQs fill the shared input buffers and hold back the other traffic
    // too (tree saturation inside the switch): accepted load stays far below uniform's ~0.99.
    let h = 0.1;
    let hot = run(&cfg(Queueing::Voq, "islip", 4), Pattern::Hotspot { node: 0, fraction: h });
    let bound = 1.0 / (h * f64::from(N) + (1.0 - h));
    assert!(hot >= bound && hot < 0.6, "hotspot accepted {hot:.3}, hot-output saturation at {bound:.3}");
    // All-to-all rotates destinations: VOQ + iSLIP carries it near line rate.
    assert!(run(&cfg(Queueing::Voq, "islip", 4), Pattern::AllToAll) >= 0.95, "all-to-all");
}
