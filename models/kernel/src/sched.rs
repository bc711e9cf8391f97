//! The scheduler's state: per-clock-domain lists of components to tick on the next edge, a queue
//! of later wake-ups ([`WakeQueue`]), and each component's sleep state.
//!
//! Invariants:
//! - A domain's `pending` list holds components to tick at `cursor`, which is the domain's
//!   earliest edge not before the current floor; later wake-ups go to the wake queue.
//!   `edge_at[i]` is domain `i`'s cursor time when its pending list is not empty, NEVER when
//!   it is.
//! - A component is in exactly one of: asleep (maybe with one live wake-queue entry, `wake`), queued
//!   (in its domain's pending list, or ticking in this step: the step moves the pending lists
//!   of the domains due whole, and every component that ticked is asleep again after the
//!   update phase).
//! - State changes that decide who ticks happen only between steps or in the update phase, never
//!   in a way that depends on the order of ticks within a step.

use crate::time::{Clock, EdgeCursor, Time};
use crate::wakeq::WakeQueue;

/// A component's scheduling state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Asleep,
    /// In its domain's pending list, or ticking in the current step.
    Queued,
}

/// Scheduling metadata of one component (kept apart from the component itself).
#[derive(Clone, Debug)]
pub(crate) struct Meta {
    pub domain: u32,
    pub state: State,
    /// When asleep: the time of its live wake-queue entry, or NEVER.
    pub wake: Time,
    /// Earliest timer the component set, or NEVER.
    pub timer: Time,
    /// Input links that may hold a message, as (arena, slot): every input with one in its
    /// buffer (in flight, or arrived and not yet received) is here (its `Timing::in_active`
    /// set); the idle scan drops those that hold none. Components with many inputs scan only
    /// the few with traffic, and may poll only these (`Ctx::pending_inputs`).
    pub active_in: Vec<ActiveLink>,
    /// Output links that may be blocked until a later time (no credit with one coming back,
    /// or busy with a long message): every output whose `Timing::blocked_until` is not NEVER
    /// is here (its `Timing::out_active` set); the idle scan drops the others.
    pub active_out: Vec<ActiveLink>,
}

/// A link in an active list: its arena and slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ActiveLink {
    pub arena: u32,
    pub slot: u32,
}

/// One clock domain's schedule.
#[derive(Clone, Debug)]
pub(crate) struct Domain {
    pub clock: Clock,
    /// The edge at which `pending` ticks (fresh whenever `pending` is non-empty).
    pub cursor: EdgeCursor,
    pub pending: Vec<u32>,
    /// One period in whole picoseconds (>= 2 for any accepted clock).
    pub period_ps: u64,
}

impl Domain {
    /// Moves the cursor to the first edge at or after `floor` (never backwards).
    pub fn seek(&mut self, floor: Time) {
        if self.cursor.time() >= floor {
            return;
        }
        if floor.as_ps() - self.cursor.time().as_ps() > 16 * self.period_ps {
            let k = self.clock.edge_index_at_or_after(floor);
            self.cursor = self.clock.cursor_at(k);
            return;
        }
        while self.cursor.time() < floor {
            self.cursor.advance(&self.clock);
        }
    }
}

/// Domains, component states and the wake queue.
pub(crate) struct Sched {
    pub domains: Vec<Domain>,
    pub meta: Vec<Meta>,
    /// Later wake-ups, (time in ps, component); an entry whose component woke otherwise since
    /// (its `wake` no longer that time) is stale and skipped when taken.
    pub wakes: WakeQueue,
    /// Scratch for the entries a step takes from `wakes`.
    pub due: Vec<(u64, u32)>,
    /// Per domain, the edge its pending list ticks at, NEVER while the list is empty: a step
    /// and `next_time` read this dense array instead of every domain's record (several cache
    /// lines apart; most domains are idle at any step).
    pub edge_at: Vec<Time>,
    /// No tick may be scheduled before this time (now during wake-up processing, now + 1 ps
    /// during evaluation and update).
    pub floor: Time,
}

impl Sched {
    /// Makes sure component `c` ticks on its first edge at or after `at`, unless it is already
    /// scheduled to tick no later than that.
    #[inline]
    pub fn arm(&mut self, c: u32, at: Time) {
        let m = &mut self.meta[c as usize];
        if m.state != State::Asleep || at >= m.wake {
            return;
        }
        let di = m.domain as usize;
        let d = &mut self.domains[di];
        let was_empty = d.pending.is_empty();
        if was_empty {
            d.seek(self.floor);
        }
        if at <= d.cursor.time() {
            if was_empty {
                self.edge_at[di] = d.cursor.time();
            }
            d.pending.push(c);
            m.state = State::Queued;
            m.wake = Time::NEVER;
        } else {
            self.wakes.push(at.as_ps(), c);
            m.wake = at;
        }
    }

    /// A message imported from another partition on a link of `arena` arrives for `c` at
    /// `at`; `newly` is the link's slot when it just joined `c`'s active inputs.
    pub fn import_arrival(&mut self, c: u32, at: Time, arena: u32, newly: Option<u32>) {
        if let Some(slot) = newly {
            self.meta[c as usize].active_in.push(ActiveLink { arena, slot });
        }
        self.arm(c, at);
    }

    /// Earliest time anything is scheduled, or NEVER.
    #[inline]
    pub fn next_time(&self) -> Time {
        debug_assert!(
            self.domains.iter().zip(&self.edge_at).all(|(d, &e)| e == Self::edge_of(d)),
            "edge_at follows the pending lists"
        );
        let first = self.edge_at.iter().copied().min().unwrap_or(Time::NEVER);
        first.min(Time::from_ps(self.wakes.first()))
    }

    /// What `edge_at` holds for `d`.
    pub fn edge_of(d: &Domain) -> Time {
        if d.pending.is_empty() {
            Time::NEVER
        } else {
            d.cursor.time()
        }
    }

    /// Takes the wake-ups due at or before `t`, in (time, component) order, and queues their
    /// components.
    #[inline]
    pub fn wake_due(&mut self, t: Time) {
        self.floor = t;
        if self.wakes.first() > t.as_ps() {
            return; // (most steps: only domains' pending lists are due)
        }
        let mut due = std::mem::take(&mut self.due);
        while self.wakes.take_first_by(t.as_ps(), &mut due).is_some() {
            for &(at, c) in &due {
                let at = Time::from_ps(at);
                let m = &mut self.meta[c as usize];
                if m.state == State::Asleep && m.wake == at {
                    m.wake = Time::NEVER;
                    self.arm(c, at);
                }
            }
            due.clear();
        }
        self.due = due;
    }
}
