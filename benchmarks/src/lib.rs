//! trnsim's benchmarks and the systems they build: the suite's registry and results
//! (`suite`), the microbenchmarks (`memory`, `fabric`, `neuroncore`, `ring`, `random_graph`),
//! the multi-chip runs (`e2e`, `tp`, `moe`, `dp`), partitioned runs (`parallel`), the
//! benchmarks written as workloads (`bench_workloads`), and what they share with
//! the CLI above them: host timing (`cpu`), progress lines, SVG plots, output files and size
//! limits.
#![warn(missing_docs)]

pub mod bench_workloads;
pub mod cpu;
pub mod dp;
pub mod e2e;
pub mod fabric;
pub mod limits;
pub mod memory;
pub mod moe;
pub mod neuroncore;
pub mod outputs;
pub mod parallel;
pub mod partitioned;
pub mod plot;
pub mod power;
pub mod progress;
pub mod random_graph;
pub mod result;
pub mod ring;
pub mod suite;
pub mod tp;
