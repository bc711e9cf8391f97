//! Criterion benchmark of the lock-step diff (model vs Verilated RTL, every output port compared
//! every cycle, 8 cycles of history, no VCD): the link FIFO and the 8-port 1-iteration iSLIP
//! arbiter, both through the generic [`diff`] (monomorphized, as the examples and tests call it)
//! and through the block registry (`Box<dyn Block>`, as `trnsim diff` calls it). Throughput is in
//! cycles, so criterion's "elem/s" is cycles/s.
//!
//! `cargo bench -p trnsim-rtl --features rtl --bench lockstep`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trnsim_rtl::diff::{diff, DiffConfig};
use trnsim_rtl::model::{ArbMode, IslipArbiter, LinkFifo};
use trnsim_rtl::registry::{self, DiffRequest};
use trnsim_rtl::rtl::Rtl;
use trnsim_rtl::stimulus::{IslipStimulus, LinkFifoStimulus};
use trnsim_rtl::verilator_sys::models::{IslipArbiterN8I1, LinkFifoW64D4};

const CYCLES: u64 = 200_000;

fn lockstep(c: &mut Criterion) {
    let mut g = c.benchmark_group("lockstep");
    g.sample_size(10);
    g.throughput(Throughput::Elements(CYCLES));
    g.bench_function("link_fifo", |b| {
        let cfg = DiffConfig::link_fifo(CYCLES);
        b.iter(|| {
            let stim = || LinkFifoStimulus::new(1);
            diff(|| LinkFifo::new(64, 4), Rtl::<LinkFifoW64D4>::new, stim, &cfg).expect("no divergence").cycles
        })
    });
    g.bench_function("islip_n8_i1", |b| {
        let cfg = DiffConfig::islip_arbiter(CYCLES);
        b.iter(|| {
            let (model, stim) = (|| IslipArbiter::new(8, 1, ArbMode::Islip), || IslipStimulus::new(8, 1));
            diff(model, Rtl::<IslipArbiterN8I1>::new, stim, &cfg).expect("no divergence").cycles
        })
    });
    for name in ["link_fifo", "islip_n8_i1"] {
        let entry = registry::find(name).expect("registered");
        g.bench_function(format!("{name}_dyn"), |b| {
            b.iter(|| entry.diff(&DiffRequest::new(CYCLES, 1)).expect("no divergence").cycles)
        });
    }
    g.finish();
}

criterion_group!(benches, lockstep);
criterion_main!(benches);
