//! `moe-alltoall-144`: one mixture-of-experts step on the 144 chips of the Trn3 Gen2
//! UltraServer preset (models/configs/system/trn3-gen2-ultraserver.ron: trn3-chip.ron and the
//! fabric trn3-gen2-nl72x2.ron):
//! route, dispatch the tokens to their experts by all-to-all, run the experts on the chips'
//! NeuronCores, combine the results back by all-to-all. Every chip is the whole chip model;
//! the fabric is the per-node packet model, its chip nodes being the collective engines.
//!
//! ```text
//!   chip c: `tokens` tokens, each routed (seeded, skewed popularity) to `top_k` of the
//!           2 x 144 experts; an expert takes at most `capacity` tokens, later ones are dropped
//!   dispatch  all-to-allv: chip c -> chip d: tokens for d's experts x d_model x 2 B
//!   experts   chip d, 2 experts, each on 4 cores (column-parallel, d_model / 4 columns a core):
//!             weights prefetched from HBM; X (its `capacity` token slots) loaded after the
//!             dispatch completes; matmul + GELU; Y stored (16 doorbells per chunk per core)
//!   combine   all-to-allv back, the reverse sizes, once every core has stored Y
//! ```
//!
//! Leaves out: the router's own compute (the gate is a [d_model x experts] matmul, tiny next
//! to the experts) and the expert's second matmul (one up-projection + GELU with d_ff =
//! d_model stands in for the FFN, so combine returns d_model per token); each expert computes
//! all `capacity` slots (padding, as GShard-style capacity-based dispatch does); the collective
//! engine's HBM reads and writes are folded into its per-step overhead, as in `tp-matmul-*`.

use crate::cpu::Stopwatch;
use crate::e2e::{self, Shape, Variant, CC_DONE_SEM, DOORBELL_SEM};
use crate::neuroncore::assemble_text;
use crate::partitioned::System;
use crate::result::{BenchResult, Speed};
use trnsim_core::isa::Sem;
use trnsim_fabric::collective::schedule::Step;
use trnsim_fabric::collective::Params;
use trnsim_fabric::system::{self as fsys, ChipNode, Job};
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{Dur, SimBuilder, SimOptions, SimRng, Simulation, TickOrder, TraceOptions, TraceSink};
use trnsim_system::chip::{self, Chip, ChipIds};

/// The step's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoeShape {
    /// Tokens per chip.
    pub tokens: u32,
    /// Model width (a multiple of 512: 4 cores x 128 columns).
    pub d_model: u32,
    /// Experts per token.
    pub top_k: u32,
    /// Experts per chip (each on `cores / experts_per_chip` cores).
    pub experts_per_chip: u32,
    /// Capacity factor: an expert takes at most `capacity_factor x tokens x top_k / experts
    /// per chip` tokens, rounded up to a multiple of 64 (the matmul's moving size granule).
    pub capacity_factor: f64,
    /// Popularity skew: expert of rank r (random order) is chosen with weight 1 / (r + 1)^skew.
    pub skew: f64,
    /// Routing seed.
    pub seed: u64,
}

/// The benchmark's step: 32 tokens per chip, d_model 512, top-2 of 288 experts (2 per chip),
/// capacity factor 2 (64 slots per expert), Zipf skew 0.5, seed 1.
pub const SHAPE: MoeShape =
    MoeShape { tokens: 32, d_model: 512, top_k: 2, experts_per_chip: 2, capacity_factor: 2.0, skew: 0.5, seed: 1 };

/// The routing outcome: per (source chip, destination chip), tokens sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routing {
    /// `sent[c][d]`: tokens chip c sends to chip d's experts (including d = c, kept local).
    pub sent: Vec<Vec<u32>>,
    /// Tokens each expert received.
    pub per_expert: Vec<u32>,
    /// Token-expert assignments dropped for capacity.
    pub dropped: u32,
    /// Slots per expert.
    pub capacity: u32,
}

impl MoeShape {
    /// Slots per expert.
    pub fn capacity(&self) -> u32 {
        let c = self.capacity_factor * f64::from(self.tokens * self.top_k) / f64::from(self.experts_per_chip);
        (c.ceil() as u32).div_ceil(64).max(1) * 64
    }

    /// One expert's per-core program shape on a chip of `cores` cores.
    pub fn core_shape(&self, cores: u32) -> Result<Shape, String> {
        let per_expert = cores / self.experts_per_chip;
        if self.experts_per_chip == 0 || !cores.is_multiple_of(self.experts_per_chip) {
            return Err(format!("moe: {} experts per chip do not split {cores} cores", self.experts_per_chip));
        }
        if !self.d_model.is_multiple_of(128 * per_expert) {
            return Err(format!("moe: d_model {} is not 128 x {per_expert} cores x k", self.d_model));
        }
        let s = Shape {
            tokens: self.capacity(),
            d_model: self.d_model,
            d_ff_per_core: self.d_model / per_expert,
            chunks_per_slab: 1,
            chunks_per_group: 1,
            slab_buffers: 2,
        };
        s.check()?;
        Ok(s)
    }

