//! `trnsim`: run microbenchmarks and config-described systems, benchmark the kernel, check
//! configs. See `trnsim --help`.

mod cli;
mod hbm_cmd;

fn main() {
    std::process::exit(cli::main());
}
