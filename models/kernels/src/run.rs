//! Running a kernel's per-core programs on one whole cycle-level chip, and the op cache: each
//! distinct (program, chip description) is simulated once per process (and, with an on-disk
//! cache, once per build: [`crate::disk`]).
//!
//! The cache is shared by every thread of the process: a program one thread is simulating is
//! waited for by another that asks for it, not simulated twice. Simulations are deterministic
//! and share nothing, so a cached time is the one a new run would give, whichever thread ran
//! it: the cache never changes a result.

use crate::disk::{DiskCache, Found};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use trnsim_core::engine::EngineUnit;
use trnsim_core::isa::asm::{assemble, render_errors, AsmOptions};
use trnsim_kernel::{Dur, SimBuilder, SimOptions, TickOrder, Time};
use trnsim_system::chip::{self, Chip};

/// Simulated time a kernel program may take before it is an error.
pub const KERNEL_TIME_LIMIT: Dur = Dur::from_us(100_000);

/// The chip description a simulated time depends on (the chip's spec, its core, its HBM stack
/// and DMA parameters), as text: part of every op cache key.
pub fn chip_key(chip: &Chip) -> String {
    format!("{:?}|{:?}|{:?}|{:?}", chip.spec, chip.core, chip.hbm, chip.dma)
}

/// A program's simulated time and its two edges, in ps: `head`, from its start until the
/// first data instruction of any engine issues (its first loads' DMA start latency and
/// transfer), and `tail`, from the last data instruction's completion to its end (its last
/// stores). A compiled graph overlaps both with the ops before and after it
/// ([`crate::cycle`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    /// The time until every engine has halted.
    pub end: u64,
    /// Start to the first data instruction's issue (at most `end`).
    pub head: u64,
    /// The last data instruction's completion to the end (at most `end - head`).
    pub tail: u64,
}

impl Timing {
    /// The time, in ns.
    pub fn ns(&self) -> f64 {
        Time::from_ps(self.end).as_ns_f64()
    }
    /// The head, in ns.
    pub fn head_ns(&self) -> f64 {
        Time::from_ps(self.head).as_ns_f64()
    }
    /// The tail, in ns.
    pub fn tail_ns(&self) -> f64 {
        Time::from_ps(self.tail).as_ns_f64()
    }
}

/// Runs `texts` (one program per core of `chip`, `label` naming them in errors) on the
/// cycle-level chip; the time until every engine has halted, in ns.
pub fn run_programs(chip: &Chip, label: &str, texts: &[String]) -> Result<f64, String> {
    Ok(run_programs_ps(chip, label, texts, true)?.ns())
}

/// [`run_programs`] with the program's edges ([`Timing`]).
pub fn run_programs_timed(chip: &Chip, label: &str, texts: &[String]) -> Result<Timing, String> {
    run_programs_ps(chip, label, texts, true)
}

/// [`run_programs`] on every core and stack of `chip`, never cut to one stack ([`one_stack`]):
/// the reference the cut is checked against.
pub fn run_programs_whole(chip: &Chip, label: &str, texts: &[String]) -> Result<f64, String> {
    Ok(run_programs_ps(chip, label, texts, false)?.ns())
}

