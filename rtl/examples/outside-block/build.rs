//! Verilates this crate's block when verilator-sys is built with feature `rtl` (it says so in
//! `DEP_TRNSIM_VLT_RTL`), and sets cfg `trnsim_rtl`; otherwise builds nothing.
use trnsim_vlt_build::{build_models, find_verilator, Model, Reset};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(trnsim_rtl)");
    if std::env::var_os("DEP_TRNSIM_VLT_RTL").is_none() {
        return;
    }
    println!("cargo:rustc-cfg=trnsim_rtl");
    // The accumulator: two sources, an include directory, a define and a string parameter;
    // clock `clk_i`, asynchronous active-low reset `arst_ni`.
    let acc = |name: &str, rust: &str, mode: &str| {
        Model::new(name, rust, "acc_top", ["rtl/acc_core.sv", "rtl/acc_top.sv"])
            .include_dir("rtl/include")
            .define("ACC_STEP", "3")
            .param_str("MODE", mode)
            .clock("clk_i")
            .reset(Reset::async_low("arst_ni"))
    };
    // The lane maximum: an unpacked array input port (4 and 16 lanes of 8 bits), and its
    // planted bug (the last lane never looked at), which its immediate assertion reports.
    let lanes =
        |name: &str, rust: &str, n: i64| Model::new(name, rust, "lane_max", ["rtl/lane_max.sv"]).param_int("LANES", n);
    // A link receive FIFO of its own (trnsim's link_fifo boundary, another design): it binds to
    // a kernel link of a running chip; and its planted bug, the credit a cycle late.
    let fifo = |name: &str, rust: &str| {
        Model::new(name, rust, "oot_fifo", ["rtl/oot_fifo.sv"]).param_int("WIDTH", 64).param_int("DEPTH", 4)
    };
    let models = [
        acc("oot_acc", "OotAcc", "sat"),
        // The planted bug: the same RTL built wrapping instead of saturating.
        acc("oot_acc_wrap", "OotAccWrap", "wrap"),
        lanes("oot_lane_max4", "OotLaneMax4", 4),
        lanes("oot_lane_max16", "OotLaneMax16", 16),
        lanes("oot_lane_max4_skip", "OotLaneMax4Skip", 4).define("LANE_MAX_SKIP_LAST", ""),
        fifo("oot_fifo", "OotFifo"),
        fifo("oot_fifo_late_credit", "OotFifoLateCredit").define("OOT_FIFO_LATE_CREDIT", ""),
    ];
    let r = find_verilator().and_then(|v| build_models(&v, &models));
    if let Err(e) = r {
        eprintln!("error: trnsim-outside-block: {e}");
        std::process::exit(1);
    }
}
