//! Transaction-level comparison for cycle-approximate blocks: instead of every port every
//! cycle, the *transactions* each side produces (a valid, maybe ready, handshake and its data)
//! are matched in order or by ID, and may differ in timing by up to `tolerance` cycles.
//!
//! ```text
//!   reference outputs ─► extract ─► expected ─┐
//!                                              ├─► match (in order per stream, or per ID):
//!   DUT outputs ───────► extract ─► actual ───┘   same data, |cycle difference| <= tolerance
//! ```
//!
//! Failures: **missing** (an expected transaction not produced within `timeout` cycles, or
//! skipped: the DUT's next one is the reference's one after), **extra** (produced, never
//! expected within `timeout`, or inserted before the expected one), **reordered** (two
//! neighbours swapped), **late** / **early** (matched, but more than `tolerance` cycles
//! apart), **data** (the heads differ and neither is the other side's next). Neighbours match
//! only within `tolerance` cycles, so recurring data values do not confuse the verdict.

use crate::block::PortInfo;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// How transactions are paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Per stream, the k-th actual transaction is the k-th expected one.
    InOrder,
    /// Per stream and ID, in order; different IDs may interleave freely.
    ById,
    /// Per stream, in any order: each DUT transaction pairs with the oldest unmatched
    /// reference transaction of the same ID and data within the latency window (`tolerance`
    /// cycles either way). One left unmatched beyond the window is missing (a dropped
    /// transaction) or extra. For blocks that may complete out of order (a memory controller
    /// reordering reads, a switch with several paths).
    OutOfOrder,
}

/// Where a transaction's ID comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnId {
    /// No ID (0).
    None,
    /// The lane index (e.g. the requester of a per-requester valid bit).
    Lane,
    /// This output port's lane.
    Port(&'static str),
}

/// One kind of transaction at a block's ports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnStream {
    /// Name in reports.
    pub name: &'static str,
    /// The valid output; its width is the number of lanes (one transaction per set bit).
    pub valid: &'static str,
    /// A port (input or output) that must be 1 too for the handshake: per lane if it is as
    /// wide as `valid`, else its bit 0.
    pub ready: Option<&'static str>,
    /// The data ports, each split into `lanes` equal lanes.
    pub data: Vec<&'static str>,
    /// The ID, for [`Order::ById`].
    pub id: TxnId,
}

/// How to compare transactions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreboardConfig {
    /// The transaction kinds.
    pub streams: Vec<TxnStream>,
    /// In order or by ID.
    pub order: Order,
    /// Cycles by which matched transactions may differ.
    pub tolerance: u64,
    /// Cycles after which an unmatched transaction is missing or extra (>= `tolerance`; one
    /// matched later than `tolerance` but within `timeout` is late or early).
    pub timeout: u64,
}

impl ScoreboardConfig {
    /// `streams`, in order, with a tolerance and a timeout of `max(4 * tolerance, 64)`.
    pub fn new(streams: Vec<TxnStream>, order: Order, tolerance: u64) -> ScoreboardConfig {
        ScoreboardConfig { streams, order, tolerance, timeout: (4 * tolerance).max(64) }
    }
}

/// One transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    /// Index into the config's streams.
    pub stream: usize,
    /// Its ID (0 without one).
    pub id: u64,
    /// One value per data port.
    pub data: Vec<u128>,
    /// Cycle it happened.
    pub cycle: u64,
}

impl Txn {
    fn same(&self, o: &Txn) -> bool {
        self.stream == o.stream && self.id == o.id && self.data == o.data
    }
}

impl fmt::Display for Txn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d: Vec<String> = self.data.iter().map(|v| format!("{v:#x}")).collect();
        write!(f, "[{}] id {} @{}", d.join(" "), self.id, self.cycle)
    }
}

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Expected, never produced within the timeout.
    Missing,
    /// Produced, never expected within the timeout.
    Extra,
    /// The same transactions in another order.
    Reordered,
    /// Matched, but produced more than `tolerance` cycles after the reference.
    Late,
    /// Matched, but produced more than `tolerance` cycles before the reference.
    Early,
    /// The heads differ in data and neither appears later on the other side.
    Data,
}

