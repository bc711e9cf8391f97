//! The SRAM bank (block 3): the Rust model against a plain reference memory (always), and
//! against the Verilated RTL in lock-step and under arbitrary-driven fuzzing (feature `rtl`).

use trnsim_kernel::SimRng;
use trnsim_rtl::block::Block;
use trnsim_rtl::model::{sram_bank_port as P, SramBank};

/// The model's grants respect the port counts and its reads return the last data written to
/// the address (a write granted in the same cycle counts), checked against a plain array.
#[test]
fn sram_bank_model_honours_port_limits_and_read_after_write() {
    let (words, width, r, w, req) = (8, 16, 2, 1, 4);
    let mut b = SramBank::new(words, width, r, w, req);
    let mut rng = SimRng::new(3, 0);
    let mut mem = vec![0u128; words];
    let mut expect = vec![None; req];
    let (mut reads, mut refused) = (0, 0);
    for c in 0..50_000u64 {
        let (mut v, mut wr, mut a, mut d) = (0u128, 0u128, 0u128, 0u128);
        let mut lanes = vec![];
        for k in 0..req {
            let (on, is_w, addr, data) =
                (rng.chance(0.8), rng.chance(0.4), rng.below(3) as usize, rng.next_u64() as u128 & 0xffff);
            v |= (on as u128) << k;
            wr |= (is_w as u128) << k;
            a |= (addr as u128) << (3 * k);
            d |= data << (16 * k);
            lanes.push((on, is_w, addr, data));
        }
        let rst = c < 2;
        b.set_input(P::RST, rst as u128);
        for (p, x) in [(P::REQ_VALID, v), (P::REQ_WRITE, wr), (P::REQ_ADDR, a), (P::REQ_WDATA, d)] {
            b.set_input(p, x);
        }
        b.settle().unwrap();
        for (k, e) in expect.iter().enumerate() {
            let got = (b.output(P::RVALID) >> k & 1 == 1).then(|| b.output(P::RDATA) >> (16 * k) & 0xffff);
            assert_eq!(got, *e, "cycle {c} requester {k}");
        }
        let g = b.output(P::GRANT);
        let ptr = b.output(P::RR_PTR) as usize;
        let granted = |write: bool| (0..req).filter(|&k| g >> k & 1 == 1 && lanes[k].1 == write).count();
        assert!(granted(false) <= r && granted(true) <= w, "cycle {c}: grants {g:#b}");
        assert_eq!(g & !v, 0, "grants only to requests");
        refused += (v & !g).count_ones();
        // Writes in round-robin order, then the reads see them.
        expect = vec![None; req];
        if rst {
            mem.iter_mut().for_each(|m| *m = 0);
        } else {
            for k in (0..req).map(|o| (ptr + o) % req) {
                if g >> k & 1 == 1 && lanes[k].1 {
                    mem[lanes[k].2] = lanes[k].3;
                }
            }
            for k in 0..req {
                if g >> k & 1 == 1 && !lanes[k].1 {
                    expect[k] = Some(mem[lanes[k].2]);
                    reads += 1;
                }
            }
        }
        b.posedge().unwrap();
    }
    assert!(reads > 50_000 && refused > 20_000, "{reads} reads, {refused} refusals");
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::stimulus::{Replay, SramBankStimulus};
    use trnsim_rtl::verilator_sys::models::{SramBankD16W8R1W1Q3, SramBankD64W32R2W2Q4};
    use trnsim_rtl::verilator_sys::Verilated;

    #[derive(Arbitrary, Debug)]
    struct Step {
        rst: u8, // reset only when 0: rare
        valid: u8,
        write: u8,
        addr: u32,
        wdata: u128,
        /// Fold addresses onto the low 2 (hazards) when set.
        hot: bool,
    }

    /// A fuzz case for a bank of `req` requesters with `aw` address bits: steps held 1..=4 cycles.
    fn vectors(bytes: &[u8], req: usize, aw: u32) -> Vec<Vec<u128>> {
        let mut u = Unstructured::new(bytes);
        let mut out = Vec::new();
        while let Ok((s, rep)) = <(Step, u8)>::arbitrary(&mut u) {
            if u.is_empty() {
                break;
            }
            let mut v = vec![0u128; 10];
            let amask = (1u128 << (req as u32 * aw)) - 1;
            let hot_mask = (0..req).fold(0u128, |m, k| m | 1 << (k as u32 * aw)); // address 0 or 1
            v[P::RST] = (s.rst == 0) as u128;
            v[P::REQ_VALID] = s.valid as u128;
            v[P::REQ_WRITE] = s.write as u128;
            v[P::REQ_ADDR] = if s.hot { s.addr as u128 & hot_mask } else { s.addr as u128 & amask };
            v[P::REQ_WDATA] = s.wdata;
            out.extend(std::iter::repeat_n(v, 1 + rep as usize % 4));
        }
        out
    }

    fn cases(count: u64, req: usize, aw: u32, seed: u64) -> impl Iterator<Item = Vec<Vec<u128>>> {
        let mut rng = SimRng::new(seed, 0);
        (0..count).map(move |_| {
            let log_len = 8 + rng.below(7);
            let len = rng.below(1 << log_len) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            vectors(&bytes, req, aw)
        })
    }

    #[test]
    fn sram_bank_d64_w32_r2w2_q4_rtl_matches_model_for_1m_random_cycles() {
        let t = std::time::Instant::now();
        let cfg = DiffConfig::sram_bank(1_000_000);
        let r = diff(
            || SramBank::new(64, 32, 2, 2, 4),
            Rtl::<SramBankD64W32R2W2Q4>::new,
            || SramBankStimulus::new(64, 32, 4, 33),
            &cfg,
        );
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        let dt = t.elapsed().as_secs_f64();
        eprintln!(
            "sram_bank d64 w32 r2w2 q4: {} cycles in {dt:.2} s = {:.2} Mcycles/s",
            r.cycles,
            r.cycles as f64 / dt / 1e6
        );
    }

    #[test]
    fn sram_bank_d16_w8_r1w1_q3_rtl_matches_model() {
        let cfg = DiffConfig::sram_bank(300_000);
        let r = diff(
            || SramBank::new(16, 8, 1, 1, 3),
            Rtl::<SramBankD16W8R1W1Q3>::new,
            || SramBankStimulus::new(16, 8, 3, 7),
            &cfg,
        );
        r.unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn sram_bank_port_widths_match_the_model() {
        let m = SramBank::new(64, 32, 2, 2, 4);
        type V = SramBankD64W32R2W2Q4;
        for p in m.ports() {
            let k = <V as Verilated>::port(p.name).unwrap_or_else(|| panic!("no port {}", p.name));
            assert_eq!(<V as Verilated>::PORTS[k], *p);
        }
        assert_eq!(<V as Verilated>::PORTS.len(), m.ports().len());
    }

    #[test]
    fn fuzz_sram_bank_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
        let mut total = 0;
        for (c, vs) in cases(150, 4, 6, 0x5ba).enumerate() {
            let cfg = DiffConfig::sram_bank(vs.len() as u64);
            total += vs.len();
            let r =
                diff(|| SramBank::new(64, 32, 2, 2, 4), Rtl::<SramBankD64W32R2W2Q4>::new, || Replay(vs.clone()), &cfg);
            r.unwrap_or_else(|e| panic!("d64 case {c}: {e}"));
        }
        for (c, vs) in cases(150, 3, 4, 0x5bb).enumerate() {
            let cfg = DiffConfig::sram_bank(vs.len() as u64);
            total += vs.len();
            let r =
                diff(|| SramBank::new(16, 8, 1, 1, 3), Rtl::<SramBankD16W8R1W1Q3>::new, || Replay(vs.clone()), &cfg);
            r.unwrap_or_else(|e| panic!("d16 case {c}: {e}"));
        }
        assert!(total > 50_000, "{total} cycles fuzzed");
    }

    /// For scripts/mutate.sh (run with `--ignored`): both configurations for
    /// `SRAM_DIFF_CYCLES` cycles (default 1M) from `SRAM_DIFF_SEED`; prints cycles-to-detection
    /// and fails on a divergence.
    #[test]
    #[ignore]
    fn sram_bank_diff_probe() {
        let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
        let (cycles, seed) = (env("SRAM_DIFF_CYCLES", 1_000_000), env("SRAM_DIFF_SEED", 1));
        let cfg = DiffConfig::sram_bank(cycles);
        let runs = [
            (
                "d64_w32_r2w2_q4",
                diff(
                    || SramBank::new(64, 32, 2, 2, 4),
                    Rtl::<SramBankD64W32R2W2Q4>::new,
                    || SramBankStimulus::new(64, 32, 4, seed),
                    &cfg,
                ),
            ),
            (
                "d16_w8_r1w1_q3",
                diff(
                    || SramBank::new(16, 8, 1, 1, 3),
                    Rtl::<SramBankD16W8R1W1Q3>::new,
                    || SramBankStimulus::new(16, 8, 3, seed),
                    &cfg,
                ),
            ),
        ];
        let mut failed = false;
        for (name, r) in runs {
            match r {
                Ok(r) => println!("sram_bank {name}: {} cycles, no divergence", r.cycles),
                Err(DiffError::Diverged(d)) => {
                    println!("sram_bank {name}: DETECTED after {} cycles\n{d}", d.cycle + 1);
                    failed = true;
                }
                Err(e) => {
                    println!("sram_bank {name}: error: {e}");
                    failed = true;
                }
            }
        }
        assert!(!failed, "divergence");
    }
}
