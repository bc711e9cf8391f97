//! Halving a chip's HBM stacks with an override (`chip.hbm.stacks=2`, two cores more on each
//! stack) moves a memory-bound workload (a Load over every core, on the cycle-level chip) as
//! the analytic estimate says, within 5 %; and the workload's time is within 10 % of the
//! estimate on both chips.
//!
//! Known failure, so ignored (counted as ignored, never as passed), for two reasons that the
//! HBM front end does not decide (docs/validation.md, "An oversubscribed stack"):
//! - with four cores on a stack, the Load's 64 concurrent DMA streams cover 2.25 MiB of each
//!   stack at once, more than its 1536 banks keep open (1.5 MiB of rows): a quarter of the
//!   reads need an ACT, and four ACTs per tFAW per pseudo-channel bound the run at 32.6 us
//!   before any queueing (simulated 36.3 us; the estimate, 28.6 us, counts only data-bus time);
//! - on the stock chip the Load is latency-bound and the estimate's loaded round trip (75 ns)
//!   is longer than the simulated one (about 66 ns): 18.1 us simulated against 20.5 us.
//!
//! The front end's own share (a full pseudo-channel queue blocking its port for every other
//! channel: 57.7 us before the intake buffers) is gone. Run it with
//! `cargo test -p trnsim-tests --test integration -- --ignored halving_hbm`.

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
#[ignore = "bank conflicts of 64 streams bound the oversubscribed stack at tFAW; the estimate's 75 ns round trip is 10 ns long"]
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
