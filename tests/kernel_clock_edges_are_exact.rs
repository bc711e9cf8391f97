//! The k-th edge of a clock is exactly floor(k * 1e12 / f) ps, over 10^9 cycles, for the two
//! clocks that matter most (1.4 GHz and 2.4 GHz), and components see exactly those times.

use trnsim_kernel::{Activity, Clock, Component, Ctx, Frequency, SimBuilder, StatsWriter};

fn check_clock(mhz: u64) {
    let clock = Clock::new("c", Frequency::from_mhz(mhz)).unwrap();
    let mut cur = clock.cursor_at(0);
    let (q, f) = (1_000_000_000_000u64 / (mhz * 1_000_000), mhz * 1_000_000);
    let mut prev = cur.time().as_ps();
    for k in 1..=1_000_000_000u64 {
        cur.advance(&clock);
        let t = cur.time().as_ps();
        let gap = t - prev;
        assert!(gap == q || gap == q + 1, "edge {k}: gap {gap}");
        prev = t;
        if k & 0xF_FFFF == 0 {
            assert_eq!(t as u128, (k as u128 * 1_000_000_000_000) / f as u128, "edge {k}");
        }
    }
    let exact = (1_000_000_000u128 * 1_000_000_000_000) / f as u128;
    assert_eq!(cur.time().as_ps() as u128, exact);
    assert_eq!(clock.edge(1_000_000_000).as_ps() as u128, exact);
}

#[test]
fn clock_1400mhz_edges_exact_over_1e9_cycles() {
    check_clock(1400);
}

#[test]
fn clock_2400mhz_edges_exact_over_1e9_cycles() {
    check_clock(2400);
}

struct Stamp {
    wrong: u64,
    ticks: u64,
}

impl Component for Stamp {
    fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
        if cx.now() != cx.clock().edge(cx.cycle().0) {
            self.wrong += 1;
        }
        self.ticks += 1;
        Activity::Busy
    }
    fn report(&self, out: &mut StatsWriter<'_>) {
        out.count("ticks", self.ticks);
        out.count("wrong_edges", self.wrong);
    }
}

#[test]
fn components_tick_on_their_exact_edges_in_two_domains() {
    let mut b = SimBuilder::new();
    let a = b.clock("a", Frequency::from_mhz(1400)).unwrap();
    let c = b.clock("b", Frequency::from_mhz(2400)).unwrap();
    b.add("x", a, Stamp { wrong: 0, ticks: 0 }).unwrap();
    b.add("y", c, Stamp { wrong: 0, ticks: 0 }).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_cycles(a, 70_000).unwrap();
    let r = sim.report();
    assert_eq!(r.int("x", "ticks"), Some(70_000));
    // 70_000 cycles at 1.4 GHz = 50 us exactly; at 2.4 GHz that is 120_000 edges.
    assert_eq!(r.int("y", "ticks"), Some(120_000));
    assert_eq!(r.int("x", "wrong_edges"), Some(0));
    assert_eq!(r.int("y", "wrong_edges"), Some(0));
}
