//! `outside-block`: trnsim's whole command line (`run`, `diff`, `regress`, `describe`, ...)
//! with this crate's blocks added: `outside-block diff oot_acc`, `outside-block run
//! e2e-llm-layer --system trn2-chip --rtl "nc0.tensor.sem -> nc0.sem.tensor.op=oot_fifo"`.
fn main() {
    std::process::exit(trnsim_harness::main_with(trnsim_outside_block::BLOCKS))
}