/// A scoreboard failure, with the transactions involved and the last matched pairs.
#[derive(Clone, Debug)]
pub struct ScoreError {
    /// What.
    pub failure: Failure,
    /// The stream's name.
    pub stream: &'static str,
    /// The expected (reference) transaction involved, if any.
    pub expected: Option<Txn>,
    /// The actual (DUT) transaction involved, if any.
    pub actual: Option<Txn>,
    /// The cycle it was decided.
    pub cycle: u64,
    /// The last matched (expected, actual) pairs, oldest first.
    pub recent: Vec<(Txn, Txn)>,
}

impl fmt::Display for ScoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = |x: &Option<Txn>| x.as_ref().map_or("none".to_string(), Txn::to_string);
        write!(
            f,
            "{:?} transaction on {} (decided at cycle {}): expected {}, actual {}",
            self.failure,
            self.stream,
            self.cycle,
            t(&self.expected),
            t(&self.actual)
        )?;
        if !self.recent.is_empty() {
            write!(f, "\n  last {} matched transactions (expected / actual):", self.recent.len())?;
            for (e, a) in &self.recent {
                write!(f, "\n    {e}  /  {a}")?;
            }
        }
        Ok(())
    }
}

/// Counts after a clean run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScoreStats {
    /// Transactions matched.
    pub matched: u64,
    /// Matched with a nonzero cycle difference (within tolerance).
    pub jittered: u64,
    /// The largest cycle difference of a match.
    pub max_skew: u64,
    /// Unmatched at the end but younger than the tolerance (cut off by the end of the run).
    pub in_flight: u64,
}

#[derive(Default)]
struct Queues {
    exp: VecDeque<Txn>,
    act: VecDeque<Txn>,
}

/// `x` is `y`, within `tol` cycles.
fn near(x: &Txn, y: &Txn, tol: u64) -> bool {
    x.same(y) && x.cycle.abs_diff(y.cycle) <= tol
}

/// Why the (differing) heads of `q` differ, once both sides show their next transaction:
/// the heads swapped (reordered), the actual head is the next expected one (the expected head
/// was skipped: missing), the expected head is the next actual one (the actual head was
/// inserted: extra), or neither (data). `None`: not decidable yet.
fn classify(q: &Queues, tol: u64) -> Option<Failure> {
    let (e, a) = (q.exp.front()?, q.act.front()?);
    let (e1, a1) = (q.exp.get(1), q.act.get(1));
    let a_next = e1.is_some_and(|x| near(x, a, tol));
    let e_next = a1.is_some_and(|x| near(x, e, tol));
    match (a_next, e_next) {
        (true, true) => Some(Failure::Reordered),
        (true, false) if a1.is_some() => Some(Failure::Missing),
        (false, true) if e1.is_some() => Some(Failure::Extra),
        (false, false) if e1.is_some() && a1.is_some() => Some(Failure::Data),
        _ => None,
    }
}

/// The matcher: feed it expected and actual transactions and the passing cycles.
pub struct Scoreboard {
    names: Vec<&'static str>,
    order: Order,
    tolerance: u64,
    timeout: u64,
    queues: BTreeMap<(usize, u64), Queues>,
    recent: VecDeque<(Txn, Txn)>,
    history: usize,
    stats: ScoreStats,
}

impl Scoreboard {
    /// A scoreboard for `cfg` keeping the last `history` matched pairs for reports.
    pub fn new(cfg: &ScoreboardConfig, history: usize) -> Scoreboard {
        Scoreboard {
            names: cfg.streams.iter().map(|s| s.name).collect(),
            order: cfg.order,
            tolerance: cfg.tolerance,
            timeout: cfg.timeout.max(cfg.tolerance),
            queues: BTreeMap::new(),
            recent: VecDeque::new(),
            history,
            stats: ScoreStats::default(),
        }
    }

    fn key(&self, t: &Txn) -> (usize, u64) {
        match self.order {
            Order::InOrder | Order::OutOfOrder => (t.stream, 0),
            Order::ById => (t.stream, t.id),
        }
    }

