//! The scheduler's queue of later wake-ups: a radix heap of (time, component) entries.
//!
//! A step's wake-ups are never earlier than the last time taken from the queue (the kernel's
//! time only moves forward), which is what a radix heap asks: an entry sits in the bucket of
//! the highest bit where its time differs from the last time taken (bucket 0: equal to it),
//! so a push is a few instructions and a take moves only the lowest bucket's entries, each
//! to a lower bucket, instead of a binary heap's walk through scattered entries (a cache miss
//! a level on a large run). Each bucket keeps its smallest time, so the earliest entry is
//! known without moving anything.
//!
//! Invariants:
//! - (of the radix heap, [`Radix`]) every entry's time is at least `last`, and entry
//!   `(t, c)` is in bucket `Radix::bucket(t, last)`; bucket `i`'s entries all differ from `last` first
//!   at bit `i - 1` (bucket 0: equal to `last`), so a lower bucket holds only earlier times;
//! - `mins[i]` is the smallest time in bucket `i` (`u64::MAX` when empty), and bit `i` of
//!   `full` is set exactly when bucket `i` holds an entry.
//!
//! Entries come out in (time, component) order, the order a binary heap of the same pairs
//! gives, duplicates included; an entry earlier than `last` (no caller makes one) re-files
//! the queue around it rather than break the order. A queue that never holds more than a few
//! entries (a kernel ring with two tokens) stays a binary heap: there the buckets' upkeep
//! cost more than the heap's short walk.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A queue of (time in picoseconds, component) entries taken in ascending order: a binary
/// heap while it is small (a few entries: the heap's walk is short and costs less than the
/// buckets' upkeep), a radix heap ([`Radix`]) from the first time it holds more than
/// [`SMALL`] entries on.
#[derive(Clone, Debug, Default)]
pub(crate) struct WakeQueue {
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    radix: Option<Box<Radix>>,
}

/// Entries a [`WakeQueue`] keeps in a binary heap.
const SMALL: usize = 64;

impl WakeQueue {
    /// Entries queued.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.radix.as_ref().map_or(self.heap.len(), |r| r.len())
    }

    /// Queues component `c` for time `t` (picoseconds).
    #[inline]
    pub fn push(&mut self, t: u64, c: u32) {
        match &mut self.radix {
            Some(r) => r.push(t, c),
            None => {
                self.heap.push(Reverse((t, c)));
                if self.heap.len() > SMALL {
                    self.grow();
                }
            }
        }
    }

    #[cold]
    fn grow(&mut self) {
        let mut r = Box::<Radix>::default();
        for Reverse((t, c)) in self.heap.drain() {
            r.push(t, c);
        }
        self.radix = Some(r);
    }

    /// The earliest time queued, or `u64::MAX` when empty.
    #[inline]
    pub fn first(&self) -> u64 {
        match &self.radix {
            Some(r) => r.first(),
            None => self.heap.peek().map_or(u64::MAX, |e| e.0 .0),
        }
    }

    /// Takes every entry of the earliest time queued if it is at most `t`, appending them
    /// to `out` in component order; returns that time, or None (nothing taken).
    pub fn take_first_by(&mut self, t: u64, out: &mut Vec<(u64, u32)>) -> Option<u64> {
        if let Some(r) = &mut self.radix {
            return r.take_first_by(t, out);
        }
        let at = self.heap.peek()?.0 .0;
        if at > t {
            return None;
        }
        while let Some(&Reverse(e)) = self.heap.peek() {
            if e.0 != at {
                break;
            }
            out.push(e);
            self.heap.pop();
        }
        Some(at)
    }
}

/// The radix heap of a large [`WakeQueue`].
#[derive(Clone, Debug)]
pub(crate) struct Radix {
    last: u64,
    buckets: Vec<Vec<(u64, u32)>>,
    mins: [u64; BUCKETS],
    full: u128,
}

/// Bucket 0 (equal to `last`) and one for each bit where a time may first differ from it.
const BUCKETS: usize = 65;

impl Default for Radix {
    fn default() -> Self {
        Radix { last: 0, buckets: vec![Vec::new(); BUCKETS], mins: [u64::MAX; BUCKETS], full: 0 }
    }
}

impl Radix {
    /// The bucket of time `t` when the last time taken is `last` (`t >= last`).
    #[inline]
    fn bucket(t: u64, last: u64) -> usize {
        (u64::BITS - (t ^ last).leading_zeros()) as usize
    }

