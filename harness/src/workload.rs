//! Workload files run on systems: `trnsim run --workload FILE --system S` (with `--set` and
//! `--sweep` on the system), `trnsim compare`, and their reports: the step time, where it went
//! (compute, memory, communication, exposed communication, memory-bound, idle), each
//! collective's bus bandwidth, an SVG of the breakdown and a Perfetto trace with a track per
//! rank and queue.

use std::collections::HashMap;
use std::sync::Mutex;
use trnsim_benchmarks::e2e;
use trnsim_benchmarks::plot::Bars;
use trnsim_kernel::{Time, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};
use trnsim_system::chip::Chip;
use trnsim_system::doc::Resolved;
use trnsim_workloads::costs::SystemCosts;
use trnsim_workloads::exec::{self, Report, Span};
use trnsim_workloads::format::{Checked, Queue};

/// The calibration GEMM tile per core: 512 tokens x 1024 x 1024 columns per core, run on the
/// whole cycle-level chip (every core, DMA and HBM stack) to measure the efficiency GEMM
/// nodes reach.
pub const CALIBRATION: e2e::Shape = e2e::Shape {
    tokens: 512,
    d_model: 1024,
    d_ff_per_core: 1024,
    chunks_per_slab: 2,
    chunks_per_group: 4,
    slab_buffers: 4,
};

static EFFICIENCY: Mutex<Option<HashMap<String, f64>>> = Mutex::new(None);

/// The fraction of the tensor engines' peak the chip reaches on [`CALIBRATION`], measured on
/// the cycle-level chip once per distinct chip (cached for the process).
pub fn gemm_efficiency(chip: &Chip) -> Result<f64, String> {
    let key = format!("{:?}", chip.spec);
    if let Some(e) = EFFICIENCY.lock().ok().and_then(|m| m.as_ref().and_then(|m| m.get(&key).copied())) {
        return Ok(e);
    }
    let (sim, ids) = e2e::run_program(chip, &CALIBRATION, "identity", trnsim_kernel::TickOrder::Structural, None)?;
    let h = e2e::headline(&sim, &ids, chip, &CALIBRATION)?;
    let pct = h.iter().find(|(k, _)| k == "efficiency_pct").map(|x| x.1).ok_or("no efficiency figure")?;
    let e = (pct / 100.0).clamp(1e-3, 1.0);
    if let Ok(mut m) = EFFICIENCY.lock() {
        m.get_or_insert_with(HashMap::new).insert(key, e);
    }
    Ok(e)
}

/// How a run times compute nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compute {
    /// The quick estimate: a roofline per node at the GEMM efficiency measured (or given)
    /// for the chip.
    Roofline,
    /// The default: every compute node with a shape (GEMM, attention, elementwise) as the
    /// kernel library's NeuronCore programs on the cycle-level chip, one simulation per
    /// distinct program ([`trnsim_kernels::cycle`]); opaque kernels by the roofline.
    #[default]
    Cycle,
    /// Both: the cycle-level run is the report; the roofline's beside it, per node kind.
    Both,
}

impl Compute {
    /// Parses `roofline`, `cycle` or `both`.
    pub fn parse(s: &str) -> Result<Compute, String> {
        match s {
            "roofline" => Ok(Compute::Roofline),
            "cycle" => Ok(Compute::Cycle),
            "both" => Ok(Compute::Both),
            _ => Err(format!("{s:?} is not a compute model (allowed: roofline, cycle, both)")),
        }
    }
}

/// One node kind's time on the critical rank under each compute model (`--compute both`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KindDiff {
    /// The node kind (`gemm`, `attention`, ...).
    pub kind: String,
    /// Its nodes' summed time with the roofline, in ns.
    pub roofline_ns: f64,
    /// With the kernel programs on the cycle-level chip, in ns.
    pub cycle_ns: f64,
}

/// Summed span time of each compute and memory node kind on the critical rank of `rep`.
fn kind_times(w: &Checked, rep: &Report) -> std::collections::BTreeMap<&'static str, f64> {
    let mut t = std::collections::BTreeMap::new();
    for s in rep.spans.iter().filter(|s| s.rank == rep.critical.rank && s.queue != Queue::Comm) {
        *t.entry(w.w.nodes[s.node].op.kind()).or_insert(0.0) += s.end_ns - s.start_ns;
    }
    t
}