    /// Out of order: pairs `t` with the oldest unmatched transaction of the other side that
    /// is the same within the window, or files it.
    fn pair_any(&mut self, t: Txn, expected: bool) {
        let (k, tol) = (self.key(&t), self.tolerance);
        let q = self.queues.entry(k).or_default();
        let (other, mine) = if expected { (&mut q.act, &mut q.exp) } else { (&mut q.exp, &mut q.act) };
        match other.iter().position(|x| near(x, &t, tol)) {
            Some(i) => {
                let x = other.remove(i).expect("found");
                let (e, a) = if expected { (t, x) } else { (x, t) };
                self.matched(e, a);
            }
            None => mine.push_back(t),
        }
    }

    fn matched(&mut self, e: Txn, a: Txn) {
        let skew = e.cycle.abs_diff(a.cycle);
        self.stats.matched += 1;
        self.stats.jittered += (skew > 0) as u64;
        self.stats.max_skew = self.stats.max_skew.max(skew);
        if self.history > 0 {
            if self.recent.len() == self.history {
                self.recent.pop_front();
            }
            self.recent.push_back((e, a));
        }
    }

    fn fail(&self, failure: Failure, key: (usize, u64), e: Option<Txn>, a: Option<Txn>, cycle: u64) -> ScoreError {
        ScoreError {
            failure,
            stream: self.names.get(key.0).copied().unwrap_or("?"),
            expected: e,
            actual: a,
            cycle,
            recent: self.recent.iter().cloned().collect(),
        }
    }

    /// A reference transaction.
    pub fn expect(&mut self, t: Txn) -> Result<(), Box<ScoreError>> {
        if self.order == Order::OutOfOrder {
            self.pair_any(t, true);
            return Ok(());
        }
        let (k, c) = (self.key(&t), t.cycle);
        self.queues.entry(k).or_default().exp.push_back(t);
        self.settle(k, c)
    }

    /// A DUT transaction.
    pub fn observe(&mut self, t: Txn) -> Result<(), Box<ScoreError>> {
        if self.order == Order::OutOfOrder {
            self.pair_any(t, false);
            return Ok(());
        }
        let (k, c) = (self.key(&t), t.cycle);
        self.queues.entry(k).or_default().act.push_back(t);
        self.settle(k, c)
    }

    /// Matches heads of queue `k` as far as they agree.
    fn settle(&mut self, k: (usize, u64), now: u64) -> Result<(), Box<ScoreError>> {
        loop {
            let q = self.queues.get_mut(&k).expect("queue exists");
            let (Some(e), Some(a)) = (q.exp.front(), q.act.front()) else { return Ok(()) };
            if !e.same(a) {
                return match classify(q, self.tolerance) {
                    Some(f @ (Failure::Reordered | Failure::Missing | Failure::Extra | Failure::Data)) => {
                        let (e, a) = (e.clone(), a.clone());
                        Err(Box::new(self.fail(f, k, Some(e), Some(a), now)))
                    }
                    _ => Ok(()), // decided by `tick` (the next one may still show up)
                };
            }
            let (e, a) = (q.exp.pop_front().expect("head"), q.act.pop_front().expect("head"));
            let skew = e.cycle.abs_diff(a.cycle);
            if skew > self.tolerance {
                let f = if a.cycle > e.cycle { Failure::Late } else { Failure::Early };
                return Err(Box::new(self.fail(f, k, Some(e), Some(a), now)));
            }
            self.matched(e, a);
        }
    }

