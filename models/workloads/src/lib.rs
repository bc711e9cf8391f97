//! trnsim's workload layer: what runs on a system, as data.
//!
//! ```text
//!   trnsim workload llm ... ──► llm.ron (format::Workload: ranks, groups, nodes with deps)
//!                                 │ format::load: located errors, ranges checked
//!                                 ▼
//!   system (trnsim_system) ──► costs::SystemCosts ──► exec::run ──► exec::Report
//!                               memory: cycle-level chip     step time, per-rank breakdown
//!                               compute: calibrated roofline (compute, memory, comm, exposed)
//!                               comm: packet-level fabric    collective busbw, spans
//! ```
//!
//! - [`format`]: the workload file (RON or JSON), after MLCommons Chakra: COMP, MEM and COMM
//!   nodes with data and control dependencies, rank groups, repetition.
//! - [`llm`]: a generator for one training or inference step of a dense or MoE transformer
//!   under tensor, expert, data and pipeline parallelism.
//! - [`exec`]: the schedule: per-rank in-order queues, collectives synchronizing their groups.
//! - [`costs`]: node times from the chip and fabric models.
//! - [`energy`]: energy and power of a run from its actions and the chip's energy table.
//!
//! Left out: reading Chakra's protobuf traces, all-to-allv with per-destination sizes, and
//! anything that depends on data values.
#![warn(missing_docs)]

pub mod chakra;
pub mod costs;
pub mod energy;
pub mod exec;
pub mod format;
pub mod llm;
pub mod overrides;

#[cfg(test)]
mod tests;
