//! Links: typed, point-to-point, bounded, credit-based channels with latency.
//!
//! ```text
//!   sender (clock A)                                   receiver (clock B)
//!   ┌─────────┐ send ──► [ in flight | buffered ] ──► recv ┌──────────┐
//!   │ OutPort │ ◄── credits (returned after credit latency)│  InPort  │
//!   └─────────┘                                            └──────────┘
//! ```
//!
//! - **Latency** counts in the *sender's* clock: a message sent on sender edge `k` with latency
//!   `n` arrives at `edge(k) + floor(n * period)` and is visible to the receiver from its first
//!   edge at or after that time (for a same-clock link: exactly edge `k + n`).
//! - **Credits**: the sender starts with `depth` credits (the receiver buffer depth); each send
//!   spends one; each `recv` returns one after the credit latency, which counts in the
//!   *receiver's* clock. So at most `depth` messages are ever in flight or buffered.
//! - **Bandwidth** (optional): bytes per sender cycle (a message of `b` bytes occupies the link
//!   for `ceil(b / bw)` cycles and its tail arrives that much later) or messages per cycle.
//! - Latency is at least one cycle, so nothing sent at time `t` is visible at `t`: the order in
//!   which components tick within a step cannot change what they see.
//!
//! What it leaves out: bit-level signalling (valid/ready wires are derived for VCD only),
//! message reordering, loss (fabric models add CRC errors and replay on top).

use crate::component::ComponentId;
use crate::stats::{Histogram, TimeWeighted};
use crate::time::{Cycles, Dur, Time};
use std::any::Any;
use std::collections::VecDeque;
use std::marker::PhantomData;

/// What a link can carry. `size_bytes` feeds bandwidth limits and byte statistics;
/// `trace_bits` is the value shown on the link's VCD `data` signal. Payloads are `Send` so a
/// link cut by partitioning can carry them between threads.
pub trait Payload: Send + 'static {
    /// Size on the wire, in bytes (default 8).
    fn size_bytes(&self) -> u32 {
        8
    }
    /// Up to 64 bits shown in waveforms (default 0).
    fn trace_bits(&self) -> u64 {
        0
    }
    /// Appends the message's bytes for a link cut between processes (MPI runs) and returns
    /// true; the default returns false: the type cannot cross processes (a clear error then).
    fn encode(&self, _out: &mut Vec<u8>) -> bool {
        false
    }
    /// Rebuilds a message from exactly the bytes [`Payload::encode`] wrote, or `None`.
    fn decode(_bytes: &[u8]) -> Option<Self>
    where
        Self: Sized,
    {
        None
    }
}

macro_rules! int_payload {
    ($($t:ty),*) => {$(
        impl Payload for $t {
            fn size_bytes(&self) -> u32 { std::mem::size_of::<$t>() as u32 }
            fn trace_bits(&self) -> u64 { *self as u64 }
            fn encode(&self, out: &mut Vec<u8>) -> bool {
                out.extend_from_slice(&self.to_le_bytes());
                true
            }
            fn decode(b: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(b.try_into().ok()?))
            }
        }
    )*};
}
int_payload!(u8, u16, u32, u64, usize, i8, i16, i32, i64);

impl Payload for () {
    fn size_bytes(&self) -> u32 {
        0
    }
    fn encode(&self, _out: &mut Vec<u8>) -> bool {
        true
    }
    fn decode(b: &[u8]) -> Option<Self> {
        b.is_empty().then_some(())
    }
}

impl Payload for bool {
    fn size_bytes(&self) -> u32 {
        1
    }
    fn trace_bits(&self) -> u64 {
        u64::from(*self)
    }
    fn encode(&self, out: &mut Vec<u8>) -> bool {
        out.push(u8::from(*self));
        true
    }
    fn decode(b: &[u8]) -> Option<Self> {
        match b {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
}

/// Index of a link within its simulation (dense, in creation order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub(crate) u32);

impl LinkId {
    /// The dense index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
    /// The link with dense index `i` (links are numbered in creation order).
    pub fn from_index(i: usize) -> LinkId {
        LinkId(i as u32)
    }
}

/// Where a link's typed state lives: which arena (one per payload type) and which slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinkRef {
    pub arena: u32,
    pub slot: u32,
    pub id: LinkId,
}

/// The sending end of a link carrying `T`. Copyable handle; only the source component may use it.
pub struct OutPort<T> {
    pub(crate) r: LinkRef,
    _t: PhantomData<fn(T) -> T>,
}

/// The receiving end of a link carrying `T`. Copyable handle; only the destination may use it.
pub struct InPort<T> {
    pub(crate) r: LinkRef,
    _t: PhantomData<fn(T) -> T>,
}

macro_rules! port_impls {
    ($p:ident) => {
        impl<T> Clone for $p<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $p<T> {}
        impl<T> std::fmt::Debug for $p<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}(link {})", stringify!($p), self.r.id.0)
            }
        }
        impl<T> $p<T> {
            pub(crate) fn new(r: LinkRef) -> Self {
                $p { r, _t: PhantomData }
            }
            /// The link this port belongs to.
            pub fn link(&self) -> LinkId {
                self.r.id
            }
        }
    };
}
port_impls!(OutPort);
port_impls!(InPort);

