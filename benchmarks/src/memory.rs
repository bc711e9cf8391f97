//! HBM microbenchmarks and trace-driven runs: a stack (or several) driven by traffic
//! generators, with headline figures (GB/s, latency in ns, row-buffer outcomes) and speed.

use crate::cpu::Stopwatch;
use crate::plot::{Plot, Series};
use crate::result::{BenchResult, Speed};
use trnsim_kernel::{ComponentId, Dur, SimBuilder, SimOptions, Simulation, TickOrder, TraceOptions, TraceSink};
use trnsim_mem::hbm::checker::Checker;
use trnsim_mem::hbm::presets::{self, Preset};
use trnsim_mem::hbm::traffic::{attach, GenParams, Pattern, RequestSource, Synthetic, TrafficGen};
use trnsim_mem::hbm::{CommandSink, HbmStack, StackConfig};

/// One HBM run: what drives the stacks and how.
#[derive(Clone, Debug)]
pub struct HbmSpec {
    /// Benchmark name.
    pub name: String,
    /// Stack configuration (preset plus controller parameters).
    pub cfg: StackConfig,
    /// Independent stacks, each with its own generator (a Trn3 chip has 4).
    pub stacks: u32,
    /// Generator parameters.
    pub gen: GenParams,
    /// Tick order (for determinism checks).
    pub order: TickOrder,
    /// Sim-time limit.
    pub limit: Dur,
}

/// Per-stack command sinks to attach (e.g. a checker or a command-trace writer).
pub type SinkFactory<'a> = &'a mut dyn FnMut(u32) -> Option<Box<dyn CommandSink>>;

/// The result of an HBM run, plus the simulation for inspection.
pub struct HbmOutcome {
    /// Headline figures and all statistics.
    pub result: BenchResult,
    /// The finished simulation.
    pub sim: Simulation,
    /// Stack component ids.
    pub stacks: Vec<ComponentId>,
    /// Generator component ids.
    pub gens: Vec<ComponentId>,
}

/// The stack configuration of a preset with the default controller.
pub fn preset_cfg(p: &Preset) -> StackConfig {
    StackConfig::from_preset(p)
}

/// A synthetic source for stack `k` of `spec`.
pub fn synthetic(spec: &HbmSpec, pattern: Pattern, n: u64, seed: u64) -> Result<Box<dyn RequestSource>, String> {
    let stack = HbmStack::new(&spec.cfg)?;
    let map = stack.address_map();
    let org = &spec.cfg.org;
    Ok(Box::new(Synthetic::new(pattern, n, seed, map.capacity(), org.access_bytes() as u64, map, org.rows)))
}

/// Builds and runs `spec` with one source per stack, until every request is answered.
pub fn run(
    spec: &HbmSpec,
    mut sources: Vec<Box<dyn RequestSource>>,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    sinks: SinkFactory<'_>,
) -> Result<HbmOutcome, String> {
    let mut b = SimBuilder::with_options(SimOptions { tick_order: spec.order, ..SimOptions::default() });
    let clk = b.clock("hbm", spec.cfg.timing.frequency()).map_err(|e| e.to_string())?;
    let (mut stacks, mut gens) = (Vec::new(), Vec::new());
    let many = spec.stacks > 1;
    for k in 0..spec.stacks {
        let mut cfg = spec.cfg.clone();
        cfg.index = k;
        let name = if many { format!("hbm{k}") } else { "hbm".to_string() };
        let src = sources.remove(0);
        let (s, g) = attach(&mut b, &name, clk, &cfg, src, spec.gen, trace.is_some())?;
        stacks.push(s);
        gens.push(g);
    }
    let mut sim = b.build().map_err(|e| e.to_string())?;
    for (k, &s) in stacks.iter().enumerate() {
        if let Some(sink) = sinks(k as u32) {
            sim.component_mut::<HbmStack>(s).ok_or("stack component")?.set_command_sink(sink);
        }
    }
    if let Some((sink, opts)) = trace {
        sim.attach_trace(sink, &opts);
    }
    let sw = Stopwatch::start();
    crate::progress::run_until_idle(&mut sim, spec.limit).map_err(|e| format!("{}: {e}", spec.name))?;
    let (wall_s, cpu_s) = sw.elapsed();
    sim.finish_trace().map_err(|e| e.to_string())?;
    let end = sim.now();
    let last = sim.clock(clk).edge_index_at_or_after(end);
    for &s in &stacks {
        sim.component_mut::<HbmStack>(s).ok_or("stack component")?.catch_up_to(last);
    }
    let mut unfinished = 0;
    for &g in &gens {
        if !sim.component::<TrafficGen>(g).ok_or("generator component")?.finished() {
            unfinished += 1;
        }
    }
    if unfinished > 0 {
        return Err(format!("{}: {unfinished} generator(s) not finished within {}", spec.name, spec.limit));
    }
    let stats = sim.report();
    let headline = headline(&sim, &stacks, &gens, spec);
    let sim_s = end.as_ps() as f64 * 1e-12;
    let speed = Speed {
        wall_s,
        cpu_s,
        slowdown: if sim_s > 0.0 { wall_s / sim_s } else { 0.0 },
        ticks_per_s: sim.counters().ticks as f64 / wall_s.max(1e-9),
    };
    let result = BenchResult { name: spec.name.clone(), headline, stats, speed };
    Ok(HbmOutcome { result, sim, stacks, gens })
}

