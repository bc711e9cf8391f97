//! The flow-level network: the collectives' step programs run over fluid flows instead of
//! packets through link FIFOs. A message is one flow from its source to its destination,
//! spread over the routing's candidate links in proportion to their capacity (as the
//! packet-level network's adaptive choice spreads packets). Links serve flows first come,
//! first served at fluid rates (each flow, oldest first, takes all it can of what older
//! flows left on its links), as the packet-level link FIFOs serve older packets first; max-min
//! fair sharing was tried and is 10 % slow on a hierarchical all-reduce, where a FIFO lets a
//! step's message finish before the next step's starts sharing its link. Rates are recomputed
//! whenever a flow starts or ends.
//! A flow's last byte arrives `pipeline + latency` after its fluid transfer ends: the
//! latencies of its path's first candidates, and one packet's serialization on every hop but
//! the slowest (store and forward).
//!
//! Costs events per message, not per packet: a step of `n` messages is `O(n x hops)` work per
//! rate update, and one update serves every flow that starts or ends at the same time (the
//! chips of a step-synchronous collective mostly do). Scaled for clusters of 100,000 chips:
//! programs are runs of equal steps (`schedule::Runs`) flattened into two arrays, with one
//! cache line of engine state per chip; timers and deliveries are kept in buckets by time;
//! paths and tails inside an UltraServer are computed once per pair of local chips and shared
//! by every copy, a flow holding only the pair and its copy's offset (a flow between
//! UltraServers holds its four edges inline: no list per message); and a leaf's uplinks (and
//! the spines' downlinks to it) are one aggregate link. Exact for one flow alone on a path. Its known gap: an all-to-all, where the
//! packet-level sources queue all their messages at once in destination order, so every
//! source feeds the same destinations at the same time and the switches' output queues
//! build up (17-22 % slower than the fluid flows, which leave no link idle).
//!
//! Leaves out: everything the packet-level network leaves out (docs/fabric.md), plus
//! queues inside the network: a flow's rate is set at once along its whole path.

use crate::collective::schedule::{Program, Runs};
use crate::topo::cluster::ClusterRoutes;
use crate::topo::Topology;
use std::collections::{BTreeMap, VecDeque};

/// One timer or delivery: the chip, with [`TIMER`] set for a timer, and the step tag.
type Ev = (u32, u32);

/// The flag of a timer in [`Ev`]'s chip (the run refuses `2^31` chips or more).
const TIMER: u32 = 1 << 31;

