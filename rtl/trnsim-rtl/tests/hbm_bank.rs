//! The HBM bank timing FSM (block 5): the Rust model against trnsim-mem's independent JEDEC
//! checker (always); against the Verilated RTL in lock-step and under arbitrary-driven fuzzing
//! (feature `rtl`).

use trnsim_mem::hbm::checker::Checker;
use trnsim_mem::hbm::presets::{HBM2_2000, HBM3_5700, HBM3_6400};
use trnsim_mem::hbm::{Command, CommandRecord, Preset};
use trnsim_rtl::block::Block;
use trnsim_rtl::model::{hbm_bank_port as P, vcode, HbmBank, HBM_OPCODES};
use trnsim_rtl::stimulus::{HbmBankStimulus, Stimulus};

/// Runs the seeded stimulus through the model; every command the model accepts goes to the
/// memory model's hand-written JEDEC checker, which must find no violation; every command the
/// model refuses for timing must be one the checker flags. Returns (accepted, refused by code).
fn against_checker(preset: &Preset, cycles: u64, seed: u64) -> (u64, [u64; 4]) {
    let (org, t) = (preset.org.clone(), preset.timing.clone());
    let mut b = HbmBank::new(preset);
    let mut s = HbmBankStimulus::new(preset, seed);
    let mut inputs = vec![0u128; b.ports().len()];
    let mut checker = Checker::new(&org, &t);
    let (mut accepted, mut refused) = (0, [0u64; 4]);
    let mut since_reset = 0u64;
    let mut history: Vec<CommandRecord> = Vec::new();
    for cycle in 0..cycles {
        s.drive(cycle, &mut inputs);
        for p in [P::RST, P::CMD, P::ROW] {
            b.set_input(p, inputs[p]);
        }
        b.settle().unwrap();
        let rec = |cmd| CommandRecord {
            cycle: since_reset,
            stack: 0,
            channel: 0,
            pc: 0,
            cmd,
            sid: 0,
            bank_group: 0,
            bank: 0,
            row: inputs[P::ROW] as u32,
            column: 0,
        };
        if inputs[P::RST] == 0 {
            if let Some(cmd) = HBM_OPCODES[inputs[P::CMD] as usize] {
                let code = b.output(P::VCODE);
                if code == vcode::NONE {
                    accepted += 1;
                    checker.check(&rec(cmd));
                    history.push(rec(cmd));
                    assert_eq!(checker.violation_count(), 0, "cycle {cycle}: {:?}", checker.violations());
                } else {
                    refused[code as usize] += 1;
                    // The table applies tPPD to a PRE after a PRE to the same (closed) bank too
                    // (timing.rs: it "only over-constrains"); the checker only across banks.
                    let last = history.last().map(|r| (r.cmd, since_reset - r.cycle));
                    let ppd_only = cmd == Command::Pre && matches!(last, Some((Command::Pre, d)) if d < t.ppd as u64);
                    if code == vcode::TIMING && !ppd_only {
                        // The checker, replaying the accepted history plus this command, objects.
                        let mut c = Checker::new(&org, &t);
                        history.iter().for_each(|r| c.check(r));
                        c.check(&rec(cmd));
                        assert!(
                            c.violation_count() > 0,
                            "cycle {cycle}: the model refused {cmd:?}, the checker accepts"
                        );
                    }
                }
            }
            since_reset += 1;
        } else {
            checker = Checker::new(&org, &t);
            history.clear();
            since_reset = 0;
        }
        b.posedge().unwrap();
    }
    (accepted, refused)
}

#[test]
fn hbm_bank_model_agrees_with_the_independent_jedec_checker() {
    // hbm3-5700's shorter timings (in cycles) refuse fewer of the stimulus's commands per cycle:
    // it runs longer to see as many refusals.
    for (p, seed, cycles) in [(&HBM3_6400, 1, 60_000), (&HBM2_2000, 2, 60_000), (&HBM3_5700, 4, 120_000)] {
        let (accepted, refused) = against_checker(p, cycles, seed);
        assert!(accepted > 1500 && refused[1] > 20 && refused[2] > 5 && refused[3] > 50, "{accepted} {refused:?}");
    }
}

