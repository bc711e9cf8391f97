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
//! 3. `CC-core 0` on a core hooked to its chip's collective engine: a `collective` slice
//!    per collective the core starts, from the doorbell its semaphore unit rings to the
//!    completion it hears back (collectives in flight together spill onto further rows);
//! 4. a counter per semaphore the program uses, `S[<k>] (<Engine>)`, named for the engine
//!    that waits on it (or, if none waits, the one that signals it), its value over time;
//! 5. counters, in this order: `DMA Throughput` (GB/s: bytes the core's DMA engines
//!    completed in the trailing microsecond, written at a packet at most every 100 ns, 0 when
//!    the last command completes), `Sb Usage` and `PSUM Usage` (% of the State Buffer and of
//!    PSUM holding live data, [`crate::occupancy`]), `Throttling` on a core whose array
//!    throttles (`costs.tensor.throttle`: the % of the full rate each matmul issued under),
//!    `Pending DMA Count` (commands accepted and not yet complete), `MFU` (each matmul's
//!    flops over the array's peak in its format, for the time since the previous matmul
//!    ended, in %) and `HFU` (the cycles each matmul held the array, throttled cycles
//!    included, over the same time, in %: the array's hardware use, padding and throttle
//!    included, where MFU counts only the multiply-adds the program asked for).
//!
//! Neuron Explorer's screenshots show these names; the order of its counter rows is not
//! documented, so the counters keep the order above. Left out, with the reason: model FLOPs
//! in the profiler's sense (MFU there counts the model's FLOPs, which a core program does not
//! carry; here MFU counts the multiply-adds the program's matmuls do). HBM throughput is on the HBM stack's own
//! tracks (`chN.pcM bandwidth`), which follow the core's.
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
    /// The tensor engine's `MFU` counter.
    pub mfu: Option<TrackId>,
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

/// What the core has besides its program, for its layout.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoreShape {
    /// The DMA block's (engines, queues), when the program starts DMAs.
    pub dma: Option<(u32, u32)>,
    /// The tensor array throttles (`costs.tensor.throttle`).
    pub throttles: bool,
    /// The core is hooked to its chip's collective engine.
    pub collectives: bool,
}

/// A core's tracks in the Explorer's order.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Per engine with a stream.
    pub engines: Vec<(Engine, EngineTracks)>,
    /// The DMA block's, if the program starts DMAs.
    pub dma: Option<DmaLayout>,
    /// `CC-core 0`, on a core hooked to a collective engine.
    pub cc: Option<TrackId>,
    /// `S[k] (Engine)` counter per semaphore the program uses (index = semaphore).
    pub sems: Vec<Option<TrackId>>,
    /// `Sb Usage` and `PSUM Usage` (%).
    pub usage: (TrackId, TrackId),
}

