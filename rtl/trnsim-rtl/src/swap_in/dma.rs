//! One DMA engine's descriptor queues and arbiter clocked through a `dma_queue` block, beside
//! trnsim-core's engine (`trnsim_core::dma::QueueHook`), one block clock per DMA cycle.
//!
//! ```text
//!   engine: part enters queue q ──► held here until E - LAT ──► enq_valid/queue/tag/pkts
//!            (eligible at cycle E)     (E: the engine's first tick with the start latency over)
//!   engine: arbiter starts packet j ──► start_ok in that cycle; checked: ready (the mask the
//!            of queue q (saw `ready`)      arbiter saw), start, start_queue, start_tag (the
//!                                          head part's), start_pkt = j, start_last
//!   engine: empty part leaves queue q ──► empty_ret bit q expected (that cycle or, behind a
//!                                          part leaving the same cycle, the next)
//! ```
//!
//! The engine's start latency lives here: a part enters the block `LAT` cycles (the block's
//! own latency, measured on its model when the swap-in is made) before the engine's first
//! tick at or after its start latency, so it becomes eligible in the block in the same cycle
//! as in the engine; a part that cannot enter then (the block takes one descriptor a cycle,
//! and holds `D` a queue) enters later, which matters only if it reaches the head before its
//! late latency is over. `count` is checked every clocked cycle against the parts the block
//! should hold. Tags number the engine's parts in order (modulo the tag width).
//!
//! Leaves out (each reported as an error naming the cycle and the limit, never as the
//! block's fault): a part of more packets than `enq_pkts` counts, a block latency longer than
//! the engine's, two packets started in one cycle, and a part late into the block (one
//! descriptor a cycle, `D` a queue) or behind an empty part that left in the cycle it starts
//! (the block considers it from the next cycle) when the arbiter needs it. Stretches with
//! every part in the block eligible and nothing entering or leaving are clocked once (a
//! block cycle then changes nothing). Checked only when a packet starts: `ready` (the engine
//! computes it only then).

use super::BlockHost;
use crate::registry::{self, BlockEntry};
use std::cell::RefCell;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;
use trnsim_kernel::{Clock, Time};

/// Where a DMA engine instance is: core, engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaQueueAt {
    /// Core index on the chip.
    pub core: u32,
    /// DMA engine of the core.
    pub engine: u32,
}

/// Parses `nc{i}.dma.engine{e}` (None if `s` has another shape).
pub fn parse_dma_queue(s: &str) -> Option<DmaQueueAt> {
    let parts: Vec<&str> = s.split('.').collect();
    let [core, "dma", engine] = parts[..] else { return None };
    Some(DmaQueueAt { core: super::indexed(core, "nc")?, engine: super::indexed(engine, "engine")? })
}

/// The registry block of an engine with `queues` queues and (with `qos`) four priority
/// classes (the error says which are built).
pub fn dma_queue_block(queues: u32, qos: bool) -> Result<&'static BlockEntry, String> {
    let name = match (queues, qos) {
        (16, false) => "dma_queue",
        (16, true) => "dma_queue_q16_qos",
        (6, true) => "dma_queue_q6_qos",
        _ => {
            let arb = if qos { "QoS" } else { "round robin" };
            return Err(format!(
                "no dma_queue block is built for {queues} queues, {arb} (built: 16 round robin, 16 QoS, 6 QoS)"
            ));
        }
    };
    registry::find(name).ok_or_else(|| format!("block {name} is not in the registry"))
}

/// The ports the adapter drives and reads, in [`DmaQueueState::p`]'s order.
const PORTS: [(&str, bool); 14] = [
    ("enq_valid", true),
    ("enq_queue", true),
    ("enq_tag", true),
    ("enq_pkts", true),
    ("start_ok", true),
    ("enq_ready", false),
    ("start", false),
    ("start_queue", false),
    ("start_tag", false),
    ("start_pkt", false),
    ("start_last", false),
    ("ready", false),
    ("empty_ret", false),
    ("count", false),
];

