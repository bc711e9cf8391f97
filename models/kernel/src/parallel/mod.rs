//! Partitioned parallel runs (SST-style conservative synchronization) on threads.
//!
//! ```text
//!   thread 0 (partition 0)     thread 1 (partition 1)        window k = [W, W + lookahead)
//!   run window k               run window k
//!   export cut-link mail ──┐ ┌─ export cut-link mail
//!   publish min(next), ... │ │  publish min(next), ...
//!   ═══════════════════════╪═╪═══ spin barrier ═══════════  (the one sync point per window)
//!   import mail ◄──────────┘ └─► import mail
//!   W' = global min(next)        W' = global min(next)       idle stretches are skipped
//! ```
//!
//! Every partition builds the whole system (so ids, names and trace tracks agree) and keeps
//! its own components ([`crate::SimBuilder::build_partition`]). Within a window no partition
//! can affect another (cut links are at least one lookahead long), so each runs alone; the
//! cut-link messages and credits of the window are exchanged at its end, typed and without
//! serialization, through mailboxes double-buffered by window parity. The next window starts
//! at the global minimum of the partitions' next events and of the exchanged arrival times.
//!
//! **Same results as serial.** A message on a cut link is delivered into the receiver's
//! buffer and the receiver armed at its arrival, exactly as a serial send arms it; a credit
//! is pushed onto the sender's pending returns and a sender asleep without credits is woken
//! at the first return, which is when a serial run wakes it. Statistics are merged by owner
//! (link statistics: traffic from the sender's side, waits and occupancy from the receiver's,
//! occupancy replayed in time order at each window's end), and trace records are merged by
//! (time, component), the order a serial run emits them in. So statistics JSON and trace
//! bytes equal the serial run's (tested on random graphs and on the 144-chip all-reduce).
//!
//! **More partitions than threads** ([`ParallelConfig::workers`]): a thread runs its
//! partitions' window steps in turn (export and publish each, one barrier arrival for the
//! thread, then import and run each window), so the exchange is the same as with a thread
//! each and so are the results.
//!
//! Left out: link tracing (occupancy counters, VCD signals) in partitioned runs (refused with
//! an error); `run_until` conditions; moving partitions between threads while they run
//! (partition `p` stays on thread `p % workers`). Each partition declares the whole system and
//! makes only its own components, which costs build time.

mod barrier;
mod part;
mod process;
mod threads;
pub(crate) mod wire;

use crate::builder::SimBuilder;
use crate::error::{BuildError, DeadlockReport, RunError};
use crate::link::LinkStats;
use crate::partition::{PartitionError, PartitionPlan, PartitionRule};
use crate::sim::{write_kernel_stats, write_link_stats, LinkSelection, Simulation, Stop, TraceOptions};
use crate::stats::StatsReport;
use crate::time::{Dur, Time};
use crate::trace::{TraceRecord, TraceSink};
use crate::trace_state::TraceState;
use part::PartReport;
pub use process::{run_transport, LoopbackTransport, Transport};
use std::fmt;
use std::time::{Duration, Instant};
pub use threads::run_threads;

/// How to run in parallel.
#[derive(Clone, Debug)]
pub struct ParallelConfig {
    /// Partitions (>= 1; 1 runs the partitioned machinery on one thread); each on its own
    /// thread unless `workers` says fewer.
    pub threads: u32,
    /// Threads to run the partitions on, when fewer than partitions (None: one thread per
    /// partition): partition `p` runs on thread `p % workers`, each thread running its
    /// partitions' windows in turn. On fewer cores than partitions this beats a thread each
    /// (no thread switches, waits spin instead of sleeping), and it keeps what more
    /// partitions than cores pay for whole chips: each partition's state stays in cache
    /// through its window. Results are the same whatever the count. The processes backend
    /// runs one partition per rank and ignores it.
    pub workers: Option<u32>,
    /// How to split the system.
    pub rule: PartitionRule,
    /// A lower bound the cut links must respect (a located error otherwise); by default the
    /// lookahead is simply the shortest cut link.
    pub min_lookahead: Option<Dur>,
    /// Called on the calling thread (partition 0's) after each window with the simulated time
    /// reached, e.g. to show progress; it only observes the run.
    pub on_window: Option<WindowHook>,
    /// The components whose statistics the merged report keeps, by name (all when None), as
    /// [`crate::Simulation::report_where`] keeps them: each partition reports only those, and
    /// counts the others that would have written something
    /// ([`ParallelRun::left_out`]). Links are not filtered here
    /// ([`crate::SimBuilder::keep_link_stats_where`] is their filter).
    pub report_where: Option<ReportFilter>,
}