/// [`run_programs`], the time as the simulation's end and the program's edges read from its
/// engines' first issue and last completion. Nothing else is read, so the run keeps no link
/// statistics and writes no trace, and where every stack's cores run the same programs as the
/// first stack's, only that stack and its cores are simulated ([`one_stack`]).
fn run_programs_ps(chip: &Chip, label: &str, texts: &[String], cut: bool) -> Result<Timing, String> {
    let opts = AsmOptions::for_core(&chip.core);
    let programs = texts
        .iter()
        .enumerate()
        .map(|(i, t)| assemble(&format!("{label} nc{i}.asm (generated)"), t, &opts).map_err(|e| render_errors(&e)))
        .collect::<Result<Vec<_>, _>>()?;
    let part = if cut { one_stack(chip, texts) } else { None };
    let (chip, programs) = match &part {
        Some(c) => (c, &programs[..c.spec.cores as usize]),
        None => (chip, &programs[..]),
    };
    let mut b = SimBuilder::with_options(SimOptions { tick_order: TickOrder::Structural, ..SimOptions::default() });
    let ids = chip::build(&mut b, chip, programs, false)?;
    b.keep_link_stats_where(&|_| false).map_err(|e| e.to_string())?;
    let ids = [ids];
    let sim = chip::run_to_end(b, &ids, None, KERNEL_TIME_LIMIT)?;
    let end = sim.now().as_ps();
    // The first data instruction's issue and the last one's completion over every engine.
    let (mut first, mut last) = (end, 0u64);
    for core in &ids[0].cores {
        for (e, id) in &core.engines {
            let Some(unit) = sim.component::<EngineUnit>(*id) else { continue };
            let Some(clock) = core.clocks.iter().find(|(c, _)| c == e).map(|(_, k)| sim.clock(*k)) else { continue };
            if let Some(f) = unit.stats.first {
                first = first.min(clock.edge(f).as_ps());
                last = last.max(clock.edge(unit.stats.last).as_ps());
            }
        }
    }
    let head = first.min(end);
    let tail = end.saturating_sub(last.max(head));
    Ok(Timing { end, head, tail })
}

/// The chip cut to its first stack and that stack's cores, when running `texts` on it ends at
/// the whole chip's time: the stacks and their cores share nothing (each core's DMA engines
/// reach its own stack only; no component of a chip alone joins two stacks, and none draws
/// random numbers), so stacks whose cores run the same programs run alike, cycle for cycle,
/// and the chip ends when its first stack's cores do. None (simulate the whole chip) when the
/// programs differ between stacks, the cores do not fill the stacks evenly, or the chip swaps
/// RTL blocks into named instances.
pub fn one_stack(chip: &Chip, texts: &[String]) -> Option<Chip> {
    let h = &chip.spec.hbm;
    let cps = h.cores_per_stack as usize;
    let even = h.stacks > 1 && cps > 0 && chip.spec.cores == h.stacks.checked_mul(h.cores_per_stack)?;
    let alike = texts.len() == chip.spec.cores as usize && texts.iter().enumerate().all(|(i, t)| *t == texts[i % cps]);
    if !even || !alike || !chip.spec.rtl.is_empty() {
        return None;
    }
    let mut part = chip.clone();
    part.spec.cores = h.cores_per_stack;
    part.spec.hbm.stacks = 1;
    Some(part)
}

/// One slot of the process's cache: a time, or a simulation under way on some thread.
#[derive(Clone, Copy)]
enum Slot {
    Running,
    Done(Timing),
}

struct Cache {
    slots: Mutex<HashMap<String, Slot>>,
    done: Condvar,
}

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Cache { slots: Mutex::new(HashMap::new()), done: Condvar::new() })
}

fn slots() -> MutexGuard<'static, HashMap<String, Slot>> {
    cache().slots.lock().unwrap_or_else(|e| e.into_inner())
}

/// A key this thread simulates: filled with its time, or given up (an error, a panic) when
/// dropped unfilled, so a waiting thread simulates it itself.
struct Claim<'k> {
    key: &'k str,
    filled: bool,
}

impl Claim<'_> {
    fn fill(mut self, t: Timing) {
        slots().insert(self.key.to_string(), Slot::Done(t));
        self.filled = true;
        cache().done.notify_all();
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.filled {
            slots().remove(self.key);
            cache().done.notify_all();
        }
    }
}

/// The cached time of `key`, or the claim to simulate it (waiting while another thread
/// simulates it).
fn claim(key: &str) -> Result<Timing, Claim<'_>> {
    let mut s = slots();
    loop {
        match s.get(key) {
            Some(Slot::Done(t)) => return Ok(*t),
            Some(Slot::Running) => s = cache().done.wait(s).unwrap_or_else(|e| e.into_inner()),
            None => {
                s.insert(key.to_string(), Slot::Running);
                return Err(Claim { key, filled: false });
            }
        }
    }
}

/// Whether `key`'s time is in the process's cache already.
pub fn is_cached(key: &str) -> bool {
    matches!(slots().get(key), Some(Slot::Done(_)))
}

