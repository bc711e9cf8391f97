//! Functional coverage of a block's ports, as a verification engineer declares it in a
//! SystemVerilog covergroup: cover points with bins over port values (ranges, each bit, each
//! lane's values), value transitions (FSM arcs), and crosses of conditions (full x push x
//! pop), with ignore bins for combinations the design cannot produce. Sampled once per cycle
//! after `settle`, on both sides of a diff (model and RTL) from their own port values.
//!
//! ```
//! use trnsim_rtl::coverage::{Cover, Coverage, Expr};
//! use trnsim_rtl::block::PortInfo;
//! let ports = [PortInfo { name: "count", width: 3, input: false }];
//! let cover = [Cover::values("occupancy", Expr::port("count"), 0..=4)];
//! let mut c = Coverage::new(&cover, &ports).unwrap();
//! for v in [0u128, 1, 2, 3] {
//!     c.sample(&[v]);
//! }
//! assert_eq!((c.report().hit, c.report().bins), (4, 5));
//! ```

use crate::block::PortInfo;
use serde::Serialize;

/// A value computed from one cycle's port values.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A port's value.
    Port(&'static str),
    /// The number of 1 bits of a port.
    Pop(&'static str),
    /// Bit `k` of a port.
    Bit(&'static str, u32),
    /// Lane `k` (of width `w`) of a port.
    Lane(&'static str, u32, u32),
    /// 1 if every term is non-zero, else 0 (a handshake: valid and ready).
    All(Vec<Expr>),
    /// 1 if some term is non-zero, else 0 (a condition on any of several lanes).
    Any(Vec<Expr>),
    /// 1 if the expression equals the value, else 0.
    Eq(Box<Expr>, u128),
    /// 1 if the first expression is greater than the second, else 0 (a field beyond another).
    Gt(Box<Expr>, Box<Expr>),
    /// A constant.
    Const(u128),
    /// 1 if the expression is zero, else 0 (logical negation: `!full`).
    Not(Box<Expr>),
    /// An internal signal's value (`Block::signals`: the RTL's Verilator public signals, by
    /// path below the top). A cover point naming one is sampled only on the sides that have
    /// it (the RTL's; the model's too if it exposes the same name).
    Signal(&'static str),
}

impl Expr {
    /// A port's value.
    pub fn port(name: &'static str) -> Expr {
        Expr::Port(name)
    }
    /// 1 when every port named is non-zero.
    pub fn all(names: &[&'static str]) -> Expr {
        Expr::All(names.iter().map(|n| Expr::Port(n)).collect())
    }
    /// An internal signal's value ([`Expr::Signal`]).
    pub fn signal(name: &'static str) -> Expr {
        Expr::Signal(name)
    }
    /// The internal signals the expression reads.
    fn signals(&self, out: &mut Vec<&'static str>) {
        match self {
            Expr::Signal(n) => out.push(n),
            Expr::All(v) | Expr::Any(v) => v.iter().for_each(|e| e.signals(out)),
            Expr::Eq(e, _) | Expr::Not(e) => e.signals(out),
            Expr::Gt(a, b) => {
                a.signals(out);
                b.signals(out);
            }
            _ => {}
        }
    }
    fn resolve(&self, ports: &[PortInfo]) -> Result<R, String> {
        let idx = |n: &str| {
            ports
                .iter()
                .position(|p| p.name == n)
                .ok_or_else(|| format!("cover point names port {n}, which the block has not"))
        };
        Ok(match self {
            Expr::Port(n) => R::Port(idx(n)?),
            Expr::Signal(n) => {
                R::Port(ports.iter().position(|p| p.name == *n).ok_or_else(|| format!("no internal signal {n}"))?)
            }
            Expr::Pop(n) => R::Pop(idx(n)?),
            Expr::Bit(n, k) => R::Bit(idx(n)?, *k),
            Expr::Lane(n, k, w) => R::Lane(idx(n)?, *k, *w),
            Expr::All(v) => R::All(v.iter().map(|e| e.resolve(ports)).collect::<Result<_, _>>()?),
            Expr::Any(v) => R::Any(v.iter().map(|e| e.resolve(ports)).collect::<Result<_, _>>()?),
            Expr::Eq(e, x) => R::Eq(Box::new(e.resolve(ports)?), *x),
            Expr::Gt(a, b) => R::Gt(Box::new(a.resolve(ports)?), Box::new(b.resolve(ports)?)),
            Expr::Const(x) => R::Const(*x),
            Expr::Not(e) => R::Not(Box::new(e.resolve(ports)?)),
        })
    }
}

/// `!e`: 1 when `e` is zero (logical negation).
impl std::ops::Not for Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }
}

/// Named inclusive ranges of a value: (bin name, low, high).
pub type RangeBins = Vec<(String, u128, u128)>;

/// One term of a cross of value bins: its name, its expression and its ranges.
pub type CrossTerm = (&'static str, Expr, RangeBins);

/// A term of [`Cover::cross_bins`]: name, expression, (bin name, low, high) ranges.
pub type CrossTermRef<'a> = (&'static str, Expr, &'a [(&'a str, u128, u128)]);

/// An [`Expr`] with ports resolved to indices.
#[derive(Clone, Debug)]
enum R {
    Port(usize),
    Pop(usize),
    Bit(usize, u32),
    Lane(usize, u32, u32),
    All(Vec<R>),
    Any(Vec<R>),
    Eq(Box<R>, u128),
    Gt(Box<R>, Box<R>),
    Const(u128),
    Not(Box<R>),
}

impl R {
    fn eval(&self, v: &[u128]) -> u128 {
        match self {
            R::Port(i) => v[*i],
            R::Pop(i) => u128::from(v[*i].count_ones()),
            R::Bit(i, k) => (v[*i] >> k) & 1,
            R::Lane(i, k, w) => {
                let mask = if *w >= 128 { u128::MAX } else { (1u128 << w) - 1 };
                v[*i].checked_shr(k * w).unwrap_or(0) & mask
            }
            R::All(es) => u128::from(es.iter().all(|e| e.eval(v) != 0)),
            R::Any(es) => u128::from(es.iter().any(|e| e.eval(v) != 0)),
            R::Eq(e, x) => u128::from(e.eval(v) == *x),
            R::Gt(a, b) => u128::from(a.eval(v) > b.eval(v)),
            R::Const(x) => *x,
            R::Not(e) => u128::from(e.eval(v) == 0),
        }
    }
}

/// What a cover point bins.
#[derive(Clone, Debug)]
pub enum Kind {
    /// Named ranges of the expression's value (inclusive).
    Ranges(Expr, Vec<(String, u128, u128)>),
    /// Each bit of a port seen at 1.
    Bits(&'static str),
    /// Each of `lanes` lanes of a port (of width `width`) seen at each value below `values`.
    Lanes(&'static str, u32, u32, u128),
    /// The expression's value going from `a` to `b` between consecutive cycles, for each
    /// listed pair.
    Transitions(Expr, Vec<(u128, u128)>),
    /// Every combination of the terms' truth (non-zero), but those in `ignore` (bit `k` of a
    /// combination is term `k`).
    Cross(Vec<(&'static str, Expr)>, Vec<u32>),
    /// Sequences of the expression's values over consecutive sampled cycles (`a => b => c`),
    /// one bin per listed sequence (each at least 2 values long).
    Sequences(Expr, Vec<Vec<u128>>),
    /// The cross of value bins: every combination of one named range of each term (a bin
    /// `a=low,b=high` is hit when term a is in its range `low` and term b in `high`).
    CrossBins(Vec<CrossTerm>),
}

/// One cover point.
#[derive(Clone, Debug)]
pub struct Cover {
    /// Its name in reports.
    pub name: &'static str,
    /// Its bins.
    pub kind: Kind,
    /// The sampling guard (SystemVerilog's `iff`): the point samples only in cycles where it
    /// is non-zero, so a transition or sequence spans sampled cycles only.
    pub guard: Option<Expr>,
}

impl Cover {
    /// One bin per value of `e` in `values`.
    pub fn values(name: &'static str, e: Expr, values: std::ops::RangeInclusive<u128>) -> Cover {
        let bins = values.map(|v| (v.to_string(), v, v)).collect();
        Cover { guard: None, name, kind: Kind::Ranges(e, bins) }
    }
    /// Named ranges of `e`.
    pub fn ranges(name: &'static str, e: Expr, bins: &[(&str, u128, u128)]) -> Cover {
        Cover {
            guard: None,
            name,
            kind: Kind::Ranges(e, bins.iter().map(|&(n, a, b)| (n.to_string(), a, b)).collect()),
        }
    }
    /// Each bit of `port` seen at 1.
    pub fn bits(name: &'static str, port: &'static str) -> Cover {
        Cover { guard: None, name, kind: Kind::Bits(port) }
    }
    /// Each of `lanes` lanes of `port` (`width` bits each) seen at every value below `values`.
    pub fn lanes(name: &'static str, port: &'static str, lanes: u32, width: u32, values: u128) -> Cover {
        Cover { guard: None, name, kind: Kind::Lanes(port, lanes, width, values) }
    }
    /// Transitions of `e` between consecutive cycles.
    pub fn transitions(name: &'static str, e: Expr, pairs: &[(u128, u128)]) -> Cover {
        Cover { guard: None, name, kind: Kind::Transitions(e, pairs.to_vec()) }
    }
    /// Sequences of `e`'s values over consecutive sampled cycles.
    pub fn sequences(name: &'static str, e: Expr, seqs: &[&[u128]]) -> Cover {
        Cover { guard: None, name, kind: Kind::Sequences(e, seqs.iter().map(|s| s.to_vec()).collect()) }
    }
    /// The cross of value bins: `terms` are (name, expression, named inclusive ranges).
    pub fn cross_bins(name: &'static str, terms: &[CrossTermRef<'_>]) -> Cover {
        let t = terms
            .iter()
            .map(|(n, e, r)| (*n, e.clone(), r.iter().map(|&(b, lo, hi)| (b.to_string(), lo, hi)).collect()))
            .collect();
        Cover { guard: None, name, kind: Kind::CrossBins(t) }
    }
    /// The same point, sampled only in cycles where `guard` is non-zero (`iff`).
    pub fn iff(self, guard: Expr) -> Cover {
        Cover { guard: Some(guard), ..self }
    }
    /// The cross of `terms` (each true when non-zero), but the combinations in `ignore`.
    pub fn cross(name: &'static str, terms: Vec<(&'static str, Expr)>, ignore: &[u32]) -> Cover {
        Cover { guard: None, name, kind: Kind::Cross(terms, ignore.to_vec()) }
    }
}

/// A cover point's sampler and its bins' hit counts.
struct Point {
    name: &'static str,
    guard: Option<R>,
    bins: Vec<String>,
    hits: Vec<u64>,
    how: How,
}

enum How {
    /// Bins of consecutive single values from `lo`: the value indexes its bin.
    Values(R, u128, usize),
    Ranges(R, Vec<(u128, u128)>),
    /// Port, width, bit-sliced hit counters (see `sample`).
    Bits(usize, u32, Box<[u128; 64]>),
    Lanes(usize, u32, u32, u128),
    /// The expression, the pairs, and its value last cycle (None before the first).
    Transitions(R, Vec<(u128, u128)>, Option<u128>),
    /// Terms, and the bin of each combination (None: ignored).
    Cross(Vec<R>, Vec<Option<usize>>),
    /// The expression, the sequences, and its last sampled values (oldest first, at most the
    /// longest sequence's length).
    Sequences(R, Vec<Vec<u128>>, Vec<u128>, usize),
    /// Terms with their ranges; bin = mixed-radix index of each term's first matching range.
    CrossBins(Vec<(R, Vec<(u128, u128)>)>),
}

/// A cross of value bins' bins (every combination, first term slowest) and sampler.
fn cross_bins(terms: &[CrossTerm], ports: &[PortInfo]) -> Result<(Vec<String>, How), String> {
    let n = terms.iter().try_fold(1usize, |n, t| n.checked_mul(t.2.len()).filter(|&n| n <= MAX_BINS));
    let n = n.ok_or_else(|| format!("more than {MAX_BINS} bins"))?;
    if terms.is_empty() || n == 0 {
        return Err("a cross of no terms, or a term without bins".into());
    }
    let mut bins = vec![String::new()];
    for (name, _, ranges) in terms {
        bins = bins
            .iter()
            .flat_map(|b| {
                let sep = if b.is_empty() { "" } else { "," };
                ranges.iter().map(move |(r, _, _)| format!("{b}{sep}{name}={r}"))
            })
            .collect();
    }
    let how = terms
        .iter()
        .map(|(_, e, r)| Ok((e.resolve(ports)?, r.iter().map(|&(_, a, b)| (a, b)).collect())))
        .collect::<Result<_, String>>()?;
    Ok((bins, How::CrossBins(how)))
}

/// Most bins one cover point may have (a guard against a lane cover of a huge port).
pub const MAX_BINS: usize = 1 << 16;

/// A block's coverage, sampled cycle by cycle.
pub struct Coverage {
    points: Vec<Point>,
}

/// One bin in a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BinReport {
    /// The bin's name.
    pub bin: String,
    /// Cycles it was hit.
    pub hits: u64,
}

/// One cover point in a report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PointReport {
    /// The cover point.
    pub name: String,
    /// Bins hit at least once.
    pub hit: usize,
    /// Its bins.
    pub bins: Vec<BinReport>,
}

/// A coverage report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoverageReport {
    /// Bins hit at least once, over all cover points.
    pub hit: usize,
    /// Bins declared.
    pub bins: usize,
    /// The cover points.
    pub points: Vec<PointReport>,
}