/// Which model times each compute and memory node kind of `w` under the roofline.
fn roofline_models(w: &Checked) -> Vec<(String, String)> {
    let mut m = std::collections::BTreeMap::new();
    for n in &w.w.nodes {
        match n.op.queue() {
            Queue::Compute => m.insert(n.op.kind(), "roofline"),
            Queue::Memory => m.insert(n.op.kind(), "cycle"),
            Queue::Comm => None,
        };
    }
    m.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// How to run a workload.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The GEMM efficiency of the roofline (None: measured on the cycle-level chip).
    pub efficiency: Option<f64>,
    /// How compute nodes are timed.
    pub compute: Compute,
    /// The cycle-level op runs' threads and on-disk cache (`--jobs`, `--op-cache`).
    pub ops: trnsim_kernels::run::OpRuns,
}

/// What a workload run gives back: the report and the figures the tables print.
pub struct WorkloadRun {
    /// The schedule's report.
    pub report: Report,
    /// The GEMM efficiency used.
    pub gemm_efficiency: f64,
    /// Whether it was measured on the cycle-level chip (else given).
    pub measured: bool,
    /// Chips in the system.
    pub chips: usize,
    /// How compute nodes were timed.
    pub compute: Compute,
    /// Distinct kernel programs the cycle-level run ran (with [`Compute::Cycle`] or
    /// [`Compute::Both`]).
    pub programs: usize,
    /// Which model timed each compute and memory node kind (`cycle`, `roofline`).
    pub models: Vec<(String, String)>,
    /// With [`Compute::Both`]: each node kind's time under both models.
    pub both: Vec<KindDiff>,
    /// An inference workload's serving figures ([`serving_figures`]); empty otherwise.
    pub serving: Vec<(String, f64)>,
    /// Tokens one step processes (the workload's `tokens_per_step`).
    pub tokens_per_step: Option<u64>,
    /// Energy and power ([`crate::energy_report::account`]; None: not accounted, or the chip
    /// names no energy table).
    pub energy: Option<trnsim_workloads::energy::EnergyReport>,
}

/// The serving figures of an inference workload (one with a `serving` section) whose pass
/// took `pass_ns`: a prefill's time to first token (`ttft_ms`), a decode step's time per
/// output token (`tpot_ms`), and the tokens each processes per second per chip (over the
/// workload's ranks) and per user (one sequence: a prefill's prompt tokens, a decode's one
/// token per step).
pub fn serving_figures(w: &trnsim_workloads::format::Workload, pass_ns: f64) -> Vec<(String, f64)> {
    let Some(s) = &w.serving else { return Vec::new() };
    if pass_ns <= 0.0 {
        return Vec::new();
    }
    let secs = pass_ns / 1e9;
    let (time, per_user) =
        if s.mode == "prefill" { ("ttft_ms", s.context as f64 / secs) } else { ("tpot_ms", 1.0 / secs) };
    let tokens = w.tokens_per_step.unwrap_or(0) as f64;
    vec![
        (time.to_string(), pass_ns / 1e6),
        ("tokens_per_s_per_chip".into(), tokens / secs / f64::from(w.ranks)),
        ("tokens_per_s_per_user".into(), per_user),
        ("kv_cache_GiB_per_rank".into(), s.kv_cache_bytes_per_rank as f64 / (1u64 << 30) as f64),
    ]
}

/// Checks, before anything runs, that workload `w` fits `sys`: its HBM need (if it states
/// one) within the chip's HBM, and every number format its compute nodes name on the chip's
/// core. Errors are located in the workload file.
pub fn check_fits(w: &Checked, sys: &Resolved) -> Result<(), String> {
    let chip = sys.chip().ok_or("a workload runs on a chip or an UltraServer (its chips); a fabric alone has none")?;
    if let Some(need) = w.w.hbm_bytes_per_rank {
        let have = chip.hbm_capacity_bytes();
        if need > have {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            let kv = w.w.serving.as_ref().map_or(0, |s| s.kv_cache_bytes_per_rank);
            let of = if kv > 0 { format!(" (of which the KV cache {:.1} GiB)", gib(kv)) } else { String::new() };
            return Err(format!(
                "{}: hbm_bytes_per_rank: workload {:?} needs {:.1} GiB of HBM per rank{of}, but chip {} has {:.1} GiB ({} stacks): the limit is the chip's HBM; more ranks (--tp, --ep, --pp), a smaller batch or context",
                w.hbm_at,
                w.w.name,
                gib(need),
                chip.spec.name,
                gib(have),
                chip.spec.hbm.stacks
            ));
        }
    }
    trnsim_workloads::costs::check_formats(w, chip)
}

