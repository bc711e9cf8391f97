//! Assembly of one NeuronCore: an engine component per instruction stream (each on its own
//! clock), the semaphore unit and the SBUF/PSUM unit, wired with links.
//!
//! ```text
//!   tensor (2.4 GHz) ─┐            ┌─ SemUnit (semaphores)
//!   vector (1.2 GHz) ─┤  SemOp ───►│
//!   scalar (1.2 GHz) ─┤◄── grant ──┘
//!   gpsimd (1.2 GHz) ─┤  MemAccess ──► CoreMem (SBUF + PSUM, 2.4 GHz)
//!   sync   (1.2 GHz) ─┘◄── MemDone ───┘
//! ```

use crate::coremem::{CoreMem, MemPort};
use crate::dma::{DmaBlock, DmaParams, DmaPorts};
use crate::engine::{EnginePorts, EngineUnit};
use crate::isa::{Engine, Instr, Program, Sem};
use crate::msg::{DmaCmd, MemAccess, MemDone, SemGrant, SemOp};
use crate::sem::SemCollective;
use crate::sem::{SemPort, SemUnit};
use crate::spec::CoreSpec;
use std::sync::Arc;
use trnsim_kernel::{Bandwidth, ClockId, ComponentId, Cycles, Frequency, InPort, LinkSpec, OutPort, SimBuilder};
use trnsim_mem::hbm::{MemReq, MemResp};

/// Options of a core.
#[derive(Clone, Debug)]
pub struct CoreOptions {
    /// The core's description (clocks, tensor array and rates, SBUF/PSUM, DMA, semaphores).
    pub spec: Arc<CoreSpec>,
    /// Compute real values.
    pub functional: bool,
    /// DMA parameters (None: the core's own, `spec.dma`).
    pub dma: Option<DmaParams>,
    /// Declare trace tracks for the DMA engines.
    pub trace_tracks: bool,
    /// Hook the semaphore unit to a chip's collective engine (None: no collectives).
    pub collective: Option<CollectiveHookup>,
    /// Share clock domains with other cores: clocks named `{prefix}.{engine|mem|dma}` instead of
    /// `{core}.{..}` (None: each core has its own clocks).
    pub shared_clocks: Option<String>,
}

/// How a core reaches its chip's collective engine (spec §7): increments of `doorbell` are
/// forwarded to the engine component `engine` as triggers, and each collective it completes
/// increments `done`. The engine's ends of the two links are returned in
/// [`CoreIds::collective`].
#[derive(Clone, Copy, Debug)]
pub struct CollectiveHookup {
    /// The engine's component (reserved; the caller installs it).
    pub engine: ComponentId,
    /// Semaphore whose increments trigger.
    pub doorbell: Sem,
    /// Semaphore completions increment.
    pub done: Sem,
    /// Link latency each way, in the core's fast (2.4 GHz) cycles.
    pub latency: u64,
}

/// The collective engine's ends of a core's hookup: doorbell deltas in, completions out.
#[derive(Clone, Copy, Debug)]
pub struct CollectivePorts {
    /// Doorbell deltas from the core's semaphore unit.
    pub doorbell: InPort<u32>,
    /// Completions to the core's semaphore unit (each value is added to the done semaphore).
    pub done: OutPort<u32>,
}

impl Default for CoreOptions {
    fn default() -> Self {
        CoreOptions {
            spec: crate::spec::nc_v4(),
            functional: false,
            dma: None,
            trace_tracks: false,
            collective: None,
            shared_clocks: None,
        }
    }
}

/// Component ids of a built core.
#[derive(Clone, Debug)]
pub struct CoreIds {
    /// Engines with a stream, in stream order.
    pub engines: Vec<(Engine, ComponentId)>,
    /// The semaphore unit.
    pub sem: ComponentId,
    /// The SBUF/PSUM unit.
    pub mem: ComponentId,
    /// The clock of each engine.
    pub clocks: Vec<(Engine, ClockId)>,
    /// The DMA block, if the core has one.
    pub dma: Option<ComponentId>,
    /// The collective engine's ends of the hookup, if [`CoreOptions::collective`] was set.
    pub collective: Option<CollectivePorts>,
}

/// The HBM stack a core's DMA engines talk to: its (reserved, not yet installed) component id
/// and the stack itself, to which `build` adds one port pair per DMA engine.
pub struct HbmHookup<'a> {
    /// The stack's component id.
    pub id: ComponentId,
    /// The stack, or its declaration (installed by the caller after every core is built).
    pub stack: &'a mut dyn trnsim_mem::hbm::StackSetup,
}

