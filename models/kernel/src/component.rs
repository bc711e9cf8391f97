//! The component trait: plain data plus a `tick` on its clock's rising edges.

use crate::ctx::Ctx;
use crate::stats::StatsWriter;
use crate::time::{Clock, Time};

/// Identifies a component within one simulation (dense index, in creation order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComponentId(pub(crate) u32);

impl ComponentId {
    /// The dense index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
    /// The component with dense index `i` (components are numbered in creation order).
    pub fn from_index(i: usize) -> ComponentId {
        ComponentId(i as u32)
    }
}

/// What a component tells the kernel after a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Tick me again on my next edge.
    Busy,
    /// Nothing to do until a message arrives on one of my inputs, an output I was refused on
    /// (no credits left, or bandwidth busy, when I sent or asked) can take a message again,
    /// or a timer I set expires.
    Idle,
}

/// A simulated block. Plain data plus a `tick` on its clock's rising edges.
///
/// **Contract.** In `tick` a component may read what has arrived on its input ports, send on
/// its output ports (within their credits), set timers, and record trace events; it may not
/// touch any other component's state (links are the only way state crosses components). It
/// returns [`Activity::Idle`] only when nothing it could do now would change anything; the
/// kernel then stops ticking it (it costs nothing) until an input message arrives, a credit
/// returns on an output it was refused on (a refused [`Ctx::send`], [`Ctx::can_send`] false,
/// or [`Ctx::credits`] 0, since its last send on that output), or a timer it set expires: a
/// component with something to send asks. A component that leaves
/// arrived messages unread while idle must be waiting for one of those; otherwise it is stuck
/// and the deadlock detector reports it.
pub trait Component: std::any::Any {
    /// One rising edge of this component's clock.
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity;

    /// Writes this component's statistics (called at report time; units in the names).
    fn report(&self, _out: &mut StatsWriter<'_>) {}

    /// Gives `out` this component's action counters: totals among the integer counts its
    /// [`Component::report`] writes, under the same names and equal to them (`out` may see a
    /// name more than once; the values add). For readers that sample a run many times (power
    /// over time): no name is built and nothing allocated, where a report builds every
    /// statistic. Which counts a component gives is its own choice (those something prices);
    /// the default gives none.
    fn counters(&self, _out: &mut dyn FnMut(&'static str, u64)) {}

    /// Does, up to `now` (the end of a run; `clock` is the component's own), the work an idle
    /// component owes but would do only when next woken. Every successful run call ends with
    /// it, serial or partitioned (each partition its own components), before anything
    /// reports: an HBM stack does the refreshes its idle channels owe, so that its
    /// statistics count them to the end. It must not change what the component does
    /// afterwards (a run continued after it gives the results of one run to the later end),
    /// and it sends nothing: it has no [`Ctx`].
    fn settle(&mut self, _now: Time, _clock: &Clock) {}

    /// True while the component holds work it has not finished (e.g. queued requests). Only the
    /// deadlock detector and [`crate::Simulation::run_until_idle`] ask.
    fn has_outstanding_work(&self) -> bool {
        false
    }
}