/// The seeded stimulus visits every state and issues every command legally and illegally.
#[test]
fn hbm_bank_stimulus_reaches_every_state_and_command() {
    let mut b = HbmBank::new(&HBM3_6400);
    let mut s = HbmBankStimulus::new(&HBM3_6400, 3);
    let mut inputs = vec![0u128; b.ports().len()];
    let (mut states, mut ok, mut bad) = ([0u64; 5], [0u64; 8], [0u64; 8]);
    for cycle in 0..200_000 {
        s.drive(cycle, &mut inputs);
        for p in [P::RST, P::CMD, P::ROW] {
            b.set_input(p, inputs[p]);
        }
        b.settle().unwrap();
        states[b.output(P::STATE) as usize] += 1;
        let op = inputs[P::CMD] as usize;
        if b.output(P::VIOLATION) == 1 {
            bad[op] += 1
        } else {
            ok[op] += 1
        }
        b.posedge().unwrap();
    }
    assert!(states.iter().all(|&n| n > 1000), "{states:?}");
    assert!(ok[1..].iter().all(|&n| n > 100) && bad[1..].iter().all(|&n| n > 10), "{ok:?} {bad:?}");
    let (legal, illegal): (u64, u64) = (ok[1..].iter().sum(), bad.iter().sum());
    assert!(legal > 5 * illegal, "mostly legal: {legal} legal, {illegal} illegal");
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use trnsim_kernel::SimRng;
    use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::stimulus::Replay;
    use trnsim_rtl::verilator_sys::models::{HbmBank2000, HbmBank5700, HbmBank6400};
    use trnsim_rtl::verilator_sys::Verilated;

    #[test]
    fn hbm_bank_hbm3_6400_rtl_matches_model_for_1m_random_cycles() {
        let t = std::time::Instant::now();
        let cfg = DiffConfig::hbm_bank(1_000_000);
        let r =
            diff(|| HbmBank::new(&HBM3_6400), Rtl::<HbmBank6400>::new, || HbmBankStimulus::new(&HBM3_6400, 55), &cfg);
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        let dt = t.elapsed().as_secs_f64();
        eprintln!("hbm_bank hbm3-6400: {} cycles in {dt:.2} s = {:.2} Mcycles/s", r.cycles, r.cycles as f64 / dt / 1e6);
        assert!(r.high("violation").unwrap() > 2_000, "{:?}", r.high_cycles);
    }

    #[test]
    fn hbm_bank_hbm2_2000_rtl_matches_model() {
        let cfg = DiffConfig::hbm_bank(300_000);
        let r =
            diff(|| HbmBank::new(&HBM2_2000), Rtl::<HbmBank2000>::new, || HbmBankStimulus::new(&HBM2_2000, 9), &cfg);
        r.unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn hbm_bank_hbm3_5700_rtl_matches_model() {
        let cfg = DiffConfig::hbm_bank(300_000);
        let r =
            diff(|| HbmBank::new(&HBM3_5700), Rtl::<HbmBank5700>::new, || HbmBankStimulus::new(&HBM3_5700, 21), &cfg);
        r.unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn hbm_bank_port_widths_match_the_model() {
        for (m, ports) in [
            (HbmBank::new(&HBM3_6400), <HbmBank6400 as Verilated>::PORTS),
            (HbmBank::new(&HBM2_2000), <HbmBank2000 as Verilated>::PORTS),
            (HbmBank::new(&HBM3_5700), <HbmBank5700 as Verilated>::PORTS),
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
        cmd: u8,
        row: u16,
        /// Hold a NOP for this many cycles after the command (lets timing expire).
        gap: u8,
    }

    fn vectors(bytes: &[u8]) -> Vec<Vec<u128>> {
        let mut u = Unstructured::new(bytes);
        let mut out = Vec::new();
        while let Ok(s) = Step::arbitrary(&mut u) {
            if u.is_empty() {
                break;
            }
            let mut v = vec![0u128; 9];
            v[P::RST] = (s.rst == 0) as u128;
            v[P::CMD] = s.cmd as u128;
            v[P::ROW] = (s.row % 4) as u128; // few rows: row hits and misses
            out.push(v.clone());
            v[P::CMD] = 0;
            v[P::RST] = 0;
            out.extend(std::iter::repeat_n(v, s.gap as usize % 80));
        }
        out
    }

    #[test]
    fn fuzz_hbm_bank_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
        let mut rng = SimRng::new(0x4b3, 0);
        let mut total = 0;
        for c in 0..200 {
            let log_len = 8 + rng.below(6);
            let len = rng.below(1 << log_len) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let vs = vectors(&bytes);
            total += vs.len();
            let cfg = DiffConfig::hbm_bank(vs.len() as u64);
            let r = if c % 2 == 0 {
                diff(|| HbmBank::new(&HBM3_6400), Rtl::<HbmBank6400>::new, || Replay(vs.clone()), &cfg)
            } else {
                diff(|| HbmBank::new(&HBM2_2000), Rtl::<HbmBank2000>::new, || Replay(vs.clone()), &cfg)
            };
            r.unwrap_or_else(|e| panic!("case {c}: {e}"));
        }
        assert!(total > 50_000, "{total} cycles fuzzed");
    }

    /// For scripts/mutate.sh (run with `--ignored`): both speed grades for `HBM_DIFF_CYCLES`
    /// cycles (default 1M) from `HBM_DIFF_SEED`; prints cycles-to-detection and fails on a
    /// divergence.
    #[test]
    #[ignore]
    fn hbm_bank_diff_probe() {
        let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
        let (cycles, seed) = (env("HBM_DIFF_CYCLES", 1_000_000), env("HBM_DIFF_SEED", 1));
        let cfg = DiffConfig::hbm_bank(cycles);
        let runs = [
            (
                "hbm3_6400",
                diff(
                    || HbmBank::new(&HBM3_6400),
                    Rtl::<HbmBank6400>::new,
                    || HbmBankStimulus::new(&HBM3_6400, seed),
                    &cfg,
                ),
            ),
            (
                "hbm2_2000",
                diff(
                    || HbmBank::new(&HBM2_2000),
                    Rtl::<HbmBank2000>::new,
                    || HbmBankStimulus::new(&HBM2_2000, seed),
                    &cfg,
                ),
            ),
        ];
        let mut failed = false;
        for (name, r) in runs {
            match r {
                Ok(r) => println!("hbm_bank {name}: {} cycles, no divergence", r.cycles),
                Err(DiffError::Diverged(d)) => {
                    println!("hbm_bank {name}: DETECTED after {} cycles\n{d}", d.cycle + 1);
                    failed = true;
                }
                Err(e) => {
                    println!("hbm_bank {name}: error: {e}");
                    failed = true;
                }
            }
        }
        assert!(!failed, "divergence");
    }
}
