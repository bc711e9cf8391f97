//! The link replay buffer (block 7): the Rust model against trnsim-fabric's own
//! `link::ReplayBuffer`, the replay state `LinkTx` runs (always); against the Verilated RTL in
//! lock-step and under arbitrary-driven fuzzing (feature `rtl`).

use trnsim_fabric::link::{Flit, ReplayBuffer};
use trnsim_kernel::{Dur, Time};
use trnsim_rtl::block::Block;
use trnsim_rtl::model::{replay_buf_port as P, ReplayBuf};
use trnsim_rtl::stimulus::{ReplayBufStimulus, Stimulus};

/// Runs the seeded stimulus through the model and through trnsim-fabric's `ReplayBuffer`, one
/// cycle = 1 ns: each cycle the DLLP (ACK / NAK, its sequence number unwrapped to the nearest
/// of the fabric's unbounded ones), the timer (`timed_out` -> `start_replay`, as `LinkTx::tick`),
/// then, with the lanes free, `next_replayed` or a new unit (`push`, if not full) as
/// `LinkTx::next_unit`. Units carry their data in `bytes`. Every output of the model must be
/// the fabric's. Returns (new units, replayed units, timeouts).
fn against_fabric(cap: usize, sw: u32, timeout: u32, cycles: u64, seed: u64) -> (u64, u64, u64) {
    let mut m = ReplayBuf::new(cap, sw, 16, timeout);
    let fresh = || ReplayBuffer::new(cap, Dur::from_ns(u64::from(timeout)));
    let mut rb = fresh();
    let mut s = ReplayBufStimulus::new(cap, sw, 16, timeout, seed);
    let mut v = vec![0u128; m.ports().len()];
    let (mask, half) = ((1u64 << sw) - 1, 1i64 << (sw - 1));
    let (mut new, mut replayed, mut timeouts, mut now_ns) = (0, 0, 0, 0u64);
    for cycle in 0..cycles {
        s.drive(cycle, &mut v);
        v[P::NEW_DATA] &= 0xffff;
        for i in [P::RST, P::DLLP_VALID, P::DLLP_NAK, P::DLLP_SEQ, P::LANE_READY, P::NEW_VALID, P::NEW_DATA] {
            m.set_input(i, v[i]);
        }
        m.settle().unwrap();
        if v[P::RST] == 1 {
            rb = fresh();
            now_ns = 0;
            m.posedge().unwrap();
            continue;
        }
        let now = Time::ZERO + Dur::from_ns(now_ns);
        let ctx = |what: &str| format!("cycle {cycle}: {what}");
        assert_eq!(m.output(P::COUNT), rb.len() as u128, "{}", ctx("count"));
        assert_eq!(m.output(P::REPLAYING), u128::from(rb.replaying()), "{}", ctx("replaying"));
        if v[P::DLLP_VALID] == 1 {
            // The wire's sequence number, unwrapped around the oldest held unit (the next new
            // one when empty): -half .. half-1 from it.
            let base = rb.units().next().map_or(rb.next_seq(), |f| f.seq) as i64;
            let d = ((v[P::DLLP_SEQ] as u64).wrapping_sub(base as u64) & mask) as i64;
            let seq = base + if d < half { d } else { d - 2 * half };
            if v[P::DLLP_NAK] == 1 {
                // NAK of a negative number: nothing to acknowledge; the fabric's u64 cannot
                // hold it, and a NAK of 0 acknowledges nothing either.
                rb.nak(seq.max(0) as u64, now);
            } else if seq >= 0 {
                rb.ack(seq as u64, now);
            }
        }
        let fired = rb.timed_out(now);
        if fired {
            rb.start_replay(now);
            timeouts += 1;
        }
        assert_eq!(m.output(P::TIMEOUT), u128::from(fired), "{}", ctx("timeout"));
        let mut sent = None;
        if v[P::LANE_READY] == 1 {
            if let Some(f) = rb.next_replayed() {
                sent = Some((f.seq, u128::from(f.bytes), true));
                replayed += 1;
            } else if !rb.is_full() && v[P::NEW_VALID] == 1 {
                let f = Flit {
                    seq: rb.next_seq(),
                    epoch: rb.epoch(),
                    bytes: v[P::NEW_DATA] as u32,
                    corrupt: false,
                    tails: vec![],
                };
                sent = Some((f.seq, v[P::NEW_DATA], false));
                rb.push(f, now);
                new += 1;
            }
        }
        let got = [P::TX_VALID, P::TX_SEQ, P::TX_DATA, P::TX_REPLAY, P::NEW_TAKE].map(|i| m.output(i));
        let want = match sent {
            Some((seq, data, re)) => [1, u128::from(seq & mask), data, u128::from(re), u128::from(!re)],
            None => [0; 5],
        };
        assert_eq!(got, want, "{}", ctx("sent"));
        m.posedge().unwrap();
        now_ns += 1;
    }
    (new, replayed, timeouts)
}