/// One of a component's input links, as [`Ctx::pending_inputs`](crate::Ctx::pending_inputs)
/// names it: equal to [`InPort::key`] of that input's port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InputKey(u64);

impl InputKey {
    pub(crate) fn of(arena: u32, slot: u32) -> InputKey {
        InputKey((u64::from(arena) << 32) | u64::from(slot))
    }
}

impl<T> InPort<T> {
    /// This input's key among the component's pending inputs.
    pub fn key(&self) -> InputKey {
        InputKey::of(self.r.arena, self.r.slot)
    }
}

/// A component's own numbering of some of its inputs (0, 1, ... in the order given), looked
/// up by key: a component polling only [`Ctx::pending_inputs`](crate::Ctx::pending_inputs)
/// finds which of its ports each names. Keys made one after another (a component's ports,
/// usually) are looked up in a table, others by binary search.
#[derive(Clone, Debug, Default)]
pub struct InputIndex {
    /// Every key with its number, sorted by key.
    sorted: Vec<(u64, u32)>,
    /// When the keys span at most a few times their count: number by `key - base` (u32::MAX
    /// where none).
    base: u64,
    table: Vec<u32>,
}

impl InputIndex {
    /// An empty index.
    pub fn new() -> InputIndex {
        InputIndex::default()
    }

    /// Numbers `key` next (the count of keys so far). Keys are distinct inputs.
    pub fn push(&mut self, key: InputKey) {
        let n = u32::try_from(self.sorted.len()).unwrap_or(u32::MAX);
        let at = self.sorted.partition_point(|&(k, _)| k < key.0);
        self.sorted.insert(at, (key.0, n));
        let (lo, hi) = (self.sorted[0].0, self.sorted[self.sorted.len() - 1].0);
        let span = hi - lo + 1;
        self.table.clear();
        if span <= 4 * self.sorted.len() as u64 + 64 {
            self.base = lo;
            self.table.resize(usize::try_from(span).unwrap_or(0), u32::MAX);
            for &(k, i) in &self.sorted {
                self.table[(k - lo) as usize] = i;
            }
        }
    }

    /// How many keys are numbered.
    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    /// True if no key is numbered.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The number of `key`, if it is one of the keys pushed.
    #[inline]
    pub fn get(&self, key: InputKey) -> Option<usize> {
        if !self.table.is_empty() {
            let i = *self.table.get(usize::try_from(key.0.wrapping_sub(self.base)).ok()?)?;
            return (i != u32::MAX).then_some(i as usize);
        }
        let k = self.sorted.binary_search_by_key(&key.0, |&(k, _)| k).ok()?;
        Some(self.sorted[k].1 as usize)
    }
}

/// A bandwidth limit on a link, in the sender's cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bandwidth {
    /// No limit beyond credits: any number of messages per cycle.
    Unlimited,
    /// At most this many bytes per sender cycle; a message occupies `ceil(bytes / n)` cycles.
    BytesPerCycle(u32),
    /// At most this many messages (flits) per sender cycle.
    MessagesPerCycle(u32),
}

/// The deepest receive buffer a link may have, in messages: [`crate::SimBuilder::link`] refuses
/// more (buffers grow as messages arrive; this bounds what one link can hold).
pub const MAX_LINK_DEPTH: u32 = 1 << 20;

/// The longest link or credit latency, in cycles (a second at 1 GHz).
pub const MAX_LINK_CYCLES: u64 = 1_000_000_000;

/// Buffer slots reserved per link when the simulation is built (only for links with an end
/// in the simulation: a partition reserves nothing for links between other partitions'
/// components); deeper buffers grow on demand.
pub(crate) const PREALLOCATED_SLOTS: u32 = 8;

