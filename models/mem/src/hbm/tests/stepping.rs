//! Event-driven stepping issues exactly the commands that planning every cycle would, on
//! random mixes, every preset and every controller policy.

use crate::hbm::command::CommandRecord;
use crate::hbm::traffic::{attach, GenParams, Pattern, RequestSource, SourceReq, Synthetic};
use crate::hbm::{presets, CommandSink, HbmStack, PagePolicy, StackConfig};
use std::cell::RefCell;
use std::rc::Rc;
use trnsim_kernel::{Dur, SimBuilder};

struct Shared(Rc<RefCell<Vec<CommandRecord>>>);
impl CommandSink for Shared {
    fn command(&mut self, r: &CommandRecord) {
        self.0.borrow_mut().push(*r);
    }
}

fn commands(cfg: &StackConfig, pattern: Pattern, seed: u64, exhaustive: bool) -> Vec<CommandRecord> {
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let map = HbmStack::new(cfg).unwrap().address_map().clone();
    let src = Synthetic::new(pattern, 3000, seed, 1 << 24, cfg.org.access_bytes() as u64, &map, cfg.org.rows);
    let gp = GenParams { width: 4, in_flight: 96, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    let (sid, _) = attach(&mut b, "hbm", clk, cfg, Box::new(src), gp, false).unwrap();
    let mut sim = b.build().unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let stack = sim.component_mut::<HbmStack>(sid).unwrap();
    stack.set_command_sink(Box::new(Shared(log.clone())));
    stack.set_exhaustive_stepping(exhaustive);
    sim.run_until_idle(Dur::from_us(100_000)).unwrap();
    let end = sim.clock(trnsim_kernel::ClockId::first()).edge_index_at_or_after(sim.now());
    sim.component_mut::<HbmStack>(sid).unwrap().catch_up_to(end);
    let mut v = log.borrow().clone();
    v.sort_by_key(|r| (r.cycle, r.channel, r.pc, r.cmd));
    v
}

/// One test per preset, so the test threads share them.
macro_rules! stepping_tests {
    ($($name:ident: $preset:expr;)*) => {$(
        #[test]
        fn $name() {
            event_driven_stepping_matches_planning_every_cycle(&$preset);
        }
    )*};
}

stepping_tests! {
    event_driven_stepping_matches_planning_every_cycle_hbm2: presets::HBM2_2000;
    event_driven_stepping_matches_planning_every_cycle_hbm3_5700: presets::HBM3_5700;
    event_driven_stepping_matches_planning_every_cycle_hbm3: presets::HBM3_6400;
    event_driven_stepping_matches_planning_every_cycle_hbm3e: presets::HBM3E_9600;
    event_driven_stepping_matches_planning_every_cycle_hbm4_8000: presets::HBM4_8000;
    event_driven_stepping_matches_planning_every_cycle_hbm4_9600: presets::HBM4_9600;
}

#[test]
fn every_preset_has_a_stepping_test() {
    let tested = [
        &*presets::HBM2_2000,
        &*presets::HBM3_5700,
        &*presets::HBM3_6400,
        &*presets::HBM3E_9600,
        &*presets::HBM4_8000,
        &*presets::HBM4_9600,
    ];
    let names = |v: &mut dyn Iterator<Item = &presets::Preset>| v.map(|p| p.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&mut presets::ALL.iter()),
        names(&mut tested.into_iter()),
        "a preset was added: give it a stepping test above"
    );
}

