//! What the engines of a block share: the commands in flight (a slab reused without
//! allocation), the semaphore increments waiting to be sent, and the block's statistics.

use super::plan::Plan;
use super::stats::BlockStats;
use crate::isa::Sem;
use crate::msg::{DmaCmd, SemOp};
use std::collections::VecDeque;
use trnsim_kernel::{Arg, Ctx, Dur, Flow, Time, TrackId};

/// A command in flight.
#[derive(Clone, Debug)]
pub(crate) struct CmdSlot {
    pub live: bool,
    pub flow: u64,
    pub queue: u8,
    pub sem: Option<Sem>,
    pub arrived: Time,
    pub plan: Plan,
    /// Per engine: packets of its part not yet complete.
    pub left: Vec<u32>,
    /// Engines whose part is not complete.
    pub parts_left: u32,
}

/// Shared state of a block's engines.
#[derive(Default)]
pub(crate) struct Book {
    pub cmds: Vec<CmdSlot>,
    free: Vec<u32>,
    pub sems: VecDeque<SemOp>,
    /// Parts in queues (not yet fully started), over all engines.
    pub queued: u64,
    pub stats: BlockStats,
    /// One trace track per queue (after `DmaBlock::declare_tracks`): a `dma` slice per command.
    pub queue_tracks: Vec<TrackId>,
    /// The Explorer layout's counters, when traced so.
    pub counters: Option<Counters>,
}

/// The `DMA Throughput` and `Pending DMA Count` counters of a traced block
/// ([`crate::layout`]).
pub(crate) struct Counters {
    throughput: TrackId,
    pending: TrackId,
    /// Packets completed in the trailing window: (when, bytes), oldest first.
    recent: VecDeque<(Time, u64)>,
    /// Their bytes.
    recent_bytes: u64,
    /// When the throughput was last written.
    shown: Option<Time>,
}

/// The window `DMA Throughput` averages over.
const THROUGHPUT_WINDOW: Dur = Dur::from_us(1);
/// The throughput is written at most this often (a tenth of the window): a core's 16 engines
/// complete a packet every few nanoseconds, and a sample per packet would triple a trace.
const THROUGHPUT_SAMPLE: Dur = Dur::from_ns(100);

impl Counters {
    pub(crate) fn new(throughput: TrackId, pending: TrackId) -> Counters {
        Counters { throughput, pending, recent: VecDeque::new(), recent_bytes: 0, shown: None }
    }
}

impl Book {
    /// A packet of `bytes` completed: the throughput counter, when traced.
    pub fn moved(&mut self, cx: &mut Ctx<'_>, bytes: u64) {
        let Some(c) = &mut self.counters else { return };
        let now = cx.now();
        c.recent.push_back((now, bytes));
        c.recent_bytes += bytes;
        while let Some(&(t, b)) = c.recent.front() {
            if now.since(t) < THROUGHPUT_WINDOW {
                break;
            }
            c.recent.pop_front();
            c.recent_bytes -= b;
        }
        if c.shown.is_some_and(|t| now.since(t) < THROUGHPUT_SAMPLE) {
            return;
        }
        if let Some(mut tr) = cx.tracer() {
            // Bytes per microsecond over 1000 = GB/s.
            tr.counter(c.throughput, c.recent_bytes as f64 / 1000.0);
            c.shown = Some(now);
        }
    }

    /// The commands accepted and not complete: the pending counter, when traced (and, when
    /// none is left, the throughput counter back to 0).
    pub fn show_pending(&mut self, cx: &mut Ctx<'_>) {
        let Some(c) = &mut self.counters else { return };
        let n = self.stats.in_flight;
        if n == 0 {
            c.recent.clear();
            c.recent_bytes = 0;
            c.shown = None;
        }
        if let Some(mut tr) = cx.tracer() {
            tr.counter(c.pending, n as f64);
            if n == 0 {
                tr.counter(c.throughput, 0.0);
            }
        }
    }

    /// Takes a slot for `cmd` (growing the slab only when every slot is in use).
    pub fn admit(&mut self, cmd: &DmaCmd, plan: Plan, now: Time, engines: usize) -> u32 {
        let slot = CmdSlot {
            live: true,
            flow: cmd.flow,
            queue: cmd.queue,
            sem: cmd.sem,
            arrived: now,
            plan,
            left: Vec::new(),
            parts_left: 0,
        };
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.cmds.push(slot.clone());
                self.cmds.len() as u32 - 1
            }
        };
        let c = &mut self.cmds[i as usize];
        let left = std::mem::take(&mut c.left);
        *c = slot;
        c.left = left;
        c.left.clear();
        c.left.resize(engines, 0);
        self.stats.arrived(now);
        i
    }

    /// A packet of engine `e`'s part of command `i` completed (`track`: the engine's).
    pub fn packet_done(&mut self, cx: &mut Ctx<'_>, i: u32, e: u32, track: Option<TrackId>) {
        let c = &mut self.cmds[i as usize];
        c.left[e as usize] -= 1;
        if c.left[e as usize] == 0 {
            self.part_done(cx, i, track);
        }
    }

    /// An engine finished its part of command `i`: it increments the command's semaphore
    /// (when tracing, starting a flow from an instant on the engine's `track` to the
    /// instruction the increment releases); the last one completes the command.
    pub fn part_done(&mut self, cx: &mut Ctx<'_>, i: u32, track: Option<TrackId>) {
        let now = cx.now();
        if let Some(sem) = self.cmds[i as usize].sem {
            let mut flow = 0;
            if cx.tracer().is_some() {
                flow = cx.new_flow_id();
                if let Some(mut tr) = cx.tracer() {
                    let track = track.unwrap_or_else(|| tr.own_track());
                    tr.instant(track, "sem_inc", Flow::Step(flow), Some(Arg { key: "sem", value: i64::from(sem.0) }));
                }
            }
            self.sems.push_back(SemOp::Inc { sem, delta: 1, flow });
        }
        let c = &mut self.cmds[i as usize];
        c.parts_left -= 1;
        if c.parts_left > 0 {
            return;
        }
        c.live = false;
        let (arrived, flow, queue) = (c.arrived, c.flow, c.queue);
        let bytes = u64::from(c.plan.rows) * c.plan.row_bytes;
        self.free.push(i);
        self.stats.completed(arrived, now);
        self.show_pending(cx);
        let queue_track = self.queue_tracks.get(queue as usize).copied();
        if let Some(mut tr) = cx.tracer() {
            let track = queue_track.unwrap_or_else(|| tr.own_track());
            let flow = if flow != 0 { Flow::End(flow) } else { Flow::None };
            tr.slice(track, "dma", arrived, now, flow, Some(Arg { key: "bytes", value: bytes as i64 }));
        }
    }
}