/// The slot of a link a partition keeps no state for (no end among its components).
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// A link's parameters, fixed at assembly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// Latency in the sender's cycles (>= 1).
    pub latency: Cycles,
    /// Receiver buffer depth = initial credits (>= 1).
    pub depth: u32,
    /// Credit-return latency in the receiver's cycles (>= 1).
    pub credit_latency: Cycles,
    /// Optional bandwidth limit.
    pub bandwidth: Bandwidth,
}

impl Default for LinkSpec {
    /// One cycle of latency, depth 2, one cycle of credit return, no bandwidth limit.
    fn default() -> Self {
        LinkSpec { latency: Cycles(1), depth: 2, credit_latency: Cycles(1), bandwidth: Bandwidth::Unlimited }
    }
}

impl LinkSpec {
    /// Same spec with latency `n` sender cycles.
    pub fn latency(mut self, n: u64) -> Self {
        self.latency = Cycles(n);
        self
    }
    /// Same spec with buffer depth `d`.
    pub fn depth(mut self, d: u32) -> Self {
        self.depth = d;
        self
    }
    /// Same spec with credit-return latency `n` receiver cycles.
    pub fn credit_latency(mut self, n: u64) -> Self {
        self.credit_latency = Cycles(n);
        self
    }
    /// Same spec with bandwidth limit `bw`.
    pub fn bandwidth(mut self, bw: Bandwidth) -> Self {
        self.bandwidth = bw;
        self
    }
}

/// Something outside the model that sees one link's receive side: the swap-in of a link
/// receive FIFO block (trnsim-rtl's `swap_in`), which clocks the block with the link's
/// arrivals and receives and checks its outputs against them. Attached with
/// [`crate::SimBuilder::hook_link`]; without one, a send or receive costs one branch on an
/// `Option`. Serial runs only: a link cut by partitioning does not call its hook.
pub trait LinkHook {
    /// A message was sent; it becomes visible to the receiver at `arrival`. `bits` is its
    /// [`Payload::trace_bits`].
    fn sent(&mut self, arrival: Time, bits: u64);
    /// The receiver took the oldest arrived message (`bits`) at `now`, one of its clock edges.
    fn received(&mut self, now: Time, bits: u64);
}

/// Makes a link's hook from its spec and its receiver's clock ([`crate::SimBuilder::hook_link`]).
pub type MakeLinkHook<'a> = dyn FnMut(&LinkSpec, &crate::time::Clock) -> Result<Box<dyn LinkHook>, String> + 'a;

/// Why a send was refused; gives the message back.
#[derive(Debug, PartialEq, Eq)]
pub struct Blocked<T>(pub T);

/// Per-link statistics kept by the kernel.
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkStats {
    pub msgs: u64,
    pub bytes: u64,
    pub refused: u64,
    pub occupancy: TimeWeighted,
    /// Time from arrival to `recv`, in ps.
    pub wait_ps: Histogram,
}

/// The timing and credit state of one link, independent of its payload type: what a send
/// or a receive reads, kept with the link's [`Fifo`] in its first two cache lines (see
/// [`LinkState`]).
#[derive(Clone, Debug)]
pub(crate) struct Timing {
    pub src: ComponentId,
    pub dst: ComponentId,
    pub latency: Dur,
    pub credit_latency: Dur,
    pub bandwidth: Bandwidth,
    /// Credits the sender may spend now (returns with time <= now are folded in lazily).
    pub credits: u32,
    /// Pending credit returns, in non-decreasing time order.
    pub returns: Returns,
    /// Bandwidth state: the link is busy until this time.
    pub busy_until: Time,
    /// In the receiver's active inputs (`Meta::active_in`).
    pub in_active: bool,
    /// In the sender's active outputs (`Meta::active_out`).
    pub out_active: bool,
    /// The sender was refused (a refused send, `can_send` false, or no credits when asked)
    /// since its last send: only such a sender is woken when the link can take a message
    /// again. A sender that never asked has nothing to send on it.
    pub wants: bool,
    /// [`Timing::RECORD`] and [`Timing::HOOKED`] (one byte, so the timing stays within the
    /// link's first two cache lines).
    pub flags: u8,
    /// Whether partitioning cut this link, and which side this simulation holds.
    pub cut: Cut,
}

