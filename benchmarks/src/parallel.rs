//! Partitioned runs of the systems that can be split (`trnsim run --threads N`), and the
//! serial-against-parallel speed benchmark (`trnsim bench parallel`).
//!
//! A partitionable system is a function that builds it into a fresh [`SimBuilder`]; the
//! kernel calls it once to plan and once per thread (see `trnsim_kernel::parallel`).

use crate::cpu::Stopwatch;
use crate::suite::{BenchResult, Speed};
use trnsim_fabric::collective::{Collective, Params};
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{
    run_threads, Dur, ParallelConfig, ParallelRun, PartitionRule, ReportFilter, SimBuilder, SimOptions, StatsReport,
    TickOrder, TraceOptions, TraceSink,
};

/// The systems `--threads` can split, with what they are.
pub const PARTITIONABLE: &[(&str, &str)] = &[
    (
        "fabric-allreduce-nl72x2-nodes",
        "144-chip Trn3 Gen2 (NL72x2) ring all-reduce of 16 MiB, built per chip and switch (partitionable)",
    ),
    (
        "fabric-allreduce-ultracluster-nodes",
        "128-chip Trn3 Gen1 UltraCluster (2 UltraServers over EFA) hierarchical all-reduce of 4 MiB, built per chip and switch (partitionable; by UltraServer by default)",
    ),
    (
        "tp-matmul-N",
        "N whole Trn3 chips (8 NeuronCores, 4 HBM3E stacks each) on the Gen1 UltraServer fabric: the tensor-parallel matmul (partitionable by chip, the default; a partition holds whole chips)",
    ),
    (
        "moe-alltoall-144",
        "one mixture-of-experts step on the 144 whole Trn3 chips of the Gen2 UltraServer: dispatch all-to-all, experts, combine all-to-all (partitionable by chip, the default; a partition holds whole chips)",
    ),
    (
        "dp-step-N",
        "a data-parallel step on N Trn3 Gen2 UltraServers over EFA (144 N chips): backward compute per chip, gradient all-reduced bucket by bucket, overlapped (partitionable; by UltraServer by default; dp-step-N:GRADIENT:BUCKETS:TOKENS)",
    ),
    ("kernel-ring", "64-module token ring (1-cycle links: one window per cycle; correctness, not speed)"),
    ("kernel-random-graph:SEED", "a random graph of chattering components (the kernel's stress system; many deadlock)"),
];

/// One partitionable system: how to build it and how long to run it.
pub struct System {
    build: Box<dyn Fn() -> Result<SimBuilder, String> + Sync>,
    limit: Dur,
    kind: Kind,
    /// The partition rule when none is asked for, and the most partitions it can make (more
    /// partitions than that fall back to auto).
    default_rule: (PartitionRule, u32),
    /// A system of whole chips: a partition rule must not split one (components named
    /// `chip003` and `chip003.…` stay in one partition).
    whole_chips: bool,
    /// Partitions report only the owners a result keeps or a headline reads
    /// ([`crate::suite::partition_reports`]; whole chips, unless [`System::full_reports`]).
    filter_reports: bool,
}

enum Kind {
    Collective {
        size: u64,
        chips: usize,
        busbw_factor: f64,
    },
    Tp {
        n: u32,
        shape: crate::tp::TpShape,
        chip: Box<crate::chip::Chip>,
        topo: Box<Topology>,
        algo: trnsim_fabric::collective::Algo,
    },
    Dp(Box<crate::dp::DpSystem>),
    Moe {
        shape: crate::moe::MoeShape,
        chip: Box<crate::chip::Chip>,
        topo: Box<Topology>,
    },
    Ring {
        cycles: u64,
    },
    Graph,
}

/// The topology and collective of the 144-chip benchmark.
fn nl72x2() -> Result<(Topology, Collective), String> {
    let topo = trnsim_fabric::topo::load(&trnsim_fabric::topo::presets_dir().join("trn3-gen2-nl72x2.ron"))?;
    let coll: Collective = "all_reduce:ring".parse()?;
    Ok((topo, coll))
}

