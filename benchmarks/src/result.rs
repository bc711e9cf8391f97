//! What every benchmark returns and shares: its result (headline, statistics, host speed),
//! the options of a run, the run loop with its progress line, the cut of a many-chip report to
//! its first chip, and how a figure is printed. Every benchmark module and the suite use it;
//! it uses no benchmark, so the benchmarks and the registry above them import in one direction.

use crate::cpu::Stopwatch;
use indicatif::ProgressBar;
use serde::Serialize;
use trnsim_kernel::{Dur, RunError, Simulation, StatsReport, Stop, TickOrder, TraceOptions, TraceSink};
use trnsim_system::energy_stats::{Counts, COUNTS_OWNER};

/// Host-side speed of one run (never part of the deterministic results).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Speed {
    /// Wall-clock seconds of the run loop.
    pub wall_s: f64,
    /// CPU seconds of the run loop.
    pub cpu_s: f64,
    /// Simulated time / wall time.
    pub slowdown: f64,
    /// Component ticks per wall second.
    pub ticks_per_s: f64,
}

impl Speed {
    /// The speed of a finished `sim` that took `wall_s` / `cpu_s` on the host.
    pub fn of(sim: &Simulation, wall_s: f64, cpu_s: f64) -> Speed {
        let sim_s = sim.now().as_ps() as f64 * 1e-12;
        let ticks = sim.counters().ticks as f64;
        Speed { wall_s, cpu_s, slowdown: wall_s / sim_s.max(1e-12), ticks_per_s: ticks / wall_s.max(1e-9) }
    }
}

/// The outcome of one benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Headline figures (simulated, deterministic), units in the names.
    pub headline: Vec<(String, f64)>,
    /// Benchmark name. (Fields in name order: results JSON lists them so.)
    pub name: String,
    /// Every statistic of the run.
    pub stats: StatsReport,
    /// Host speed (not deterministic; kept out of results JSON).
    #[serde(skip)]
    pub speed: Speed,
}

/// Options shared by all benchmarks of a run.
pub struct RunOpts {
    /// Tick order (for determinism checks).
    pub order: TickOrder,
    /// Trace sink for this benchmark, if any, with what to trace on links.
    pub trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    /// Show a progress bar for runs longer than a second.
    pub progress: bool,
    /// Fidelity of HBM stacks and DMA engines for the benchmarks that build their own
    /// (`hbm-*`, `nc-*`).
    pub fidelity: trnsim_mem::hbm::Fidelity,
}

