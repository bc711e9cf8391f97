//! Banked, partitioned on-chip SRAM: the NeuronCore's SBUF and PSUM (spec §3), for timing and
//! for data.
//!
//! ```text
//!   engine interfaces (clients)          Sram (one clock: the memory's)
//!   pe  ──start(pattern)──┐
//!   act ──────────────────┤   per client: FIFO of accesses ─ overhead (~60 cycles) ─┐
//!   dve ──────────────────┼─►                                                       ▼
//!   pool ─────────────────┤   round-robin arbiter: per cycle, per (partition quarter, bank),
//!   dma0 ─────────────────┘   at most read_ports reads + write_ports writes
//!                                   │ granted: one element per partition of the range
//!                                   ▼
//!          partition 0   [bank 0][bank 1] ... [bank B-1]      (bank = address bits)
//!          ...
//!          partition 127 [bank 0][bank 1] ... [bank B-1]
//!                                   │ + access latency
//!   completions ◄── pop_completed(): (AccessId, finish cycle)
//!
//!   SramData: the bytes, in pages allocated on first write (read / write / accumulate_f32).
//! ```
//!
//! - [`geometry`]: [`SramGeometry`] as data and the presets (SBUF NC-v2/v3/v4, PSUM).
//! - [`pattern`]: [`AccessPattern`]: partitions plus up to 4 free-axis dims, the §3 rules.
//! - [`timing`]: [`Sram`]: clients, the arbiter, skipping uncontended runs arithmetically.
//! - [`data`]: [`SramData`]: contents for functional runs, PSUM FP32 accumulation.
//! - [`mod@bench`]: [`bench::bandwidth_bench`] and the standard bandwidth [`bench::scenarios`].
//! - [`stats`], [`error`]: counters and the report; refusals that name the field.
//!
//! Timing and data are separate: a timing-only run builds only [`Sram`]; an engine in a
//! functional run calls [`SramData::read`] or [`SramData::write`] with the same pattern it
//! passed to [`Sram::start`].

mod arbiter;
pub mod bench;
pub mod data;
pub mod error;
pub mod geometry;
pub mod pattern;
pub mod stats;
#[cfg(test)]
mod test_rng;
pub mod timing;

pub use data::SramData;
pub use error::{FieldError, SramError};
pub use geometry::{SramGeometry, SramPreset};
pub use pattern::{AccessPattern, Dim, Offsets};
pub use stats::{ClientStats, SramStats};
pub use timing::{AccessId, BankPortHook, ClientId, Completion, PortRequest, Sram};
