//! The window barrier and the reduction slots the partitions publish into before it.
//!
//! A sense-reversing spin barrier: std's `Barrier` sleeps on a futex and costs ~23 µs per
//! window on a 2-core VM (measured); spinning costs well under 1 µs.
//! When the machine is oversubscribed (more partitions than cores) spinning forever would
//! starve the thread being waited for, so after a short spin a waiter yields its core.

use super::Summary;
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

/// One partition's summary of one window, on its own cache line: written (plain stores) by
/// its partition before the barrier, read by every partition after it and reduced locally in
/// partition order, so no cache line is written by two cores. Two sets alternate by window
/// parity: a partition writes the next window's slot only after the next barrier, which every
/// reader reaches only after it has read this one.
#[repr(align(64))]
pub(crate) struct Slot {
    words: [AtomicU64; super::WORDS],
}

impl Slot {
    pub fn new() -> Slot {
        Slot { words: std::array::from_fn(|_| AtomicU64::new(0)) }
    }

    pub fn publish(&self, s: &Summary) {
        for (w, v) in self.words.iter().zip(super::words_of(s)) {
            w.store(v, Ordering::Relaxed);
        }
    }

    /// Appends the words. The barrier between `publish` and `load` orders them: its generation
    /// store is Release and its waiters load it with Acquire.
    pub fn load(&self, into: &mut Vec<u64>) {
        into.extend(self.words.iter().map(|w| w.load(Ordering::Relaxed)));
    }
}