impl Layout {
    /// Declares core `name`'s tracks for `program` on a core of `shape`, in the Explorer's
    /// order, in group `name`.
    pub fn declare(b: &mut SimBuilder, name: &str, program: &Program, shape: CoreShape) -> Layout {
        let mut t = |row: &str, kind: TrackKind| b.group_track(&format!("{name}.{row}"), kind);
        let pct = || TrackKind::Counter { unit: "%" };
        let mut engines = Vec::new();
        for e in ENGINE_ORDER {
            if !program.streams.iter().any(|(x, _)| *x == e) {
                continue;
            }
            let instr = t(&format!("{} Engine - Row 0", engine_row(e)), TrackKind::Slice);
            let matrix = (e == Engine::Tensor).then(|| t("TensorMatrix Engine - Row 0", TrackKind::Slice));
            engines.push((e, EngineTracks { instr, matrix, mfu: None, hfu: None, throttling: None }));
        }
        let dma = shape.dma.map(|(n, q)| {
            let engines = (0..n).map(|k| t(&format!("DMA Engine {k} - Row 0"), TrackKind::Slice)).collect();
            let queues = (0..q).map(|k| t(&format!("DMA Queue {k}"), TrackKind::Slice)).collect();
            (engines, queues)
        });
        let cc = shape.collectives.then(|| t("CC-core 0", TrackKind::Slice));
        let mut sems = vec![None; SEMAPHORES];
        for (k, owner) in sem_owners(program).into_iter().enumerate() {
            if let Some(owner) = owner {
                sems[k] = Some(t(&format!("S[{k}] ({owner})"), TrackKind::Counter { unit: "" }));
            }
        }
        let throughput = dma.as_ref().map(|_| t("DMA Throughput", TrackKind::Counter { unit: "GB/s" }));
        let usage = (t("Sb Usage", pct()), t("PSUM Usage", pct()));
        let tensor = engines.iter().any(|(e, _)| *e == Engine::Tensor);
        let throttling = (tensor && shape.throttles).then(|| t("Throttling", pct()));
        let dma = dma.zip(throughput).map(|((engines, queues), throughput)| DmaLayout {
            engines,
            queues,
            throughput,
            pending: t("Pending DMA Count", TrackKind::Counter { unit: "" }),
        });
        let (mfu, hfu) = if tensor { (Some(t("MFU", pct())), Some(t("HFU", pct()))) } else { (None, None) };
        for (e, tr) in &mut engines {
            if *e == Engine::Tensor {
                (tr.mfu, tr.hfu, tr.throttling) = (mfu, hfu, throttling);
            }
        }
        Layout { engines, dma, cc, sems, usage }
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
        let shape = CoreShape { dma: Some((16, 16)), throttles: true, collectives: true };
        let l = Layout::declare(&mut b, "nc0", &program, shape);
        let mut ids: Vec<u32> = Vec::new();
        let engines: Vec<Engine> = l.engines.iter().map(|(e, _)| *e).collect();
        assert_eq!(engines, [Engine::Vector, Engine::Scalar, Engine::Sync]);
        ids.extend(l.engines.iter().map(|(_, t)| t.instr.0));
        let dma = l.dma.as_ref().unwrap();
        ids.extend(dma.engines.iter().map(|t| t.0));
        ids.extend(dma.queues.iter().map(|t| t.0));
        ids.push(l.cc.unwrap().0);
        let sems: Vec<(usize, u32)> = l.sems.iter().enumerate().filter_map(|(k, t)| t.map(|t| (k, t.0))).collect();
        assert_eq!(sems.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 3, 7], "the semaphores the program names");
        ids.extend(sems.iter().map(|s| s.1));
        ids.extend([dma.throughput.0, l.usage.0 .0, l.usage.1 .0, dma.pending.0]);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "declaration order: {ids:?}");
        assert!(
            l.engines
                .iter()
                .all(|(_, t)| t.hfu.is_none() && t.mfu.is_none() && t.matrix.is_none() && t.throttling.is_none()),
            "no tensor engine: no MFU, HFU or Throttling"
        );
    }

    /// A tensor engine's counters: `Throttling` after the usage counters, before `Pending DMA
    /// Count`; `MFU` and `HFU` last.
    #[test]
    fn a_tensor_engines_counters_follow_in_the_profilers_order() {
        let text = ".engine sync\n    dma_start q0 hbm 0x0 stride 256 -> sbuf[0:128] +0x0 [128:1] bf16, bytes=256\n    halt\n\n.engine tensor\n    ldweights sbuf[0:128] +0x0 [128:1] bf16\n    matmul sbuf[0:128] +0x0 [128:1] bf16 -> psum[0:128] bank0 [128:1] fp32, overwrite\n    halt\n";
        let program = assemble("t.asm", text, &AsmOptions::default()).unwrap();
        let mut b = SimBuilder::new();
        let shape = CoreShape { dma: Some((16, 16)), throttles: true, collectives: false };
        let l = Layout::declare(&mut b, "nc0", &program, shape);
        let (t, dma) = (l.engine(Engine::Tensor).unwrap(), l.dma.as_ref().unwrap());
        let ids = [
            dma.throughput.0,
            l.usage.0 .0,
            l.usage.1 .0,
            t.throttling.unwrap().0,
            dma.pending.0,
            t.mfu.unwrap().0,
            t.hfu.unwrap().0,
        ];
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "declaration order: {ids:?}");
        assert!(l.cc.is_none(), "no collective engine, no CC-core row");
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