/// A link's pending credit returns, in non-decreasing time order: a ring of times (its
/// capacity a power of two, grown on demand; at most the link's depth are ever pending) with
/// the first kept beside it, so asking whether a credit is back reads no ring memory.
#[derive(Clone, Debug)]
pub(crate) struct Returns {
    /// The first pending return, or NEVER when none is pending.
    first: Time,
    ring: Box<[Time]>,
    head: u32,
    len: u32,
}

impl Returns {
    /// No pending return, with room for `n` before the ring grows.
    pub fn with_capacity(n: u32) -> Returns {
        let cap = if n == 0 { 0 } else { n.next_power_of_two() as usize };
        Returns { first: Time::NEVER, ring: vec![Time::NEVER; cap].into_boxed_slice(), head: 0, len: 0 }
    }

    /// The first pending return, or NEVER when none is pending.
    #[inline]
    pub fn first(&self) -> Time {
        self.first
    }

    /// How many returns are pending.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Adds a return at `t` (no earlier than every pending one).
    #[inline]
    pub fn push_back(&mut self, t: Time) {
        debug_assert!(self.len == 0 || self.ring[self.index(self.len - 1)] <= t, "credit returns never go back");
        if self.len as usize == self.ring.len() {
            self.grow();
        }
        let i = self.index(self.len);
        self.ring[i] = t;
        self.len += 1;
        if self.len == 1 {
            self.first = t;
        }
    }

    /// Drops the first pending return (there is one).
    #[inline]
    pub fn pop_front(&mut self) {
        debug_assert!(self.len > 0);
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        self.first = if self.len == 0 { Time::NEVER } else { self.ring[self.head as usize] };
    }

    #[inline]
    fn mask(&self) -> u32 {
        // The capacity is a power of two no larger than the deepest link's (2^20) rounded up.
        (self.ring.len() as u32).wrapping_sub(1)
    }

    #[inline]
    fn index(&self, k: u32) -> usize {
        (self.head.wrapping_add(k) & self.mask()) as usize
    }

    #[cold]
    fn grow(&mut self) {
        let cap = (self.ring.len() * 2).max(4);
        let mut ring = vec![Time::NEVER; cap].into_boxed_slice();
        for k in 0..self.len {
            ring[k as usize] = self.ring[self.index(k)];
        }
        self.ring = ring;
        self.head = 0;
    }
}

/// What only a bandwidth-limited link reads: the sender's period, and for a
/// messages-per-cycle limit the sender edge of the last send and the sends at that edge.
#[derive(Clone, Debug)]
pub(crate) struct Pace {
    pub src_period: Dur,
    pub window_start: Time,
    pub window_sends: u32,
}

/// A link's place in a partitioned run (see `crate::partition`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Both ends are in this simulation (always, in a serial run).
    Local,
    /// This simulation holds the sender; the receiver is in partition `part`.
    Out { part: u32 },
    /// This simulation holds the receiver; the sender is in partition `part`.
    In { part: u32 },
}

impl Timing {
    /// Flag: the link keeps its statistics ([`LinkStats`]); clear for links a serial run was
    /// told to leave out of its reports ([`crate::SimBuilder::keep_link_stats_where`]).
    pub const RECORD: u8 = 1;
    /// Flag: a swap-in hook sees the link ([`LinkState::hook`] is set).
    pub const HOOKED: u8 = 2;

    /// Whether the link keeps its statistics.
    #[inline]
    pub fn record(&self) -> bool {
        self.flags & Timing::RECORD != 0
    }

    /// Whether a swap-in hook sees the link.
    #[inline]
    pub fn hooked(&self) -> bool {
        self.flags & Timing::HOOKED != 0
    }

    /// Folds credit returns that are visible at `now`.
    #[inline]
    pub fn refresh(&mut self, now: Time) {
        while self.returns.first() <= now {
            self.returns.pop_front();
            self.credits += 1;
        }
    }

    /// Whether a send at `now` is allowed (`pace`: the link's).
    #[inline]
    pub fn can_send(&mut self, pace: &Pace, now: Time) -> bool {
        self.refresh(now);
        if self.credits == 0 || now < self.busy_until {
            return false;
        }
        match self.bandwidth {
            Bandwidth::MessagesPerCycle(n) => pace.window_start != now || pace.window_sends < n,
            _ => true,
        }
    }

