//! `outside-block diff NAME ...`: `trnsim diff` with this crate's blocks added.
fn main() {
    std::process::exit(trnsim_harness::diff_cmd::main_with(trnsim_outside_block::BLOCKS))
}