fn headline(sim: &Simulation, stacks: &[ComponentId], gens: &[ComponentId], spec: &HbmSpec) -> Vec<(String, f64)> {
    let ns_per = 1000.0 / spec.cfg.timing.ck_mhz as f64;
    let bytes = spec.cfg.org.access_bytes() as f64;
    let mut reqs = 0u64;
    let (mut hits, mut misses, mut conflicts) = (0u64, 0u64, 0u64);
    let mut lat = trnsim_kernel::Histogram::new();
    let mut end_cycles = 0u64;
    for (&s, &g) in stacks.iter().zip(gens) {
        let st = sim.component::<HbmStack>(s).expect("stack").totals();
        reqs += st.reads + st.writes;
        hits += st.row_hits;
        misses += st.row_misses;
        conflicts += st.row_conflicts;
        lat.merge(&st.read_latency);
        let gen = sim.component::<TrafficGen>(g).expect("generator");
        end_cycles = end_cycles.max(gen.active_cycles());
    }
    let secs = end_cycles as f64 * ns_per * 1e-9;
    let gbps = if secs > 0.0 { reqs as f64 * bytes / secs / 1e9 } else { 0.0 };
    let peak = spec.cfg.org.access_bytes() as f64 / spec.cfg.timing.bl as f64
        * spec.cfg.timing.ck_mhz as f64
        * 1e6
        * spec.cfg.org.pcs() as f64
        * stacks.len() as f64
        / 1e9;
    let col = (hits + misses + conflicts).max(1) as f64;
    let mut h: Vec<(String, f64)> = vec![
        ("requests".into(), reqs as f64),
        ("bandwidth_GBps".into(), gbps),
        ("peak_GBps".into(), peak),
        ("efficiency_pct".into(), 100.0 * gbps / peak),
    ];
    // Read latency only when there were reads (a write stream has none to report).
    if lat.count() > 0 {
        h.push(("read_latency_ns_mean".into(), lat.mean() * ns_per));
        h.push(("read_latency_ns_p50".into(), lat.quantile(0.5) * ns_per));
        h.push(("read_latency_ns_p99".into(), lat.quantile(0.99) * ns_per));
    }
    h.push(("row_hit_pct".into(), 100.0 * hits as f64 / col));
    h.push(("row_conflict_pct".into(), 100.0 * conflicts as f64 / col));
    h
}

/// Requests per stack in the suite's HBM benchmarks.
pub const SUITE_REQUESTS: u64 = 400_000;

/// Runs one named HBM benchmark.
pub fn run_named(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    plot_dir: Option<&std::path::Path>,
) -> Result<BenchResult, String> {
    run_named_at(name, order, trace, plot_dir, trnsim_mem::hbm::Fidelity::Cycle)
}