impl CoverageReport {
    /// Percentage of bins hit (100 with no bins).
    pub fn percent(&self) -> f64 {
        if self.bins == 0 {
            100.0
        } else {
            100.0 * self.hit as f64 / self.bins as f64
        }
    }
    /// The holes: `point.bin` names of bins never hit.
    pub fn holes(&self) -> Vec<String> {
        self.points
            .iter()
            .flat_map(|p| p.bins.iter().filter(|b| b.hits == 0).map(move |b| format!("{}.{}", p.name, b.bin)))
            .collect()
    }
    /// Adds `other`'s hits to this report, matching cover points and their bins by name (as
    /// coverage databases merge runs): runs of one block over seeds and stimuli have the same
    /// points; points or bins only one side has are kept (a configuration with more bins keeps
    /// them, unhit where the other never had them). Counts saturate.
    pub fn merge(&mut self, other: &CoverageReport) {
        for op in &other.points {
            let at = match self.points.iter().position(|p| p.name == op.name) {
                Some(i) => i,
                None => {
                    self.points.push(PointReport { name: op.name.clone(), hit: 0, bins: Vec::new() });
                    self.points.len() - 1
                }
            };
            let p = &mut self.points[at];
            for ob in &op.bins {
                match p.bins.iter_mut().find(|b| b.bin == ob.bin) {
                    Some(b) => b.hits = b.hits.saturating_add(ob.hits),
                    None => p.bins.push(ob.clone()),
                }
            }
            p.hit = p.bins.iter().filter(|b| b.hits > 0).count();
        }
        self.hit = self.points.iter().map(|p| p.hit).sum();
        self.bins = self.points.iter().map(|p| p.bins.len()).sum();
    }

