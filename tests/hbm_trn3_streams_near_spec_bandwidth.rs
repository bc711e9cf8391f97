//! Fidelity against published figures: streaming reads on the Trn3 memory (4 HBM3E stacks)
//! come within 10% of AWS's 4.9 TB/s (spec §1), and each preset's lone stack streams at >= 90%
//! of its pin bandwidth with refresh on; the same-bank pattern runs at the tRC bound.

use trnsim_benchmarks::memory::{self, HbmSpec};
use trnsim_kernel::{Dur, TickOrder};
use trnsim_mem::hbm::presets;
use trnsim_mem::hbm::traffic::{GenParams, Pattern};

fn spec(p: &presets::Preset, stacks: u32) -> HbmSpec {
    let cfg = memory::preset_cfg(p);
    let gen = GenParams { width: 64, in_flight: 4096, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    HbmSpec { name: p.name.clone(), cfg, stacks, gen, order: TickOrder::Structural, limit: Dur::from_us(100_000) }
}

fn figure(h: &[(String, f64)], name: &str) -> f64 {
    h.iter().find(|x| x.0 == name).unwrap().1
}

#[test]
fn trn3_four_stacks_stream_within_ten_percent_of_4_9_tb_per_s() {
    let s = spec(&presets::HBM3E_9600, 4);
    let srcs = (0..4).map(|k| memory::synthetic(&s, Pattern::StreamRead, 150_000, 1 + k).unwrap()).collect();
    let out = memory::run(&s, srcs, None, &mut |_| None).unwrap();
    let bw = figure(&out.result.headline, "bandwidth_GBps");
    assert!((bw - 4900.0).abs() <= 490.0, "Trn3 streaming {bw:.0} GB/s vs 4900 GB/s");
    assert!(out.result.stats.int("hbm0", "cmd_REFPB").unwrap() > 0, "refresh is on");
}

#[test]
fn same_bank_reads_run_at_the_row_cycle_bound() {
    for p in presets::ALL.iter() {
        let mut s = spec(p, 1);
        s.gen.in_flight = 64;
        let out =
            memory::run(&s, vec![memory::synthetic(&s, Pattern::SameBank, 3000, 1).unwrap()], None, &mut |_| None)
                .unwrap();
        let t = &s.cfg.timing;
        // ACT -> RD (tRCDRD) -> PRE (max(tRAS, tRCDRD + tRTP)) -> ACT (tRP), and never under tRC.
        let cycle = (t.ras.max(t.rcd_rd + t.rtp) + t.rp).max(t.rc) as f64;
        let bound = s.cfg.org.access_bytes() as f64 / cycle * t.ck_mhz as f64 * 1e6 / 1e9;
        let bw = figure(&out.result.headline, "bandwidth_GBps");
        // Per-bank refresh takes the bank away for tRFCpb every banks x tREFIpb cycles.
        let refresh = t.rfc_pb as f64 / (t.refi_pb as f64 * s.cfg.org.banks_per_pc() as f64);
        assert!(bw <= bound * 1.0001, "{}: {bw} GB/s above the tRC bound {bound}", p.name);
        assert!(bw >= bound * (1.0 - refresh) * 0.98, "{}: {bw} GB/s vs bound {bound} less refresh {refresh}", p.name);
    }
}
