//! The tensor engine's warm-up throttle at run time ([`crate::spec::engines::Throttle`] is its
//! description): the limit each matmul issues under and how far it stretches the matmul's
//! interval, in the engine's cycles, with integer arithmetic only (a run's figures do not
//! depend on the host's floating point).
//!
//! The array's busy spans of the last window are kept, merged when they touch, so a stream of
//! back-to-back matmuls holds one span; the utilization of the window ending at an issue is
//! exact. Only windows ending at an issue need checking: moving a window's end through an idle
//! gap only lowers its busy time, and through a busy span never does, so the least busy window
//! since the previous issue is the one ending now. Only windows that begin after the throttle
//! engaged count (the idle time before work began is what engaged it).

use crate::spec::engines::Throttle;
use std::collections::VecDeque;
use trnsim_kernel::Frequency;

/// The limit in basis points of the full rate (10,000 = full).
const FULL: u64 = 10_000;

/// One tensor engine's throttle state.
#[derive(Clone, Debug)]
pub struct ThrottleState {
    /// The limit at the ramp's start, in basis points.
    start: u64,
    /// The ramp and the window, in the engine's cycles (at least 1).
    ramp: u64,
    window: u64,
    /// The cycle the current ramp began (None before the first matmul).
    engaged_at: Option<u64>,
    /// The array's busy spans [start, end) that end within the last window, oldest first.
    busy: VecDeque<(u64, u64)>,
    /// Cycles the throttle added to matmul intervals.
    pub added_cycles: u64,
}

/// `d` in cycles of `clock`, rounded up, at least 1.
fn cycles_of(d: trnsim_kernel::Dur, clock: Frequency) -> u64 {
    let c = (u128::from(d.as_ps()) * u128::from(clock.as_hz())).div_ceil(1_000_000_000_000);
    u64::try_from(c).unwrap_or(u64::MAX).max(1)
}

impl ThrottleState {
    /// The state of `t` on an engine clocked at `clock`, None when it is disabled.
    pub fn new(t: &Throttle, clock: Frequency) -> Option<ThrottleState> {
        t.enabled.then(|| ThrottleState {
            start: u64::from(t.start_percent.clamp(1, 100)) * 100,
            ramp: cycles_of(t.ramp, clock),
            window: cycles_of(t.window, clock),
            engaged_at: None,
            busy: VecDeque::with_capacity(4),
            added_cycles: 0,
        })
    }

    /// The array's busy cycles in [from, now).
    fn busy_since(&self, from: u64, now: u64) -> u64 {
        self.busy.iter().map(|&(s, e)| e.min(now).saturating_sub(s.max(from))).sum()
    }

    /// The limit (basis points) a matmul issuing at `now` runs under, re-engaging the throttle
    /// when the window before `now` was busy less than half the time.
    pub fn limit_at(&mut self, now: u64) -> u64 {
        let from = now.saturating_sub(self.window);
        while self.busy.front().is_some_and(|&(_, e)| e <= from) {
            self.busy.pop_front();
        }
        // Only whole windows since it engaged count: the idle time before work began is what
        // engaged it, not a reason to start the ramp again.
        let whole = self.engaged_at.is_some_and(|e| now - e >= self.window);
        if self.engaged_at.is_none() || (whole && 2 * self.busy_since(from, now) < self.window) {
            self.engaged_at = Some(now);
        }
        let elapsed = now - self.engaged_at.unwrap_or(now);
        if elapsed >= self.ramp {
            return FULL;
        }
        self.start + (FULL - self.start) * elapsed / self.ramp
    }

    /// A matmul of `ii` cycles (at the full rate) issuing at `now`: the cycles it takes under
    /// the ramp (the least d whose work at the rising limit reaches `ii` full-rate cycles) and
    /// the limit (basis points) it issued under. Records its busy span.
    pub fn matmul(&mut self, now: u64, ii: u64) -> (u64, u64) {
        let limit = self.limit_at(now);
        let stretched = if limit >= FULL { ii } else { self.ramped(now, ii) };
        self.added_cycles += stretched - ii;
        let end = now.saturating_add(stretched);
        match self.busy.back_mut() {
            Some(last) if last.1 >= now => last.1 = last.1.max(end),
            _ => self.busy.push_back((now, end)),
        }
        (stretched, limit)
    }

