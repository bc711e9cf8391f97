//! The action counters a component gives a sampler (`Component::counters`, read by
//! `Simulation::read_counters` with no names built and nothing allocated: what the traced
//! power counters are priced from) are the counts its statistics report writes under the
//! same names, and a link's `Simulation::link_bytes` is its report's `bytes`: on a chip
//! (engines, DMA blocks, HBM stacks) stopped mid-run, in both HBM and DMA fidelities.

use std::collections::BTreeMap;
use trnsim_benchmarks::e2e;
use trnsim_benchmarks::neuroncore::assemble_text;
use trnsim_kernel::{ComponentId, Dur, SimBuilder, StatValue};
use trnsim_system::chip::{self, Chip};

/// Every counter of every component and link, checked against the report; the totals of a
/// few, to see that the run was busy.
fn check(chip: &Chip) -> BTreeMap<&'static str, u64> {
    let s = &e2e::SHAPE;
    let programs: Vec<_> = (0..chip.spec.cores)
        .map(|i| assemble_text("e2e-llm-layer (generated)", &e2e::program(s, i)).expect("assembles"))
        .collect();
    let mut b = SimBuilder::new();
    chip::build(&mut b, chip, &programs, false).expect("builds");
    let mut sim = b.build().expect("builds");
    sim.run_until(Dur::from_us(12), |_| false).expect("runs");
    let report = sim.report();
    let mut totals = BTreeMap::new();
    for (i, name) in sim.component_names().iter().enumerate() {
        let mut got: BTreeMap<&'static str, u64> = BTreeMap::new();
        sim.read_counters(ComponentId::from_index(i), &mut |k, n| *got.entry(k).or_default() += n);
        for (k, n) in got {
            let want = report.owners.get(name).and_then(|m| m.get(k));
            assert_eq!(want, Some(&StatValue::Int(n)), "{name}: counter {k}");
            *totals.entry(k).or_default() += n;
        }
    }
    for (i, l) in sim.links().iter().enumerate() {
        let owner = format!("link:{}", l.name);
        let want = report.int(&owner, "bytes");
        assert_eq!(sim.link_bytes(i), want, "{owner}: bytes");
    }
    totals
}

#[test]
fn counters_read_mid_run_equal_the_reports_counts() {
    let cycle = chip::trn3().expect("the Trn3 chip");
    let mut fast = cycle.clone();
    fast.spec.hbm.fidelity = trnsim_mem::hbm::Fidelity::Fast;
    fast.spec.dma.fidelity = trnsim_mem::hbm::Fidelity::Fast;
    for (name, chip) in [("cycle", &cycle), ("fast", &fast)] {
        let t = check(chip);
        for k in ["macs_bf16", "flops", "sbuf_bytes", "psum_bytes", "bytes", "reads", "cmd_ACT", "cmd_RD"] {
            assert!(t.get(k).copied().unwrap_or(0) > 0, "{name}: no {k} counted by 12 us: {t:?}");
        }
    }
}
