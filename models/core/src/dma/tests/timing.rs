//! Latency and bandwidth against first principles: start latency + bytes / peak + HBM latency.

use super::{ap, cmd, load, rig};
use crate::dma::DmaParams;
use crate::isa::{DmaAddr, Dtype};
use crate::msg::SemOp;
use trnsim_kernel::{Dur, Time};

/// When test commands arrive: after the HBM's refresh has settled into its rotation (at time 0
/// every pseudo-channel refreshes bank 0, where address 0 lives).
const ARRIVE: Time = Time::from_ps(2_000_000);

/// Latency of one HBM->SBUF DMA of `np` partitions x `bpp` bytes, rows `stride` apart in HBM,
/// on a fresh rig, in ns.
fn run(p: DmaParams, np: u16, bpp: u32, stride: u64) -> (f64, super::Rig) {
    run_at(p, np, bpp, stride, ARRIVE)
}

/// [`run`] with the command arriving at `at`.
fn run_at(p: DmaParams, np: u16, bpp: u32, stride: u64, at: Time) -> (f64, super::Rig) {
    let mut c = load(1, 0, 0, 0, np, bpp);
    c.src = DmaAddr::Hbm { addr: 0, partition_stride: stride };
    let mut r = rig(p, vec![(at, c)], false);
    r.run();
    (r.latency_ns(), r)
}

/// [`run`] with rows back to back.
fn one(p: DmaParams, np: u16, bpp: u32) -> (f64, super::Rig) {
    run(p, np, bpp, u64::from(bpp))
}

#[test]
fn one_engine_32k_costs_start_latency_plus_bytes_over_peak_plus_memory_latency() {
    let (v4, r) = one(DmaParams::v4(), 8, 4096);
    let transfer = 32768.0 / 38.4;
    let rest = v4 - 1300.0 - transfer;
    println!("v4 32 KiB on one engine: {v4:.0} ns = 1300 start + {transfer:.0} transfer + {rest:.0} HBM/SBUF latency");
    assert!((40.0..160.0).contains(&rest), "{rest:.0} ns beyond start + transfer");
    assert_eq!(r.block().bytes_per_engine()[0], 32768);
    assert_eq!(r.block().bytes_per_engine()[1..].iter().sum::<u64>(), 0);
    assert_eq!(r.stat("hbm_read_bursts"), 1024.0);
    assert_eq!(r.stat("packets"), 8.0);
    assert_eq!(r.sem_ops().len(), 1);

    // Trn2 (v3 preset, 27.2 GB/s): the documented example took 1416 ns for the same transfer.
    let (v3, _) = one(DmaParams::v3(), 8, 4096);
    let mut p = DmaParams::v3();
    p.start_latency = Dur::ZERO;
    // Arriving as much later as the start latency, so the HBM sees the reads at the same
    // times (the same banks refreshing).
    let (v3_no_start, _) = run_at(p, 8, 4096, 4096, ARRIVE + Dur::from_ns(1300));
    println!(
        "v3 32 KiB on one engine: {v3:.0} ns = 1300 start + {:.0} transfer + {:.0} latency; without the start \
         latency {v3_no_start:.0} ns (documented example: 1416 ns, {:.0} ns more)",
        32768.0 / 27.2,
        v3 - 1300.0 - 32768.0 / 27.2,
        1416.0 - v3_no_start
    );
    assert!((v3 - v3_no_start - 1300.0).abs() < 2.0);
    assert!(v3_no_start > 32768.0 / 27.2 && v3_no_start < 1416.0);
}

