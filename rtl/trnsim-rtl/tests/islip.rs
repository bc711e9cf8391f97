//! The crossbar arbiter: the Rust model against trnsim-fabric's `Islip` / `RoundRobin` (always),
//! and against the Verilated RTL in lock-step (feature `rtl`).

use trnsim_fabric::switch::{Arbiter, Islip, Matching, Requests, RoundRobin};
use trnsim_kernel::SimRng;
use trnsim_rtl::block::Block;
use trnsim_rtl::model::{ArbMode, IslipArbiter};

/// The fabric arbiter for a mode, and its (grant, accept) pointers where it exposes them.
enum Fabric {
    Islip(Islip),
    Rrm(RoundRobin),
}

impl Fabric {
    fn new(mode: ArbMode, n: usize, iter: u32) -> Fabric {
        match mode {
            ArbMode::Islip => Fabric::Islip(Islip::new(n, iter)),
            ArbMode::Rrm => Fabric::Rrm(RoundRobin::new(n, iter)),
        }
    }
    fn arbitrate(&mut self, r: &Requests, m: &mut Matching) {
        match self {
            Fabric::Islip(a) => a.arbitrate(r, m),
            Fabric::Rrm(a) => a.arbitrate(r, m),
        }
    }
    fn pointers(&self) -> (&[usize], Option<&[usize]>) {
        match self {
            Fabric::Islip(a) => (a.grant_pointers(), Some(a.accept_pointers())),
            Fabric::Rrm(a) => (a.grant_pointers(), None),
        }
    }
}

/// Steps a Block arbiter (model or RTL) and the fabric arbiter on the same random requests
/// (varying density, occasional resets) and requires the same matching and pointers every
/// cycle. Returns the number of matched pairs seen (coverage).
fn agree_with_fabric<B: Block>(
    b: &mut B,
    mode: ArbMode,
    n: usize,
    iter: u32,
    cycles: u64,
    seed: u64,
) -> Result<u64, String> {
    let mut rng = SimRng::new(seed, 0);
    let mut f = Fabric::new(mode, n, iter);
    let (mut req, mut m) = (Requests::new(n), Matching::new(n));
    let w = usize::BITS - (n - 1).leading_zeros();
    let field = |v: u128, k: usize| (v >> (k as u32 * w)) as usize & ((1 << w) - 1);
    let mut matched = 0;
    let mut density = 0.5;
    // By name: the RTL's ports are in Verilator's order.
    let port = |name: &str| b.ports().iter().position(|p| p.name == name).unwrap();
    let [rst, req_p, valid_p, out_p, grant_p, accept_p] =
        ["rst", "req", "match_valid", "match_out", "grant_ptr", "accept_ptr"].map(port);
    b.set_input(rst, 1); // both start with zeroed pointers
    b.settle().map_err(|e| e.to_string())?;
    b.posedge().map_err(|e| e.to_string())?;
    b.set_input(rst, 0);
    for c in 0..cycles {
        if c % 64 == 0 {
            density = [0.05, 0.2, 0.5, 0.8, 1.0][rng.below(5) as usize];
        }
        let reset = rng.below(2000) == 0;
        req.clear();
        let mut bits = 0u128;
        for i in 0..n {
            for j in 0..n {
                if rng.chance(density) {
                    req.add(i, j);
                    bits |= 1 << (i * n + j);
                }
            }
        }
        b.set_input(req_p, bits);
        b.set_input(rst, reset as u128);
        b.settle().map_err(|e| e.to_string())?;
        f.arbitrate(&req, &mut m);
        m.check(&req)?;
        let valid = b.output(valid_p);
        let out = b.output(out_p);
        let got: Vec<Option<u16>> = (0..n).map(|i| (valid >> i & 1 == 1).then(|| field(out, i) as u16)).collect();
        if got != m.out_of {
            return Err(format!("cycle {c}: matching {got:?}, fabric {:?}", m.out_of));
        }
        matched += m.size() as u64;
        b.posedge().map_err(|e| e.to_string())?;
        if reset {
            f = Fabric::new(mode, n, iter);
        }
        let (g, a) = (b.output(grant_p), b.output(accept_p));
        let (fg, fa) = f.pointers();
        let g: Vec<usize> = (0..n).map(|k| field(g, k)).collect();
        if g != fg {
            return Err(format!("cycle {c}: grant pointers {g:?}, fabric {fg:?}"));
        }
        if let Some(fa) = fa {
            let a: Vec<usize> = (0..n).map(|k| field(a, k)).collect();
            if a != fa {
                return Err(format!("cycle {c}: accept pointers {a:?}, fabric {fa:?}"));
            }
        }
    }
    Ok(matched)
}

