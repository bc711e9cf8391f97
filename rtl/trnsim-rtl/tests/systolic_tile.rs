//! The systolic-array tile (block 4): the RTL's arithmetic algorithm against Rust's f32 ops,
//! the Rust model against the NeuronCore functional mode (`exec::compute` of a BF16
//! MultiplyMoving), always; the model against the Verilated RTL in lock-step, under
//! arbitrary-driven fuzzing, and the RTL directly against the functional mode (feature `rtl`).

use trnsim_core::exec;
use trnsim_core::isa::{Accumulate, Ap, Dim, Dtype, Instr, Mem};
use trnsim_kernel::SimRng;
use trnsim_rtl::block::Block;
use trnsim_rtl::model::{bf16_value, canonical_bits, systolic_tile_port as P, SystolicTile, ValueMix};
use trnsim_rtl::stimulus::{Stimulus, SystolicTileStimulus};

/// The RTL's FP algorithm (rtl/blocks/systolic_tile.sv `mul_bf16`, `add_f32`), transcribed line
/// for line, so it can be checked against Rust's f32 arithmetic (which the functional mode uses)
/// on hundreds of millions of operands in seconds.
mod soft {
    pub const QNAN: u32 = 0x7fc0_0000;

    pub fn mul_bf16(a: u16, b: u16) -> u32 {
        let s = ((a ^ b) as u32 & 0x8000) << 16;
        let (ea, ma, eb, mb) = ((a >> 7 & 0xff) as i32, (a & 0x7f) as u32, (b >> 7 & 0xff) as i32, (b & 0x7f) as u32);
        let (an, bn) = (ea == 255 && ma != 0, eb == 255 && mb != 0);
        let (ai, bi) = (ea == 255 && ma == 0, eb == 255 && mb == 0);
        let (az, bz) = (ea == 0 && ma == 0, eb == 0 && mb == 0);
        if an || bn || (ai && bz) || (bi && az) {
            return QNAN;
        }
        if ai || bi {
            return s | 0x7f80_0000;
        }
        if az || bz {
            return s;
        }
        let sa = if ea == 0 { ma } else { ma | 0x80 };
        let sb = if eb == 0 { mb } else { mb | 0x80 };
        let (xa, xb) = (ea.max(1), eb.max(1));
        let p = sa * sb;
        let msb = 31 - p.leading_zeros() as i32;
        let e = msb + xa + xb - 141;
        if e >= 255 {
            return s | 0x7f80_0000;
        }
        if e >= 1 {
            return s | (e as u32) << 23 | (p << (23 - msb)) & 0x7f_ffff;
        }
        let sh = 119 - xa - xb;
        if sh <= 0 {
            return s | p << -sh;
        }
        let sh = sh.min(20) as u32;
        let (q, rem, half) = (p >> sh, p & ((1 << sh) - 1), 1 << (sh - 1));
        let up = rem > half || (rem == half && q & 1 == 1);
        s | (q + up as u32)
    }

    pub fn add_f32(a: u32, b: u32) -> u32 {
        let (ma, mb) = (a & 0x7fff_ffff, b & 0x7fff_ffff);
        if ma > 0x7f80_0000 || mb > 0x7f80_0000 || (ma == 0x7f80_0000 && mb == 0x7f80_0000 && (a ^ b) >> 31 == 1) {
            return QNAN;
        }
        if ma == 0x7f80_0000 {
            return a;
        }
        if mb == 0x7f80_0000 {
            return b;
        }
        let (big, small) = if ma >= mb { (a, b) } else { (b, a) };
        let s = big & 0x8000_0000;
        let unpack = |x: u32| match x >> 23 & 0xff {
            0 => (1, x & 0x7f_ffff),
            e => (e as i32, x & 0x7f_ffff | 0x80_0000),
        };
        let ((mut x, sg), (xs, ss)) = (unpack(big), unpack(small));
        let d = (x - xs) as u32;
        let (bv, sv) = (sg << 3, ss << 3);
        let al = if d >= 27 { (sv != 0) as u32 } else { sv >> d | ((sv & ((1 << d) - 1)) != 0) as u32 };
        let mut v;
        if (a ^ b) >> 31 == 0 {
            v = bv + al;
            if v >> 27 != 0 {
                v = v >> 1 | (v & 1);
                x += 1;
            }
        } else {
            v = bv - al;
            if v == 0 {
                return 0;
            }
            let sh = (v.leading_zeros() as i32 - 5).min(x - 1);
            v <<= sh;
            x -= sh;
        }
        let (low, mut mant) = (v & 7, v >> 3);
        mant += (low > 4 || (low == 4 && mant & 1 == 1)) as u32;
        let bits = (((x - 1) as u32) << 23) + mant;
        if x >= 255 || bits >= 0x7f80_0000 {
            return s | 0x7f80_0000;
        }
        s | bits
    }
}

