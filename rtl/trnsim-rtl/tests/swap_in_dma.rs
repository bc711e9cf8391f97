//! Swap-in of a DMA engine's descriptor queues and arbiter (`dma_queue` blocks) inside a
//! running NeuronCore (src/swap_in/dma.rs): the run's statistics JSON is byte-identical to the
//! all-model run and the recorded block inputs replay against the model clean; a bug planted
//! at the block's ports (the behaviour of a `// MUT:` mutant of rtl/scripts/mutate.sh) is
//! found by running the core, with the cycle and both sides' VCDs. The RTL runs need feature
//! `rtl`; the same checks run on the port-level model without it.

use crate::swap_in::{imp, json, vcd_dir, Planted};
use std::cell::Cell;
use std::rc::Rc;
use trnsim_core::core::{build_hooked, CoreHooks, CoreOptions, HbmHookup};
use trnsim_core::isa::asm::{assemble, AsmOptions};
use trnsim_kernel::{Dur, SimBuilder};
use trnsim_mem::hbm::presets::HBM3_6400;
use trnsim_mem::hbm::{HbmStack, StackConfig};
use trnsim_rtl::block::Block;
use trnsim_rtl::swap_in::{parse_dma_queue, SwapSet, Wrap};

/// Loads and stores on nine queues of every QoS class from three streams, in two waves:
/// engine 0's arbiter chooses among several ready queues of several classes.
const TRAFFIC: &str = "\
.engine sync
    dma_start q0 hbm 0x0 stride 4096 -> sbuf[0:128] +0x0 [1024:1] fp32, bytes=4096, sem=s0
    dma_start q1 hbm 0x80000 stride 4096 -> sbuf[0:128] +0x1000 [1024:1] fp32, bytes=4096, sem=s0
    dma_start q2 hbm 0x100000 stride 4096 -> sbuf[0:128] +0x2000 [1024:1] fp32, bytes=4096, sem=s0
    dma_start q3 hbm 0x180000 stride 4096 -> sbuf[0:128] +0x3000 [1024:1] fp32, bytes=4096, sem=s0
    sem_wait s0 >= 64
    dma_start q4 hbm 0x200000 stride 4096 -> sbuf[0:128] +0x0 [1024:1] fp32, bytes=4096, sem=s0
    dma_start q5 hbm 0x280000 stride 4096 -> sbuf[0:128] +0x1000 [1024:1] fp32, bytes=4096, sem=s0
    sem_wait s0 >= 96
    halt
.engine scalar
    dma_start q4 sbuf[0:128] +0x4000 [512:1] fp32 -> hbm 0x400000 stride 2048, sem=s1
    dma_start q7 sbuf[0:128] +0x5000 [512:1] fp32 -> hbm 0x480000 stride 2048, sem=s1
    dma_start q0 sbuf[0:128] +0x6000 [512:1] fp32 -> hbm 0x580000 stride 2048, sem=s1
    sem_wait s1 >= 48
    halt
.engine gpsimd
    dma_start q8 hbm 0x600000 stride 4096 -> sbuf[0:128] +0x7000 [1024:1] fp32, bytes=4096, sem=s2
    dma_start q9 hbm 0x680000 stride 4096 -> sbuf[0:128] +0x8000 [1024:1] fp32, bytes=4096, sem=s2
    sem_wait s2 >= 32
    halt
";

const ENGINE: &str = "nc0.dma.engine0";

/// One NC-v4 core (nc-v4 DMA: 16 queues, QoS) running [`TRAFFIC`] on one hbm3-6400 stack;
/// engine 0's queues swapped in when `swap` is given. Returns the statistics JSON.
fn dma_run(swap: Option<&mut SwapSet>) -> String {
    let program = assemble("traffic.asm", TRAFFIC, &AsmOptions::default()).unwrap_or_else(|e| panic!("{e:?}"));
    let opts = CoreOptions::default();
    let mut hooks = CoreHooks::default();
    if let Some(s) = swap {
        let at = parse_dma_queue(ENGINE).unwrap();
        let hook = s.swap_dma_queue(ENGINE, at, &opts.spec.dma, imp(), None).unwrap_or_else(|e| panic!("{e}"));
        hooks.dma_queues.push((at.engine, hook));
    }
    let cfg = StackConfig::from_preset(&HBM3_6400);
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let sid = b.reserve("hbm0", clk).unwrap();
    let mut stack = HbmStack::new(&cfg).unwrap();
    let hbm = Some(HbmHookup { id: sid, stack: &mut stack });
    build_hooked(&mut b, "nc0", &program, &opts, hbm, hooks).unwrap_or_else(|e| panic!("{e}"));
    b.install(sid, stack).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(1000)).unwrap();
    json(&sim)
}