/// Runs `sim` to `end` (or idle) in chunks, with a progress bar after the first second: on
/// stderr, only when it is a terminal (indicatif hides it otherwise), showing the simulated
/// time reached of the goal, the slowdown against real time and the ETA.
pub fn drive(sim: &mut Simulation, limit: Dur, progress: bool) -> Result<(Stop, Speed), RunError> {
    let sw = Stopwatch::start();
    let start = sim.now();
    let chunk = Dur::from_ps((limit.as_ps() / 100).max(1));
    let mut bar: Option<ProgressBar> = None;
    let mut done = Dur::ZERO;
    let stop = loop {
        let step = if done + chunk > limit { Dur::from_ps(limit.as_ps() - done.as_ps()) } else { chunk };
        let stop = sim.run_for(step)?;
        done = sim.now().since(start);
        if stop != Stop::Limit || done >= limit {
            break stop;
        }
        if progress && bar.is_none() && sw.elapsed().0 > 1.0 {
            bar = Some(crate::progress::line(true));
        }
        if let Some(b) = &bar {
            b.set_position(done.as_ps() * 100 / limit.as_ps().max(1));
            // Simulated time reached of the goal, and how much slower than real time it runs.
            let slow = crate::progress::slowdown(sw.elapsed().0, done);
            b.set_message(format!("{done} of {limit}, {slow:.3e}x real time"));
        }
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (wall_s, cpu_s) = sw.elapsed();
    let sim_s = sim.now().since(start).as_secs_f64();
    let ticks = sim.counters().ticks as f64;
    Ok((
        stop,
        Speed {
            wall_s,
            cpu_s,
            slowdown: if sim_s > 0.0 { wall_s / sim_s } else { 0.0 },
            ticks_per_s: ticks / wall_s.max(1e-9),
        },
    ))
}

/// A many-chip report cut to a readable size for results JSON: every statistic of chip 0
/// (`chip000.*` components and their links), of every fabric node and fabric link, and of the
/// kernel; the other chips' internal components and links are dropped (they run the same
/// program; their figures are in the headline, e.g. per-chip phase times). A `results` owner
/// records how many were left out, `left_out` more (owners already left out of `report`:
/// links that kept no statistics). 64 chips' full report is ~40 MB of JSON.
pub fn keep_first_chip(report: StatsReport, left_out: u64) -> StatsReport {
    let counts = Counts::of(&report);
    let mut out = StatsReport::default();
    let mut dropped = left_out;
    for (owner, stats) in report.owners {
        if internal_of_other_chip(&owner) {
            dropped += 1;
        } else {
            out.owners.insert(owner, stats);
        }
    }
    out.owners.insert(COUNTS_OWNER.to_string(), counts.to_owner());
    with_left_out_note(out, dropped)
}

/// [`keep_first_chip`] of `sim`'s report, gathering only what is kept (the other chips'
/// internals are never written: on 144 chips that is most of the report's memory) and, of the
/// other chips' internals, only what energy is priced from.
pub fn first_chip_report(sim: &trnsim_kernel::Simulation) -> StatsReport {
    let (mut report, dropped) = sim.report_where(&|owner| !internal_of_other_chip(owner));
    let (others, _) = sim.report_where(&|owner| internal_of_other_chip(owner) && Counts::reads(owner));
    let mut counts = Counts::of(&report);
    for (owner, m) in others.owners.iter().filter(|(o, _)| *o != "kernel") {
        counts.add(owner, m);
    }
    report.owners.insert(COUNTS_OWNER.to_string(), counts.to_owner());
    with_left_out_note(report, dropped)
}

/// Whether [`first_chip_report`] keeps the figures of the link called `name`: a run reported
/// that way tells its builder so ([`trnsim_kernel::SimBuilder::keep_link_stats_where`]), and
/// the other chips' internal links keep no statistics at all.
pub fn first_chip_keeps_link(name: &str) -> bool {
    !internal_of_other_chip(name)
}

/// Whether a partitioned run of whole chips reports owner `owner` at all: not the SBUF/PSUM
/// unit or semaphore unit of a chip other than the first (the bulk of a chip's statistics),
/// which [`keep_first_chip`] would leave out and no headline, check or energy reads; a
/// partition counts them as left out instead. Engines (a headline reads the tensor engines',
/// the merged run is checked for unfinished streams, energy reads their counts), DMA blocks
/// and HBM stacks (energy), and nodes are reported.
pub fn partition_reports(owner: &str) -> bool {
    !(internal_of_other_chip(owner) && (owner.ends_with(".sbuf") || owner.ends_with(".sem")))
}

/// An owner of chip 1 or later whose figures [`keep_first_chip`] leaves out.
fn internal_of_other_chip(owner: &str) -> bool {
    let name = owner.strip_prefix("link:").unwrap_or(owner);
    let Some(rest) = name.strip_prefix("chip") else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest[..digits].bytes().all(|b| b == b'0') {
        return false;
    }
    // "chip003.nc0..." or "chip003.hbm1...": inside the chip; "chip003.tx...": fabric.
    let after = &rest[digits..];
    after.starts_with(".nc") || after.starts_with(".hbm")
}

fn with_left_out_note(mut out: StatsReport, dropped: u64) -> StatsReport {
    let mut note = std::collections::BTreeMap::new();
    note.insert("owners_left_out_other_chips".to_string(), trnsim_kernel::StatValue::Int(dropped));
    out.owners.insert("results".to_string(), note);
    out
}

/// A figure as printed in tables: whole numbers without decimals, others with four, `n/a`
/// for a figure that was not measured (NaN).
pub fn fmt_figure(v: f64) -> String {
    let v = v + 0.0; // -0 prints as 0
    if v.is_nan() {
        "n/a".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::keep_first_chip;
    use std::collections::BTreeMap;
    use trnsim_kernel::{StatValue, StatsReport};

    #[test]
    fn keep_first_chip_drops_only_other_chips_internals() {
        let mut r = StatsReport::default();
        for owner in [
            "chip000.nc0.tensor",
            "link:chip000.nc0.tensor.sem -> chip000.nc0.sem.tensor.op",
            "chip003.nc1.sem",
            "chip003.hbm2",
            "link:chip012.nc7.dma.hbm3 -> chip012.hbm3.chip012.nc7.dma3.req",
            "chip003",
            "link:chip003.tx.sw064.0 -> sw064.rx.chip003.0",
            "link:chip003.done.chip003.nc0 -> chip003.nc0.sem.cc.done",
            "sw064",
            "kernel",
        ] {
            r.owners.insert(owner.to_string(), BTreeMap::from([("x".to_string(), StatValue::Int(1))]));
        }
        let kept: Vec<String> = keep_first_chip(r, 0).owners.into_keys().collect();
        let dropped =
            ["chip003.nc1.sem", "chip003.hbm2", "link:chip012.nc7.dma.hbm3 -> chip012.hbm3.chip012.nc7.dma3.req"];
        for d in dropped {
            assert!(!kept.iter().any(|k| k == d), "{d} kept");
        }
        assert_eq!(kept.len(), 10 - dropped.len() + 2, "the rest kept, the `results` note, the counts: {kept:?}");
    }
}