    /// Spends a credit for a send of `bytes` at `now`; returns the arrival time.
    #[inline]
    pub fn spend(&mut self, pace: &mut Pace, now: Time, bytes: u32) -> Time {
        self.credits -= 1;
        let mut arrival = now + self.latency;
        match self.bandwidth {
            Bandwidth::Unlimited => {}
            Bandwidth::BytesPerCycle(bw) => {
                let cycles = u64::from(bytes.div_ceil(bw).max(1));
                let occupy = Dur::from_ps(pace.src_period.as_ps() * cycles);
                self.busy_until = now + occupy;
                arrival += Dur::from_ps(pace.src_period.as_ps() * (cycles - 1));
            }
            Bandwidth::MessagesPerCycle(_) => {
                if pace.window_start != now {
                    pace.window_start = now;
                    pace.window_sends = 0;
                }
                pace.window_sends += 1;
            }
        }
        arrival
    }

    /// Whether the sender must list this link in its active outputs after a send or a
    /// credit return pushed: it may now be blocked until a later time, and is not listed yet.
    #[inline]
    pub fn activates_out(&mut self) -> bool {
        let may_block = self.wants && (self.credits == 0 || matches!(self.bandwidth, Bandwidth::BytesPerCycle(_)));
        if may_block && !self.out_active {
            self.out_active = true;
            return true;
        }
        false
    }

    /// The sender was refused at `now`: it waits for the link. True when the link must join
    /// the sender's active outputs (it is not listed yet).
    #[inline]
    pub fn refused(&mut self) -> bool {
        self.wants = true;
        !std::mem::replace(&mut self.out_active, true)
    }

    /// The earliest time after `now` the link may take a message again, if its sender was
    /// refused and cannot send now (NEVER otherwise).
    pub fn blocked_until(&mut self, now: Time) -> Time {
        if !self.wants {
            return Time::NEVER;
        }
        self.refresh(now);
        if self.credits > 0 {
            if now < self.busy_until {
                return self.busy_until;
            }
            return Time::NEVER;
        }
        self.returns.first()
    }
}

/// A link's messages in send order, as (arrival time, message), with the first one's arrival
/// kept beside the queue: asking whether anything has arrived reads no message memory.
pub(crate) struct Fifo<T> {
    /// Arrival of the first message, or NEVER when empty.
    head_at: Time,
    q: VecDeque<(Time, T)>,
}

impl<T> Fifo<T> {
    fn new() -> Fifo<T> {
        Fifo { head_at: Time::NEVER, q: VecDeque::new() }
    }
    /// Arrival of the first message, or NEVER when empty.
    #[inline]
    pub fn head_at(&self) -> Time {
        self.head_at
    }
    #[inline]
    pub fn push_back(&mut self, m: (Time, T)) {
        if self.q.is_empty() {
            self.head_at = m.0;
        }
        self.q.push_back(m);
    }
    #[inline]
    pub fn pop_front(&mut self) -> Option<(Time, T)> {
        let m = self.q.pop_front();
        self.head_at = self.q.front().map_or(Time::NEVER, |f| f.0);
        m
    }
    #[inline]
    pub fn front(&self) -> Option<&(Time, T)> {
        self.q.front()
    }
    pub fn back(&self) -> Option<&(Time, T)> {
        self.q.back()
    }
    pub fn get(&self, i: usize) -> Option<&(Time, T)> {
        self.q.get(i)
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn iter(&self) -> std::collections::vec_deque::Iter<'_, (Time, T)> {
        self.q.iter()
    }
    pub fn partition_point(&self, pred: impl FnMut(&(Time, T)) -> bool) -> usize {
        self.q.partition_point(pred)
    }
    pub fn reserve_exact(&mut self, n: usize) {
        self.q.reserve_exact(n);
    }
}

/// One link's full state: timing plus the typed FIFO of (arrival time, message).
///
/// Laid out for the cache: a send or a receive reads `buf` and `timing`, the first 128 bytes
/// (two cache lines: the struct is 64-byte aligned and `repr(C)`), then the statistics if
/// the link keeps them; the rest only bandwidth-limited, hooked or cut links read.
#[repr(C, align(64))]
pub(crate) struct LinkState<T> {
    pub buf: Fifo<T>,
    pub timing: Timing,
    pub stats: LinkStats,
    pub pace: Pace,
    /// Cut links only. Sender side: (send time, arrival, message) sent this window, not yet
    /// handed to the receiver's partition. Receiver side: unused.
    pub out: Vec<(Time, Time, T)>,
    /// Cut links only, receiver side: send and receive times of this window, merged into the
    /// occupancy statistic when the window closes (the receiver learns of sends late).
    pub sent_log: Vec<Time>,
    pub recv_log: Vec<Time>,
    /// Swap-in: sees the sends and receives (local links only).
    pub hook: Option<Box<dyn LinkHook>>,
}