/// Checks, before anything runs, that every compute node of `w` has a kernel `sys`'s chip runs
/// when `compute` times nodes on the cycle-level chip; located at the first that has none.
pub fn check_compute(w: &Checked, sys: &Resolved, compute: Compute) -> Result<(), String> {
    let Some(chip) = sys.chip() else { return Ok(()) };
    if compute == Compute::Roofline {
        return Ok(());
    }
    trnsim_kernels::cycle::CycleCosts::new(SystemCosts::new(chip, sys.fabric(), 1.0)).check(w)
}

/// Runs workload `w` on `sys`. The workload's ranks must fit the system's chips and its HBM
/// need (if it states one) the chip's HBM.
pub fn run(w: &Checked, sys: &Resolved, opts: &Options) -> Result<WorkloadRun, String> {
    let efficiency = opts.efficiency;
    let chip = sys.chip().ok_or("a workload runs on a chip or an UltraServer (its chips); a fabric alone has none")?;
    let chips = sys.fabric().map_or(1, |t| t.chips);
    check_fits(w, sys)?;
    check_compute(w, sys, opts.compute)?;
    // The roofline's GEMM efficiency is measured unless given, or unused (every node the
    // roofline would time runs cycle-level: no opaque kernel node).
    let uses_roofline_tensor = opts.compute != Compute::Cycle
        || w.w.nodes.iter().any(|n| matches!(n.op, trnsim_workloads::format::Op::Kernel { .. }));
    let eff = match efficiency {
        Some(e) => e,
        None if uses_roofline_tensor => gemm_efficiency(chip)?,
        None => 1.0,
    };
    let costs = SystemCosts::new(chip, sys.fabric(), eff);
    let (report, programs, models, both) = match opts.compute {
        Compute::Roofline => (exec::run(w, chips, &mut { costs })?, 0, roofline_models(w), Vec::new()),
        Compute::Cycle | Compute::Both => {
            let roofline = match opts.compute {
                Compute::Both => Some(exec::run(w, chips, &mut SystemCosts::new(chip, sys.fabric(), eff))?),
                _ => None,
            };
            let mut cycle = trnsim_kernels::cycle::CycleCosts::new(costs).with_op_runs(opts.ops.clone());
            let report = exec::run(w, chips, &mut cycle)?;
            let models = cycle.models().iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let both = roofline.map_or_else(Vec::new, |r| {
                let (a, b) = (kind_times(w, &r), kind_times(w, &report));
                a.iter()
                    .map(|(k, &t)| KindDiff {
                        kind: k.to_string(),
                        roofline_ns: t,
                        cycle_ns: b.get(k).copied().unwrap_or(0.0),
                    })
                    .collect()
            });
            (report, cycle.programs_run(), models, both)
        }
    };
    let serving = serving_figures(&w.w, report.step_ns / f64::from(w.w.repeat.max(1)));
    Ok(WorkloadRun {
        serving,
        report,
        gemm_efficiency: eff,
        measured: efficiency.is_none(),
        chips,
        compute: opts.compute,
        programs,
        models,
        both,
        tokens_per_step: w.w.tokens_per_step,
        energy: None,
    })
}

