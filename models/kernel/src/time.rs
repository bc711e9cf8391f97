//! Simulated time, durations, frequencies, cycles and clock domains.
//!
//! Time is an integer count of picoseconds ([`Time`]); durations are a separate type ([`Dur`]);
//! cycles of a clock ([`Cycles`]) are a third type that converts to time only through the
//! [`Clock`] that owns them, so nanoseconds and cycles cannot be mixed silently.
//!
//! A clock of frequency `f` Hz has its k-th rising edge at `floor(k * 1e12 / f)` ps, computed
//! exactly (integer arithmetic, no accumulated rounding), so 1.4 GHz and 2.4 GHz never drift.
//! Only rising edges are modelled.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;

/// Picoseconds in one second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// A point in simulated time, in picoseconds since the start of the run (range ~213 days).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Time(u64);

impl Time {
    /// The start of every run.
    pub const ZERO: Time = Time(0);
    /// "Never": later than every reachable time.
    pub const NEVER: Time = Time(u64::MAX);
    /// A time from picoseconds.
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    /// Picoseconds since the start.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Nanoseconds since the start, as a float (for reports only, never for scheduling).
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    /// The duration since `earlier`, saturating at zero.
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
    /// True if this is [`Time::NEVER`].
    pub fn is_never(self) -> bool {
        self.0 == u64::MAX
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_never() {
            return write!(f, "never");
        }
        fmt::Display::fmt(&Dur(self.0), f)
    }
}

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Dur(u64);

impl Dur {
    /// Zero length.
    pub const ZERO: Dur = Dur(0);
    /// The longest duration (stands for "unbounded", e.g. the lookahead of an uncut system).
    pub const MAX: Dur = Dur(u64::MAX);
    /// A duration of `ps` picoseconds.
    pub const fn from_ps(ps: u64) -> Dur {
        Dur(ps)
    }
    /// A duration of `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns * 1_000)
    }
    /// A duration of `us` microseconds.
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * 1_000_000)
    }
    /// A duration of `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * 1_000_000_000)
    }
    /// Length in picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Length in nanoseconds, as a float (for reports only).
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    /// Length in seconds, as a float (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
}

impl fmt::Display for Dur {
    /// Prints with the largest unit that keeps the value exact: "1.25ns", "3us", "714ps".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        for (unit, scale) in [("s", PS_PER_S), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000)] {
            if ps >= scale {
                let (whole, frac) = (ps / scale, ps % scale);
                if frac == 0 {
                    return write!(f, "{whole}{unit}");
                }
                let digits = scale.ilog10() as usize;
                let s = format!("{frac:0digits$}");
                return write!(f, "{whole}.{}{unit}", s.trim_end_matches('0'));
            }
        }
        write!(f, "{ps}ps")
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        *self = *self + d;
    }
}

impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}

impl Sub for Time {
    type Output = Dur;
    /// `a - b` is the duration from `b` to `a`, saturating at zero.
    fn sub(self, b: Time) -> Dur {
        self.since(b)
    }
}

/// A count of cycles of some clock. It converts to time only through a [`Clock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Cycles(pub u64);

impl fmt::Display for Cycles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cycles", self.0)
    }
}

/// A clock frequency in hertz (integer, so 1.4 GHz is exactly 1_400_000_000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Frequency(u64);

impl Frequency {
    /// A frequency of `hz` hertz. Zero is rejected by [`Clock::new`].
    pub const fn from_hz(hz: u64) -> Frequency {
        Frequency(hz)
    }
    /// A frequency of `mhz` megahertz.
    pub const fn from_mhz(mhz: u64) -> Frequency {
        Frequency(mhz * 1_000_000)
    }
    /// Hertz.
    pub const fn as_hz(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Frequency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hz = self.0;
        for (unit, scale) in [("GHz", 1_000_000_000u64), ("MHz", 1_000_000), ("kHz", 1_000)] {
            if hz >= scale {
                let (whole, frac) = (hz / scale, hz % scale);
                if frac == 0 {
                    return write!(f, "{whole}{unit}");
                }
                let digits = scale.ilog10() as usize;
                let s = format!("{frac:0digits$}");
                return write!(f, "{whole}.{}{unit}", s.trim_end_matches('0'));
            }
        }
        write!(f, "{hz}Hz")
    }
}

/// Why a quantity string did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    /// The text that was given.
    pub input: String,
    /// What kind of quantity was expected, with examples.
    pub expected: &'static str,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid quantity {:?}: expected {}", self.input, self.expected)
    }
}

impl std::error::Error for QuantityError {}

