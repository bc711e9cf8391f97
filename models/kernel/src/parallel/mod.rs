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
//! Left out: link tracing (occupancy counters, VCD signals) in partitioned runs (refused with
//! an error); `run_until` conditions; more partitions than threads. Each thread builds the
//! whole system and drops what is not its own, which costs build time and transient memory.

mod barrier;
mod part;

use crate::builder::SimBuilder;
use crate::error::{BuildError, DeadlockReport, RunError};
use crate::link::LinkStats;
use crate::partition::{PartitionError, PartitionPlan, PartitionRule};
use crate::sim::{write_kernel_stats, write_link_stats, LinkSelection, Simulation, Stop, TraceOptions};
use crate::stats::StatsReport;
use crate::time::{Dur, Time};
use crate::trace::{TraceRecord, TraceSink};
use crate::trace_state::{Captured, TraceState};
use barrier::{Reduce, SpinBarrier};
use part::{Mail, PartReport};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a partition reports when it stopped because another one failed.
const OTHER_FAILED: &str = "another partition failed";

/// How to run in parallel.
#[derive(Clone, Debug)]
pub struct ParallelConfig {
    /// Threads = partitions (>= 1; 1 runs the partitioned machinery on one thread).
    pub threads: u32,
    /// How to split the system.
    pub rule: PartitionRule,
    /// A lower bound the cut links must respect (a located error otherwise); by default the
    /// lookahead is simply the shortest cut link.
    pub min_lookahead: Option<Dur>,
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
    /// Wall time simulating and exchanging.
    pub busy: Duration,
    /// Wall time waiting at the window barrier for slower partitions.
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
    pub progress: u64,
    pub in_links: u64,
    pub outstanding: bool,
    pub abort: bool,
}

/// Everything the threads share.
struct Shared {
    parts: u32,
    barrier: SpinBarrier,
    reduce: [Reduce; 3],
    /// [parity][src][dst].
    mail: [Vec<Mutex<Mail>>; 2],
    /// [parity][partition]: trace records of the window.
    capture: [Vec<Mutex<Captured>>; 2],
    poisoned: AtomicBool,
}

impl Shared {
    fn mail(&self, parity: usize, src: u32, dst: u32) -> &Mutex<Mail> {
        &self.mail[parity][(src * self.parts + dst) as usize]
    }
}

/// Builds the system with `build` (called once to plan, then once per thread), splits it
/// under `cfg` and runs it for at most `limit` of simulated time or until idle, on
/// `cfg.threads` threads (partition 0 on the calling thread, which also writes the trace).
/// `inspect` is called on each partition's simulation after the run (e.g. to check a
/// component's state); its results come back by partition.
pub fn run_threads<B, I, R>(
    build: B,
    cfg: &ParallelConfig,
    limit: Dur,
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    inspect: I,
) -> Result<(ParallelRun, Vec<R>), ParallelError>
where
    B: Fn() -> Result<SimBuilder, String> + Sync,
    I: Fn(&Simulation) -> R + Sync,
    R: Send,
{
    let plan = build().map_err(ParallelError::Build)?.plan(&cfg.rule, cfg.threads, cfg.min_lookahead)?;
    if let Some((_, o)) = &trace {
        if o.link_occupancy || o.signal_links != LinkSelection::None {
            return Err(ParallelError::Unsupported(
                "link tracing (occupancy counters, VCD signals) is not available in partitioned runs; run serially for link waveforms".into(),
            ));
        }
    }
    let parts = plan.parts;
    let n2 = (parts * parts) as usize;
    let shared = Shared {
        parts,
        barrier: SpinBarrier::new(parts),
        reduce: [Reduce::new(), Reduce::new(), Reduce::new()],
        mail: [(0..n2).map(|_| Mutex::default()).collect(), (0..n2).map(|_| Mutex::default()).collect()],
        capture: [(0..parts).map(|_| Mutex::default()).collect(), (0..parts).map(|_| Mutex::default()).collect()],
        poisoned: AtomicBool::new(false),
    };
    let tracing = trace.is_some();
    let mut merger = trace.map(|(sink, _)| sink);
    let end_limit = limit;
    let results: Vec<Result<Outcome<R>, ParallelError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..parts)
            .map(|p| {
                let (shared, plan, build, inspect) = (&shared, &plan, &build, &inspect);
                s.spawn(move || {
                    guarded(shared, p, || partition_main(build, plan, p, shared, end_limit, tracing, None, inspect))
                })
            })
            .collect();
        let mut out = vec![guarded(&shared, 0, || {
            partition_main(&build, &plan, 0, &shared, end_limit, tracing, merger.take(), &inspect)
        })];
        for (i, h) in handles.into_iter().enumerate() {
            out.push(h.join().unwrap_or_else(|_| {
                Err(ParallelError::Panicked { partition: i as u32 + 1, message: "thread ended abnormally".into() })
            }));
        }
        out
    });
    merge(plan, results)
}

