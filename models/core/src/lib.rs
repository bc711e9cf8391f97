//! # trnsim-core
//!
//! The NeuronCore model (NC-v2/v3/v4/v5, each a data file: [`spec`]): one instruction stream per engine (Tensor, Vector,
//! Scalar, GpSimd, Sync) written in a documented text assembly ([`isa`]), engines that charge
//! the documented per-instruction cost model, semaphores between them, DMA engines with queues
//! ([`dma`]) moving data between HBM (through the HBM model) and SBUF, and a functional mode
//! that computes real values in BF16, FP16, FP32, FP8 and MXFP8 ([`numeric`]).
#![warn(missing_docs)]

pub mod core;
pub mod coremem;
pub mod cost;
pub mod dma;
pub mod engine;
pub mod exec;
pub mod isa;
pub mod layout;
pub mod msg;
pub mod numeric;
pub mod occupancy;
pub mod sem;
pub mod spec;
pub mod throttle;

#[cfg(test)]
mod tests;
