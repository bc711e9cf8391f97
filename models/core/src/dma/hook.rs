//! `QueueHook`: a swap-in's view of one DMA engine's queues and arbiter (trnsim-rtl's
//! `dma_queue` adapter runs a block beside them and checks it against what they decide).
//!
//! The engine calls the hook where its queues change: a part entering a queue, a packet
//! started by the arbiter (with the ready mask the arbiter saw), an empty part leaving at the
//! head. An engine without a hook pays one branch at each of those events (per part and per
//! packet, never per cycle) and nothing else. The hook observes: it cannot change what the
//! engine does, so the run's statistics are the all-model run's.

use trnsim_kernel::Time;

/// Observes one DMA engine's queue decisions (see the module doc). Times are the block's tick
/// times (edges of its clock), except `eligible`, when the part's start latency is over (the
/// engine tests it at its first tick at or after that time).
pub trait QueueHook {
    /// A part of `packets` packets entered queue `queue` at `now`; its start latency ends at
    /// `eligible`.
    fn enqueued(&mut self, now: Time, queue: usize, packets: u32, eligible: Time);
    /// At `now` the arbiter, seeing the queues of `ready` (bit q = queue q) ready, started
    /// packet `index` of queue `queue`'s head part (`last`: its last packet, the part leaves).
    fn started(&mut self, now: Time, ready: u64, queue: usize, index: u32, last: bool);
    /// At `now` queue `queue`'s head part, which has no packets, left after its start latency.
    fn retired_empty(&mut self, now: Time, queue: usize);
}
