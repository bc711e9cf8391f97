//! A traced core's tracks laid out as AWS Neuron Explorer lays out a device profile (its
//! Device Trace Viewer; source A11 in docs/sources.md), so that a user who knows
//! that view finds the same rows here, in the same order, in the core's group (`nc0`):
//!
//! 1. instruction rows per engine, `<Engine> Engine - Row 0` (Tensor for LoadStationary and
//!    Transpose, TensorMatrix for MultiplyMoving, then Vector, Scalar, GpSimd, Sync), a slice
//!    per instruction named by its opcode; instructions that overlap (a pipelined engine has
//!    several in flight) spill onto `- Row 1`, `- Row 2`, ... as the profiler's rows do;
//! 2. `DMA Engine <n> - Row 0` per DMA engine (a `packet` slice per packet, with its bytes),
//!    numbered as the core's engines are, then `DMA Queue <q>` per queue (a `dma` slice per
//!    command, from its arrival to its last write);
//! 3. a counter per semaphore the program uses, `S[<k>] (<Engine>)`, named for the engine
//!    that waits on it (or, if none waits, the one that signals it), its value over time;
//! 4. counters: `DMA Throughput` (GB/s: bytes the core's DMA engines completed in the
//!    trailing microsecond, written at a packet at most every 100 ns, 0 when the last command
//!    completes),
//!    `Pending DMA Count` (commands accepted and not yet complete), `HFU` (the tensor array's
//!    hardware FLOPs utilization in %: each matmul's flops over the array's peak for the time
//!    since the previous matmul ended), and on a core whose array throttles
//!    (`costs.tensor.throttle`) `Throttling` (the % of the full rate each matmul issued under).
//!
//! Left out, with the reason: `Sb Usage` and `PSUM Usage` (the model does not allocate SBUF
//! or PSUM: programs address them directly, so there is no occupancy to show), MFU (model FLOPs
//! need the model, which a core program does not have), CC-core rows (collectives run on the
//! chip's collective engine, traced on the fabric's tracks). HBM throughput is on the HBM
//! stack's own tracks (`chN.pcM bandwidth`), which follow the core's.
//!
//! Only a traced run with [`crate::core::CoreOptions::trace_tracks`] declares these; otherwise
//! engines write to their component's own track.

use crate::isa::{Engine, Instr, Program};
use crate::sem::SEMAPHORES;
use trnsim_kernel::{SimBuilder, TrackId, TrackKind};

/// The Explorer name of an engine's instruction row.
pub fn engine_row(engine: Engine) -> &'static str {
    match engine {
        Engine::Tensor => "Tensor",
        Engine::Vector => "Vector",
        Engine::Scalar => "Scalar",
        Engine::GpSimd => "GpSimd",
        Engine::Sync => "Sync",
    }
}

/// The rows the Explorer shows engines in.
const ENGINE_ORDER: [Engine; 5] = [Engine::Tensor, Engine::Vector, Engine::Scalar, Engine::GpSimd, Engine::Sync];

/// One engine's tracks.
#[derive(Clone, Copy, Debug)]
pub struct EngineTracks {
    /// Its instruction row (`Tensor Engine - Row 0` for the tensor engine's loads).
    pub instr: TrackId,
    /// The tensor engine's `TensorMatrix Engine - Row 0` (MultiplyMoving).
    pub matrix: Option<TrackId>,
    /// The tensor engine's `HFU` counter.
    pub hfu: Option<TrackId>,
    /// The tensor engine's `Throttling` counter (a core whose array throttles).
    pub throttling: Option<TrackId>,
}

/// The DMA block's tracks.
#[derive(Clone, Debug)]
pub struct DmaLayout {
    /// `DMA Engine <n> - Row 0`, per engine.
    pub engines: Vec<TrackId>,
    /// `DMA Queue <q>`, per queue.
    pub queues: Vec<TrackId>,
    /// `DMA Throughput` (GB/s).
    pub throughput: TrackId,
    /// `Pending DMA Count`.
    pub pending: TrackId,
}

/// A core's tracks in the Explorer's order.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Per engine with a stream.
    pub engines: Vec<(Engine, EngineTracks)>,
    /// The DMA block's, if the program starts DMAs.
    pub dma: Option<DmaLayout>,
    /// `S[k] (Engine)` counter per semaphore the program uses (index = semaphore).
    pub sems: Vec<Option<TrackId>>,
}

impl Layout {
    /// Declares core `name`'s tracks for `program` (DMA: `dma` = (engines, queues) when it
    /// starts DMAs), in the Explorer's order, in group `name`.
    pub fn declare(b: &mut SimBuilder, name: &str, program: &Program, dma: Option<(u32, u32)>) -> Layout {
        let mut t = |row: &str, kind: TrackKind| b.group_track(&format!("{name}.{row}"), kind);
        let mut engines = Vec::new();
        for e in ENGINE_ORDER {
            if !program.streams.iter().any(|(x, _)| *x == e) {
                continue;
            }
            let instr = t(&format!("{} Engine - Row 0", engine_row(e)), TrackKind::Slice);
            let matrix = (e == Engine::Tensor).then(|| t("TensorMatrix Engine - Row 0", TrackKind::Slice));
            engines.push((e, EngineTracks { instr, matrix, hfu: None, throttling: None }));
        }
        let dma = dma.map(|(n, q)| {
            let engines = (0..n).map(|k| t(&format!("DMA Engine {k} - Row 0"), TrackKind::Slice)).collect();
            let queues = (0..q).map(|k| t(&format!("DMA Queue {k}"), TrackKind::Slice)).collect();
            (engines, queues)
        });
        let mut sems = vec![None; SEMAPHORES];
        for (k, owner) in sem_owners(program).into_iter().enumerate() {
            if let Some(owner) = owner {
                sems[k] = Some(t(&format!("S[{k}] ({owner})"), TrackKind::Counter { unit: "" }));
            }
        }
        let dma = dma.map(|(engines, queues)| DmaLayout {
            engines,
            queues,
            throughput: t("DMA Throughput", TrackKind::Counter { unit: "GB/s" }),
            pending: t("Pending DMA Count", TrackKind::Counter { unit: "" }),
        });
        let hfu = engines.iter().any(|(e, _)| *e == Engine::Tensor).then(|| t("HFU", TrackKind::Counter { unit: "%" }));
        for (e, tr) in &mut engines {
            if *e == Engine::Tensor {
                tr.hfu = hfu;
            }
        }
        Layout { engines, dma, sems }
    }

