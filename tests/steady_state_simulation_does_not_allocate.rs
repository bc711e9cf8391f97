//! A chip's simulation in steady state does not allocate per tick: after a warm-up (queues,
//! link buffers, histograms and calendars grown to their working size), 20 us to 30 us of
//! `e2e-llm-layer`'s run (8 NeuronCores, their DMA engines and SBUFs, 4 HBM stacks; about
//! 300,000 component ticks) allocates less than once per thousand ticks, in both fidelities
//! (measured: 0.5 and 0.2). An allocation per instruction, per memory access or per cycle
//! on a hot path shows as several per thousand or more (one per instruction: 3.9).
//!
//! Counted by `trnsim_kernel::alloc_count::CountingAlloc`, which counts only on the thread
//! that asks, so concurrent tests do not disturb it (the integration binary's global
//! allocator).

use trnsim_benchmarks::e2e;
use trnsim_benchmarks::neuroncore::assemble_text;
use trnsim_kernel::alloc_count::CountingAlloc;
use trnsim_kernel::{Dur, SimBuilder};
use trnsim_system::chip::{self, Chip};

#[global_allocator]
static COUNTING: CountingAlloc = CountingAlloc;

/// (allocations, component ticks) from 20 us to 30 us of the chip's run (it ends near 35 us).
fn steady_state(chip: &Chip) -> (u64, u64) {
    let s = &e2e::SHAPE;
    let programs: Vec<_> = (0..chip.spec.cores)
        .map(|i| assemble_text("e2e-llm-layer (generated)", &e2e::program(s, i)).expect("assembles"))
        .collect();
    let mut b = SimBuilder::new();
    chip::build(&mut b, chip, &programs, false).expect("builds");
    let mut sim = b.build().expect("builds");
    sim.run_until(Dur::from_us(20), |_| false).expect("runs");
    let ticks = sim.counters().ticks;
    let (_, allocs) = CountingAlloc::count(|| sim.run_until(Dur::from_us(10), |_| false).expect("runs"));
    (allocs, sim.counters().ticks - ticks)
}

#[test]
fn a_chip_in_steady_state_allocates_less_than_once_per_thousand_ticks() {
    assert!(CountingAlloc::installed(), "the counting allocator is the global allocator");
    let cycle = chip::trn3().expect("the Trn3 chip");
    let mut fast = cycle.clone();
    fast.spec.hbm.fidelity = trnsim_mem::hbm::Fidelity::Fast;
    fast.spec.dma.fidelity = trnsim_mem::hbm::Fidelity::Fast;
    for (name, chip) in [("cycle", &cycle), ("fast", &fast)] {
        let (allocs, ticks) = steady_state(chip);
        assert!(ticks > 100_000, "{name}: the window is busy ({ticks} ticks)");
        assert!(allocs * 1000 < ticks, "{name}: {allocs} allocations in {ticks} ticks");
    }
}
