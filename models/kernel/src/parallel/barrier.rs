//! The window barrier and the reduction slots the partitions publish into before it.
//!
//! A sense-reversing spin barrier: std's `Barrier` sleeps on a futex and costs ~23 µs per
//! window on a 2-core VM (measured); spinning costs well under 1 µs.
//! One arrival per thread (a thread may run several partitions). When the machine is
//! oversubscribed (more threads than cores) spinning would starve the thread being waited
//! for, so there a waiter spins only briefly and then sleeps on a condition variable until
//! the last arrival wakes it; otherwise after a short spin it yields its core, and after a
//! while of yielding it sleeps too: a thread whose core another process took
//! (a build beside the run, other tests) is then not kept waiting by waiters that burn the
//! remaining core. The last arrival takes the lock to wake sleepers only when there are any.

use super::Summary;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// Spins this many times before yielding.
const SPINS_BEFORE_YIELD: u32 = 2_000;

/// Spins this many times before sleeping, when oversubscribed.
const SPINS_BEFORE_SLEEP: u32 = 100;

/// Yields this many times (after spinning) before sleeping, when not oversubscribed: a yield
/// returns at once on an idle core, so this is about a millisecond of waiting unless the core
/// is shared (a window is rarely that long; a sleep costs a futex wake-up, ~10-50 us).
const YIELDS_BEFORE_SLEEP: u32 = 1_000;

/// All partitions meet here once per window.
pub(crate) struct SpinBarrier {
    n: u32,
    arrived: AtomicU32,
    generation: AtomicU32,
    /// More threads than cores: waiters sleep instead of spinning.
    oversubscribed: bool,
    /// Waiters asleep on `wake` (or about to be): the last arrival notifies only when non-zero.
    sleepers: AtomicU32,
    lock: Mutex<()>,
    wake: Condvar,
}

impl SpinBarrier {
    pub fn new(n: u32) -> SpinBarrier {
        SpinBarrier {
            n,
            arrived: AtomicU32::new(0),
            generation: AtomicU32::new(0),
            oversubscribed: n > crate::host::cores(),
            sleepers: AtomicU32::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Wakes sleeping waiters (after the generation moved or the run was poisoned). The
    /// `sleepers` load is SeqCst, as are the generation store before it and a sleeper's
    /// increment and generation check: either the sleeper sees the new generation or this
    /// sees the sleeper, and then the notify waits for the lock the sleeper holds until it
    /// waits. No lost wake-up (the sleep's timeout is a second guard).
    pub fn wake_all(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.wake.notify_all();
        }
    }

    /// Waits until all `n` threads have arrived. Returns false (at once) if `poisoned` is set:
    /// another thread failed and will never arrive.
    pub fn wait(&self, poisoned: &AtomicBool) -> bool {
        let gen = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(gen.wrapping_add(1), Ordering::SeqCst);
            self.wake_all();
            return true;
        }
        let (mut spins, mut yields) = (0u32, 0u32);
        while self.generation.load(Ordering::Acquire) == gen {
            if poisoned.load(Ordering::Acquire) {
                return false;
            }
            let sleep = if self.oversubscribed { spins >= SPINS_BEFORE_SLEEP } else { yields >= YIELDS_BEFORE_SLEEP };
            if sleep {
                // Checked under the lock the last arrival takes to notify: no lost wake-up. The
                // timeout re-checks `poisoned` (a failing thread may not reach the barrier).
                let g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.sleepers.fetch_add(1, Ordering::SeqCst);
                if self.generation.load(Ordering::SeqCst) == gen && !poisoned.load(Ordering::Acquire) {
                    let _ = self.wake.wait_timeout(g, std::time::Duration::from_millis(5));
                } else {
                    drop(g);
                }
                self.sleepers.fetch_sub(1, Ordering::SeqCst);
                continue;
            }
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else {
                yields += 1;
                std::thread::yield_now();
            }
        }
        true
    }
}

/// One partition's summary of one window, on its own cache line: written (plain stores) by
/// its partition's thread before the barrier, read by every thread after it and reduced
/// locally in partition order, so no cache line is written by two cores. Two sets alternate
/// by window parity: a partition writes the next window's slot only after the next barrier,
/// which every reader reaches only after it has read this one.
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