/// The topology and collective of the UltraCluster benchmark: 2 Trn3 Gen1 UltraServers.
fn ultracluster() -> Result<(Topology, Collective), String> {
    let sys = trnsim_system::doc::SystemDoc::open("trn3-gen1-ultracluster-2")?.resolve()?;
    let topo = sys.fabric().ok_or("trn3-gen1-ultracluster-2 has no fabric")?.clone();
    let coll: Collective = "all_reduce:hierarchical".parse()?;
    Ok((topo, coll))
}

/// The partitionable system `name`, with tick order `order`.
pub fn system(name: &str, order: TickOrder) -> Result<System, String> {
    let opts = move || SimOptions { tick_order: order, ..SimOptions::default() };
    match name {
        "fabric-allreduce-nl72x2-nodes" => {
            let (topo, coll) = nl72x2()?;
            let size = 16u64 << 20;
            let p = Params::default();
            let limit = p.limit;
            let (chips, busbw_factor) = (topo.chips, coll.op.busbw_factor(topo.chips));
            let build = move || -> Result<SimBuilder, String> {
                let mut b = SimBuilder::with_options(opts());
                trnsim_fabric::system::build_collective(&mut b, &topo, coll, size, &p)?;
                Ok(b)
            };
            let kind = Kind::Collective { size, chips, busbw_factor };
            Ok(System::new(build, limit, kind))
        }
        "fabric-allreduce-ultracluster-nodes" => {
            let (topo, coll) = ultracluster()?;
            let size = 4u64 << 20;
            let p = Params::default();
            let limit = p.limit;
            let (chips, busbw_factor) = (topo.chips, coll.op.busbw_factor(topo.chips));
            let ultraservers = (topo.chips / topo.chips_per_server.max(1)) as u32;
            let build = move || -> Result<SimBuilder, String> {
                let mut b = SimBuilder::with_options(opts());
                trnsim_fabric::system::build_collective(&mut b, &topo, coll, size, &p)?;
                Ok(b)
            };
            let kind = Kind::Collective { size, chips, busbw_factor };
            // By UltraServer: components are named `us0.…`, `us1.…`, `efa.…`; as many
            // partitions as UltraServers at most, the EFA switches spread among them.
            let default_rule = (by_ultraserver(), ultraservers);
            Ok(System { default_rule, ..System::new(build, limit, kind) })
        }
        "kernel-ring" => {
            let p = crate::ring::RingParams { modules: 64, tokens: 16, depth: 4 };
            let cycles = 200_000;
            let build = move || crate::ring::builder(p, opts());
            // The ring's clock is 1 GHz: `cycles` cycles are `cycles` ns.
            let (limit, kind) = (Dur::from_ns(cycles), Kind::Ring { cycles });
            Ok(System::new(build, limit, kind))
        }
        n if n.starts_with("tp-matmul-") => {
            let us = trnsim_system::chip::ultraserver::trn3_gen1()?;
            let chips = crate::tp::chips_of(n, us.topology.chips)?;
            tp_system(us.chip, us.topology, crate::tp::SHAPE, chips, order)
        }
        "moe-alltoall-144" => {
            let us = crate::chip::trn3_gen2()?;
            moe_system(us.chip, us.topology, crate::moe::SHAPE, order)
        }
        n if n.starts_with("dp-step-") => {
            let dp = crate::dp::DpSystem::new(crate::dp::DpStep::parse(n)?)?;
            let ultraservers = dp.step.ultraservers;
            let d2 = dp.clone();
            let build = move || d2.declare(order);
            // Long enough for the backward pass and every all-reduce (the run ends when idle).
            let limit = Dur::from_ms(10_000);
            let default_rule = (by_ultraserver(), ultraservers);
            Ok(System { default_rule, ..System::new(build, limit, Kind::Dp(Box::new(dp))) })
        }
        n if n.starts_with("kernel-random-graph:") => {
            let seed = crate::random_graph::seed_of(n)?;
            let build = move || Ok(crate::random_graph::builder(seed, order).0);
            let (limit, kind) = (Dur::from_us(200), Kind::Graph);
            Ok(System::new(build, limit, kind))
        }
        _ => {
            let names: Vec<&str> = PARTITIONABLE.iter().map(|(n, _)| *n).collect();
            Err(format!("benchmark {name:?} cannot be partitioned (partitionable: {})", names.join(", ")))
        }
    }
}

