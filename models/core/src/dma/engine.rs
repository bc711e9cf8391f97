//! One DMA engine: its queues, its packets in flight and its byte budget.
//!
//! ```text
//!  queues[16] ─ arbiter (at packet boundaries) ─► slot: Read stage ─► Write stage ─► done
//!                                                  HBM bursts         SBUF write(s)
//!                                                  or SBUF read(s)    or HBM bursts
//! ```
//!
//! A packet goes through two stages, reading its source side and writing its destination
//! side. One stage per packet is *charged* to the engine's byte budget: the HBM bursts when a
//! side is in HBM (the source's if both are), otherwise the SBUF reads. The engine starts a new
//! packet when a slot is free and no packet is still issuing its charged stage, so it moves one
//! packet at a time while earlier packets wait for data (HBM->SBUF) and later ones are read
//! ahead (SBUF->HBM).

use super::book::Book;
use super::hook::QueueHook;
use super::params::{DmaParams, MAX_QUEUES, MAX_SLOTS};
use super::plan::{burst_len, pieces, Granule, Piece, Side};
use super::sched::Arbiter;
use super::stats::EngineStats;
use crate::msg::{MemAccess, MemDone};
use std::collections::VecDeque;
use trnsim_kernel::{Arg, Ctx, Dur, Flow, InPort, OutPort, Time, TrackId};
use trnsim_mem::hbm::{MemReq, MemResp};

/// Micro-bytes per byte (the budget's unit).
const UB: i64 = 1_000_000;
/// HBM tags: slot above this many bits, byte offset in the packet below.
const TAG_SHIFT: u32 = 40;
/// SBUF tags: slot above this many bits, piece index below.
const PIECE_SHIFT: u32 = 16;

/// Block-wide constants the engines use.
pub(crate) struct Env {
    pub functional: bool,
    /// Budget accrual, µB per ps.
    pub rate: i64,
    /// Budget ceiling, µB (one burst: a rested engine may issue one burst at once).
    pub cap: i64,
    /// The HBM access size.
    pub access: Granule,
    pub outstanding: u32,
    /// Requests of several bursts (fast fidelity: see `DmaParams::bulk`).
    pub bulk: bool,
}

/// One engine's share of a command, waiting in a queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Part {
    pub cmd: u32,
    pub r0: u32,
    pub r1: u32,
    /// Next packet to start.
    pub next: u32,
    /// Packets in all.
    pub total: u32,
    /// When the start latency has passed.
    pub eligible: Time,
}

/// An engine's ports: one HBM port pair and one SBUF client.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EnginePorts {
    pub hbm_req: OutPort<MemReq>,
    pub hbm_resp: InPort<MemResp>,
    pub sbuf_req: OutPort<MemAccess>,
    pub sbuf_done: InPort<MemDone>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Stage {
    #[default]
    Free,
    Read,
    Write,
}

/// A packet in flight: rows `[r0, r1)` x bytes `[x0, x1)` of command `cmd`.
#[derive(Default)]
struct Slot {
    stage: Stage,
    charged: bool,
    cmd: u32,
    r0: u32,
    r1: u32,
    x0: u64,
    x1: u64,
    /// HBM stage: next burst at row `row`, byte `x`; `more` while bursts remain to issue.
    row: u32,
    x: u64,
    more: bool,
    /// `holds_engine()` as last counted in the engine's `holding`.
    held: bool,
    /// `issuing()` as last counted in the engine's `issuing`.
    counted_issuing: bool,
    inflight: u32,
    /// On-chip stage: accesses, how many are sent, how many are unanswered.
    pieces: Vec<Piece>,
    sent: usize,
    acks: usize,
    /// Functional mode: the packet's bytes, row-major (`r1 - r0` rows of `x1 - x0`).
    data: Vec<u8>,
    started: Time,
}

