//! The weight-stationary GEMM sweep: the tensor engine pays its pipeline fill and drain once per
//! GEMM, not once per fold as SCALE-Sim's closed form (2R + C + T - 2 per fold) charges, because
//! LoadStationary runs in the background and PSUM accumulation drains while the next fold
//! streams. So cycles = sum of initiation intervals + a constant, for every shape.

use trnsim_benchmarks::neuroncore::{
    assemble_text, gemm_program, nc_v4_full_rate, run_cores_on, scalesim_ws_cycles, DEFAULT_MAX_SIM_TIME,
};
use trnsim_core::engine::EngineUnit;
use trnsim_kernel::TickOrder;
use trnsim_mem::hbm::Fidelity;

#[test]
fn gemm_cycles_are_intervals_plus_one_fill_and_drain() {
    let mut overheads = Vec::new();
    for (m, k, n) in
        [(128, 128, 128), (128, 128, 512), (256, 256, 512), (512, 512, 512), (1024, 1024, 1024), (1024, 128, 256)]
    {
        let p = assemble_text("gemm", &gemm_program(m, k, n)).unwrap();
        // At full rate, as nc-gemm-sweep runs it: SCALE-Sim's array has no warm-up throttle.
        let core = nc_v4_full_rate();
        let (sim, ids) =
            run_cores_on(&p, core, 1, TickOrder::Structural, None, DEFAULT_MAX_SIM_TIME, Fidelity::Cycle, &|_| {})
                .unwrap();
        let u = sim.component::<EngineUnit>(ids[0].engines[0].1).unwrap();
        let cycles = u.stats.last - u.stats.first.unwrap();
        // Sum of MultiplyMoving intervals: one max(min(64, M), N) per (M, K, N) block.
        let folds = u64::from(m.div_ceil(128) * k.div_ceil(128));
        let per_fold: u64 = (0..n.div_ceil(512)).map(|i| u64::from((n - i * 512).min(512)).max(64)).sum();
        let intervals = folds * per_fold;
        assert_eq!(u.stats.busy_cycles, intervals, "{m}x{k}x{n}");
        let overhead = cycles - intervals;
        overheads.push(overhead);
        if folds > 4 {
            assert!(cycles < scalesim_ws_cycles(m, k, n), "{m}x{k}x{n}: pipelining beats per-fold fill/drain");
        }
    }
    // Fill (weights' SBUF read) plus drain (the last PSUM write): the same few hundred cycles
    // whatever the shape, never growing with the number of folds.
    let (lo, hi) = (overheads.iter().min().unwrap(), overheads.iter().max().unwrap());
    assert!(*lo >= 200 && *hi <= 1000 && hi - lo <= 600, "overheads {overheads:?}");
}