/// The default rule on a cluster: one group per UltraServer (`us3.…`), the scale-out
/// switches (`efa.leaf2`, `efa.spine0`) not a group of their own but spread over the
/// partitions, each next to most of its links (they would otherwise all join the first
/// partition, which also gathers the statistics).
fn by_ultraserver() -> PartitionRule {
    PartitionRule::ByNameAttached { depth: 1, attach: "efa".into() }
}

/// The default rule on a fabric of whole chips: one group per busy chip (`chip003` with its
/// `chip003.nc0…` and `chip003.hbm1…`); the switches and the fabric nodes of chips that run
/// nothing (one component each) join the partitions next to most of their links. (Dealt as
/// groups, they took a partition's share: `tp-matmul-4` on 4 partitions put two busy chips
/// in one and none in another.)
fn by_chip() -> PartitionRule {
    PartitionRule::ByNameSinglesAttached { depth: 1 }
}

/// The TP matmul of `shape` over `n` whole chips of `topo` as a partitionable system (by chip by
/// default; see [`System::check_rule`]).
pub fn tp_system(
    chip: crate::chip::Chip,
    topo: Topology,
    shape: crate::tp::TpShape,
    n: u32,
    order: TickOrder,
) -> Result<System, String> {
    // What the declaration checks first, checked here so a bad N is refused before any run.
    if n as usize > topo.chips {
        return Err(format!("tp over {n} chips: {} has {} chips", topo.name, topo.chips));
    }
    shape.chip_shape(n, chip.spec.cores)?;
    let algo = crate::tp::algo(&shape, n);
    let (c2, t2) = (chip.clone(), topo.clone());
    // Statistics kept as the serial benchmark keeps them: the other chips' internal links
    // keep none (the result leaves them out anyway).
    let build = move || {
        let mut d = crate::tp::declare(&c2, &t2, &shape, n, order, false)?;
        d.b.keep_link_stats_where(&crate::suite::first_chip_keeps_link).map_err(|e| e.to_string())?;
        Ok(d.b)
    };
    let default_rule = (by_chip(), n);
    let kind = Kind::Tp { n, shape, chip: Box::new(chip), topo: Box::new(topo), algo };
    Ok(System { default_rule, whole_chips: true, filter_reports: true, ..System::new(build, crate::tp::LIMIT, kind) })
}

/// An error naming the first engine (in owner order) whose stream did not finish, as its
/// `unfinished` statistic says: a run of whole chips has no headline then.
fn all_streams_finished(stats: &StatsReport, end_ps: u64, limit: Dur) -> Result<(), String> {
    match stats.owners.iter().find(|(_, s)| s.contains_key("unfinished")) {
        Some((o, _)) => {
            let at_limit = end_ps >= limit.as_ps();
            Err(trnsim_system::chip::build::unfinished(&format!("{o}: engine"), at_limit, limit))
        }
        None => Ok(()),
    }
}

/// The MoE step of `shape` on every chip of `topo` as a partitionable system (by chip by
/// default; see [`System::check_rule`]).
pub fn moe_system(
    chip: crate::chip::Chip,
    topo: Topology,
    shape: crate::moe::MoeShape,
    order: TickOrder,
) -> Result<System, String> {
    // What the declaration checks first, checked here so a bad shape is refused before any run.
    shape.core_shape(chip.spec.cores)?;
    let (c2, t2) = (chip.clone(), topo.clone());
    // Statistics kept as the serial benchmark keeps them (see `tp_system`).
    let keep = crate::suite::first_chip_keeps_link;
    let routing = shape.route(topo.chips);
    let build = move || Ok(crate::moe::declare(&c2, &t2, &shape, &routing, order, false, Some(&keep))?.b);
    let default_rule = (by_chip(), topo.chips as u32);
    let kind = Kind::Moe { shape, chip: Box::new(chip), topo: Box::new(topo) };
    Ok(System { default_rule, whole_chips: true, filter_reports: true, ..System::new(build, crate::moe::LIMIT, kind) })
}

