//! The window barrier and the reduction slots the partitions publish into before it.
//!
//! A sense-reversing spin barrier: std's `Barrier` sleeps on a futex and costs ~23 µs per
//! window on a 2-core VM (../shared/research/mpi-rust.md); spinning costs well under 1 µs.
//! When the machine is oversubscribed (more partitions than cores) spinning forever would
//! starve the thread being waited for, so after a short spin a waiter yields its core.

use super::Summary;
use crate::time::Time;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Spins this many times before yielding.
const SPINS_BEFORE_YIELD: u32 = 2_000;

/// All partitions meet here once per window.
pub(crate) struct SpinBarrier {
    n: u32,
    arrived: AtomicU32,
    generation: AtomicU32,
}

impl SpinBarrier {
    pub fn new(n: u32) -> SpinBarrier {
        SpinBarrier { n, arrived: AtomicU32::new(0), generation: AtomicU32::new(0) }
    }

    /// Waits until all `n` threads have arrived. Returns false (at once) if `poisoned` is set:
    /// another thread failed and will never arrive.
    pub fn wait(&self, poisoned: &AtomicBool) -> bool {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(gen.wrapping_add(1), Ordering::Release);
            return true;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == gen {
            if poisoned.load(Ordering::Acquire) {
                return false;
            }
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        true
    }
}

/// One window's reduction: written by every partition before the barrier, read after it.
/// Three slots rotate, so a slot is reset (by partition 0, one window later) only when every
/// partition has read it and nobody writes it yet.
pub(crate) struct Reduce {
    next: AtomicU64,
    last_step: AtomicU64,
    last_progress: AtomicU64,
    progress: AtomicU64,
    in_links: AtomicU64,
    flags: AtomicU32,
}

const OUTSTANDING: u32 = 1;
const ABORT: u32 = 2;

impl Reduce {
    pub fn new() -> Reduce {
        Reduce {
            next: AtomicU64::new(u64::MAX),
            last_step: AtomicU64::new(0),
            last_progress: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            in_links: AtomicU64::new(0),
            flags: AtomicU32::new(0),
        }
    }

    pub fn publish(&self, s: &Summary) {
        self.next.fetch_min(s.next.as_ps(), Ordering::AcqRel);
        self.last_step.fetch_max(s.last_step.as_ps(), Ordering::AcqRel);
        self.last_progress.fetch_max(s.last_progress.as_ps(), Ordering::AcqRel);
        self.progress.fetch_add(s.progress, Ordering::AcqRel);
        self.in_links.fetch_add(s.in_links, Ordering::AcqRel);
        let f = if s.outstanding { OUTSTANDING } else { 0 } | if s.abort { ABORT } else { 0 };
        self.flags.fetch_or(f, Ordering::AcqRel);
    }

    pub fn read(&self) -> Summary {
        let f = self.flags.load(Ordering::Acquire);
        Summary {
            next: Time::from_ps(self.next.load(Ordering::Acquire)),
            last_step: Time::from_ps(self.last_step.load(Ordering::Acquire)),
            last_progress: Time::from_ps(self.last_progress.load(Ordering::Acquire)),
            progress: self.progress.load(Ordering::Acquire),
            in_links: self.in_links.load(Ordering::Acquire),
            outstanding: f & OUTSTANDING != 0,
            abort: f & ABORT != 0,
        }
    }

    pub fn reset(&self) {
        self.next.store(u64::MAX, Ordering::Release);
        self.last_step.store(0, Ordering::Release);
        self.last_progress.store(0, Ordering::Release);
        self.progress.store(0, Ordering::Release);
        self.in_links.store(0, Ordering::Release);
        self.flags.store(0, Ordering::Release);
    }
}
