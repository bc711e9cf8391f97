//! A link or switch made very slow by a what-if is a long wait, not a deadlock: the
//! packet-level network (one kernel component) declares its slowest hop as silence the
//! deadlock check allows, as links declare their round trips.

use crate::common::trnsim;

#[test]
fn a_millisecond_phy_runs_the_collective_benchmark_to_the_end() {
    let out = trnsim().args(["run", "fabric-allreduce-trn2-16", "--set", "fabric.phy=1ms"]).output().unwrap();
    let (so, se) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "exit {:?}\nstdout: {so}\nstderr: {se}", out.status.code());
    assert!(!se.contains("deadlock"), "{se}");
    // Each ring step waits out the 1 ms PHY at least once: the time shows it.
    let t = so
        .lines()
        .find(|l| l.contains("all_reduce_ring_16777216B_time_us"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse::<f64>().ok())
        .expect("the 16 MiB ring time");
    assert!(t > 15.0 * 1000.0, "16 MiB ring on 16 chips with a 1 ms PHY: {t} us");
}

#[test]
fn a_slow_switch_runs_the_collective_to_the_end() {
    let out = trnsim()
        .args(["collective", "all-reduce", "--system", "trn3-gen1-ultraserver", "--set"])
        .args(["fabric.switch.latency=200us", "-b", "64K", "-e", "64K"])
        .output()
        .unwrap();
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {se}", out.status.code());
    assert!(!se.contains("deadlock"), "{se}");
}