impl<T> LinkState<T> {
    /// A link with an empty buffer: its slots are reserved at build ([`ErasedArena::reserve`]).
    pub fn new(timing: Timing, pace: Pace) -> LinkState<T> {
        LinkState {
            buf: Fifo::new(),
            timing,
            stats: LinkStats::default(),
            pace,
            out: Vec::new(),
            sent_log: Vec::new(),
            recv_log: Vec::new(),
            hook: None,
        }
    }

    /// Receiver side of a cut link, at a window's end: applies this window's sends and
    /// receives to the occupancy level in time order (sends first at equal times, which is
    /// what any serial order gives once same-time changes collapse).
    fn settle_occupancy(&mut self) {
        let occ = &mut self.stats.occupancy;
        let mut level = occ.level();
        let (s, r) = (&self.sent_log, &self.recv_log);
        let (mut i, mut j) = (0, 0);
        while i < s.len() || j < r.len() {
            if j == r.len() || (i < s.len() && s[i] <= r[j]) {
                level += 1;
                occ.set(s[i], level);
                i += 1;
            } else {
                level -= 1;
                occ.set(r[j], level);
                j += 1;
            }
        }
        self.sent_log.clear();
        self.recv_log.clear();
    }
}

// A send or a receive reads the first two cache lines only (see `LinkState`).
const _: () = assert!(
    std::mem::offset_of!(LinkState<u64>, timing) + std::mem::size_of::<Timing>() <= 128
        && std::mem::size_of::<Fifo<[u8; 256]>>() == std::mem::size_of::<Fifo<u8>>()
);

/// Messages crossing from one partition to another in one window: (link id, send time,
/// arrival, message), links in id order, each link's messages in send order. Link ids agree in
/// every partition; arena slots do not (a partition stores only links with an end there).
pub(crate) type Batch<T> = Vec<(u32, Time, Time, T)>;

/// All links carrying one payload type.
pub(crate) struct Arena<T> {
    pub links: Vec<LinkState<T>>,
    /// Partitioned runs: (slot, link id) of the cut links whose sender / receiver is here, in
    /// link id order (so `cut_in` is searched by id).
    pub cut_out: Vec<(u32, u32)>,
    pub cut_in: Vec<(u32, u32)>,
}

/// Type-erased access to an arena, for what the scheduler and reports need.
pub(crate) trait ErasedArena {
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn timing_mut(&mut self, slot: u32) -> &mut Timing;
    /// Arrival time of the first message that is not yet visible at `now`.
    fn next_arrival_after(&self, slot: u32, now: Time) -> Time;
    /// [`ErasedArena::next_arrival_after`] for the idle scan of active inputs (NEVER when
    /// every message has arrived), or None when the link holds no message at all: it leaves
    /// its receiver's active inputs (its flag is cleared; the caller drops it from the list).
    fn scan_in(&mut self, slot: u32, now: Time) -> Option<Time>;
    /// [`Timing::blocked_until`] for the idle scan of active outputs: when NEVER, the link
    /// leaves its sender's active outputs.
    fn scan_out(&mut self, slot: u32, now: Time) -> Time;
    /// Messages in the link (in flight or buffered).
    fn len(&self, slot: u32) -> usize;
    /// Messages visible to the receiver at `now` but not yet received.
    fn arrived(&self, slot: u32, now: Time) -> usize;
    fn stats(&self, slot: u32) -> &LinkStats;
    /// Whether the link keeps statistics ([`Timing::record`]).
    fn records(&self, slot: u32) -> bool;
    /// Stops the link keeping statistics and drops what it kept.
    fn unrecord(&mut self, slot: u32);
    /// Attaches a swap-in hook to a link.
    fn set_hook(&mut self, slot: u32, hook: Box<dyn LinkHook>);
    /// Marks link `id` (in `slot`) as cut (partitioned runs); called in increasing id order.
    fn set_cut(&mut self, slot: u32, id: u32, cut: Cut);
    /// Reserves buffer room for `depth` messages, at most [`PREALLOCATED_SLOTS`].
    fn reserve(&mut self, slot: u32, depth: u32);
    /// Moves this window's messages on cut links towards partition `dst` into `batch`
    /// (created on first use, reused after). Returns the earliest arrival moved (or NEVER) and
    /// the number of messages.
    fn export(&mut self, dst: u32, batch: &mut Option<Box<dyn Any + Send>>) -> (Time, u64);
    /// Delivers a batch from another partition into the receive buffers, calling `arrive`
    /// with (receiver, arrival) per message. Returns the number of messages.
    fn import(&mut self, batch: &mut (dyn Any + Send), arrive: &mut dyn FnMut(ComponentId, Time, Option<u32>)) -> u64;
    /// Closes the window's occupancy accounting of the cut links received here.
    fn settle(&mut self);
    /// [`ErasedArena::export`] as bytes (for another process): appends
    /// `count, (slot, sent, arrival, len, bytes)*`. Errors if the payload cannot be encoded.
    fn export_bytes(&mut self, dst: u32, out: &mut Vec<u8>) -> Result<(Time, u64), String>;
    /// [`ErasedArena::import`] from bytes written by `export_bytes`.
    fn import_bytes(
        &mut self,
        r: &mut crate::parallel::wire::Reader<'_>,
        arrive: &mut dyn FnMut(ComponentId, Time, Option<u32>),
    ) -> Result<u64, String>;
}