/// Parses "<decimal><unit>" exactly: returns `value * scale` as an integer, or None if the
/// decimal has more fractional digits than the scale can hold or the product overflows.
fn parse_scaled(num: &str, scale: u64) -> Option<u64> {
    let (whole, frac) = match num.split_once('.') {
        Some((w, f)) => (w, f),
        None => (num, ""),
    };
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok(whole) || !digits_ok(frac) {
        return None;
    }
    let w: u64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let mut value = w.checked_mul(scale)?;
    let mut place = scale;
    for b in frac.bytes() {
        place /= 10;
        let d = u64::from(b - b'0');
        if place == 0 {
            if d != 0 {
                return None; // finer than the base unit
            }
            continue;
        }
        value = value.checked_add(d * place)?;
    }
    Some(value)
}

/// Splits "2.4GHz" / "2.4 GHz" into ("2.4", "GHz").
fn split_unit(s: &str) -> (&str, &str) {
    let s = s.trim();
    let idx = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    (s[..idx].trim(), s[idx..].trim())
}

impl FromStr for Frequency {
    type Err = QuantityError;
    /// Parses "2.4GHz", "1400MHz", "800 kHz", "100Hz" (exact integer hertz, non-zero).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || QuantityError {
            input: s.to_string(),
            expected: "a non-zero frequency such as \"2.4GHz\", \"1400MHz\" or \"100kHz\"",
        };
        let (num, unit) = split_unit(s);
        let scale = match unit.to_ascii_lowercase().as_str() {
            "ghz" => 1_000_000_000,
            "mhz" => 1_000_000,
            "khz" => 1_000,
            "hz" => 1,
            _ => return Err(err()),
        };
        match parse_scaled(num, scale) {
            Some(hz) if hz > 0 => Ok(Frequency(hz)),
            _ => Err(err()),
        }
    }
}

impl FromStr for Dur {
    type Err = QuantityError;
    /// Parses "150ns", "1.5us", "714ps", "2ms", "1s" (exact integer picoseconds).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || QuantityError {
            input: s.to_string(),
            expected: "a duration such as \"150ns\", \"1.5us\", \"714ps\", \"2ms\" or \"1s\"",
        };
        let (num, unit) = split_unit(s);
        let scale = match unit {
            "ps" => 1,
            "ns" => 1_000,
            "us" | "µs" => 1_000_000,
            "ms" => 1_000_000_000,
            "s" => PS_PER_S,
            _ => return Err(err()),
        };
        parse_scaled(num, scale).map(Dur).ok_or_else(err)
    }
}

/// Identifies a clock domain within one simulation (dense index, in declaration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClockId(pub(crate) u32);

impl ClockId {
    /// The first clock declared in a simulation.
    pub const fn first() -> ClockId {
        ClockId(0)
    }
    /// The clock with dense index `i` (clocks are numbered in declaration order).
    pub const fn from_index(i: usize) -> ClockId {
        ClockId(i as u32)
    }
    /// The dense index of this clock.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A clock domain: a name and a frequency. Its k-th rising edge is at `floor(k * 1e12 / f)` ps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    name: String,
    freq: Frequency,
    /// Whole picoseconds per period: `1e12 / f`.
    q: u64,
    /// Remainder `1e12 mod f`, carried exactly by [`EdgeCursor`].
    r: u64,
}

impl Clock {
    /// A clock called `name` at `freq`. Frequencies above 500 GHz are rejected because a period
    /// under 2 ps cannot keep cycle-exact link latencies (see `docs/architecture.md`).
    pub fn new(name: impl Into<String>, freq: Frequency) -> Result<Clock, QuantityError> {
        if freq.0 == 0 || freq.0 > 500_000_000_000 {
            return Err(QuantityError { input: freq.to_string(), expected: "a frequency between 1Hz and 500GHz" });
        }
        Ok(Clock { name: name.into(), freq, q: PS_PER_S / freq.0, r: PS_PER_S % freq.0 })
    }
    /// The clock's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The clock's frequency.
    pub fn frequency(&self) -> Frequency {
        self.freq
    }
    /// Time of rising edge `k`: exactly `floor(k * 1e12 / f)`.
    pub fn edge(&self, k: u64) -> Time {
        let t = (k as u128 * PS_PER_S as u128) / self.freq.0 as u128;
        Time(u64::try_from(t).unwrap_or(u64::MAX))
    }
    /// Index of the first edge at or after `t`: `ceil(t * f / 1e12)`.
    pub fn edge_index_at_or_after(&self, t: Time) -> u64 {
        let num = t.0 as u128 * self.freq.0 as u128;
        let k = num.div_ceil(PS_PER_S as u128);
        u64::try_from(k).unwrap_or(u64::MAX)
    }
    /// The length of `n` cycles, rounded down to whole picoseconds (`floor(n * 1e12 / f)`).
    /// Between any two edges `n` apart the true distance is this or one picosecond more.
    pub fn cycles_to_dur(&self, n: Cycles) -> Dur {
        Dur(self.edge(n.0).0)
    }
    /// Whole cycles in `d`, rounded down.
    pub fn dur_to_cycles(&self, d: Dur) -> Cycles {
        Cycles(((d.0 as u128 * self.freq.0 as u128) / PS_PER_S as u128) as u64)
    }
    /// A cursor positioned at edge `k`, for stepping edge by edge without division.
    pub fn cursor_at(&self, k: u64) -> EdgeCursor {
        let acc = ((k as u128 * self.r as u128) % self.freq.0 as u128) as u64;
        EdgeCursor { k, t: self.edge(k), acc }
    }
}

