//! Same preset, pattern and seed: identical statistics and identical Perfetto bytes, under
//! any tick order.

use trnsim_benchmarks::memory::{self, HbmSpec};
use trnsim_kernel::{Dur, LinkSelection, TickOrder, TraceOptions};
use trnsim_mem::hbm::presets;
use trnsim_mem::hbm::traffic::{GenParams, Pattern};

fn once(order: TickOrder, dir: &std::path::Path, tag: &str) -> (String, Vec<u8>) {
    let cfg = memory::preset_cfg(&presets::HBM3_6400);
    let gen = GenParams { width: 8, in_flight: 128, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    let s = HbmSpec { name: "det".into(), cfg, stacks: 2, gen, order, limit: Dur::from_us(100_000) };
    let srcs = (0..2).map(|k| memory::synthetic(&s, Pattern::Mix, 20_000, 5 + k).unwrap()).collect();
    let path = dir.join(format!("{tag}.pftrace"));
    let sink = Box::new(trnsim_traces::PerfettoWriter::create(&path).unwrap());
    let opts = TraceOptions { link_occupancy: true, signal_links: LinkSelection::None };
    let out = memory::run(&s, srcs, Some((sink, opts)), &mut |_| None).unwrap();
    (serde_json::to_string(&out.result.stats).unwrap(), std::fs::read(&path).unwrap())
}

#[test]
fn hbm_statistics_and_traces_do_not_depend_on_tick_order() {
    let dir = crate::common::scratch("hbm_determinism");
    let (s0, t0) = once(TickOrder::Structural, &dir, "a");
    for (i, order) in [TickOrder::Structural, TickOrder::Reversed, TickOrder::Shuffled(9)].into_iter().enumerate() {
        let (s, t) = once(order, &dir, &format!("b{i}"));
        assert_eq!(s, s0, "{order:?}: statistics differ");
        assert!(t == t0, "{order:?}: trace bytes differ");
    }
    assert!(t0.len() > 100_000, "the trace has the command slices ({} bytes)", t0.len());
}
