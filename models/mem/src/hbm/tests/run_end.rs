//! Statistics to the end of a run: the mean queue depth integrates the requests every
//! controller held at every cycle up to the end, also when the run stops with requests still
//! queued; the write-mode fraction is a fraction of each pseudo-channel's time; the
//! refreshes an idle stack owes are counted to the end, and a run continued after its end
//! reports as one run to the later end.

use crate::hbm::traffic::{attach, GenParams, Pattern, Synthetic};
use crate::hbm::{presets, HbmStack, StackConfig};
use trnsim_kernel::{ClockId, SimBuilder, StatsReport};

/// Runs `requests` of `pattern` for up to `cycles` CK cycles, one at a time; returns the
/// report, the run's length in cycles (shorter when the requests run out: a run ends at its
/// last event) and, summed over the cycles, the requests queued in the stack's controllers
/// after each and the controllers draining writes after each.
fn run_sampled(pattern: Pattern, requests: u64, cycles: u64) -> (StatsReport, u64, u64, u64) {
    // CK 1,600 MHz: a whole 625 ps period, so the report counts the run's cycles exactly.
    let cfg = StackConfig::from_preset(&presets::HBM3_6400);
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let map = HbmStack::new(&cfg).unwrap().address_map().clone();
    let src =
        Synthetic::new(pattern, requests, 7, map.capacity(), u64::from(cfg.org.access_bytes()), &map, cfg.org.rows);
    let gp = GenParams { width: 4, in_flight: 256, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    let (sid, _) = attach(&mut b, "hbm", clk, &cfg, Box::new(src), gp, false).unwrap();
    let mut sim = b.build().unwrap();
    let (channels, pcs) = (cfg.org.channels, cfg.org.pseudo_channels);
    let (mut area, mut writing) = (0u64, 0u64);
    for _ in 0..cycles {
        sim.run_cycles(ClockId::first(), 1).unwrap();
        let stack = sim.component::<HbmStack>(sid).unwrap();
        for ch in 0..channels {
            for pc in 0..pcs {
                let c = stack.controller(ch, pc).unwrap();
                area += c.queued() as u64;
                writing += u64::from(c.draining_writes());
            }
        }
    }
    let end = sim.clock(ClockId::first()).edge_index_at_or_after(sim.now());
    (sim.report(), end, area, writing)
}

#[test]
fn mean_queue_depth_counts_requests_still_queued_when_the_run_stops() {
    let cycles = 3_000;
    let (report, end, area, _) = run_sampled(Pattern::RandomRead, 1_000_000, cycles);
    assert_eq!(end, cycles);
    let mean = report.get("hbm", "queue_depth_mean").unwrap().as_f64();
    // The run stops with the generator's requests queued: the last change of the queue was
    // well before the end, so a mean that stops there falls short.
    assert!(area > 0);
    let want = area as f64 / cycles as f64;
    assert!((mean - want).abs() <= 1e-9 * want, "queue_depth_mean {mean}, sampled every cycle {want}");
}

#[test]
fn write_mode_fraction_is_a_fraction_of_each_pseudo_channels_time() {
    let pcs = u64::from(StackConfig::from_preset(&presets::HBM3_6400).org.pcs());
    // Writes only, more than the run has time for: the controllers drain writes from their
    // first until the end. Then reads and writes that run out long before the end: time a
    // controller stays in write mode with no write left to issue is not draining.
    for (pattern, requests, least) in [(Pattern::StreamWrite, 1_000_000, 0.5), (Pattern::Mix, 3_000, 0.001)] {
        let cycles = 6_000;
        let (report, end, _, writing) = run_sampled(pattern, requests, cycles);
        assert_eq!(end < cycles, pattern == Pattern::Mix, "{pattern:?} ends at cycle {end}");
        let frac = report.get("hbm", "write_mode_frac").unwrap().as_f64();
        let want = writing as f64 / (end * pcs) as f64;
        assert!(want > least, "{pattern:?}: {want}");
        assert!((frac - want).abs() <= 1e-9, "{pattern:?}: write_mode_frac {frac}, sampled every cycle {want}");
    }
}

/// Keeps a run going to cycle `.0` of its clock (and does nothing else).
pub(super) struct Until(pub(super) u64);

impl trnsim_kernel::Component for Until {
    fn tick(&mut self, cx: &mut trnsim_kernel::Ctx<'_>) -> trnsim_kernel::Activity {
        let now = cx.cycle().0;
        if now < self.0 {
            cx.wake_after(trnsim_kernel::Cycles(self.0 - now));
        }
        trnsim_kernel::Activity::Idle
    }
}

/// A stack with `requests` random reads early on and nothing after, in a run kept going to
/// CK cycle `end`, run in `slices` run calls of equal length; returns the report, the
/// configuration and the first cycle not before the run's end.
fn run_idle_tail(requests: u64, end: u64, slices: u64) -> (StatsReport, StackConfig, u64) {
    let cfg = StackConfig::from_preset(&presets::HBM3_6400);
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let map = HbmStack::new(&cfg).unwrap().address_map().clone();
    let src = Synthetic::new(
        Pattern::RandomRead,
        requests,
        3,
        map.capacity(),
        u64::from(cfg.org.access_bytes()),
        &map,
        cfg.org.rows,
    );
    let gp = GenParams { width: 4, in_flight: 64, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    attach(&mut b, "hbm", clk, &cfg, Box::new(src), gp, false).unwrap();
    b.add("until", clk, Until(end)).unwrap();
    let mut sim = b.build().unwrap();
    let total = sim.clock(ClockId::first()).edge(end + 1).as_ps();
    for _ in 0..slices {
        sim.run_for(trnsim_kernel::Dur::from_ps(total.div_ceil(slices))).unwrap();
    }
    assert_eq!(sim.now(), sim.clock(ClockId::first()).edge(end), "the run ends at the last tick");
    let bound = sim.clock(ClockId::first()).edge_index_at_or_after(sim.now());
    (sim.report(), cfg, bound)
}

#[test]
fn an_idle_stack_reports_the_refreshes_it_owes_to_the_end_of_the_run() {
    // No request at all: the stack ticks once, at the start, and each pseudo-channel
    // refreshes one bank every tREFIpb from its own phase (per-bank refresh, the preset's
    // policy), at every cycle before the run's end.
    let (report, cfg, bound) = run_idle_tail(0, 32_000, 1);
    assert_eq!(cfg.controller.refresh, "per-bank");
    let (chs, pcs) = (cfg.org.channels, cfg.org.pseudo_channels);
    let interval = crate::hbm::refresh::interval(&cfg.controller.refresh, cfg.timing.refi, cfg.timing.refi_pb);
    let mut want = 0;
    for ch in 0..chs {
        for pc in 0..pcs {
            let first = u64::from(interval)
                + crate::hbm::refresh::phase("per-bank", Default::default(), ch, pc, chs, pcs, interval);
            if first < bound {
                want += (bound - 1 - first) / u64::from(interval) + 1;
            }
        }
    }
    assert!(want > 1000, "{want}");
    assert_eq!(report.int("hbm", "cmd_REFPB"), Some(want));
}

#[test]
fn a_run_continued_after_its_end_reports_as_one_run_to_the_later_end() {
    // Reads for the first few microseconds, then an idle tail; the end of each run call
    // settles the refreshes owed, and a run continued after it must not refresh again nor
    // miss any.
    let end = 48_000;
    let (one, _, _) = run_idle_tail(3_000, end, 1);
    let (three, _, _) = run_idle_tail(3_000, end, 3);
    let (seven, _, _) = run_idle_tail(3_000, end, 7);
    assert_eq!(one.int("hbm", "reads"), Some(3_000));
    assert!(one.int("hbm", "cmd_REFPB").unwrap() > 1000);
    assert_eq!(one.owners.get("hbm"), three.owners.get("hbm"));
    assert_eq!(one.owners.get("hbm"), seven.owners.get("hbm"));
}