    /// Routes every chip's tokens over `chips` chips (deterministic in the seed).
    pub fn route(&self, chips: usize) -> Routing {
        let experts = chips * self.experts_per_chip as usize;
        let mut rng = SimRng::new(self.seed, 0x6d6f65);
        let mut rank: Vec<usize> = (0..experts).collect();
        rng.shuffle(&mut rank);
        let weight: Vec<f64> = rank.iter().map(|&r| 1.0 / ((r + 1) as f64).powf(self.skew)).collect();
        let total: f64 = weight.iter().sum();
        let capacity = self.capacity();
        let mut per_expert = vec![0u32; experts];
        let mut sent = vec![vec![0u32; chips]; chips];
        let mut dropped = 0;
        for row in sent.iter_mut() {
            for _ in 0..self.tokens {
                let mut chosen: Vec<usize> = Vec::with_capacity(self.top_k as usize);
                while chosen.len() < self.top_k as usize {
                    let mut x = rng.unit_f64() * total;
                    let mut e = 0;
                    while e + 1 < experts && x >= weight[e] {
                        x -= weight[e];
                        e += 1;
                    }
                    if !chosen.contains(&e) {
                        chosen.push(e);
                    }
                }
                for e in chosen {
                    if per_expert[e] < capacity {
                        per_expert[e] += 1;
                        row[e / self.experts_per_chip as usize] += 1;
                    } else {
                        dropped += 1;
                    }
                }
            }
        }
        Routing { sent, per_expert, dropped, capacity }
    }
}

/// An all-to-allv over all chips: chip c sends `bytes(c, d)` to every other chip d (empty
/// messages included, as the counts travel anyway), one step.
fn alltoallv(name: &str, chips: usize, doorbells: u64, bytes: impl Fn(usize, usize) -> u64) -> Job {
    let progs = (0..chips)
        .map(|c| {
            let sends = (0..chips).filter(|&d| d != c).map(|d| (d, bytes(c, d))).collect();
            vec![Step { sends, recvs: chips as u32 - 1 }]
        })
        .collect();
    Job::new(name, progs, doorbells)
}

/// A finished step.
pub struct MoeRun {
    /// The simulation after the run.
    pub sim: Simulation,
    /// Each chip's ids.
    pub chips: Vec<ChipIds>,
    /// Each chip's collective engine.
    pub engines: Vec<trnsim_kernel::ComponentId>,
    /// The routing used.
    pub routing: Routing,
}

/// The step declared into a fresh builder: its chips' ids, collective engines and routing.
pub struct MoeDecl {
    /// The builder holding the whole step.
    pub b: SimBuilder,
    /// Each chip's ids.
    pub chips: Vec<ChipIds>,
    /// Each chip's collective engine.
    pub engines: Vec<trnsim_kernel::ComponentId>,
    /// The routing used.
    pub routing: Routing,
}

