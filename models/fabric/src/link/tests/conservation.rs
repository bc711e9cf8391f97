//! Every packet is delivered exactly once and in order per flow, whatever the bit errors; and
//! the order checker notices when the link breaks that on purpose.

use super::{run, Setup};
use crate::link::LinkFaults;
use trnsim_kernel::{Dur, Stop};

const PCIE_SIZES: &[u32] = &[4, 64, 100, 256, 1000, 4096];
const UALINK_SIZES: &[u32] = &[64, 128, 192, 256];
/// Small packets for non-flit mode at a high BER (a framed 4 KiB TLP would fail 96 % of the time).
const SMALL_SIZES: &[u32] = &[4, 64, 128, 256];

fn check_conserved(encoding: &str, lanes: u32, ber: f64, count: u64, sizes: &[u32]) {
    let o = run(&Setup::new(encoding, lanes, ber, count, sizes));
    let what = format!("{encoding} x{lanes} at ber {ber}");
    assert_eq!(o.stop, Stop::Idle, "{what}: the run drains");
    assert_eq!(o.verdict, Ok(()), "{what}");
    assert_eq!(o.received, count, "{what}");
    assert_eq!(o.sent_per_flow.iter().sum::<u64>(), count, "{what}");
    assert!(o.tx.flits_corrupted > 0 && o.rx.crc_errors == o.tx.flits_corrupted, "{what}: errors were injected");
    assert!(o.tx.replays > 0 && o.rx.naks > 0, "{what}: and replayed");
    assert_eq!(o.tx.refused_sends, 0, "{what}");
}

#[test]
fn random_traffic_at_ber_1e6_is_delivered_once_in_order() {
    check_conserved("pcie-gen6", 8, 1e-6, 4000, PCIE_SIZES);
    check_conserved("pcie-gen5", 16, 1e-6, 4000, PCIE_SIZES);
    check_conserved("ualink-200g", 4, 1e-6, 8000, UALINK_SIZES);
}

#[test]
fn random_traffic_at_ber_1e4_is_delivered_once_in_order() {
    check_conserved("pcie-gen6", 8, 1e-4, 1500, PCIE_SIZES);
    check_conserved("pcie-gen5", 16, 1e-4, 1500, SMALL_SIZES);
    check_conserved("ualink-200g", 4, 1e-4, 1500, UALINK_SIZES);
}

#[test]
fn slow_sink_back_pressures_through_credits_without_loss() {
    let mut s = Setup::new("pcie-gen6", 8, 1e-5, 600, PCIE_SIZES);
    s.sink_interval = Some(Dur::from_ns(30));
    s.params.rx_buffer_packets = 8;
    s.params.rx_buffer_bytes = 8192;
    let o = run(&s);
    assert_eq!(o.verdict, Ok(()));
    assert_eq!(o.received, 600);
    assert!(o.tx.credit_stall.total_ps(o.end) > 0, "the transmitter ran out of credits");
    assert!(o.rx.buffer_occupancy.max() <= 8, "credits bound the receive buffer: {}", o.rx.buffer_occupancy.max());
}

#[test]
fn checker_catches_a_planted_duplicate() {
    let mut s = Setup::new("pcie-gen6", 8, 1e-6, 500, PCIE_SIZES);
    s.faults = LinkFaults { duplicate_seq: Some(40), drop_seq: None };
    let o = run(&s);
    let err = o.verdict.expect_err("a duplicate must be reported");
    assert!(err.contains("seq 40 arrived again"), "{err}");
    assert_eq!(o.received, 501);
}

#[test]
fn checker_catches_a_planted_drop() {
    let mut s = Setup::new("ualink-200g", 4, 1e-6, 500, UALINK_SIZES);
    s.faults = LinkFaults { duplicate_seq: None, drop_seq: Some(40) };
    let o = run(&s);
    let err = o.verdict.expect_err("a loss must be reported");
    assert!(err.contains("while 40 was expected"), "{err}");
    assert_eq!(o.received, 499);
}
