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
