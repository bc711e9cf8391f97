//! Progress of long simulations on stderr, for a person at a terminal: after the first second
//! of a run, a line with the simulated time reached (of its goal, when it has one), how many
//! times slower than real time it runs, and the elapsed time (and ETA, when there is a goal).
//!
//! The line is drawn by indicatif, which draws nothing when stderr is not a terminal, so
//! progress never reaches a file or a pipe; it never enters results. The CLI turns it on for
//! runs of one benchmark at a time ([`set_enabled`]), partitioned runs included
//! ([`WindowProgress`]: after each window); library callers and tests get none.
//! Runs with progress step the same simulation the same way (the kernel's `run_until` with a
//! condition that is never true), so their results are byte-identical to runs without.

use crate::cpu::Stopwatch;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use trnsim_kernel::{Dur, RunError, Simulation, Stop, Time, WindowHook};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Time steps between two looks at the clock.
const STEPS_PER_LOOK: u32 = 4096;
/// Wall time before the line appears, in seconds.
const SHOW_AFTER_S: f64 = 1.0;

/// Turns progress on or off for the runs that follow (process-wide).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether progress is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// A progress line on stderr (drawn only on a terminal): with a goal, a bar of percent and
/// ETA; without one, a spinner. The message is the caller's.
pub fn line(with_goal: bool) -> ProgressBar {
    let (b, template) = if with_goal {
        (ProgressBar::new(100), "{spinner} simulated {msg} [{bar:30}] {percent}% ({elapsed}, ETA {eta})")
    } else {
        (ProgressBar::new_spinner(), "{spinner} simulated {msg} ({elapsed})")
    };
    b.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    b.enable_steady_tick(Duration::from_millis(200));
    b
}

/// The slowdown of `simulated` in `wall_s` seconds against real time.
pub fn slowdown(wall_s: f64, simulated: Dur) -> f64 {
    wall_s / simulated.as_secs_f64().max(1e-18)
}

/// Draws `done` simulated in `wall` seconds on `bar`, made once the run is past its first
/// second (none before).
fn draw(bar: &mut Option<ProgressBar>, wall: f64, done: Dur) {
    if bar.is_none() && wall > SHOW_AFTER_S {
        *bar = Some(line(false));
    }
    if let Some(b) = bar {
        b.set_message(format!("{done}, {:.3e}x real time", slowdown(wall, done)));
    }
}

/// Runs `sim` until idle or `limit`, as `Simulation::run_until_idle` does, showing progress
/// when it is on.
pub fn run_until_idle(sim: &mut Simulation, limit: Dur) -> Result<Stop, RunError> {
    let _span = tracing::info_span!("simulate").entered();
    if !enabled() {
        return sim.run_until_idle(limit);
    }
    let sw = Stopwatch::start();
    let start = sim.now();
    let mut steps = 0u32;
    let mut bar: Option<ProgressBar> = None;
    let stop = sim.run_until(limit, |s| {
        steps = steps.wrapping_add(1);
        if !steps.is_multiple_of(STEPS_PER_LOOK) {
            return false;
        }
        draw(&mut bar, sw.elapsed().0, s.now().since(start));
        false
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    stop
}

/// Progress of a partitioned run (when on): the simulated time reached after each window
/// ([`trnsim_kernel::ParallelConfig::on_window`], called on the calling thread), drawn after
/// the first second like a serial run's. [`WindowProgress::finish`] clears the line.
pub struct WindowProgress {
    bar: Arc<Mutex<Option<ProgressBar>>>,
    sw: Stopwatch,
}

impl WindowProgress {
    /// A progress line for a partitioned run starting now, if progress is on.
    pub fn start() -> Option<WindowProgress> {
        enabled().then(|| WindowProgress { bar: Arc::new(Mutex::new(None)), sw: Stopwatch::start() })
    }

    /// The hook that draws it.
    pub fn hook(&self) -> WindowHook {
        let (bar, sw) = (self.bar.clone(), self.sw);
        WindowHook(Arc::new(move |now: Time| {
            if let Ok(mut b) = bar.lock() {
                draw(&mut b, sw.elapsed().0, now.since(Time::ZERO));
            }
        }))
    }

    /// Clears the line.
    pub fn finish(self) {
        if let Some(b) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            b.finish_and_clear();
        }
    }
}

/// [`run_to_end`] of a run of `chip`s (on `topo`) whose trace, when it has one and the chip an
/// energy table, carries the power tracks of [`crate::power`] (the run then shows no
/// progress line).
pub fn run_to_end_powered(
    b: trnsim_kernel::SimBuilder,
    chips: &[trnsim_system::chip::ChipIds],
    trace: Option<(Box<dyn trnsim_kernel::TraceSink>, trnsim_kernel::TraceOptions)>,
    limit: Dur,
    chip: &trnsim_system::chip::Chip,
    topo: Option<&trnsim_fabric::topo::Topology>,
) -> Result<Simulation, String> {
    let (trace, sampler) = crate::power::attach(trace, chip, topo);
    let Some(sampler) = sampler else { return run_to_end(b, chips, trace, limit) };
    let _span = tracing::info_span!("build and simulate").entered();
    let sampler = std::cell::RefCell::new(sampler);
    let run = |sim: &mut Simulation, limit: Dur| sampler.borrow_mut().run(sim, limit);
    trnsim_system::chip::run_to_end_by(b, chips, trace, limit, &run)
}

/// `trnsim_system::chip::run_to_end` with progress when it is on.
pub fn run_to_end(
    b: trnsim_kernel::SimBuilder,
    chips: &[trnsim_system::chip::ChipIds],
    trace: Option<(Box<dyn trnsim_kernel::TraceSink>, trnsim_kernel::TraceOptions)>,
    limit: Dur,
) -> Result<Simulation, String> {
    // (The build is this span less the "simulate" span inside it.)
    let _span = tracing::info_span!("build and simulate").entered();
    trnsim_system::chip::run_to_end_by(b, chips, trace, limit, &run_until_idle)
}
