//! What a partitioned run needs of any system that can be split: how to build it, how long to
//! run it, how to read its headline, and its runs (serial, on threads, over a transport, in
//! windows on one thread). The systems themselves are declared by their benchmarks
//! ([`crate::tp::tp_system`], [`crate::moe::moe_system`]) and named in [`crate::parallel`];
//! this module knows none of them.
//!
//! A partitionable system is a function that builds it into a fresh [`SimBuilder`]; the
//! kernel calls it once to plan and once per thread (see `trnsim_kernel::parallel`).

use crate::cpu::Stopwatch;
use crate::result::{BenchResult, Speed};
use trnsim_kernel::{
    run_threads, Dur, ParallelConfig, ParallelRun, PartitionRule, ReportFilter, SimBuilder, StatsReport, TraceOptions,
    TraceSink,
};

/// One partitionable system: how to build it and how long to run it.
pub struct System {
    pub(crate) build: Box<dyn Fn() -> Result<SimBuilder, String> + Sync>,
    limit: Dur,
    kind: Kind,
    /// The partition rule when none is asked for, and the most partitions it can make (more
    /// partitions than that fall back to auto).
    default_rule: (PartitionRule, u32),
    /// A system of whole chips: a partition rule must not split one (components named
    /// `chip003` and `chip003.…` stay in one partition).
    whole_chips: bool,
    /// Partitions report only the owners a result keeps or a headline reads
    /// ([`crate::result::partition_reports`]; whole chips, unless [`System::full_reports`]).
    filter_reports: bool,
}

/// Headline figures read from a run's statistics.
pub type Headline = Vec<(String, f64)>;

/// How a whole-chip system's headline is read: from the statistics and the run's end (ps),
/// once every engine's stream is known to have finished.
pub type ChipsHeadline = Box<dyn Fn(&StatsReport, u64) -> Result<Headline, String> + Send + Sync>;

/// How any other system's headline is read from its statistics.
pub type OwnHeadline = Box<dyn Fn(&StatsReport) -> Result<Headline, String> + Send + Sync>;

/// What a system is, as far as its runs need to know: how to read its headline, and for
/// whole chips how to deal them into windows.
pub(crate) enum Kind {
    Collective {
        size: u64,
        chips: usize,
        busbw_factor: f64,
    },
    /// Whole chips (`tp-matmul-N`, `moe-alltoall-144`): `chips` busy chips of `chip`, cut
    /// `per_window` chips a partition in a run in windows.
    Chips {
        chips: u32,
        chip: Box<trnsim_system::chip::Chip>,
        per_window: u32,
        headline: ChipsHeadline,
    },
    /// A system that reads its own headline (a data-parallel step).
    Own(OwnHeadline),
    Ring {
        cycles: u64,
    },
    Graph,
}

/// The default rule on a fabric of whole chips: one group per busy chip (`chip003` with its
/// `chip003.nc0…` and `chip003.hbm1…`); the switches and the fabric nodes of chips that run
/// nothing (one component each) join the partitions next to most of their links. (Dealt as
/// groups, they took a partition's share: `tp-matmul-4` on 4 partitions put two busy chips
/// in one and none in another.)
pub(crate) fn by_chip() -> PartitionRule {
    PartitionRule::ByNameSinglesAttached { depth: 1 }
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

impl System {
    /// A system of `kind` built by `build`, run until `limit`: split by `auto` by default,
    /// any rule allowed.
    pub(crate) fn new(
        build: impl Fn() -> Result<SimBuilder, String> + Sync + 'static,
        limit: Dur,
        kind: Kind,
    ) -> System {
        System {
            build: Box::new(build),
            limit,
            kind,
            default_rule: (PartitionRule::Auto, u32::MAX),
            whole_chips: false,
            filter_reports: false,
        }
    }

    /// The same system split by `rule` when none is asked for, into at most `max` partitions
    /// (more fall back to auto).
    pub(crate) fn with_default_rule(self, (rule, max): (PartitionRule, u32)) -> System {
        System { default_rule: (rule, max), ..self }
    }

    /// A system of `chips` whole chips of `chip` built by `build`, run until `limit`: split
    /// by chip by default (at most `chips` partitions), `per_window` chips a partition in a
    /// run in windows, partitions reporting what [`crate::result::keep_first_chip`] keeps.
    pub fn of_chips(
        build: impl Fn() -> Result<SimBuilder, String> + Sync + 'static,
        limit: Dur,
        chip: trnsim_system::chip::Chip,
        chips: u32,
        per_window: u32,
        headline: ChipsHeadline,
    ) -> System {
        let kind = Kind::Chips { chips, chip: Box::new(chip), per_window, headline };
        System {
            default_rule: (by_chip(), chips),
            whole_chips: true,
            filter_reports: true,
            ..System::new(build, limit, kind)
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
        let Kind::Chips { chips, ref chip, per_window: per_cycle, .. } = self.kind else { return None };
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
    /// ([`crate::result::partition_reports`]), unless [`System::full_reports`].
    fn report_filter(&self) -> Option<ReportFilter> {
        self.filter_reports.then(|| ReportFilter(std::sync::Arc::new(crate::result::partition_reports)))
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
    pub fn headline(&self, stats: &StatsReport) -> Result<Headline, String> {
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
            Kind::Chips { ref headline, .. } => {
                let end_ps = stats.int("kernel", "sim_time_ps").ok_or("no kernel sim_time_ps statistic")?;
                all_streams_finished(stats, end_ps, self.limit)?;
                headline(stats, end_ps)
            }
            Kind::Own(ref headline) => headline(stats),
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
    let report = if sys.whole_chips { crate::result::keep_first_chip(run.report, run.left_out) } else { run.report };
    let speed = Speed {
        wall_s,
        cpu_s: 0.0,
        slowdown: if sim_s > 0.0 { wall_s / sim_s } else { 0.0 },
        ticks_per_s: ticks / wall_s.max(1e-9),
    };
    Ok((BenchResult { name: name.into(), headline, stats: report, speed }, table))
}
