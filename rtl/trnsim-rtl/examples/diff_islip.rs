//! Diffs the crossbar arbiter model against its RTL (iSLIP N=4/8 x ITER=1/3, RRM N=5 ITER=2 and
//! N=8 ITER=3) on seeded random stimulus and prints cycles/s or cycles-to-detection; exit
//! status 1 on a divergence. Used by scripts/mutate.sh. Usage: diff_islip [cycles] [seed] [vcd_dir]
use std::process::ExitCode;
use std::time::Instant;
use trnsim_rtl::diff::{diff, DiffConfig, DiffError, DiffReport};
use trnsim_rtl::model::{ArbMode, IslipArbiter};
use trnsim_rtl::rtl::Rtl;
use trnsim_rtl::stimulus::IslipStimulus;
use trnsim_rtl::verilator_sys::models::*;
use trnsim_rtl::verilator_sys::Verilated;

fn run<V: Verilated>(n: usize, iter: u32, mode: ArbMode, seed: u64, cfg: &DiffConfig) -> Result<DiffReport, DiffError> {
    diff(|| IslipArbiter::new(n, iter, mode), Rtl::<V>::new, || IslipStimulus::new(n, seed), cfg)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let cycles = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut cfg = DiffConfig::islip_arbiter(cycles);
    cfg.vcd_dir = args.get(3).map(Into::into);
    let mut failed = false;
    for name in ["islip_n4_i1", "islip_n4_i3", "islip_n8_i1", "islip_n8_i3", "rrm_n5_i2", "rrm_n8_i3"] {
        cfg.name = name.into();
        let t = Instant::now();
        let r = match name {
            "islip_n4_i1" => run::<IslipArbiterN4I1>(4, 1, ArbMode::Islip, seed, &cfg),
            "islip_n4_i3" => run::<IslipArbiterN4I3>(4, 3, ArbMode::Islip, seed, &cfg),
            "islip_n8_i1" => run::<IslipArbiterN8I1>(8, 1, ArbMode::Islip, seed, &cfg),
            "islip_n8_i3" => run::<IslipArbiterN8I3>(8, 3, ArbMode::Islip, seed, &cfg),
            "rrm_n5_i2" => run::<RrmArbiterN5I2>(5, 2, ArbMode::Rrm, seed, &cfg),
            _ => run::<RrmArbiterN8I3>(8, 3, ArbMode::Rrm, seed, &cfg),
        };
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(r) => {
                println!("{name}: {} cycles, no divergence, {:.2} Mcycles/s", r.cycles, r.cycles as f64 / secs / 1e6)
            }
            Err(DiffError::Diverged(d)) => {
                println!("{name}: DETECTED after {} cycles\n{d}", d.cycle + 1);
                failed = true;
            }
            Err(e) => {
                println!("{name}: error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
