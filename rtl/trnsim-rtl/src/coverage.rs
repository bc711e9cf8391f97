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
    fn resolve(&self, ports: &[PortInfo]) -> Result<R, String> {
        let idx = |n: &str| {
            ports
                .iter()
                .position(|p| p.name == n)
                .ok_or_else(|| format!("cover point names port {n}, which the block has not"))
        };
        Ok(match self {
            Expr::Port(n) => R::Port(idx(n)?),
            Expr::Pop(n) => R::Pop(idx(n)?),
            Expr::Bit(n, k) => R::Bit(idx(n)?, *k),
            Expr::Lane(n, k, w) => R::Lane(idx(n)?, *k, *w),
            Expr::All(v) => R::All(v.iter().map(|e| e.resolve(ports)).collect::<Result<_, _>>()?),
            Expr::Any(v) => R::Any(v.iter().map(|e| e.resolve(ports)).collect::<Result<_, _>>()?),
            Expr::Eq(e, x) => R::Eq(Box::new(e.resolve(ports)?), *x),
            Expr::Gt(a, b) => R::Gt(Box::new(a.resolve(ports)?), Box::new(b.resolve(ports)?)),
        })
    }
}

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
}

/// One cover point.
#[derive(Clone, Debug)]
pub struct Cover {
    /// Its name in reports.
    pub name: &'static str,
    /// Its bins.
    pub kind: Kind,
}

impl Cover {
    /// One bin per value of `e` in `values`.
    pub fn values(name: &'static str, e: Expr, values: std::ops::RangeInclusive<u128>) -> Cover {
        let bins = values.map(|v| (v.to_string(), v, v)).collect();
        Cover { name, kind: Kind::Ranges(e, bins) }
    }
    /// Named ranges of `e`.
    pub fn ranges(name: &'static str, e: Expr, bins: &[(&str, u128, u128)]) -> Cover {
        Cover { name, kind: Kind::Ranges(e, bins.iter().map(|&(n, a, b)| (n.to_string(), a, b)).collect()) }
    }
    /// Each bit of `port` seen at 1.
    pub fn bits(name: &'static str, port: &'static str) -> Cover {
        Cover { name, kind: Kind::Bits(port) }
    }
    /// Each of `lanes` lanes of `port` (`width` bits each) seen at every value below `values`.
    pub fn lanes(name: &'static str, port: &'static str, lanes: u32, width: u32, values: u128) -> Cover {
        Cover { name, kind: Kind::Lanes(port, lanes, width, values) }
    }
    /// Transitions of `e` between consecutive cycles.
    pub fn transitions(name: &'static str, e: Expr, pairs: &[(u128, u128)]) -> Cover {
        Cover { name, kind: Kind::Transitions(e, pairs.to_vec()) }
    }
    /// The cross of `terms` (each true when non-zero), but the combinations in `ignore`.
    pub fn cross(name: &'static str, terms: Vec<(&'static str, Expr)>, ignore: &[u32]) -> Cover {
        Cover { name, kind: Kind::Cross(terms, ignore.to_vec()) }
    }
}

/// A cover point's sampler and its bins' hit counts.
struct Point {
    name: &'static str,
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

impl Coverage {
    /// The cover points `covers` over a block with ports `ports`; an error names a cover point
    /// that does not fit the ports.
    pub fn new(covers: &[Cover], ports: &[PortInfo]) -> Result<Coverage, String> {
        let mut points = Vec::with_capacity(covers.len());
        for c in covers {
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
            };
            let hits = vec![0; bins.len()];
            points.push(Point { name: c.name, bins, hits, how });
        }
        Ok(Coverage { points })
    }

