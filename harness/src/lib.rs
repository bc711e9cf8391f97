//! trnsim's front door: the `trnsim` command-line tool, microbenchmarks, RON configs and the
//! generic traffic blocks that config-described systems are made of.
#![warn(missing_docs)]

pub mod cpu;
pub mod ring;