/// The ports of a DMA queue instance, for the boundary check.
pub(super) const BOUNDARY: [(&str, bool); 14] = PORTS;

/// A part on its way: its tag and packets, the engine's eligible cycle, and the block cycle
/// it enters at (its slot: `eligible - LAT`, or the latest free cycle before it).
#[derive(Clone, Copy, Debug)]
struct Waiting {
    tag: u32,
    pkts: u32,
    eligible: u64,
    slot: u64,
}

/// A part in the block: tag, packets, and the cycle it is eligible in the block.
#[derive(Clone, Copy, Debug)]
struct Inside {
    tag: u32,
    pkts: u32,
    eligible: u64,
}

/// A packet the engine started: the ready mask its arbiter saw, queue, packet index, last.
type Start = (u64, usize, u32, bool);

/// See the module doc.
pub struct DmaQueueSwap {
    st: Rc<RefCell<DmaQueueState>>,
}

struct DmaQueueState {
    host: Rc<RefCell<BlockHost>>,
    clock: Clock,
    p: [usize; 14],
    lat: u64,
    depth: usize,
    queues: usize,
    cw: u32,
    tag_mask: u32,
    pkt_max: u32,
    waiting: Vec<VecDeque<Waiting>>,
    inside: Vec<VecDeque<Inside>>,
    /// Block cycles taken by a waiting part's entry (the block takes one a cycle).
    slots: BTreeSet<u64>,
    /// Empty parts the engine retired less those the block retired, per queue (0 at the end).
    owed: Vec<i64>,
    next_tag: u32,
    /// The block cycle the next clock stands for.
    next: u64,
    /// The DMA cycle whose starts are being gathered, and them (in order).
    cur: u64,
    starts: Vec<Start>,
    /// Block cycles clocked beyond one per DMA cycle (one per extra start in a cycle): block
    /// cycle = DMA cycle + `extra`.
    extra: u64,
    /// Every part in the block is eligible from this cycle on.
    quiet_from: u64,
}

impl DmaQueueSwap {
    /// Watches an engine whose block runs on `clock`, with `host` (a `dma_queue` block of
    /// `queues` queues). The block's latency and depth are measured on its model.
    pub fn new(host: Rc<RefCell<BlockHost>>, clock: Clock, queues: u32) -> Result<DmaQueueSwap, String> {
        let h = host.borrow();
        let mut p = [0; 14];
        for (slot, (n, input)) in p.iter_mut().zip(PORTS) {
            *slot = h.port(n, input)?;
        }
        let ports = h.block.ports();
        let width = |i: usize| ports[p[i]].width;
        if width(11) != queues {
            return Err(format!(
                "{}: block {} has {} queues; the engine has {queues}",
                h.instance,
                h.entry.name,
                width(11)
            ));
        }
        let (tag_w, pkt_w) = (width(2).min(31), width(3).min(31));
        let cw = width(13) / width(11).max(1);
        let (lat, depth) = measure(h.entry).map_err(|e| format!("{}: block {}: {e}", h.instance, h.entry.name))?;
        drop(h);
        let n = queues as usize;
        let st = DmaQueueState {
            host,
            clock,
            p,
            lat,
            depth,
            queues: n,
            cw,
            tag_mask: (1 << tag_w) - 1,
            pkt_max: (1 << pkt_w) - 1,
            waiting: vec![VecDeque::new(); n],
            inside: vec![VecDeque::new(); n],
            slots: BTreeSet::new(),
            owed: vec![0; n],
            next_tag: 0,
            next: 0,
            cur: 0,
            starts: Vec::new(),
            extra: 0,
            quiet_from: 0,
        };
        Ok(DmaQueueSwap { st: Rc::new(RefCell::new(st)) })
    }

    /// Clocks what the engine has done and the parts still to enter (called after the run).
    pub(super) fn finisher(&self) -> Box<dyn Fn()> {
        let st = self.st.clone();
        Box::new(move || {
            let mut st = st.borrow_mut();
            let last_due = st.waiting.iter().filter_map(|w| w.back().map(|w| w.eligible)).max().unwrap_or(0);
            let end = (st.cur + 2).max(last_due + 1);
            st.run_to(end);
            if let Some(q) = st.owed.iter().position(|&o| o != 0) {
                let m = format!(
                    "after the run: the engine and the block retired different numbers of empty parts of queue {q}"
                );
                st.host.borrow_mut().fail(m);
            }
        })
    }
}