/// The all-model run, once for both tests (deterministic).
fn all_model() -> &'static str {
    static RUN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    RUN.get_or_init(|| dma_run(None))
}

#[test]
fn dma_queues_swapped_into_a_running_core_give_identical_statistics_and_replay_clean() {
    let mut s = SwapSet::new();
    let swapped = dma_run(Some(&mut s));
    let r = s.check().unwrap_or_else(|e| panic!("{e}"));
    assert!(swapped == all_model(), "statistics differ with the DMA queues swapped in");
    assert_eq!((r[0].instance.as_str(), r[0].block), (ENGINE, "dma_queue_q16_qos"));
    assert!(r[0].cycles > 50, "a block clock per DMA cycle with parts entering or leaving: {}", r[0].cycles);
}

/// The `class` mutant of dma_queue.sv (the priority class ignored): the block's start picks
/// the ready queue round robin over all queues, as `dma_queue` without QoS would.
fn class_ignored() -> Wrap {
    Planted::wrap(|at| {
        let (ready, ok, start_queue) = (at("ready"), at("start_ok"), at("start_queue"));
        let ptr = Rc::new(Cell::new(0u32));
        let p = ptr.clone();
        let pick = move |b: &dyn Block| {
            let r = b.output(ready) as u64;
            (0..16).map(|k| (p.get() + k) % 16).find(|&q| r >> q & 1 == 1)
        };
        let pick2 = pick.clone();
        let out = move |b: &dyn Block, port, v| match pick(b) {
            Some(q) if port == start_queue && b.output(ok) == 1 => u128::from(q),
            _ => v,
        };
        let edge = move |b: &dyn Block| {
            if let (Some(q), 1) = (pick2(b), b.output(ok)) {
                ptr.set((q + 1) % 16);
            }
        };
        (Box::new(out), Box::new(edge))
    })
}

#[test]
fn a_dma_queue_ignoring_priority_classes_is_found_by_the_running_core_with_both_sides_vcds() {
    let dir = vcd_dir("dma");
    let mut s = SwapSet::new();
    (s.vcd_dir, s.wrap) = (Some(dir.clone()), Some(class_ignored()));
    let swapped = dma_run(Some(&mut s));
    assert!(swapped == all_model(), "the engine's arbiter still decides: the run is the all-model run");
    let e = s.check().unwrap_err();
    assert!(e.starts_with("nc0.dma.engine0 (dma_queue_q16_qos): DMA cycle "), "{e}");
    assert!(e.contains("the arbiter starts packet") && e.contains("the block: start 1, queue"), "{e}");
    assert!(e.contains("divergence at cycle") && e.contains("on port start_queue"), "{e}");
    let v = std::fs::read_to_string(dir.join("nc0.dma.engine0.diff.vcd")).unwrap_or_else(|_| panic!("{e}"));
    assert!(v.contains("$scope module model") && v.contains("$scope module rtl") && v.contains("mismatch"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dma_queue_instances_parse_and_refuse_other_shapes_and_sizes() {
    use trnsim_rtl::swap_in::{dma_queue_block, parse_instance, DmaQueueAt, Instance};
    assert_eq!(parse_dma_queue("nc3.dma.engine15"), Some(DmaQueueAt { core: 3, engine: 15 }));
    for bad in ["nc3.dma", "nc3.dma.engine", "nc3.dma.engine1.x", "nc.dma.engine1", "nc0.sbuf.engine1"] {
        assert_eq!(parse_dma_queue(bad), None, "{bad}");
    }
    assert_eq!(parse_instance("nc0.dma.engine2"), Some(Instance::DmaQueue(DmaQueueAt { core: 0, engine: 2 })));
    assert_eq!(dma_queue_block(16, false).unwrap().name, "dma_queue");
    let e = dma_queue_block(8, true).unwrap_err();
    assert_eq!(e, "no dma_queue block is built for 8 queues, QoS (built: 16 round robin, 16 QoS, 6 QoS)");
    let mut s = SwapSet::new();
    let mut p = CoreOptions::default().spec.dma.clone();
    let at = DmaQueueAt { core: 0, engine: 16 };
    let e = s.swap_dma_queue("nc0.dma.engine16", at, &p, trnsim_rtl::swap::Impl::BlockModel, None).err().unwrap();
    assert_eq!(e, "nc0.dma.engine16: no DMA engine 16 (0..16)");
    p.queues = 6;
    let block = trnsim_rtl::registry::find("dma_queue").unwrap();
    let at = DmaQueueAt { core: 0, engine: 0 };
    let e = s.swap_dma_queue(ENGINE, at, &p, trnsim_rtl::swap::Impl::BlockModel, Some(block)).err().unwrap();
    assert_eq!(e, "nc0.dma.engine0: block dma_queue has 16 queues; the engine has 6");
}