    /// Declares the tensor engine's `Throttling` counter (% of the array's full rate it is
    /// held to), after the other counters, when the program has a tensor stream.
    pub fn declare_throttling(&mut self, b: &mut SimBuilder, name: &str) {
        for (e, tr) in &mut self.engines {
            if *e == Engine::Tensor {
                tr.throttling = Some(b.group_track(&format!("{name}.Throttling"), TrackKind::Counter { unit: "%" }));
            }
        }
    }

    /// The tracks of engine `e`, if it has a stream.
    pub fn engine(&self, e: Engine) -> Option<EngineTracks> {
        self.engines.iter().find(|(x, _)| *x == e).map(|(_, t)| *t)
    }
}

/// Per semaphore, the Explorer name of the engine it belongs to: the first engine (in stream
/// order) that waits on it, else the first that signals it, else `DMA` if only DMAs
/// increment it; None if the program never names it.
pub fn sem_owners(program: &Program) -> Vec<Option<&'static str>> {
    let mut waiter: Vec<Option<&'static str>> = vec![None; SEMAPHORES];
    let mut signaller: Vec<Option<&'static str>> = vec![None; SEMAPHORES];
    for (e, stream) in &program.streams {
        for i in &stream.instrs {
            let (sem, waits, who) = match i {
                Instr::SemWait { sem, .. } => (*sem, true, engine_row(*e)),
                Instr::SemSet { sem, .. } | Instr::SemInc { sem, .. } => (*sem, false, engine_row(*e)),
                Instr::DmaStart { sem: Some(sem), .. } => (*sem, false, "DMA"),
                _ => continue,
            };
            let Some(slot) = (if waits { waiter.get_mut(sem.0 as usize) } else { signaller.get_mut(sem.0 as usize) })
            else {
                continue;
            };
            slot.get_or_insert(who);
        }
    }
    waiter.into_iter().zip(signaller).map(|(w, s)| w.or(s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::asm::{assemble, AsmOptions};

    const PROGRAM: &str = "\
.engine sync
    dma_start q2 hbm 0x0 stride 2048 -> sbuf[0:128] +0x0 [512:1] fp32, bytes=2048, sem=s0
    halt

.engine vector
    sem_wait s0 >= 16
    tensor_reduce max sbuf[0:128] +0x0 [512:1] fp32 -> sbuf[0:128] +0x800 [1:1] fp32
    sem_inc s7, 1
    halt

.engine scalar
    sem_wait s7 >= 1
    sem_inc s3, 1
    halt
";

    /// The rows are declared in the profiler's order: engines (Explorer order, not stream
    /// order), DMA engines, DMA queues, semaphores, then the counters; the writers keep
    /// declaration order (`sibling_order_rank`, `thread_sort_index`).
    #[test]
    fn rows_are_declared_in_the_profilers_order() {
        let program = assemble("t.asm", PROGRAM, &AsmOptions::default()).unwrap();
        let mut b = SimBuilder::new();
        let l = Layout::declare(&mut b, "nc0", &program, Some((16, 16)));
        let mut ids: Vec<u32> = Vec::new();
        let engines: Vec<Engine> = l.engines.iter().map(|(e, _)| *e).collect();
        assert_eq!(engines, [Engine::Vector, Engine::Scalar, Engine::Sync]);
        ids.extend(l.engines.iter().map(|(_, t)| t.instr.0));
        let dma = l.dma.as_ref().unwrap();
        ids.extend(dma.engines.iter().map(|t| t.0));
        ids.extend(dma.queues.iter().map(|t| t.0));
        let sems: Vec<(usize, u32)> = l.sems.iter().enumerate().filter_map(|(k, t)| t.map(|t| (k, t.0))).collect();
        assert_eq!(sems.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 3, 7], "the semaphores the program names");
        ids.extend(sems.iter().map(|s| s.1));
        ids.extend([dma.throughput.0, dma.pending.0]);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "declaration order: {ids:?}");
        assert!(l.engines.iter().all(|(_, t)| t.hfu.is_none() && t.matrix.is_none()), "no tensor engine, no HFU");
    }

    #[test]
    fn a_semaphore_is_named_for_the_engine_that_waits_on_it() {
        let program = assemble("t.asm", PROGRAM, &AsmOptions::default()).unwrap();
        let owners = sem_owners(&program);
        assert_eq!(
            (owners[0], owners[7], owners[3], owners[1]),
            (Some("Vector"), Some("Scalar"), Some("Scalar"), None)
        );
    }
}
