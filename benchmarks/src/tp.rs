//! `tp-matmul-{4,16,64}`: a tensor-parallel (row-parallel) matmul over N chips of the Trn3
//! Gen1 UltraServer preset (models/configs/system/trn3-gen1-ultraserver.ron: its chip
//! trn3-chip.ron and its fabric trn3-gen1-nl32x2.ron),
//! its all-reduce overlapped with the compute. Every chip is the whole chip model (8 NeuronCores,
//! 4 HBM3E stacks, 128 DMA engines); the fabric is the per-node packet model
//! (`trnsim_fabric::system`), its chip nodes being the chips' collective engines.
//!
//! ```text
//!   Y = X · W,  X [tokens x d_in] split by columns over N chips, W [d_in x d_out] by rows:
//!   chip c computes the partial sum Y_c = X_c · W_c (its 8 cores each own d_out / 8 columns,
//!   streamed as 128-column chunks: e2e-llm-layer's program with an identity activation),
//!   then Y = Σ_c Y_c by all-reduce, one all-reduce per phase of chunks:
//!
//!   core k:  matmul chunk 0 ─► store ─┐ matmul chunk 1 ─► store ─┐ ...       wait s5 >= phases
//!                      sem s4 (16 per chunk)                      │
//!   chip c's collective engine: doorbells from all 8 cores ─► all-reduce phase 0 ─► s5 += 1 ...
//!                               (NeuronLink packets through the switches, ~1.5 us per step)
//! ```
//!
//! A phase's all-reduce starts once every core of the chip has stored the phase's chunks (spec
//! §7: the compute engines trigger a collective with a write; here the stores' semaphore
//! increments are forwarded to the engine), so phase p's all-reduce runs while the cores
//! compute phase p + 1. The collective engine moves no HBM data itself: reading and writing
//! the buffers is folded into its per-step overhead (see docs/fabric.md), so it does not
//! contend with the matmuls' DMA traffic (listed in docs/system.md as left out).

use crate::cpu::Stopwatch;
use crate::e2e::{self, Shape, CC_DONE_SEM, DOORBELL_SEM};
use crate::neuroncore::assemble_text;
use crate::partitioned::System;
use crate::result::{BenchResult, Speed};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use trnsim_core::isa::{Engine, Sem};
use trnsim_fabric::collective::{Algo, Collective, Op, Params};
use trnsim_fabric::system::{self as fsys, ChipNode, Job};
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{Dur, SimBuilder, SimOptions, Simulation, TickOrder, TraceOptions, TraceSink};
use trnsim_system::chip::{self, Chip, ChipIds};

/// The layer's global shape (the benchmark splits it over N chips).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpShape {
    /// Tokens (the moving free size of every matmul, <= 512).
    pub tokens: u32,
    /// Contraction, split over the chips: d_in / N must be a multiple of 128.
    pub d_in: u32,
    /// Output width, split over each chip's cores: d_out / cores a multiple of 512.
    pub d_out: u32,
    /// All-reduces per run: each reduces d_out / phases columns of Y.
    pub phases: u32,
}

/// The benchmark's shape: 512 tokens, d_in 8192 (2048 per chip on 4 chips, 128 on 64), d_out
/// 4096: a 4 MiB BF16 partial sum per chip (512 x 4096 x 2 B), reduced in 4 all-reduces of
/// 1 MiB.
pub const SHAPE: TpShape = TpShape { tokens: 512, d_in: 8192, d_out: 4096, phases: 4 };

/// The chip count N of a benchmark named `tp-matmul-N`, checked against the `chips` of the
/// system it runs on (2..=chips; the shape may refuse more, see [`TpShape::chip_shape`]).
pub fn chips_of(name: &str, chips: usize) -> Result<u32, String> {
    let range = format!("{name}: expected tp-matmul-N with N a chip count (2..={chips})");
    let n: u32 = name.strip_prefix("tp-matmul-").and_then(|x| x.parse().ok()).ok_or_else(|| range.clone())?;
    if n < 2 || n as usize > chips {
        return Err(range);
    }
    Ok(n)
}

