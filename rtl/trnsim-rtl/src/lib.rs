//! # trnsim-rtl
//!
//! RTL co-simulation (issue 6): cycle-exact Rust models of hardware blocks at the same port
//! boundary as their SystemVerilog in `rtl/blocks`, and a lock-step diff harness that runs a
//! model against the Verilated RTL (feature `rtl`, via `verilator-sys`).
//!
//! ```text
//!   Stimulus (seeded) ──► inputs ──┬──► model::LinkFifo  ──► outputs ─┐
//!                                  └──► Rtl<LinkFifoW64D4> ─► outputs ─┴─► compare every port,
//!                                                                         every cycle
//! ```
//!
//! ```
//! use trnsim_rtl::{diff::*, model::LinkFifo, stimulus::LinkFifoStimulus};
//! // Without the RTL, a model can be diffed against another model (here: itself).
//! let report = diff(|| LinkFifo::new(64, 4), || Ok(LinkFifo::new(64, 4)),
//!                   || LinkFifoStimulus::new(1), &DiffConfig::link_fifo(10_000)).unwrap();
//! assert!(report.high("credit_ret").unwrap() > 1000);
//! ```
//!
//! With feature `rtl`: `diff(|| LinkFifo::new(64, 4), Rtl::<LinkFifoW64D4>::new, ...)`, where
//! `LinkFifoW64D4` is from `verilator_sys::models`. The `trnsim diff` CLI comes later.
#![warn(missing_docs)]

pub mod block;
pub mod diff;
pub mod model;
#[cfg(feature = "rtl")]
pub mod rtl;
pub mod stimulus;
mod vcd_out;

pub use verilator_sys;