impl ParallelConfig {
    /// `parts` partitions (a thread each, or a transport's ranks) under `rule`: the lookahead
    /// the shortest cut link gives, no window hook, every component reported.
    pub fn new(parts: u32, rule: PartitionRule) -> ParallelConfig {
        ParallelConfig { threads: parts, workers: None, rule, min_lookahead: None, on_window: None, report_where: None }
    }
}

/// Which components' statistics a partitioned run reports ([`ParallelConfig::report_where`]).
#[derive(Clone)]
pub struct ReportFilter(pub std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl std::fmt::Debug for ReportFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReportFilter")
    }
}

/// A function told the simulated time reached after each window of a partitioned run
/// ([`ParallelConfig::on_window`]).
#[derive(Clone)]
pub struct WindowHook(pub std::sync::Arc<dyn Fn(Time) + Send + Sync>);

impl std::fmt::Debug for WindowHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WindowHook")
    }
}

/// Where one partition's wall-clock time went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartitionTiming {
    /// Components it ticks.
    pub components: usize,
    /// Component ticks.
    pub ticks: u64,
    /// Windows run (the same for every partition).
    pub windows: u64,
    /// Wall time simulating and moving its own cut-link traffic.
    pub busy: Duration,
    /// Wall time waiting for the other partitions (in the window barrier, or the MPI
    /// collective): load imbalance within windows plus the pure synchronization cost.
    pub waiting: Duration,
}

/// The outcome of a partitioned run.
#[derive(Clone, Debug)]
pub struct ParallelRun {
    /// Why it stopped: a limit, idle, or a deadlock (statistics are still reported). A
    /// deadlock found by the no-progress window is noticed at a window boundary, so its stop
    /// time can be up to one lookahead later than a serial run's.
    pub outcome: Result<Stop, RunError>,
    /// Simulated time at the end.
    pub now: Time,
    /// Merged statistics, equal to the serial run's report.
    pub report: StatsReport,
    /// The partitioning used.
    pub plan: PartitionPlan,
    /// Per partition: where the wall time went.
    pub partitions: Vec<PartitionTiming>,
    /// Trace records written (0 without a sink).
    pub trace_records: u64,
    /// Owners left out of `report`, as a serial run's [`crate::Simulation::report_where`]
    /// counts them: links that keep no statistics
    /// ([`crate::SimBuilder::keep_link_stats_where`]) and components the report filter
    /// ([`ParallelConfig::report_where`]) left out that would have written something.
    pub left_out: u64,
}

impl ParallelRun {
    /// A per-partition table: components, ticks, busy and waiting time, windows.
    pub fn timing_table(&self) -> String {
        let mut s = format!(
            "partitions: {} (lookahead {}, {} cut links)\n{:>4}  {:>10}  {:>12}  {:>10}  {:>10}  {:>6}\n",
            self.plan.parts,
            if self.plan.lookahead == Dur::MAX { "unbounded".to_string() } else { self.plan.lookahead.to_string() },
            self.plan.cut.len(),
            "part",
            "components",
            "ticks",
            "busy_ms",
            "waiting_ms",
            "busy%"
        );
        for (i, p) in self.partitions.iter().enumerate() {
            let total = (p.busy + p.waiting).as_secs_f64().max(1e-12);
            s.push_str(&format!(
                "{:>4}  {:>10}  {:>12}  {:>10.1}  {:>10.1}  {:>5.1}%\n",
                i,
                p.components,
                p.ticks,
                p.busy.as_secs_f64() * 1e3,
                p.waiting.as_secs_f64() * 1e3,
                100.0 * p.busy.as_secs_f64() / total
            ));
        }
        if let Some(p) = self.partitions.first() {
            s.push_str(&format!("windows: {}\n", p.windows));
        }
        s
    }
}

