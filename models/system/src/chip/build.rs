//! Assembles a chip into one kernel simulation with the existing builders: an [`HbmStack`](trnsim_mem::hbm::HbmStack) per
//! stack (named `hbm{k}`, one clock `hbm`) and a NeuronCore per core (named `nc{i}`, built by
//! `trnsim_core::core::build`), core `i`'s 16 DMA engines each getting a port pair on stack
//! `i / cores_per_stack`. Stacks address their own 0-based space (`StackConfig::stacks` = 1).

use super::spec::Chip;
use trnsim_core::core::{build_hooked, CollectiveHookup, CoreHooks, CoreIds, CoreOptions, HbmHookup};
use trnsim_core::engine::EngineUnit;
use trnsim_core::isa::{Program, Sem};
use trnsim_fabric::system::{node_name, ChipHooks, Nodes};
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{ComponentId, Dur, SimBuilder, Simulation, TraceOptions, TraceSink};
use trnsim_mem::hbm::StackDecl;

/// Component ids of a built chip.
#[derive(Clone, Debug)]
pub struct ChipIds {
    /// Each core's ids, core `i` at index `i`.
    pub cores: Vec<CoreIds>,
    /// Each stack's component, stack `k` at index `k`.
    pub stacks: Vec<ComponentId>,
    /// The name prefix the chip was built with (`""` or `"chip003."`).
    pub prefix: String,
    /// The instances of the spec's `rtl` list, swapped in (checked by [`run_to_end_by`]).
    pub swaps: trnsim_rtl::swap_in::SwapSet,
}

impl ChipIds {
    /// The ids of a chip another partition makes, skipped in this one's declaration
    /// ([`build_on_fabric`]): none (nothing here refers to its components).
    pub fn elsewhere() -> ChipIds {
        ChipIds { cores: Vec::new(), stacks: Vec::new(), prefix: String::new(), swaps: Default::default() }
    }
}

/// How [`build_with`] names a chip and hooks it to the rest of a system.
#[derive(Clone, Debug, Default)]
pub struct BuildOpts {
    /// Prefix of every component name (`"chip003."` gives `chip003.nc0.tensor`,
    /// `chip003.hbm1`); empty for a chip alone.
    pub prefix: String,
    /// Stacks and DMA blocks declare their trace tracks (engines always have theirs).
    pub trace_tracks: bool,
    /// Every core's hookup to the chip's collective engine (spec §7), if any.
    pub collective: Option<CollectiveHookup>,
    /// With `trace_tracks`: HBM stacks trace summary counters only (bandwidth and queue depth
    /// per pseudo-channel per window, no command slices), for systems of many chips.
    pub hbm_summary: bool,
}

/// Builds `chip` into `b`, core `i` running `programs[i]` (one program per core). With
/// `trace_tracks`, the stacks and DMA blocks declare their trace tracks (engines always have
/// theirs).
pub fn build(b: &mut SimBuilder, chip: &Chip, programs: &[Program], trace_tracks: bool) -> Result<ChipIds, String> {
    build_with(b, chip, programs, &BuildOpts { trace_tracks, ..BuildOpts::default() })
}