impl System {
    /// A system of `kind` built by `build`, run until `limit`: split by `auto` by default,
    /// any rule allowed.
    fn new(build: impl Fn() -> Result<SimBuilder, String> + Sync + 'static, limit: Dur, kind: Kind) -> System {
        System {
            build: Box::new(build),
            limit,
            kind,
            default_rule: (PartitionRule::Auto, u32::MAX),
            whole_chips: false,
            filter_reports: false,
        }
    }

    /// Partitions of a run in windows ([`run_in_windows`]), whole chips only: in cycle
    /// fidelity one chip a partition for `tp-matmul-N` and three for the MoE step (48 on 144
    /// chips), in fast fidelity four chips a partition (a fast chip's state is smaller); None
    /// for one partition (`tp-matmul-4 --fidelity fast`: serially its chips fit the cache as
    /// they are) and for the other systems. Measured on one core (docs/parallel.md, "Whole
    /// chips run in windows by default"). None too for a chip with RTL blocks swapped in: its
    /// blocks are checked after a serial run.
    pub fn window_parts(&self) -> Option<u32> {
        let (chips, chip, per_cycle) = match &self.kind {
            Kind::Tp { n, chip, .. } => (*n, chip, 1),
            Kind::Moe { topo, chip, .. } => (u32::try_from(topo.chips).ok()?, chip, 3),
            _ => return None,
        };
        if !chip.spec.rtl.is_empty() {
            return None;
        }
        let per = if chip.spec.hbm.fidelity == trnsim_mem::hbm::Fidelity::Fast { 4 } else { per_cycle };
        Some(chips.div_ceil(per)).filter(|&p| p > 1)
    }

    /// The same system, its partitioned runs reporting every owner (as [`System::run_serial`]
    /// does), to compare statistics with a serial run's in full.
    pub fn full_reports(self) -> System {
        System { filter_reports: false, ..self }
    }

    /// The partition rule used for `parts` partitions when none is asked for: by UltraServer
    /// on a cluster with at least `parts` UltraServers, else auto.
    pub fn default_rule(&self, parts: u32) -> PartitionRule {
        if parts <= self.default_rule.1 {
            self.default_rule.0.clone()
        } else {
            PartitionRule::Auto
        }
    }

    /// Runs serially; returns the statistics and the wall time.
    pub fn run_serial(&self, trace: Option<(Box<dyn TraceSink>, TraceOptions)>) -> Result<(StatsReport, f64), String> {
        let sw = Stopwatch::start();
        let mut sim = {
            let _span = tracing::info_span!("build").entered();
            (self.build)()?.build().map_err(|e| e.to_string())?
        };
        let _span = tracing::info_span!("simulate").entered();
        if let Some((sink, o)) = trace {
            sim.attach_trace(sink, &o);
        }
        sim.run_until_idle(self.limit).map_err(|e| e.to_string())?;
        sim.finish_trace().map_err(|e| e.to_string())?;
        Ok((sim.report(), sw.elapsed().0))
    }

    /// Runs this rank's partition over `t` (one partition per rank); the merged run and the
    /// wall time on rank 0, `None` elsewhere.
    pub fn run_transport(
        &self,
        t: &mut dyn trnsim_kernel::Transport,
        rule: &PartitionRule,
        tracing: Option<&TraceOptions>,
        sink: Option<Box<dyn TraceSink>>,
    ) -> Result<Option<(ParallelRun, f64)>, String> {
        self.check_rule(rule, t.size(), "--partition")?;
        if tracing.is_some() && self.whole_chips {
            return Err("--trace: partitioned runs of whole chips are not traced yet (trace the serial run)".into());
        }
        let sw = Stopwatch::start();
        // Rank 0's progress line (shown only if its standard error is a terminal, which under
        // `mpirun` it usually is not) and, for whole chips, the report of what is kept.
        let progress = if t.rank() == 0 { crate::progress::WindowProgress::start() } else { None };
        let cfg = ParallelConfig {
            on_window: progress.as_ref().map(|p| p.hook()),
            report_where: self.report_filter(),
            ..ParallelConfig::new(t.size(), rule.clone())
        };
        let run = trnsim_kernel::run_transport(&*self.build, &cfg, t, self.limit, tracing, sink);
        if let Some(p) = progress {
            p.finish();
        }
        let run = run.map_err(|e| e.to_string())?;
        Ok(run.map(|r| (r, sw.elapsed().0)))
    }