/// Why a partitioned run failed, naming the phase.
#[derive(Debug)]
pub enum ParallelError {
    /// The system could not be planned into partitions.
    Partition(PartitionError),
    /// Building the system (or one partition of it) failed.
    Build(String),
    /// The run failed (deadlock, trace I/O).
    Run(RunError),
    /// What was asked cannot be done in a partitioned run.
    Unsupported(String),
    /// This partition stopped because another one failed (the run reports that one's error).
    Stopped,
    /// A partition's thread panicked; the others were stopped.
    Panicked {
        /// The partition.
        partition: u32,
        /// The panic message.
        message: String,
    },
}

impl fmt::Display for ParallelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParallelError::Partition(e) => e.fmt(f),
            ParallelError::Build(e) => write!(f, "build: {e}"),
            ParallelError::Run(e) => e.fmt(f),
            ParallelError::Unsupported(e) => write!(f, "partitioned run: {e}"),
            ParallelError::Stopped => write!(f, "partitioned run: stopped because another partition failed"),
            ParallelError::Panicked { partition, message } => {
                write!(f, "partition {partition} panicked: {message}")
            }
        }
    }
}

impl std::error::Error for ParallelError {}

impl From<PartitionError> for ParallelError {
    fn from(e: PartitionError) -> Self {
        ParallelError::Partition(e)
    }
}

impl From<BuildError> for ParallelError {
    fn from(e: BuildError) -> Self {
        ParallelError::Build(e.to_string())
    }
}

/// The window-end reduction: earliest next event (and exchanged arrival) over partitions,
/// progress and messages summed, outstanding work and abort or-ed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Summary {
    pub next: Time,
    /// The latest time step run (max over partitions): where a run that goes idle stops.
    pub last_step: Time,
    /// The latest step that made progress (max over partitions), for the deadlock rule.
    pub last_progress: Time,
    pub in_links: u64,
    pub outstanding: bool,
    pub abort: bool,
}

/// Summary words per partition (what partitions publish at a window's end).
pub(crate) const WORDS: usize = 5;
const OUTSTANDING: u64 = 1;
const ABORT: u64 = 2;

/// A summary as words.
pub(crate) fn words_of(s: &Summary) -> [u64; WORDS] {
    let flags = if s.outstanding { OUTSTANDING } else { 0 } | if s.abort { ABORT } else { 0 };
    [s.next.as_ps(), s.last_step.as_ps(), s.last_progress.as_ps(), s.in_links, flags]
}

/// The global summary from every partition's words (partition-major), reduced in partition
/// order: the same on every partition.
pub(crate) fn reduce(all: &[u64]) -> Summary {
    let mut g = Summary {
        next: Time::NEVER,
        last_step: Time::ZERO,
        last_progress: Time::ZERO,
        in_links: 0,
        outstanding: false,
        abort: false,
    };
    for w in all.chunks_exact(WORDS) {
        g.next = g.next.min(Time::from_ps(w[0]));
        g.last_step = g.last_step.max(Time::from_ps(w[1]));
        g.last_progress = g.last_progress.max(Time::from_ps(w[2]));
        g.in_links += w[3];
        g.outstanding |= w[4] & OUTSTANDING != 0;
        g.abort |= w[4] & ABORT != 0;
    }
    g
}

/// What one partition brings back.
pub(crate) struct Outcome<R> {
    pub stop: Result<Stop, DeadlockReport>,
    pub now: Time,
    pub report: PartReport,
    pub timing: PartitionTiming,
    pub trace_records: u64,
    pub inspected: R,
}

/// How partitions meet at a window's end (threads: typed mailboxes and a spin barrier;
/// processes: bytes through a [`Transport`]).
pub(crate) trait Exchanger {
    /// Moves the window's cut-link traffic out of `sim` and returns (earliest arrival or
    /// credit time among it, messages moved).
    fn export(&mut self, sim: &mut Simulation, k: u64) -> Result<(Time, u64), ParallelError>;
    /// Publishes `local`, waits for every partition, takes in the traffic addressed here, and
    /// on the trace writer (`merger`) writes the window's records of every partition merged
    /// by (time, component). Returns the global summary.
    fn sync(
        &mut self,
        sim: &mut Simulation,
        k: u64,
        local: &Summary,
        merger: Option<&mut TraceState>,
    ) -> Result<Summary, ParallelError>;
    /// Wall time spent waiting for the other partitions so far (in the barrier or the
    /// collective), as opposed to moving this partition's own traffic.
    fn waited(&self) -> Duration;
    /// A window ended with the partition at `now` ([`ParallelConfig::on_window`]).
    fn window_done(&self, _now: Time) {}
}