/// The block's start latency and queue depth, measured on a fresh copy of its model: one
/// descriptor in, cycles until its queue is ready; then descriptors into one queue until it
/// refuses (at most 64 of each).
fn measure(entry: &BlockEntry) -> Result<(u64, usize), String> {
    let mut m = (entry.make_model)();
    let port = |m: &dyn crate::block::Block, n: &str| {
        m.ports().iter().position(|p| p.name == n).ok_or_else(|| format!("no port {n}"))
    };
    let [valid, queue, pkts, ok, ready, enq_ready] =
        ["enq_valid", "enq_queue", "enq_pkts", "start_ok", "ready", "enq_ready"].map(|n| port(&*m, n));
    let (valid, queue, pkts, ok, ready, enq_ready) = (valid?, queue?, pkts?, ok?, ready?, enq_ready?);
    let step = |m: &mut Box<dyn crate::block::Block>, enq: bool| -> Result<(u128, u128), String> {
        m.set_input(valid, u128::from(enq));
        m.set_input(queue, 0);
        m.set_input(pkts, 1);
        m.set_input(ok, 0);
        m.settle().map_err(|e| e.to_string())?;
        let out = (m.output(ready), m.output(enq_ready));
        m.posedge().map_err(|e| e.to_string())?;
        Ok(out)
    };
    if let Some(r) = m.reset() {
        let rp = port(&*m, r.name)?;
        m.set_input(rp, u128::from(!r.active_low));
        step(&mut m, false)?;
        m.set_input(rp, u128::from(r.active_low));
    }
    step(&mut m, true)?;
    let lat = (1..=64u64).find_map(|c| match step(&mut m, false) {
        Ok((r, _)) if r & 1 == 1 => Some(Ok(c)),
        Ok(_) => None,
        Err(e) => Some(Err(e)),
    });
    let lat = lat.ok_or("queue 0 not ready 64 cycles after a descriptor entered")??;
    let mut depth = 1;
    loop {
        if depth > 64 {
            return Err("queue 0 takes more than 64 descriptors".into());
        }
        let (_, room) = step(&mut m, true)?;
        if room == 0 {
            return Ok((lat, depth));
        }
        depth += 1;
    }
}

impl DmaQueueState {
    /// Gathers events of cycle `c`: clocks every cycle before it first.
    fn at(&mut self, c: u64) {
        if c > self.cur {
            self.run_to(c);
            self.cur = c;
        }
    }

    /// Clocks the DMA cycles before `end`: one block cycle each, one per start where the
    /// engine started several packets in one cycle.
    fn run_to(&mut self, end: u64) {
        let host = self.host.clone();
        let mut h = host.borrow_mut();
        while self.next < end && !h.failed() {
            let k = self.next;
            let bk = k + self.extra;
            let events = k == self.cur && !self.starts.is_empty();
            let due = self.waiting.iter().filter_map(|w| w.front().map(|w| w.slot)).min().unwrap_or(u64::MAX);
            if !events && due > bk && bk >= self.quiet_from {
                // Nothing enters, leaves or becomes eligible before the next part is due or
                // the engine acts.
                let act = if self.cur > k { self.cur } else { u64::MAX };
                self.next = (due - self.extra).min(act).min(end);
                continue;
            }
            let mut starts = if k == self.cur { std::mem::take(&mut self.starts) } else { Vec::new() };
            let n = starts.len().max(1);
            for i in 0..n {
                if !self.cycle(&mut h, k, starts.get(i).copied()) {
                    return;
                }
                if i + 1 < n {
                    self.extra += 1;
                }
            }
            starts.clear();
            self.starts = starts;
            self.next += 1;
        }
    }

