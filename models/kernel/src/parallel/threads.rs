//! The threads backend: one partition per thread, or several per thread run in turn, typed
//! mailboxes double-buffered by window parity, per-partition summary slots and a spin barrier
//! (one arrival per thread).

use super::barrier::{Slot, SpinBarrier};
use super::part::Mail;
use super::{
    build_part, check_trace, finish_part, merge, merge_records, LoopEnd, Outcome, ParallelConfig, ParallelError,
    ParallelRun, PartitionTiming, Summary, WindowLoop,
};
use crate::builder::SimBuilder;
use crate::partition::{PartitionError, PartitionPlan};
use crate::sim::{Simulation, TraceOptions};
use crate::time::{Dur, Time};
use crate::trace::TraceSink;
use crate::trace_state::{Captured, TraceState};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Everything the threads share.
struct Shared {
    parts: u32,
    barrier: SpinBarrier,
    /// [parity][partition]: each partition's summary of the window.
    slots: [Vec<Slot>; 2],
    /// [parity][src * parts + dst].
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

/// One partition's side of the exchange (a thread runs one or several partitions).
struct Side {
    me: u32,
    touched: Vec<u32>,
    capture: Captured,
}

impl Side {
    /// Moves the window's cut-link traffic out of `sim` into the mailboxes (see
    /// [`super::Exchanger::export`]).
    fn export(&mut self, shared: &Shared, sim: &mut Simulation, k: u64) -> (Time, u64) {
        let parity = (k % 2) as usize;
        let (mut bound, mut n) = (Time::NEVER, 0);
        for dst in (0..shared.parts).filter(|&d| d != self.me) {
            let mut m = shared.mail(parity, self.me, dst).lock().expect("mailbox");
            let (t, c) = sim.export_to(dst, &mut m);
            bound = bound.min(t);
            n += c;
        }
        (bound, n)
    }

    /// Before the barrier: publishes the summary and (on a partition that does not write the
    /// trace) the window's trace records.
    fn publish(&mut self, shared: &Shared, sim: &mut Simulation, k: u64, local: &Summary, writer: bool) {
        let parity = (k % 2) as usize;
        if !writer && sim.core.trace.is_some() {
            sim.take_capture(&mut self.capture);
            std::mem::swap(&mut *shared.capture[parity][self.me as usize].lock().expect("capture"), &mut self.capture);
            self.capture.clear();
        }
        shared.slots[parity][self.me as usize].publish(local);
    }

