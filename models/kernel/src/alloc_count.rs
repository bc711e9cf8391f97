//! An allocator that counts allocations, for tests that check a hot path allocates nothing.
//!
//! A test binary installs it (`#[global_allocator] static A: CountingAlloc = CountingAlloc;`)
//! and measures with [`CountingAlloc::count`]: only allocations (and reallocations) made on
//! the calling thread while the closure runs are counted, so tests running beside it on
//! other threads do not disturb the figure. It forwards everything to the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting on the threads that ask ([`CountingAlloc::count`]).
pub struct CountingAlloc;

thread_local! {
    static ALLOCS: Cell<Option<u64>> = const { Cell::new(None) };
}

fn note() {
    let _ = ALLOCS.try_with(|c| c.set(c.get().map(|n| n + 1)));
}

impl CountingAlloc {
    /// Runs `f` and returns its result with the allocations it made on this thread (counted
    /// only when a `CountingAlloc` is the global allocator; 0 otherwise).
    pub fn count<R>(f: impl FnOnce() -> R) -> (R, u64) {
        ALLOCS.with(|c| c.set(Some(0)));
        let r = f();
        (r, ALLOCS.with(|c| c.replace(None)).unwrap_or(0))
    }

    /// Whether counting works: a `CountingAlloc` is the global allocator (a test asserts this
    /// first, so that it cannot pass by counting nothing).
    pub fn installed() -> bool {
        Self::count(|| std::hint::black_box(Box::new(std::hint::black_box(1u64)))).1 > 0
    }
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        System.realloc(ptr, layout, new_size)
    }
}
