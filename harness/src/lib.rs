//! trnsim's front door: the `trnsim` command-line tool, microbenchmarks, RON configs and the
//! generic traffic blocks that config-described systems are made of.
#![warn(missing_docs)]

pub mod bench_workloads;
pub mod blocks;
pub use trnsim_system::chip;
pub mod config;
pub mod cpu;
pub mod diff_cmd;
pub mod dp;
pub mod e2e;
pub mod energy_report;
pub mod fabric;
pub mod frontier;
pub mod gemm_cycle;
pub mod limits;
pub mod memory;
pub mod memtrace;
pub mod moe;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod neuroncore;
pub mod outputs;
pub mod parallel;
pub mod plot;
pub mod progress;
pub mod random_graph;
pub mod regress;
pub mod ring;
pub mod suite;
pub mod summary;
pub mod system;
pub mod tp;
pub mod whatif;
pub mod workload;
