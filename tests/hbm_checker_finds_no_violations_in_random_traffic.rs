//! The controller never breaks JEDEC timing: a million random requests (2 reads : 1 write) per
//! preset, replayed live through the independent checker, give zero violations; other
//! controller policies (closed page, all-bank refresh, FCFS) are covered with fewer requests.

use trnsim_benchmarks::memory::{self, HbmSpec};
use trnsim_kernel::{Dur, TickOrder};
use trnsim_mem::hbm::checker::Checker;
use trnsim_mem::hbm::presets;
use trnsim_mem::hbm::traffic::{GenParams, Pattern};
use trnsim_mem::hbm::{HbmStack, PagePolicy};

fn check(spec: &HbmSpec, pattern: Pattern, n: u64) -> (u64, u64) {
    let src = memory::synthetic(spec, pattern, n, 42).unwrap();
    let (org, t) = (spec.cfg.org.clone(), spec.cfg.timing.clone());
    let mut out = memory::run(spec, vec![src], None, &mut |_| Some(Box::new(Checker::new(&org, &t)))).unwrap();
    let end = out.sim.clock(trnsim_kernel::ClockId::first()).edge_index_at_or_after(out.sim.now());
    let sink = out.sim.component_mut::<HbmStack>(out.stacks[0]).unwrap().take_command_sink().unwrap();
    let any: Box<dyn std::any::Any> = sink;
    let mut c = any.downcast::<Checker>().unwrap();
    c.finish(end);
    if let Some(v) = c.violations().first() {
        panic!("{}: {} violations, first: {v}", spec.name, c.violation_count());
    }
    let reqs = out.result.headline.iter().find(|h| h.0 == "requests").unwrap().1 as u64;
    assert_eq!(reqs, n, "{}: every request completes", spec.name);
    (c.commands_checked(), c.violation_count())
}

fn spec(p: &presets::Preset) -> HbmSpec {
    let cfg = memory::preset_cfg(p);
    let gen = GenParams { width: 16, in_flight: 512, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    HbmSpec { name: p.name.clone(), cfg, stacks: 1, gen, order: TickOrder::Structural, limit: Dur::from_us(100_000) }
}

#[test]
fn a_million_random_requests_per_preset_break_no_timing_rule() {
    for p in presets::ALL.iter() {
        let (cmds, bad) = check(&spec(p), Pattern::Mix, 1_000_000);
        assert_eq!(bad, 0);
        assert!(cmds > 2_000_000, "{}: {cmds} commands", p.name);
    }
}

#[test]
fn closed_page_all_bank_refresh_and_fcfs_break_no_timing_rule() {
    for p in presets::ALL.iter() {
        for (page, refresh, sched) in [
            (PagePolicy::Closed, "all-bank", "frfcfs"),
            (PagePolicy::Open, "all-bank", "fcfs"),
            (PagePolicy::Closed, "per-bank", "fcfs"),
            (PagePolicy::Open, "per-bank-hold", "frfcfs"),
            (PagePolicy::Open, "all-bank-flex", "frfcfs"),
        ] {
            let mut s = spec(p);
            s.cfg.controller.page_policy = page;
            s.cfg.controller.refresh = refresh.into();
            s.cfg.controller.scheduler = sched.into();
            s.name = format!("{} {page:?} {refresh} {sched}", p.name);
            check(&s, Pattern::Mix, 100_000);
            check(&s, Pattern::StreamRead, 50_000);
        }
    }
}
