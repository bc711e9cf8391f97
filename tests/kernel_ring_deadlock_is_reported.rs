//! A ring whose every buffer is full (zero free credits anywhere) is reported as a deadlock
//! that names its components and the cycle of full links.

use trnsim_benchmarks::ring::{self, RingParams};
use trnsim_kernel::{Dur, RunError, SimOptions};

#[test]
fn full_ring_deadlock_names_its_components() {
    let p = RingParams { modules: 4, tokens: 8, depth: 2 };
    let mut sim = ring::build(p, SimOptions::default()).unwrap();
    let err = sim.run_for(Dur::from_us(1)).expect_err("a full ring cannot move");
    let RunError::Deadlock(rep) = err else { panic!("expected a deadlock, got {err}") };
    assert_eq!(rep.messages_in_links, 8);
    assert_eq!(rep.full_links.len(), 4);
    let names: Vec<&str> = rep.blocked.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["ring.m0", "ring.m1", "ring.m2", "ring.m3"]);
    assert_eq!(rep.cycle, ["ring.m0", "ring.m1", "ring.m2", "ring.m3"]);
    let text = rep.to_string();
    assert!(text.contains("cycle of full links: ring.m0 -> ring.m1 -> ring.m2 -> ring.m3 -> ring.m0"), "{text}");
    assert!(text.contains("ring.m3.out -> ring.m0.in"), "{text}");
}

#[test]
fn ring_with_one_free_slot_is_not_a_deadlock() {
    let p = RingParams { modules: 4, tokens: 7, depth: 2 };
    let mut sim = ring::build(p, SimOptions::default()).unwrap();
    sim.run_for(Dur::from_us(1)).expect("one free slot keeps the ring moving");
}