/// [`run_named`] with the stacks at `fidelity`.
pub fn run_named_at(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    plot_dir: Option<&std::path::Path>,
    fidelity: trnsim_mem::hbm::Fidelity,
) -> Result<BenchResult, String> {
    let p = &presets::HBM3E_9600;
    let gen = GenParams { width: 64, in_flight: 4096, rate: f64::INFINITY, bytes: p_access(p) };
    let mut cfg = preset_cfg(p);
    cfg.fidelity = fidelity;
    let mut spec = HbmSpec { name: name.into(), cfg, stacks: 1, gen, order, limit: Dur::from_us(1_000_000) };
    let pattern = match name {
        "hbm-stream-read" | "hbm-trn3" => Pattern::StreamRead,
        "hbm-stream-write" => Pattern::StreamWrite,
        "hbm-random" => Pattern::RandomRead,
        "hbm-mix" => Pattern::Mix,
        "hbm-same-bank" => Pattern::SameBank,
        "hbm-latency-sweep" => return latency_sweep(&spec, order, plot_dir),
        _ => return Err(format!("unknown HBM benchmark `{name}`")),
    };
    let n = if pattern == Pattern::SameBank { 2_000 } else { SUITE_REQUESTS };
    if name == "hbm-trn3" {
        spec.stacks = 4;
    }
    let sources = (0..spec.stacks).map(|k| synthetic(&spec, pattern, n, 1 + k as u64)).collect::<Result<_, _>>()?;
    Ok(run(&spec, sources, trace, &mut |_| None)?.result)
}

fn p_access(p: &Preset) -> u32 {
    p.org.access_bytes()
}

/// Random reads at rising injection rates: (achieved GB/s, mean latency ns) per point, with
/// the SVG written to `plot_dir/hbm-latency-sweep.svg` when given.
fn latency_sweep(base: &HbmSpec, order: TickOrder, plot_dir: Option<&std::path::Path>) -> Result<BenchResult, String> {
    let peak_per_cycle = base.cfg.org.pcs() as f64 / base.cfg.timing.bl as f64;
    let mut points = Vec::new();
    let mut p99 = Vec::new();
    let mut headline = Vec::new();
    let sw = Stopwatch::start();
    let mut stats = None;
    for pct in [2u32, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 25, 30] {
        let mut spec = base.clone();
        spec.name = format!("hbm-latency-sweep@{pct}%");
        spec.order = order;
        spec.gen.rate = peak_per_cycle * pct as f64 / 100.0;
        spec.gen.in_flight = 4096;
        let n = 60_000;
        let src = synthetic(&spec, Pattern::RandomRead, n, 11)?;
        let out = run(&spec, vec![src], None, &mut |_| None)?;
        let gen = out.sim.component::<TrafficGen>(out.gens[0]).ok_or("generator")?;
        let ns = 1000.0 / spec.cfg.timing.ck_mhz as f64;
        let bw = out.result.headline.iter().find(|h| h.0 == "bandwidth_GBps").map_or(0.0, |h| h.1);
        let mean = gen.latency.mean() * ns;
        points.push((bw, mean));
        p99.push((bw, gen.latency.quantile(0.99) * ns));
        headline.push((format!("offered_{pct}pct_GBps"), bw));
        headline.push((format!("offered_{pct}pct_latency_ns_mean"), mean));
        stats = Some(out.result.stats);
    }
    if let Some(dir) = plot_dir {
        let plot = Plot {
            title: format!("{} random reads: loaded latency", base.cfg.preset),
            x_label: "achieved bandwidth (GB/s)".into(),
            y_label: "read latency, offer to data (ns)".into(),
            series: vec![Series { name: "mean".into(), points }, Series { name: "p99".into(), points: p99 }],
            log_y: false,
        };
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join("hbm-latency-sweep.svg");
        crate::outputs::write_plot(&path, plot.to_svg().as_bytes())
            .map_err(|e| format!("--plots {}: {e}", path.display()))?;
    }
    let (wall_s, cpu_s) = sw.elapsed();
    Ok(BenchResult {
        name: "hbm-latency-sweep".into(),
        headline,
        stats: stats.unwrap_or_default(),
        speed: Speed { wall_s, cpu_s, ..Speed::default() },
    })
}

