//! Halving a chip's HBM stacks with an override (`chip.hbm.stacks=2`, two cores more on each
//! stack) moves a memory-bound workload (a Load over every core, on the cycle-level chip) as
//! the analytic estimate says, within 5 %; and the workload's time is within 10 % of the
//! estimate on both chips.
//!
//! The Load's layout keeps the streams that share a stack inside its open rows
//! (`dma_bytes_per_partition`: 2 KiB per partition with four cores on a stack), the chip
//! sizes each stack's intake buffers for the reads its DMA engines can have outstanding, and
//! the estimate takes the stack's streaming rate and the DMA round trip each measured on its
//! own (docs/validation.md, "An oversubscribed stack").

use trnsim_system::doc::SystemDoc;
use trnsim_workloads::costs::{load_estimate_ns, SystemCosts};
use trnsim_workloads::exec::Costs;
use trnsim_workloads::format::Op;

const BYTES: u64 = 64 << 20;

fn load_ns(sets: &[&str]) -> (f64, f64) {
    let mut doc = SystemDoc::open("trn3-chip").unwrap();
    for s in sets {
        doc.set(s).unwrap();
    }
    let sys = doc.resolve().unwrap();
    let chip = sys.chip().unwrap();
    let mut costs = SystemCosts::new(chip, None, 0.7);
    let sim = costs.memory_ns(&Op::Load { bytes: BYTES }).unwrap();
    (sim, load_estimate_ns(chip, BYTES).unwrap())
}

#[test]
fn halving_hbm_stacks_moves_a_load_as_the_estimate_says() {
    let (sim4, est4) = load_ns(&[]);
    let (sim2, est2) = load_ns(&["chip.hbm.stacks=2", "chip.hbm.cores_per_stack=4"]);
    eprintln!("stock: simulated {sim4:.0} ns, estimate {est4:.0} ns; two stacks: simulated {sim2:.0} ns, estimate {est2:.0} ns");
    for (sim, est) in [(sim4, est4), (sim2, est2)] {
        assert!((sim / est - 1.0).abs() < 0.10, "simulated {sim:.0} ns against the estimate {est:.0} ns");
    }
    let (ratio, want) = (sim2 / sim4, est2 / est4);
    assert!(ratio > 1.2, "two stacks must be slower: {ratio}");
    assert!((ratio / want - 1.0).abs() < 0.05, "time ratio {ratio:.3}, estimate {want:.3}");
}