impl Slot {
    fn width(&self) -> u64 {
        self.x1 - self.x0
    }
    fn rows(&self) -> u32 {
        self.r1 - self.r0
    }
    /// Still issuing its charged stage: the engine may not start another packet yet.
    fn holds_engine(&self) -> bool {
        self.stage != Stage::Free && self.charged && (self.more || self.sent < self.pieces.len())
    }
    /// Has bursts or accesses of its stage left to issue.
    fn issuing(&self) -> bool {
        self.more || self.sent < self.pieces.len()
    }
    fn stage_done(&self) -> bool {
        !self.more && self.inflight == 0 && self.sent == self.pieces.len() && self.acks == 0
    }
}

/// One DMA engine.
///
/// Laid out for the cache (`repr(C)`, 64-byte aligned): what a DMA block's tick reads of every
/// engine to decide whether it needs a tick (`busy`, `queued`, the answers outstanding,
/// `poked`, `due`) fills the first line, with the budget a tick brings up first.
#[repr(C, align(64))]
pub(crate) struct Engine {
    /// Busy slots: how many (`order[..busy]`).
    busy: u16,
    /// Parts in `queues`.
    queued: u32,
    /// HBM requests and SBUF accesses sent and not yet answered (no answer can arrive
    /// without one: the engine looks at its response links only then).
    hbm_out: u32,
    sbuf_out: u32,
    /// Something happened since the last tick that needs one: a part was queued, or a link
    /// refused a burst or an access (its credit comes back as a wake-up of the whole block).
    poked: bool,
    /// When the last tick asked to be ticked again (`Time::NEVER`: only on an input).
    due: Time,
    /// Byte budget in µB (may go negative: debt), as of `budget_at`.
    budget: i64,
    budget_at: Time,
    idx: u32,
    ports: EnginePorts,
    /// Busy slots in start order (oldest first issues first), held in the engine (not behind
    /// a pointer: a tick's first look at them on a large system is then no second miss).
    order: [u8; MAX_SLOTS as usize],
    /// Per queue: its head part's `eligible` (NEVER when empty), beside the queues so that
    /// asking which queues may start or when reads no queue's memory; held in the engine.
    head_at: [Time; MAX_QUEUES as usize],
    queues: Vec<VecDeque<Part>>,
    /// Bit `q` set: `queues[q]`'s head part has no packets (`total == 0`).
    head_empty: u64,
    /// Parts in `queues` without packets (`total == 0`), which `finish_empty_parts` completes.
    empty_parts: u32,
    /// Bit `q` set: `queues[q]` holds a part.
    nonempty: u64,
    arb: Arbiter,
    slots: Vec<Slot>,
    /// Slots that hold the engine (`Slot::holds_engine`), kept by `rehold` after every change
    /// of a slot's stage, bursts or pieces, so `may_start` reads one count.
    holding: u32,
    /// Slots with something left to issue (`Slot::issuing`), kept by `rehold` likewise.
    issuing: u32,
    /// The same slots as a bit set (bit `s % 64` of word `s / 64`; at most 256 slots), so the
    /// issue pass skips the others without reading their memory.
    issuing_bits: [u64; 4],
    /// HBM bursts in flight.
    inflight: u32,
    pub track: Option<TrackId>,
    pub stats: EngineStats,
    /// A swap-in watching the queues (None: one branch per part and packet, nothing else).
    pub hook: Option<Box<dyn QueueHook>>,
    /// Queues served, in order (tests only).
    #[cfg(test)]
    pub picks: Vec<u8>,
}

// The first line holds what a block's tick reads of an engine that needs no tick.
const _: () = assert!(std::mem::offset_of!(Engine, budget) + 8 <= 64);

impl Engine {
    pub fn new(idx: u32, p: &DmaParams, ports: EnginePorts, env: &Env) -> Engine {
        Engine {
            idx,
            ports,
            queues: (0..p.queues).map(|_| VecDeque::new()).collect(),
            head_at: [Time::NEVER; MAX_QUEUES as usize],
            head_empty: 0,
            queued: 0,
            empty_parts: 0,
            nonempty: 0,
            arb: Arbiter::new(p),
            slots: (0..p.packets_in_flight).map(|_| Slot::default()).collect(),
            busy: 0,
            order: [0; MAX_SLOTS as usize],
            holding: 0,
            issuing: 0,
            issuing_bits: [0; 4],
            hbm_out: 0,
            sbuf_out: 0,
            budget: env.cap,
            budget_at: Time::ZERO,
            inflight: 0,
            due: Time::NEVER,
            poked: false,
            track: None,
            stats: EngineStats::default(),
            hook: None,
            #[cfg(test)]
            picks: Vec::new(),
        }
    }

