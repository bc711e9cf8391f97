//! Running a kernel's per-core programs on one whole cycle-level chip, and the op cache: each
//! distinct (program, chip description) is simulated once per process.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use trnsim_core::isa::asm::{assemble, render_errors, AsmOptions};
use trnsim_kernel::{Dur, SimBuilder, SimOptions, TickOrder};
use trnsim_system::chip::{self, Chip};

/// Simulated time a kernel program may take before it is an error.
pub const KERNEL_TIME_LIMIT: Dur = Dur::from_us(100_000);

/// The chip description a simulated time depends on (the chip's spec, its core, its HBM stack
/// and DMA parameters), as text: part of every op cache key.
pub fn chip_key(chip: &Chip) -> String {
    format!("{:?}|{:?}|{:?}|{:?}", chip.spec, chip.core, chip.hbm, chip.dma)
}

/// Runs `texts` (one program per core of `chip`, `label` naming them in errors) on the
/// cycle-level chip; the time until every engine has halted, in ns.
pub fn run_programs(chip: &Chip, label: &str, texts: &[String]) -> Result<f64, String> {
    let opts = AsmOptions::for_core(&chip.core);
    let programs = texts
        .iter()
        .enumerate()
        .map(|(i, t)| assemble(&format!("{label} nc{i}.asm (generated)"), t, &opts).map_err(|e| render_errors(&e)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut b = SimBuilder::with_options(SimOptions { tick_order: TickOrder::Structural, ..SimOptions::default() });
    let ids = chip::build(&mut b, chip, &programs, false)?;
    let sim = chip::run_to_end(b, &[ids], None, KERNEL_TIME_LIMIT)?;
    Ok(sim.now().as_ns_f64())
}

type Cache = Mutex<HashMap<String, f64>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// [`run_programs`] once per process for each distinct `key` (which must name the programs
/// and the chip: [`chip_key`] and the kernel's plan). The simulation is deterministic, so a
/// cached time is the one a new run would give: the cache never changes a result.
pub fn cached(key: &str, run: impl FnOnce() -> Result<f64, String>) -> Result<(f64, bool), String> {
    if let Some(&t) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(key) {
        return Ok((t, true));
    }
    let t = run()?;
    cache().lock().unwrap_or_else(|e| e.into_inner()).insert(key.to_string(), t);
    Ok((t, false))
}

/// Empties the op cache (tests comparing cold and warm runs).
pub fn clear_cache() {
    cache().lock().unwrap_or_else(|e| e.into_inner()).clear();
}