/// Runs `f`, turning a panic into an error and releasing the other threads.
fn guarded<R>(
    shared: &Shared,
    p: u32,
    f: impl FnOnce() -> Result<Outcome<R>, ParallelError>,
) -> Result<Outcome<R>, ParallelError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => {
            if r.is_err() {
                shared.poisoned.store(true, Ordering::Release);
            }
            r
        }
        Err(e) => {
            shared.poisoned.store(true, Ordering::Release);
            let message = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(ParallelError::Panicked { partition: p, message })
        }
    }
}

/// What one partition brings back.
struct Outcome<R> {
    stop: Result<Stop, DeadlockReport>,
    now: Time,
    report: PartReport,
    timing: PartitionTiming,
    trace_records: u64,
    inspected: R,
}

#[allow(clippy::too_many_arguments)]
fn partition_main<B, I, R>(
    build: &B,
    plan: &PartitionPlan,
    me: u32,
    shared: &Shared,
    limit: Dur,
    tracing: bool,
    sink: Option<Box<dyn TraceSink>>,
    inspect: &I,
) -> Result<Outcome<R>, ParallelError>
where
    B: Fn() -> Result<SimBuilder, String>,
    I: Fn(&Simulation) -> R,
{
    let built = build().map_err(ParallelError::Build).and_then(|b| Ok(b.build_partition(plan, me)?));
    let mut sim = match built {
        Ok(s) => s,
        Err(e) => {
            // Still take part in the first window so the others learn of the abort.
            shared.poisoned.store(true, Ordering::Release);
            return Err(e);
        }
    };
    if tracing {
        sim.core.comp_tracks = sim.comp_tracks.clone();
        sim.core.trace = Some(Box::new(TraceState::capturing(sim.links.len())));
    }
    let mut merger = sink.map(|s| TraceState::new(s, &sim.decls, Vec::new()));
    let mut timing = PartitionTiming { components: plan.sizes[me as usize], ..PartitionTiming::default() };
    let end = sim.now() + limit;
    let stop = window_loop(&mut sim, shared, me, end, plan.lookahead, &mut merger, &mut timing)?;
    let now = sim.now();
    let mut trace_records = 0;
    if let Some(mut m) = merger {
        trace_records = m.records;
        m.finish(now).map_err(|e| ParallelError::Run(RunError::Trace(e)))?;
    }
    timing.ticks = sim.counters.ticks;
    let report = sim.part_report(now);
    let inspected = inspect(&sim);
    Ok(Outcome { stop, now, report, timing, trace_records, inspected })
}

/// The window loop of one partition: exchange, decide, run a window, repeat.
fn window_loop(
    sim: &mut Simulation,
    shared: &Shared,
    me: u32,
    end: Time,
    lookahead: Dur,
    merger: &mut Option<TraceState>,
    timing: &mut PartitionTiming,
) -> Result<Result<Stop, DeadlockReport>, ParallelError> {
    let parts = shared.parts;
    let mut k: u64 = 0;
    let mut touched = Vec::new();
    let mut capture = Vec::new();
    // The last step that made progress anywhere (as of the last exchange), and whether the
    // next window is a single step (no progress, no work: walk like the serial run does).
    let mut progress_at = Time::ZERO;
    let mut last_step = Time::ZERO;
    let window = sim.opts.deadlock_window;
    loop {
        let t0 = Instant::now();
        let parity = (k % 2) as usize;
        // Hand out this window's traffic and summarise.
        let (mut bound, mut in_transit) = (Time::NEVER, 0);
        for dst in (0..parts).filter(|&d| d != me) {
            let mut m = shared.mail(parity, me, dst).lock().expect("mailbox");
            let (t, n) = sim.export_to(dst, &mut m);
            bound = bound.min(t);
            in_transit += n;
        }
        let mut local = sim.summary(bound, in_transit, progress_at + window, last_step);
        local.abort = sim.core.trace.as_ref().is_some_and(|t| t.error.is_some())
            || merger.as_ref().is_some_and(|m| m.error.is_some());
        if merger.is_none() && sim.core.trace.is_some() {
            sim.take_capture(&mut capture);
            std::mem::swap(&mut *shared.capture[parity][me as usize].lock().expect("capture"), &mut capture);
            capture.clear();
        }
        let red = &shared.reduce[(k % 3) as usize];
        red.publish(&local);
        let t1 = Instant::now();
        if !shared.barrier.wait(&shared.poisoned) {
            return Err(ParallelError::Unsupported(OTHER_FAILED.into()));
        }
        let t2 = Instant::now();
        let g = red.read();
        if me == 0 {
            shared.reduce[((k + 2) % 3) as usize].reset();
        }
        // Take in what the others sent here.
        for src in (0..parts).filter(|&s| s != me) {
            let mut m = shared.mail(parity, src, me).lock().expect("mailbox");
            sim.import_from(&mut m, &mut touched);
        }
        sim.finish_import(&mut touched);
        if let Some(m) = merger.as_mut() {
            sim.take_capture(&mut capture);
            merge_trace(m, shared, parity, me, &mut capture);
        }
        k += 1;
        timing.windows = k;
        timing.busy += (t1 - t0) + t2.elapsed();
        timing.waiting += t2 - t1;
        if g.abort {
            let own = sim.trace_failed().or_else(|| merger.as_mut().and_then(|m| m.error.take()).map(RunError::Trace));
            return Err(match own {
                Some(e) => ParallelError::Run(e),
                None => ParallelError::Unsupported(OTHER_FAILED.into()),
            });
        }
        // Decide, the same way in every partition (from the same global summary).
        if g.next.is_never() {
            // Where a serial run stands when nothing is left: at its last step.
            sim.core.now = g.last_step;
            if g.in_links > 0 || g.outstanding {
                return Ok(Err(sim.local_deadlock(Dur::ZERO)));
            }
            return Ok(Ok(Stop::Idle));
        }
        if g.next >= end {
            sim.core.now = sim.core.now.max(end);
            return Ok(Ok(Stop::Limit));
        }
        // The serial rule: deadlock when the next step is more than the window past the last
        // step that made progress and work is outstanding. Windows never run past that
        // deadline, so the verdict and the stop time are the serial run's.
        progress_at = g.last_progress;
        let deadline = progress_at + window;
        let single_step = g.next > deadline;
        if single_step && (g.in_links > 0 || g.outstanding) {
            // Every partition computed `outstanding` (each one's next event is past it too).
            sim.core.now = g.last_step;
            return Ok(Err(sim.local_deadlock(g.next.since(progress_at))));
        }
        let t3 = Instant::now();
        let wend =
            if single_step { g.next + Dur::from_ps(1) } else { (g.next + lookahead).min(deadline + Dur::from_ps(1)) }
                .min(end);
        if let Some(t) = sim.run_window(wend) {
            last_step = t;
        }
        timing.busy += t3.elapsed();
    }
}