/// [`build`] with a name prefix and a collective hookup ([`BuildOpts`]). Cores and chips
/// share their clock domains, one per frequency (`nc.tensor`, .., `hbm`: every core's engines
/// and every stack run at the same frequencies): a step gathers one pending list per
/// frequency, not one per core, and many chips cost no more scheduler domains than one.
pub fn build_with(b: &mut SimBuilder, chip: &Chip, programs: &[Program], o: &BuildOpts) -> Result<ChipIds, String> {
    let trace_tracks = o.trace_tracks;
    let s = &chip.spec;
    if programs.len() != s.cores as usize {
        return Err(format!("chip {}: {} programs for {} cores (one per core)", s.name, programs.len(), s.cores));
    }
    let e = |x: trnsim_kernel::BuildError| x.to_string();
    let cfg = chip.stack_config();
    let clk = b.shared_clock("hbm", cfg.timing.frequency()).map_err(e)?;
    let mut stacks = Vec::new();
    for k in 0..s.hbm.stacks {
        let mut c = cfg.clone();
        c.index = k;
        c.controller.intake_buffer = intake_for(chip, c.controller.intake_buffer, c.org.pcs());
        c.fidelity = s.hbm.fidelity;
        let id = b.reserve(&format!("{}hbm{k}", o.prefix), clk).map_err(e)?;
        let mut st = StackDecl::new(&c)?;
        if trace_tracks && o.hbm_summary {
            st.declare_summary_tracks(b, id);
        } else if trace_tracks {
            st.declare_tracks(b, id);
        }
        stacks.push((id, st));
    }
    let mut swaps = trnsim_rtl::swap_in::SwapSet::new();
    if !s.rtl.is_empty() {
        // A divergence found by the replay after the run writes both sides' VCDs here.
        swaps.vcd_dir = Some(std::env::temp_dir().join("trnsim-swap-in"));
    }
    use trnsim_rtl::swap_in::{bound_block, parse_binding, Instance};
    let rtl = trnsim_rtl::swap::Impl::Rtl;
    let mut core_hooks: Vec<CoreHooks> = (0..programs.len()).map(|_| CoreHooks::default()).collect();
    let mut links = Vec::new();
    for (i, name) in s.rtl.iter().enumerate() {
        let bind = parse_binding(name).ok_or_else(|| format!("rtl: unknown instance {name:?}"))?;
        let block = bind.block.as_deref().map(|b| bound_block(&bind.instance, b)).transpose()?;
        let bare = if bind.block.is_some() {
            name.rsplit_once('=').map_or(name.as_str(), |(a, _)| a.trim_end())
        } else {
            name
        };
        let instance = format!("{}{bare}", o.prefix);
        match bind.instance {
            Instance::HbmBank(at) => {
                let (_, st) =
                    stacks.get_mut(at.stack as usize).ok_or_else(|| format!("rtl: {name:?}: no such stack"))?;
                swaps.swap_hbm_bank(&instance, st, &chip.hbm.name, at, rtl, block)?;
            }
            Instance::SramBank(at) => {
                let g = chip.core.sram(at.psum);
                let hooks =
                    core_hooks.get_mut(at.core as usize).ok_or_else(|| format!("rtl: {name:?}: no such core"))?;
                hooks
                    .banks
                    .push((at.psum, swaps.swap_sram_bank(&instance, at, (g.read_ports, g.write_ports), rtl, block)?));
            }
            Instance::DmaQueue(at) => {
                let hooks =
                    core_hooks.get_mut(at.core as usize).ok_or_else(|| format!("rtl: {name:?}: no such core"))?;
                hooks.dma_queues.push((at.engine, swaps.swap_dma_queue(&instance, at, &chip.dma, rtl, block)?));
            }
            Instance::Link(l) => {
                let (src, dst) = l.split_once(" -> ").unwrap_or((&l, ""));
                links.push((i, format!("{p}{src} -> {p}{dst}", p = o.prefix), block));
            }
        }
    }
    let opts = CoreOptions {
        spec: chip.core.clone(),
        dma: Some(chip.dma.clone()),
        trace_tracks,
        collective: o.collective,
        shared_clocks: Some("nc".to_string()),
        ..CoreOptions::default()
    };
    let mut cores = Vec::new();
    for ((i, program), hooks) in programs.iter().enumerate().zip(core_hooks) {
        let (id, st) = &mut stacks[chip.stack_of(i as u32) as usize];
        let hbm = Some(HbmHookup { id: *id, stack: st });
        cores.push(build_hooked(b, &format!("{}nc{i}", o.prefix), program, &opts, hbm, hooks)?);
    }
    for (i, l, block) in &links {
        let at = chip.rtl_at.get(*i).map_or("rtl", String::as_str);
        swaps.swap_link(b, l, rtl, *block).map_err(|e| format!("{at}: {e}"))?;
    }
    let ids = stacks.iter().map(|(id, _)| *id).collect();
    for (id, st) in stacks {
        b.install_with(id, move || st.make()).map_err(e)?;
    }
    Ok(ChipIds { cores, stacks: ids, prefix: o.prefix.clone(), swaps })
}

