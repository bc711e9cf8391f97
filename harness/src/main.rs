//! `trnsim`: run microbenchmarks and config-described systems, benchmark the kernel, check
//! configs. See `trnsim --help`.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
