//! The DMA descriptor queues (block 6): the Rust model against trnsim-core's own queue arbiter
//! with the engine's queue rules (always); against the Verilated RTL in lock-step and under
//! arbitrary-driven fuzzing (feature `rtl`).

use std::collections::VecDeque;
use trnsim_core::dma::{DmaParams, QueueArbiter, Scheduling};
use trnsim_rtl::block::Block;
use trnsim_rtl::model::{dma_queue_port as P, DmaQueue};
use trnsim_rtl::stimulus::{DmaQueueStimulus, Stimulus};

/// A part as the engine keeps it (models/core/src/dma/engine.rs `Part`): packets in all, the
/// next to start, and the cycle its start latency is over.
#[derive(Clone, Copy, Debug)]
struct Part {
    tag: u128,
    total: u32,
    next: u32,
    eligible: u64,
}

/// The engine's queues, run a cycle at a time: `ready` is engine.rs's (`eligible <= now &&
/// total > 0` at the head), the pick is trnsim-core's `QueueArbiter::pick`, a started head
/// advances `next` and leaves with its last packet; an eligible empty head leaves (engine.rs
/// `finish_empty_parts`, one per queue per cycle as the block does).
struct Reference {
    queues: Vec<VecDeque<Part>>,
    arb: QueueArbiter,
    depth: usize,
    latency: u64,
}

impl Reference {
    fn new(p: &DmaParams, depth: usize, latency: u64) -> Reference {
        Reference {
            queues: (0..p.queues).map(|_| VecDeque::new()).collect(),
            arb: QueueArbiter::new(p),
            depth,
            latency,
        }
    }

    fn ready(&self, now: u64) -> u64 {
        let mut m = 0;
        for (q, queue) in self.queues.iter().enumerate() {
            if queue.front().is_some_and(|h| h.eligible <= now && h.total > 0) {
                m |= 1 << q;
            }
        }
        m
    }

    fn empty_heads(&self, now: u64) -> u64 {
        let mut m = 0;
        for (q, queue) in self.queues.iter().enumerate() {
            if queue.front().is_some_and(|h| h.eligible <= now && h.total == 0) {
                m |= 1 << q;
            }
        }
        m
    }
}

/// Runs the seeded stimulus through the model and the reference for `cycles`; every output of
/// the model must be the reference's. Returns (packets started, empty parts retired, refusals).
fn against_engine(p: &DmaParams, depth: usize, latency: u32, cycles: u64, seed: u64) -> (u64, u64, u64) {
    let q = p.queues as usize;
    let mut m = DmaQueue::new(q, depth, latency, p.scheduling == Scheduling::Qos4);
    let mut r = Reference::new(p, depth, u64::from(latency));
    let mut s = DmaQueueStimulus::new(q, seed);
    let mut v = vec![0u128; m.ports().len()];
    let (mut starts, mut empties, mut refused, mut now) = (0, 0, 0, 0u64);
    let cw = m.ports()[P::COUNT].width / q as u32;
    for cycle in 0..cycles {
        s.drive(cycle, &mut v);
        for i in [P::RST, P::ENQ_VALID, P::ENQ_QUEUE, P::ENQ_TAG, P::ENQ_PKTS, P::START_OK] {
            m.set_input(i, v[i]);
        }
        m.settle().unwrap();
        if v[P::RST] == 1 {
            r = Reference::new(p, depth, u64::from(latency));
            now = 0;
            m.posedge().unwrap();
            continue;
        }
        let ctx = |what: &str| format!("cycle {cycle}: {what}");
        let (ready, empty) = (r.ready(now), r.empty_heads(now));
        assert_eq!(m.output(P::READY), u128::from(ready), "{}", ctx("ready"));
        assert_eq!(m.output(P::EMPTY_RET), u128::from(empty), "{}", ctx("empty parts"));
        for (k, queue) in r.queues.iter().enumerate() {
            let c = m.output(P::COUNT) >> (k as u32 * cw) & ((1 << cw) - 1);
            assert_eq!(c, queue.len() as u128, "{}", ctx("count"));
        }
        // The engine's queues are unbounded; the block's hold `depth` (counted before this
        // cycle's departures) and refuse the rest.
        let target = v[P::ENQ_QUEUE] as usize;
        let room = target < q && r.queues[target].len() < r.depth;
        assert_eq!(m.output(P::ENQ_READY), u128::from(room), "{}", ctx("enq_ready"));
        let pick = if v[P::START_OK] == 1 { r.arb.pick(ready) } else { None };
        assert_eq!(m.output(P::START), u128::from(pick.is_some()), "{}", ctx("start"));
        if let Some(k) = pick {
            let h = r.queues[k].front_mut().unwrap();
            let got = [P::START_QUEUE, P::START_TAG, P::START_PKT, P::START_LAST].map(|i| m.output(i));
            let last = h.next + 1 == h.total;
            assert_eq!(got, [k as u128, h.tag, u128::from(h.next), u128::from(last)], "{}", ctx("packet"));
            h.next += 1;
            if last {
                r.queues[k].pop_front();
            }
            starts += 1;
        }
        for k in 0..q {
            if empty >> k & 1 == 1 {
                r.queues[k].pop_front();
                empties += 1;
            }
        }
        if v[P::ENQ_VALID] == 1 {
            if room {
                let part =
                    Part { tag: v[P::ENQ_TAG], total: v[P::ENQ_PKTS] as u32, next: 0, eligible: now + r.latency };
                r.queues[target].push_back(part);
            } else {
                refused += 1;
            }
        }
        m.posedge().unwrap();
        now += 1;
    }
    (starts, empties, refused)
}

