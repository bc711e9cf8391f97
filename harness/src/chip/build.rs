//! Assembles a chip into one kernel simulation with the existing builders: an [`HbmStack`] per
//! stack (named `hbm{k}`, one clock `hbm`) and a NeuronCore per core (named `nc{i}`, built by
//! `trnsim_core::core::build`), core `i`'s 16 DMA engines each getting a port pair on stack
//! `i / cores_per_stack`. Stacks address their own 0-based space (`StackConfig::stacks` = 1).

use super::spec::Chip;
use trnsim_core::core::{build as build_core, CoreIds, CoreOptions, HbmHookup};
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

/// Builds `chip` into `b`, core `i` running `programs[i]` (one program per core). With
/// `trace_tracks`, the stacks and DMA blocks declare their trace tracks (engines always have
/// theirs).
pub fn build(b: &mut SimBuilder, chip: &Chip, programs: &[Program], trace_tracks: bool) -> Result<ChipIds, String> {
    let s = &chip.spec;
    if programs.len() != s.cores as usize {
        return Err(format!("chip {}: {} programs for {} cores (one per core)", s.name, programs.len(), s.cores));
    }
    let e = |x: trnsim_kernel::BuildError| x.to_string();
    let cfg = StackConfig::from_preset(chip.hbm);
    let clk = b.clock("hbm", cfg.timing.frequency()).map_err(e)?;
    let mut stacks = Vec::new();
    for k in 0..s.hbm.stacks {
        let mut c = cfg.clone();
        c.index = k;
        let id = b.reserve(&format!("hbm{k}"), clk).map_err(e)?;
        let mut st = HbmStack::new(&c)?;
        if trace_tracks {
            st.declare_tracks(b, id);
        }
        stacks.push((id, st));
    }
    let opts =
        CoreOptions { version: chip.version, dma: Some(chip.dma.clone()), trace_tracks, ..CoreOptions::default() };
    let mut cores = Vec::new();
    for (i, program) in programs.iter().enumerate() {
        let (id, st) = &mut stacks[chip.stack_of(i as u32) as usize];
        let hbm = Some(HbmHookup { id: *id, stack: st });
        cores.push(build_core(b, &format!("nc{i}"), program, &opts, hbm)?);
    }
    let ids = stacks.iter().map(|(id, _)| *id).collect();
    for (id, st) in stacks {
        b.install(id, st).map_err(e)?;
    }
    Ok(ChipIds { cores, stacks: ids })
}