/// [`run_programs`] once per process for each distinct `key` (which must name the programs
/// and the chip: [`chip_key`] and the kernel's plan): the time, and whether it was cached.
pub fn cached(key: &str, run: impl FnOnce() -> Result<Timing, String>) -> Result<(Timing, bool), String> {
    match claim(key) {
        Ok(t) => Ok((t, true)),
        Err(c) => {
            let t = run()?;
            c.fill(t);
            Ok((t, false))
        }
    }
}

/// How a run's op programs are simulated: on how many threads, and whether their times are
/// kept on disk beside the process's cache. Neither changes a time.
#[derive(Clone, Debug, Default)]
pub struct OpRuns {
    /// Threads distinct programs are simulated on (`--jobs`; 0 and 1: this thread alone).
    pub jobs: usize,
    /// The on-disk cache (`--op-cache DIR`), if any.
    pub disk: Option<Arc<DiskCache>>,
}

/// The time of `label`'s per-core programs (`texts`, made only if they must be simulated or
/// looked up on disk) on `chip`, with its edges, once per process for each `key` (the chip's
/// [`chip_key`], `chip_key`, followed by the kernel's plan). With an on-disk cache, a program
/// simulated by an earlier process of this build is read from it (entries that do not hold are
/// noted and simulated again), and one simulated here is stored. Also whether it was cached.
pub fn program_time(
    ops: &OpRuns,
    chip: &Chip,
    chip_key: &str,
    key: &str,
    label: &str,
    texts: impl FnOnce() -> Vec<String>,
) -> Result<(Timing, bool), String> {
    let c = match claim(key) {
        Ok(t) => return Ok((t, true)),
        Err(c) => c,
    };
    let texts = texts();
    let Some(disk) = &ops.disk else {
        let t = run_programs_ps(chip, label, &texts, true)?;
        c.fill(t);
        return Ok((t, false));
    };
    let digest = disk.digest(chip_key, label, &texts);
    match disk.lookup(digest) {
        Found::Time(t) => {
            c.fill(t);
            return Ok((t, true));
        }
        Found::Missing => {}
        Found::Bad(e) => eprintln!("note: {e} (an op cache entry that does not hold: ignored, simulated again)"),
    }
    let t = run_programs_ps(chip, label, &texts, true)?;
    c.fill(t);
    if let Err(e) = disk.store(digest, label, t) {
        eprintln!("note: op cache: {e} (the time is not kept)");
    }
    Ok((t, false))
}

/// Empties the process's op cache (tests comparing cold and warm runs). Simulations under way
/// on other threads are left to finish.
pub fn clear_cache() {
    slots().retain(|_, s| matches!(s, Slot::Running));
}