#[test]
fn dma_queue_model_picks_as_the_dma_engines_own_arbiter() {
    let (v3, v4) = (DmaParams::v3(), DmaParams::v4());
    assert_eq!((v3.queues, v3.scheduling, v4.scheduling), (16, Scheduling::RoundRobin, Scheduling::Qos4));
    let mut v4_6 = v4.clone();
    v4_6.queues = 6;
    for (p, depth, lat, seed) in [(&v3, 4, 8, 1), (&v4, 4, 8, 2), (&v4_6, 3, 2, 3), (&v3, 2, 1, 4)] {
        let (starts, empties, refused) = against_engine(p, depth, lat, 100_000, seed);
        assert!(starts > 10_000 && empties > 1_000 && refused > 1_000, "{starts} {empties} {refused}");
    }
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};
    use trnsim_kernel::SimRng;
    use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
    use trnsim_rtl::rtl::Rtl;
    use trnsim_rtl::stimulus::Replay;
    use trnsim_rtl::verilator_sys::models::{DmaQueueQ16D4, DmaQueueQ6D3Qos};
    use trnsim_rtl::verilator_sys::Verilated;

    #[test]
    fn dma_queue_q16_rtl_matches_model_for_1m_random_cycles() {
        let t = std::time::Instant::now();
        let cfg = DiffConfig::dma_queue(1_000_000);
        let r =
            diff(|| DmaQueue::new(16, 4, 8, false), Rtl::<DmaQueueQ16D4>::new, || DmaQueueStimulus::new(16, 61), &cfg);
        let r = r.unwrap_or_else(|e| panic!("{e}"));
        let dt = t.elapsed().as_secs_f64();
        eprintln!("dma_queue q16: {} cycles in {dt:.2} s = {:.2} Mcycles/s", r.cycles, r.cycles as f64 / dt / 1e6);
        assert!(r.high("start").unwrap() > 100_000 && r.high("start_last").unwrap() > 30_000, "{:?}", r.high_cycles);
    }

    #[test]
    fn dma_queue_q6_qos_rtl_matches_model() {
        let cfg = DiffConfig::dma_queue(300_000);
        let r =
            diff(|| DmaQueue::new(6, 3, 2, true), Rtl::<DmaQueueQ6D3Qos>::new, || DmaQueueStimulus::new(6, 7), &cfg);
        r.unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn dma_queue_port_widths_match_the_model() {
        for (m, ports) in [
            (DmaQueue::new(16, 4, 8, false), <DmaQueueQ16D4 as Verilated>::PORTS),
            (DmaQueue::new(6, 3, 2, true), <DmaQueueQ6D3Qos as Verilated>::PORTS),
        ] {
            assert_eq!(ports.len(), m.ports().len());
            for p in m.ports() {
                assert_eq!(ports.iter().find(|q| q.name == p.name), Some(p), "{}", p.name);
            }
        }
    }

    #[derive(Arbitrary, Debug)]
    struct Step {
        rst: u8, // reset only when 0: rare
        enq: bool,
        queue: u8,
        tag: u8,
        pkts: u8,
        ok: u8,
        /// Hold the step this many cycles (descriptors age, queues fill).
        hold: u8,
    }

    fn vectors(bytes: &[u8]) -> Vec<Vec<u128>> {
        let mut u = Unstructured::new(bytes);
        let mut out = Vec::new();
        while let Ok(s) = Step::arbitrary(&mut u) {
            if u.is_empty() {
                break;
            }
            let mut v = vec![0u128; 16];
            v[P::RST] = (s.rst == 0) as u128;
            v[P::ENQ_VALID] = s.enq as u128;
            v[P::ENQ_QUEUE] = u128::from(s.queue);
            v[P::ENQ_TAG] = u128::from(s.tag);
            v[P::ENQ_PKTS] = u128::from(if s.pkts > 200 { s.pkts } else { s.pkts % 4 });
            v[P::START_OK] = (s.ok % 4 != 0) as u128;
            out.push(v.clone());
            v[P::RST] = 0;
            out.extend(std::iter::repeat_n(v, s.hold as usize % 12));
        }
        out
    }

    #[test]
    fn fuzz_dma_queue_rtl_never_diverges_from_model_on_arbitrary_stimulus() {
        let mut rng = SimRng::new(0xd3a, 0);
        let mut total = 0;
        for c in 0..120 {
            let log_len = 8 + rng.below(5);
            let len = rng.below(1 << log_len) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let vs = vectors(&bytes);
            total += vs.len();
            let cfg = DiffConfig::dma_queue(vs.len() as u64);
            let r = if c % 2 == 0 {
                diff(|| DmaQueue::new(16, 4, 8, false), Rtl::<DmaQueueQ16D4>::new, || Replay(vs.clone()), &cfg)
            } else {
                diff(|| DmaQueue::new(6, 3, 2, true), Rtl::<DmaQueueQ6D3Qos>::new, || Replay(vs.clone()), &cfg)
            };
            r.unwrap_or_else(|e| panic!("case {c}: {e}"));
        }
        assert!(total > 20_000, "{total} cycles fuzzed");
    }

    /// For scripts/mutate.sh (run with `--ignored`): both configurations for `DMAQ_DIFF_CYCLES`
    /// cycles (default 1M) from `DMAQ_DIFF_SEED`; prints cycles-to-detection and fails on a
    /// divergence.
    #[test]
    #[ignore]
    fn dma_queue_diff_probe() {
        let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|s| s.parse().ok()).unwrap_or(d);
        let (cycles, seed) = (env("DMAQ_DIFF_CYCLES", 1_000_000), env("DMAQ_DIFF_SEED", 1));
        let cfg = DiffConfig::dma_queue(cycles);
        let runs = [
            (
                "q16_d4",
                diff(
                    || DmaQueue::new(16, 4, 8, false),
                    Rtl::<DmaQueueQ16D4>::new,
                    || DmaQueueStimulus::new(16, seed),
                    &cfg,
                ),
            ),
            (
                "q6_d3_qos",
                diff(
                    || DmaQueue::new(6, 3, 2, true),
                    Rtl::<DmaQueueQ6D3Qos>::new,
                    || DmaQueueStimulus::new(6, seed),
                    &cfg,
                ),
            ),
        ];
        let mut failed = false;
        for (name, r) in runs {
            match r {
                Ok(r) => println!("dma_queue {name}: {} cycles, no divergence", r.cycles),
                Err(DiffError::Diverged(d)) => {
                    println!("dma_queue {name}: DETECTED after {} cycles\n{d}", d.cycle + 1);
                    failed = true;
                }
                Err(e) => {
                    println!("dma_queue {name}: DETECTED ({e})");
                    failed = true;
                }
            }
        }
        assert!(!failed, "divergence");
    }
}
