//! Arbitrary-driven fuzzing of the crossbar arbiter diff: random byte strings become held
//! request matrices and resets, replayed into the model and (feature `rtl`) the RTL.

use arbitrary::{Arbitrary, Unstructured};
use trnsim_kernel::SimRng;
use trnsim_rtl::block::Block;
use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
use trnsim_rtl::model::{islip_port as P, ArbMode, IslipArbiter};
use trnsim_rtl::stimulus::Replay;

#[derive(Arbitrary, Debug)]
struct Step {
    rst: u8, // reset only when 0: rare
    req: u64,
    /// Keep only requests whose bit in `thin` is set too (sparser matrices) when `thin_on`.
    thin: u64,
    thin_on: bool,
}

/// A fuzz case for `n` ports: steps each held for 1..=8 cycles (held requests let the
/// pointers desynchronize).
fn vectors(bytes: &[u8], n: usize) -> Vec<Vec<u128>> {
    let mut u = Unstructured::new(bytes);
    let mut out = Vec::new();
    while let Ok((s, rep)) = <(Step, u8)>::arbitrary(&mut u) {
        if u.is_empty() {
            break;
        }
        let mut v = vec![0u128; 7];
        let req = if s.thin_on { s.req & s.thin } else { s.req };
        v[P::RST] = (s.rst == 0) as u128;
        v[P::REQ] = req as u128 & ((1u128 << (n * n)) - 1);
        out.extend(std::iter::repeat_n(v, 1 + rep as usize % 8));
    }
    out
}

fn cases(count: u64, min_log: u64, n: usize, seed: u64) -> impl Iterator<Item = Vec<Vec<u128>>> {
    let mut rng = SimRng::new(seed, 0);
    (0..count).map(move |_| {
        let log_len = min_log + rng.below(13 - min_log);
        let len = rng.below(1 << log_len) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        vectors(&bytes, n)
    })
}

/// Stepping two models alone: the first cycle at which an output differs.
fn first_difference(a: &mut IslipArbiter, b: &mut IslipArbiter, vs: &[Vec<u128>]) -> Option<u64> {
    for (c, v) in vs.iter().enumerate() {
        for x in [&mut *a, &mut *b] {
            x.set_input(P::RST, v[P::RST]);
            x.set_input(P::REQ, v[P::REQ]);
            x.settle().unwrap();
        }
        if [P::MATCH_VALID, P::MATCH_OUT, P::GRANT_PTR, P::ACCEPT_PTR].iter().any(|&i| a.output(i) != b.output(i)) {
            return Some(c as u64);
        }
        a.posedge().unwrap();
        b.posedge().unwrap();
    }
    None
}

#[test]
fn fuzz_diff_tells_islip_from_rrm_and_never_itself() {
    let mut diverged = 0;
    for vs in cases(200, 4, 4, 0x15a1) {
        let cfg = DiffConfig::islip_arbiter(vs.len() as u64);
        let same = diff(
            || IslipArbiter::new(4, 2, ArbMode::Islip),
            || Ok(IslipArbiter::new(4, 2, ArbMode::Islip)),
            || Replay(vs.clone()),
            &cfg,
        );
        same.unwrap_or_else(|e| panic!("a model diverged from itself: {e}"));
        let other = diff(
            || IslipArbiter::new(4, 2, ArbMode::Islip),
            || Ok(IslipArbiter::new(4, 2, ArbMode::Rrm)),
            || Replay(vs.clone()),
            &cfg,
        );
        let expect = first_difference(
            &mut IslipArbiter::new(4, 2, ArbMode::Islip),
            &mut IslipArbiter::new(4, 2, ArbMode::Rrm),
            &vs,
        );
        match (other, expect) {
            (Ok(_), None) => {}
            (Err(DiffError::Diverged(d)), Some(c)) => {
                assert_eq!(d.cycle, c, "{d}");
                diverged += 1;
            }
            (r, e) => panic!("harness said {r:?}, stepping said {e:?}"),
        }
    }
    assert!((20..190).contains(&diverged), "{diverged} of 200 cases told iSLIP from RRM: the cases are too uniform");
}

#[cfg(feature = "rtl")]
#[test]
fn fuzz_islip_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::verilator_sys::models::{IslipArbiterN4I3, IslipArbiterN8I1, RrmArbiterN5I2};
    let mut total = 0;
    for k in 0..3 {
        let n = [4, 8, 5][k];
        for (c, vs) in cases(100, 11, n, 0xf1 + k as u64).enumerate() {
            let cfg = DiffConfig::islip_arbiter(vs.len() as u64);
            total += vs.len();
            let stim = || Replay(vs.clone());
            let r = match k {
                0 => diff(|| IslipArbiter::new(4, 3, ArbMode::Islip), Rtl::<IslipArbiterN4I3>::new, stim, &cfg),
                1 => diff(|| IslipArbiter::new(8, 1, ArbMode::Islip), Rtl::<IslipArbiterN8I1>::new, stim, &cfg),
                _ => diff(|| IslipArbiter::new(5, 2, ArbMode::Rrm), Rtl::<RrmArbiterN5I2>::new, stim, &cfg),
            };
            r.unwrap_or_else(|e| panic!("n {n} case {c}: {e}"));
        }
    }
    assert!(total > 100_000, "{total} cycles fuzzed");
}
