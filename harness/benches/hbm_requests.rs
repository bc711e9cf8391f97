//! Criterion benchmark of the HBM model: 50k random reads and 50k streaming reads through one
//! HBM3-6400 stack (256 in flight, 16 offered per cycle). Throughput is in requests.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trnsim_benchmarks::memory::{self, HbmSpec};
use trnsim_kernel::{Dur, TickOrder};
use trnsim_mem::hbm::presets;
use trnsim_mem::hbm::traffic::{GenParams, Pattern};

fn hbm_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("hbm");
    g.sample_size(10);
    let n = 50_000u64;
    let cfg = memory::preset_cfg(&presets::HBM3_6400);
    let gen = GenParams { width: 16, in_flight: 256, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    let spec = HbmSpec {
        name: "bench".into(),
        cfg,
        stacks: 1,
        gen,
        order: TickOrder::Structural,
        limit: Dur::from_us(1_000_000),
    };
    for (pattern, name) in [(Pattern::RandomRead, "random-read"), (Pattern::StreamRead, "stream-read")] {
        g.throughput(Throughput::Elements(n));
        g.bench_function(format!("hbm3-6400-{name}-{n}"), |b| {
            b.iter(|| {
                let src = memory::synthetic(&spec, pattern, n, 1).expect("source");
                memory::run(&spec, vec![src], None, &mut |_| None).expect("runs").result.headline.len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, hbm_bench);
criterion_main!(benches);
