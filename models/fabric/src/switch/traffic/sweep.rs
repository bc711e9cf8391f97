//! Offered-load sweeps, BookSim style (`sim_type = latency`): warm up, then measure in sample
//! windows until the accepted rate and the mean latency each change by less than a tolerance
//! for a few windows in a row (converged), or the latency passes a threshold (unstable, i.e.
//! saturated). A point is saturated when it is unstable, does not converge within the most
//! windows allowed (BookSim gives up the same way), or its accepted load falls short of the
//! offered load by more than a margin.

use super::bench::{Bench, BenchError, BenchParams};
use super::sink::Window;
use crate::switch::config::SwitchConfig;

/// How each load point is measured.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepParams {
    /// Port cycles run before measuring.
    pub warmup_cycles: u64,
    /// Port cycles per sample window.
    pub sample_cycles: u64,
    /// Windows measured at least.
    pub min_samples: u32,
    /// Windows measured at most.
    pub max_samples: u32,
    /// Consecutive windows whose changes must stay under `tolerance` to converge.
    pub stable_samples: u32,
    /// Largest relative change of accepted rate and mean latency between windows that counts
    /// as stable.
    pub tolerance: f64,
    /// Mean latency above which a point is unstable (BookSim's `latency_thres`), port cycles.
    pub latency_limit_cycles: f64,
    /// A point whose accepted load is below offered minus this is saturated.
    pub accept_margin: f64,
}

impl Default for SweepParams {
    /// 5,000 warm-up cycles, 2,000-cycle windows (3 to 20), stable for 3 windows within 5 %,
    /// latency limit 500 cycles, accept margin 0.01.
    fn default() -> Self {
        SweepParams {
            warmup_cycles: 5_000,
            sample_cycles: 2_000,
            min_samples: 3,
            max_samples: 20,
            stable_samples: 3,
            tolerance: 0.05,
            latency_limit_cycles: 500.0,
            accept_margin: 0.01,
        }
    }
}

/// One measured load point.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadPoint {
    /// Offered load, cells per port cycle per input.
    pub offered: f64,
    /// Accepted load, cells per port cycle per output (mean over the measured windows).
    pub accepted: f64,
    /// Mean packet latency from creation to arrival at the sink, port cycles.
    pub latency_mean_cycles: f64,
    /// Its 99th percentile (within the histogram's 6.25 %), port cycles.
    pub latency_p99_cycles: f64,
    /// Windows measured.
    pub samples: u32,
    /// Accepted rate and latency settled within the tolerance.
    pub converged: bool,
    /// Latency passed the limit, the windows never settled, or accepted load fell short of
    /// offered.
    pub saturated: bool,
}

fn rel_change(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

/// Measures one offered load on a fresh bench.
pub fn run_point(
    cfg: &SwitchConfig,
    bench: &BenchParams,
    sp: &SweepParams,
    load: f64,
) -> Result<LoadPoint, BenchError> {
    let mut b = Bench::new(cfg, &BenchParams { load, limit: None, ..bench.clone() })?;
    b.run_cycles(sp.warmup_cycles)?;
    b.take_window();
    let cycle_ps = cfg.cycle_ps();
    let slots = f64::from(cfg.ports) * sp.sample_cycles as f64;
    let (mut all, mut prev, mut stable, mut samples) = (Window::default(), None, 0, 0);
    let (mut converged, mut unstable) = (false, false);
    while samples < sp.max_samples {
        b.run_cycles(sp.sample_cycles)?;
        let w = b.take_window();
        samples += 1;
        let (acc, lat) = (w.cells as f64 / slots, w.latency_ps.mean() / cycle_ps);
        all.merge(&w);
        if lat > sp.latency_limit_cycles {
            unstable = true;
            break;
        }
        if let Some((pa, pl)) = prev {
            let ok = rel_change(acc, pa) < sp.tolerance && rel_change(lat, pl) < sp.tolerance;
            stable = if ok { stable + 1 } else { 0 };
        }
        prev = Some((acc, lat));
        if stable >= sp.stable_samples && samples >= sp.min_samples {
            converged = true;
            break;
        }
    }
    let accepted = all.cells as f64 / (f64::from(cfg.ports) * (samples as f64 * sp.sample_cycles as f64));
    let short = accepted < load - sp.accept_margin;
    Ok(LoadPoint {
        offered: load,
        accepted,
        latency_mean_cycles: all.latency_ps.mean() / cycle_ps,
        latency_p99_cycles: all.latency_ps.quantile(0.99) / cycle_ps,
        samples,
        converged,
        saturated: unstable || short || !converged,
    })
}

/// Measures every load in `loads`, in order.
pub fn sweep(
    cfg: &SwitchConfig,
    bench: &BenchParams,
    sp: &SweepParams,
    loads: &[f64],
) -> Result<Vec<LoadPoint>, BenchError> {
    loads.iter().map(|&l| run_point(cfg, bench, sp, l)).collect()
}

/// The offered load of the first saturated point of a sweep (ascending loads), if any.
pub fn saturation_load(points: &[LoadPoint]) -> Option<f64> {
    points.iter().find(|p| p.saturated).map(|p| p.offered)
}

/// Saturation throughput: the accepted load when every input is offered a cell every cycle
/// (offered load 1, unbounded source queues), measured over `max_samples` windows after the
/// warm-up. This is the throughput of Karol, Hluchyj and Morgan's head-of-line analysis.
pub fn saturation_throughput(cfg: &SwitchConfig, bench: &BenchParams, sp: &SweepParams) -> Result<f64, BenchError> {
    let mut b = Bench::new(cfg, &BenchParams { load: 1.0, limit: None, ..bench.clone() })?;
    b.run_cycles(sp.warmup_cycles)?;
    b.take_window();
    let cycles = sp.sample_cycles * u64::from(sp.max_samples.max(1));
    b.run_cycles(cycles)?;
    Ok(b.take_window().cells as f64 / (f64::from(cfg.ports) * cycles as f64))
}
