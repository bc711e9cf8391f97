//! Time-weighted statistics: the mean queue depth integrates the requests every controller
//! held at every cycle up to the end of the run, also when the run stops with requests
//! still queued; the write-mode fraction is a fraction of each pseudo-channel's time.

use crate::hbm::traffic::{attach, GenParams, Pattern, Synthetic};
use crate::hbm::{presets, HbmStack, StackConfig};
use trnsim_kernel::{ClockId, SimBuilder, StatsReport};

/// Runs `pattern` (more requests than the run has time for) for `cycles` CK cycles, one at
/// a time; returns the report and, summed over the cycles, the requests queued in the
/// stack's controllers after each and the controllers in write mode after each.
fn run_sampled(pattern: Pattern, cycles: u64) -> (StatsReport, u64, u64) {
    // CK 1,600 MHz: a whole 625 ps period, so the report's cycle count is `cycles` exactly.
    let cfg = StackConfig::from_preset(&presets::HBM3_6400);
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let map = HbmStack::new(&cfg).unwrap().address_map().clone();
    let src =
        Synthetic::new(pattern, 1_000_000, 7, map.capacity(), u64::from(cfg.org.access_bytes()), &map, cfg.org.rows);
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
                writing += u64::from(c.write_mode());
            }
        }
    }
    (sim.report(), area, writing)
}

#[test]
fn mean_queue_depth_counts_requests_still_queued_when_the_run_stops() {
    let cycles = 3_000;
    let (report, area, _) = run_sampled(Pattern::RandomRead, cycles);
    let mean = report.get("hbm", "queue_depth_mean").unwrap().as_f64();
    // The run stops with the generator's requests queued: the last change of the queue was
    // well before the end, so a mean that stops there falls short.
    assert!(area > 0);
    let want = area as f64 / cycles as f64;
    assert!((mean - want).abs() <= 1e-9 * want, "queue_depth_mean {mean}, sampled every cycle {want}");
}

#[test]
fn write_mode_fraction_is_a_fraction_of_each_pseudo_channels_time() {
    let cycles = 3_000;
    let (report, _, writing) = run_sampled(Pattern::StreamWrite, cycles);
    let frac = report.get("hbm", "write_mode_frac").unwrap().as_f64();
    let pcs = u64::from(StackConfig::from_preset(&presets::HBM3_6400).org.pcs());
    let want = writing as f64 / (cycles * pcs) as f64;
    // Writes only: the controllers with requests drain writes from their first until the end.
    assert!(want > 0.5, "{want}");
    assert!((frac - want).abs() <= 1e-9, "write_mode_frac {frac}, sampled every cycle {want}");
}