impl TpShape {
    /// The per-chip, per-core program shape over `n` chips of `cores` cores.
    pub fn chip_shape(&self, n: u32, cores: u32) -> Result<Shape, String> {
        let bad = |why: &str| {
            let TpShape { tokens, d_in, d_out, phases } = self;
            Err(format!(
                "tp shape (tokens {tokens}, d_in {d_in}, d_out {d_out}, phases {phases}) over {n} chips: {why}"
            ))
        };
        if n < 2 || !self.d_in.is_multiple_of(n) || !(self.d_in / n).is_multiple_of(128) {
            return bad("d_in / N must be a multiple of 128 (N >= 2)");
        }
        if !self.d_out.is_multiple_of(cores) {
            return bad("d_out must split evenly over the cores");
        }
        let s = Shape {
            tokens: self.tokens,
            d_model: self.d_in / n,
            d_ff_per_core: self.d_out / cores,
            chunks_per_slab: 2,
            chunks_per_group: 4,
            slab_buffers: 4,
        };
        s.check()?;
        if self.phases == 0 || !s.chunks().is_multiple_of(self.phases) {
            return bad("each core's chunks must split evenly over the phases");
        }
        Ok(s)
    }

    /// Bytes each chip contributes to one phase's all-reduce (BF16).
    pub fn phase_bytes(&self) -> u64 {
        u64::from(self.tokens) * u64::from(self.d_out) * 2 / u64::from(self.phases)
    }

    /// Matmul flops over all chips.
    pub fn flops(&self) -> f64 {
        2.0 * f64::from(self.tokens) * f64::from(self.d_in) * f64::from(self.d_out)
    }
}

/// The all-reduce jobs of a run over chips `members` of `topo`: phase p needs every core's
/// stores of the phase's chunks (16 semaphore increments per chunk per core) when `hooked`.
fn jobs(s: &TpShape, topo: &Topology, members: &[usize], chunks: u32, hooked: bool) -> Result<Vec<Job>, String> {
    let coll = Collective { op: Op::AllReduce, algo: Algo::Auto };
    let doorbells = if hooked { u64::from(16 * chunks / s.phases) } else { 0 };
    (0..s.phases)
        .map(|p| Job::among(&format!("all-reduce {p}"), coll, topo.chips, members, s.phase_bytes(), doorbells))
        .collect()
}

/// A built and finished run.
pub struct TpRun {
    /// The simulation after the run.
    pub sim: Simulation,
    /// Each member chip's component ids.
    pub chips: Vec<ChipIds>,
    /// Each member chip's collective-engine component.
    pub engines: Vec<trnsim_kernel::ComponentId>,
    /// The algorithm the all-reduces use (`auto` resolved).
    pub algo: Algo,
}

/// A declared run: the builder, each member chip's ids, their collective engines, the
/// all-reduce algorithm.
pub struct TpDecl {
    /// The system, declared (heavy components made at build, see `SimBuilder::install_with`).
    pub b: SimBuilder,
    /// Each member chip's component ids.
    pub chips: Vec<ChipIds>,
    /// Each member chip's collective-engine component.
    pub engines: Vec<trnsim_kernel::ComponentId>,
    /// The algorithm the all-reduces use (`auto` resolved).
    pub algo: Algo,
}

/// Builds and runs the TP matmul over the first `n` chips of `topo` (chips of one server
/// first), each a `chip`, keeping statistics only for the links `keep_links` accepts (by
/// name; `&|_| true` for every link's).
pub fn run(
    chip: &Chip,
    topo: &Topology,
    s: &TpShape,
    n: u32,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    keep_links: &dyn Fn(&str) -> bool,
) -> Result<TpRun, String> {
    let mut d = declare(chip, topo, s, n, order, trace.is_some())?;
    d.b.keep_link_stats_where(keep_links).map_err(|e| e.to_string())?;
    let sim = crate::progress::run_to_end_powered(d.b, &d.chips, trace, LIMIT, chip, Some(topo))?;
    Ok(TpRun { sim, chips: d.chips, engines: d.engines, algo: d.algo })
}

