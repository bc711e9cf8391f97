//! `trnsim`: run microbenchmarks and config-described systems, benchmark the kernel, check
//! configs. See `trnsim --help`. The command line lives in the library
//! ([`trnsim_harness::main_with`]), so that a block crate's binary is the same one with its
//! blocks added.

fn main() {
    std::process::exit(trnsim_harness::main_with(&[]));
}