/// Headline figures of a run (units in the names), as benchmark results carry them.
pub fn headline(r: &WorkloadRun) -> Vec<(String, f64)> {
    let b = &r.report.critical;
    // A zero is never signed (`-0.0` from a difference of equal times).
    let us = |ns: f64| ns / 1e3 + 0.0;
    let mut h = vec![
        ("step_us".to_string(), us(r.report.step_ns)),
        ("compute_us".into(), us(b.compute_ns)),
        ("memory_us".into(), us(b.memory_ns)),
        ("comm_us".into(), us(b.comm_ns)),
        ("exposed_comm_us".into(), us(b.exposed_comm_ns)),
        ("memory_bound_us".into(), us(b.memory_bound_ns)),
        ("idle_us".into(), us(b.idle_ns)),
        ("critical_rank".into(), f64::from(b.rank)),
    ];
    h.splice(1..1, r.serving.iter().cloned());
    h.push(match r.compute {
        Compute::Roofline => ("gemm_efficiency_pct".into(), 100.0 * r.gemm_efficiency),
        Compute::Cycle | Compute::Both => ("kernel_programs_simulated".into(), r.programs as f64),
    });
    for d in &r.both {
        h.push((format!("{}_roofline_us", d.kind), us(d.roofline_ns)));
        h.push((format!("{}_cycle_us", d.kind), us(d.cycle_ns)));
    }
    for c in &r.report.collectives {
        h.push((format!("{}_busbw_GBps", c.name), c.busbw_gbps));
    }
    if let Some(e) = &r.energy {
        h.extend(e.headline(r.tokens_per_step));
    }
    h
}

use trnsim_system::doc::suggest::clip;

/// The report as text: the breakdown of the critical rank and the collectives.
pub fn to_text(r: &WorkloadRun, system: &str) -> String {
    let rep = &r.report;
    let b = &rep.critical;
    let pct = |ns: f64| if rep.step_ns > 0.0 { 100.0 * ns / rep.step_ns } else { 0.0 };
    let gemms = match r.compute {
        Compute::Roofline => format!(
            "GEMMs at {:.1} % of peak ({})",
            100.0 * r.gemm_efficiency,
            if r.measured { "measured on the cycle-level chip" } else { "given by --gemm-efficiency" }
        ),
        Compute::Cycle | Compute::Both => {
            format!("compute as kernel programs on the cycle-level chip ({} distinct programs)", r.programs)
        }
    };
    let mut s = format!(
        "workload {} on {system}: {} ranks on {} chips; {gemms}\n",
        clip(&rep.workload),
        rep.ranks.len(),
        r.chips
    );
    let timed: Vec<String> = r.models.iter().map(|(k, m)| format!("{k} {m}")).collect();
    if !timed.is_empty() {
        s += &format!("  {:<28} {}\n", "timed by", timed.join(", "));
    }
    s += &format!("  {:<28} {:>12.3} us\n", "step time", rep.step_ns / 1e3);
    s += &format!("  {:<28} {:>12}\n", "critical rank", b.rank);
    for (k, v) in &r.serving {
        let (name, unit) = match k.as_str() {
            "ttft_ms" => ("time to first token", "ms"),
            "tpot_ms" => ("time per output token", "ms"),
            "tokens_per_s_per_chip" => ("tokens/s per chip", ""),
            "tokens_per_s_per_user" => ("tokens/s per user", ""),
            _ => ("KV cache per rank", "GiB"),
        };
        s += format!("  {name:<28} {v:>12.3} {unit}").trim_end();
        s.push('\n');
    }
    for (name, ns) in [
        ("compute busy", b.compute_ns),
        ("memory busy", b.memory_ns),
        ("communication", b.comm_ns),
        ("exposed communication", b.exposed_comm_ns),
        ("memory-bound", b.memory_bound_ns),
        ("idle", b.idle_ns),
    ] {
        let ns = ns.max(0.0) + 0.0;
        s += &format!("  {name:<28} {:>12.3} us  {:>5.1} %\n", ns / 1e3, pct(ns));
    }
    if !rep.collectives.is_empty() {
        s += &format!(
            "  {:<34} {:>14} {:>14} {:>6} {:>12} {:>12}\n",
            "collective", "op", "bytes", "ranks", "time(us)", "busbw(GB/s)"
        );
        for c in &rep.collectives {
            s += &format!(
                "  {:<34} {:>14} {:>14} {:>6} {:>12.2} {:>12.2}\n",
                c.name, c.op, c.bytes, c.group_size, c.time_us, c.busbw_gbps
            );
        }
    }
    if !r.both.is_empty() {
        s += &format!(
            "  {:<28} {:>14} {:>14} {:>16}\n",
            "node kind (critical rank)", "roofline(us)", "cycle(us)", "cycle/roofline"
        );
        for d in &r.both {
            let ratio = if d.roofline_ns > 0.0 { format!("{:.2}x", d.cycle_ns / d.roofline_ns) } else { "-".into() };
            s += &format!("  {:<28} {:>14.3} {:>14.3} {:>16}\n", d.kind, d.roofline_ns / 1e3, d.cycle_ns / 1e3, ratio);
        }
    }
    match &r.energy {
        Some(e) => s += &crate::energy_report::to_text(e, r.tokens_per_step),
        None => s += "  energy: not reported (the chip names no energy table)\n",
    }
    s
}

