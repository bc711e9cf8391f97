//! Statistics: counters, histograms and time-weighted averages, reported with units in their
//! names (`latency_ns_p99`, `bytes`, `occupancy_msgs_mean`), printed as a table or JSON.
//!
//! Components keep their own statistics as plain fields (an increment costs what an integer
//! increment costs) and write them out once, at report time, through a [`StatsWriter`]. The
//! kernel keeps per-link statistics itself.

use crate::time::Time;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Sub-buckets per power of two: relative bucket width is 1/16 (6.25 %).
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;

/// A log-linear histogram of `u64` samples (HDR-style): exact below 32, then 16 buckets per
/// power of two, so percentiles are within 6.25 % of the true value. Also keeps the exact
/// count, sum, min and max. Recording never allocates once the largest bucket has been seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    pub(crate) buckets: Vec<u64>,
    pub(crate) count: u64,
    pub(crate) sum: u128,
    pub(crate) min: u64,
    pub(crate) max: u64,
}

fn bucket_of(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS + 1
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) & (SUB - 1);
    ((u64::from(shift) + 1) * SUB + sub) as usize
}

/// The smallest value that falls in bucket `b`.
fn bucket_low(b: usize) -> u64 {
    let b = b as u64;
    if b < 2 * SUB {
        return b;
    }
    let shift = b / SUB - 1;
    let sub = b % SUB;
    (SUB + sub) << shift
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        Histogram::default()
    }
    /// Adds one sample.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = bucket_of(v);
        if b >= self.buckets.len() {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += u128::from(v);
    }
    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Mean, or 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }
    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        self.min
    }
    /// Largest sample (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }
    /// The `q`-quantile (0..=1): the midpoint of the bucket holding it, clamped to [min, max].
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        if rank >= self.count {
            return self.max as f64;
        }
        let mut seen = 0;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let lo = bucket_low(b) as f64;
                let hi = bucket_low(b + 1) as f64;
                let mid = if hi - lo <= 1.0 { lo } else { (lo + hi - 1.0) / 2.0 };
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }
    /// Merges another histogram into this one.
    pub fn merge(&mut self, o: &Histogram) {
        if o.count == 0 {
            return;
        }
        if self.buckets.len() < o.buckets.len() {
            self.buckets.resize(o.buckets.len(), 0);
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        self.min = if self.count == 0 { o.min } else { self.min.min(o.min) };
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.sum += o.sum;
    }
}

/// A time-weighted average of a level (e.g. buffer occupancy), updated at each change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeWeighted {
    pub(crate) level: u64,
    pub(crate) since: Time,
    pub(crate) area: u128,
    pub(crate) max: u64,
}

impl TimeWeighted {
    /// The level changes to `level` at `now` (now must not go backwards). Several changes at
    /// one time count as one: only levels held for a positive duration (or the last one) count
    /// towards the maximum, so the order of same-time changes cannot matter.
    #[inline]
    pub fn set(&mut self, now: Time, level: u64) {
        if now > self.since {
            self.area += u128::from(self.level) * u128::from(now.since(self.since).as_ps());
            self.max = self.max.max(self.level);
            self.since = now;
        }
        self.level = level;
    }
    /// Mean level over `[0, end)`.
    pub fn mean(&self, end: Time) -> f64 {
        if end.as_ps() == 0 {
            return self.level as f64;
        }
        let area = self.area + u128::from(self.level) * u128::from(end.since(self.since).as_ps());
        area as f64 / end.as_ps() as f64
    }
    /// Highest level held (including the current one).
    pub fn max(&self) -> u64 {
        self.max.max(self.level)
    }
    /// Current level.
    pub fn level(&self) -> u64 {
        self.level
    }
}

/// A reported value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StatValue {
    /// An exact count.
    Int(u64),
    /// A derived or averaged quantity.
    Float(f64),
}

impl StatValue {
    /// The value as a float (counts convert exactly up to 2^53).
    pub fn as_f64(&self) -> f64 {
        match *self {
            StatValue::Int(v) => v as f64,
            StatValue::Float(v) => v,
        }
    }
}

