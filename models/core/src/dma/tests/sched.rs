//! Queue arbitration seen from outside: which queue each packet came from.

use super::{load, rig};
use crate::dma::DmaParams;
use trnsim_kernel::{Dur, Time};

#[test]
fn round_robin_alternates_packets_between_two_queues() {
    // Two 32 KiB loads (8 packets each) on engine 0, queues 0 and 1, arriving together.
    let cmds = vec![(Time::ZERO, load(1, 0, 0, 0, 8, 4096)), (Time::ZERO, load(2, 1, 1 << 20, 0, 8, 4096))];
    let mut r = rig(DmaParams::v3(), cmds, false);
    r.run();
    let picks = r.block().picks(0).to_vec();
    println!("round robin, engine 0 queues served: {picks:?}");
    assert_eq!(picks, [0, 1].repeat(8));
    assert_eq!(r.sem_ops().len(), 2);
}

#[test]
fn qos_serves_class_zero_first() {
    // Queue 3 (class 3) arrives one cycle before queue 0 (class 0): it gets the first packet,
    // then class 0 takes every packet until it is empty.
    let late = Time::ZERO + Dur::from_ps(714);
    let cmds = vec![(Time::ZERO, load(1, 3, 0, 0, 8, 4096)), (late, load(2, 0, 1 << 20, 0, 8, 4096))];
    let mut r = rig(DmaParams::v4(), cmds.clone(), false);
    r.run();
    let picks = r.block().picks(0).to_vec();
    println!("qos, engine 0 queues served: {picks:?}");
    let mut expect = vec![3];
    expect.extend([0; 8]);
    expect.extend([3; 7]);
    assert_eq!(picks, expect);
    // The same arrivals under round robin alternate instead.
    let mut rr = rig(DmaParams::v3(), cmds, false);
    rr.run();
    assert_eq!(rr.block().picks(0)[..4], [3, 0, 3, 0]);
}

#[test]
fn queues_of_different_engines_do_not_interact() {
    // Engine 0 and engine 1 each get one command; both finish as if alone.
    let cmds = vec![(Time::ZERO, load(1, 0, 0, 0, 8, 4096)), (Time::ZERO, load(2, 0, 1 << 20, 8, 8, 4096))];
    let mut r = rig(DmaParams::v4(), cmds, false);
    r.run();
    assert_eq!(r.block().picks(0), &[0; 8]);
    assert_eq!(r.block().picks(1), &[0; 8]);
    let t: Vec<f64> = r.sem_ops().iter().map(|(t, _)| t.as_ns_f64()).collect();
    assert!((t[0] - t[1]).abs() < 20.0, "{t:?}");
}