    /// The part to enter the block in cycle `k`: the queue whose waiting part's slot comes
    /// first (the lowest queue on a tie) among those with room.
    fn entering(&self, k: u64) -> Option<usize> {
        (0..self.queues)
            .filter(|&q| self.inside[q].len() < self.depth)
            .filter_map(|q| self.waiting[q].front().filter(|w| w.slot <= k).map(|w| (w.slot, q)))
            .min()
            .map(|(_, q)| q)
    }

    /// The queues whose head part in the block is ready in cycle `k` (eligible in the block,
    /// with packets), and those whose head retires (eligible, empty): what a correct block
    /// shows.
    fn expected(&self, k: u64) -> (u64, u64) {
        let (mut ready, mut empty) = (0, 0);
        for (q, parts) in self.inside.iter().enumerate() {
            if let Some(h) = parts.front().filter(|h| h.eligible <= k) {
                if h.pkts > 0 {
                    ready |= 1 << q;
                } else {
                    empty |= 1 << q;
                }
            }
        }
        (ready, empty)
    }

    /// Clocks one block cycle of DMA cycle `k` with the engine's start in it, if any; false
    /// once the instance failed.
    fn cycle(&mut self, h: &mut BlockHost, k: u64, start: Option<Start>) -> bool {
        let [enq_valid, enq_queue, enq_tag, enq_pkts, start_ok, enq_ready, ..] = self.p;
        let bk = k + self.extra;
        let enq = self.entering(bk);
        let w = enq.and_then(|q| self.waiting[q].front().copied());
        h.set(enq_valid, u128::from(enq.is_some()));
        h.set(enq_queue, enq.unwrap_or(0) as u128);
        h.set(enq_tag, u128::from(w.map_or(0, |w| w.tag)));
        h.set(enq_pkts, u128::from(w.map_or(0, |w| w.pkts)));
        h.set(start_ok, u128::from(start.is_some()));
        if !h.settle() {
            return false;
        }
        let at = format!("DMA cycle {k} (block cycle {})", h.clocks());
        let wrong = match self.check(h, bk, start) {
            Err(m) => Some(m),
            Ok(()) if enq.is_some() && h.get(enq_ready) != 1 => {
                Some("enq_ready 0 for a part its queue has room for".to_string())
            }
            Ok(()) => None,
        };
        if let Some(m) = wrong {
            // The cycle is clocked (its inputs recorded) so the replay shows it too.
            h.fail(format!("{at}: {m}"));
            h.clock();
            return false;
        }
        let retired = h.get(self.p[12]) as u64;
        if !h.clock() {
            return false;
        }
        self.after(bk, enq, start, retired);
        !h.failed()
    }

    /// The block's outputs in block cycle `k` against the parts it holds and the engine's
    /// start.
    fn check(&self, h: &BlockHost, k: u64, start_seen: Option<Start>) -> Result<(), String> {
        let [.., start, start_queue, start_tag, start_pkt, start_last, ready, empty_ret, count] = self.p;
        for q in 0..self.queues {
            let c = h.get(count) >> (q as u32 * self.cw) & ((1 << self.cw) - 1);
            if c != self.inside[q].len() as u128 {
                return Err(format!("count of queue {q} is {c} where it holds {} parts", self.inside[q].len()));
            }
        }
        let (want_ready, want_empty) = self.expected(k);
        let (got_ready, got_empty) = (h.get(ready) as u64, h.get(empty_ret) as u64);
        if got_empty != want_empty {
            return Err(format!("empty_ret {got_empty:#x} where the eligible empty heads are {want_empty:#x}"));
        }
        if got_ready != want_ready {
            return Err(format!("ready {got_ready:#x} where the eligible heads with packets are {want_ready:#x}"));
        }
        let Some((seen_by_engine, q, j, last)) = start_seen else { return Ok(()) };
        let seen = [start, start_queue, start_tag, start_pkt, start_last].map(|p| h.get(p));
        let head = self.inside[q].front();
        let expect = [1, q as u128, u128::from(head.map_or(u32::MAX, |h| h.tag)), u128::from(j), u128::from(last)];
        if seen == expect {
            return Ok(());
        }
        let what = format!(
            "the arbiter starts packet {j} of queue {q} (tag {}, last {}); the block: start {}, queue {}, tag {}, packet {}, last {}",
            expect[2],
            u8::from(last),
            seen[0],
            seen[1],
            seen[2],
            seen[3],
            seen[4]
        );
        if seen_by_engine != want_ready {
            // The block was shown other ready queues than the engine's arbiter saw.
            return Err(format!(
                "{what}: the block holds ready heads {want_ready:#x} where the arbiter sees {seen_by_engine:#x} (a part entered the block early or late: one descriptor a cycle, {} a queue, a new head the cycle after an empty part leaves): a limit of the swap-in, not a fault of the block",
                self.depth
            ));
        }
        Err(what)
    }

