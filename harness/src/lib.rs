//! trnsim's front door: the `trnsim` command-line tool, its outputs and reports, RON configs
//! and the generic traffic blocks that config-described systems are made of. The benchmarks
//! and their system builders live in `trnsim-benchmarks`, below this crate; their modules are
//! re-exported here under the same names.
#![warn(missing_docs)]

pub use trnsim_benchmarks::bench_workloads;
pub mod blocks;
pub use trnsim_benchmarks::chip;
pub mod config;
pub use trnsim_benchmarks::cpu;
pub mod diff_cmd;
pub use trnsim_benchmarks::dp;
pub use trnsim_benchmarks::e2e;
pub mod energy_report;
pub use trnsim_benchmarks::fabric;
pub mod frontier;
pub use trnsim_benchmarks::limits;
pub use trnsim_benchmarks::memory;
pub use trnsim_kernels as kernels;
pub mod memtrace;
pub use trnsim_benchmarks::moe;
#[cfg(feature = "mpi")]
pub mod mpi;
pub use trnsim_benchmarks::neuroncore;
pub use trnsim_benchmarks::outputs;
pub use trnsim_benchmarks::parallel;
pub use trnsim_benchmarks::plot;
pub use trnsim_benchmarks::progress;
pub use trnsim_benchmarks::random_graph;
pub mod regress;
pub use trnsim_benchmarks::ring;
pub use trnsim_benchmarks::suite;
pub mod summary;
pub mod system;
pub use trnsim_benchmarks::tp;
pub mod whatif;
pub mod workload;
