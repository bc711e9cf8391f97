//! A saturated error-free link delivers the analytic payload rate of its encoding:
//! `lanes x lane rate x line code / 8`, times the flit's payload share (flit mode), times
//! `payload / (header + payload [+ framing])`. Measured as delivered payload over the time from
//! the first packet's acceptance to the last delivery, within 1 %.

use super::{run, Setup};
use crate::link::{effective_payload_bytes_per_s, LinkParams};

/// Runs `count` packets of `payload` bytes and returns (measured, analytic) in GB/s.
fn saturate(encoding: &str, lanes: u32, payload: u32, count: u64) -> (f64, f64) {
    let o = run(&Setup::new(encoding, lanes, 0.0, count, &[payload]));
    assert_eq!(o.verdict, Ok(()));
    assert_eq!(o.tx.flits_replayed, 0);
    let link = LinkParams::with(encoding, lanes).validate().expect("valid");
    let want = effective_payload_bytes_per_s(&link, payload) / 1e9;
    let got = o.rx.goodput_gbytes_per_s();
    eprintln!("{encoding} x{lanes}, {payload} B packets: measured {got:.3} GB/s, analytic {want:.3} GB/s");
    assert!((got - want).abs() <= 0.01 * want, "{encoding} x{lanes} {payload} B: {got} vs {want} GB/s");
    (got, want)
}

#[test]
fn gen6_x8_delivers_236_of_256_less_the_tlp_header() {
    // 64 GB/s x 236/256 x 256/272 = 55.53 GB/s; x 4096/4112 = 58.77 GB/s for 4 KiB packets.
    let (_, want) = saturate("pcie-gen6", 8, 256, 20_000);
    assert!((want - 55.53).abs() < 0.01, "{want}");
    let (_, want) = saturate("pcie-gen6", 8, 4096, 2_000);
    assert!((want - 58.77).abs() < 0.01, "{want}");
}

#[test]
fn ualink_x4_delivers_628_of_640_less_the_request_header() {
    // 4 x 200 Gb/s = 100 GB/s x 628/640 x 256/272 = 92.35 GB/s.
    let (_, want) = saturate("ualink-200g", 4, 256, 20_000);
    assert!((want - 92.35).abs() < 0.01, "{want}");
}

#[test]
fn gen5_x16_delivers_128b130b_less_framing_and_header() {
    // 16 x 32 Gb/s x 128/130 / 8 = 63.02 GB/s x 256/280 = 57.61 GB/s.
    let (_, want) = saturate("pcie-gen5", 16, 256, 20_000);
    assert!((want - 57.61).abs() < 0.01, "{want}");
    saturate("pcie-gen5", 16, 4096, 2_000);
}