/// Builds `chip` once for each chip `c` of `members` on fabric `topo` (reserved in `b` as
/// `nodes`): named after its fabric node (`chip003.nc0.tensor`), every core hooked to the
/// collective engine `nodes.ids[c]` with the semaphores `doorbell` and `done`, clock domains
/// shared, HBM traced as summary counters when `trace_tracks`. Returns each member's ids (in
/// `members` order) and the collective engines' hooks, one entry per chip of `topo` (empty for
/// chips not built), for `trnsim_fabric::system::build_jobs`.
#[allow(clippy::too_many_arguments)]
pub fn build_on_fabric(
    b: &mut SimBuilder,
    chip: &Chip,
    programs: &[Program],
    topo: &Topology,
    nodes: &Nodes,
    members: &[usize],
    (doorbell, done): (Sem, Sem),
    trace_tracks: bool,
) -> Result<(Vec<ChipIds>, Vec<ChipHooks>), String> {
    let mut chips = Vec::with_capacity(members.len());
    let mut hooks = vec![ChipHooks::default(); topo.chips];
    // Every chip is declared alike: once one has been declared (after the first, which also
    // declares the shared clocks), a partition that makes none of a chip skips it.
    let mut shape = None;
    for (k, &c) in members.iter().enumerate() {
        let node = [nodes.ids[c]];
        if shape.is_some_and(|sh| b.skip_block(&sh, &node)) {
            chips.push(ChipIds::elsewhere());
            continue;
        }
        let mark = b.block_start();
        let opts = BuildOpts {
            prefix: format!("{}.", node_name(topo, c)),
            trace_tracks,
            hbm_summary: true,
            collective: Some(CollectiveHookup { engine: nodes.ids[c], doorbell, done, latency: 4 }),
        };
        let ids = build_with(b, chip, programs, &opts)?;
        if k > 0 && shape.is_none() {
            shape = b.block_end(mark, &node);
        }
        for core in &ids.cores {
            let p = core.collective.ok_or("a core built without its collective hookup")?;
            hooks[c].doorbells.push(p.doorbell);
            hooks[c].done.push(p.done);
        }
        chips.push(ids);
    }
    Ok((chips, hooks))
}

/// Builds `b`, attaches `trace`, runs until idle (at most `limit`), finishes the trace, and
/// checks that every engine of every chip in `chips` finished its stream (an error names the
/// first that did not: `chip003.nc1: tensor engine did not finish its stream ...`, saying
/// whether the run stopped at `limit` or went idle: [`unfinished`]).
pub fn run_to_end(
    b: SimBuilder,
    chips: &[ChipIds],
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    limit: Dur,
) -> Result<Simulation, String> {
    run_to_end_by(b, chips, trace, limit, &|sim, limit| sim.run_until_idle(limit))
}

/// [`run_to_end`], the simulation run by `run` (a caller that shows progress runs it its own
/// way; it must run to idle or `limit`, as `Simulation::run_until_idle` does). Swapped-in
/// instances (a chip's `rtl` list) are checked last: the first one that the system saw refuse
/// a command, or whose recorded inputs diverge from its model on replay, is the error; each
/// clean one prints a line on stderr.
pub fn run_to_end_by(
    b: SimBuilder,
    chips: &[ChipIds],
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
    limit: Dur,
    run: &dyn Fn(&mut Simulation, Dur) -> Result<trnsim_kernel::Stop, trnsim_kernel::RunError>,
) -> Result<Simulation, String> {
    let mut sim = b.build().map_err(|e| e.to_string())?;
    if let Some((sink, opts)) = trace {
        sim.attach_trace(sink, &opts);
    }
    let stop = run(&mut sim, limit).map_err(|e| e.to_string())?;
    sim.finish_trace().map_err(|e| e.to_string())?;
    for ids in chips {
        for (i, core) in ids.cores.iter().enumerate() {
            for (e, id) in &core.engines {
                if !sim.component::<EngineUnit>(*id).ok_or("engine")?.finished() {
                    let at_limit = matches!(stop, trnsim_kernel::Stop::Limit);
                    return Err(unfinished(&format!("{}nc{i}: {e} engine", ids.prefix), at_limit, limit));
                }
            }
        }
    }
    for ids in chips {
        // One line per swapped-in instance on stderr (stdout and --json stay the all-model run's).
        for r in ids.swaps.check()? {
            eprintln!("{r}");
        }
    }
    Ok(sim)
}