    /// Whole chips: the statistics the result drops are not gathered at all
    /// ([`crate::suite::partition_reports`]), unless [`System::full_reports`].
    fn report_filter(&self) -> Option<ReportFilter> {
        self.filter_reports.then(|| ReportFilter(std::sync::Arc::new(crate::suite::partition_reports)))
    }

    /// Refuses a rule that would split a chip of a system of whole chips: plans it on the
    /// declared system (heavy components are made only at build) and names the first chip
    /// whose components land in two partitions. `by-name:1` and the default
    /// (`by-name:1,attach-singles`) keep every chip (`chipN` and its `chipN.…`) in one
    /// partition by construction (a chip alone in its group is attached whole), so they are
    /// not planned here (a declaration of the whole system saved; the run plans it anyway).
    pub fn check_rule(&self, rule: &PartitionRule, parts: u32, flag: &str) -> Result<(), String> {
        let whole = [PartitionRule::ByName { depth: 1 }, by_chip()];
        if !self.whole_chips || parts < 2 || whole.contains(rule) {
            return Ok(());
        }
        let b = trnsim_kernel::BuildScope::Declare.enter(&*self.build)?;
        let plan = b.plan(rule, parts, None).map_err(|e| e.to_string())?;
        let mut first: fxhash::FxHashMap<&str, (usize, u32)> = fxhash::FxHashMap::default();
        for (i, &part) in plan.part_of.iter().enumerate() {
            let name = b.name(trnsim_kernel::ComponentId::from_index(i));
            let chip = name.split('.').next().unwrap_or(name);
            if !chip.starts_with("chip") {
                continue;
            }
            match first.get(chip) {
                Some(&(j, p)) if p != part => {
                    let other = b.name(trnsim_kernel::ComponentId::from_index(j));
                    return Err(format!(
                        "{flag} {rule}: splits chip {chip} ({other} in partition {p}, {name} in partition {part}); partitions of this system hold whole chips (by-name:1 and the default, by-name:1,attach-singles, put each chip in one)"
                    ));
                }
                Some(_) => {}
                None => {
                    first.insert(chip, (i, part));
                }
            }
        }
        Ok(())
    }