/// Partition 0 merges every partition's captured records of the window by (time, component),
/// the order a serial run emits them in, and writes them.
fn merge_trace(m: &mut TraceState, shared: &Shared, parity: usize, me: u32, own: &mut Captured) {
    let mut guards: Vec<_> = (0..shared.parts)
        .filter(|&p| p != me)
        .map(|p| shared.capture[parity][p as usize].lock().expect("capture"))
        .collect();
    let mut lists: Vec<&[(Time, u32, TraceRecord)]> = guards.iter().map(|g| g.as_slice()).collect();
    lists.push(own.as_slice());
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
    for g in guards.iter_mut() {
        g.clear();
    }
    own.clear();
}

/// Merges the partitions' outcomes into one run (or the first error).
fn merge<R>(
    plan: PartitionPlan,
    results: Vec<Result<Outcome<R>, ParallelError>>,
) -> Result<(ParallelRun, Vec<R>), ParallelError> {
    // The most telling error: a real one before "another partition failed".
    let mut first_err = None;
    let mut outs = Vec::new();
    for r in results {
        match r {
            Ok(o) => outs.push(o),
            Err(ParallelError::Unsupported(m)) if m == OTHER_FAILED => {}
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
    let mut traffic: Vec<Option<LinkStats>> = Vec::new();
    let mut received: Vec<Option<LinkStats>> = Vec::new();
    let mut ticks = 0;
    let mut trace_records = 0;
    let mut partitions = Vec::new();
    let mut inspected = Vec::new();
    let mut infos = Vec::new();
    for o in outs {
        report.owners.extend(o.report.comps.owners);
        for (l, st, is_src, is_dst) in o.report.links {
            let l = l as usize;
            if traffic.len() <= l {
                traffic.resize(l + 1, None);
                received.resize(l + 1, None);
            }
            // The sender's side counts traffic; the receiver's side waits and occupancy.
            if is_src {
                traffic[l] = Some(st.clone());
            }
            if is_dst {
                received[l] = Some(st);
            }
        }
        ticks += o.report.ticks;
        trace_records += o.trace_records;
        partitions.push(o.timing);
        inspected.push(o.inspected);
        if infos.is_empty() {
            infos = o.report.infos;
        }
    }
    for (i, info) in infos.iter().enumerate() {
        let (Some(Some(t)), Some(Some(r))) = (traffic.get(i), received.get(i)) else {
            return Err(ParallelError::Unsupported(format!("link {} has no owner", info.name)));
        };
        let st = LinkStats {
            msgs: t.msgs,
            bytes: t.bytes,
            refused: t.refused,
            occupancy: r.occupancy.clone(),
            wait_ps: r.wait_ps.clone(),
        };
        write_link_stats(&mut report, info, &st, now);
    }
    write_kernel_stats(&mut report, ticks, now);
    Ok((ParallelRun { outcome, now, report, plan, partitions, trace_records }, inspected))
}
