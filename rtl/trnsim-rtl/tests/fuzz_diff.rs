//! Arbitrary-driven fuzzing of the diff harness: random byte strings become input vectors
//! (through `arbitrary`), which are replayed into the model and (feature `rtl`) the RTL.
//! Checks that the RTL never diverges from the model, and that a planted divergence is always
//! reported at the first cycle where the outputs really differ.

use arbitrary::{Arbitrary, Unstructured};
use trnsim_kernel::SimRng;
use trnsim_rtl::block::Block;
use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
use trnsim_rtl::model::{link_fifo_port as P, LinkFifo};
use trnsim_rtl::stimulus::Replay;

#[derive(Arbitrary, Debug)]
struct Step {
    rst: u8, // reset only when 0: rare
    in_valid: bool,
    out_ready: bool,
    data: u128,
}

/// A fuzz case: a run of steps, each held for 1..=8 cycles (holding inputs fills and drains).
fn vectors(bytes: &[u8]) -> Vec<Vec<u128>> {
    let mut u = Unstructured::new(bytes);
    let mut out = Vec::new();
    while let Ok((s, rep)) = <(Step, u8)>::arbitrary(&mut u) {
        if u.is_empty() {
            break;
        }
        let mut v = vec![0u128; 10];
        (v[P::RST], v[P::IN_VALID], v[P::OUT_READY], v[P::IN_DATA]) =
            ((s.rst == 0) as u128, s.in_valid as u128, s.out_ready as u128, s.data);
        out.extend(std::iter::repeat_n(v, 1 + rep as usize % 8));
    }
    out
}

/// `n` cases of 2^min_log .. 4 KiB of bytes (log-uniform length).
fn cases(n: u64, min_log: u64) -> impl Iterator<Item = Vec<Vec<u128>>> {
    let mut rng = SimRng::new(0xf022, 0);
    (0..n).map(move |_| {
        let log_len = min_log + rng.below(13 - min_log);
        let len = rng.below(1 << log_len) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        vectors(&bytes)
    })
}

/// Stepping the model alone: the cycle at which `a` and `b` first differ on a compared port.
fn first_difference(a: &mut LinkFifo, b: &mut LinkFifo, vs: &[Vec<u128>]) -> Option<u64> {
    for (c, v) in vs.iter().enumerate() {
        for i in [P::RST, P::IN_VALID, P::OUT_READY, P::IN_DATA] {
            a.set_input(i, v[i]);
            b.set_input(i, v[i]);
        }
        for i in [P::IN_READY, P::OUT_VALID, P::CREDIT_RET, P::COUNT, P::OUT_DATA] {
            let valid = i != P::OUT_DATA || a.output(P::OUT_VALID) == 1;
            if valid && a.output(i) != b.output(i) {
                return Some(c as u64);
            }
        }
        a.posedge().unwrap();
        b.posedge().unwrap();
    }
    None
}

#[test]
fn fuzz_diff_reports_the_first_real_difference_between_two_models() {
    // Depth 5 against depth 6 (both have a 3-bit count): they differ only once 5 are held.
    let mut diverged = 0;
    for vs in cases(200, 4) {
        let n = vs.len() as u64;
        let expect = first_difference(&mut LinkFifo::new(8, 5), &mut LinkFifo::new(8, 6), &vs);
        let cfg = DiffConfig::link_fifo(n);
        let r = diff(|| LinkFifo::new(8, 5), || Ok(LinkFifo::new(8, 6)), || Replay(vs.clone()), &cfg);
        match (r, expect) {
            (Ok(_), None) => {}
            (Err(DiffError::Diverged(d)), Some(c)) => {
                assert_eq!(d.cycle, c, "{d}");
                diverged += 1;
            }
            (r, e) => panic!("harness said {r:?}, stepping said {e:?}"),
        }
    }
    assert!((10..190).contains(&diverged), "{diverged} of 200 cases diverged: the fuzz cases are too uniform");
}

#[cfg(feature = "rtl")]
#[test]
fn fuzz_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::verilator_sys::models::{LinkFifoW100D5, LinkFifoW64D4};
    let mut total = 0;
    for (k, vs) in cases(300, 11).enumerate() {
        let cfg = DiffConfig::link_fifo(vs.len() as u64);
        total += vs.len();
        let r = if k % 2 == 0 {
            diff(|| LinkFifo::new(64, 4), Rtl::<LinkFifoW64D4>::new, || Replay(vs.clone()), &cfg)
        } else {
            diff(|| LinkFifo::new(100, 5), Rtl::<LinkFifoW100D5>::new, || Replay(vs.clone()), &cfg)
        };
        r.unwrap_or_else(|e| panic!("case {k}: {e}"));
    }
    assert!(total > 100_000, "{total} cycles fuzzed");
}