    /// Why this system runs on one thread whatever `--threads` asks, if it does: a run too
    /// small to gain (docs/parallel.md, "When parallel pays").
    pub fn one_thread(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Ring { .. } => Some(
                "its 1 ns windows hold ~0.3 us of work, less than a window's synchronization (~0.7 us): runs on one thread",
            ),
            _ => None,
        }
    }

    /// Runs on `threads` threads under `rule` (on one if [`System::one_thread`] says so);
    /// returns the run and the wall time.
    pub fn run_parallel(
        &self,
        threads: u32,
        rule: &PartitionRule,
        trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    ) -> Result<(ParallelRun, f64), String> {
        let threads = if self.one_thread().is_some() { 1 } else { threads };
        self.check_rule(rule, threads, "--partition")?;
        if trace.is_some() && self.whole_chips {
            return Err("--trace: partitioned runs of whole chips are not traced yet (trace the serial run)".into());
        }
        let sw = Stopwatch::start();
        // (Each partition's thread builds its share, then simulates: one span covers both.)
        let _span = tracing::info_span!("build and simulate (partitioned)", threads).entered();
        let progress = crate::progress::WindowProgress::start();
        let on_window = progress.as_ref().map(|p| p.hook());
        let (parts, workers) = self.parts_on(threads, rule);
        let cfg = ParallelConfig {
            on_window,
            report_where: self.report_filter(),
            workers,
            ..ParallelConfig::new(parts, rule.clone())
        };
        let ran = run_threads(&*self.build, &cfg, self.limit, trace, |_| ());
        if let Some(p) = progress {
            p.finish();
        }
        let (run, _) = ran.map_err(|e| e.to_string())?;
        if let Err(e) = &run.outcome {
            return Err(e.to_string());
        }
        Ok((run, sw.elapsed().0))
    }

    /// The partitions and threads of a run on `threads` threads under `rule`: `threads`
    /// partitions, one thread each (or one per core when they are more than the host's cores,
    /// [`workers_for`]); but whole chips under their default rule split into at least as many
    /// partitions as a run in windows takes ([`System::window_parts`], rounded up to a
    /// multiple of the threads while the busy chips go round), each of the `threads` threads
    /// running its share in turn. A thread then keeps each partition's chips in cache through
    /// a window as the serial run in windows does; with one partition a thread it went round
    /// 72 chips each cycle and was twice as slow as the serial run (`moe-alltoall-144
    /// --threads 2`).
    pub fn parts_on(&self, threads: u32, rule: &PartitionRule) -> (u32, Option<u32>) {
        let workers = threads.min(trnsim_kernel::host::cores()).max(1);
        match self.window_parts() {
            Some(p) if p > threads && *rule == self.default_rule(p) => {
                let even = p.div_ceil(workers) * workers;
                let parts = if even <= self.default_rule.1 { even } else { p };
                (parts, Some(workers))
            }
            _ => (threads, workers_for(threads)),
        }
    }

    /// The headline figures read from a statistics report.
    pub fn headline(&self, stats: &StatsReport) -> Result<Vec<(String, f64)>, String> {
        match self.kind {
            Kind::Collective { size, chips, busbw_factor } => {
                let mut finish = 0;
                for (owner, s) in &stats.owners {
                    if let Some(v) = s.get("finish_ps") {
                        finish = finish.max(v.as_f64() as u64);
                        if s.get("steps_done").is_none() {
                            return Err(format!("{owner}: no steps_done statistic"));
                        }
                    }
                }
                let time_s = finish as f64 * 1e-12;
                let algbw = size as f64 / time_s.max(1e-18) / 1e9;
                Ok(vec![
                    ("chips".into(), chips as f64),
                    ("time_us".into(), time_s * 1e6),
                    ("busbw_GBps".into(), algbw * busbw_factor),
                ])
            }
            Kind::Tp { n, shape, ref chip, ref topo, algo } => {
                let end_ps = stats.int("kernel", "sim_time_ps").ok_or("no kernel sim_time_ps statistic")?;
                all_streams_finished(stats, end_ps, self.limit)?;
                crate::tp::headline_of(stats, end_ps as f64 / 1e3, algo, chip, topo, &shape, n)
            }
            Kind::Dp(ref dp) => dp.headline(stats),
            Kind::Moe { shape, ref chip, ref topo } => {
                let end_ps = stats.int("kernel", "sim_time_ps").ok_or("no kernel sim_time_ps statistic")?;
                all_streams_finished(stats, end_ps, self.limit)?;
                crate::moe::headline_of(stats, topo, chip, &shape)
            }
            Kind::Graph => {
                let count =
                    |k: &str| -> f64 { stats.owners.values().filter_map(|s| s.get(k)).map(|v| v.as_f64()).sum() };
                Ok(vec![("created".into(), count("created")), ("consumed".into(), count("consumed"))])
            }
            Kind::Ring { cycles } => {
                let hops: u64 = stats.owners.values().filter_map(|s| s.get("hops")).map(|v| v.as_f64() as u64).sum();
                Ok(vec![("cycles".into(), cycles as f64), ("hops".into(), hops as f64)])
            }
        }
    }
}

/// The threads `threads` partitions run on: one each, or as many as the host has cores when
/// that is fewer (each thread then runs several partitions' windows in turn: no thread
/// switches, and whole chips keep what more partitions than cores pay for, each partition's
/// state staying in cache through its window).
pub fn workers_for(threads: u32) -> Option<u32> {
    let cores = trnsim_kernel::host::cores();
    (threads > cores).then_some(cores)
}

/// The shortest window a run in windows takes: links between chips shorter than this (a
/// what-if of a 1 ps fabric) would make each window's exchange cost more than the window's
/// work, so such a system runs serially. (A window of a cycle-fidelity chip is about 30 us of
/// host work per simulated ns, of a fast one a few us; an exchange about 1 us a partition.)
pub const WINDOW_FLOOR: Dur = Dur::from_ns(1);