fn link(latency: u64, depth: u32) -> LinkSpec {
    LinkSpec { latency: Cycles(latency), depth, credit_latency: Cycles(1), bandwidth: Bandwidth::Unlimited }
}

/// Every matmul operand's format is one the core's tensor engine multiplies, and every
/// quantize_mx runs on a core that has it.
fn check_formats(program: &Program, spec: &CoreSpec) -> Result<(), String> {
    for (engine, stream) in &program.streams {
        for (i, instr) in stream.instrs.iter().enumerate() {
            let line = stream.lines.get(i).copied().unwrap_or(0);
            let src = match instr {
                Instr::LoadStationary { src, .. } | Instr::MultiplyMoving { src, .. } => src,
                Instr::QuantizeMx { .. } if spec.costs.vector.quantize_mx.is_none() => {
                    return Err(format!(
                        "{}:{line}: {engine}: core {} has no quantize_mx (costs.vector.quantize_mx is None)",
                        program.source, spec.name
                    ))
                }
                _ => continue,
            };
            let (f, packing) = (src.dtype.name(), crate::spec::isa_packing(src.dtype));
            match spec.rate(src.dtype) {
                None => {
                    return Err(format!(
                        "{}:{line}: {engine}: core {} has no {f} matmul (tensor.formats.{f} is None)",
                        program.source, spec.name
                    ))
                }
                Some(r) if r.macs_per_pe != packing => {
                    return Err(format!(
                        "{}:{line}: {engine}: core {}'s {f} matmul does {} MACs per PE per column (tensor.formats.{f}.macs_per_pe); the ISA's {f} operand packs {packing} K-row(s) per partition, so only the workload roofline runs it",
                        program.source, spec.name, r.macs_per_pe
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// True if some stream starts a DMA.
fn uses_dma(program: &Program) -> bool {
    program.streams.iter().any(|(_, s)| s.instrs.iter().any(|i| matches!(i, Instr::DmaStart { .. })))
}

/// Builds core `name` running `program` into `b`. Clocks are named `{name}.{engine}` and
/// `{name}.mem`. A program that starts DMAs needs `hbm`: the DMA block (16 engines) gets one
/// port pair on that stack per DMA engine.
pub fn build(
    b: &mut SimBuilder,
    name: &str,
    program: &Program,
    opts: &CoreOptions,
    hbm: Option<HbmHookup<'_>>,
) -> Result<CoreIds, String> {
    build_hooked(b, name, program, opts, hbm, CoreHooks::default())
}

/// A hook on one bank of a core's SBUF (`psum` false) or PSUM: the swap-in of an RTL bank.
pub type MemBankHook = (bool, Box<dyn trnsim_mem::sram::BankPortHook>);

/// A hook on one DMA engine's queues (engine index, hook): the swap-in of an RTL queue block.
pub type DmaQueueHook = (u32, Box<dyn crate::dma::QueueHook>);

/// The swap-ins' hooks of one core.
#[derive(Default)]
pub struct CoreHooks {
    /// On banks of the SBUF and PSUM.
    pub banks: Vec<MemBankHook>,
    /// On DMA engines' queues (the core must start DMAs).
    pub dma_queues: Vec<DmaQueueHook>,
}

/// [`build`] with hooks on banks of the core's SBUF and PSUM and on its DMA engines' queues
/// (the error names a bank or engine that does not exist).
pub fn build_hooked(
    b: &mut SimBuilder,
    name: &str,
    program: &Program,
    opts: &CoreOptions,
    hbm: Option<HbmHookup<'_>>,
    hooks: CoreHooks,
) -> Result<CoreIds, String> {
    let CoreHooks { banks: bank_hooks, dma_queues } = hooks;
    let e = |x: trnsim_kernel::BuildError| x.to_string();
    let sem_latency = opts.spec.semaphores.latency_cycles;
    let clock = |b: &mut SimBuilder, what: &str, f: Frequency| match &opts.shared_clocks {
        Some(p) => b.shared_clock(&[p, ".", what].concat(), f).map_err(e),
        None => b.clock(&[name, ".", what].concat(), f).map_err(e),
    };
    check_formats(program, &opts.spec)?;
    // The Explorer layout's tracks come first in the core's group, in the profiler's order.
    let layout = (opts.trace_tracks && b.declares_tracks()).then(|| {
        let dma = uses_dma(program).then(|| {
            let p = opts.dma.as_ref().unwrap_or(&opts.spec.dma);
            (p.engines, p.queues)
        });
        let shape = crate::layout::CoreShape {
            dma,
            throttles: opts.spec.costs.tensor.throttle.enabled,
            collectives: opts.collective.is_some(),
        };
        crate::layout::Layout::declare(b, name, program, shape)
    });
    let fast = clock(b, "mem", opts.spec.clocks.mem)?;
    // (Names joined with `concat`, not `format!`: a 144-chip system builds a quarter of a
    // million of them.)
    let sem = b.reserve(&[name, ".sem"].concat(), fast).map_err(e)?;
    let mem = b.reserve(&[name, ".sbuf"].concat(), fast).map_err(e)?;
    let dma_needed = uses_dma(program);
    if !dma_needed && !dma_queues.is_empty() {
        return Err(format!("{name}: a DMA engine is swapped in, but {} starts no DMA", program.source));
    }
    if dma_needed && hbm.is_none() {
        return Err(format!("{} starts DMAs but core {name} has no HBM stack to reach", program.source));
    }
    let dma_id = if dma_needed {
        let params = opts.dma.clone().unwrap_or_else(|| opts.spec.dma.clone());
        let clk = clock(b, "dma", params.clock)?;
        // A command waits its start latency with nothing moving: not a deadlock.
        b.expect_silence(params.start_latency);
        Some((b.reserve(&[name, ".dma"].concat(), clk).map_err(e)?, params))
    } else {
        None
    };
    // Sized once: a 144-chip system declares these for 1,152 cores in every partition.
    let (streams, dma_engines) = (program.streams.len(), dma_id.as_ref().map_or(0, |(_, p)| p.engines as usize));
    let mut engines = Vec::with_capacity(streams);
    let mut clocks = Vec::with_capacity(streams);
    let mut sem_ports = Vec::with_capacity(streams + 1);
    let mut mem_ports = Vec::with_capacity(streams + dma_engines);
    let mut clients = Vec::with_capacity(streams + dma_engines);
    let mut dma_cmds = Vec::with_capacity(streams);
    for (engine, stream) in &program.streams {
        let clk = clock(b, engine.name(), opts.spec.clock(*engine))?;
        let en = engine.name();
        let id = b.reserve(&[name, ".", en].concat(), clk).map_err(e)?;
        let (sem_out, sem_in) = b.link::<SemOp>(id, "sem", sem, [en, ".op"], link(sem_latency, 4)).map_err(e)?;
        let (grant_out, grant_in) =
            b.link::<SemGrant>(sem, [en, ".grant"], id, "grant", link(sem_latency, 2)).map_err(e)?;
        let (mem_out, mem_in) = b.link::<MemAccess>(id, "mem", mem, [en, ".req"], link(1, 4096)).map_err(e)?;
        let (done_out, done_in) = b.link::<MemDone>(mem, [en, ".done"], id, "mem_done", link(1, 4096)).map_err(e)?;
        sem_ports.push(SemPort { ops: sem_in, grants: Some(grant_out) });
        mem_ports.push(MemPort { req: mem_in, done: done_out });
        if b.builds(mem) {
            clients.push(engine.name().to_string());
        }
        let mut dma = None;
        if let Some((did, _)) = &dma_id {
            if stream.instrs.iter().any(|i| matches!(i, Instr::DmaStart { .. })) {
                let (out, inp) = b.link::<DmaCmd>(id, "dma", *did, [en, ".cmd"], link(1, 64)).map_err(e)?;
                dma = Some(out);
                dma_cmds.push(inp);
            }
        }
        let ports = EnginePorts { sem: sem_out, grant: grant_in, mem: mem_out, mem_done: done_in, dma };
        if b.builds(id) {
            let (engine_kind, stream, functional, model) =
                (*engine, stream.clone(), opts.functional, crate::cost::CostModel::of(&opts.spec));
            let tracks = layout.as_ref().and_then(|l| l.engine(engine_kind));
            b.install_with(id, move || {
                Ok(EngineUnit::new(engine_kind, stream, ports, functional, model).with_tracks(tracks))
            })
            .map_err(e)?;
        } else {
            // (Another partition's: its stream is not copied.)
            b.elsewhere(id).map_err(e)?;
        }
        engines.push((*engine, id));
        clocks.push((*engine, clk));
    }
    let dma_from = mem_ports.len();
    if let (Some((did, params)), Some(h)) = (dma_id.clone(), hbm) {
        let (sem_out, sem_in) = b.link::<SemOp>(did, "sem", sem, "dma.op", link(sem_latency, 64)).map_err(e)?;
        sem_ports.push(SemPort { ops: sem_in, grants: None });
        let mut sbuf_ports = Vec::with_capacity(params.engines as usize);
        let mut hbm_ports = Vec::with_capacity(params.engines as usize);
        let depth = params.outstanding.max(1) * 2;
        for k in 0..params.engines {
            let k = k.to_string();
            let k = k.as_str();
            let (req_out, req_in) =
                b.link::<MemAccess>(did, ["sbuf", k], mem, ["dma", k, ".req"], link(1, 64)).map_err(e)?;
            let (done_out, done_in) =
                b.link::<MemDone>(mem, ["dma", k, ".done"], did, ["sbuf", k, ".done"], link(1, 64)).map_err(e)?;
            mem_ports.push(MemPort { req: req_in, done: done_out });
            if b.builds(mem) {
                clients.push(["dma", k].concat());
            }
            sbuf_ports.push((req_out, done_in));
            let (hreq_out, hreq_in) =
                b.link::<MemReq>(did, ["hbm", k], h.id, [name, ".dma", k, ".req"], link(1, depth)).map_err(e)?;
            let (hresp_out, hresp_in) = b
                .link::<MemResp>(h.id, [name, ".dma", k, ".resp"], did, ["hbm", k, ".resp"], link(1, depth))
                .map_err(e)?;
            h.stack.add_port(hreq_in, hresp_out);
            hbm_ports.push((hreq_out, hresp_in));
        }
        let ports = DmaPorts { cmds: dma_cmds, sem: sem_out, sbuf: sbuf_ports, hbm: hbm_ports };
        params.validate()?;
        let tracks = match layout.as_ref().and_then(|l| l.dma.as_ref()) {
            Some(l) => Some(crate::dma::DmaTracks::from_layout(l)),
            None => opts.trace_tracks.then(|| DmaBlock::tracks(&params, b, did)),
        };
        let functional = opts.functional;
        b.install_with(did, move || {
            let mut block = DmaBlock::try_new(params, ports, functional)?;
            if let Some(t) = tracks {
                block.set_tracks(t);
            }
            for (engine, hook) in dma_queues {
                block.attach_queue_hook(engine, hook)?;
            }
            Ok(block)
        })
        .map_err(e)?;
    }
    let (sbuf, psum) = (opts.spec.sbuf, opts.spec.psum);
    let (functional, core_name) = (opts.functional, name.to_string());
    // Occupancy is worked out from the program only where the unit is made.
    let usage = layout.as_ref().filter(|_| b.builds(mem)).map(|l| (l.usage, program.clone()));
    b.install_with(mem, move || {
        let mut unit = CoreMem::new(&core_name, sbuf, psum, &clients, mem_ports, dma_from, functional)?;
        if let Some((tracks, program)) = usage {
            unit.set_occupancy(crate::occupancy::Occupancy::new(&program, sbuf, psum, tracks));
        }
        for (psum, hook) in bank_hooks {
            unit.attach_bank_hook(psum, hook)?;
        }
        Ok(unit)
    })
    .map_err(e)?;
    let cc_track = layout.as_ref().and_then(|l| l.cc);
    let mut unit = SemUnit::new(sem_ports).with_tracks(layout.map(|l| l.sems).unwrap_or_default());
    let mut collective = None;
    if let Some(h) = opts.collective {
        let (ring, doorbell) =
            b.link::<u32>(sem, "cc.ring", h.engine, ["doorbell.", name], link(h.latency, 64)).map_err(e)?;
        let (done, done_in) =
            b.link::<u32>(h.engine, ["done.", name], sem, "cc.done", link(h.latency, 64)).map_err(e)?;
        unit = unit.with_collective(SemCollective { doorbell: h.doorbell, ring, done_in, done: h.done }, cc_track);
        collective = Some(CollectivePorts { doorbell, done });
    }
    b.install(sem, unit).map_err(e)?;
    Ok(CoreIds { engines, sem, mem, clocks, dma: dma_id.map(|d| d.0), collective })
}