    /// A table: one line per cover point (hit / bins, percent), then the overall figure and the
    /// holes (at most `max_holes` named).
    pub fn table(&self, max_holes: usize) -> String {
        let mut s = String::new();
        for p in &self.points {
            let pct = if p.bins.is_empty() { 100.0 } else { 100.0 * p.hit as f64 / p.bins.len() as f64 };
            s += &format!("  {:<28} {:>6} / {:<6} {:>6.1} %\n", p.name, p.hit, p.bins.len(), pct);
        }
        s += &format!("  {:<28} {:>6} / {:<6} {:>6.1} %\n", "all bins", self.hit, self.bins, self.percent());
        let holes = self.holes();
        if !holes.is_empty() {
            let shown: Vec<&str> = holes.iter().take(max_holes).map(String::as_str).collect();
            let more =
                if holes.len() > max_holes { format!(" and {} more", holes.len() - max_holes) } else { String::new() };
            s += &format!("  holes: {}{more}\n", shown.join(", "));
        }
        s
    }
}

impl Cover {
    /// The internal signals ([`Expr::Signal`]) the cover point reads, its guard's too.
    pub fn signals(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        match &self.kind {
            Kind::Ranges(e, _) | Kind::Transitions(e, _) | Kind::Sequences(e, _) => e.signals(&mut out),
            Kind::Cross(t, _) => t.iter().for_each(|(_, e)| e.signals(&mut out)),
            Kind::CrossBins(t) => t.iter().for_each(|(_, e, _)| e.signals(&mut out)),
            Kind::Bits(_) | Kind::Lanes(..) => {}
        }
        if let Some(g) = &self.guard {
            g.signals(&mut out);
        }
        out
    }
}