    /// Appends a part to queue `q` (arrived at `now`).
    pub fn enqueue(&mut self, now: Time, q: usize, part: Part) {
        if let Some(h) = self.hook.as_mut() {
            h.enqueued(now, q, part.total, part.eligible);
        }
        self.empty_parts += u32::from(part.total == 0);
        self.queues[q].push_back(part);
        if self.nonempty & (1 << q) == 0 {
            self.new_head(q);
        }
        self.nonempty |= 1 << q;
        self.queued += 1;
        self.poked = true;
    }

    /// Ticks the engine if something may have changed for it since its last tick (a part
    /// queued, a response arrived, a refused link, its wake-up time reached); otherwise
    /// changes nothing (a tick would only have brought its budget up to now, which its next
    /// tick does: [`Engine::accrue`]). Returns when it next needs a tick without an input
    /// arriving, like [`Engine::tick`]. `answers`: whether the HBM and the SBUF response inputs
    /// may hold an answer (false: they hold none, in flight or arrived).
    #[inline(always)]
    pub fn tick_if_due(&mut self, cx: &mut Ctx<'_>, book: &mut Book, env: &Env, answers: (bool, bool)) -> Time {
        let now = cx.now();
        if self.queued == 0 && self.busy == 0 {
            return Time::NEVER; // as `tick` does: nothing queued, nothing in flight
        }
        if self.poked
            || self.due <= now
            || (self.hbm_out > 0 && answers.0 && cx.peek(self.ports.hbm_resp).is_some())
            || (self.sbuf_out > 0 && answers.1 && cx.peek(self.ports.sbuf_done).is_some())
        {
            self.poked = false;
            self.due = self.tick(cx, book, env);
        }
        self.due
    }

    /// One tick: takes responses, starts packets, issues what the budget, the outstanding
    /// limit and the links allow. Returns when it next needs a tick without an input arriving
    /// (budget refilled or a start latency over), or `Time::NEVER`. (Out of line: the block's
    /// loop inlines `tick_if_due`'s checks, which most engines stop at.)
    #[inline(never)]
    pub fn tick(&mut self, cx: &mut Ctx<'_>, book: &mut Book, env: &Env) -> Time {
        if self.queued == 0 && self.busy == 0 {
            return Time::NEVER; // nothing queued, nothing in flight: no response can arrive
        }
        let now = cx.now();
        self.accrue(now, env);
        while let Some(r) = cx.recv(self.ports.hbm_resp) {
            self.on_hbm(cx, r, book, env);
        }
        while let Some(d) = cx.recv(self.ports.sbuf_done) {
            self.on_sbuf(cx, d, book, env);
        }
        loop {
            self.start_packets(cx, book, env);
            let budget_blocked = self.issue(cx, book, env);
            if !(self.may_start() && self.ready(now) != 0) {
                return self.next_wake(now, budget_blocked, env);
            }
        }
    }

    /// Brings the budget from `budget_at` up to `now`. Saturating, so bringing it up in
    /// steps or at once gives the same budget (`min(min(b + x, cap) + y, cap)` is
    /// `min(b + x + y, cap)`): an engine that needs no tick is left to bring it up at its next.
    fn accrue(&mut self, now: Time, env: &Env) {
        self.budget = accrued(self.budget, now.since(self.budget_at).as_ps(), env.rate, env.cap);
        self.budget_at = now;
    }