/// Replays `n` random requests per preset through the independent checker; returns
/// (commands checked, violations, first violation text).
pub fn check_random(p: &Preset, n: u64, seed: u64) -> Result<(u64, u64, Option<String>), String> {
    let cfg = preset_cfg(p);
    let gen = GenParams { width: 16, in_flight: 1024, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    let spec = HbmSpec {
        name: format!("check-{}", p.name),
        cfg,
        stacks: 1,
        gen,
        order: TickOrder::Structural,
        limit: Dur::from_us(10_000_000),
    };
    let src = synthetic(&spec, Pattern::Mix, n, seed)?;
    let (org, timing) = (spec.cfg.org.clone(), spec.cfg.timing.clone());
    let mut out = run(&spec, vec![src], None, &mut |_| Some(Box::new(Checker::new(&org, &timing))))?;
    let s = out.stacks[0];
    let sink = out.sim.component_mut::<HbmStack>(s).and_then(|st| st.take_command_sink()).ok_or("checker")?;
    let any: Box<dyn std::any::Any> = sink;
    let mut checker = any.downcast::<Checker>().map_err(|_| "checker type")?;
    let end = out.sim.clock(trnsim_kernel::ClockId::first()).edge_index_at_or_after(out.sim.now());
    checker.finish(end);
    Ok((checker.commands_checked(), checker.violation_count(), checker.violations().first().map(|v| v.to_string())))
}

/// SBUF bandwidth per engine interface on NC-v4 (FP32 elements): the four standard scenarios of
/// [`trnsim_mem::sram::bench::scenarios`], reported as elements per cycle and GB/s at the vector and
/// scalar engines' 1.2 GHz (spec §2). Fails if a scenario misses its expected rate.
pub fn sbuf_bandwidth() -> Result<BenchResult, String> {
    use trnsim_mem::sram::bench::{bandwidth_bench, scenarios};
    use trnsim_mem::sram::geometry::SBUF_NC_V4;
    let sw = Stopwatch::start();
    let clock = trnsim_kernel::Frequency::from_mhz(1200);
    let geom = &SBUF_NC_V4.geometry;
    let mut headline = Vec::new();
    for sc in scenarios(geom, 4) {
        let r = bandwidth_bench(geom, &sc.clients, sc.elements_per_partition).map_err(|e| e.to_string())?;
        let first = r.clients.first().ok_or("no interface")?;
        let epc = first.elements as f64 / r.window_cycles.max(1) as f64;
        if (epc - sc.expected_elements_per_cycle).abs() > 1e-6 * sc.expected_elements_per_cycle {
            return Err(format!(
                "sbuf-bandwidth {}: {epc} elements/cycle, expected {}",
                sc.name, sc.expected_elements_per_cycle
            ));
        }
        headline.push((format!("{}_elem_per_cycle_per_if", sc.name), epc));
        headline.push((format!("{}_GBps_per_if", sc.name), first.gbytes_per_s(clock)));
        headline.push((format!("{}_GBps_total", sc.name), r.gbytes_per_s(clock)));
    }
    let (wall_s, cpu_s) = sw.elapsed();
    Ok(BenchResult {
        name: "sbuf-bandwidth".into(),
        headline,
        stats: trnsim_kernel::StatsReport::default(),
        speed: Speed { wall_s, cpu_s, ..Speed::default() },
    })
}

/// The energy spec of preset `preset`: from the table in `path` (RON, the shape of
/// `models/configs/mem/hbm-energy.ron`), or the built-in table without one. A preset the
/// table lacks has none. Errors are located: `file:line:col: field: message`.
pub fn energy_spec(
    path: Option<&std::path::Path>,
    preset: &str,
) -> Result<Option<trnsim_mem::hbm::energy::EnergySpec>, String> {
    use trnsim_mem::hbm::energy::{EnergyTable, DEFAULT_TABLE};
    use trnsim_system::located::{from_ron, line_col, read_ron_file, ConfigError};
    let (file, text) = match path {
        Some(p) => read_ron_file(p).map_err(|e| e.to_string())?,
        None => ("models/configs/mem/hbm-energy.ron".to_string(), DEFAULT_TABLE.to_string()),
    };
    let table: EnergyTable = from_ron(&file, &text).map_err(|e| e.to_string())?;
    // Every preset's figures are checked, not only the one run, so a table is good or bad
    // as a whole.
    for (name, spec) in &table.stacks {
        if let Err((field, message)) = spec.validate() {
            // The figure's `field:` after the preset's name (the name's own position when
            // the field is not written there).
            let at = text.find(&format!("\"{name}\"")).unwrap_or(0);
            let pos = text[at..].find(&format!("{field}:")).map_or(at, |p| at + p);
            let (line, col) = line_col(&text, pos);
            let field = format!("stacks.{name}.{field}");
            return Err(ConfigError { file, line, col, field, message }.to_string());
        }
    }
    Ok(table.stacks.get(preset).cloned())
}