/// The algorithm the all-reduces of `s` over `n` chips use (`auto` resolved).
pub fn algo(s: &TpShape, n: u32) -> Algo {
    Collective { op: Op::AllReduce, algo: Algo::Auto }.resolve(n as usize, s.phase_bytes()).algo
}

/// The run's simulated-time limit.
pub const LIMIT: Dur = Dur::from_us(100_000);

/// Declares the TP matmul over the first `n` chips of `topo` into a fresh builder (`tracing`:
/// declare the trace tracks a traced run has).
pub fn declare(
    chip: &Chip,
    topo: &Topology,
    s: &TpShape,
    n: u32,
    order: TickOrder,
    tracing: bool,
) -> Result<TpDecl, String> {
    if n as usize > topo.chips {
        return Err(format!("tp over {n} chips: {} has {} chips", topo.name, topo.chips));
    }
    let cs = s.chip_shape(n, chip.spec.cores)?;
    let members: Vec<usize> = (0..n as usize).collect();
    let programs = (0..chip.spec.cores)
        .map(|i| {
            let v = e2e::Variant { act_fn: "identity", collectives: s.phases, ..e2e::Variant::default() };
            let src = e2e::program_with(&cs, i, &v);
            assemble_text(&format!("tp-matmul nc{i}.asm (generated)"), &src)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut b = SimBuilder::with_options(SimOptions { tick_order: order, ..SimOptions::default() });
    let nodes = fsys::reserve_nodes(&mut b, topo)?;
    let sems = (Sem(DOORBELL_SEM), Sem(CC_DONE_SEM));
    let (chips, hooks) = chip::build_on_fabric(&mut b, chip, &programs, topo, &nodes, &members, sems, tracing)?;
    let jobs = jobs(s, topo, &members, cs.chunks(), true)?;
    let algo = algo(s, n);
    fsys::build_jobs(&mut b, topo, &nodes, &jobs, &Params::default(), hooks, tracing)?;
    let engines = members.iter().map(|&c| nodes.ids[c]).collect();
    Ok(TpDecl { b, chips, engines, algo })
}

/// The same all-reduces alone on the fabric, back to back (no compute): each one's time in
/// ns, from the previous one's completion (the first from time 0) to its own, on the slowest
/// chip.
pub fn allreduce_alone_ns(topo: &Topology, s: &TpShape, n: u32, chunks: u32) -> Result<Vec<f64>, String> {
    let members: Vec<usize> = (0..n as usize).collect();
    let jobs = jobs(s, topo, &members, chunks, false)?;
    let mut b = SimBuilder::new();
    let nodes = fsys::reserve_nodes(&mut b, topo)?;
    fsys::build_jobs(&mut b, topo, &nodes, &jobs, &Params::default(), Vec::new(), false)?;
    let mut sim = b.build().map_err(|e| e.to_string())?;
    crate::progress::run_until_idle(&mut sim, LIMIT).map_err(|e| e.to_string())?;
    let mut done = vec![0u64; s.phases as usize];
    for &c in &members {
        let node = sim.component::<ChipNode>(nodes.ids[c]).ok_or("chip node")?;
        for (d, p) in done.iter_mut().zip(node.phase_done_ps()) {
            *d = (*d).max(p.ok_or("an all-reduce did not finish")?);
        }
    }
    Ok((0..done.len()).map(|p| (done[p] - if p == 0 { 0 } else { done[p - 1] }) as f64 / 1e3).collect())
}

/// The overlap model: all-reduce p starts when every chip has stored phase p's chunks
/// (`ready[p]`, from the run) and all-reduce p - 1 is complete, and then takes what it takes
/// alone (`alone[p]`): `D_p = max(ready_p, D_{p-1}) + alone_p`. Returns `D_last` in ns.
pub fn overlap_model_ns(ready: &[f64], alone: &[f64]) -> f64 {
    ready.iter().zip(alone).fold(0.0, |d, (&r, &a)| d.max(r) + a)
}

/// Compute-alone times measured in this process, by chip (its whole description, fidelity
/// included) and per-chip program shape. The one-chip run is deterministic and depends on
/// nothing else, so the points of a sweep that leaves both alone (a fabric parameter, a
/// collective algorithm, the topology) run it once; a caller that finds it running (another
/// point, or the run's own look-ahead: [`run_on`]) waits for it rather than running it again.
type AloneCell = Arc<OnceLock<Result<f64, String>>>;
static COMPUTE_ALONE: Mutex<Option<HashMap<String, AloneCell>>> = Mutex::new(None);

/// What a compute-alone run depends on: the whole chip and the per-chip shape.
fn compute_alone_key(chip: &Chip, cs: &Shape) -> String {
    format!("{chip:?} {cs:?}")
}

/// One chip's compute alone (no collective; every chip's is the same): its time in ns. Run
/// once per chip and per-chip shape in a process (see `COMPUTE_ALONE`).
pub fn compute_alone_ns(chip: &Chip, s: &TpShape, n: u32) -> Result<f64, String> {
    let cs = s.chip_shape(n, chip.spec.cores)?;
    let key = compute_alone_key(chip, &cs);
    let cell = {
        let mut m = COMPUTE_ALONE.lock().map_err(|_| "the compute-alone cache was poisoned by a panic")?;
        m.get_or_insert_with(HashMap::new).entry(key).or_default().clone()
    };
    cell.get_or_init(|| {
        let (sim, _) = e2e::run_program(chip, &cs, "identity", TickOrder::Structural, None)?;
        Ok(sim.now().as_ns_f64())
    })
    .clone()
}

/// Headline figures of a finished run beside the compute alone and the all-reduces alone.
pub fn headline(r: &TpRun, chip: &Chip, topo: &Topology, s: &TpShape, n: u32) -> Result<Vec<(String, f64)>, String> {
    // Only the owners `headline_of` reads are gathered (each chip's node, tensor engines and
    // HBM stacks), not every memory's and link's statistics of every chip.
    let mut read = std::collections::HashSet::new();
    for c in 0..n as usize {
        let node = fsys::node_name(topo, c);
        for i in 0..chip.spec.cores {
            read.insert(format!("{node}.nc{i}.{}", Engine::Tensor.name()));
        }
        for k in 0..chip.spec.hbm.stacks {
            read.insert(format!("{node}.hbm{k}"));
        }
        read.insert(node);
    }
    let (stats, _) = r.sim.report_where(&|owner| read.contains(owner));
    headline_of(&stats, r.sim.now().as_ns_f64(), r.algo, chip, topo, s, n)
}

/// [`headline`] from a run's statistics (a serial run's or a partitioned run's merged report)
/// and its end time: every figure is read from the chips' statistics.
pub fn headline_of(
    stats: &trnsim_kernel::StatsReport,
    end_ns: f64,
    algo: Algo,
    chip: &Chip,
    topo: &Topology,
    s: &TpShape,
    n: u32,
) -> Result<Vec<(String, f64)>, String> {
    let te_hz = chip.core.clock(Engine::Tensor).as_hz() as f64;
    let mut busy = 0.0f64;
    let mut cores = 0.0;
    for c in 0..n as usize {
        let node = fsys::node_name(topo, c);
        for i in 0..chip.spec.cores {
            let owner = format!("{node}.nc{i}.{}", Engine::Tensor.name());
            if let Some(cycles) = stats.int(&owner, "busy_cycles") {
                busy += cycles as f64 / te_hz * 1e9;
                cores += 1.0;
            }
        }
    }
    let mut compute_end = 0u64;
    let mut done = 0u64;
    let mut ready = vec![0u64; s.phases as usize];
    let mut phase_done = vec![0u64; s.phases as usize];
    for c in 0..n as usize {
        let node = fsys::node_name(topo, c);
        let get = |k: &str| stats.int(&node, k);
        compute_end = compute_end.max(get("last_doorbell_ps").unwrap_or(0));
        for p in 0..s.phases as usize {
            ready[p] = ready[p].max(get(&format!("phase{p}_ready_ps")).ok_or("a phase never had its doorbells")?);
            phase_done[p] = phase_done[p].max(get(&format!("phase{p}_done_ps")).ok_or("an all-reduce did not finish")?);
        }
        done = done.max(get("finish_ps").ok_or("a chip's all-reduces did not finish")?);
    }
    let cs = s.chip_shape(n, chip.spec.cores)?;
    let mut hbm_bytes = 0u64;
    for c in 0..n as usize {
        for k in 0..chip.spec.hbm.stacks {
            hbm_bytes += stats.int(&format!("{}.hbm{k}", fsys::node_name(topo, c)), "bytes").unwrap_or(0);
        }
    }
    let compute_ns = compute_alone_ns(chip, s, n)?;
    let alone = allreduce_alone_ns(topo, s, n, cs.chunks())?;
    let comm_ns: f64 = alone.iter().sum();
    let ready_ns: Vec<f64> = ready.iter().map(|&p| p as f64 / 1e3).collect();
    let model_ns = overlap_model_ns(&ready_ns, &alone);
    let serial_ns = compute_ns + comm_ns;
    let per_phase = (0..s.phases as usize).flat_map(|p| {
        [
            (format!("allreduce{p}_ready_ns"), ready_ns[p]),
            (format!("allreduce{p}_done_ns"), phase_done[p] as f64 / 1e3),
            (format!("allreduce{p}_alone_ns"), alone[p]),
        ]
    });
    let hidden = (serial_ns - end_ns).max(0.0);
    let mut h: Vec<(String, f64)> = vec![
        ("chips".into(), f64::from(n)),
        ("sim_time_ns".into(), end_ns),
        ("tflops".into(), s.flops() / end_ns / 1e3),
        ("tflops_per_chip".into(), s.flops() / end_ns / 1e3 / f64::from(n)),
        ("tensor_utilization_pct".into(), 100.0 * busy / cores / end_ns),
        ("compute_end_ns".into(), compute_end as f64 / 1e3),
        ("hbm_GBps_per_chip".into(), hbm_bytes as f64 / f64::from(n) / (compute_end as f64 / 1e3)),
        ("allreduce_end_ns".into(), done as f64 / 1e3),
        ("allreduce_bytes_per_chip".into(), (s.phase_bytes() * u64::from(s.phases)) as f64),
        ("allreduce_algo_halving_doubling".into(), f64::from(u8::from(algo == Algo::HalvingDoubling))),
        ("compute_alone_ns".into(), compute_ns),
        ("compute_analytic_ns".into(), e2e::estimate(&cs, chip).total_ns()),
        ("first_phase_ready_ns".into(), ready_ns[0]),
        ("last_phase_ready_ns".into(), ready_ns[ready_ns.len() - 1]),
        ("overlap_model_ns".into(), model_ns),
        ("allreduce_alone_ns".into(), comm_ns),
        ("serial_sum_ns".into(), serial_ns),
        ("exposed_comm_ns".into(), end_ns - compute_ns),
        ("overlap_pct".into(), 100.0 * hidden / compute_ns.min(comm_ns).max(1e-9)),
    ];
    h.extend(per_phase);
    Ok(h)
}

/// Writes the run's [`plot`] (`headline` of a run of [`SHAPE`]) as `DIR/NAME.svg`.
pub fn write_plot(dir: &std::path::Path, name: &str, headline: &[(String, f64)]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.svg"));
    crate::outputs::write_plot(&path, plot(name, headline, SHAPE.phases).to_svg().as_bytes())
        .map_err(|e| format!("--plots {}: {e}", path.display()))
}

/// The pipeline of a run as an SVG plot: per all-reduce, when its chunks were stored on every
/// chip, when it completed, and when it would complete back to back on an idle fabric.
pub fn plot(name: &str, headline: &[(String, f64)], phases: u32) -> crate::plot::Plot {
    use crate::plot::{Plot, Series};
    let get = |k: String| headline.iter().find(|x| x.0 == k).map_or(0.0, |x| x.1 / 1e3);
    let series = |label: &str, key: &str| Series {
        name: label.into(),
        points: (0..phases).map(|p| (f64::from(p), get(format!("allreduce{p}_{key}_ns")))).collect(),
    };
    let mut alone = series("alone, back to back", "alone");
    let mut t = 0.0;
    for pt in &mut alone.points {
        t += pt.1;
        pt.1 = t;
    }
    Plot {
        title: format!("{name}: when each all-reduce's chunks are stored (all chips) and it is done"),
        x_label: "all-reduce (chunk index)".into(),
        y_label: "simulated time (us)".into(),
        series: vec![series("chunks stored", "ready"), series("all-reduce done", "done"), alone],
        log_y: false,
    }
}

/// Checks `tp-matmul-N` as [`run_named`] would run it, before anything runs: N a chip count
/// of the Trn3 Gen1 UltraServer and a split of the shape over N chips.
pub fn check_named(name: &str) -> Result<(), String> {
    let us = chip::trn3_gen1()?;
    let n = chips_of(name, us.topology.chips)?;
    SHAPE.chip_shape(n, us.chip.spec.cores).map(|_| ()).map_err(|e| format!("{name}: {e}"))
}

/// Runs `tp-matmul-N` on the Trn3 Gen1 UltraServer: N = 4, 16, 64 in the suite, any N that
/// splits the shape (`d_in / N` a multiple of 128, N <= 64) by name.
pub fn run_named(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    plots: Option<&std::path::Path>,
) -> Result<BenchResult, String> {
    let us = chip::trn3_gen1()?;
    run_on(name, &chip::with_energy(us.chip, "trn3-gen1-ultraserver")?, &us.topology, order, trace, plots)
}

/// Runs `tp-matmul-N` over the first N chips of `topo`, each a `chip`: in windows on this
/// thread ([`crate::partitioned::run_in_windows`]), or serially when traced or when
/// [`crate::partitioned::System::window_parts`] gives no partitions (RTL blocks swapped in,
/// four fast chips or fewer, a system that cannot be split).
pub fn run_on(
    name: &str,
    chip: &Chip,
    topo: &Topology,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    plots: Option<&std::path::Path>,
) -> Result<BenchResult, String> {
    let n = chips_of(name, topo.chips)?;
    std::thread::scope(|s| {
        // The headline's compute-alone reference (one chip alone) runs on a spare core, if the
        // host has one, while the system runs: the headline then finds it done or waits for it
        // (`compute_alone_ns`); its result does not depend on where it ran. A chip with RTL
        // blocks swapped in runs it after the system, so that the blocks' reports print in
        // one order (the system's chips, then the reference's) on every host.
        if trnsim_kernel::host::cores() > 1 && chip.spec.rtl.is_empty() {
            s.spawn(|| compute_alone_ns(chip, &SHAPE, n).map(|_| ()));
        }
        if trace.is_none() {
            // In windows on this thread: faster, the same results (see `run_in_windows`).
            let sys = tp_system(chip.clone(), topo.clone(), SHAPE, n, order)?;
            if let Some(r) = crate::partitioned::run_in_windows(name, &sys)? {
                if let Some(dir) = plots {
                    write_plot(dir, name, &r.headline)?;
                }
                return Ok(r);
            }
        }
        let sw = Stopwatch::start();
        let keep = crate::result::first_chip_keeps_link;
        let r = run(chip, topo, &SHAPE, n, order, chip::whole_chip_trace(trace), &keep)?;
        let (wall_s, cpu_s) = sw.elapsed();
        let headline = headline(&r, chip, topo, &SHAPE, n)?;
        if let Some(dir) = plots {
            write_plot(dir, name, &headline)?;
        }
        let speed = Speed::of(&r.sim, wall_s, cpu_s);
        Ok(BenchResult { name: name.into(), headline, stats: crate::result::first_chip_report(&r.sim), speed })
    })
}

/// The TP matmul of `shape` over `n` whole chips of `topo` as a partitionable system (by chip by
/// default; see [`System::check_rule`]).
pub fn tp_system(chip: Chip, topo: Topology, shape: TpShape, n: u32, order: TickOrder) -> Result<System, String> {
    // What the declaration checks first, checked here so a bad N is refused before any run.
    if n as usize > topo.chips {
        return Err(format!("tp over {n} chips: {} has {} chips", topo.name, topo.chips));
    }
    shape.chip_shape(n, chip.spec.cores)?;
    let algo = algo(&shape, n);
    let (c2, t2) = (chip.clone(), topo.clone());
    // Statistics kept as the serial benchmark keeps them: the other chips' internal links
    // keep none (the result leaves them out anyway).
    let build = move || {
        let mut d = declare(&c2, &t2, &shape, n, order, false)?;
        d.b.keep_link_stats_where(&crate::result::first_chip_keeps_link).map_err(|e| e.to_string())?;
        Ok(d.b)
    };
    let c3 = chip.clone();
    let headline = move |stats: &trnsim_kernel::StatsReport, end_ps: u64| {
        headline_of(stats, end_ps as f64 / 1e3, algo, &c3, &topo, &shape, n)
    };
    // One chip a partition in a run in windows.
    Ok(System::of_chips(build, LIMIT, chip, n, 1, Box::new(headline)))
}

#[cfg(test)]
mod tests {
    use super::{overlap_model_ns, TpShape, SHAPE};

    #[test]
    fn a_tp_benchmark_name_gives_a_chip_count_of_its_system() {
        assert_eq!(super::chips_of("tp-matmul-4", 64), Ok(4));
        assert_eq!(super::chips_of("tp-matmul-64", 64), Ok(64));
        for bad in ["tp-matmul-0", "tp-matmul-1", "tp-matmul-65", "tp-matmul-", "tp-matmul-x", "tp-matmul-99999999999"]
        {
            let e = super::chips_of(bad, 64).unwrap_err();
            assert_eq!(e, format!("{bad}: expected tp-matmul-N with N a chip count (2..=64)"));
        }
    }

    #[test]
    fn shapes_that_do_not_split_are_errors_naming_the_rule() {
        for n in [4, 8, 16, 32, 64] {
            let s = SHAPE.chip_shape(n, 8).unwrap();
            assert_eq!(s.d_model, 8192 / n);
            assert_eq!(s.chunks() % SHAPE.phases, 0);
        }
        let e = SHAPE.chip_shape(3, 8).unwrap_err();
        assert!(e.contains("multiple of 128"), "{e}");
        let e = SHAPE.chip_shape(128, 8).unwrap_err();
        assert!(e.contains("multiple of 128"), "d_in / 128 = 64 is not a multiple of 128: {e}");
        let odd = TpShape { phases: 3, ..SHAPE };
        assert!(odd.chip_shape(4, 8).unwrap_err().contains("phases"));
    }

    #[test]
    fn a_compute_alone_run_is_kept_for_the_same_chip_and_shape_only() {
        use super::compute_alone_key;
        let chip = trnsim_system::chip::trn3().unwrap();
        let cs = SHAPE.chip_shape(4, chip.spec.cores).unwrap();
        assert_eq!(compute_alone_key(&chip, &cs), compute_alone_key(&chip.clone(), &cs));
        let mut fast = chip.clone();
        fast.spec.hbm.fidelity = trnsim_mem::hbm::Fidelity::Fast;
        let mut stacks = chip.clone();
        stacks.spec.hbm.stacks += 1;
        let mut dma = chip.clone();
        dma.dma.outstanding += 1;
        for other in [&fast, &stacks, &dma] {
            assert_ne!(compute_alone_key(&chip, &cs), compute_alone_key(other, &cs));
        }
        let other_shape = SHAPE.chip_shape(8, chip.spec.cores).unwrap();
        assert_ne!(compute_alone_key(&chip, &cs), compute_alone_key(&chip, &other_shape));
    }

    #[test]
    fn the_overlap_model_waits_for_the_later_of_ready_and_the_previous_all_reduce() {
        // Compute-bound: each all-reduce starts when ready; comm-bound: back to back.
        assert_eq!(overlap_model_ns(&[10.0, 20.0, 30.0], &[2.0, 2.0, 2.0]), 32.0);
        assert_eq!(overlap_model_ns(&[1.0, 2.0, 3.0], &[10.0, 10.0, 10.0]), 31.0);
        assert_eq!(overlap_model_ns(&[5.0, 6.0], &[3.0, 1.0]), 9.0);
    }
}