    fn next_wake(&self, now: Time, budget_blocked: bool, env: &Env) -> Time {
        let mut t = Time::NEVER;
        if budget_blocked {
            // (Blocked: the budget is at most 0, and the rate at least 1 µB/ps.)
            t = now + Dur::from_ps(self.budget.unsigned_abs() / env.rate.unsigned_abs().max(1) + 1);
        }
        let can_start = self.may_start();
        let mut m = self.nonempty;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            let eligible = self.head_at[q];
            if eligible > now && (can_start || self.head_empty & (1 << q) != 0) {
                t = t.min(eligible);
            }
        }
        t
    }

    /// Busy slots in start order.
    fn busy(&self) -> &[u8] {
        &self.order[..usize::from(self.busy)]
    }

    fn may_start(&self) -> bool {
        debug_assert_eq!(
            self.holding != 0,
            self.busy().iter().any(|&s| self.slots[s as usize].holds_engine()),
            "the count of slots holding the engine is stale"
        );
        usize::from(self.busy) < self.slots.len() && self.holding == 0
    }

    /// Counts slot `s` in `holding` as it now stands.
    fn rehold(&mut self, s: usize) {
        let slot = &mut self.slots[s];
        let (issuing, holds) = (slot.issuing(), slot.holds_engine());
        recount(&mut slot.counted_issuing, issuing, &mut self.issuing);
        recount(&mut slot.held, holds, &mut self.holding);
        let (w, bit) = (s / 64, 1u64 << (s % 64));
        if issuing {
            self.issuing_bits[w] |= bit;
        } else {
            self.issuing_bits[w] &= !bit;
        }
    }

    /// Notes queue `q`'s head part (after its head changed) in `head_at` and `head_empty`.
    fn new_head(&mut self, q: usize) {
        let (at, empty) = self.queues[q].front().map_or((Time::NEVER, false), |h| (h.eligible, h.total == 0));
        self.head_at[q] = at;
        if empty {
            self.head_empty |= 1 << q;
        } else {
            self.head_empty &= !(1 << q);
        }
    }

    /// Queues whose head part may start a packet now, as a bit mask.
    fn ready(&self, now: Time) -> u64 {
        debug_assert!(
            self.queues.iter().enumerate().all(|(q, queue)| {
                let f = queue.front();
                self.head_at[q] == f.map_or(Time::NEVER, |h| h.eligible)
                    && (self.head_empty & (1 << q) != 0) == f.is_some_and(|h| h.total == 0)
            }),
            "a queue's head is noted as it is"
        );
        let mut m = 0;
        let mut left = self.nonempty;
        while left != 0 {
            let q = left.trailing_zeros() as usize;
            left &= left - 1;
            if self.head_at[q] <= now && self.head_empty & (1 << q) == 0 {
                m |= 1 << q;
            }
        }
        m
    }

    fn start_packets(&mut self, cx: &mut Ctx<'_>, book: &mut Book, env: &Env) {
        let now = cx.now();
        self.finish_empty_parts(cx, book);
        while self.may_start() {
            let ready = self.ready(now);
            let Some(q) = self.arb.pick(ready) else { break };
            let head = self.queues[q].front_mut().expect("ready queue has a head");
            let (cmd, r0, r1, j) = (head.cmd, head.r0, head.r1, head.next);
            head.next += 1;
            if let Some(h) = self.hook.as_mut() {
                h.started(now, ready, q, j, head.next == head.total);
            }
            if head.next == head.total {
                self.queues[q].pop_front();
                self.new_head(q);
                if self.queues[q].is_empty() {
                    self.nonempty &= !(1 << q);
                }
                self.queued -= 1;
                book.queued -= 1;
                book.stats.queued.set(now, book.queued);
            }
            #[cfg(test)]
            self.picks.push(q as u8);
            let s = self.slots.iter().position(|s| s.stage == Stage::Free).expect("may_start: a slot is free");
            let plan = book.cmds[cmd as usize].plan;
            let (x0, x1) = plan.packet_range(j);
            let slot = &mut self.slots[s];
            (slot.cmd, slot.r0, slot.r1, slot.x0, slot.x1, slot.started) = (cmd, r0, r1, x0, x1, now);
            if env.functional {
                slot.data.clear();
                slot.data.resize((u64::from(r1 - r0) * (x1 - x0)) as usize, 0);
            }
            enter(slot, Stage::Read, plan.src, plan.dst);
            self.rehold(s);
            self.order[usize::from(self.busy)] = s as u8;
            self.busy += 1;
            self.finish_empty_parts(cx, book);
        }
    }

    /// Parts without packets (empty or malformed commands) complete once they reach the head
    /// of their queue and their start latency has passed.
    fn finish_empty_parts(&mut self, cx: &mut Ctx<'_>, book: &mut Book) {
        if self.empty_parts == 0 {
            return; // nothing to complete: no need to look at every queue's head
        }
        let now = cx.now();
        let mut m = self.nonempty;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            while let Some(h) = self.queues[q].front().copied() {
                if h.total > 0 || h.eligible > now {
                    break;
                }
                self.queues[q].pop_front();
                if let Some(hook) = self.hook.as_mut() {
                    hook.retired_empty(now, q);
                }
                self.new_head(q);
                if self.queues[q].is_empty() {
                    self.nonempty &= !(1 << q);
                }
                self.empty_parts -= 1;
                self.queued -= 1;
                book.queued -= 1;
                book.stats.queued.set(now, book.queued);
                book.part_done(cx, h.cmd, self.track);
            }
        }
    }

    /// Issues bursts and accesses, oldest packet first. Returns whether some charged work waits
    /// for the budget.
    fn issue(&mut self, cx: &mut Ctx<'_>, book: &Book, env: &Env) -> bool {
        debug_assert_eq!(
            self.issuing as usize,
            self.busy().iter().filter(|&&s| self.slots[s as usize].issuing()).count(),
            "the count of slots with something to issue is stale"
        );
        if self.issuing == 0 {
            return false; // every packet waits for answers: nothing to look at
        }
        let mut budget_blocked = false;
        for i in 0..usize::from(self.busy) {
            let s = self.order[i] as usize;
            debug_assert_eq!(
                self.issuing_bits[s / 64] & (1 << (s % 64)) != 0,
                self.slots[s].issuing(),
                "slot {s}'s issuing bit is stale"
            );
            if self.issuing_bits[s / 64] & (1 << (s % 64)) == 0 {
                // Everything of this stage is issued: skip it without reading the slot or its
                // command (cache misses per packet per tick on large systems).
                continue;
            }
            let slot = &self.slots[s];
            let plan = &book.cmds[slot.cmd as usize].plan;
            let write = slot.stage == Stage::Write;
            budget_blocked |= match if write { plan.dst } else { plan.src } {
                Side::Hbm { addr, stride } => self.issue_bursts(cx, s, addr, stride, write, env),
                Side::Chip(_) => self.issue_pieces(cx, s, write, env),
            };
            self.rehold(s);
        }
        budget_blocked
    }

    fn issue_bursts(&mut self, cx: &mut Ctx<'_>, s: usize, addr: u64, stride: u64, write: bool, env: &Env) -> bool {
        let slot = &mut self.slots[s];
        while slot.more {
            if self.inflight >= env.outstanding {
                return false;
            }
            if slot.charged && self.budget <= 0 {
                return true;
            }
            if !cx.can_send(self.ports.hbm_req) {
                self.poked = true;
                return false;
            }
            let a = addr + u64::from(slot.row) * stride + slot.x;
            let len = if env.bulk {
                // The rest of this row, as far as the outstanding limit leaves room for.
                let room = u64::from(env.outstanding - self.inflight) * env.access.bytes() - env.access.rem(a);
                (slot.x1 - slot.x).min(room)
            } else {
                burst_len(a, slot.x1 - slot.x, env.access)
            };
            let bursts = env.access.div_ceil(len);
            let off = u64::from(slot.row - slot.r0) * slot.width() + (slot.x - slot.x0);
            let data = (write && env.functional).then(|| slot.data[off as usize..(off + len) as usize].into());
            let req = MemReq { tag: (s as u64) << TAG_SHIFT | off, addr: a, write, bytes: len as u32, data };
            if cx.send(self.ports.hbm_req, req).is_err() {
                self.poked = true;
                return false;
            }
            slot.x += len;
            if slot.x == slot.x1 {
                slot.row += 1;
                slot.x = slot.x0;
                slot.more = slot.row < slot.r1;
            }
            slot.inflight += 1;
            self.hbm_out += 1;
            self.inflight += u32::try_from(bursts).unwrap_or(u32::MAX);
            if slot.charged {
                self.budget -= (bursts * env.access.bytes()) as i64 * UB;
            }
            if write {
                self.stats.hbm_writes += bursts;
            } else {
                self.stats.hbm_reads += bursts;
            }
        }
        false
    }

    fn issue_pieces(&mut self, cx: &mut Ctx<'_>, s: usize, write: bool, env: &Env) -> bool {
        let slot = &mut self.slots[s];
        while slot.sent < slot.pieces.len() {
            if slot.charged && self.budget <= 0 {
                return true;
            }
            if !cx.can_send(self.ports.sbuf_req) {
                self.poked = true;
                return false;
            }
            let pc = slot.pieces[slot.sent];
            let data = if write && env.functional { gather(slot, &pc) } else { Vec::new() };
            let tag = (s as u64) << PIECE_SHIFT | slot.sent as u64;
            let acc = MemAccess { tag, iface: if write { 2 } else { 0 }, ap: pc.ap, write, accumulate: false, data };
            if cx.send(self.ports.sbuf_req, acc).is_err() {
                self.poked = true;
                return false;
            }
            slot.sent += 1;
            slot.acks += 1;
            self.sbuf_out += 1;
            if slot.charged {
                self.budget -= (pc.len * u64::from(slot.rows())) as i64 * UB;
            }
            if write {
                self.stats.sbuf_writes += 1;
            } else {
                self.stats.sbuf_reads += 1;
            }
            match pc.ap.mem {
                crate::isa::Mem::Sbuf => self.stats.sbuf_bytes += pc.ap.bytes(),
                crate::isa::Mem::Psum => self.stats.psum_bytes += pc.ap.bytes(),
            }
        }
        false
    }

    fn on_hbm(&mut self, cx: &mut Ctx<'_>, r: MemResp, book: &mut Book, env: &Env) {
        let s = (r.tag >> TAG_SHIFT) as usize;
        let off = (r.tag & ((1 << TAG_SHIFT) - 1)) as usize;
        let slot = &mut self.slots[s];
        slot.inflight -= 1;
        self.hbm_out -= 1;
        self.inflight -= u32::try_from(env.access.div_ceil(u64::from(r.bytes)).max(1)).unwrap_or(u32::MAX);
        if let (Some(d), false, true) = (&r.data, r.write, env.functional) {
            let n = d.len().min(slot.data.len().saturating_sub(off));
            slot.data[off..off + n].copy_from_slice(&d[..n]);
        }
        self.advance(cx, s, book);
    }

    fn on_sbuf(&mut self, cx: &mut Ctx<'_>, d: MemDone, book: &mut Book, env: &Env) {
        let s = (d.tag >> PIECE_SHIFT) as usize;
        let slot = &mut self.slots[s];
        slot.acks -= 1;
        self.sbuf_out -= 1;
        if env.functional && slot.stage == Stage::Read && !d.data.is_empty() {
            let pc = slot.pieces[(d.tag & ((1 << PIECE_SHIFT) - 1)) as usize];
            scatter(slot, &pc, &d.data);
        }
        self.advance(cx, s, book);
    }

    /// Moves packet `s` to its next stage if the current one is complete.
    fn advance(&mut self, cx: &mut Ctx<'_>, s: usize, book: &mut Book) {
        let slot = &mut self.slots[s];
        if !slot.stage_done() {
            return;
        }
        if slot.stage == Stage::Read {
            let plan = &book.cmds[slot.cmd as usize].plan;
            enter(slot, Stage::Write, plan.src, plan.dst);
            return self.rehold(s);
        }
        let bytes = u64::from(slot.rows()) * slot.width();
        self.stats.bytes += bytes;
        self.stats.packets += 1;
        let now = cx.now();
        if let (Some(track), Some(mut tr)) = (self.track, cx.tracer()) {
            let arg = Some(Arg { key: "bytes", value: bytes as i64 });
            tr.slice(track, "packet", slot.started, now, Flow::None, arg);
        }
        slot.stage = Stage::Free;
        let cmd = slot.cmd;
        book.moved(cx, bytes);
        self.rehold(s);
        let n = usize::from(self.busy);
        if let Some(at) = self.order[..n].iter().position(|&x| usize::from(x) == s) {
            self.order.copy_within(at + 1..n, at);
            self.busy -= 1;
        }
        book.packet_done(cx, cmd, self.idx, self.track);
    }
}

