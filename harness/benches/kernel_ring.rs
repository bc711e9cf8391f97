//! Criterion benchmark of the kernel yardstick: the 64-module ring with 16 tokens (dense) and
//! 2 tokens (sparse), 20k cycles per iteration. Throughput is reported in token hops.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trnsim_benchmarks::ring::{self, RingParams};
use trnsim_kernel::{ClockId, SimOptions};

fn ring_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel-ring");
    g.sample_size(20);
    for tokens in [16u32, 2] {
        let cycles = 20_000u64;
        g.throughput(Throughput::Elements(u64::from(tokens) * cycles));
        g.bench_function(format!("m64-t{tokens}-d4-c{cycles}"), |b| {
            b.iter_batched(
                || {
                    ring::build(RingParams { modules: 64, tokens, depth: 4 }, SimOptions::default())
                        .expect("ring builds")
                },
                |mut sim| {
                    sim.run_cycles(ClockId::first(), cycles).expect("ring runs");
                    sim
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, ring_bench);
criterion_main!(benches);