/// A stacked bar per run (label, report): the critical rank's step split into compute,
/// exposed communication, memory-bound time and idle time, as an SVG.
pub fn breakdown_svg(title: &str, runs: &[(String, &Report)]) -> String {
    let bars = runs
        .iter()
        .map(|(l, r)| {
            let b = &r.critical;
            (l.clone(), vec![b.compute_ns / 1e3, b.exposed_comm_ns / 1e3, b.memory_bound_ns / 1e3, b.idle_ns / 1e3])
        })
        .collect();
    let categories = ["compute", "exposed communication", "memory-bound", "idle"].map(String::from).to_vec();
    Bars { title: title.into(), y_label: "step time on the critical rank (us)".into(), categories, bars }.to_svg()
}

/// Flops of a compute operation (none for the others).
fn flops(op: &trnsim_workloads::format::Op) -> f64 {
    use trnsim_workloads::format::Op;
    match op {
        Op::Gemm { m, k, n, count, .. } => 2.0 * *m as f64 * *k as f64 * *n as f64 * f64::from(*count),
        Op::Attention { batch, heads, seq, kv_seq, head_dim, causal, .. } => {
            let kv = kv_seq.unwrap_or(*seq) as f64;
            let frac = if *causal { 0.5 } else { 1.0 };
            4.0 * *batch as f64 * *heads as f64 * *seq as f64 * kv * *head_dim as f64 * frac
        }
        Op::Kernel { flops, .. } => *flops as f64,
        _ => 0.0,
    }
}

/// The end of the longest run a trace holds, in ps: trace timestamps are u64 picoseconds
/// (2^64 ps, about 213 days of simulated time).
pub const TRACE_RANGE_PS: f64 = 18_446_744_073_709_551_616.0;

/// Whether `rep`'s schedule fits a trace's timestamps: an error naming the run's simulated
/// time and the range if not (past the range every slice would sit at the last timestamp
/// with no length). Checked before a traced run prints anything, and by [`trace`].
pub fn traceable(rep: &Report) -> Result<(), String> {
    let end_ps = rep.spans.iter().map(|s| s.end_ns).fold(rep.step_ns, f64::max) * 1e3;
    if end_ps.is_finite() && end_ps < TRACE_RANGE_PS {
        return Ok(());
    }
    Err(format!(
        "the run's simulated time ({:.4e} s) is beyond a trace's range (2^64 ps, about 213 days): trace a shorter run (a smaller repeat or smaller nodes)",
        end_ps * 1e-12
    ))
}

