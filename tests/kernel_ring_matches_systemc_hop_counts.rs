//! The ring benchmark moves exactly the tokens the SystemC reference model moves
//! (scripts/systemc/ring.cpp; counts measured there), including cases where tokens block.
//! (The completely full ring, where SystemC counts 0 hops, is a deadlock here: see
//! kernel_ring_deadlock_is_reported.rs.)

use trnsim_benchmarks::ring::RingParams;
use trnsim_benchmarks::suite::{run_ring, RunOpts};
use trnsim_kernel::TickOrder;

fn hops(modules: u32, tokens: u32, depth: u32, cycles: u64) -> f64 {
    let opts = RunOpts { order: TickOrder::Structural, trace: None, progress: false, fidelity: Default::default() };
    let r = run_ring("ring", RingParams { modules, tokens, depth }, cycles, opts).expect("ring runs");
    r.headline.iter().find(|(k, _)| k == "hops").map(|(_, v)| *v).unwrap()
}

#[test]
fn ring_hop_counts_equal_systemc() {
    // (modules, tokens, depth, cycles, hops measured with the SystemC model)
    let cases = [
        (4, 2, 2, 10, 20.0),
        (4, 7, 2, 10, 10.0),
        (4, 6, 2, 10, 20.0),
        (3, 4, 2, 10, 20.0),
        (64, 200, 4, 1000, 56_000.0),
        (64, 128, 4, 1000, 64_000.0),
        (64, 255, 4, 1000, 1_000.0),
        (64, 16, 4, 10_000, 160_000.0),
        (64, 2, 4, 10_000, 20_000.0),
    ];
    for (m, t, d, c, want) in cases {
        assert_eq!(hops(m, t, d, c), want, "modules {m} tokens {t} depth {d} cycles {c}");
    }
}