    /// Cycles `ii` full-rate cycles of work take from `now` on the ramp. With x0 the cycles
    /// since it engaged, R the ramp, s the start limit and B full, the work of d cycles
    /// (d within the ramp) times 2R is 2(sR + (B - s)x0)d + (B - s)d^2 basis-point cycles.
    fn ramped(&self, now: u64, ii: u64) -> u64 {
        let (r, s, b) = (u128::from(self.ramp), u128::from(self.start), u128::from(FULL));
        let x0 = u128::from(now - self.engaged_at.unwrap_or(now)).min(r);
        let (qa, qb) = (b - s, 2 * (s * r + (b - s) * x0));
        let work2r = |d: u128| qb * d + qa * d * d;
        let need = 2 * r * u128::from(ii) * b;
        let left = r - x0;
        let d = if work2r(left) < need {
            // The ramp ends first; the rest runs at the full rate.
            left + (need - work2r(left)).div_ceil(2 * r * b)
        } else {
            // The least d with qa d^2 + qb d >= need (qa > 0: the limit is below full here).
            let mut d = ((qb * qb + 4 * qa * need).isqrt() - qb) / (2 * qa);
            while work2r(d) < need {
                d += 1;
            }
            while d > 0 && work2r(d - 1) >= need {
                d -= 1;
            }
            d
        };
        u64::try_from(d).unwrap_or(u64::MAX).max(ii)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_kernel::Dur;

    fn documented() -> ThrottleState {
        let t = Throttle { enabled: true, start_percent: 50, ramp: Dur::from_us(3), window: Dur::from_us(3) };
        ThrottleState::new(&t, Frequency::from_hz(2_400_000_000)).unwrap()
    }

    #[test]
    fn a_first_matmul_runs_at_the_start_limit_and_the_ramp_reaches_full_after_it() {
        let mut t = documented();
        assert_eq!((t.ramp, t.window), (7200, 7200));
        // Half rate at first, rising through the matmul: 512 full-rate cycles take 960, the
        // least d with 0.5 d + d^2 / (2 x 2 x 7200) >= 512 (the rate 0.5 + 0.5 t / 7200).
        assert_eq!(t.matmul(0, 512), (960, 5_000));
        // Back to back: each issues where the previous stretched interval ends.
        let mut now = 1024;
        let mut last = (0, 0);
        while now < 12_000 {
            last = t.matmul(now, 512);
            now += last.0;
        }
        assert_eq!(last, (512, FULL), "full rate once the ramp is over");
        assert_eq!(t.busy.len(), 1, "back-to-back spans merge");
        // A limit mid-ramp: 3,600 cycles in, 75 %.
        let mut u = documented();
        u.matmul(0, 3600);
        assert_eq!(u.limit_at(3600), 7_500);
    }

    #[test]
    fn an_idle_gap_of_more_than_half_the_window_re_engages_it_and_a_short_one_does_not() {
        let mut t = documented();
        let mut now = 0;
        while now < 20_000 {
            now += t.matmul(now, 512).0;
        }
        // Idle 3,000 cycles (< 3,600, half the window): still full.
        now += 3000;
        assert_eq!(t.matmul(now, 512).1, FULL);
        now += 512 + 3700;
        assert_eq!(t.matmul(now, 512).1, 5_000, "idle 3,700 of the last 7,200 cycles");
    }

    #[test]
    fn disabled_is_no_state() {
        let t = Throttle { enabled: false, start_percent: 50, ramp: Dur::from_us(3), window: Dur::from_us(3) };
        assert!(ThrottleState::new(&t, Frequency::from_hz(1)).is_none());
    }
}
