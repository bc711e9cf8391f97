//! The blocks a block crate adds to this process's registry (its binary's `main_with` adds
//! them before it parses the command line): found by name beside trnsim's own [`BLOCKS`],
//! by `trnsim diff`, `trnsim regress` and a chip's `rtl` list alike.
//!
//! The list only grows, by whole `'static` slices, and is read when a command looks a block
//! up (never per simulated cycle). Leaves out: removing blocks, and blocks added from
//! dynamic libraries (a block crate links its blocks into its own binary).

use super::{BlockEntry, BLOCKS};
use std::sync::RwLock;

static ADDED: RwLock<Vec<&'static [BlockEntry]>> = RwLock::new(Vec::new());

/// Adds `blocks` to the registry of this process. Adding the same slice again does nothing;
/// a name that is already registered (trnsim's or an earlier addition's), or that appears
/// twice in `blocks`, is an error naming it, and nothing is added.
pub fn add(blocks: &'static [BlockEntry]) -> Result<(), String> {
    let mut list = ADDED.write().unwrap_or_else(|e| e.into_inner());
    if list.iter().any(|s| std::ptr::eq(*s, blocks)) {
        return Ok(());
    }
    for (k, b) in blocks.iter().enumerate() {
        let taken = BLOCKS.iter().chain(list.iter().flat_map(|s| s.iter())).any(|o| o.name == b.name);
        if taken {
            return Err(format!("block {:?} is already registered (trnsim's or another crate's): rename it", b.name));
        }
        if blocks[..k].iter().any(|o| o.name == b.name) {
            return Err(format!("block {:?} is listed twice", b.name));
        }
    }
    list.push(blocks);
    Ok(())
}

/// Every registered block: trnsim's, then the added ones in the order they were added.
pub fn all() -> Vec<&'static BlockEntry> {
    let list = ADDED.read().unwrap_or_else(|e| e.into_inner());
    BLOCKS.iter().chain(list.iter().flat_map(|s| s.iter())).collect()
}

#[cfg(test)]
mod tests {
    use super::super::{find, names, no_rtl};
    use super::*;
    use crate::model::{ArbMode, IslipArbiter, IslipStimulus};

    const fn arbiter(name: &'static str) -> BlockEntry {
        BlockEntry {
            name,
            description: "a test block: the 4-port iSLIP model under another name",
            make_model: || Box::new(IslipArbiter::new(4, 1, ArbMode::Islip)),
            make_rtl: || Err(no_rtl()),
            make_stimulus: |seed| Box::new(IslipStimulus::new(4, seed)),
            diff_config: crate::diff::DiffConfig::islip_arbiter,
            scoreboard: None,
            coverage: Vec::new,
            monitors: Vec::new,
            make_reactive: None,
        }
    }

    static MINE: &[BlockEntry] = &[arbiter("added_test_arbiter")];
    static CLASH: &[BlockEntry] = &[arbiter("added_test_other"), arbiter("islip_n4_i1")];
    static TWICE: &[BlockEntry] = &[arbiter("added_test_twice"), arbiter("added_test_twice")];

    #[test]
    fn added_blocks_are_found_beside_trnsims_and_names_stay_unique() {
        add(MINE).unwrap();
        add(MINE).unwrap();
        assert_eq!(find("added_test_arbiter").map(|e| e.description), Some(MINE[0].description));
        assert_eq!(all().iter().filter(|e| e.name == "added_test_arbiter").count(), 1, "added once");
        assert!(names().starts_with("link_fifo, ") && names().contains(", added_test_arbiter"));
        let e = add(CLASH).unwrap_err();
        assert!(e.contains("block \"islip_n4_i1\" is already registered"), "{e}");
        assert!(find("added_test_other").is_none(), "nothing of a refused slice is added");
        assert!(find("islip_n4_i1").is_some_and(|e| e.description != MINE[0].description));
        assert!(add(TWICE).unwrap_err().contains("block \"added_test_twice\" is listed twice"));
    }
}