/// Timers and deliveries, earliest first and, at one time, in the order they were pushed (as
/// a heap of (time, sequence) would pop them). Kept by time: the chips of a step-synchronous
/// collective mostly share their times, so a time's events are one bucket, not one heap entry
/// each, and a push to one of the two times last pushed to (deliveries alternate between a
/// step's tails) finds its bucket without a search.
#[derive(Default)]
struct Events {
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
    fn push(&mut self, t: f64, ev: Ev) {
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
    fn next_time(&self) -> Option<f64> {
        self.by_time.first_key_value().map(|(&t, _)| f64::from_bits(t))
    }

    /// The earliest event if it is due at `now`.
    fn pop_due(&mut self, now: f64) -> Option<Ev> {
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

/// One active flow (64 bytes: its route inline on a cluster).
struct Flow {
    dst: u32,
    tag: u32,
    /// Bytes still to move.
    left: f64,
    /// Current rate in bytes per picosecond.
    rate: f64,
    /// Time from the end of the fluid transfer to the last byte's arrival, in ps.
    tail_ps: f64,
    route: Route,
}

/// The edges (and aggregates) a flow uses, with its share on each ([`Paths::each`]).
enum Route {
    /// Between UltraServers: the source NIC, the source leaf's uplinks, the downlinks to the
    /// destination leaf and the destination NIC, at the shares of `Paths::cross` (`across`
    /// leaves); or the two NICs alone, each at share 1 (on one leaf).
    Cross { edges: [u32; 4], across: bool },
    /// Inside UltraServer copy `shift / edges per UltraServer`: the cached path of local chip
    /// pair `pair`, its edges plus `shift`.
    Local { pair: u32, shift: u32 },
    /// Any other topology's: (edge, share).
    Any(Vec<(u32, f64)>),
}

/// One run of equal steps of one chip, in the programs flattened ([`Programs`]).
struct Run {
    /// The step's sends: `Programs::sends[sends.0..sends.1]`.
    sends: (u32, u32),
    recvs: u32,
    /// Repetitions.
    reps: u32,
}

/// Every chip's program as runs of equal steps, flattened into two arrays in chip order (no
/// allocation per chip or step: a hierarchical all-reduce on 100,000 chips is 300,000 runs).
struct Programs {
    runs: Vec<Run>,
    /// Messages sent: (destination chip, payload bytes).
    sends: Vec<(u32, u64)>,
}

/// One chip's collective engine (as the packet-level runner's), its program a range of
/// [`Programs::runs`]: the current step's state in one cache line per chip (the current run's
/// sends, receives and repetitions copied in: a step touches its run only when it starts one).
#[repr(align(64))]
struct Engine {
    /// The current run (an index into `Programs::runs`) and the end of the chip's runs.
    run: u32,
    runs_end: u32,
    /// The current step's repetition within its run, and its index (the tag).
    rep: u32,
    cur: u32,
    /// Steps in all.
    len: u32,
    /// The current run's messages needed per step, repetitions, and sends (as [`Run`]).
    recvs: u32,
    reps: u32,
    sends: (u32, u32),
    /// Messages received for the current step and the next; those for later steps are in the
    /// chip's list of `far` receipts, `far` of them.
    got: [u32; 2],
    far: u32,
    issued: bool,
    /// When the chip finished (NaN until it does).
    done_ps: f64,
}

impl Engine {
    fn done(&self) -> bool {
        !self.done_ps.is_nan()
    }

    /// Counts a message tagged `tag` (messages for steps already complete are dropped: no
    /// step waits for them).
    fn receive(&mut self, tag: u32, far: &mut Vec<(u32, u32)>) {
        if tag == self.cur {
            self.got[0] += 1;
        } else if tag > self.cur && tag - self.cur == 1 {
            self.got[1] += 1;
        } else if tag > self.cur {
            match far.iter_mut().find(|r| r.0 == tag) {
                Some(r) => r.1 += 1,
                None => {
                    far.push((tag, 1));
                    self.far += 1;
                }
            }
        }
    }

    /// Moves to the next step (the caller checked there is one).
    fn advance(&mut self, runs: &[Run], far: &mut Vec<(u32, u32)>) {
        self.cur += 1;
        self.got = [self.got[1], 0];
        if self.far > 0 {
            // The step after the new current one: `cur + 1` (no overflow: `cur + 1 < len`).
            let next = self.cur + 1;
            if let Some(i) = far.iter().position(|r| r.0 == next) {
                self.got[1] = far.swap_remove(i).1;
                self.far -= 1;
            }
        }
        self.rep += 1;
        if self.rep < self.reps {
            return;
        }
        while self.run < self.runs_end && self.rep >= runs[self.run as usize].reps {
            self.run += 1;
            self.rep = 0;
        }
        if let Some(r) = runs.get(self.run as usize).filter(|_| self.run < self.runs_end) {
            (self.recvs, self.reps, self.sends) = (r.recvs, r.reps, r.sends);
        }
    }
}

/// Flattens `progs` ([`Programs`]) and makes each chip's engine; refuses programs the engines'
/// fields cannot count, and sends to chips that do not exist.
fn flatten(progs: Vec<Runs>) -> Result<(Programs, Vec<Engine>), String> {
    let chips = progs.len();
    if u32::try_from(chips).is_err() || u32::try_from(chips).is_ok_and(|n| n >= TIMER) {
        return Err(format!("{chips} chips: too many for the flow-level network"));
    }
    let (mut runs, mut sends, mut engines) = (Vec::new(), Vec::new(), Vec::with_capacity(chips));
    for (c, p) in progs.into_iter().enumerate() {
        let len = p.iter().map(|r| u64::from(r.1)).sum::<u64>();
        let len = u32::try_from(len).map_err(|_| format!("chip {c}: more than {} steps", u32::MAX))?;
        let first = runs.len();
        let too_many_sends = |n: usize| format!("{n} sends in all: too many for the flow-level network");
        for (st, reps) in p {
            let s0 = u32::try_from(sends.len()).map_err(|_| too_many_sends(sends.len()))?;
            for (dst, bytes) in st.sends {
                let d = u32::try_from(dst).ok().filter(|_| dst < chips);
                let d = d.ok_or_else(|| format!("chip {c}: a send to chip {dst} of {chips}"))?;
                sends.push((d, bytes));
            }
            let s1 = u32::try_from(sends.len()).map_err(|_| too_many_sends(sends.len()))?;
            runs.push(Run { sends: (s0, s1), recvs: st.recvs, reps });
        }
        let too_many = || format!("{} runs of steps: too many for the flow-level network", runs.len());
        let run = u32::try_from(first).map_err(|_| too_many())?;
        let runs_end = u32::try_from(runs.len()).map_err(|_| too_many())?;
        let (recvs, reps, sends) = runs.get(first).map_or((0, 0, (0, 0)), |r: &Run| (r.recvs, r.reps, r.sends));
        let done_ps = if len == 0 { 0.0 } else { f64::NAN };
        let (got, far, issued) = ([0; 2], 0, false);
        engines.push(Engine { run, runs_end, rep: 0, cur: 0, len, recvs, reps, sends, got, far, issued, done_ps });
    }
    Ok((Programs { runs, sends }, engines))
}

/// The result of a flow-level run.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRun {
    /// When each chip finished its program, in picoseconds (0 for chips with none).
    pub done_ps: Vec<f64>,
    /// Rate updates (progressive fillings) computed.
    pub updates: u64,
    /// Messages moved.
    pub messages: u64,
}

impl FlowRun {
    /// When the last chip finished, in picoseconds.
    pub fn finish_ps(&self) -> f64 {
        self.done_ps.iter().copied().fold(0.0, f64::max)
    }
}

/// The share of a message from `src` to `dst` on each edge: split over each node's candidate
/// next edges in proportion to their capacity. Appends to `out`; `at` and `next` are scratch.
fn spread(
    topo: &Topology,
    src: usize,
    dst: usize,
    cap: &[f64],
    out: &mut Vec<(u32, f64)>,
    scratch: &mut [Vec<(usize, f64)>; 2],
) {
    let [at, next] = scratch;
    at.clear();
    at.push((src, 1.0));
    let mut guard = 0;
    while !at.is_empty() {
        guard += 1;
        if guard > 64 {
            break; // routes are minimal: never this long
        }
        next.clear();
        for &(n, share) in at.iter() {
            if n == dst {
                continue;
            }
            let cands = topo.next_edges(n, dst);
            let total: f64 = cands.clone().map(|e| cap[e as usize]).sum();
            for e in cands {
                let s = share * cap[e as usize] / total;
                match out.iter_mut().find(|(x, _)| *x == e) {
                    Some(x) => x.1 += s,
                    None => out.push((e, s)),
                }
                let to = topo.edges[e as usize].to;
                match next.iter_mut().find(|(x, _)| *x == to) {
                    Some(x) => x.1 += s,
                    None => next.push((to, s)),
                }
            }
        }
        std::mem::swap(at, next);
    }
}

/// The paths of messages with their shares per edge. On a cluster ([`ClusterRoutes`]) the
/// paths inside an UltraServer are its own fabric's (computed once per pair of local chips,
/// shared by every copy), and a path between UltraServers is the source NIC, the source leaf's
/// uplinks, the destination leaf's downlinks and the destination NIC, with each leaf's uplinks
/// (and the spines' downlinks to it) as one aggregate link of their summed capacity: every
/// flow crossing them is spread over all of them alike, so they always carry equal shares and
/// the aggregate is exact (bit for bit when the spine count is a power of two, as on every
/// preset). Elsewhere the spread is computed per message.
struct Paths<'t> {
    topo: &'t Topology,
    cluster: Option<&'t ClusterRoutes>,
    /// Capacity per edge, then per aggregate (leaf `l`'s uplinks at `edges + l`, the
    /// downlinks to it at `edges + leaves + l`), in bytes per ps.
    cap: Vec<f64>,
    /// Shares of a path between leaves: (uplink aggregate, downlink aggregate, NIC down).
    cross: Option<(f64, f64, f64)>,
    /// Inside an UltraServer, per local source x chips per UltraServer + local destination:
    /// the spread, and the tail of the last message size asked.
    local: Vec<Option<Box<Local>>>,
    /// The last (message bytes, tail) between UltraServers, on one leaf and across leaves.
    cross_tail: [Option<(u64, f64)>; 2],
    /// Scratch lists of [`spread`].
    scratch: [Vec<(usize, f64)>; 2],
}

impl<'t> Paths<'t> {
    fn new(topo: &'t Topology) -> Result<Paths<'t>, String> {
        let mut cap: Vec<f64> = topo.edges.iter().map(|e| e.bytes_per_s * f64::from(e.servers) / 1e12).collect();
        let cluster = topo.cluster_routes();
        let mut cross = None;
        if let Some(c) = cluster {
            let (leaves, spines) = c.leaves_and_spines();
            let e0 = cap.len();
            if e0.checked_add(2 * leaves).is_none_or(|n| u32::try_from(n).is_err()) {
                return Err(format!("{e0} link directions: too many for the flow-level network"));
            }
            let mut agg = vec![0.0; 2 * leaves];
            for l in 0..leaves {
                // Summed as the per-edge spread sums its candidates.
                agg[l] = c.leaf_spine_edges(l).map(|(up, _)| cap[up]).sum::<f64>();
                agg[leaves + l] = c.leaf_spine_edges(l).map(|(_, down)| cap[down]).sum::<f64>();
            }
            if spines > 0 {
                // Every uplink and downlink has the same capacity (checked by the shape): the
                // shares of one path between leaves are those of any.
                let (up, down) = c.leaf_spine_edges(0).next().map_or((1.0, 1.0), |(u, d)| (cap[u], cap[d]));
                let total = agg[0];
                let s_up = 1.0 * up / total;
                let s_down = s_up * down / down;
                let mut s_nic = s_down;
                for _ in 1..spines {
                    s_nic += s_down;
                }
                let (_, nic_down) = c.nic_edges(0);
                let s_nic = s_nic * cap[nic_down] / cap[nic_down];
                let n = spines as f64;
                cross = Some((n * s_up, n * s_down, s_nic));
            }
            cap.extend(agg);
        }
        let local = match cluster {
            Some(c) => {
                let k = c.chips_per_ultraserver();
                let n =
                    k.checked_mul(k).filter(|&n| u32::try_from(n).is_ok()).ok_or("too many chips per UltraServer")?;
                std::iter::repeat_with(|| None).take(n).collect()
            }
            None => Vec::new(),
        };
        Ok(Paths { topo, cluster, cap, cross, local, cross_tail: [None; 2], scratch: Default::default() })
    }

    /// Inside an UltraServer, the cached spread (and last tail) of local chips `js` to `jd`,
    /// computed on its own fabric (the same edges in the same order).
    fn local(&mut self, c: &ClusterRoutes, js: usize, jd: usize) -> &mut Local {
        let k = c.chips_per_ultraserver();
        let su = c.scale_up();
        let scratch = &mut self.scratch;
        self.local[js * k + jd].get_or_insert_with(|| {
            let su_cap: Vec<f64> = su.edges.iter().map(|e| e.bytes_per_s * f64::from(e.servers) / 1e12).collect();
            let mut path = Vec::new();
            spread(su, js, jd, &su_cap, &mut path, scratch);
            Box::new(Local { path, tail: None })
        })
    }

    /// [`tail`] of a message from `src` to `dst` (inside an UltraServer, cached).
    fn tail(&mut self, src: usize, dst: usize, bytes: u64) -> f64 {
        match self.cluster {
            Some(c) if src / c.chips_per_ultraserver() == dst / c.chips_per_ultraserver() => {
                let k = c.chips_per_ultraserver();
                let l = self.local(c, src % k, dst % k);
                match l.tail {
                    Some((b, t)) if b == bytes => t,
                    _ => {
                        let t = tail(c.scale_up(), src % k, dst % k, bytes);
                        l.tail = Some((bytes, t));
                        t
                    }
                }
            }
            Some(c) => {
                // Between UltraServers every NIC, uplink and downlink is alike (the cluster
                // builder makes them so): the tail depends only on whether the chips share a
                // leaf, and on the size.
                let i = usize::from(c.leaf_of(src) != c.leaf_of(dst));
                match self.cross_tail[i] {
                    Some((b, t)) if b == bytes => t,
                    _ => {
                        let t = tail(self.topo, src, dst, bytes);
                        self.cross_tail[i] = Some((bytes, t));
                        t
                    }
                }
            }
            None => tail(self.topo, src, dst, bytes),
        }
    }

    /// The edges (and aggregates) a message from `src` to `dst` uses, with its share on each;
    /// `spent` is a list to reuse (on a topology other than a cluster).
    fn path(&mut self, src: usize, dst: usize, mut spent: Vec<(u32, f64)>) -> Route {
        let Some(c) = self.cluster else {
            spent.clear();
            spread(self.topo, src, dst, &self.cap, &mut spent, &mut self.scratch);
            return Route::Any(spent);
        };
        let k = c.chips_per_ultraserver();
        if src / k == dst / k {
            let shift = c.edges_per_ultraserver() * (src / k) as u32;
            self.local(c, src % k, dst % k);
            // Below `k * k`, which `new` checked fits in a u32.
            let pair = (src % k * k + dst % k) as u32;
            return Route::Local { pair, shift };
        }
        let (up, down) = (c.nic_edges(src).0 as u32, c.nic_edges(dst).1 as u32);
        let (ls, ld) = (c.leaf_of(src), c.leaf_of(dst));
        match self.cross {
            Some(_) if ls != ld => {
                let (e0, leaves) = (self.topo.edges.len(), c.leaves_and_spines().0);
                let edges = [up, (e0 + ls) as u32, (e0 + leaves + ld) as u32, down];
                Route::Cross { edges, across: true }
            }
            _ => Route::Cross { edges: [up, down, 0, 0], across: false },
        }
    }

    /// Calls `f(edge, share)` for each edge (or aggregate) of `r`, in the order of its path.
    #[inline(always)]
    fn each(&self, r: &Route, mut f: impl FnMut(u32, f64)) {
        match r {
            Route::Cross { edges, across: true } => {
                let (s_up, s_down, s_nic) = self.cross.unwrap_or((1.0, 1.0, 1.0));
                f(edges[0], 1.0);
                f(edges[1], s_up);
                f(edges[2], s_down);
                f(edges[3], s_nic);
            }
            Route::Cross { edges, across: false } => {
                f(edges[0], 1.0);
                f(edges[1], 1.0);
            }
            Route::Local { pair, shift } => {
                if let Some(l) = self.local[*pair as usize].as_deref() {
                    for &(e, s) in &l.path {
                        f(e + shift, s);
                    }
                }
            }
            Route::Any(p) => {
                for &(e, s) in p {
                    f(e, s);
                }
            }
        }
    }
}

/// A path inside an UltraServer, cached: the spread, and the tail of messages of `bytes`.
struct Local {
    path: Vec<(u32, f64)>,
    /// (message bytes, tail in ps) of the last size asked.
    tail: Option<(u64, f64)>,
}

/// The tail of a message of `bytes` on the first-candidate path: every hop's latency, plus one
/// packet's serialization on every hop but the slowest, in ps.
fn tail(topo: &Topology, src: usize, dst: usize, bytes: u64) -> f64 {
    let pkt = bytes.min(u64::from(topo.packet_bytes)) as f64;
    let (mut n, mut lat, mut ser, mut worst) = (src, 0.0, 0.0, 0.0f64);
    while n != dst {
        let Some(e) = topo.next_edges(n, dst).first() else { break };
        let edge = &topo.edges[e as usize];
        lat += edge.latency_ps as f64;
        let s = pkt * 1e12 / edge.bytes_per_s;
        ser += s;
        worst = worst.max(s);
        n = edge.to;
    }
    lat + ser - worst
}

/// First come, first served at fluid rates: flows in the order they started (`flows` is kept
/// in that order) each take all they can of what the older flows left on their edges, as a
/// link FIFO serves older packets first. An edge's residual starts at its capacity when the
/// pass first meets it (`seen` holds the pass that last did). Returns when the next transfer
/// ends, from `now`.
///
/// Flows only see what older flows leave, so flows appended since the last pass can be given
/// their rates by continuing that pass (`flows` = the new ones, the same `pass`): the older
/// flows' rates and the edges' residuals are what a whole pass would compute again.
fn fifo(flows: &mut [Flow], links: &mut [Link], paths: &Paths, pass: u64, now: f64) -> f64 {
    let mut next = f64::INFINITY;
    for f in flows.iter_mut() {
        next = next.min(take_rate(f, links, paths, pass, now));
    }
    next
}

/// One flow's turn in a FIFO pass ([`fifo`]): its rate, what it leaves of its edges, and when
/// its transfer ends (infinity if it does not move).
#[inline(always)]
fn take_rate(f: &mut Flow, links: &mut [Link], paths: &Paths, pass: u64, now: f64) -> f64 {
    let mut r = f64::INFINITY;
    paths.each(&f.route, |e, s| {
        let l = &mut links[e as usize];
        if l.seen != pass {
            l.seen = pass;
            l.residual = l.cap;
        }
        r = f64::min(r, l.residual.max(0.0) / s);
    });
    f.rate = if r.is_finite() { r } else { 0.0 };
    let rate = f.rate;
    paths.each(&f.route, |e, s| links[e as usize].residual -= rate * s);
    if f.rate > 0.0 {
        now + f.left / f.rate
    } else {
        f64::INFINITY
    }
}

/// One edge (or aggregate) in a FIFO pass: what the flows met so far leave of it, its
/// capacity in bytes per ps, and the pass that last met it (kept together: one cache line per
/// visit on a cluster's million edges).
#[derive(Clone, Copy)]
struct Link {
    residual: f64,
    cap: f64,
    seen: u64,
}

/// Runs per-chip step programs (index = chip) over `topo` as flows, with `overhead_ps` of
/// software time before each step's sends, until every chip is done or `limit_ps` passes.
pub fn run(topo: &Topology, progs: Vec<Program>, overhead_ps: u64, limit_ps: u64) -> Result<FlowRun, String> {
    run_runs(topo, progs.into_iter().map(crate::collective::schedule::runs_of).collect(), overhead_ps, limit_ps)
}

/// [`run`] with each program as runs of equal steps ([`crate::collective::schedule::runs`]).
pub fn run_runs(topo: &Topology, progs: Vec<Runs>, overhead_ps: u64, limit_ps: u64) -> Result<FlowRun, String> {
    if progs.len() != topo.chips {
        return Err(format!("{} programs for {} chips", progs.len(), topo.chips));
    }
    let (prog, mut engines) = flatten(progs)?;
    let mut far: Vec<Vec<(u32, u32)>> = std::iter::repeat_with(Vec::new).take(engines.len()).collect();
    let mut paths = Paths::new(topo)?;
    let mut links: Vec<Link> = paths.cap.iter().map(|&cap| Link { residual: 0.0, cap, seen: 0 }).collect();
    let overhead = overhead_ps as f64;
    let mut events = Events::default();
    // Chips number below `TIMER` (`flatten`): the casts keep every chip number.
    for (c, e) in engines.iter().enumerate() {
        if !e.done() {
            events.push(overhead, (c as u32 | TIMER, 0));
        }
    }
    let mut flows: Vec<Flow> = Vec::new();
    let (mut now, mut updates, mut messages) = (0.0f64, 0u64, 0u64);
    // The FIFO pass the edges' residuals belong to (`Link::seen`).
    let mut pass = 0u64;
    // When the next transfer ends: the earliest `now + left / rate` of the moving flows, kept
    // from the pass that last changed or advanced them.
    let mut t_flow = f64::INFINITY;
    // Paths of ended flows, reused by new ones (off a cluster: no allocation per message).
    let mut spent: Vec<Vec<(u32, f64)>> = Vec::new();
    loop {
        let t_event = events.next_time();
        let t = match t_event {
            Some(te) if te <= t_flow => te,
            _ if t_flow.is_finite() => t_flow,
            _ => break,
        };
        if t > limit_ps as f64 {
            return Err(format!("the collective did not finish within {} us", limit_ps / 1_000_000));
        }
        let dt = t - now;
        now = t;
        // A flow ended (every younger flow's share may grow: a whole pass) or only flows
        // started (appended: the last pass continues over them).
        let (mut ended, started) = (false, flows.len());
        // Every flow advances to `now`; those whose transfer ended (or ends within a
        // picosecond: a step's flows end together) leave, their last byte arriving after the
        // tail. `retain` keeps the others in start order, which the FIFO sharing needs, in one
        // pass.
        t_flow = f64::INFINITY;
        flows.retain_mut(|f| {
            f.left -= f.rate * dt;
            let done = f.rate > 0.0 && f.left <= f.rate * 1.0 + 1e-6;
            if done {
                events.push(now + f.tail_ps, (f.dst, f.tag));
                if let Route::Any(p) = &mut f.route {
                    spent.push(std::mem::take(p));
                }
                ended = true;
            } else if f.rate > 0.0 {
                t_flow = t_flow.min(now + f.left / f.rate);
            }
            !done
        });
        // Without an ended flow, the flows that start now continue the last pass, each given
        // its rate as it starts (a new pass if the network was idle).
        if !ended && flows.is_empty() {
            pass += 1;
        }
        while let Some((who, tag)) = events.pop_due(now) {
            if who & TIMER == 0 {
                let c = who as usize;
                let e = &mut engines[c];
                e.receive(tag, &mut far[c]);
                if e.cur == tag && e.issued {
                    try_complete(&mut engines, &prog.runs, &mut far, c, now, overhead, &mut events);
                }
            } else {
                let c = (who & !TIMER) as usize;
                let e = &mut engines[c];
                let step = e.cur;
                e.issued = true;
                let (s0, s1) = e.sends;
                for &(dst, bytes) in &prog.sends[s0 as usize..s1 as usize] {
                    messages += 1;
                    if dst == who & !TIMER || bytes == 0 {
                        events.push(now, (dst, step));
                        continue;
                    }
                    let (src, d) = (c, dst as usize);
                    let route = paths.path(src, d, spent.pop().unwrap_or_default());
                    let tail_ps = paths.tail(src, d, bytes);
                    let mut f = Flow { dst, tag: step, left: bytes as f64, rate: 0.0, tail_ps, route };
                    if !ended {
                        t_flow = t_flow.min(take_rate(&mut f, &mut links, &paths, pass, now));
                    }
                    flows.push(f);
                }
                try_complete(&mut engines, &prog.runs, &mut far, c, now, overhead, &mut events);
            }
        }
        if ended && !flows.is_empty() {
            (updates, pass) = (updates + 1, pass + 1);
            t_flow = fifo(&mut flows, &mut links, &paths, pass, now);
        } else if !ended && started < flows.len() {
            updates += 1;
        }
    }
    let done_ps: Vec<f64> = engines.iter().map(|e| e.done_ps).collect();
    if let Some(c) = done_ps.iter().position(|d| d.is_nan()) {
        return Err(format!("chip {c} never finished (a receive that no send matches)"));
    }
    Ok(FlowRun { done_ps, updates, messages })
}

/// Completes chip `c`'s current step if its sends are issued and its messages have arrived:
/// the chip is done, or its next step's timer is set.
fn try_complete(
    engines: &mut [Engine],
    runs: &[Run],
    far: &mut [Vec<(u32, u32)>],
    c: usize,
    now: f64,
    overhead: f64,
    events: &mut Events,
) {
    let e = &mut engines[c];
    if e.done() || e.got[0] < e.recvs {
        return;
    }
    if u64::from(e.cur) + 1 == u64::from(e.len) {
        e.done_ps = now;
        return;
    }
    e.advance(runs, &mut far[c]);
    e.issued = false;
    // `c` is below `TIMER` (`flatten`).
    events.push(now + overhead, (c as u32 | TIMER, 0));
}