#[test]
fn islip_model_equals_fabric_islip_and_round_robin_for_all_sizes_and_iterations() {
    let mut runs = 0;
    for mode in [ArbMode::Islip, ArbMode::Rrm] {
        for n in 2..=11 {
            for iter in 1..=n as u32 {
                let mut a = IslipArbiter::new(n, iter, mode);
                let seed = (n as u64) << 8 | iter as u64;
                let matched = agree_with_fabric(&mut a, mode, n, iter, 3_000, seed)
                    .unwrap_or_else(|e| panic!("{mode:?} n {n} iter {iter}: {e}"));
                assert!(matched > 1_500, "{mode:?} n {n} iter {iter}: only {matched} pairs matched");
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 2 * (2..=11).sum::<usize>());
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use trnsim_rtl::diff::{diff, DiffConfig, DiffReport};
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::stimulus::IslipStimulus;
    use trnsim_rtl::verilator_sys::models::*;
    use trnsim_rtl::verilator_sys::Verilated;

    fn lockstep<V: Verilated>(n: usize, iter: u32, mode: ArbMode, cycles: u64, seed: u64) -> DiffReport {
        let t = std::time::Instant::now();
        let cfg = DiffConfig::islip_arbiter(cycles);
        let r = diff(|| IslipArbiter::new(n, iter, mode), Rtl::<V>::new, || IslipStimulus::new(n, seed), &cfg);
        let r = r.unwrap_or_else(|e| panic!("{mode:?} n {n} iter {iter}: {e}"));
        let dt = t.elapsed().as_secs_f64();
        eprintln!(
            "{mode:?} n {n} iter {iter}: {cycles} cycles in {dt:.2} s = {:.2} Mcycles/s",
            cycles as f64 / dt / 1e6
        );
        r
    }

    #[test]
    fn islip_n4_i1_rtl_matches_model_for_1m_random_cycles() {
        lockstep::<IslipArbiterN4I1>(4, 1, ArbMode::Islip, 1_000_000, 41);
    }

    #[test]
    fn islip_n4_i3_rtl_matches_model_for_1m_random_cycles() {
        lockstep::<IslipArbiterN4I3>(4, 3, ArbMode::Islip, 1_000_000, 43);
    }

    #[test]
    fn islip_n8_i1_rtl_matches_model_for_1m_random_cycles() {
        lockstep::<IslipArbiterN8I1>(8, 1, ArbMode::Islip, 1_000_000, 81);
    }

    #[test]
    fn islip_n8_i3_rtl_matches_model_for_1m_random_cycles() {
        lockstep::<IslipArbiterN8I3>(8, 3, ArbMode::Islip, 1_000_000, 83);
    }

    #[test]
    fn rrm_n5_i2_and_n8_i3_rtl_match_model() {
        lockstep::<RrmArbiterN5I2>(5, 2, ArbMode::Rrm, 500_000, 52);
        lockstep::<RrmArbiterN8I3>(8, 3, ArbMode::Rrm, 500_000, 83);
    }

    #[test]
    fn islip_rtl_equals_fabric_islip_directly() {
        let mut r = Rtl::wrap(IslipArbiterN8I3::new().unwrap());
        assert!(agree_with_fabric(&mut r, ArbMode::Islip, 8, 3, 100_000, 5).unwrap() > 100_000);
        let mut r = Rtl::wrap(RrmArbiterN5I2::new().unwrap());
        assert!(agree_with_fabric(&mut r, ArbMode::Rrm, 5, 2, 100_000, 6).unwrap() > 100_000);
    }

    #[test]
    fn islip_port_widths_and_order_match_the_model() {
        let m = IslipArbiter::new(8, 3, ArbMode::Islip);
        for p in m.ports() {
            let k = <IslipArbiterN8I3 as Verilated>::port(p.name).unwrap_or_else(|| panic!("no port {}", p.name));
            assert_eq!(<IslipArbiterN8I3 as Verilated>::PORTS[k], *p);
        }
        assert_eq!(<IslipArbiterN8I3 as Verilated>::PORTS.len(), m.ports().len());
    }
}