/// A budget of `budget` µB after `dt_ps` at `rate` µB/ps, at most `cap` (saturating: in
/// steps or at once, the same).
fn accrued(budget: i64, dt_ps: u64, rate: i64, cap: i64) -> i64 {
    let dt = i64::try_from(dt_ps).unwrap_or(i64::MAX);
    budget.saturating_add(dt.saturating_mul(rate)).min(cap)
}

/// Brings a slot's `counted` flag to `now`, adding it to or taking it from `count`.
fn recount(counted: &mut bool, now: bool, count: &mut u32) {
    if now != *counted {
        *counted = now;
        if now {
            *count += 1;
        } else {
            *count -= 1;
        }
    }
}

/// Sets packet `slot` up for `stage`, reading `src` or writing `dst`. The charged stage is the
/// HBM one (the source's if both are in HBM), or the SBUF read of an SBUF->SBUF copy.
fn enter(slot: &mut Slot, stage: Stage, src: Side, dst: Side) {
    let hbm_dst_only = matches!((src, dst), (Side::Chip(_), Side::Hbm { .. }));
    slot.stage = stage;
    slot.charged = if stage == Stage::Read { !hbm_dst_only } else { hbm_dst_only };
    slot.pieces.clear();
    (slot.sent, slot.acks, slot.more) = (0, 0, false);
    match if stage == Stage::Read { src } else { dst } {
        Side::Hbm { .. } => (slot.row, slot.x, slot.more) = (slot.r0, slot.x0, true),
        Side::Chip(ap) => {
            let p0 = ap.partition_start + slot.r0 as u16;
            pieces(&ap, p0, slot.rows() as u16, slot.x0, slot.x1, &mut slot.pieces);
        }
    }
}