/// Runs `work(i)` for every `i` in `0..n` on up to `jobs` threads (this one among them), each
/// thread taking the next index in turn; stops handing out indices once one returns false.
/// With `jobs` <= 1 or `n` <= 1, in order on this thread.
pub fn on_threads(n: usize, jobs: usize, work: &(dyn Fn(usize) -> bool + Sync)) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let threads = jobs.min(n).max(1);
    if threads == 1 {
        for i in 0..n {
            if !work(i) {
                return;
            }
        }
        return;
    }
    let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    let worker = || {
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            if !work(i) {
                stop.store(true, Ordering::Relaxed);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(worker);
        }
        worker();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Programs of each kind the library makes, on Trn3 (8 cores, 4 stacks) and Trn2 (8
    /// cores, 4 stacks of another HBM): the first stack alone ends at the whole chip's
    /// picosecond, and programs that differ between stacks are not cut.
    #[test]
    fn one_stack_ends_at_the_whole_chips_time() {
        use crate::format::Format;
        use crate::plan::{plan, GemmOp};
        let g = |m, k, n, format, w_mxfp4| GemmOp {
            m,
            k,
            n,
            count: 1,
            a_resident: false,
            b_resident: false,
            format,
            w_mxfp4,
            w_native_mxfp4: false,
            a_quantize: false,
        };
        for chip in [trnsim_system::chip::trn3().unwrap(), trnsim_system::chip::trn2().unwrap()] {
            let cores = chip.spec.cores;
            let mut cases: Vec<(&str, Vec<String>)> = Vec::new();
            for op in [g(8, 1024, 4096, Format::Bf16, false), g(64, 512, 2048, Format::Bf16, true)] {
                let p = plan(cores, &op).unwrap();
                cases.push(("gemm", (0..cores).map(|i| crate::gemm::program_with(&p.shape, i, &p.variant)).collect()));
            }
            let e = crate::elementwise::plan(cores, 1 << 18, 5, Format::Bf16).unwrap();
            cases.push(("elementwise", (0..cores).map(|i| crate::elementwise::program(&e, i)).collect()));
            for (label, texts) in &cases {
                assert!(one_stack(&chip, texts).is_some(), "{label} is cut on {}", chip.spec.name);
                let cut = run_programs(&chip, label, texts).unwrap();
                let whole = run_programs_whole(&chip, label, texts).unwrap();
                assert_eq!(
                    cut.to_bits(),
                    whole.to_bits(),
                    "{label} on {}: {cut} ns cut, {whole} ns whole",
                    chip.spec.name
                );
            }
            let mut differ = cases[0].1.clone();
            differ[cores as usize - 1] = cases[2].1[0].clone();
            assert!(one_stack(&chip, &differ).is_none(), "programs that differ between stacks");
        }
    }

    /// An elementwise program's first data instruction waits for its first load (the DMA
    /// start latency, 1.3 us on NC-v4, and the transfer) and its last store starts after its
    /// last data instruction: both edges are at least that latency, and they leave the
    /// compute between them.
    #[test]
    fn a_programs_edges_are_its_first_loads_and_last_stores() {
        let chip = trnsim_system::chip::trn3().unwrap();
        let e = crate::elementwise::plan(chip.spec.cores, 1 << 22, 4, crate::format::Format::Bf16).unwrap();
        let texts: Vec<String> = (0..chip.spec.cores).map(|i| crate::elementwise::program(&e, i)).collect();
        let t = run_programs_timed(&chip, "elementwise", &texts).unwrap();
        assert!(t.head >= 1_300_000 && t.tail >= 1_300_000, "{t:?}");
        assert!(t.head + t.tail < t.end, "{t:?}");
        assert_eq!(t.ns().to_bits(), run_programs(&chip, "elementwise", &texts).unwrap().to_bits());
    }

    #[test]
    fn a_key_asked_for_on_many_threads_is_run_once() {
        let runs = AtomicUsize::new(0);
        let key = format!("test-once-{}", std::process::id());
        on_threads(8, 4, &|_| {
            let (t, _) = cached(&key, || {
                runs.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(20));
                Ok(Timing { end: 3500, head: 1000, tail: 500 })
            })
            .unwrap();
            assert_eq!(t, Timing { end: 3500, head: 1000, tail: 500 });
            true
        });
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert!(is_cached(&key));
    }

    #[test]
    fn a_failed_run_is_not_cached_and_a_waiter_runs_it_again() {
        let key = format!("test-fail-{}", std::process::id());
        let t = |end| Timing { end, head: 0, tail: 0 };
        assert!(cached(&key, || Err("no".into())).is_err());
        assert!(!is_cached(&key));
        assert_eq!(cached(&key, || Ok(t(1))).unwrap(), (t(1), false));
        assert_eq!(cached(&key, || Ok(t(2))).unwrap(), (t(1), true));
    }

    #[test]
    fn work_on_threads_visits_every_index_once_and_stops_on_false() {
        let seen: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
        on_threads(50, 3, &|i| {
            seen[i].fetch_add(1, Ordering::SeqCst);
            true
        });
        assert!(seen.iter().all(|s| s.load(Ordering::SeqCst) == 1));
        let count = AtomicUsize::new(0);
        on_threads(50, 1, &|i| {
            count.fetch_add(1, Ordering::SeqCst);
            i < 9
        });
        assert_eq!(count.load(Ordering::SeqCst), 10);
    }
}