/// Builds partition `me` of `plan` in this thread or process (declared again in the scope of
/// that partition, so that only its components are made: [`crate::BuildScope`]) and attaches
/// the capturing trace state (all partitions) and the merging writer (`sink`, on the writer
/// only).
pub(crate) fn build_part<B>(
    build: &B,
    plan: &PartitionPlan,
    me: u32,
    tracing: bool,
    sink: Option<Box<dyn TraceSink>>,
) -> Result<(Simulation, Option<TraceState>), ParallelError>
where
    B: Fn() -> Result<SimBuilder, String> + ?Sized,
{
    let scope =
        crate::BuildScope::Part { part_of: plan.part_of.clone().into(), links: plan.links, me, tracks: tracing };
    let b = scope.enter(build).map_err(ParallelError::Build)?;
    let mut sim = b.build_partition(plan, me)?;
    if tracing {
        sim.core.comp_tracks = sim.comp_tracks.clone();
        sim.core.trace = Some(Box::new(TraceState::capturing(sim.links.len())));
    }
    let merger = sink.map(|s| TraceState::new(s, &sim.decls, Vec::new()));
    Ok((sim, merger))
}

/// Refuses trace options a partitioned run cannot honour.
pub(crate) fn check_trace(opts: Option<&TraceOptions>) -> Result<(), ParallelError> {
    if let Some(o) = opts {
        if o.link_occupancy || o.signal_links != LinkSelection::None {
            return Err(ParallelError::Unsupported(
                "link tracing (occupancy counters, VCD signals) is not available in partitioned runs; run serially for link waveforms".into(),
            ));
        }
    }
    Ok(())
}

/// Runs a built partition to the end and collects what it brings back.
pub(crate) fn run_part<R>(
    mut sim: Simulation,
    mut merger: Option<TraceState>,
    x: &mut dyn Exchanger,
    (plan, me): (&PartitionPlan, u32),
    limit: Dur,
    inspect: &dyn Fn(&Simulation) -> R,
    report_where: Option<&ReportFilter>,
) -> Result<Outcome<R>, ParallelError> {
    let mut timing = PartitionTiming { components: plan.sizes[me as usize], ..PartitionTiming::default() };
    let end = sim.now() + limit;
    let mut w = WindowLoop::new(&sim, end, plan.lookahead);
    let started = Instant::now();
    let stop = loop {
        let exported = x.export(&mut sim, w.k)?;
        let local = w.local(&sim, exported, &merger);
        let g = x.sync(&mut sim, w.k, &local, merger.as_mut())?;
        if let Some(stop) = w.next(&mut sim, &g, &mut merger) {
            timing.windows = w.k;
            timing.waiting = x.waited();
            timing.busy = started.elapsed().saturating_sub(timing.waiting);
            break stop?;
        }
        x.window_done(sim.now());
    };
    finish_part(sim, merger, stop, (plan, me), timing, inspect, report_where)
}

/// A partition's end after its last window: its components settle (as a serial run's do),
/// its trace is finished, and its statistics and `inspect`'s result are collected.
pub(crate) fn finish_part<R>(
    mut sim: Simulation,
    merger: Option<TraceState>,
    stop: Result<Stop, DeadlockReport>,
    (plan, me): (&PartitionPlan, u32),
    mut timing: PartitionTiming,
    inspect: &dyn Fn(&Simulation) -> R,
    report_where: Option<&ReportFilter>,
) -> Result<Outcome<R>, ParallelError> {
    if stop.is_ok() {
        // As a serial run ends: this partition's components settle.
        sim.settle(|i| plan.part_of[i] == me);
    }
    let now = sim.now();
    let mut trace_records = 0;
    if let Some(mut m) = merger {
        trace_records = m.records;
        m.finish(now).map_err(|e| ParallelError::Run(RunError::Trace(e)))?;
    }
    timing.ticks = sim.counters.ticks;
    let inspected = inspect(&sim);
    let report = sim.part_report(now, report_where.map(|f| &*f.0 as &dyn Fn(&str) -> bool));
    Ok(Outcome { stop, now, report, timing, trace_records, inspected })
}

