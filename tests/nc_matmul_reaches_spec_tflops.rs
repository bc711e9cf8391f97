//! Tensor-engine throughput against spec §2/§1: back-to-back BF16 matmuls (N = 512) reach at
//! least 98 % of 78.6 TFLOPS per core, MXFP8 at least 98 % of 314.6, and 8 cores 8x one core;
//! the programs go through the text assembler.

use trnsim_benchmarks::neuroncore::run_named;
use trnsim_kernel::TickOrder;

fn figure(r: &trnsim_benchmarks::suite::BenchResult, name: &str) -> f64 {
    r.headline.iter().find(|h| h.0 == name).unwrap().1
}

#[test]
fn bf16_mxfp8_and_eight_cores_reach_their_peaks() {
    let bf16 = run_named("nc-matmul-bf16", TickOrder::Structural, None).unwrap();
    assert!(figure(&bf16, "tflops") >= 0.98 * 78.64, "BF16 {}", figure(&bf16, "tflops"));
    let mx = run_named("nc-matmul-mxfp8", TickOrder::Structural, None).unwrap();
    assert!(figure(&mx, "tflops") >= 0.98 * 314.57, "MXFP8 {}", figure(&mx, "tflops"));
    let eight = run_named("nc-matmul-8cores", TickOrder::Shuffled(3), None).unwrap();
    let ratio = figure(&eight, "tflops") / figure(&bf16, "tflops");
    assert!((0.98 * 8.0..=8.0001).contains(&ratio), "8 cores = {ratio:.3} x one core");
}