    /// Entries queued.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.buckets.iter().map(Vec::len).sum()
    }

    /// Queues component `c` for time `t` (picoseconds).
    #[inline]
    pub fn push(&mut self, t: u64, c: u32) {
        if t < self.last {
            self.refile(t);
        }
        let b = Self::bucket(t, self.last);
        self.buckets[b].push((t, c));
        self.mins[b] = self.mins[b].min(t);
        self.full |= 1 << b;
    }

    /// The earliest time queued, or `u64::MAX` when empty.
    #[inline]
    pub fn first(&self) -> u64 {
        if self.full == 0 {
            u64::MAX
        } else {
            self.mins[self.full.trailing_zeros() as usize]
        }
    }

    /// Takes every entry of the earliest time queued if it is at most `t`, appending them
    /// to `out` in component order; returns that time, or None (nothing taken).
    pub fn take_first_by(&mut self, t: u64, out: &mut Vec<(u64, u32)>) -> Option<u64> {
        let at = self.first();
        if at > t || self.full == 0 {
            return None;
        }
        let i = self.full.trailing_zeros() as usize;
        if i != 0 {
            // Re-file the lowest bucket around its smallest time: its entries of that time go
            // to bucket 0, the others each to a lower bucket than `i`.
            self.last = at;
            let mut moving = std::mem::take(&mut self.buckets[i]);
            self.mins[i] = u64::MAX;
            self.full &= !(1 << i);
            for &(t, c) in &moving {
                let b = Self::bucket(t, at);
                self.buckets[b].push((t, c));
                self.mins[b] = self.mins[b].min(t);
                self.full |= 1 << b;
            }
            moving.clear();
            self.buckets[i] = moving; // (its room kept for later entries)
        }
        let start = out.len();
        out.append(&mut self.buckets[0]);
        if out.len() - start > 1 {
            out[start..].sort_unstable_by_key(|e| e.1);
        }
        self.mins[0] = u64::MAX;
        self.full &= !1;
        Some(at)
    }

    /// Makes `t` the base (below every entry): every entry is filed again around it.
    #[cold]
    fn refile(&mut self, t: u64) {
        let all: Vec<(u64, u32)> = self.buckets.iter_mut().flat_map(std::mem::take).collect();
        self.mins = [u64::MAX; BUCKETS];
        self.full = 0;
        self.last = t;
        for (at, c) in all {
            let b = Self::bucket(at, t);
            self.buckets[b].push((at, c));
            self.mins[b] = self.mins[b].min(at);
            self.full |= 1 << b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WakeQueue;
    use crate::SimRng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Takes everything due by `t` from both, checking they agree entry by entry.
    fn take_both(q: &mut WakeQueue, h: &mut BinaryHeap<Reverse<(u64, u32)>>, t: u64) -> usize {
        let mut out = Vec::new();
        while q.take_first_by(t, &mut out).is_some() {}
        let mut want = Vec::new();
        while let Some(&Reverse(e)) = h.peek() {
            if e.0 > t {
                break;
            }
            want.push(e);
            h.pop();
        }
        assert_eq!(out, want, "taken by {t}");
        out.len()
    }

    #[test]
    fn wake_ups_come_out_as_a_binary_heap_gives_them() {
        let mut rng = SimRng::new(11, 0);
        for round in 0..40 {
            let (mut q, mut h) = (WakeQueue::default(), BinaryHeap::new());
            let mut now = 0u64;
            let spread = [4u64, 1_000, 1 << 20, 1 << 40][round % 4];
            for _ in 0..3_000 {
                match rng.below(10) {
                    // Wake-ups from now on (duplicates and equal times included), now and
                    // then one far ahead or at the end of time.
                    0..=5 => {
                        let t = match rng.below(50) {
                            0 => u64::MAX - rng.below(3),
                            1 => now.saturating_add(1 << 50),
                            _ => now.saturating_add(rng.below(spread)),
                        };
                        let c = rng.below(20) as u32;
                        q.push(t, c);
                        h.push(Reverse((t, c)));
                    }
                    // Time moves to the earliest entry, or a little past it, and takes.
                    6..=8 => {
                        let first = q.first();
                        assert_eq!(first, h.peek().map_or(u64::MAX, |r| r.0 .0), "the earliest");
                        if first != u64::MAX {
                            now = first.saturating_add(rng.below(3));
                            take_both(&mut q, &mut h, now);
                        }
                    }
                    // An entry before the last time taken (no caller makes one): still in order.
                    _ => {
                        let t = now.saturating_sub(rng.below(100));
                        q.push(t, 7);
                        h.push(Reverse((t, 7)));
                    }
                }
                assert_eq!(q.len(), h.len());
            }
            take_both(&mut q, &mut h, u64::MAX);
            assert_eq!(q.len(), 0);
            assert_eq!(q.first(), u64::MAX);
        }
    }
}
