//! Latency against first principles: at zero load a cut-through switch adds exactly its
//! port-to-port latency; store-and-forward adds the serialization of the cells behind the
//! header.

use crate::switch::presets::PCIE6_160L_20P;
use crate::switch::traffic::{Bench, BenchParams};
use crate::switch::{Forwarding, SwitchConfig};

/// Runs `packets` packets of `bytes` from input 0 alone (a single source never contends, so
/// every packet sees zero load) and returns (switch latency min and max, sink latency min and
/// max), in port cycles.
fn lone_source(cfg: &SwitchConfig, bytes: u32, load: f64, packets: u64) -> ((u64, u64), (u64, u64)) {
    let p = BenchParams {
        load,
        packet_bytes: bytes,
        limit: Some(packets),
        single_source: Some(0),
        ..BenchParams::default()
    };
    let mut b = Bench::new(cfg, &p).unwrap();
    assert!(b.run_until_drained(1_000_000).unwrap());
    let h = b.switch().stats().latency_cycles();
    assert_eq!(h.count(), packets);
    let s = b.total().latency_ps;
    let ps = cfg.cycle_ps() as u64;
    ((h.min(), h.max()), (s.min() / ps, s.max() / ps))
}

#[test]
fn cut_through_zero_load_latency_is_the_port_to_port_parameter() {
    let cfg = PCIE6_160L_20P.config.clone();
    assert_eq!((cfg.port_to_port_ps, cfg.cycle_ps()), (120_000, 4_000.0));
    let l = cfg.latency_cycles();
    assert_eq!(l, 30);
    // One-cell packets at line rate from one input: header in to header out is exactly L;
    // the sink adds the two one-cycle links.
    let (sw, sink) = lone_source(&cfg, 256, 1.0, 500);
    assert_eq!(sw, (l, l));
    assert_eq!(sink, (l + 2, l + 2));
}

#[test]
fn zero_load_latency_is_reported_in_ns() {
    let cfg = PCIE6_160L_20P.config.clone();
    let p =
        BenchParams { load: 0.5, packet_bytes: 256, limit: Some(50), single_source: Some(3), ..BenchParams::default() };
    let mut b = Bench::new(&cfg, &p).unwrap();
    assert!(b.run_until_drained(100_000).unwrap());
    let r = b.sim.report();
    for stat in ["latency_ns_mean", "latency_ns_max"] {
        assert_eq!(r.get("sw", stat).map(|v| v.as_f64()), Some(120.0), "{stat}");
    }
    assert_eq!(r.int("sw", "p3.in_packets"), Some(50));
    assert_eq!(r.int("sw", "packets"), Some(50));
}

#[test]
fn store_and_forward_adds_the_serialization_behind_the_header() {
    let ct = PCIE6_160L_20P.config.clone();
    let saf = SwitchConfig { forwarding: Forwarding::StoreAndForward, ..ct.clone() };
    let (l, bytes) = (ct.latency_cycles(), 1024); // 4 cells of 256 B
    let k = u64::from(ct.cells(bytes));
    assert_eq!(k, 4);
    // Low load so packets rarely wait at the source; the switch's own latency is exact anyway.
    let (ct_sw, ct_sink) = lone_source(&ct, bytes, 0.05, 200);
    let (saf_sw, saf_sink) = lone_source(&saf, bytes, 0.05, 200);
    assert_eq!(ct_sw, (l, l), "cut-through: the header leaves L after it arrived");
    assert_eq!(saf_sw, (l + k - 1, l + k - 1), "store-and-forward waits for the 3 cells behind the header");
    // 3 cells = 768 B at 64 GB/s = 12 ns. End to end: two links (1 cycle each) and the tail's
    // serialization on the last link (k - 1) on top.
    assert_eq!(ct_sink.0, l + 2 + (k - 1));
    assert_eq!(saf_sink.0, ct_sink.0 + (k - 1));
}

#[test]
fn single_cell_packets_gain_nothing_from_cut_through() {
    let ct = PCIE6_160L_20P.config.clone();
    let saf = SwitchConfig { forwarding: Forwarding::StoreAndForward, ..ct.clone() };
    assert_eq!(lone_source(&ct, 200, 0.5, 100), lone_source(&saf, 200, 0.5, 100));
}