/// Writes the run's schedule to `sink`, grouped as a device profile is: a group per rank
/// (`rank 3 (chip 3)`), under it a slice track per queue ("NeuronCores", "DMA",
/// "collectives"; a slice per node instance) and a counter of the hardware FLOPs utilization
/// (% of the chip's peak `peak_tflops`, over each compute node), and with `energy` the rank's
/// power counters ([`crate::energy_report::power_tracks`]).
pub fn trace(
    w: &Checked,
    rep: &Report,
    peak_tflops: f64,
    energy: Option<&trnsim_workloads::energy::EnergyReport>,
    sink: &mut dyn TraceSink,
) -> Result<(), String> {
    traceable(rep)?;
    let err = |e: trnsim_kernel::TraceError| e.to_string();
    let ranks = rep.ranks.len();
    let mut next = 0u32;
    let track = |sink: &mut dyn TraceSink, next: &mut u32, parent: Option<TrackId>, name: String, kind: TrackKind| {
        let id = TrackId(*next);
        *next += 1;
        sink.declare(&TrackDecl { id, parent, name, kind }).map(|_| id)
    };
    let mut queues = Vec::with_capacity(ranks);
    let mut power = Vec::new();
    for r in 0..ranks {
        let g = track(sink, &mut next, None, format!("rank {r} (chip {r})"), TrackKind::Group).map_err(err)?;
        let mut q = Vec::new();
        for name in ["NeuronCores", "DMA", "collectives"] {
            q.push(track(sink, &mut next, Some(g), name.into(), TrackKind::Slice).map_err(err)?);
        }
        let hfu = TrackKind::Counter { unit: "%" };
        q.push(track(sink, &mut next, Some(g), "Hardware FLOPs Utilization".into(), hfu).map_err(err)?);
        queues.push(q);
        if let Some(e) = energy {
            power.extend(crate::energy_report::power_tracks(e, r as u32, g, &mut next, sink).map_err(err)?);
        }
    }
    // Slice names must live as long as the trace: one leaked copy per node name.
    let names: Vec<&'static str> = w
        .w
        .nodes
        .iter()
        .map(|n| &*Box::leak(if n.name.is_empty() { n.op.kind().to_string() } else { n.name.clone() }.into_boxed_str()))
        .collect();
    let ps = |ns: f64| Time::from_ps((ns * 1e3).round() as u64);
    // A compute span's hardware FLOPs utilization (% of peak), when it has one.
    let hfu = |s: &Span| -> Option<f64> {
        let f = flops(&w.w.nodes[s.node].op);
        (f > 0.0 && s.end_ns > s.start_ns && peak_tflops > 0.0)
            .then(|| 100.0 * f / (s.end_ns - s.start_ns) / (peak_tflops * 1e3))
    };
    // Each record as 16 bytes, sorted, then made one at a time: its time, then whether it is
    // a counter's rise (a drop to 0 at a node's end goes before the next node's rise), then
    // its place (3s: span s's slice, 3s + 1 and 3s + 2: its counter's rise and drop). The
    // places are distinct, so the order is exactly the stable sort of the records by (time,
    // rise); the records themselves (~100 bytes each) are never all held: 2^24 spans trace
    // in ~0.8 GB beside the schedule rather than ~6 GB.
    const RISE: u64 = 1 << 63;
    // The power counters (with `energy`) take the first places, so each goes before a span's
    // record of the same time and kind.
    let base = power.len() as u64;
    let mut due: Vec<(u64, u64)> = Vec::with_capacity(rep.spans.len().saturating_mul(3).saturating_add(power.len()));
    for (i, r) in power.iter().enumerate() {
        let rise = matches!(r.kind, trnsim_kernel::RecordKind::Counter { value } if value > 0.0);
        due.push((r.time.as_ps(), i as u64 | if rise { RISE } else { 0 }));
    }
    for (i, s) in rep.spans.iter().enumerate() {
        let place = base + i as u64 * 3;
        due.push((ps(s.end_ns).as_ps(), place));
        if let Some(pct) = hfu(s) {
            due.push((ps(s.start_ns).as_ps(), (place + 1) | if pct > 0.0 { RISE } else { 0 }));
            due.push((ps(s.end_ns).as_ps(), place + 2));
        }
    }
    due.sort_unstable();
    for &(time, key) in &due {
        let place = key & !RISE;
        if place < base {
            sink.record(&power[place as usize]).map_err(err)?;
            continue;
        }
        let place = place - base;
        let s = &rep.spans[(place / 3) as usize];
        let t = &queues[s.rank as usize];
        let kind = match place % 3 {
            0 => trnsim_kernel::RecordKind::Slice {
                name: names[s.node],
                start: ps(s.start_ns),
                end: ps(s.end_ns),
                flow: trnsim_kernel::Flow::None,
                arg: None,
            },
            1 => trnsim_kernel::RecordKind::Counter { value: hfu(s).unwrap_or(0.0) },
            _ => trnsim_kernel::RecordKind::Counter { value: 0.0 },
        };
        let track = match (place % 3, s.queue) {
            (0, Queue::Compute) => t[0],
            (0, Queue::Memory) => t[1],
            (0, Queue::Comm) => t[2],
            _ => t[3],
        };
        sink.record(&TraceRecord { time: Time::from_ps(time), track, kind }).map_err(err)?;
    }
    sink.finish(ps(rep.step_ns)).map_err(err)
}