#[test]
fn all_partitions_use_sixteen_engines_and_increment_sixteen_times() {
    let bpp = 65536;
    let total = 128.0 * f64::from(bpp);
    let peak = 16.0 * 38.4;
    // Partition p reads the 64 KiB from 32p: the bursts of a moment spread over the channels,
    // all in one 128 KiB range of open rows (no row conflicts).
    let (ns, r) = run(DmaParams::v4(), 128, bpp, 32);
    let ops = r.sem_ops();
    assert_eq!(ops.len(), 16);
    assert!(ops.iter().all(|(_, op)| matches!(op, SemOp::Inc { sem: crate::isa::Sem(0), delta: 1, .. })));
    assert!(r.block().bytes_per_engine().iter().all(|&b| b == 8 * u64::from(bpp)));
    let open = total / (ns - 1300.0);
    // The same with 256 bursts in flight per engine instead of 64: the engines' peak is the limit.
    let mut deep = DmaParams::v4();
    deep.outstanding = 256;
    let deep = total / (run(deep, 128, bpp, 32).0 - 1300.0);
    // Distinct rows (8 MiB back to back): 16 x 8 streams share the HBM's banks.
    let (ns, r) = one(DmaParams::v4(), 128, bpp);
    let distinct = total / (ns - 1300.0);
    let hbm = r.sim.report();
    let hits = hbm.int("hbm", "row_hits").unwrap_or(0) as f64;
    let conflicts = hbm.int("hbm", "row_conflicts").unwrap_or(0) as f64;
    let lat = hbm.get("hbm", "read_latency_ns_mean").map_or(0.0, |v| v.as_f64());
    let pct = |x: f64| 100.0 * x / peak;
    println!("128 x 64 KiB HBM->SBUF on one HBM3E stack ({:.1} GB/s), GB/s after the start latency:", presets_peak());
    println!("  open rows, 64 in flight per engine:   {open:.1} ({:.1}% of 16 x 38.4 = {peak:.1})", pct(open));
    println!("  open rows, 256 in flight per engine:  {deep:.1} ({:.1}%)", pct(deep));
    println!(
        "  distinct rows, 64 in flight:          {distinct:.1} ({:.1}%; {:.0}% row conflicts, mean read latency {lat:.0} ns)",
        pct(distinct),
        100.0 * conflicts / (hits + conflicts)
    );
    assert!(open > 0.8 * peak && open < deep, "{open:.1} GB/s");
    assert!(deep > 0.97 * peak && deep <= peak * 1.001, "{deep:.1} GB/s");
    assert!(distinct > 0.7 * peak && distinct < open, "{distinct:.1} GB/s");
}

fn presets_peak() -> f64 {
    trnsim_mem::hbm::presets::HBM3E_9600.stack_peak_bytes_per_s() / 1e9
}

#[test]
fn bandwidth_against_size_shows_the_fixed_cost_dominating_small_transfers() {
    let mut rows = Vec::new();
    println!("{:>10} {:>10} {:>10} {:>8} {:>8}", "B/part", "total B", "ns", "GB/s", "% peak");
    for bpp in [64u32, 256, 1024, 4096, 16384, 65536] {
        let (ns, _) = one(DmaParams::v4(), 128, bpp);
        let total = 128.0 * f64::from(bpp);
        let gbps = total / ns;
        println!("{bpp:>10} {total:>10} {ns:>10.0} {gbps:>8.1} {:>7.1}%", 100.0 * gbps / 614.4);
        rows.push((ns, gbps));
    }
    assert!(rows.windows(2).all(|w| w[1].1 > w[0].1), "bandwidth grows with size");
    assert!(rows[0].0 < 1450.0, "64 B/partition: the 1300 ns start is nearly all of it");
    assert!(rows[0].1 < 0.02 * 614.4);
    assert!(rows[5].1 > 0.6 * 614.4);
}

#[test]
fn an_idle_block_sleeps_through_the_start_latency() {
    let ticks = |start_ns| {
        let mut p = DmaParams::v4();
        p.start_latency = Dur::from_ns(start_ns);
        one(p, 8, 4096).1.sim.counters().ticks
    };
    let (short, long) = (ticks(1300), ticks(13_000));
    println!("kernel ticks for one 32 KiB DMA: {short} with a 1.3 us start latency, {long} with 13 us");
    assert!(long <= short + 20, "{short} vs {long}: waiting must cost no ticks");
}

#[test]
fn stores_and_on_chip_copies_move_at_the_same_rate() {
    let (bpp, peak) = (65536u32, 16.0 * 38.4);
    let tile = |offset| ap(0, 128, offset, Dtype::Fp32, &[((bpp / 4) as u16, 1)]);
    let rate = |dst| {
        let mut r = rig(DmaParams::v4(), vec![(ARRIVE, cmd(1, 0, DmaAddr::OnChip(tile(0)), dst, bpp))], false);
        r.run();
        128.0 * f64::from(bpp) / (r.latency_ns() - 1300.0)
    };
    let store = rate(DmaAddr::Hbm { addr: 0, partition_stride: 32 });
    let copy = rate(DmaAddr::OnChip(tile(1 << 17)));
    println!("128 x 64 KiB after the start latency: SBUF->HBM {store:.1} GB/s, SBUF->SBUF {copy:.1} GB/s");
    assert!(store > 0.8 * peak && store <= peak * 1.01, "{store:.1}");
    assert!(copy > 0.97 * peak && copy <= peak * 1.01, "{copy:.1}");
}