    /// Brings the expected queues past block cycle `k`, in which the block retired the empty parts
    /// of `retired`.
    fn after(&mut self, k: u64, enq: Option<usize>, start: Option<Start>, retired: u64) {
        if let Some((_, q, _, true)) = start {
            self.inside[q].pop_front();
        }
        for q in 0..self.queues {
            if retired >> q & 1 == 1 {
                self.owed[q] -= 1;
                self.inside[q].pop_front();
            }
        }
        if let Some(q) = enq {
            let w = self.waiting[q].pop_front().expect("an entering part waits");
            self.slots.remove(&w.slot);
            let eligible = k + self.lat;
            self.inside[q].push_back(Inside { tag: w.tag, pkts: w.pkts, eligible });
            self.quiet_from = self.quiet_from.max(eligible);
        }
    }
}

impl DmaQueueState {
    /// The block cycle a part of `queue` due at `due` (its latency then ends as the engine's)
    /// enters at: the latest free cycle at or before `due`, from `now` on and after the
    /// queue's earlier parts (they enter in order); else the first free cycle after.
    fn slot_for(&self, queue: usize, now: u64, due: u64) -> u64 {
        let after = self.waiting[queue].back().map_or(now, |w| w.slot + 1).max(now);
        let mut s = due;
        while s >= after && self.slots.contains(&s) {
            if s == 0 {
                break;
            }
            s -= 1;
        }
        if s >= after && !self.slots.contains(&s) {
            return s;
        }
        let mut s = due.max(after);
        while self.slots.contains(&s) {
            s += 1;
        }
        s
    }
}

impl trnsim_core::dma::QueueHook for DmaQueueSwap {
    fn enqueued(&mut self, now: Time, queue: usize, packets: u32, eligible: Time) {
        let mut st = self.st.borrow_mut();
        let c = st.clock.edge_index_at_or_after(now);
        st.at(c);
        let e = st.clock.edge_index_at_or_after(eligible);
        let fail = |st: &DmaQueueState, m: String| st.host.borrow_mut().fail(format!("DMA cycle {c}: {m}"));
        if packets > st.pkt_max {
            let m = format!("a part of {packets} packets; the block counts at most {}", st.pkt_max);
            return fail(&st, m);
        }
        if e < c + st.lat {
            let m = format!("the block's start latency ({} cycles) is longer than the engine's ({})", st.lat, e - c);
            return fail(&st, m);
        }
        let tag = st.next_tag & st.tag_mask;
        st.next_tag = st.next_tag.wrapping_add(1);
        let slot = st.slot_for(queue, c + st.extra, e - st.lat + st.extra);
        st.slots.insert(slot);
        st.waiting[queue].push_back(Waiting { tag, pkts: packets, eligible: e, slot });
    }

    fn started(&mut self, now: Time, ready: u64, queue: usize, index: u32, last: bool) {
        let mut st = self.st.borrow_mut();
        let c = st.clock.edge_index_at_or_after(now);
        st.at(c);
        st.starts.push((ready, queue, index, last));
    }

    fn retired_empty(&mut self, now: Time, queue: usize) {
        let mut st = self.st.borrow_mut();
        let c = st.clock.edge_index_at_or_after(now);
        st.at(c);
        st.owed[queue] += 1;
    }
}