/// Steps through a clock's edges exactly with one add and one compare per edge.
///
/// Invariant: `t == clock.edge(k)` and `acc == (k * r) mod f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeCursor {
    k: u64,
    t: Time,
    acc: u64,
}

impl EdgeCursor {
    /// The edge index.
    pub fn index(&self) -> u64 {
        self.k
    }
    /// The edge time.
    pub fn time(&self) -> Time {
        self.t
    }
    /// Moves to the next edge of `clock` (the clock this cursor was made from).
    #[inline]
    pub fn advance(&mut self, clock: &Clock) {
        self.k += 1;
        self.t.0 += clock.q;
        self.acc += clock.r;
        if self.acc >= clock.freq.0 {
            self.acc -= clock.freq.0;
            self.t.0 += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quantities_exactly() {
        assert_eq!("2.4GHz".parse::<Frequency>().unwrap().as_hz(), 2_400_000_000);
        assert_eq!("1400 MHz".parse::<Frequency>().unwrap().as_hz(), 1_400_000_000);
        assert_eq!("150ns".parse::<Dur>().unwrap().as_ps(), 150_000);
        assert_eq!("1.5us".parse::<Dur>().unwrap().as_ps(), 1_500_000);
        assert_eq!("0.001ns".parse::<Dur>().unwrap().as_ps(), 1);
        for bad in ["", "GHz", "2.4", "2.4 GJz", "0Hz", "1.2.3GHz", "-1GHz"] {
            assert!(bad.parse::<Frequency>().is_err(), "{bad}");
        }
        for bad in ["0.0001ns", "5", "ns", "1e3ns"] {
            assert!(bad.parse::<Dur>().is_err(), "{bad}");
        }
    }

    #[test]
    fn displays_round_trip() {
        for s in ["1.25ns", "3us", "714ps", "2s", "1.000001ms"] {
            assert_eq!(s.parse::<Dur>().unwrap().to_string(), s);
        }
        assert_eq!(Frequency::from_hz(1_400_000_000).to_string(), "1.4GHz");
    }

    #[test]
    fn edges_follow_the_floor_formula() {
        let c = Clock::new("c", Frequency::from_mhz(1400)).unwrap();
        assert_eq!(c.edge(1).as_ps(), 714);
        assert_eq!(c.edge(7).as_ps(), 5000);
        let mut cur = c.cursor_at(0);
        for k in 0..100_000u64 {
            assert_eq!(cur.time(), c.edge(k));
            assert_eq!(c.edge_index_at_or_after(cur.time()), k);
            cur.advance(&c);
        }
        let start = c.cursor_at(123_456_789);
        assert_eq!(start.time(), c.edge(123_456_789));
    }

    #[test]
    fn edge_at_or_after_is_the_first_edge_not_before() {
        let c = Clock::new("c", Frequency::from_mhz(2400)).unwrap();
        for t in 0..10_000u64 {
            let k = c.edge_index_at_or_after(Time::from_ps(t));
            assert!(c.edge(k).as_ps() >= t);
            assert!(k == 0 || c.edge(k - 1).as_ps() < t);
        }
    }
}

/// Serde helpers that write quantities as text with their unit ("2.4GHz", "1300ns"), for data
/// files people read and edit: `#[serde(with = "trnsim_kernel::time::text_freq")]`.
pub mod text_freq {
    use super::Frequency;
    use serde::{Deserialize, Deserializer, Serializer};
    /// Writes "2.4GHz".
    pub fn serialize<S: Serializer>(f: &Frequency, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&f.to_string())
    }
    /// Reads "2.4GHz", "1400MHz", ...; a bad quantity is an error naming what is expected.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Frequency, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// [`text_freq`] for durations: "1300ns", "1.5us".
pub mod text_dur {
    use super::Dur;
    use serde::{Deserialize, Deserializer, Serializer};
    /// Writes "1300ns" (the largest exact unit).
    pub fn serialize<S: Serializer>(d: &Dur, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&d.to_string())
    }
    /// Reads "150ns", "1.5us", ...
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}