/// How a partition's window loop ends: stopped (idle, at the limit, or deadlocked), or
/// failed.
pub(crate) type LoopEnd = Result<Result<Stop, DeadlockReport>, ParallelError>;

/// One partition's window loop between windows: exchange, decide, run a window, repeat.
/// Every partition takes the same decisions, from the same global summary. Its steps are
/// apart so that one thread can run several partitions' windows in turn (see the threads
/// backend): [`WindowLoop::local`] once the window's traffic is exported, then (once every
/// partition has published) [`WindowLoop::next`] with the global summary.
pub(crate) struct WindowLoop {
    /// Windows exchanged so far.
    pub k: u64,
    /// The last step that made progress anywhere, as of the last exchange.
    progress_at: Time,
    last_step: Time,
    window: Dur,
    end: Time,
    lookahead: Dur,
}

impl WindowLoop {
    pub(crate) fn new(sim: &Simulation, end: Time, lookahead: Dur) -> WindowLoop {
        WindowLoop {
            k: 0,
            progress_at: Time::ZERO,
            last_step: Time::ZERO,
            window: sim.opts.deadlock_window,
            end,
            lookahead,
        }
    }

    /// This partition's summary of the window just run, its cut-link traffic exported
    /// (`(bound, in_transit)`: [`Exchanger::export`]).
    pub(crate) fn local(
        &self,
        sim: &Simulation,
        (bound, in_transit): (Time, u64),
        merger: &Option<TraceState>,
    ) -> Summary {
        let mut local = sim.summary(bound, in_transit, self.progress_at + self.window, self.last_step);
        local.abort = sim.core.trace.as_ref().is_some_and(|t| t.error.is_some())
            || merger.as_ref().is_some_and(|m| m.error.is_some());
        local
    }

    /// Takes the global summary `g` of window `k` (its traffic imported): how the run ends,
    /// or None after running the next window.
    pub(crate) fn next(
        &mut self,
        sim: &mut Simulation,
        g: &Summary,
        merger: &mut Option<TraceState>,
    ) -> Option<LoopEnd> {
        self.k += 1;
        if g.abort {
            let own = sim.trace_failed().or_else(|| merger.as_mut().and_then(|m| m.error.take()).map(RunError::Trace));
            return Some(Err(match own {
                Some(e) => ParallelError::Run(e),
                None => ParallelError::Stopped,
            }));
        }
        if g.next.is_never() {
            // Where a serial run stands when nothing is left: at its last step.
            sim.core.now = g.last_step;
            if g.in_links > 0 || g.outstanding {
                return Some(Ok(Err(sim.deadlock_report(Dur::ZERO))));
            }
            return Some(Ok(Ok(Stop::Idle)));
        }
        if g.next >= self.end {
            sim.core.now = sim.core.now.max(self.end);
            return Some(Ok(Ok(Stop::Limit)));
        }
        // The serial rule: deadlock when the next step is more than the window past the last
        // step that made progress and work is outstanding. Windows never run past that
        // deadline, so the verdict and the stop time are the serial run's.
        self.progress_at = g.last_progress;
        let deadline = self.progress_at + self.window;
        let single_step = g.next > deadline;
        if single_step && (g.in_links > 0 || g.outstanding) {
            // Every partition computed `outstanding` (each one's next event is past it too).
            sim.core.now = g.last_step;
            return Some(Ok(Err(sim.deadlock_report(g.next.since(self.progress_at)))));
        }
        let wend = if single_step {
            g.next + Dur::from_ps(1)
        } else {
            (g.next + self.lookahead).min(deadline + Dur::from_ps(1))
        }
        .min(self.end);
        if let Some(t) = sim.run_window(wend) {
            self.last_step = t;
        }
        None
    }
}

/// Merges captured records of several partitions (each sorted by (time, component)) into
/// the order a serial run emits them in, and writes them.
pub(crate) fn merge_records(m: &mut TraceState, lists: &[&[(Time, u32, TraceRecord)]]) {
    let mut idx = vec![0usize; lists.len()];
    let total: usize = lists.iter().map(|l| l.len()).sum();
    let merged = (0..total).map(|_| {
        let (best, _) = lists
            .iter()
            .enumerate()
            .filter(|(i, l)| idx[*i] < l.len())
            .map(|(i, l)| (i, (l[idx[i]].0, l[idx[i]].1)))
            .min_by_key(|&(_, key)| key)
            .expect("records left");
        let r = lists[best][idx[best]].2;
        idx[best] += 1;
        r
    });
    m.emit_merged(merged);
}

