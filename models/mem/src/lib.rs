//! # trnsim-mem
//!
//! Memory models for trnsim:
//!
//! - [`hbm`]: HBM2, HBM3 and HBM3E stacks. Organization, timing table and address mapping are
//!   data ([`hbm::Organization`], [`hbm::TimingParams`] and its constraint table, [`hbm::AddressMap`]);
//!   one controller per pseudo-channel (read/write queues, FR-FCFS, write-drain watermarks,
//!   open/closed page, all-bank or per-bank refresh) issues commands on the channel's separate
//!   row and column command buses; [`hbm::HbmStack`] wraps them as a kernel component.
//! - [`hbm::checker`]: an independent JEDEC timing checker that replays a command trace.
//! - [`sram`]: banked, partitioned on-chip SRAM (SBUF, PSUM) with ports, conflicts and data.
//!
//! Models do no I/O and never read the wall clock.
#![warn(missing_docs)]

pub mod hbm;
pub mod sram;