#[test]
fn replay_buf_model_follows_the_fabric_transmitters_replay_buffer() {
    for (cap, sw, tmo, seed) in [(256, 10, 1000, 1), (5, 4, 24, 2), (8, 5, 40, 3), (1, 2, 3, 4)] {
        let (new, replayed, timeouts) = against_fabric(cap, sw, tmo, 150_000, seed);
        assert!(new > 5_000 && replayed > 2_000 && timeouts > 3, "{cap}: {new} {replayed} {timeouts}");
    }
}

/// The stimulus's sequence numbers stay within half the sequence space of the oldest unit
/// (so the wrapped numbers mean what the fabric's unbounded ones do), and wrap many times.
#[test]
fn replay_buf_stimulus_wraps_sequence_numbers() {
    let mut m = ReplayBuf::new(5, 4, 8, 24);
    let mut s = ReplayBufStimulus::new(5, 4, 8, 24, 9);
    let mut v = vec![0u128; m.ports().len()];
    let mut zeros = 0;
    for cycle in 0..50_000 {
        s.drive(cycle, &mut v);
        for i in [P::RST, P::DLLP_VALID, P::DLLP_NAK, P::DLLP_SEQ, P::LANE_READY, P::NEW_VALID, P::NEW_DATA] {
            m.set_input(i, v[i]);
        }
        m.settle().unwrap();
        zeros += u64::from(m.output(P::NEW_TAKE) == 1 && m.output(P::TX_SEQ) == 0);
        m.posedge().unwrap();
    }
    assert!(zeros > 300, "{zeros} wraps");
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use trnsim_kernel::SimRng;
    use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::stimulus::Replay;
    use trnsim_rtl::verilator_sys::models::{ReplayBufC256, ReplayBufC5};
    use trnsim_rtl::verilator_sys::Verilated;

    #[test]
    fn replay_buf_c256_rtl_matches_model_for_1m_random_cycles() {
        let t = std::time::Instant::now();
        let cfg = DiffConfig::replay_buf(1_000_000);
        let r = diff(
            || ReplayBuf::new(256, 10, 16, 1000),
            Rtl::<ReplayBufC256>::new,
            || ReplayBufStimulus::new(256, 10, 16, 1000, 71),
            &cfg,
        );
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        let dt = t.elapsed().as_secs_f64();
        eprintln!("replay_buf c256: {} cycles in {dt:.2} s = {:.2} Mcycles/s", r.cycles, r.cycles as f64 / dt / 1e6);
        assert!(r.high("tx_replay").unwrap() > 20_000 && r.high("timeout").unwrap() > 5, "{:?}", r.high_cycles);
    }

    #[test]
    fn replay_buf_c5_rtl_matches_model() {
        let cfg = DiffConfig::replay_buf(300_000);
        let r = diff(
            || ReplayBuf::new(5, 4, 8, 24),
            Rtl::<ReplayBufC5>::new,
            || ReplayBufStimulus::new(5, 4, 8, 24, 5),
            &cfg,
        );
        r.unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn replay_buf_port_widths_match_the_model() {
        for (m, ports) in [
            (ReplayBuf::new(256, 10, 16, 1000), <ReplayBufC256 as Verilated>::PORTS),
            (ReplayBuf::new(5, 4, 8, 24), <ReplayBufC5 as Verilated>::PORTS),
        ] {
            assert_eq!(ports.len(), m.ports().len());
            for p in m.ports() {
                assert_eq!(ports.iter().find(|q| q.name == p.name), Some(p), "{}", p.name);
            }
        }
    }

    #[derive(Arbitrary, Debug)]
    struct Step {
        rst: u8, // reset only when 0: rare
        dllp: u8,
        seq: u16,
        lane: bool,
        new: bool,
        data: u16,
        /// Hold the step this many cycles (the buffer fills, the timer runs).
        hold: u8,
    }

    fn vectors(bytes: &[u8]) -> Vec<Vec<u128>> {
        let mut u = Unstructured::new(bytes);
        let mut out = Vec::new();
        while let Ok(s) = Step::arbitrary(&mut u) {
            if u.is_empty() {
                break;
            }
            let mut v = vec![0u128; 16];
            v[P::RST] = (s.rst == 0) as u128;
            v[P::DLLP_VALID] = (s.dllp % 4 == 0) as u128;
            v[P::DLLP_NAK] = u128::from(s.dllp & 16 != 0);
            v[P::DLLP_SEQ] = u128::from(s.seq);
            v[P::LANE_READY] = s.lane as u128;
            v[P::NEW_VALID] = s.new as u128;
            v[P::NEW_DATA] = u128::from(s.data);
            out.push(v.clone());
            v[P::RST] = 0;
            v[P::DLLP_VALID] = 0;
            out.extend(std::iter::repeat_n(v, s.hold as usize % 40));
        }
        out
    }

    #[test]
    fn fuzz_replay_buf_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
        let mut rng = SimRng::new(0x7e9, 0);
        let mut total = 0;
        for c in 0..120 {
            let log_len = 8 + rng.below(5);
            let len = rng.below(1 << log_len) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let vs = vectors(&bytes);
            total += vs.len();
            let cfg = DiffConfig::replay_buf(vs.len() as u64);
            let r = if c % 2 == 0 {
                diff(|| ReplayBuf::new(256, 10, 16, 1000), Rtl::<ReplayBufC256>::new, || Replay(vs.clone()), &cfg)
            } else {
                diff(|| ReplayBuf::new(5, 4, 8, 24), Rtl::<ReplayBufC5>::new, || Replay(vs.clone()), &cfg)
            };
            r.unwrap_or_else(|e| panic!("case {c}: {e}"));
        }
        assert!(total > 20_000, "{total} cycles fuzzed");
    }

    /// For scripts/mutate.sh (run with `--ignored`): both configurations for `REPLAY_DIFF_CYCLES`
    /// cycles (default 1M) from `REPLAY_DIFF_SEED`; prints cycles-to-detection and fails on a
    /// divergence.
    #[test]
    #[ignore]
    fn replay_buf_diff_probe() {
        let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
        let (cycles, seed) = (env("REPLAY_DIFF_CYCLES", 1_000_000), env("REPLAY_DIFF_SEED", 1));
        let cfg = DiffConfig::replay_buf(cycles);
        let runs = [
            (
                "c256",
                diff(
                    || ReplayBuf::new(256, 10, 16, 1000),
                    Rtl::<ReplayBufC256>::new,
                    || ReplayBufStimulus::new(256, 10, 16, 1000, seed),
                    &cfg,
                ),
            ),
            (
                "c5",
                diff(
                    || ReplayBuf::new(5, 4, 8, 24),
                    Rtl::<ReplayBufC5>::new,
                    || ReplayBufStimulus::new(5, 4, 8, 24, seed),
                    &cfg,
                ),
            ),
        ];
        let mut failed = false;
        for (name, r) in runs {
            match r {
                Ok(r) => println!("replay_buf {name}: {} cycles, no divergence", r.cycles),
                Err(DiffError::Diverged(d)) => {
                    println!("replay_buf {name}: DETECTED after {} cycles\n{d}", d.cycle + 1);
                    failed = true;
                }
                Err(e) => {
                    println!("replay_buf {name}: DETECTED ({e})");
                    failed = true;
                }
            }
        }
        assert!(!failed, "divergence");
    }
}