    /// After the barrier: takes in the traffic addressed here and, on the trace writer
    /// (`merger`), writes the window's records of every partition merged by (time,
    /// component).
    fn receive(&mut self, shared: &Shared, sim: &mut Simulation, k: u64, merger: Option<&mut TraceState>) {
        let (parity, me) = ((k % 2) as usize, self.me);
        for src in (0..shared.parts).filter(|&s| s != me) {
            let mut m = shared.mail(parity, src, me).lock().expect("mailbox");
            sim.import_from(&mut m, &mut self.touched);
        }
        sim.finish_import(&mut self.touched);
        if let Some(m) = merger {
            sim.take_capture(&mut self.capture);
            let mut guards: Vec<_> = (0..shared.parts)
                .filter(|&p| p != me)
                .map(|p| shared.capture[parity][p as usize].lock().expect("capture"))
                .collect();
            let mut lists: Vec<&[(Time, u32, crate::trace::TraceRecord)]> =
                guards.iter().map(|g| g.as_slice()).collect();
            lists.push(self.capture.as_slice());
            merge_records(m, &lists);
            for g in guards.iter_mut() {
                g.clear();
            }
            self.capture.clear();
        }
    }
}

/// A partition a thread runs: its simulation, trace writer (partition 0's, with a sink),
/// exchange side, window loop and timing.
struct Own {
    sim: Simulation,
    merger: Option<TraceState>,
    side: Side,
    w: WindowLoop,
    timing: PartitionTiming,
    end: Option<LoopEnd>,
}

/// Builds the system with `build` (called once to plan, then once per partition), splits it
/// under `cfg` and runs it for at most `limit` of simulated time or until idle, on
/// `cfg.threads` partitions: one thread each, or `cfg.workers` threads each running several
/// in turn (partition `p` on thread `p % workers`; partition 0 on the calling thread, which
/// also writes the trace). `inspect` is called on each partition's simulation after the run
/// (e.g. to check a component's state); its results come back by partition.
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
    check_trace(trace.as_ref().map(|t| &t.1))?;
    let parts = cfg.threads;
    if parts == 0 {
        return Err(PartitionError::NoPartitions.into());
    }
    let workers = match cfg.workers {
        None => parts,
        Some(0) => return Err(ParallelError::Unsupported("a partitioned run needs at least one thread".into())),
        Some(w) => w.min(parts),
    };
    let n2 = (parts * parts) as usize;
    let shared = Shared {
        parts,
        barrier: SpinBarrier::new(workers),
        slots: [(0..parts).map(|_| Slot::new()).collect(), (0..parts).map(|_| Slot::new()).collect()],
        mail: [(0..n2).map(|_| Mutex::default()).collect(), (0..n2).map(|_| Mutex::default()).collect()],
        capture: [(0..parts).map(|_| Mutex::default()).collect(), (0..parts).map(|_| Mutex::default()).collect()],
        poisoned: AtomicBool::new(false),
    };
    // Thread 0 declares the system (nothing made: names, clocks, links) and plans; the others
    // wait for the plan (one std barrier, once); then every thread builds its own partitions.
    let plan_cell: OnceLock<PartitionPlan> = OnceLock::new();
    let start = Barrier::new(workers as usize);
    let tracing = trace.is_some();
    let mut sink = trace.map(|(sink, _)| sink);
    // (`current`: the partition the thread is in, for a panic's message.)
    let thread = |t: u32,
                  sink: Option<Box<dyn TraceSink>>,
                  current: &std::cell::Cell<u32>|
     -> Result<Vec<Outcome<R>>, ParallelError> {
        // Thread 0 plans; if its build or plan fails it reports why, the others stop quietly.
        let mut own_error = None;
        if t == 0 {
            let declared = crate::BuildScope::Declare.enter(|| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(&build))
                    .unwrap_or_else(|_| Err("the system builder panicked".into()))
            });
            let plan = match &declared {
                Ok(b) => b.plan(&cfg.rule, parts, cfg.min_lookahead).map_err(ParallelError::Partition),
                Err(e) => Err(ParallelError::Build(e.clone())),
            };
            match plan {
                Ok(p) => {
                    let _ = plan_cell.set(p);
                }
                Err(e) => own_error = Some(e),
            }
        }
        start.wait();
        let Some(plan) = plan_cell.get() else {
            return Err(own_error.unwrap_or(ParallelError::Stopped));
        };
        let mut sink = sink;
        let mut own = Vec::new();
        for me in (t..parts).step_by(workers as usize) {
            current.set(me);
            let s = if me == 0 { sink.take() } else { None };
            let (sim, merger) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build_part(&build, plan, me, tracing, s)))
                    .unwrap_or_else(|_| Err(ParallelError::Build("the system builder panicked".into())))?;
            let w = WindowLoop::new(&sim, sim.now() + limit, plan.lookahead);
            let timing = PartitionTiming { components: plan.sizes[me as usize], ..PartitionTiming::default() };
            let side = Side { me, touched: Vec::new(), capture: Vec::new() };
            own.push(Own { sim, merger, side, w, timing, end: None });
        }
        let on_window = if t == 0 { cfg.on_window.as_ref() } else { None };
        let (mut waited, mut words, mut k) = (Duration::ZERO, Vec::with_capacity(parts as usize * super::WORDS), 0u64);
        let started = Instant::now();
        // One partition a thread: its busy time is the thread's less its waits; several: each
        // one's phases are timed.
        let alone = own.len() == 1;
        loop {
            for o in own.iter_mut() {
                current.set(o.side.me);
                let t0 = (!alone).then(Instant::now);
                let exported = o.side.export(&shared, &mut o.sim, k);
                let local = o.w.local(&o.sim, exported, &o.merger);
                o.side.publish(&shared, &mut o.sim, k, &local, o.merger.is_some());
                if let Some(t0) = t0 {
                    o.timing.busy += t0.elapsed();
                }
            }
            let t0 = Instant::now();
            let all_there = shared.barrier.wait(&shared.poisoned);
            waited += t0.elapsed();
            if !all_there {
                return Err(ParallelError::Stopped);
            }
            words.clear();
            for slot in &shared.slots[(k % 2) as usize] {
                slot.load(&mut words);
            }
            let g = super::reduce(&words);
            for o in own.iter_mut() {
                current.set(o.side.me);
                let t0 = (!alone).then(Instant::now);
                o.side.receive(&shared, &mut o.sim, k, o.merger.as_mut());
                o.end = o.w.next(&mut o.sim, &g, &mut o.merger);
                if let Some(t0) = t0 {
                    o.timing.busy += t0.elapsed();
                }
            }
            k += 1;
            // Every partition takes the same decision from the same summary: all end together.
            if own.iter().any(|o| o.end.is_some()) {
                break;
            }
            if let Some(h) = on_window {
                (h.0)(own[0].sim.now());
            }
        }
        let elapsed = started.elapsed();
        let mut out = Vec::with_capacity(own.len());
        for o in own {
            let Own { sim, merger, side, mut timing, end, .. } = o;
            timing.windows = k;
            timing.waiting = waited;
            if alone {
                timing.busy = elapsed.saturating_sub(waited);
            }
            current.set(side.me);
            let stop = end.ok_or(ParallelError::Stopped)??;
            out.push(finish_part(sim, merger, stop, (plan, side.me), timing, &inspect, cfg.report_where.as_ref())?);
        }
        Ok(out)
    };
    let results: Vec<Result<Vec<Outcome<R>>, ParallelError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..workers)
            .map(|t| {
                let (shared, thread) = (&shared, &thread);
                s.spawn(move || {
                    let current = std::cell::Cell::new(t);
                    guarded(shared, &current, || thread(t, None, &current))
                })
            })
            .collect();
        let current = std::cell::Cell::new(0);
        let mut out = vec![guarded(&shared, &current, || thread(0, sink.take(), &current))];
        for (i, h) in handles.into_iter().enumerate() {
            out.push(h.join().unwrap_or_else(|_| {
                Err(ParallelError::Panicked { partition: i as u32 + 1, message: "thread ended abnormally".into() })
            }));
        }
        out
    });
    // Back in partition order (partition p ran on thread p % workers, the `p / workers`-th).
    let mut by_part: Vec<Option<Result<Outcome<R>, ParallelError>>> = (0..parts).map(|_| None).collect();
    for (t, r) in results.into_iter().enumerate() {
        match r {
            Ok(outs) => {
                for (i, o) in outs.into_iter().enumerate() {
                    by_part[t + i * workers as usize] = Some(Ok(o));
                }
            }
            Err(e) => by_part[t] = Some(Err(e)),
        }
    }
    let results = by_part.into_iter().map(|r| r.unwrap_or(Err(ParallelError::Stopped))).collect();
    match plan_cell.into_inner() {
        Some(plan) => merge(plan, results),
        // The plan failed: thread 0's result holds the located error.
        None => Err(results.into_iter().next().and_then(|r| r.err()).unwrap_or(ParallelError::Stopped)),
    }
}

/// Runs `f`, turning a panic into an error (naming the partition `p` says was running) and
/// releasing the other threads.
fn guarded<T>(
    shared: &Shared,
    p: &std::cell::Cell<u32>,
    f: impl FnOnce() -> Result<T, ParallelError>,
) -> Result<T, ParallelError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => {
            if r.is_err() {
                shared.poisoned.store(true, Ordering::Release);
                shared.barrier.wake_all();
                shared.barrier.wake_all();
            }
            r
        }
        Err(e) => {
            shared.poisoned.store(true, Ordering::Release);
            shared.barrier.wake_all();
            let message = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(ParallelError::Panicked { partition: p.get(), message })
        }
    }
}