impl Coverage {
    /// The cover points `covers` over a block with ports `ports`; an error names a cover point
    /// that does not fit the ports.
    pub fn new(covers: &[Cover], ports: &[PortInfo]) -> Result<Coverage, String> {
        Coverage::with_signals(covers, ports, &[])
    }

    /// The cover points `covers` over ports `ports` and internal signals `signals`: samples
    /// take the ports' values followed by the signals' (in these orders). A cover point naming
    /// a signal this side has not is left out of this side's report (an unknown port is an
    /// error, as in [`Coverage::new`]).
    pub fn with_signals(covers: &[Cover], ports: &[PortInfo], signals: &[PortInfo]) -> Result<Coverage, String> {
        let all: Vec<PortInfo> = ports.iter().chain(signals).copied().collect();
        let ports = all.as_slice();
        let mut points = Vec::with_capacity(covers.len());
        for c in covers {
            if c.signals().iter().any(|n| !signals.iter().any(|s| s.name == *n)) {
                continue;
            }
            let err = |e: String| format!("cover point {}: {e}", c.name);
            let port = |n: &str| -> Result<(usize, u32), String> {
                ports
                    .iter()
                    .position(|p| p.name == n)
                    .map(|i| (i, ports[i].width))
                    .ok_or_else(|| err(format!("no port {n}")))
            };
            let (bins, how): (Vec<String>, How) = match &c.kind {
                Kind::Ranges(e, r) => {
                    let e = e.resolve(ports).map_err(err)?;
                    let lo = r.first().map_or(0, |b| b.1);
                    let unit =
                        r.iter().enumerate().all(|(k, &(_, a, b))| a == b && Some(a) == lo.checked_add(k as u128));
                    let how = if unit {
                        How::Values(e, lo, r.len())
                    } else {
                        How::Ranges(e, r.iter().map(|&(_, a, b)| (a, b)).collect())
                    };
                    (r.iter().map(|(n, _, _)| n.clone()).collect(), how)
                }
                Kind::Bits(p) => {
                    let (i, w) = port(p)?;
                    ((0..w).map(|k| format!("{p}[{k}]")).collect(), How::Bits(i, w, Box::new([0; 64])))
                }
                Kind::Lanes(p, lanes, width, values) => {
                    let (i, _) = port(p)?;
                    let n = u128::from(*lanes).saturating_mul(*values);
                    if n > MAX_BINS as u128 {
                        return Err(err(format!("{n} bins (at most {MAX_BINS})")));
                    }
                    let bins = (0..*lanes).flat_map(|l| (0..*values).map(move |v| format!("lane{l}={v}"))).collect();
                    (bins, How::Lanes(i, *lanes, *width, *values))
                }
                Kind::Transitions(e, pairs) => (
                    pairs.iter().map(|(a, b)| format!("{a}->{b}")).collect(),
                    How::Transitions(e.resolve(ports).map_err(err)?, pairs.clone(), None),
                ),
                Kind::Cross(terms, ignore) => {
                    if terms.len() > 12 {
                        return Err(err(format!("{} terms (at most 12)", terms.len())));
                    }
                    let mut bins = Vec::new();
                    let mut map = Vec::new();
                    for combo in 0u32..(1 << terms.len()) {
                        if ignore.contains(&combo) {
                            map.push(None);
                            continue;
                        }
                        let name: Vec<String> = terms
                            .iter()
                            .enumerate()
                            .map(|(k, (n, _))| if combo >> k & 1 == 1 { n.to_string() } else { format!("!{n}") })
                            .collect();
                        map.push(Some(bins.len()));
                        bins.push(name.join("&"));
                    }
                    let rs = terms.iter().map(|(_, e)| e.resolve(ports)).collect::<Result<_, _>>().map_err(err)?;
                    (bins, How::Cross(rs, map))
                }
                Kind::Sequences(e, seqs) => {
                    if let Some(s) = seqs.iter().find(|s| s.len() < 2 || s.len() > 64) {
                        return Err(err(format!("a sequence of {} values (2 to 64)", s.len())));
                    }
                    let bins =
                        seqs.iter().map(|s| s.iter().map(u128::to_string).collect::<Vec<_>>().join("=>")).collect();
                    let longest = seqs.iter().map(Vec::len).max().unwrap_or(0);
                    (
                        bins,
                        How::Sequences(
                            e.resolve(ports).map_err(err)?,
                            seqs.clone(),
                            Vec::with_capacity(longest),
                            longest,
                        ),
                    )
                }
                Kind::CrossBins(terms) => cross_bins(terms, ports).map_err(err)?,
            };
            let hits = vec![0; bins.len()];
            let guard = c.guard.as_ref().map(|g| g.resolve(ports)).transpose().map_err(err)?;
            points.push(Point { name: c.name, guard, bins, hits, how });
        }
        Ok(Coverage { points })
    }