impl std::fmt::Display for StatValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatValue::Int(v) => write!(f, "{v}"),
            StatValue::Float(v) if v.fract() == 0.0 && v.abs() < 1e15 => write!(f, "{v:.1}"),
            StatValue::Float(v) if v.abs() >= 1e6 || (v.abs() < 1e-3 && *v != 0.0) => {
                write!(f, "{v:.4e}")
            }
            StatValue::Float(v) => write!(f, "{v:.4}"),
        }
    }
}

/// All statistics of a run, in a deterministic order: per owner (component or link path), per
/// name. Names carry their unit (`bytes`, `latency_ns_p99`, `occupancy_msgs_mean`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StatsReport {
    /// owner path -> stat name -> value.
    pub owners: BTreeMap<String, BTreeMap<String, StatValue>>,
}

impl StatsReport {
    /// Looks up one value.
    pub fn get(&self, owner: &str, name: &str) -> Option<&StatValue> {
        self.owners.get(owner)?.get(name)
    }
    /// Looks up an integer value.
    pub fn int(&self, owner: &str, name: &str) -> Option<u64> {
        match self.get(owner, name)? {
            StatValue::Int(v) => Some(*v),
            StatValue::Float(_) => None,
        }
    }
    /// Renders the report as an aligned text table (one row per statistic), owners and names
    /// in natural order (`ch2` before `ch10`).
    pub fn to_table(&self) -> String {
        let w_owner = self.owners.keys().map(|k| k.len()).max().unwrap_or(5).max(5);
        let w_name = self.owners.values().flat_map(|m| m.keys()).map(|k| k.len()).max().unwrap_or(4).max(4);
        let mut s = String::new();
        let _ = writeln!(s, "{:<w_owner$}  {:<w_name$}  value", "owner", "stat");
        let mut owners: Vec<_> = self.owners.iter().collect();
        owners.sort_by(|a, b| natural_cmp(a.0, b.0));
        for (owner, stats) in owners {
            let mut stats: Vec<_> = stats.iter().collect();
            stats.sort_by(|a, b| natural_cmp(a.0, b.0));
            for (name, v) in stats {
                let _ = writeln!(s, "{owner:<w_owner$}  {name:<w_name$}  {v}");
            }
        }
        s
    }
}

/// Natural order of names: runs of digits compare as numbers (`ch2` < `ch10`), the rest
/// byte-wise; equal-valued numbers with more leading zeros sort later, so the order is total.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (n, m) = (run(x), run(y));
                let trim = |s: &[u8]| -> usize { s.iter().take_while(|c| **c == b'0').count() };
                let (dx, dy) = (&x[trim(&x[..n]).min(n)..n], &y[trim(&y[..m]).min(m)..m]);
                let ord = dx.len().cmp(&dy.len()).then_with(|| dx.cmp(dy)).then_with(|| n.cmp(&m));
                if ord != Ordering::Equal {
                    return ord;
                }
                (x, y) = (&x[n..], &y[m..]);
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// Where a component writes its statistics at report time.
pub struct StatsWriter<'a> {
    owner: &'a str,
    dest: Dest<'a>,
    end: Time,
    wrote: bool,
}