/// A named run of whole chips (`tp-matmul-N`, `moe-alltoall-144`, on a system file too) as
/// the serial run reports it, simulated in windows on the calling thread: the chips split into
/// partitions ([`System::window_parts`]), each simulated through a window (the lookahead of
/// the links between chips) while its state stays in the cache, where the serial kernel goes
/// round every chip each cycle. Same results as the serial run (statistics, headline; the
/// serial-equals-partitioned tests), no `threads` field. None when the system cannot be split
/// so (links between chips shorter than [`WINDOW_FLOOR`]): the caller runs it serially.
pub fn run_in_windows(name: &str, sys: &System) -> Result<Option<BenchResult>, String> {
    let Some(parts) = sys.window_parts() else { return Ok(None) };
    let sw = Stopwatch::start();
    let ran = {
        let _span = tracing::info_span!("build and simulate (in windows)", parts).entered();
        let progress = crate::progress::WindowProgress::start();
        let cfg = ParallelConfig {
            on_window: progress.as_ref().map(|p| p.hook()),
            report_where: sys.report_filter(),
            workers: Some(1),
            min_lookahead: Some(WINDOW_FLOOR),
            ..ParallelConfig::new(parts, sys.default_rule(parts))
        };
        let ran = run_threads(&*sys.build, &cfg, sys.limit, None, |_| ());
        if let Some(p) = progress {
            p.finish();
        }
        ran
    };
    let run = match ran {
        // No split, or links between chips shorter than the floor: serially.
        Err(trnsim_kernel::ParallelError::Partition(_)) => return Ok(None),
        r => r.map_err(|e| e.to_string())?.0,
    };
    let (wall_s, cpu_s) = sw.elapsed();
    let (mut r, _) = result(name, sys, run, wall_s, None)?;
    r.speed.cpu_s = cpu_s;
    Ok(Some(r))
}