/// Bits of `x` as the tile's ports show them.
fn canon(bits: u32) -> u32 {
    canonical_bits(f32::from_bits(bits))
}

#[test]
fn systolic_tile_rtl_fp_algorithm_equals_rust_f32_ops() {
    // Every BF16 a times every 13th BF16 b (all classes: subnormal, inf, NaN, overflow).
    let mut bad = 0u64;
    for a in 0..=u16::MAX {
        for b in (0..=u16::MAX).step_by(13) {
            let want = canonical_bits(f32::from_bits((a as u32) << 16) * f32::from_bits((b as u32) << 16));
            bad += (soft::mul_bf16(a, b) != want) as u64;
        }
    }
    assert_eq!(bad, 0, "products");
    // Sums: random pairs, near-equal exponents (alignment, cancellation), near-negations, and
    // specials (zeros of both signs, subnormals, max, inf, NaN).
    let mut rng = SimRng::new(11, 0);
    let pick = |rng: &mut SimRng| -> u32 {
        let x = rng.next_u64();
        match x % 8 {
            0 => (x >> 32) as u32 & 0x807f_ffff | ((x >> 8) as u32 % 4) << 23,
            1 => (x >> 32) as u32 | 0x7f00_0000,
            2 => [0, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 1, 0x7f7f_ffff, 0x0080_0000]
                [(x >> 40) as usize % 8],
            _ => (x >> 32) as u32,
        }
    };
    for i in 0..30_000_000u64 {
        let a = pick(&mut rng);
        let b = match i % 3 {
            0 => {
                let e = ((a >> 23 & 0xff) as i64 + rng.below(30) as i64 - 15).clamp(0, 255) as u32;
                (a & 0x807f_ffff ^ (rng.next_u64() as u32 & 0x8000_00ff)) | e << 23
            }
            1 => a ^ 0x8000_0000 ^ (rng.next_u64() as u32 & 0xf),
            _ => pick(&mut rng),
        };
        let want = canonical_bits(f32::from_bits(a) + f32::from_bits(b));
        bad += (soft::add_f32(a, b) != want) as u64;
    }
    assert_eq!(bad, 0, "sums");
}