/// The bytes of piece `pc` out of the packet buffer, partition-major.
fn gather(slot: &Slot, pc: &Piece) -> Vec<u8> {
    let (w, x, len) = (slot.width() as usize, pc.x as usize, pc.len as usize);
    if x == 0 && len == w {
        return slot.data.clone();
    }
    let mut out = Vec::with_capacity(len * slot.rows() as usize);
    for r in 0..slot.rows() as usize {
        out.extend_from_slice(&slot.data[r * w + x..r * w + x + len]);
    }
    out
}

/// Stores the bytes of piece `pc` (partition-major) into the packet buffer.
fn scatter(slot: &mut Slot, pc: &Piece, data: &[u8]) {
    let (w, x, len) = (slot.width() as usize, pc.x as usize, pc.len as usize);
    for (r, row) in data.chunks_exact(len).enumerate().take(slot.rows() as usize) {
        slot.data[r * w + x..r * w + x + len].copy_from_slice(row);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_budget_brought_up_in_steps_is_the_budget_brought_up_at_once() {
        // Debts, full budgets, tiny and huge rates and gaps (saturating near i64 and u64
        // limits): two steps always equal one.
        let mut rng = trnsim_kernel::SimRng::new(0xacc7, 0);
        let pick = |rng: &mut trnsim_kernel::SimRng, xs: &[u64]| xs[rng.below(xs.len() as u64) as usize];
        let cap = 32_000_000i64;
        for _ in 0..100_000 {
            let b = cap - i64::try_from(pick(&mut rng, &[0, 1, 999, 32_000_000, 4_096_000_000, 1 << 40])).unwrap();
            let rate = i64::try_from(pick(&mut rng, &[1, 7, 38_400, 1_000_000_000])).unwrap();
            let (x, y) = (pick(&mut rng, &[0, 1, 500, 1 << 32, 1 << 62, u64::MAX]), rng.below(1 << 40));
            let once = super::accrued(b, x.saturating_add(y), rate, cap);
            assert_eq!(super::accrued(super::accrued(b, x, rate, cap), y, rate, cap), once, "{b} {rate} {x} {y}");
        }
    }
}
