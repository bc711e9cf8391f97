//! trnsim's front door: the `trnsim` command-line tool, its outputs and reports, RON configs
//! and the generic traffic blocks that config-described systems are made of. The benchmarks
//! and their system builders live in `trnsim-benchmarks`, below this crate; their modules are
//! re-exported here under the same names.
//!
//! [`main_with`] is the whole `trnsim` command line; a block crate's binary calls it with its
//! own RTL blocks added (docs/rtl.md, "A block in your own crate").
#![warn(missing_docs)]

// The command modules name this crate's items by its name, as the binary they were written
// for did.
extern crate self as trnsim_harness;

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
pub mod sweep_systems;
pub mod whatif;
pub mod workload;

mod cli;
mod collective_cmd;
mod core_cmd;
mod describe;
mod hbm_cmd;
mod workload_cmd;

/// The `trnsim` command line (every subcommand: `run`, `diff`, `regress`, `describe`, ...)
/// with `blocks` added to the RTL block registry (`trnsim_rtl::registry::add`): `diff`,
/// `regress` and `--list` know them by name, and a chip's `rtl` list (`run --rtl
/// INSTANCE=BLOCK`) binds them to any instance whose port boundary they have. Returns the
/// exit status: 0 success, 1 a failed run, 2 a usage error (also for a block name that is
/// already registered). trnsim's own binary is `main_with(&[])`; a block crate's is
/// `fn main() { std::process::exit(trnsim_harness::main_with(MY_BLOCKS)) }`.
pub fn main_with(blocks: &'static [trnsim_rtl::registry::BlockEntry]) -> i32 {
    // Die quietly on a closed pipe (`trnsim ... | head`) instead of panicking in println!.
    // SAFETY: SIG_DFL is a valid disposition; a binary's main calls this first, before it
    // starts threads of its own.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    if let Err(m) = trnsim_rtl::registry::add(blocks) {
        eprintln!("error: {m}");
        return 2;
    }
    cli::main()
}

/// The name this process was started as (its file name), for commands it prints to repeat
/// a run: `trnsim`, or a block crate's binary.
fn program_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| std::path::Path::new(&a).file_name().map(|f| f.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "trnsim".into())
}
