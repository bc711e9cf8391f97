//! An unloaded packet's link latency (first byte on the lanes to delivery at the receiver) is
//! exactly `phy + wire + link_layer + units x unit serialization time` when those land on
//! clock edges, and within one clock period otherwise.

use super::{run, Setup};
use trnsim_kernel::{Dur, Frequency};

/// Sends 5 packets of `payload` bytes 2 us apart; returns (min, max) link latency in ps.
fn unloaded(encoding: &str, lanes: u32, payload: u32, clock: Frequency) -> (u64, u64) {
    let mut s = Setup::new(encoding, lanes, 0.0, 5, &[payload]);
    s.source.interval = Some(Dur::from_us(2));
    s.clock = clock;
    let o = run(&s);
    assert_eq!(o.verdict, Ok(()));
    assert_eq!(o.rx.latency_ps.count(), 5);
    (o.rx.latency_ps.min(), o.rx.latency_ps.max())
}

/// Default fixed latency: phy 40 + wire 5 + link layer 10 ns.
const FIXED_PS: u64 = 55_000;

#[test]
fn gen6_unloaded_latency_is_phy_wire_link_layer_plus_serialization() {
    // 64 B + 16 B header fit one 256 B flit: 4 ns at 64 GB/s.
    assert_eq!(unloaded("pcie-gen6", 8, 64, Frequency::from_mhz(1000)), (FIXED_PS + 4_000, FIXED_PS + 4_000));
    // 1000 B + 16 B = 1016 B of TLP span ceil(1016 / 236) = 5 flits.
    assert_eq!(unloaded("pcie-gen6", 8, 1000, Frequency::from_mhz(1000)), (FIXED_PS + 20_000, FIXED_PS + 20_000));
    // x16: a flit takes 2 ns.
    assert_eq!(unloaded("pcie-gen6", 16, 64, Frequency::from_mhz(1000)), (FIXED_PS + 2_000, FIXED_PS + 2_000));
}

#[test]
fn ualink_unloaded_latency_is_exact_on_a_200ps_clock() {
    // One 640 B DL flit at 100 GB/s = 6.4 ns; 55 ns = 275 cycles of 200 ps.
    assert_eq!(unloaded("ualink-200g", 4, 256, Frequency::from_mhz(5000)), (FIXED_PS + 6_400, FIXED_PS + 6_400));
}

#[test]
fn gen5_unloaded_latency_is_within_one_clock_period() {
    // 64 B + 16 B header + 8 B framing = 88 B at 63.0 GB/s = 1396.5 ps; the transmitter hands
    // the packet on at the next 1 ns edge.
    let exact = FIXED_PS as f64 + 88.0 * 8.0 * 130.0 * 1e6 / (16.0 * 32_000.0 * 128.0);
    let (lo, hi) = unloaded("pcie-gen5", 16, 64, Frequency::from_mhz(1000));
    assert_eq!(lo, hi);
    assert!(lo as f64 >= exact && (lo as f64) < exact + 1_000.0, "{lo} vs {exact}");
}
