//! Go-back-N replay: goodput under bit errors follows the analytic expectation, the replay
//! buffer never holds more than its size, and a replay that is itself lost is recovered.
//!
//! Analysis (saturated link, unit error probability `p = 1 - (1 - ber)^bits`): a unit lost on
//! its first try costs `K = ceil((T + 2L) / T)` unit slots (itself, the units sent while its
//! NAK travels, then the replay starts), where `T` is the unit time and `L` the one-way fixed
//! latency. A lost replay head is noticed one good unit later: `K + 1/(1-p)` slots on average.
//! So the slots per delivered unit are
//!
//! ```text
//!   A = 1 + pK/(1-p) + p/(1-p)^2          (from a replay head until success)
//!   F = (1-p) + p (K + A)                 (from a first try until success)
//! ```
//!
//! and goodput = error-free goodput / F.

use super::{run, Setup};
use crate::link::{effective_payload_bytes_per_s, LinkParams};

/// (measured GB/s, expected GB/s, replays) for saturated Gen6 x8 with 256 B packets at `ber`.
fn goodput_at(ber: f64, count: u64) -> (f64, f64, u64) {
    let o = run(&Setup::new("pcie-gen6", 8, ber, count, &[256]));
    assert_eq!(o.verdict, Ok(()));
    assert!(o.tx.replay_peak <= 256);
    let p = LinkParams::with("pcie-gen6", 8);
    let link = p.validate().expect("valid");
    let t = link.serialization_ps(256);
    let l = p.fixed_latency().as_ps() as f64;
    let k = ((t + 2.0 * l) / t).ceil();
    let pe = 1.0 - (1.0 - ber).powf(256.0 * 8.0);
    let a = 1.0 + pe * k / (1.0 - pe) + pe / (1.0 - pe).powi(2);
    let f = (1.0 - pe) + pe * (k + a);
    let want = effective_payload_bytes_per_s(&link, 256) / 1e9 / f;
    let got = o.rx.goodput_gbytes_per_s();
    eprintln!(
        "gen6 x8 ber {ber}: flit error p {pe:.4}, K {k}, slots/flit {f:.4}: measured {got:.3} GB/s, expected \
         {want:.3} GB/s; {} replays, {} timeouts, replay buffer peak {}",
        o.tx.replays, o.tx.replay_timeouts, o.tx.replay_peak
    );
    (got, want, o.tx.replays)
}

#[test]
fn goodput_under_replays_follows_go_back_n() {
    // p = 1.0 %: goodput falls to ~77 % of 55.5 GB/s. 3 % is ~4 standard deviations of the
    // error count over ~150k flit slots.
    let (got, want, replays) = goodput_at(5e-6, 100_000);
    assert!(replays > 500, "{replays}");
    assert!((got - want).abs() <= 0.03 * want, "{got} vs {want}");
    // p = 9.7 %: goodput falls to ~25 %; fewer packets, so 5 %.
    let (got, want, _) = goodput_at(5e-5, 10_000);
    assert!((got - want).abs() <= 0.05 * want, "{got} vs {want}");
}

#[test]
fn replay_buffer_never_exceeds_its_size_and_back_pressures() {
    let mut s = Setup::new("pcie-gen6", 8, 1e-5, 5_000, &[256]);
    s.params.replay_buffer_flits = 8;
    let o = run(&s);
    assert_eq!(o.verdict, Ok(()));
    assert!(o.tx.replay_peak <= 8, "{}", o.tx.replay_peak);
    assert_eq!(o.tx.replay_peak, 8, "the buffer filled");
    assert!(o.tx.replay_full.total_ps(o.end) > 0, "and stopped new flits");
    // 8 flits per round trip (flit + 2 x 55 ns + ACK coalescing) caps the rate well below the
    // 55.5 GB/s a large buffer reaches.
    let cap = 8.0 * 236.0 * 256.0 / 272.0 / (4.0 + 110.0);
    eprintln!("8-flit replay buffer: {:.3} GB/s (cap {cap:.3})", o.rx.goodput_gbytes_per_s());
    assert!(o.rx.goodput_gbytes_per_s() <= cap, "{} vs {cap}", o.rx.goodput_gbytes_per_s());
}

#[test]
fn a_lost_replay_is_recovered() {
    // At p = 64 % per flit replays are often lost too, including the last flit of the run
    // (nothing follows it, so only the replay timer can recover it).
    let mut s = Setup::new("pcie-gen6", 8, 5e-4, 300, &[64, 256]);
    s.seed = 3;
    let o = run(&s);
    assert_eq!(o.verdict, Ok(()));
    assert!(o.tx.replays > 100, "{}", o.tx.replays);
    assert!(o.tx.replay_timeouts > 0, "the timer recovered a lost tail");
}
