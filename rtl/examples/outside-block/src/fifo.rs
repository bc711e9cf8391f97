//! A link receive FIFO of this crate's own (rtl/oot_fifo.sv: a collapsing queue, another design
//! than trnsim's link_fifo) at trnsim's link_fifo port boundary, so that a running chip can
//! take it in place of a kernel link's receive buffer (`--rtl "SRC.PORT -> DST.PORT=oot_fifo"`).
//!
//! Its reference is trnsim's own link model ([`LinkFifo`], 64 bits x 4): the block must behave
//! as the kernel link it replaces, cycle for cycle, so there is nothing of the crate's own to
//! model. Its stimulus, cover points, monitors and transaction view are trnsim's for that
//! boundary (`trnsim_rtl::registry::fifo_cover`, ...).

use trnsim_rtl::block::Block;
use trnsim_rtl::diff::DiffConfig;
use trnsim_rtl::model::LinkFifo;
use trnsim_rtl::reactive::CreditSender;
use trnsim_rtl::registry::{self, BlockEntry, RtlCtor};
use trnsim_rtl::stimulus::LinkFifoStimulus;

/// Data bits and depth the crate builds the FIFO with (build.rs: `WIDTH` 64, `DEPTH` 4: the
/// depth of a chip's kernel links).
pub const WIDTH: u32 = 64;
/// See [`WIDTH`].
pub const DEPTH: usize = 4;

/// The entry of a FIFO built as `make_rtl`, checked against trnsim's link model.
pub const fn fifo_entry(name: &'static str, description: &'static str, make_rtl: RtlCtor) -> BlockEntry {
    BlockEntry {
        name,
        description,
        make_model: || Box::new(LinkFifo::new(WIDTH, DEPTH)),
        make_rtl,
        make_stimulus: |seed| Box::new(LinkFifoStimulus::new(seed)),
        diff_config: DiffConfig::link_fifo,
        scoreboard: Some(registry::fifo_sb),
        coverage: || registry::fifo_cover(DEPTH as u128),
        monitors: || registry::fifo_monitors(DEPTH as u64),
        make_reactive: Some(|seed| {
            let m = LinkFifo::new(WIDTH, DEPTH);
            Box::new(CreditSender::new(m.ports(), DEPTH as u64, seed))
        }),
    }
}