impl<T: Payload> ErasedArena for Arena<T> {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn timing_mut(&mut self, slot: u32) -> &mut Timing {
        &mut self.links[slot as usize].timing
    }
    fn next_arrival_after(&self, slot: u32, now: Time) -> Time {
        // Arrivals on a link never decrease: a binary search, not a walk past every message
        // that has arrived and waits.
        let buf = &self.links[slot as usize].buf;
        let head = buf.head_at();
        if head > now {
            return head; // NEVER when empty
        }
        buf.get(buf.partition_point(|(t, _)| *t <= now)).map_or(Time::NEVER, |(t, _)| *t)
    }
    fn scan_in(&mut self, slot: u32, now: Time) -> Option<Time> {
        let link = &mut self.links[slot as usize];
        if link.buf.len() == 0 {
            link.timing.in_active = false;
            return None;
        }
        Some(self.next_arrival_after(slot, now))
    }
    fn scan_out(&mut self, slot: u32, now: Time) -> Time {
        let timing = &mut self.links[slot as usize].timing;
        let t = timing.blocked_until(now);
        if t.is_never() {
            timing.out_active = false;
        }
        t
    }
    fn len(&self, slot: u32) -> usize {
        self.links[slot as usize].buf.len()
    }
    fn arrived(&self, slot: u32, now: Time) -> usize {
        self.links[slot as usize].buf.partition_point(|(t, _)| *t <= now)
    }
    fn stats(&self, slot: u32) -> &LinkStats {
        &self.links[slot as usize].stats
    }
    fn records(&self, slot: u32) -> bool {
        self.links[slot as usize].timing.record()
    }
    fn unrecord(&mut self, slot: u32) {
        let link = &mut self.links[slot as usize];
        link.timing.flags &= !Timing::RECORD;
        link.stats = LinkStats::default();
    }
    fn set_hook(&mut self, slot: u32, hook: Box<dyn LinkHook>) {
        let link = &mut self.links[slot as usize];
        link.hook = Some(hook);
        link.timing.flags |= Timing::HOOKED;
    }
    fn reserve(&mut self, slot: u32, depth: u32) {
        let buf = &mut self.links[slot as usize].buf;
        buf.reserve_exact((depth.min(PREALLOCATED_SLOTS) as usize).saturating_sub(buf.len()));
    }
    fn set_cut(&mut self, slot: u32, id: u32, cut: Cut) {
        self.links[slot as usize].timing.cut = cut;
        match cut {
            Cut::Local => {}
            Cut::Out { .. } => self.cut_out.push((slot, id)),
            Cut::In { .. } => self.cut_in.push((slot, id)),
        }
    }
    fn export(&mut self, dst: u32, batch: &mut Option<Box<dyn Any + Send>>) -> (Time, u64) {
        let (mut first, mut n) = (Time::NEVER, 0);
        for &(slot, id) in &self.cut_out {
            let link = &mut self.links[slot as usize];
            if link.timing.cut != (Cut::Out { part: dst }) || link.out.is_empty() {
                continue;
            }
            let b = batch.get_or_insert_with(|| Box::new(Batch::<T>::new()));
            let b = b.downcast_mut::<Batch<T>>().expect("a batch slot always holds one payload type");
            for (sent, arrival, msg) in link.out.drain(..) {
                first = first.min(arrival);
                n += 1;
                b.push((id, sent, arrival, msg));
            }
        }
        (first, n)
    }
    fn import(&mut self, batch: &mut (dyn Any + Send), arrive: &mut dyn FnMut(ComponentId, Time, Option<u32>)) -> u64 {
        let b = batch.downcast_mut::<Batch<T>>().expect("a batch slot always holds one payload type");
        let n = b.len() as u64;
        for (id, sent, arrival, msg) in b.drain(..) {
            let slot = match self.cut_in.binary_search_by_key(&id, |&(_, i)| i) {
                Ok(k) => self.cut_in[k].0,
                Err(_) => unreachable!("a batch holds only links received here (threads share one plan)"),
            };
            let link = &mut self.links[slot as usize];
            link.buf.push_back((arrival, msg));
            link.sent_log.push(sent);
            let newly = !std::mem::replace(&mut link.timing.in_active, true);
            arrive(link.timing.dst, arrival, newly.then_some(slot));
        }
        n
    }
    fn export_bytes(&mut self, dst: u32, out: &mut Vec<u8>) -> Result<(Time, u64), String> {
        use crate::parallel::wire::{put_u32, put_u64};
        let (mut first, mut n) = (Time::NEVER, 0u64);
        let count_at = out.len();
        put_u32(out, 0);
        for &(slot, id) in &self.cut_out {
            let link = &mut self.links[slot as usize];
            if link.timing.cut != (Cut::Out { part: dst }) {
                continue;
            }
            for (sent, arrival, msg) in link.out.drain(..) {
                first = first.min(arrival);
                n += 1;
                put_u32(out, id);
                put_u64(out, sent.as_ps());
                put_u64(out, arrival.as_ps());
                let len_at = out.len();
                put_u32(out, 0);
                if !msg.encode(out) {
                    return Err(format!(
                        "payload type {} cannot cross processes (implement Payload::encode and decode)",
                        std::any::type_name::<T>()
                    ));
                }
                let len = (out.len() - len_at - 4) as u32;
                out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
            }
        }
        let c = u32::try_from(n).map_err(|_| "more than 2^32 messages in one window".to_string())?;
        out[count_at..count_at + 4].copy_from_slice(&c.to_le_bytes());
        Ok((first, n))
    }
    fn import_bytes(
        &mut self,
        r: &mut crate::parallel::wire::Reader<'_>,
        arrive: &mut dyn FnMut(ComponentId, Time, Option<u32>),
    ) -> Result<u64, String> {
        let n = r.u32()?;
        for _ in 0..n {
            let id = r.u32()?;
            let sent = Time::from_ps(r.u64()?);
            let arrival = Time::from_ps(r.u64()?);
            let bytes = r.bytes_u32()?;
            let msg =
                T::decode(bytes).ok_or_else(|| format!("a {} message does not decode", std::any::type_name::<T>()))?;
            let k = self
                .cut_in
                .binary_search_by_key(&id, |&(_, i)| i)
                .map_err(|_| format!("link {id} is not received here"))?;
            let slot = self.cut_in[k].0;
            let link = &mut self.links[slot as usize];
            link.buf.push_back((arrival, msg));
            link.sent_log.push(sent);
            let newly = !std::mem::replace(&mut link.timing.in_active, true);
            arrive(link.timing.dst, arrival, newly.then_some(slot));
        }
        Ok(u64::from(n))
    }
    fn settle(&mut self) {
        for &(slot, _) in &self.cut_in {
            let link = &mut self.links[slot as usize];
            if !(link.sent_log.is_empty() && link.recv_log.is_empty()) {
                link.settle_occupancy();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Returns;
    use crate::time::Time;
    use std::collections::VecDeque;

    #[test]
    fn credit_returns_come_back_in_order_across_growth_and_wrap() {
        // Against a VecDeque: pushes and pops interleaved so the ring wraps and grows.
        let mut rng = crate::SimRng::new(7, 0);
        for cap in [0, 1, 3, 8] {
            let (mut r, mut q) = (Returns::with_capacity(cap), VecDeque::new());
            let mut t = 0u64;
            for step in 0..5_000 {
                if rng.below(3) > 0 || q.is_empty() {
                    t += rng.below(4);
                    r.push_back(Time::from_ps(t));
                    q.push_back(Time::from_ps(t));
                } else {
                    r.pop_front();
                    q.pop_front();
                }
                assert_eq!(r.first(), q.front().copied().unwrap_or(Time::NEVER), "capacity {cap}, step {step}");
                assert_eq!(r.len(), q.len());
            }
        }
    }
}
