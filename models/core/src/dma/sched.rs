//! Queue arbitration of one DMA engine at packet boundaries (spec §4): round robin over ready
//! queues (v2/v3), or four strict-priority classes with round robin inside a class (v4 QoS).
//!
//! **Contract.** [`Arbiter::pick`] sees only which queues are ready (their head part has passed
//! its start latency); it returns one of them, or none if none is ready, and may remember whom
//! it served for fairness. It never looks at sizes, ages or other engines.

use crate::dma::params::DmaParams;

/// Classes of [`crate::dma::Scheduling::Qos4`].
const CLASSES: usize = 4;

/// One engine's queue arbiter (public as `dma::QueueArbiter`: trnsim-rtl checks the RTL
/// descriptor queues' model against it).
#[derive(Clone, Debug)]
pub struct Arbiter {
    /// Queues of each class, as bit masks (round robin: every queue in class 0).
    class_mask: [u64; CLASSES],
    /// Per class, the queue to try first next time (the one after the last served).
    next: [u32; CLASSES],
    queues: u32,
}

impl Arbiter {
    /// The arbiter of an engine with `p`'s queues and scheduling.
    pub fn new(p: &DmaParams) -> Arbiter {
        let mut class_mask = [0u64; CLASSES];
        for q in 0..p.queues as usize {
            class_mask[p.class_of(q)] |= 1 << q;
        }
        Arbiter { class_mask, next: [0; CLASSES], queues: p.queues }
    }

    /// The queue to serve next among `ready` (bit q = queue q), highest class first.
    pub fn pick(&mut self, ready: u64) -> Option<usize> {
        for c in 0..CLASSES {
            let m = ready & self.class_mask[c];
            if m == 0 {
                continue;
            }
            let start = self.next[c];
            let at_or_after = m & !((1u64 << start) - 1);
            let q = if at_or_after != 0 { at_or_after.trailing_zeros() } else { m.trailing_zeros() };
            self.next[c] = (q + 1) % self.queues;
            return Some(q as usize);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_takes_turns_over_ready_queues() {
        let mut a = Arbiter::new(&DmaParams::v3());
        let ready = 0b1001_0010;
        let got: Vec<_> = (0..6).map(|_| a.pick(ready).unwrap()).collect();
        assert_eq!(got, vec![1, 4, 7, 1, 4, 7]);
        assert_eq!(a.pick(0), None);
        assert_eq!(a.pick(1 << 15), Some(15));
        assert_eq!(a.pick(1 << 15 | 1), Some(0));
    }

    #[test]
    fn qos_serves_the_highest_class_and_rotates_within_it() {
        let mut a = Arbiter::new(&DmaParams::v4());
        // Queues 3 and 7 are class 3; queues 4 and 8 class 0.
        let both = 1 << 3 | 1 << 7 | 1 << 4 | 1 << 8;
        let got: Vec<_> = (0..4).map(|_| a.pick(both).unwrap()).collect();
        assert_eq!(got, vec![4, 8, 4, 8]);
        let low = 1 << 3 | 1 << 7;
        assert_eq!((a.pick(low), a.pick(low), a.pick(low)), (Some(3), Some(7), Some(3)));
        assert_eq!(a.pick(low | 1 << 2), Some(2), "class 2 beats class 3");
    }
}
