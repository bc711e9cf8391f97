//! trnsim's front door: the `trnsim` command-line tool, its outputs and reports, RON configs
//! and the generic traffic blocks that config-described systems are made of. The benchmarks
//! and their system builders live in `trnsim-benchmarks`, below this crate, and are used from
//! there.
//!
//! [`main_with`] is the whole `trnsim` command line; a block crate's binary calls it with its
//! own RTL blocks added (docs/rtl.md, "A block in your own crate").
#![warn(missing_docs)]

// The command modules name this crate's items by its name, as the binary they were written
// for did.
extern crate self as trnsim_harness;

pub mod blocks;
pub mod config;
pub mod diff_cmd;
pub mod energy_report;
pub mod frontier;
pub mod memtrace;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod regress;
pub mod summary;
pub mod sweep_systems;
pub mod system;
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
