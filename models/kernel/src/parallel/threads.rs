//! The threads backend: one partition per thread, typed mailboxes double-buffered by window
//! parity, per-partition summary slots and a spin barrier.

use super::barrier::{Slot, SpinBarrier};
use super::part::Mail;
use super::{
    build_part, check_trace, merge, merge_records, run_part, Exchanger, Outcome, ParallelConfig, ParallelError,
    ParallelRun, Summary,
};
use crate::builder::SimBuilder;
use crate::partition::{PartitionError, PartitionPlan};
use crate::sim::{Simulation, TraceOptions};
use crate::time::{Dur, Time};
use crate::trace::TraceSink;
use crate::trace_state::{Captured, TraceState};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};

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

/// One thread's side of the exchange.
struct ThreadExchanger<'a> {
    shared: &'a Shared,
    me: u32,
    touched: Vec<u32>,
    capture: Captured,
    waited: std::time::Duration,
    words: Vec<u64>,
    /// Partition 0's: told each window's end.
    on_window: Option<&'a super::WindowHook>,
}

impl Exchanger for ThreadExchanger<'_> {
    fn export(&mut self, sim: &mut Simulation, k: u64) -> Result<(Time, u64), ParallelError> {
        let parity = (k % 2) as usize;
        let (mut bound, mut n) = (Time::NEVER, 0);
        for dst in (0..self.shared.parts).filter(|&d| d != self.me) {
            let mut m = self.shared.mail(parity, self.me, dst).lock().expect("mailbox");
            let (t, c) = sim.export_to(dst, &mut m);
            bound = bound.min(t);
            n += c;
        }
        Ok((bound, n))
    }

    fn sync(
        &mut self,
        sim: &mut Simulation,
        k: u64,
        local: &Summary,
        merger: Option<&mut TraceState>,
    ) -> Result<Summary, ParallelError> {
        let (shared, me) = (self.shared, self.me);
        let parity = (k % 2) as usize;
        if merger.is_none() && sim.core.trace.is_some() {
            sim.take_capture(&mut self.capture);
            std::mem::swap(&mut *shared.capture[parity][me as usize].lock().expect("capture"), &mut self.capture);
            self.capture.clear();
        }
        shared.slots[parity][me as usize].publish(local);
        let t = std::time::Instant::now();
        let all_there = shared.barrier.wait(&shared.poisoned);
        self.waited += t.elapsed();
        if !all_there {
            return Err(ParallelError::Stopped);
        }
        self.words.clear();
        for slot in &shared.slots[parity] {
            slot.load(&mut self.words);
        }
        let g = super::reduce(&self.words);
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
        Ok(g)
    }

    fn waited(&self) -> std::time::Duration {
        self.waited
    }

    fn window_done(&self, now: Time) {
        if let Some(h) = self.on_window {
            (h.0)(now);
        }
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
    check_trace(trace.as_ref().map(|t| &t.1))?;
    let parts = cfg.threads;
    if parts == 0 {
        return Err(PartitionError::NoPartitions.into());
    }
    let n2 = (parts * parts) as usize;
    let shared = Shared {
        parts,
        barrier: SpinBarrier::new(parts),
        slots: [(0..parts).map(|_| Slot::new()).collect(), (0..parts).map(|_| Slot::new()).collect()],
        mail: [(0..n2).map(|_| Mutex::default()).collect(), (0..n2).map(|_| Mutex::default()).collect()],
        capture: [(0..parts).map(|_| Mutex::default()).collect(), (0..parts).map(|_| Mutex::default()).collect()],
        poisoned: AtomicBool::new(false),
    };
    // Thread 0 declares the system (nothing made: names, clocks, links) and plans; the others
    // wait for the plan (one std barrier, once); then every thread builds its own partition.
    let plan_cell: OnceLock<PartitionPlan> = OnceLock::new();
    let start = Barrier::new(parts as usize);
    let tracing = trace.is_some();
    let mut sink = trace.map(|(sink, _)| sink);
    let thread = |me: u32, sink: Option<Box<dyn TraceSink>>| -> Result<Outcome<R>, ParallelError> {
        // Thread 0 plans; if its build or plan fails it reports why, the others stop quietly.
        let mut own_error = None;
        if me == 0 {
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
        let (sim, merger) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build_part(&build, plan, me, tracing, sink)))
                .unwrap_or_else(|_| Err(ParallelError::Build("the system builder panicked".into())))?;
        let mut x = ThreadExchanger {
            shared: &shared,
            me,
            touched: Vec::new(),
            capture: Vec::new(),
            waited: std::time::Duration::ZERO,
            words: Vec::with_capacity(parts as usize * super::WORDS),
            on_window: if me == 0 { cfg.on_window.as_ref() } else { None },
        };
        run_part(sim, merger, &mut x, (plan, me), limit, &inspect, cfg.report_where.as_ref())
    };
    let results: Vec<Result<Outcome<R>, ParallelError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (1..parts)
            .map(|p| {
                let (shared, thread) = (&shared, &thread);
                s.spawn(move || guarded(shared, p, || thread(p, None)))
            })
            .collect();
        let mut out = vec![guarded(&shared, 0, || thread(0, sink.take()))];
        for (i, h) in handles.into_iter().enumerate() {
            out.push(h.join().unwrap_or_else(|_| {
                Err(ParallelError::Panicked { partition: i as u32 + 1, message: "thread ended abnormally".into() })
            }));
        }
        out
    });
    match plan_cell.into_inner() {
        Some(plan) => merge(plan, results),
        // The plan failed: thread 0's result holds the located error.
        None => Err(results.into_iter().next().and_then(|r| r.err()).unwrap_or(ParallelError::Stopped)),
    }
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
            Err(ParallelError::Panicked { partition: p, message })
        }
    }
}
