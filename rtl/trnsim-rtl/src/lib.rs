//! # trnsim-rtl
//!
//! RTL co-simulation: cycle-exact Rust models of hardware blocks at the same port
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
//! `LinkFifoW64D4` is from `verilator_sys::models`.
//!
//! - [`registry`]: the blocks `trnsim diff` knows (model, RTL, stimulus, comparison rules).
//! - [`diff`]: the lock-step runs, cycle by cycle or by transactions ([`scoreboard`]).
//! - [`stimulus`], [`trace`]: seeded, `arbitrary`-decoded and recorded inputs; the recorder.
//! - [`swap`]: RTL blocks inside a running system (the switch's crossbar arbiter).
//! - [`swap_in`]: any registered block hosted in a system component (an HBM bank's timing FSM),
//!   its inputs replayed through the diff after the run.
#![warn(missing_docs)]

pub mod block;
pub mod constrained;
pub mod coverage;
pub mod diff;
pub mod fst;
pub mod model;
pub mod monitor;
pub mod reactive;
pub mod registry;
pub mod rtl;
pub mod scoreboard;
pub mod stimulus;
pub mod swap;
pub mod swap_in;
pub mod trace;
mod vcd_out;

pub use verilator_sys;