/// `trnsim run --threads N NAME`: one benchmark result, with the partitions' timing table.
pub fn run_named(
    name: &str,
    order: TickOrder,
    threads: u32,
    rule: Option<&PartitionRule>,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Result<(BenchResult, String), String> {
    let sys = system(name, order)?;
    if let Some(why) = sys.one_thread().filter(|_| threads > 1) {
        eprintln!("{name}: {why}");
    }
    let rule = rule.cloned().unwrap_or_else(|| sys.default_rule(threads));
    let (run, wall_s) = sys.run_parallel(threads, &rule, trace)?;
    result(name, &sys, run, wall_s, Some(("threads", threads)))
}

/// A benchmark result from a partitioned run (`how`: ("threads" | "ranks", count), a headline
/// figure; None for a run in windows, which reports as the serial run).
pub fn result(
    name: &str,
    sys: &System,
    run: ParallelRun,
    wall_s: f64,
    how: Option<(&str, u32)>,
) -> Result<(BenchResult, String), String> {
    if let Err(e) = &run.outcome {
        return Err(e.to_string());
    }
    let mut headline = sys.headline(&run.report)?;
    if let Some((what, count)) = how {
        headline.push((what.into(), f64::from(count)));
    }
    let sim_s = run.now.as_ps() as f64 * 1e-12;
    let ticks = run.report.int("kernel", "ticks").unwrap_or(0) as f64;
    let table = run.timing_table();
    // As the serial run reports it: other chips' internals left out. Moved, not copied: the
    // statistics of a whole cluster are tens of megabytes.
    let report = if sys.whole_chips { crate::suite::keep_first_chip(run.report, run.left_out) } else { run.report };
    let speed = Speed {
        wall_s,
        cpu_s: 0.0,
        slowdown: if sim_s > 0.0 { wall_s / sim_s } else { 0.0 },
        ticks_per_s: ticks / wall_s.max(1e-9),
    };
    Ok((BenchResult { name: name.into(), headline, stats: report, speed }, table))
}

/// `trnsim bench parallel`: the serial run, then each thread count, best of `reps` wall times;
/// checks that every parallel run's statistics equal the serial run's.
pub fn bench(name: &str, threads: &[u32], rule: Option<&PartitionRule>, reps: u32) -> Result<String, String> {
    // Partitions report everything here, as the serial run does, so the two compare in full.
    let sys = system(name, TickOrder::Structural)?.full_reports();
    let mut best = f64::MAX;
    let mut serial_stats = None;
    for _ in 0..reps.max(1) {
        let (st, w) = sys.run_serial(None)?;
        best = best.min(w);
        serial_stats = Some(st);
    }
    let serial_stats = serial_stats.expect("at least one run");
    let serial_json = serde_json::to_string(&serial_stats).map_err(|e| e.to_string())?;
    let mut out = format!(
        "{name}\n{:>8}  {:>10}  {:>8}  {:>9}  {:>14}\n",
        "threads", "wall_s", "speedup", "windows", "wait_us/window"
    );
    out.push_str(&format!("{:>8}  {:>10.3}  {:>8.2}  {:>9}  {:>14}\n", "serial", best, 1.0, "-", "-"));
    for &t in threads {
        let mut bw = f64::MAX;
        let mut last = None;
        for _ in 0..reps.max(1) {
            let r = rule.cloned().unwrap_or_else(|| sys.default_rule(t));
            let (run, w) = sys.run_parallel(t, &r, None)?;
            let json = serde_json::to_string(&run.report).map_err(|e| e.to_string())?;
            if json != serial_json {
                return Err(format!("{name}: statistics with {t} threads differ from the serial run's"));
            }
            bw = bw.min(w);
            last = Some(run);
        }
        let run = last.expect("at least one run");
        let windows = run.partitions.first().map_or(0, |p| p.windows);
        // The least waiting partition's wait per window: sync cost plus the imbalance within
        // windows that even the busiest partition sees (an upper bound of the sync cost).
        let sync =
            run.partitions.iter().map(|p| p.waiting.as_secs_f64() / windows.max(1) as f64).fold(f64::MAX, f64::min);
        out.push_str(&format!("{:>8}  {:>10.3}  {:>8.2}  {:>9}  {:>14.2}\n", t, bw, best / bw, windows, sync * 1e6));
        out.push_str(&run.timing_table());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The busy chips (those with components below their fabric node, `chip003.…`) in each
    /// partition of `name`'s default plan for `parts` partitions.
    fn busy_chips_per_partition(name: &str, parts: u32) -> Vec<usize> {
        let sys = system(name, TickOrder::Structural).unwrap();
        let b = trnsim_kernel::BuildScope::Declare.enter(&*sys.build).unwrap();
        let plan = b.plan(&sys.default_rule(parts), parts, None).unwrap();
        let mut chips = vec![std::collections::BTreeSet::new(); parts as usize];
        for (i, &part) in plan.part_of.iter().enumerate() {
            let name = b.name(trnsim_kernel::ComponentId::from_index(i));
            if let Some((chip, _)) = name.split_once('.').filter(|(c, _)| c.starts_with("chip")) {
                chips[part as usize].insert(chip.to_string());
            }
        }
        chips.iter().map(|c| c.len()).collect()
    }

    #[test]
    fn a_run_too_small_to_gain_runs_on_one_thread_with_the_serial_results() {
        let sys = system("kernel-ring", TickOrder::Structural).unwrap().full_reports();
        assert!(sys.one_thread().is_some());
        let (serial, _) = sys.run_serial(None).unwrap();
        let (run, _) = sys.run_parallel(2, &sys.default_rule(2), None).unwrap();
        assert_eq!(run.partitions.len(), 1, "one partition, one thread");
        assert!(serde_json::to_string(&serial).unwrap() == serde_json::to_string(&run.report).unwrap());
        assert!(system("fabric-allreduce-nl72x2-nodes", TickOrder::Structural).unwrap().one_thread().is_none());
    }

    #[test]
    fn whole_chip_systems_deal_their_busy_chips_evenly_by_default() {
        // The fabric's switches and its idle chips' nodes (one component each) are spread
        // next to their links; dealt as groups they took a partition's share, and
        // tp-matmul-4 on 4 partitions put busy chips 0 and 1 in one, none in another.
        assert_eq!(busy_chips_per_partition("tp-matmul-4", 4), [1, 1, 1, 1]);
        assert_eq!(busy_chips_per_partition("tp-matmul-4", 2), [2, 2]);
        assert_eq!(busy_chips_per_partition("tp-matmul-16", 4), [4, 4, 4, 4]);
        assert_eq!(busy_chips_per_partition("moe-alltoall-144", 48), vec![3; 48]);
    }
}
