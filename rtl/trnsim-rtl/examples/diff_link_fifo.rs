//! Diffs the link FIFO model against its RTL (WIDTH=64 DEPTH=4 and WIDTH=100 DEPTH=5) on seeded
//! random stimulus and prints the result; exit status 1 on a divergence. Used by
//! scripts/mutate.sh. Usage: diff_link_fifo [cycles] [seed] [vcd_dir]
use std::process::ExitCode;
use std::time::Instant;
use trnsim_rtl::diff::{diff, DiffConfig, DiffError, DiffReport};
use trnsim_rtl::model::LinkFifo;
use trnsim_rtl::rtl::Rtl;
use trnsim_rtl::stimulus::LinkFifoStimulus;
use trnsim_rtl::verilator_sys::models::{LinkFifoW100D5, LinkFifoW64D4};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let cycles = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut cfg = DiffConfig::link_fifo(cycles);
    cfg.vcd_dir = args.get(3).map(Into::into);
    let mut failed = false;
    for (name, width, depth) in [("w64_d4", 64, 4), ("w100_d5", 100, 5)] {
        cfg.name = format!("link_fifo_{name}");
        let t = Instant::now();
        let stim = || LinkFifoStimulus::new(seed);
        let r: Result<DiffReport, DiffError> = match width {
            64 => diff(|| LinkFifo::new(width, depth), Rtl::<LinkFifoW64D4>::new, stim, &cfg),
            _ => diff(|| LinkFifo::new(width, depth), Rtl::<LinkFifoW100D5>::new, stim, &cfg),
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
