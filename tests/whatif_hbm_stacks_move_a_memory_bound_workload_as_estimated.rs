//! Halving a chip's HBM stacks with an override (`chip.hbm.stacks=2`, two cores more on each
//! stack) moves a memory-bound workload (a Load over every core, on the cycle-level chip) as
//! the analytic estimate says, within 5 %; and the workload's time is within 10 % of the
//! estimate on both chips.
//!
//! Known failure, so ignored (counted as ignored, never as passed): with four cores on a stack
//! the stack is oversubscribed and the cycle-level HBM front end reaches 47 % of its peak
//! (58 us for 64 MiB against the estimate's 29 us): a request whose pseudo-channel queue is
//! full blocks its port for every other channel. docs/workloads.md has the figures; fixing the
//! front end is HBM-fidelity work. Run it with `cargo test -p trnsim-tests -- --ignored
//! halving_hbm`.

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
    (sim, load_estimate_ns(chip, BYTES))
}

#[test]
#[ignore = "the HBM front end blocks a port behind a full pseudo-channel queue: an oversubscribed stack reaches 47 % of peak"]
fn halving_hbm_stacks_moves_a_load_as_the_estimate_says() {
    let (sim4, est4) = load_ns(&[]);
    let (sim2, est2) = load_ns(&["chip.hbm.stacks=2", "chip.hbm.cores_per_stack=4"]);
    for (sim, est) in [(sim4, est4), (sim2, est2)] {
        assert!((sim / est - 1.0).abs() < 0.10, "simulated {sim:.0} ns against the estimate {est:.0} ns");
    }
    let (ratio, want) = (sim2 / sim4, est2 / est4);
    assert!(ratio > 1.2, "two stacks must be slower: {ratio}");
    assert!((ratio / want - 1.0).abs() < 0.05, "time ratio {ratio:.3}, estimate {want:.3}");
}