/// Merges the partitions' outcomes into one run (or the first error).
pub(crate) fn merge<R>(
    plan: PartitionPlan,
    results: Vec<Result<Outcome<R>, ParallelError>>,
) -> Result<(ParallelRun, Vec<R>), ParallelError> {
    // The most telling error: a real one before "another partition failed".
    let mut first_err = None;
    let mut outs = Vec::new();
    for r in results {
        match r {
            Ok(o) => outs.push(o),
            Err(ParallelError::Stopped) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    if outs.len() != plan.parts as usize {
        return Err(ParallelError::Unsupported("a partition stopped without an error".into()));
    }
    let now = outs[0].now;
    // Deadlock: merge the partitions' reports.
    let mut outcome = Ok(outs[0].stop.clone().unwrap_or(Stop::Idle));
    if outs.iter().any(|o| o.stop.is_err()) {
        let mut rep: Option<DeadlockReport> = None;
        for o in &outs {
            if let Err(r) = &o.stop {
                match rep.as_mut() {
                    None => rep = Some(r.clone()),
                    Some(acc) => {
                        acc.messages_in_links += r.messages_in_links;
                        acc.blocked.extend(r.blocked.iter().cloned());
                        acc.full_links.extend(r.full_links.iter().cloned());
                        if acc.cycle.is_empty() {
                            acc.cycle = r.cycle.clone();
                        }
                    }
                }
            }
        }
        outcome = Err(RunError::Deadlock(Box::new(rep.expect("a deadlock report"))));
    }
    let mut report = StatsReport::default();
    // Per link: its statistics as merged so far, which sides have come in (`SIDE_SRC`: the
    // sender's, which counts traffic; `SIDE_DST`: the receiver's, which counts waits and
    // occupancy), with `UNRECORDED` if a side kept none and `RECORDED` if a side kept them,
    // and its name (from the sender's side).
    const RECORDED: u8 = 8;
    let mut links: Vec<(Option<LinkStats>, u8, String)> = Vec::new();
    let mut ticks = 0;
    let mut comps_left_out = 0;
    let mut trace_records = 0;
    let mut partitions = Vec::new();
    let mut inspected = Vec::new();
    for o in outs {
        report.owners.extend(o.report.comps.owners);
        for pl in o.report.links {
            let l = pl.id as usize;
            if links.len() <= l {
                links.resize_with(l + 1, || (None, 0, String::new()));
            }
            let is_src = pl.sides & part::SIDE_SRC != 0;
            let (merged, have, name) = &mut links[l];
            let st = pl.stats;
            match merged.as_mut() {
                None => *merged = Some(st),
                // The other side came first: take this side's share.
                Some(m) if is_src => (m.msgs, m.bytes, m.refused) = (st.msgs, st.bytes, st.refused),
                Some(m) => (m.occupancy, m.wait_ps) = (st.occupancy, st.wait_ps),
            }
            if is_src {
                *name = pl.name;
            }
            *have |= if pl.sides & part::UNRECORDED == 0 { pl.sides | RECORDED } else { pl.sides };
        }
        ticks += o.report.ticks;
        comps_left_out += o.report.left_out;
        trace_records += o.trace_records;
        partitions.push(o.timing);
        inspected.push(o.inspected);
    }
    let both = part::SIDE_SRC | part::SIDE_DST;
    let mut left_out = comps_left_out;
    // Written in link id order, as a serial report writes them (each link's owner is unique,
    // so the order only matters to how the map is filled, never to what it holds).
    for (id, (st, have, name)) in links.into_iter().enumerate() {
        if have == both | part::UNRECORDED {
            left_out += 1;
            continue;
        }
        let (Some(st), true, false) = (st, have == both | RECORDED, name.is_empty()) else {
            let which = if name.is_empty() { format!("{id} (no name came with it)") } else { name };
            return Err(ParallelError::Unsupported(format!(
                "link {which} has no owner, or keeps statistics on one side only"
            )));
        };
        write_link_stats(&mut report, &name, &st, now);
    }
    write_kernel_stats(&mut report, ticks, now);
    Ok((ParallelRun { outcome, now, report, plan, partitions, trace_records, left_out }, inspected))
}
