//! Energy, power and performance per watt of workload runs: the accounting of
//! `trnsim_workloads::energy` with the chip's energy table, as text lines under a run's
//! report, headline figures (and so `--json` and `trnsim compare` rows), and power counter
//! tracks in the run's Perfetto trace (one per rank and component, and the chip's total with
//! its static power).

use trnsim_kernel::{RecordKind, Time, TraceRecord, TrackDecl, TrackId, TrackKind};
use trnsim_system::doc::{Resolved, SystemDoc};
use trnsim_workloads::energy::{self, EnergyReport, DYNAMIC, PARTS};
use trnsim_workloads::exec::Report;
use trnsim_workloads::format::Checked;

/// The energy of `rep` (workload `w` run on `doc`'s system `sys`); None when the chip names
/// no energy table. A bad table or override is a located error.
pub fn account(w: &Checked, rep: &Report, doc: &SystemDoc, sys: &Resolved) -> Result<Option<EnergyReport>, String> {
    let Some(table) = doc.energy()? else { return Ok(None) };
    let chip = sys.chip().ok_or("a workload runs on a chip or an UltraServer (its chips); a fabric alone has none")?;
    Ok(Some(energy::account(w, rep, chip, sys.fabric(), &table)))
}

/// The report's energy lines: by component, in total, per step and token, power per chip and
/// server, performance per watt.
pub fn to_text(e: &EnergyReport, tokens: Option<u64>) -> String {
    let mut s =
        format!("  energy ({}; {} chips, {} servers)   {:>12.6} J per step\n", e.table, e.chips, e.servers, e.total_j);
    for (name, j) in e.parts_j.iter().filter(|(_, j)| *j > 0.0) {
        let pct = if e.total_j > 0.0 { 100.0 * j / e.total_j } else { 0.0 };
        s += &format!("    {name:<26} {j:>14.6} J  {pct:>5.1} %\n");
    }
    let h: std::collections::BTreeMap<String, f64> = e.headline(tokens).into_iter().collect();
    let g = |k: &str| h.get(k).copied().unwrap_or(0.0);
    s += &format!(
        "  power per chip               {:>12.1} W mean (busiest {:.1} W), {:.1} W peak\n",
        g("chip_avg_power_W"),
        energy::max(&e.chip_avg_w),
        g("chip_peak_power_W")
    );
    s += &format!(
        "  power per server             {:>12.1} W mean, {:.1} W peak; the system {:.1} kW\n",
        g("server_avg_power_W"),
        g("server_peak_power_W"),
        if e.step_s > 0.0 { e.total_j / e.step_s / 1e3 } else { 0.0 }
    );
    s += &format!("  performance per watt         {:>12.2} GFLOPS/W\n", g("GFLOPS_per_W"));
    if tokens.is_some() {
        s += &format!("  tokens per joule             {:>12.3}\n", g("tokens_per_J"));
    }
    s += &format!(
        "  cost per step                {:>12.4e} USD ({:.4e} capital of {:.0} USD, {:.4e} energy at PUE {})\n",
        e.cost_per_step_usd, e.capex_per_step_usd, e.capex_usd, e.energy_cost_per_step_usd, e.pue
    );
    if tokens.is_some_and(|t| t > 0) {
        s += &format!(
            "  cost per million tokens      {:>12.4e} USD; {:.1} tokens/s per kW\n",
            g("USD_per_Mtoken"),
            g("tokens_per_s_per_kW")
        );
    }
    s
}

/// Declares, under rank group `group`, the power counter tracks of rank `rank` (a total with
/// the chip's static power, and one per dynamic component it draws), with ids from `next`,
/// and returns their records.
pub fn power_tracks(
    e: &EnergyReport,
    rank: u32,
    group: TrackId,
    next: &mut u32,
    sink: &mut dyn trnsim_kernel::TraceSink,
) -> Result<Vec<TraceRecord>, trnsim_kernel::TraceError> {
    let Some(tl) = e.timelines.iter().find(|t| t.rank == rank) else { return Ok(Vec::new()) };
    let static_w = e.chip_static_w.get(rank as usize).copied().unwrap_or(0.0);
    let mut declare = |name: String| {
        let id = TrackId(*next);
        *next += 1;
        sink.declare(&TrackDecl { id, parent: Some(group), name, kind: TrackKind::Counter { unit: "W" } }).map(|_| id)
    };
    let total = declare("power, chip total (W)".into())?;
    let mut parts: Vec<(usize, TrackId)> = Vec::new();
    for k in (0..DYNAMIC).filter(|&k| tl.energy_j[k] > 0.0) {
        parts.push((k, declare(format!("power, {} (W)", PARTS[k]))?));
    }
    let at = |ns: f64| Time::from_ps((ns * 1e3).round() as u64);
    let counter = |time, track, value| TraceRecord { time, track, kind: RecordKind::Counter { value } };
    let mut recs = vec![counter(Time::ZERO, total, static_w)];
    for st in &tl.steps {
        let chip: f64 = st.w.iter().enumerate().filter(|(k, _)| *k != energy::SWITCH).map(|(_, w)| w).sum();
        recs.push(counter(at(st.t_ns), total, static_w + chip));
        recs.extend(parts.iter().map(|&(k, id)| counter(at(st.t_ns), id, st.w[k])));
    }
    Ok(recs)
}
