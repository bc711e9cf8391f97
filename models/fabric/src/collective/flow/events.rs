//! Timers and deliveries of the flow-level network, kept in buckets by time.

use std::collections::{BTreeMap, VecDeque};

/// One timer or delivery: the chip, with [`TIMER`] set for a timer, and the step tag.
pub(super) type Ev = (u32, u32);

/// The flag of a timer in [`Ev`]'s chip (the run refuses `2^31` chips or more).
pub(super) const TIMER: u32 = 1 << 31;

/// Timers and deliveries, earliest first and, at one time, in the order they were pushed (as
/// a heap of (time, sequence) would pop them). Kept by time: the chips of a step-synchronous
/// collective mostly share their times, so a time's events are one bucket, not one heap entry
/// each, and a push to one of the two times last pushed to (deliveries alternate between a
/// step's tails) finds its bucket without a search.
#[derive(Default)]
pub(super) struct Events {
    /// The bucket (in `buckets`) per time in ps as f64 bits (non-negative times order as their
    /// bits do).
    by_time: BTreeMap<u64, usize>,
    buckets: Vec<VecDeque<Ev>>,
    /// Buckets emptied, reused.
    free: Vec<usize>,
    /// The two times last pushed to and their buckets, the latest first.
    recent: [Option<(u64, usize)>; 2],
}

impl Events {
    pub(super) fn push(&mut self, t: f64, ev: Ev) {
        let key = t.to_bits();
        let b = match self.recent {
            [Some((k, b)), _] if k == key => b,
            [r, Some((k, b))] if k == key => {
                self.recent = [Some((k, b)), r];
                b
            }
            _ => {
                let (buckets, free) = (&mut self.buckets, &mut self.free);
                let b = *self.by_time.entry(key).or_insert_with(|| {
                    free.pop().unwrap_or_else(|| {
                        buckets.push(VecDeque::new());
                        buckets.len() - 1
                    })
                });
                self.recent = [Some((key, b)), self.recent[0]];
                b
            }
        };
        self.buckets[b].push_back(ev);
    }

    /// The earliest time.
    pub(super) fn next_time(&self) -> Option<f64> {
        self.by_time.first_key_value().map(|(&t, _)| f64::from_bits(t))
    }

    /// The earliest event if it is due at `now`.
    pub(super) fn pop_due(&mut self, now: f64) -> Option<Ev> {
        let first = self.by_time.first_entry()?;
        if f64::from_bits(*first.key()) > now {
            return None;
        }
        let b = *first.get();
        let ev = self.buckets[b].pop_front();
        if self.buckets[b].is_empty() {
            first.remove();
            self.free.push(b);
            for r in &mut self.recent {
                if r.is_some_and(|(_, l)| l == b) {
                    *r = None;
                }
            }
        }
        ev
    }
}