    /// The end of cycle `now`: reports what can no longer match.
    pub fn tick(&mut self, now: u64) -> Result<(), Box<ScoreError>> {
        let (tol, out) = (self.tolerance, self.timeout);
        if self.order == Order::OutOfOrder {
            // Queues are in cycle order: a head beyond the window can no longer pair.
            for (&k, q) in &self.queues {
                let verdict = match (q.exp.front(), q.act.front()) {
                    (Some(e), a) if now > e.cycle + tol => Some((Failure::Missing, Some(e), a)),
                    (e, Some(a)) if now > a.cycle + tol => Some((Failure::Extra, e, Some(a))),
                    _ => None,
                };
                if let Some((f, e, a)) = verdict {
                    return Err(Box::new(self.fail(f, k, e.cloned(), a.cloned(), now)));
                }
            }
            return Ok(());
        }
        for (&k, q) in &self.queues {
            let verdict = match (q.exp.front(), q.act.front()) {
                (Some(e), None) if now > e.cycle + out => Some((Failure::Missing, Some(e), None)),
                (None, Some(a)) if now > a.cycle + out => Some((Failure::Extra, None, Some(a))),
                (Some(e), Some(a)) => {
                    let a_next = q.exp.get(1).is_some_and(|x| near(x, a, tol));
                    let e_next = q.act.get(1).is_some_and(|x| near(x, e, tol));
                    match (a_next, e_next) {
                        (true, _) if now > e.cycle + out => Some((Failure::Missing, Some(e), Some(a))),
                        (_, true) if now > a.cycle + out => Some((Failure::Extra, Some(e), Some(a))),
                        (false, false) if now > e.cycle.max(a.cycle) + tol => Some((Failure::Data, Some(e), Some(a))),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some((f, e, a)) = verdict {
                return Err(Box::new(self.fail(f, k, e.cloned(), a.cloned(), now)));
            }
        }
        Ok(())
    }

    /// The run ended after cycle `end`: anything unmatched and older than the tolerance is
    /// missing or extra; younger ones are counted as in flight.
    pub fn finish(&mut self, end: u64) -> Result<ScoreStats, Box<ScoreError>> {
        self.tick(end)?;
        let tol = self.tolerance;
        let mut in_flight = 0;
        for (&k, q) in &self.queues {
            if let Some(e) = q.exp.iter().find(|e| end > e.cycle + tol) {
                return Err(Box::new(self.fail(Failure::Missing, k, Some(e.clone()), q.act.front().cloned(), end)));
            }
            if let Some(a) = q.act.iter().find(|a| end > a.cycle + tol) {
                return Err(Box::new(self.fail(Failure::Extra, k, q.exp.front().cloned(), Some(a.clone()), end)));
            }
            in_flight += (q.exp.len() + q.act.len()) as u64;
        }
        self.stats.in_flight = in_flight;
        Ok(self.stats)
    }

    /// Counts so far.
    pub fn stats(&self) -> ScoreStats {
        self.stats
    }
}

/// Reads transactions off a block's ports (port indices resolved once).
pub(crate) struct Extractor {
    streams: Vec<StreamPorts>,
}

struct StreamPorts {
    lanes: u32,
    valid: usize,
    /// (port, per lane)
    ready: Option<(usize, bool)>,
    /// (port, lane width)
    data: Vec<(usize, u32)>,
    id: Option<(usize, u32)>,
    id_lane: bool,
}

fn lane(v: u128, k: u32, w: u32) -> u128 {
    let s = v >> (k * w);
    if w >= 128 {
        s
    } else {
        s & ((1 << w) - 1)
    }
}

impl Extractor {
    /// Resolves `cfg`'s port names against `ports`.
    pub(crate) fn new(cfg: &ScoreboardConfig, ports: &[PortInfo]) -> Result<Extractor, String> {
        let find = |n: &str| ports.iter().position(|p| p.name == n).ok_or_else(|| format!("no port {n}"));
        let mut streams = Vec::new();
        for s in &cfg.streams {
            let valid = find(s.valid)?;
            let lanes = ports[valid].width;
            let split = |n: &str| -> Result<(usize, u32), String> {
                let i = find(n)?;
                let w = ports[i].width;
                if !w.is_multiple_of(lanes) {
                    return Err(format!("stream {}: port {n} ({w} bits) is not {lanes} equal lanes", s.name));
                }
                Ok((i, w / lanes))
            };
            let ready = match s.ready {
                Some(r) => {
                    let i = find(r)?;
                    Some((i, ports[i].width == lanes && lanes > 1))
                }
                None => None,
            };
            let data = s.data.iter().map(|d| split(d)).collect::<Result<_, _>>()?;
            let id = match s.id {
                TxnId::Port(p) => Some(split(p)?),
                _ => None,
            };
            streams.push(StreamPorts { lanes, valid, ready, data, id, id_lane: s.id == TxnId::Lane });
        }
        Ok(Extractor { streams })
    }

    /// Calls `f` with every transaction at the ports this cycle (`port` reads a port's value).
    pub(crate) fn extract(&self, cycle: u64, port: impl Fn(usize) -> u128, mut f: impl FnMut(Txn)) {
        for (si, s) in self.streams.iter().enumerate() {
            let valid = port(s.valid);
            if valid == 0 {
                continue;
            }
            let ready = s.ready.map(|(i, per_lane)| (port(i), per_lane));
            for k in 0..s.lanes {
                let fire = valid >> k & 1 == 1
                    && ready.is_none_or(|(r, per_lane)| if per_lane { r >> k & 1 == 1 } else { r & 1 == 1 });
                if !fire {
                    continue;
                }
                let data = s.data.iter().map(|&(i, w)| lane(port(i), k, w)).collect();
                let id = match (s.id, s.id_lane) {
                    (Some((i, w)), _) => lane(port(i), k, w) as u64,
                    (None, true) => k as u64,
                    (None, false) => 0,
                };
                f(Txn { stream: si, id, data, cycle });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(order: Order, tolerance: u64) -> ScoreboardConfig {
        let s = TxnStream { name: "out", valid: "v", ready: None, data: vec!["d"], id: TxnId::Lane };
        ScoreboardConfig { streams: vec![s], order, tolerance, timeout: 20 }
    }

    fn t(id: u64, d: u128, cycle: u64) -> Txn {
        Txn { stream: 0, id, data: vec![d], cycle }
    }

    /// Runs expected and actual transactions through a scoreboard cycle by cycle; the first
    /// failure, or the stats.
    fn run(order: Order, tol: u64, exp: &[Txn], act: &[Txn], end: u64) -> Result<ScoreStats, Box<ScoreError>> {
        let mut sb = Scoreboard::new(&cfg(order, tol), 4);
        for c in 0..=end {
            for e in exp.iter().filter(|x| x.cycle == c) {
                sb.expect(e.clone())?;
            }
            for a in act.iter().filter(|x| x.cycle == c) {
                sb.observe(a.clone())?;
            }
            sb.tick(c)?;
        }
        sb.finish(end)
    }

    fn failure(r: Result<ScoreStats, Box<ScoreError>>) -> Failure {
        r.expect_err("a failure").failure
    }

    #[test]
    fn identical_streams_match_and_jitter_within_tolerance_passes() {
        let exp: Vec<Txn> = (0..10).map(|k| t(0, k, 3 * k as u64)).collect();
        let s = run(Order::InOrder, 0, &exp, &exp, 60).unwrap();
        assert_eq!((s.matched, s.jittered, s.max_skew), (10, 0, 0));
        // The DUT is 2 cycles late or 1 early, alternately: fine with tolerance 2.
        let act: Vec<Txn> =
            (0..10).map(|k| t(0, k, if k % 2 == 0 { 3 * k as u64 + 2 } else { 3 * k as u64 - 1 })).collect();
        let s = run(Order::InOrder, 2, &exp, &act, 60).unwrap();
        assert_eq!(s.matched, 10);
        assert!(s.jittered > 0 && s.max_skew <= 2);
    }

    #[test]
    fn catches_a_missing_transaction() {
        let exp = [t(0, 1, 1), t(0, 2, 2), t(0, 3, 3)];
        let act = [t(0, 1, 1), t(0, 3, 3)];
        let e = run(Order::InOrder, 1, &exp, &act, 100).unwrap_err();
        assert_eq!((e.failure, e.expected.as_ref().map(|x| x.data[0])), (Failure::Missing, Some(2)));
        assert_eq!(e.recent.len(), 1, "the match before it is reported");
        // Also at the end of the run (nothing after it).
        assert_eq!(failure(run(Order::InOrder, 1, &exp, &exp[..2], 10)), Failure::Missing);
    }

    #[test]
    fn catches_an_extra_transaction() {
        let exp = [t(0, 1, 1), t(0, 3, 3)];
        let act = [t(0, 1, 1), t(0, 2, 2), t(0, 3, 3)];
        let e = run(Order::InOrder, 1, &exp, &act, 100).unwrap_err();
        assert_eq!((e.failure, e.actual.as_ref().map(|x| x.data[0])), (Failure::Extra, Some(2)));
        assert_eq!(failure(run(Order::InOrder, 1, &exp[..1], &act[..2], 10)), Failure::Extra);
    }

    #[test]
    fn catches_reordering_in_order_and_accepts_it_across_ids() {
        let exp = [t(0, 1, 1), t(1, 2, 1)];
        let act = [t(1, 2, 1), t(0, 1, 1)];
        assert_eq!(failure(run(Order::InOrder, 0, &exp, &act, 10)), Failure::Reordered);
        assert_eq!(run(Order::ById, 0, &exp, &act, 10).unwrap().matched, 2);
        // Within one ID, order still matters.
        let exp = [t(0, 1, 1), t(0, 2, 2)];
        let act = [t(0, 2, 1), t(0, 1, 2)];
        assert_eq!(failure(run(Order::ById, 1, &exp, &act, 10)), Failure::Reordered);
    }

    #[test]
    fn catches_late_and_early_beyond_tolerance() {
        let exp = [t(0, 1, 5)];
        assert_eq!(failure(run(Order::InOrder, 2, &exp, &[t(0, 1, 8)], 50)), Failure::Late);
        assert_eq!(failure(run(Order::InOrder, 2, &exp, &[t(0, 1, 2)], 50)), Failure::Early);
        assert!(run(Order::InOrder, 2, &exp, &[t(0, 1, 7)], 50).is_ok());
        // Later than the timeout: missing (the scoreboard cannot wait forever).
        assert_eq!(failure(run(Order::InOrder, 2, &exp, &[t(0, 1, 40)], 50)), Failure::Missing);
    }

    #[test]
    fn catches_wrong_data() {
        let e = run(Order::InOrder, 0, &[t(0, 1, 1)], &[t(0, 9, 1)], 10).unwrap_err();
        assert_eq!((e.failure, e.cycle), (Failure::Data, 2));
        assert!(e.to_string().starts_with("Data transaction on out (decided at cycle 2): expected [0x1] id 0 @1"));
    }

    #[test]
    fn extractor_reads_lanes_ready_and_ids() {
        let p = |name, input, width| PortInfo { name, input, width };
        let ports = [p("v", false, 2), p("rdy", true, 1), p("d", false, 16), p("tag", false, 4)];
        let s = TxnStream { name: "o", valid: "v", ready: Some("rdy"), data: vec!["d"], id: TxnId::Port("tag") };
        let x = Extractor::new(&ScoreboardConfig::new(vec![s], Order::ById, 0), &ports).unwrap();
        let vals = [0b10u128, 1, 0xabcd, 0b1001];
        let mut got = vec![];
        x.extract(7, |i| vals[i], |t| got.push(t));
        assert_eq!(got, [Txn { stream: 0, id: 0b10, data: vec![0xab], cycle: 7 }]);
        let vals = [0b11u128, 0, 0xabcd, 0];
        x.extract(8, |i| vals[i], |_| panic!("not ready"));
        let bad = TxnStream { name: "o", valid: "v", ready: None, data: vec!["rdy"], id: TxnId::None };
        assert!(Extractor::new(&ScoreboardConfig::new(vec![bad], Order::InOrder, 0), &ports).is_err());
    }
}

#[cfg(test)]
mod out_of_order_tests {
    use super::*;

    fn sb(tol: u64) -> Scoreboard {
        let s = TxnStream { name: "reads", valid: "v", ready: None, data: vec!["d"], id: TxnId::Port("tag") };
        Scoreboard::new(
            &ScoreboardConfig { streams: vec![s], order: Order::OutOfOrder, tolerance: tol, timeout: 64 },
            4,
        )
    }

    fn t(id: u64, d: u128, cycle: u64) -> Txn {
        Txn { stream: 0, id, data: vec![d], cycle }
    }

    /// Feeds `(expected, actual)` per cycle from `cycles` then runs to `end`.
    fn run(tol: u64, cycles: &[(Vec<Txn>, Vec<Txn>)], end: u64) -> Result<ScoreStats, Box<ScoreError>> {
        let mut b = sb(tol);
        for c in 0..=end {
            if let Some((exp, act)) = cycles.get(c as usize) {
                for e in exp {
                    b.expect(Txn { cycle: c, ..e.clone() })?;
                }
                for a in act {
                    b.observe(Txn { cycle: c, ..a.clone() })?;
                }
            }
            b.tick(c)?;
        }
        b.finish(end)
    }

    #[test]
    fn completions_in_another_order_within_the_window_match() {
        // The model completes tags 1, 2, 3 at cycles 0-2; the DUT completes 3, 1, 2 at 1-3.
        let c = vec![
            (vec![t(1, 10, 0)], vec![]),
            (vec![t(2, 20, 0)], vec![t(3, 30, 0)]),
            (vec![t(3, 30, 0)], vec![t(1, 10, 0)]),
            (vec![], vec![t(2, 20, 0)]),
        ];
        let s = run(2, &c, 20).unwrap();
        assert_eq!((s.matched, s.max_skew, s.in_flight), (3, 2, 0));
        // In order, the same streams fail.
        let mut b = Scoreboard::new(&ScoreboardConfig { order: Order::InOrder, ..sb_cfg(2) }, 4);
        let r = (|| {
            for (k, (exp, act)) in c.iter().enumerate() {
                for e in exp {
                    b.expect(Txn { cycle: k as u64, ..e.clone() })?;
                }
                for a in act {
                    b.observe(Txn { cycle: k as u64, ..a.clone() })?;
                }
                b.tick(k as u64)?;
            }
            b.finish(20)
        })();
        assert!(r.is_err());
    }

    fn sb_cfg(tol: u64) -> ScoreboardConfig {
        let s = TxnStream { name: "reads", valid: "v", ready: None, data: vec!["d"], id: TxnId::Port("tag") };
        ScoreboardConfig { streams: vec![s], order: Order::OutOfOrder, tolerance: tol, timeout: 64 }
    }

    #[test]
    fn a_dropped_transaction_is_missing_once_the_window_closes() {
        // The DUT never completes tag 2 (its data 20): caught at cycle 1 + window + 1.
        let c = vec![
            (vec![t(1, 10, 0), t(2, 20, 0)], vec![]),
            (vec![t(3, 30, 0)], vec![t(1, 10, 0)]),
            (vec![], vec![t(3, 30, 0)]),
        ];
        let e = run(3, &c, 50).unwrap_err();
        assert_eq!(e.failure, Failure::Missing);
        assert_eq!(e.expected, Some(t(2, 20, 0)));
        assert_eq!(e.cycle, 4, "the window of 3 cycles after cycle 0 closed");
        assert!(e.to_string().contains("Missing transaction on reads"), "{e}");
        // The same transaction with other data, or a completion outside the window, is not a match.
        let c = vec![(vec![t(1, 10, 0)], vec![t(1, 11, 0)])];
        assert_eq!(run(3, &c, 50).unwrap_err().failure, Failure::Missing);
        let mut late = vec![(vec![t(1, 10, 0)], vec![])];
        late.extend((0..5).map(|_| (vec![], vec![])));
        late.push((vec![], vec![t(1, 10, 0)]));
        assert_eq!(run(3, &late, 50).unwrap_err().failure, Failure::Missing);
    }

    #[test]
    fn an_unexpected_completion_is_extra() {
        let c = vec![(vec![t(1, 10, 0)], vec![t(1, 10, 0), t(9, 90, 0)])];
        let e = run(2, &c, 50).unwrap_err();
        assert_eq!((e.failure, e.actual), (Failure::Extra, Some(t(9, 90, 0))));
    }
}