/// The error for `who` (`chip003.nc1: tensor engine`) left with its stream unfinished: stopped
/// by the run's time `limit` (a system too slow for the benchmark's window, e.g. a bandwidth
/// set far below the real one) or gone idle with work left.
pub fn unfinished(who: &str, at_limit: bool, limit: Dur) -> String {
    if at_limit {
        format!(
            "{who} did not finish its stream within the run's limit of {limit} of simulated time (the system as set is too slow for this benchmark)"
        )
    } else {
        format!("{who} did not finish its stream: the system went idle with work left")
    }
}

/// The intake buffer of each pseudo-channel of a chip's stack: the preset's, or twice the
/// mean share of one pseudo-channel in the reads its cores' DMA engines can have outstanding,
/// whichever is larger (at most 4096). A controller sized for its requesters: with four cores
/// on a stack (64 engines x 64 reads, 128 per pseudo-channel on average) a 128-entry buffer
/// fills where streams bunch and stalls ports; with two (the stock chips) the preset's 128
/// is that bound already.
fn intake_for(chip: &Chip, preset: u32, pcs: u32) -> u32 {
    let outstanding = u64::from(chip.spec.hbm.cores_per_stack)
        .saturating_mul(u64::from(chip.dma.engines))
        .saturating_mul(u64::from(chip.dma.outstanding));
    let want = outstanding.saturating_mul(2).div_ceil(u64::from(pcs.max(1))).min(4096);
    preset.max(u32::try_from(want).unwrap_or(4096))
}

/// `trace` for a whole-chip run: link occupancy counters off (a chip has thousands of
/// internal links, whose counters would be most of the trace); engines, DMA engines and
/// queues, HBM pseudo-channels and fabric links keep their tracks (docs/multichip.md).
pub fn whole_chip_trace(
    trace: Option<(Box<dyn TraceSink>, TraceOptions)>,
) -> Option<(Box<dyn TraceSink>, TraceOptions)> {
    trace.map(|(sink, o)| (sink, TraceOptions { link_occupancy: false, ..o }))
}

/// Checks, before any run, that every link of the chip's `rtl` list exists: the chip is
/// declared (nothing installed or run) with a program that gives every engine a stream and
/// starts a DMA from every engine that can, so that every link a core can have is declared,
/// and each listed link is looked up by name. The error is the entry's index and a message
/// naming the links into, or out of, the port asked for. Leaves out: the links a system adds
/// around a chip (its collective engine's doorbells), which the build checks.
pub fn check_rtl_links(chip: &Chip) -> Result<(), (usize, String)> {
    use trnsim_rtl::swap_in::{parse_binding, Instance};
    let links: Vec<(usize, String)> = (chip.spec.rtl.iter().enumerate())
        .filter_map(|(i, n)| match parse_binding(n)?.instance {
            Instance::Link(l) => Some((i, l)),
            _ => None,
        })
        .collect();
    let Some(&(first, _)) = links.first() else { return Ok(()) };
    let mut bare = chip.clone();
    bare.spec.rtl.clear();
    bare.rtl_at.clear();
    let programs = vec![every_link_program(); chip.spec.cores as usize];
    let mut b = SimBuilder::new();
    build(&mut b, &bare, &programs, false).map_err(|e| (first, e))?;
    for (i, l) in links {
        b.find_link(&l).map_err(|e| (i, e))?;
    }
    Ok(())
}

/// A core program that declares every link a core can have: a stream per engine, and a DMA
/// started from each engine that may start one.
fn every_link_program() -> Program {
    use trnsim_core::isa::{DmaAddr, Engine, Instr, Stream};
    let dma = Instr::DmaStart {
        queue: 0,
        src: DmaAddr::Hbm { addr: 0, partition_stride: 0 },
        dst: DmaAddr::Hbm { addr: 0, partition_stride: 0 },
        bytes_per_partition: 0,
        sem: None,
    };
    let streams = Engine::ALL
        .iter()
        .map(|&e| {
            let mut instrs = if dma.engines().contains(&e) { vec![dma] } else { Vec::new() };
            instrs.push(Instr::Halt);
            let lines = (1..=instrs.len() as u32).collect();
            (e, Stream { instrs, lines })
        })
        .collect();
    Program { source: "(every link)".into(), streams }
}