    /// Samples one cycle's port values (one per port).
    pub fn sample(&mut self, v: &[u128]) {
        for p in &mut self.points {
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
mod tests {
    use super::*;

    fn ports() -> Vec<PortInfo> {
        vec![
            PortInfo { name: "a", width: 4, input: true },
            PortInfo { name: "b", width: 1, input: false },
            PortInfo { name: "c", width: 1, input: false },
        ]
    }

    #[test]
    fn every_kind_of_bin_counts_what_it_says() {
        let covers = vec![
            Cover::ranges("a.range", Expr::port("a"), &[("low", 0, 3), ("high", 4, 15)]),
            Cover::bits("a.bits", "a"),
            Cover::lanes("a.lanes", "a", 2, 2, 4),
            Cover::transitions("b.edges", Expr::port("b"), &[(0, 1), (1, 0)]),
            Cover::cross("bxc", vec![("b", Expr::port("b")), ("c", Expr::port("c"))], &[3]),
        ];
        let mut c = Coverage::new(&covers, &ports()).unwrap();
        c.sample(&[0b0001, 0, 0]);
        c.sample(&[0b0110, 1, 0]);
        c.sample(&[0b1110, 1, 1]); // b & c: ignored
        let r = c.report();
        assert_eq!(r.points[0].hit, 2);
        assert_eq!(r.points[1].hit, 4, "bits 0..3 all seen");
        assert_eq!(r.points[2].hit, 5, "lane0 in {{1,2}}, lane1 in {{0,1,3}}");
        assert_eq!((r.points[3].bins[0].hits, r.points[3].bins[1].hits), (1, 0));
        assert_eq!(r.points[4].bins.len(), 3, "the ignored combination has no bin");
        assert_eq!(r.holes().iter().filter(|h| h.starts_with("b.edges")).count(), 1);
        assert!(r.table(4).contains("holes: "));
        assert!(Coverage::new(&[Cover::bits("x", "nope")], &ports()).err().unwrap().contains("no port nope"));
        let huge = Cover::lanes("huge", "a", 1 << 20, 4, 16);
        assert!(Coverage::new(&[huge], &ports()).err().unwrap().contains("bins"));
    }

    #[test]
    fn merging_runs_adds_hits_by_point_and_bin_name() {
        let covers = vec![Cover::ranges("a.range", Expr::port("a"), &[("low", 0, 3), ("high", 4, 15)])];
        let run = |vals: &[u128]| {
            let mut c = Coverage::new(&covers, &ports()).unwrap();
            for &a in vals {
                c.sample(&[a, 0, 0]);
            }
            c.report()
        };
        let (mut low, high) = (run(&[1, 2]), run(&[9]));
        assert_eq!((low.hit, high.hit), (1, 1));
        low.merge(&high);
        assert_eq!((low.hit, low.bins, low.percent()), (2, 2, 100.0));
        assert_eq!((low.points[0].bins[0].hits, low.points[0].bins[1].hits), (2, 1));
        // A point only the other run has is kept, with its hits.
        let other = vec![Cover::bits("b.bits", "b")];
        let mut c = Coverage::new(&other, &ports()).unwrap();
        c.sample(&[0, 1, 0]);
        low.merge(&c.report());
        assert_eq!((low.points.len(), low.hit, low.bins), (2, 3, 3));
    }

    #[test]
    fn any_is_true_when_some_term_is() {
        // "some lane of a at 3, or c": a term per lane.
        let any = Expr::Any(vec![
            Expr::Eq(Box::new(Expr::Lane("a", 0, 2)), 3),
            Expr::Eq(Box::new(Expr::Lane("a", 1, 2)), 3),
            Expr::port("c"),
        ]);
        let mut c = Coverage::new(&[Cover::values("any", any, 0..=1)], &ports()).unwrap();
        for (v, hit) in [([0b0110, 0, 0], 0), ([0b1100, 0, 0], 1), ([0, 0, 1], 1), ([0b0011, 1, 0], 1)] {
            let before = c.report().points[0].bins[1].hits;
            c.sample(&v);
            assert_eq!(c.report().points[0].bins[1].hits - before, hit, "{v:?}");
        }
    }

    #[test]
    fn gt_compares_two_fields() {
        // "lane 1 of a above lane 0".
        let gt = Expr::Gt(Box::new(Expr::Lane("a", 1, 2)), Box::new(Expr::Lane("a", 0, 2)));
        let mut c = Coverage::new(&[Cover::values("gt", gt, 0..=1)], &ports()).unwrap();
        for (v, hit) in [([0b0110, 0, 0], 0), ([0b1001, 0, 0], 1), ([0b1111, 0, 0], 0), ([0b0100, 0, 0], 1)] {
            let before = c.report().points[0].bins[1].hits;
            c.sample(&v);
            assert_eq!(c.report().points[0].bins[1].hits - before, hit, "{v:?}");
        }
    }
}