/// Where a [`StatsWriter`]'s values go.
enum Dest<'a> {
    /// Nowhere: a probe, which only notes whether anything was written (see
    /// [`StatsWriter::probe`]).
    Probe,
    /// The report, before the first value (the owner gets an entry only if it writes one).
    Report(&'a mut StatsReport),
    /// The owner's map in the report, found once at the first value.
    Owner(&'a mut BTreeMap<String, StatValue>),
}

impl<'a> StatsWriter<'a> {
    /// A writer of `owner`'s statistics into `report`, taken at simulated time `end`.
    pub(crate) fn new(owner: &'a str, report: &'a mut StatsReport, end: Time) -> StatsWriter<'a> {
        StatsWriter { owner, dest: Dest::Report(report), end, wrote: false }
    }

    /// A writer that keeps nothing and only notes whether the component wrote anything (a
    /// report that leaves an owner out still counts it, without building its statistics).
    pub(crate) fn probe(owner: &'a str, end: Time) -> StatsWriter<'a> {
        StatsWriter { owner, dest: Dest::Probe, end, wrote: false }
    }

    /// Whether anything was written through this writer.
    pub(crate) fn wrote(&self) -> bool {
        self.wrote
    }

    /// True if what is written is thrown away (the report leaves this owner out and only asks
    /// whether it has statistics): a component with many may stop after writing one.
    pub fn is_probe(&self) -> bool {
        matches!(self.dest, Dest::Probe)
    }

    /// The simulated time at which the report is taken (for rates).
    pub fn end_time(&self) -> Time {
        self.end
    }
    #[inline]
    fn put(&mut self, name: impl FnOnce() -> String, v: StatValue) {
        self.wrote = true;
        if matches!(self.dest, Dest::Report(_)) {
            // The first value: the owner's map is found (or made) once, not per value.
            if let Dest::Report(report) = std::mem::replace(&mut self.dest, Dest::Probe) {
                self.dest = Dest::Owner(report.owners.entry(self.owner.to_string()).or_default());
            }
        }
        if let Dest::Owner(m) = &mut self.dest {
            m.insert(name(), v);
        }
    }
    /// An exact count; `name` should say the unit (e.g. "hops", "bytes").
    pub fn count(&mut self, name: &str, v: u64) {
        self.put(|| name.to_string(), StatValue::Int(v));
    }
    /// A derived value; `name` should say the unit (e.g. "bytes_per_s").
    pub fn value(&mut self, name: &str, v: f64) {
        self.put(|| name.to_string(), StatValue::Float(v));
    }
    /// A histogram as `{name}_{unit}_{count,mean,p50,p99,max}`; samples are multiplied by
    /// `scale` first (e.g. 1e-3 to report picosecond samples in ns). Without samples, only the
    /// count (0) is written.
    pub fn histogram(&mut self, name: &str, unit: &str, h: &Histogram, scale: f64) {
        self.put(|| [name, "_", unit, "_count"].concat(), StatValue::Int(h.count()));
        if self.is_probe() {
            return;
        }
        if h.count() == 0 {
            // No samples: no mean, quantile or maximum to report (a zero would read as one).
            return;
        }
        self.put(|| [name, "_", unit, "_mean"].concat(), StatValue::Float(h.mean() * scale));
        self.put(|| [name, "_", unit, "_p50"].concat(), StatValue::Float(h.quantile(0.5) * scale));
        self.put(|| [name, "_", unit, "_p99"].concat(), StatValue::Float(h.quantile(0.99) * scale));
        self.put(|| [name, "_", unit, "_max"].concat(), StatValue::Float(h.max() as f64 * scale));
    }
    /// A time-weighted level as `{name}_{unit}_{mean,max}`.
    pub fn level(&mut self, name: &str, unit: &str, l: &TimeWeighted) {
        let end = self.end;
        self.put(|| [name, "_", unit, "_mean"].concat(), StatValue::Float(l.mean(end)));
        self.put(|| [name, "_", unit, "_max"].concat(), StatValue::Int(l.max()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_puts_ch2_before_ch10() {
        let mut v = vec!["ch10", "ch2", "ch1", "a", "ch02", "ch10x", "b9", "b10"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["a", "b9", "b10", "ch1", "ch2", "ch02", "ch10", "ch10x"]);
    }

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut prev = 0;
        for v in 0..100_000u64 {
            let b = bucket_of(v);
            assert!(b >= prev);
            prev = b;
            assert!(bucket_low(b) <= v && v < bucket_low(b + 1), "v={v} b={b}");
        }
        assert!(bucket_of(u64::MAX) < 64 * SUB as usize);
    }

    #[test]
    fn quantiles_are_within_bucket_error() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        assert_eq!(h.count(), 10_000);
        assert!((h.mean() - 5000.5).abs() < 1e-9);
        let p50 = h.quantile(0.5);
        let p99 = h.quantile(0.99);
        assert!((p50 - 5000.0).abs() / 5000.0 < 0.0625, "{p50}");
        assert!((p99 - 9900.0).abs() / 9900.0 < 0.0625, "{p99}");
        assert_eq!(h.quantile(1.0), 10_000.0);
        let mut small = Histogram::new();
        small.record(7);
        assert_eq!(small.quantile(0.5), 7.0);
    }

    #[test]
    fn time_weighted_mean() {
        let mut l = TimeWeighted::default();
        l.set(Time::from_ps(10), 2);
        l.set(Time::from_ps(20), 0);
        assert!((l.mean(Time::from_ps(40)) - 0.5).abs() < 1e-12);
        assert_eq!(l.max(), 2);
    }
}
