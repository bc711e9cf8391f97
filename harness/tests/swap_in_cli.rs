//! `trnsim run --rtl INSTANCE` end to end: with feature `rtl`, e2e-llm-layer on trn2-chip with
//! one HBM bank's timing FSM, one SBUF bank and one kernel link on the RTL gives the all-model
//! run's results JSON (but for the recorded override) and says on stderr that each replay was
//! clean; without it, asking for the RTL is an error saying how to build it, never an
//! all-model run. Bad uses are usage errors.

use std::process::{Command, Output};

fn trnsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trnsim")).args(args).output().expect("run trnsim")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn rtl_needs_benchmarks_that_run_on_a_chip() {
    let o = trnsim(&["run", "hbm-stream-read", "--rtl", "hbm0.ch0.pc0.bank3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--rtl: hbm-stream-read does not run on a chip system"), "{}", stderr(&o));
    let o = trnsim(&["run", "--rtl", "hbm0.ch0.pc0.bank3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn rtl_names_an_unknown_instance() {
    for (name, says) in [
        ("nc0.dram.bank3", "rtl[0]: unknown instance \"nc0.dram.bank3\" (swappable: hbm{k}"),
        ("nc0.sbuf.bank16", "rtl[0]: unknown instance \"nc0.sbuf.bank16\": bank16 does not exist (0..16)"),
        ("nc9.psum.bank0", "rtl[0]: unknown instance \"nc9.psum.bank0\": core nc9 does not exist (0..8)"),
    ] {
        let o = trnsim(&["run", "e2e-llm-layer", "--system", "trn2-chip", "--rtl", name]);
        assert_ne!(o.status.code(), Some(0));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
}

#[cfg(not(feature = "rtl"))]
#[test]
fn without_rtl_asking_for_the_rtl_is_an_error_saying_how_to_build() {
    for (name, block) in
        [("hbm0.ch0.pc0.bank3", "hbm_bank_hbm3_5700"), ("nc0.sbuf.bank0", "sbuf_bank"), (LINK, "link_fifo")]
    {
        let o = trnsim(&["run", "e2e-llm-layer", "--system", "trn2-chip", "--rtl", name]);
        assert_ne!(o.status.code(), Some(0));
        let e = stderr(&o);
        assert!(e.contains(&format!("block {block} is not built")) && e.contains("--features rtl"), "{e}");
    }
}

/// A kernel link of every core: the tensor engine's semaphore requests (depth 4).
const LINK: &str = "nc0.tensor.sem -> nc0.sem.tensor.op";

#[cfg(feature = "rtl")]
#[test]
fn rtl_names_a_link_that_does_not_exist_with_its_neighbours() {
    // A usage error found before the run (exit 2, one located line, nothing printed on stdout).
    let o = trnsim(&["run", "e2e-llm-layer", "--system", "trn2-chip", "--rtl", "nc0.tensor.sem -> nc0.sem.tensr.op"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with("error: trn2-chip.ron (built in):1:1: rtl[0]: no link called \"nc0.tensor.sem -> nc0.sem.tensr.op\" (links out of that port: nc0.tensor.sem -> nc0.sem.tensor.op)"), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(o.stdout.is_empty(), "nothing runs: {}", String::from_utf8_lossy(&o.stdout));
}

#[cfg(feature = "rtl")]
#[test]
fn e2e_with_an_hbm_bank_on_the_rtl_gives_the_all_model_results() {
    let dir = std::env::temp_dir().join(format!("trnsim-swap-in-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("model.json"), dir.join("rtl.json"));
    let o = trnsim(&["run", "e2e-llm-layer", "--system", "trn2-chip", "--json", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (bank, sbuf) = ("hbm0.ch0.pc0.bank3", "nc0.sbuf.bank0");
    let json = b.to_str().unwrap();
    let args =
        ["run", "e2e-llm-layer", "--system", "trn2-chip", "--rtl", bank, "--rtl", sbuf, "--rtl", LINK, "--json", json];
    let o = trnsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    for (name, block) in [(bank, "hbm_bank_hbm3_5700"), (sbuf, "sbuf_bank"), (LINK, "link_fifo")] {
        let line = e
            .lines()
            .find(|l| l.starts_with(&format!("{name}: RTL {block} clocked ")))
            .unwrap_or_else(|| panic!("{e}"));
        assert!(line.ends_with("replay against its model clean"), "{e}");
    }
    let read = |p| {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        let o = v["overrides"].take();
        (v, o)
    };
    let ((model, none), (rtl, set)) = (read(&a), read(&b));
    assert!(model == rtl, "results differ with {bank}, {sbuf} and {LINK} on the RTL");
    let set_as = format!("chip.rtl=[{bank:?}, {sbuf:?}, {LINK:?}]");
    assert_eq!((none, set), (serde_json::json!([]), serde_json::json!([set_as])));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Blocks on the RTL are checked after a serial run: a split run of them is refused, naming
/// why, before anything runs.
#[cfg(feature = "rtl")]
#[test]
fn rtl_blocks_are_not_split_over_threads() {
    let o = trnsim(&["run", "tp-matmul-2", "--system", "trn2-ultraserver", "--rtl", LINK, "--threads", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a chip with RTL blocks swapped in (--rtl, or the chip's rtl list) runs serially"),
        "{}",
        stderr(&o)
    );
}

/// A block on the RTL in every chip of a multi-chip run (and in the one-chip compute-alone run
/// `tp-matmul-N` makes beside it): each instance checked, each clean, the run finished. It hung
/// when models were deleted after others had been (Verilator's current context left on a freed
/// one).
#[cfg(feature = "rtl")]
#[test]
fn every_chip_of_a_multi_chip_run_checks_its_block_on_the_rtl() {
    let o = trnsim(&["run", "tp-matmul-2", "--system", "trn2-ultraserver", "--rtl", LINK]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    for chip in ["chip000.", "chip001.", ""] {
        let name = LINK.replace("nc0.", &format!("{chip}nc0."));
        let line = e
            .lines()
            .find(|l| l.starts_with(&format!("{name}: RTL link_fifo clocked ")))
            .unwrap_or_else(|| panic!("{e}"));
        assert!(line.ends_with("replay against its model clean"), "{e}");
    }
}
