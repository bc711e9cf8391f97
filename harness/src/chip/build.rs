//! Assembles a chip into one kernel simulation with the existing builders: an [`HbmStack`] per
//! stack (named `hbm{k}`, one clock `hbm`) and a NeuronCore per core (named `nc{i}`, built by
//! `trnsim_core::core::build`), core `i`'s 16 DMA engines each getting a port pair on stack
//! `i / cores_per_stack`. Stacks address their own 0-based space (`StackConfig::stacks` = 1).

use super::spec::Chip;
use trnsim_core::core::{build as build_core, CollectiveHookup, CoreIds, CoreOptions, HbmHookup};
use trnsim_core::isa::Program;
use trnsim_kernel::{ComponentId, SimBuilder};
use trnsim_mem::hbm::{HbmStack, StackConfig};

/// Component ids of a built chip.
#[derive(Clone, Debug)]
pub struct ChipIds {
    /// Each core's ids, core `i` at index `i`.
    pub cores: Vec<CoreIds>,
    /// Each stack's component, stack `k` at index `k`.
    pub stacks: Vec<ComponentId>,
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
    /// Share clock domains across cores and chips (clocks `nc.tensor`, .., `hbm`): many chips
    /// in one simulation then cost no more scheduler domains than one.
    pub shared_clocks: bool,
}

/// Builds `chip` into `b`, core `i` running `programs[i]` (one program per core). With
/// `trace_tracks`, the stacks and DMA blocks declare their trace tracks (engines always have
/// theirs).
pub fn build(b: &mut SimBuilder, chip: &Chip, programs: &[Program], trace_tracks: bool) -> Result<ChipIds, String> {
    build_with(b, chip, programs, &BuildOpts { trace_tracks, ..BuildOpts::default() })
}

/// [`build`] with a name prefix, a collective hookup and shared clocks ([`BuildOpts`]).
pub fn build_with(b: &mut SimBuilder, chip: &Chip, programs: &[Program], o: &BuildOpts) -> Result<ChipIds, String> {
    let trace_tracks = o.trace_tracks;
    let s = &chip.spec;
    if programs.len() != s.cores as usize {
        return Err(format!("chip {}: {} programs for {} cores (one per core)", s.name, programs.len(), s.cores));
    }
    let e = |x: trnsim_kernel::BuildError| x.to_string();
    let cfg = StackConfig::from_preset(chip.hbm);
    let clk = if o.shared_clocks {
        b.shared_clock("hbm", cfg.timing.frequency())
    } else {
        b.clock(&format!("{}hbm", o.prefix), cfg.timing.frequency())
    }
    .map_err(e)?;
    let mut stacks = Vec::new();
    for k in 0..s.hbm.stacks {
        let mut c = cfg.clone();
        c.index = k;
        let id = b.reserve(&format!("{}hbm{k}", o.prefix), clk).map_err(e)?;
        let mut st = HbmStack::new(&c)?;
        if trace_tracks && o.hbm_summary {
            st.declare_summary_tracks(b, id);
        } else if trace_tracks {
            st.declare_tracks(b, id);
        }
        stacks.push((id, st));
    }
    let opts = CoreOptions {
        version: chip.version,
        dma: Some(chip.dma.clone()),
        trace_tracks,
        collective: o.collective,
        shared_clocks: o.shared_clocks.then(|| "nc".to_string()),
        ..CoreOptions::default()
    };
    let mut cores = Vec::new();
    for (i, program) in programs.iter().enumerate() {
        let (id, st) = &mut stacks[chip.stack_of(i as u32) as usize];
        let hbm = Some(HbmHookup { id: *id, stack: st });
        cores.push(build_core(b, &format!("{}nc{i}", o.prefix), program, &opts, hbm)?);
    }
    let ids = stacks.iter().map(|(id, _)| *id).collect();
    for (id, st) in stacks {
        b.install(id, st).map_err(e)?;
    }
    Ok(ChipIds { cores, stacks: ids })
}