/// Declares the step on every chip of `topo`, each a `chip`, with the routing of `s` over
/// them (`s.route(topo.chips)`, made by the caller: a partitioned run declares the system once
/// per partition), into a fresh builder, keeping statistics only for the links `keep_links`
/// accepts, if given (by name); `tracing`: declare the trace tracks a traced run has.
pub fn declare(
    chip: &Chip,
    topo: &Topology,
    s: &MoeShape,
    routing: &Routing,
    order: TickOrder,
    tracing: bool,
    keep_links: Option<&dyn Fn(&str) -> bool>,
) -> Result<MoeDecl, String> {
    let n = topo.chips;
    let cs = s.core_shape(chip.spec.cores)?;
    if routing.sent.len() != n {
        return Err(format!("a routing over {} chips, for {n} chips", routing.sent.len()));
    }
    let routing = routing.clone();
    let v = Variant { act_fn: "gelu", collectives: 2, x_after: 1, ..Variant::default() };
    let programs = (0..chip.spec.cores)
        .map(|i| assemble_text(&format!("moe expert nc{i}.asm (generated)"), &e2e::program_with(&cs, i, &v)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut b = SimBuilder::with_options(SimOptions { tick_order: order, ..SimOptions::default() });
    let nodes = fsys::reserve_nodes(&mut b, topo)?;
    let all: Vec<usize> = (0..n).collect();
    let sems = (Sem(DOORBELL_SEM), Sem(CC_DONE_SEM));
    let (chips, hooks) = chip::build_on_fabric(&mut b, chip, &programs, topo, &nodes, &all, sems, tracing)?;
    let tok = u64::from(s.d_model) * 2;
    let sent = &routing.sent;
    let dispatch = alltoallv("dispatch", n, 0, |c, d| u64::from(sent[c][d]) * tok);
    let combine = alltoallv("combine", n, u64::from(16 * cs.chunks()), |c, d| u64::from(sent[d][c]) * tok);
    fsys::build_jobs(&mut b, topo, &nodes, &[dispatch, combine], &Params::default(), hooks, tracing)?;
    if let Some(keep) = keep_links {
        b.keep_link_stats_where(keep).map_err(|e| e.to_string())?;
    }
    Ok(MoeDecl { b, chips, engines: nodes.ids[..n].to_vec(), routing })
}

/// Builds and runs the step on every chip of `topo`, each a `chip`, keeping statistics only
/// for the links `keep_links` accepts (by name; `&|_| true` for every link's).
pub fn run(
    chip: &Chip,
    topo: &Topology,
    s: &MoeShape,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    keep_links: &dyn Fn(&str) -> bool,
) -> Result<MoeRun, String> {
    let d = declare(chip, topo, s, &s.route(topo.chips), order, trace.is_some(), Some(keep_links))?;
    let sim = crate::progress::run_to_end_powered(d.b, &d.chips, trace, LIMIT, chip, Some(topo))?;
    Ok(MoeRun { sim, chips: d.chips, engines: d.engines, routing: d.routing })
}

/// The run's simulated-time limit.
pub const LIMIT: Dur = Dur::from_us(100_000);

/// Headline figures: the step's phases, bytes, imbalance and drops.
pub fn headline(r: &MoeRun, chip: &Chip, s: &MoeShape) -> Result<Vec<(String, f64)>, String> {
    let (mut dispatch, mut compute, mut combine) = (0u64, 0u64, 0u64);
    for &id in &r.engines {
        let node = r.sim.component::<ChipNode>(id).ok_or("collective engine")?;
        let ph = node.phase_done_ps();
        dispatch = dispatch.max(ph.first().copied().flatten().ok_or("dispatch did not finish")?);
        compute = compute.max(node.last_doorbell_ps().unwrap_or(0));
        combine = combine.max(node.done_ps().ok_or("combine did not finish")?);
    }
    figures(Phases { dispatch, compute, combine, end_ns: r.sim.now().as_ns_f64() }, &r.routing, chip, s)
}

/// The same figures read from a run's statistics (a partitioned run has no one simulation
/// to ask): each collective engine's (`fsys::node_name`) `phase0_done_ps` (dispatch),
/// `last_doorbell_ps` and `phase1_done_ps` (combine, its last phase), and the kernel's
/// `sim_time_ps`.
pub fn headline_of(
    stats: &trnsim_kernel::StatsReport,
    topo: &Topology,
    chip: &Chip,
    s: &MoeShape,
) -> Result<Vec<(String, f64)>, String> {
    let (mut dispatch, mut compute, mut combine) = (0u64, 0u64, 0u64);
    for c in 0..topo.chips {
        let node = fsys::node_name(topo, c);
        let get = |k: &str| stats.int(&node, k);
        dispatch = dispatch.max(get("phase0_done_ps").ok_or("dispatch did not finish")?);
        compute = compute.max(get("last_doorbell_ps").unwrap_or(0));
        combine = combine.max(get("phase1_done_ps").ok_or("combine did not finish")?);
    }
    let end_ps = stats.int("kernel", "sim_time_ps").ok_or("no kernel sim_time_ps statistic")?;
    let end_ns = Dur::from_ps(end_ps).as_ns_f64();
    figures(Phases { dispatch, compute, combine, end_ns }, &s.route(topo.chips), chip, s)
}

/// When the step's phases ended on the slowest chip, in ps, and the run's end in ns.
struct Phases {
    dispatch: u64,
    compute: u64,
    combine: u64,
    end_ns: f64,
}

/// The headline figures of a step whose phases ended at `p`, routed as `routing`.
fn figures(p: Phases, routing: &Routing, chip: &Chip, s: &MoeShape) -> Result<Vec<(String, f64)>, String> {
    let Phases { dispatch, compute, combine, end_ns } = p;
    let n = routing.sent.len();
    let tok = f64::from(s.d_model) * 2.0;
    let remote: u64 = (0..n)
        .flat_map(|c| (0..n).filter(move |&d| d != c).map(move |d| (c, d)))
        .map(|(c, d)| u64::from(routing.sent[c][d]))
        .sum();
    let local: u64 = (0..n).map(|c| u64::from(routing.sent[c][c])).sum();
    let max_e = routing.per_expert.iter().copied().max().unwrap_or(0);
    let mean_e = routing.per_expert.iter().map(|&x| f64::from(x)).sum::<f64>() / routing.per_expert.len() as f64;
    let cs = s.core_shape(chip.spec.cores)?;
    let expert_flops = cs.flops() as f64 * f64::from(chip.spec.cores) * n as f64;
    let useful = 2.0
        * f64::from(s.d_model)
        * f64::from(s.d_model)
        * routing.per_expert.iter().map(|&x| f64::from(x)).sum::<f64>();
    let dispatch_bytes = remote as f64 * tok;
    Ok(vec![
        ("chips".into(), n as f64),
        ("experts".into(), routing.per_expert.len() as f64),
        ("sim_time_ns".into(), end_ns),
        ("dispatch_done_ns".into(), dispatch as f64 / 1e3),
        ("experts_done_ns".into(), compute as f64 / 1e3),
        ("combine_done_ns".into(), combine as f64 / 1e3),
        ("dispatch_bytes".into(), dispatch_bytes),
        ("dispatch_GBps_per_chip".into(), dispatch_bytes / n as f64 / (dispatch as f64 / 1e3)),
        ("tokens_remote".into(), remote as f64),
        ("tokens_local".into(), local as f64),
        ("tokens_dropped".into(), f64::from(routing.dropped)),
        ("expert_capacity".into(), f64::from(routing.capacity)),
        ("expert_tokens_max".into(), f64::from(max_e)),
        ("expert_tokens_mean".into(), mean_e),
        ("expert_imbalance".into(), f64::from(max_e) / mean_e.max(1e-9)),
        ("expert_tflops_padded".into(), expert_flops / end_ns / 1e3),
        ("expert_tflops_useful".into(), useful / end_ns / 1e3),
    ])
}

/// Runs `moe-alltoall-144` on the Trn3 Gen2 UltraServer.
pub fn run_named(
    name: &str,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<BenchResult, String> {
    let us = chip::trn3_gen2()?;
    run_on(name, &chip::with_energy(us.chip, "trn3-gen2-ultraserver")?, &us.topology, order, trace)
}

/// Runs `moe-alltoall-144`'s step on every chip of `topo`, each a `chip`: in windows on this
/// thread ([`crate::partitioned::run_in_windows`]), or serially when traced or when
/// [`crate::partitioned::System::window_parts`] gives no partitions (RTL blocks swapped in,
/// four fast chips or fewer, a system that cannot be split).
pub fn run_on(
    name: &str,
    chip: &Chip,
    topo: &Topology,
    order: TickOrder,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<BenchResult, String> {
    if trace.is_none() {
        // In windows on this thread: faster, the same results (see `run_in_windows`).
        let sys = moe_system(chip.clone(), topo.clone(), SHAPE, order)?;
        if let Some(r) = crate::partitioned::run_in_windows(name, &sys)? {
            return Ok(r);
        }
    }
    let sw = Stopwatch::start();
    let keep = crate::result::first_chip_keeps_link;
    let r = run(chip, topo, &SHAPE, order, chip::whole_chip_trace(trace), &keep)?;
    let (wall_s, cpu_s) = sw.elapsed();
    let headline = headline(&r, chip, &SHAPE)?;
    let speed = Speed::of(&r.sim, wall_s, cpu_s);
    Ok(BenchResult { name: name.into(), headline, stats: crate::result::first_chip_report(&r.sim), speed })
}
/// The MoE step of `shape` on every chip of `topo` as a partitionable system (by chip by
/// default; see [`System::check_rule`]).
pub fn moe_system(chip: Chip, topo: Topology, shape: MoeShape, order: TickOrder) -> Result<System, String> {
    // What the declaration checks first, checked here so a bad shape is refused before any run.
    shape.core_shape(chip.spec.cores)?;
    let (c2, t2) = (chip.clone(), topo.clone());
    // Statistics kept as the serial benchmark keeps them (see `tp_system`).
    let keep = crate::result::first_chip_keeps_link;
    let routing = shape.route(topo.chips);
    let build = move || Ok(declare(&c2, &t2, &shape, &routing, order, false, Some(&keep))?.b);
    let chips = topo.chips as u32;
    let c3 = chip.clone();
    let headline = move |stats: &trnsim_kernel::StatsReport, _end_ps: u64| headline_of(stats, &topo, &c3, &shape);
    // Three chips a partition in a run in windows (48 on 144 chips).
    Ok(System::of_chips(build, LIMIT, chip, chips, 3, Box::new(headline)))
}