    /// Samples one cycle's port values (one per port).
    pub fn sample(&mut self, v: &[u128]) {
        for p in &mut self.points {
            if p.guard.as_ref().is_some_and(|g| g.eval(v) == 0) {
                continue;
            }
            match &mut p.how {
                How::Values(e, lo, n) => {
                    let k = e.eval(v).wrapping_sub(*lo);
                    if k < *n as u128 {
                        p.hits[k as usize] += 1;
                    }
                }
                How::Ranges(e, r) => {
                    let x = e.eval(v);
                    for (k, &(a, b)) in r.iter().enumerate() {
                        if (a..=b).contains(&x) {
                            p.hits[k] += 1;
                        }
                    }
                }
                How::Bits(i, w, planes) => {
                    // Bit-sliced counters: plane j holds bit j of every bit's count, so adding
                    // a cycle is a ripple of ANDs and XORs (about two planes on average),
                    // whatever the port's width.
                    let mut x = if *w >= 128 { v[*i] } else { v[*i] & ((1u128 << *w) - 1) };
                    for plane in planes.iter_mut() {
                        if x == 0 {
                            break;
                        }
                        let carry = *plane & x;
                        *plane ^= x;
                        x = carry;
                    }
                }
                How::Lanes(i, lanes, width, values) => {
                    for l in 0..*lanes {
                        let x = R::Lane(*i, l, *width).eval(v);
                        if x < *values {
                            p.hits[(l as u128 * *values + x) as usize] += 1;
                        }
                    }
                }
                How::Transitions(e, pairs, last) => {
                    let b = e.eval(v);
                    if let Some(a) = *last {
                        for (k, &(x, y)) in pairs.iter().enumerate() {
                            if (a, b) == (x, y) {
                                p.hits[k] += 1;
                            }
                        }
                    }
                    *last = Some(b);
                }
                How::Cross(terms, map) => {
                    let combo =
                        terms.iter().enumerate().fold(0usize, |c, (k, t)| c | (usize::from(t.eval(v) != 0) << k));
                    if let Some(Some(bin)) = map.get(combo) {
                        p.hits[*bin] += 1;
                    }
                }
                How::Sequences(e, seqs, last, longest) => {
                    // A window of the longest sequence's length, allocated once.
                    if last.len() == *longest {
                        last.remove(0);
                    }
                    last.push(e.eval(v));
                    for (k, s) in seqs.iter().enumerate() {
                        if last.ends_with(s) {
                            p.hits[k] += 1;
                        }
                    }
                }
                How::CrossBins(terms) => {
                    let mut bin = 0usize;
                    let mut all = true;
                    for (e, ranges) in terms.iter() {
                        let x = e.eval(v);
                        match ranges.iter().position(|&(a, b)| (a..=b).contains(&x)) {
                            Some(k) => bin = bin * ranges.len() + k,
                            None => {
                                all = false;
                                break;
                            }
                        }
                    }
                    if all {
                        p.hits[bin] += 1;
                    }
                }
            }
        }
    }

