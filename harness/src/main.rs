//! `trnsim`: run microbenchmarks and config-described systems, benchmark the kernel, check
//! configs. See `trnsim --help`.

mod cli;
mod collective_cmd;
mod core_cmd;
mod describe;
mod hbm_cmd;
mod workload_cmd;

fn main() {
    // Die quietly on a closed pipe (`trnsim ... | head`) instead of panicking in println!.
    // SAFETY: called first in main, before any thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::main());
}