fn event_driven_stepping_matches_planning_every_cycle(p: &presets::Preset) {
    for (k, (page, refresh, sched)) in [
        (PagePolicy::Open, "per-bank", "frfcfs"),
        (PagePolicy::Closed, "all-bank", "frfcfs"),
        (PagePolicy::Open, "all-bank", "fcfs"),
        (PagePolicy::Open, "per-bank-hold", "frfcfs"),
        (PagePolicy::Closed, "per-bank-hold", "fcfs"),
        (PagePolicy::Open, "all-bank-flex", "frfcfs"),
        (PagePolicy::Closed, "all-bank-flex", "fcfs"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut cfg = StackConfig::from_preset(p);
        cfg.controller.page_policy = page;
        cfg.controller.refresh = refresh.into();
        cfg.controller.scheduler = sched.into();
        cfg.controller.write_queue = 16;
        cfg.controller.write_high = 12;
        cfg.controller.write_low = 4;
        for pattern in [Pattern::Mix, Pattern::StreamWrite, Pattern::SameBank] {
            let fast = commands(&cfg, pattern, k as u64 + 1, false);
            let slow = commands(&cfg, pattern, k as u64 + 1, true);
            assert!(fast.len() > 3000, "{} {pattern:?}: {} commands", p.name, fast.len());
            if let Some(i) = (0..fast.len().min(slow.len())).find(|&i| fast[i] != slow[i]) {
                let near = |r: &&CommandRecord| {
                    r.channel == fast[i].channel && r.cycle + 60 > fast[i].cycle && r.cycle < fast[i].cycle + 5
                };
                for r in fast.iter().filter(near) {
                    eprintln!("E {}", r.to_line());
                }
                for r in slow.iter().filter(near) {
                    eprintln!("S {}", r.to_line());
                }
                panic!(
                    "{} {page:?} {refresh} {sched} {pattern:?}: command {i} differs:\n event   {:?}\n every   {:?}",
                    p.name, fast[i], slow[i]
                );
            }
            assert_eq!(fast.len(), slow.len(), "{} {pattern:?}", p.name);
        }
    }
}

/// Requests in bursts separated by long idle gaps (cycle stamps), as a trace gives them.
struct Bursts(Vec<SourceReq>);
impl RequestSource for Bursts {
    fn next_request(&mut self) -> Option<SourceReq> {
        if self.0.is_empty() {
            None
        } else {
            Some(self.0.remove(0))
        }
    }
}

/// The run's statistics (as JSON) and end time, skipping idle refresh periods or not.
fn gap_run(cfg: &StackConfig, skip: bool) -> (String, u64) {
    let mut reqs = Vec::new();
    for (k, start) in [0u64, 1_000_003, 1_600_017].into_iter().enumerate() {
        for i in 0..40u64 {
            let addr = (i * 0x1_2340 + k as u64 * 0x777_0000) % (1 << 30);
            reqs.push(SourceReq { addr, write: i % 3 == 0, cycle: Some(start + i) });
        }
    }
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let gp = GenParams { width: 4, in_flight: 32, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    let (sid, _) = attach(&mut b, "hbm", clk, cfg, Box::new(Bursts(reqs)), gp, false).unwrap();
    let mut sim = b.build().unwrap();
    sim.component_mut::<HbmStack>(sid).unwrap().set_idle_skip(skip);
    sim.run_until_idle(Dur::from_us(100_000)).unwrap();
    (serde_json::to_string(&sim.report()).unwrap(), sim.now().as_ps())
}

#[test]
fn skipping_idle_refresh_periods_changes_nothing() {
    for refresh in ["per-bank", "all-bank", "per-bank-hold", "all-bank-flex"] {
        let mut cfg = StackConfig::from_preset(&presets::HBM3E_9600);
        cfg.controller.refresh = refresh.into();
        // The energy figures too (active cycles and banks closed over the skipped periods).
        cfg.energy = crate::hbm::energy::EnergyTable::builtin().stacks.get("hbm3e-9600").cloned();
        // Equal results only: how much faster skipping is belongs in a benchmark, not a test.
        let fast = gap_run(&cfg, true);
        let slow = gap_run(&cfg, false);
        assert_eq!(fast.1, slow.1, "{refresh}: end times differ");
        assert!(fast.0 == slow.0, "{refresh}: statistics differ");
    }
}

/// `all-bank-flex` on one busy bank (same-bank reads: one pseudo-channel busy for tens of
/// tREFI, the others idle): the busy pseudo-channel postpones REFs (a gap of at least 7 x
/// tREFI), the idle ones pull them in (the first well before tREFI), and every pseudo-channel
/// keeps JEDEC's bounds: never more than 9 x tREFI without a REF (from cycle 0), and within
/// 9 REFs of one per tREFI at the end.
#[test]
fn flexible_refresh_postpones_when_busy_and_pulls_in_when_idle_within_bounds() {
    use crate::hbm::command::Command;
    for p in presets::ALL.iter() {
        let mut cfg = StackConfig::from_preset(p);
        cfg.controller.refresh = "all-bank-flex".into();
        let refi = u64::from(cfg.timing.refi);
        let log = commands(&cfg, Pattern::SameBank, 1, false);
        let end = log.last().map_or(0, |r| r.cycle);
        assert!(end > 20 * refi, "{}: the run lasts {end} cycles, {} tREFI", p.name, end / refi);
        let (mut postponed, mut pulled) = (false, false);
        for ch in 0..cfg.org.channels {
            for pc in 0..cfg.org.pseudo_channels {
                let refs: Vec<u64> = log
                    .iter()
                    .filter(|r| r.channel == ch && r.pc == pc && r.cmd == Command::Ref)
                    .map(|r| r.cycle)
                    .collect();
                let mut last = 0;
                for &t in &refs {
                    assert!(t - last <= 9 * refi, "{} ch {ch} pc {pc}: REF at {t}, the one before at {last}", p.name);
                    postponed |= t - last >= 7 * refi;
                    last = t;
                }
                pulled |= refs.first().is_some_and(|&t| t < refi / 2);
                let owed = (end / refi) as i64 - refs.len() as i64;
                assert!(owed.abs() <= 9, "{} ch {ch} pc {pc}: {} REFs in {end} cycles", p.name, refs.len());
            }
        }
        assert!(postponed && pulled, "{}: postponed {postponed}, pulled in {pulled}", p.name);
    }
}