/// K x M weights and K x N activations (row-major BF16) through the functional mode's
/// `exec::compute` of a BF16 MultiplyMoving into FP32 PSUM: M x N canonical bits.
fn functional_matmul(w: &[u16], x: &[u16], k: usize, m: usize, n: usize) -> Vec<u32> {
    let ap = |mem, partitions: usize, elems: usize, dtype| {
        let mut dims = [Dim::default(); 4];
        dims[0] = Dim { size: elems as u16, stride: 1 };
        Ap { mem, partition_start: 0, partitions: partitions as u16, offset: 0, dims, ndims: 1, dtype }
    };
    let (wap, src, dst) =
        (ap(Mem::Sbuf, k, m, Dtype::Bf16), ap(Mem::Sbuf, k, n, Dtype::Bf16), ap(Mem::Psum, m, n, Dtype::Fp32));
    let bytes = |v: &[u16]| v.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>();
    let instr = Instr::MultiplyMoving { src, scales: None, dst, acc: Accumulate::Overwrite };
    let out = exec::compute(&instr, &[bytes(x)], Some((&wap, &[bytes(w)])));
    out[0].chunks(4).map(|c| canon(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect()
}

/// Loads `w` (rows x cols) into `b`, streams the `n` columns of `x` (rows x n) through it,
/// skewed, back to back, and returns the cols x n results in order of arrival per column.
fn matmul_through<B: Block>(b: &mut B, rows: usize, cols: usize, w: &[u16], x: &[u16], n: usize) -> Vec<u32> {
    // By name: the RTL's port order is Verilator's, not the model's.
    let names: Vec<&str> = b.ports().iter().map(|p| p.name).collect();
    let at = |p: usize| names.iter().position(|&n| n == SystolicTile::new(2, 2).ports()[p].name).unwrap();
    let set = |b: &mut B, p: usize, v: u128| b.set_input(at(p), v);
    set(b, P::RST, 1);
    b.settle().unwrap();
    b.posedge().unwrap();
    set(b, P::RST, 0);
    for r in 0..rows {
        let data = (0..cols).fold(0u128, |m, c| m | (w[r * cols + c] as u128) << (16 * c));
        set(b, P::W_LOAD, 1);
        set(b, P::W_ROW, r as u128);
        set(b, P::W_DATA, data);
        set(b, P::W_SWAP, (r == rows - 1) as u128);
        b.settle().unwrap();
        b.posedge().unwrap();
    }
    set(b, P::W_LOAD, 0);
    set(b, P::W_SWAP, 0);
    let mut out = vec![Vec::new(); cols];
    for t in 0..n + rows + cols + 1 {
        let (mut valid, mut data) = (0u128, 0u128);
        for r in 0..rows {
            // Row r carries element r of vector t - r.
            if let Some(j) = t.checked_sub(r).filter(|&j| j < n) {
                valid |= 1 << r;
                data |= (x[r * n + j] as u128) << (16 * r);
            }
        }
        set(b, P::A_VALID, valid);
        set(b, P::A_DATA, data);
        b.settle().unwrap();
        let (v, lo, hi) = (b.output(at(P::OUT_VALID)), b.output(at(P::PSUM_LO)), b.output(at(P::PSUM_HI)));
        for (c, o) in out.iter_mut().enumerate() {
            if v >> c & 1 == 1 {
                let lane = if c < cols / 2 { lo >> (32 * c) } else { hi >> (32 * (c - cols / 2)) };
                o.push(lane as u32);
            }
        }
        b.posedge().unwrap();
    }
    assert!(out.iter().all(|o| o.len() == n), "every column delivers n results");
    out.concat()
}

fn random_case(rng: &mut SimRng, rows: usize, cols: usize, n: usize, mix: ValueMix) -> (Vec<u16>, Vec<u16>) {
    let w = (0..rows * cols).map(|_| bf16_value(rng, mix)).collect();
    let x = (0..rows * n).map(|_| bf16_value(rng, mix)).collect();
    (w, x)
}

const MIXES: [ValueMix; 5] =
    [ValueMix::Clean, ValueMix::Sprinkled, ValueMix::Heavy, ValueMix::Palette, ValueMix::Underflow];

#[test]
fn systolic_tile_model_is_bit_exact_with_the_functional_mode_matmul() {
    let mut rng = SimRng::new(5, 1);
    let (mut checked, mut nan, mut inf, mut sub, mut zero) = (0, 0, 0, 0, 0);
    for case in 0..400 {
        let (rows, cols) = [(8, 8), (3, 4), (1, 2), (8, 2), (5, 6)][case % 5];
        let n = 1 + rng.below(40) as usize;
        let (w, x) = random_case(&mut rng, rows, cols, n, MIXES[case / 5 % 5]);
        let got = matmul_through(&mut SystolicTile::new(rows, cols), rows, cols, &w, &x, n);
        let want = functional_matmul(&w, &x, rows, cols, n);
        assert_eq!(got, want, "case {case}: {rows}x{cols}, n {n}");
        for &b in &got {
            let f = f32::from_bits(b);
            (nan, inf, sub, zero) = (
                nan + f.is_nan() as u32,
                inf + f.is_infinite() as u32,
                sub + f.is_subnormal() as u32,
                zero + (f == 0.0) as u32,
            );
        }
        checked += got.len();
    }
    assert!(
        checked > 30_000 && nan > 100 && inf > 100 && sub > 100 && zero > 100,
        "{checked} {nan} {inf} {sub} {zero}"
    );
}

/// The seeded stimulus reaches every class of result on the ports, with vectors streaming.
#[test]
fn systolic_tile_stimulus_covers_special_results_and_back_to_back_vectors() {
    let (rows, cols) = (8, 8);
    let mut t = SystolicTile::new(rows, cols);
    let mut s = SystolicTileStimulus::new(rows, cols, 1);
    let mut inputs = vec![0u128; t.ports().len()];
    let mut counts = [0u64; 6]; // valid lanes, nan, inf, subnormal, zero, full-width cycles
    for cycle in 0..200_000 {
        s.drive(cycle, &mut inputs);
        for p in [P::RST, P::W_LOAD, P::W_ROW, P::W_DATA, P::W_SWAP, P::A_VALID, P::A_DATA] {
            t.set_input(p, inputs[p]);
        }
        t.settle().unwrap();
        let (v, lo, hi) = (t.output(P::OUT_VALID), t.output(P::PSUM_LO), t.output(P::PSUM_HI));
        counts[5] += (v == 0xff) as u64;
        for c in (0..cols).filter(|c| v >> c & 1 == 1) {
            let f = f32::from_bits((if c < 4 { lo >> (32 * c) } else { hi >> (32 * (c - 4)) }) as u32);
            counts[0] += 1;
            counts[1] += f.is_nan() as u64;
            counts[2] += f.is_infinite() as u64;
            counts[3] += f.is_subnormal() as u64;
            counts[4] += (f == 0.0) as u64;
        }
        t.posedge().unwrap();
    }
    assert!(counts[0] > 500_000 && counts[5] > 30_000, "{counts:?}");
    assert!(counts[1..5].iter().all(|&c| c > 1000), "{counts:?}");
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::stimulus::Replay;
    use trnsim_rtl::verilator_sys::models::{SystolicTileR3C4, SystolicTileR8C8};
    use trnsim_rtl::verilator_sys::Verilated;

    #[test]
    fn systolic_tile_r8_c8_rtl_matches_model_for_1m_random_cycles() {
        let t = std::time::Instant::now();
        let cfg = DiffConfig::systolic_tile(1_000_000);
        let r = diff(
            || SystolicTile::new(8, 8),
            Rtl::<SystolicTileR8C8>::new,
            || SystolicTileStimulus::new(8, 8, 44),
            &cfg,
        );
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        let dt = t.elapsed().as_secs_f64();
        eprintln!("systolic_tile 8x8: {} cycles in {dt:.2} s = {:.2} Mcycles/s", r.cycles, r.cycles as f64 / dt / 1e6);
    }

    #[test]
    fn systolic_tile_r3_c4_rtl_matches_model() {
        let cfg = DiffConfig::systolic_tile(300_000);
        let r =
            diff(|| SystolicTile::new(3, 4), Rtl::<SystolicTileR3C4>::new, || SystolicTileStimulus::new(3, 4, 7), &cfg);
        r.unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn systolic_tile_rtl_is_bit_exact_with_the_functional_mode_matmul() {
        let mut rng = SimRng::new(6, 1);
        for case in 0..200 {
            let n = 1 + rng.below(40) as usize;
            let (w, x) = random_case(&mut rng, 8, 8, n, MIXES[case % 5]);
            let mut rtl = Rtl::<SystolicTileR8C8>::new().unwrap();
            let got = matmul_through(&mut rtl, 8, 8, &w, &x, n);
            assert_eq!(got, functional_matmul(&w, &x, 8, 8, n), "case {case}, n {n}");
        }
    }

    #[test]
    fn systolic_tile_port_widths_match_the_model() {
        for (m, ports) in [
            (SystolicTile::new(8, 8), <SystolicTileR8C8 as Verilated>::PORTS),
            (SystolicTile::new(3, 4), <SystolicTileR3C4 as Verilated>::PORTS),
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
        w_load: bool,
        w_row: u8,
        w_data: [u16; 8],
        w_swap: bool,
        a_valid: u8,
        a_data: [u16; 8],
        /// Force the row values to specials (exponent all ones or zero) when set.
        special: u8,
    }

    fn vectors(bytes: &[u8]) -> Vec<Vec<u128>> {
        let mut u = Unstructured::new(bytes);
        let mut out = Vec::new();
        while let Ok((s, rep)) = <(Step, u8)>::arbitrary(&mut u) {
            if u.is_empty() {
                break;
            }
            let fix = |h: u16| match s.special % 4 {
                0 => h | 0x7f80,
                1 => h & 0x807f,
                _ => h,
            };
            let pack = |v: &[u16; 8]| v.iter().enumerate().fold(0u128, |m, (i, &h)| m | (fix(h) as u128) << (16 * i));
            let mut v = vec![0u128; 11];
            v[P::RST] = (s.rst == 0) as u128;
            v[P::W_LOAD] = s.w_load as u128;
            v[P::W_ROW] = s.w_row as u128;
            v[P::W_DATA] = pack(&s.w_data);
            v[P::W_SWAP] = s.w_swap as u128;
            v[P::A_VALID] = s.a_valid as u128;
            v[P::A_DATA] = pack(&s.a_data);
            out.extend(std::iter::repeat_n(v, 1 + rep as usize % 4));
        }
        out
    }

    #[test]
    fn fuzz_systolic_tile_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
        let mut rng = SimRng::new(0x5a7, 0);
        let mut total = 0;
        for c in 0..120 {
            let log_len = 8 + rng.below(7);
            let len = rng.below(1 << log_len) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let vs = vectors(&bytes);
            total += vs.len();
            let cfg = DiffConfig::systolic_tile(vs.len() as u64);
            let r = if c % 2 == 0 {
                diff(|| SystolicTile::new(8, 8), Rtl::<SystolicTileR8C8>::new, || Replay(vs.clone()), &cfg)
            } else {
                diff(|| SystolicTile::new(3, 4), Rtl::<SystolicTileR3C4>::new, || Replay(vs.clone()), &cfg)
            };
            r.unwrap_or_else(|e| panic!("case {c}: {e}"));
        }
        assert!(total > 10_000, "{total} cycles fuzzed");
    }

    /// For scripts/mutate.sh (run with `--ignored`): both configurations for `TILE_DIFF_CYCLES`
    /// cycles (default 1M) from `TILE_DIFF_SEED`; prints cycles-to-detection and fails on a
    /// divergence.
    #[test]
    #[ignore]
    fn systolic_tile_diff_probe() {
        let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
        let (cycles, seed) = (env("TILE_DIFF_CYCLES", 1_000_000), env("TILE_DIFF_SEED", 1));
        let cfg = DiffConfig::systolic_tile(cycles);
        let runs = [
            (
                "r8_c8",
                diff(
                    || SystolicTile::new(8, 8),
                    Rtl::<SystolicTileR8C8>::new,
                    || SystolicTileStimulus::new(8, 8, seed),
                    &cfg,
                ),
            ),
            (
                "r3_c4",
                diff(
                    || SystolicTile::new(3, 4),
                    Rtl::<SystolicTileR3C4>::new,
                    || SystolicTileStimulus::new(3, 4, seed),
                    &cfg,
                ),
            ),
        ];
        let mut failed = false;
        for (name, r) in runs {
            match r {
                Ok(r) => println!("systolic_tile {name}: {} cycles, no divergence", r.cycles),
                Err(DiffError::Diverged(d)) => {
                    println!("systolic_tile {name}: DETECTED after {} cycles\n{d}", d.cycle + 1);
                    failed = true;
                }
                Err(e) => {
                    println!("systolic_tile {name}: error: {e}");
                    failed = true;
                }
            }
        }
        assert!(!failed, "divergence");
    }
}