    /// Percentage of bins hit so far.
    pub fn percent(&self) -> f64 {
        let bins: usize = self.points.iter().map(|p| p.bins.len()).sum();
        let hit: usize = self
            .points
            .iter()
            .map(|p| match &p.how {
                How::Bits(_, _, planes) => planes.iter().fold(0u128, |a, pl| a | pl).count_ones() as usize,
                _ => p.hits.iter().filter(|&&h| h > 0).count(),
            })
            .sum();
        if bins == 0 {
            100.0
        } else {
            100.0 * hit as f64 / bins as f64
        }
    }

    /// Each bin's hits of point `p`.
    fn hits(p: &Point) -> Vec<u64> {
        match &p.how {
            How::Bits(_, w, planes) => {
                (0..*w).map(|k| planes.iter().enumerate().map(|(j, pl)| (((pl >> k) & 1) as u64) << j).sum()).collect()
            }
            _ => p.hits.clone(),
        }
    }

    /// The report so far.
    pub fn report(&self) -> CoverageReport {
        let points: Vec<PointReport> = self
            .points
            .iter()
            .map(|p| {
                let hits = Self::hits(p);
                PointReport {
                    name: p.name.into(),
                    hit: hits.iter().filter(|&&h| h > 0).count(),
                    bins: p.bins.iter().zip(&hits).map(|(b, &h)| BinReport { bin: b.clone(), hits: h }).collect(),
                }
            })
            .collect();
        CoverageReport {
            hit: points.iter().map(|p| p.hit).sum(),
            bins: points.iter().map(|p| p.bins.len()).sum(),
            points,
        }
    }
}

#[cfg(test)]
mod tests;
