//! A block of this crate swapped into a running chip by `--rtl INSTANCE=BLOCK`: the crate's
//! binary is trnsim's whole command line with its blocks added, and `oot_fifo` (its own link
//! receive FIFO, at link_fifo's ports) takes the place of a kernel link's buffer in
//! e2e-llm-layer on trn2-chip, checked by the running system every cycle it is used and
//! replayed against its model after the run. The results are the all-model run's; the planted
//! bug (a credit a cycle late) fails the run; a block without the link's ports is refused
//! before anything runs, naming the port and the blocks that fit.

use std::process::{Command, Output};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_outside-block")).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A kernel link of every core: the tensor engine's semaphore requests (depth 4).
const LINK: &str = "nc0.tensor.sem -> nc0.sem.tensor.op";

fn chip_run(bind: Option<&str>, json: &std::path::Path) -> Output {
    let mut args = vec!["run", "e2e-llm-layer", "--system", "trn2-chip", "--json", json.to_str().unwrap()];
    if let Some(b) = bind {
        args.extend(["--rtl", b]);
    }
    bin(&args)
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn the_crates_fifo_in_a_running_chip_gives_the_all_model_results_and_its_bug_fails_the_run() {
    let dir = std::env::temp_dir().join(format!("oot-swap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b, c) = (dir.join("model.json"), dir.join("rtl.json"), dir.join("bug.json"));
    let o = chip_run(None, &a);
    assert!(o.status.success(), "{}", stderr(&o));
    let bind = format!("{LINK}=oot_fifo");
    let o = chip_run(Some(&bind), &b);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    let line =
        e.lines().find(|l| l.starts_with(&format!("{LINK}: RTL oot_fifo clocked "))).unwrap_or_else(|| panic!("{e}"));
    assert!(line.ends_with("replay against its model clean"), "{e}");
    let read = |p: &std::path::Path| {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        let o = v["overrides"].take();
        (v, o)
    };
    let ((model, none), (rtl, set)) = (read(&a), read(&b));
    assert!(model == rtl, "results differ with {LINK} on oot_fifo");
    assert_eq!((none, set), (serde_json::json!([]), serde_json::json!([format!("chip.rtl=[{bind:?}]")])));

    // The planted bug: the running system's own check of the credit finds it, at the
    // receive after the first one, and the replay writes the three waveforms.
    let o = chip_run(Some(&format!("{LINK}=oot_fifo_late_credit")), &c);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("{LINK} (oot_fifo_late_credit): receiver cycle ")), "{e}");
    assert!(e.contains("credit_ret 0 where the link returns 1 credit"), "{e}");
    assert!(e.contains("divergence at cycle ") && e.contains("on port credit_ret: expected 0x1, actual 0x0"), "{e}");
    assert!(e.contains(".diff.vcd"), "{e}");
    assert!(!c.exists(), "a failed run writes no results");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn a_block_without_the_instances_ports_is_refused_naming_those_that_fit() {
    let o = bin(&["run", "e2e-llm-layer", "--system", "trn2-chip", "--rtl", &format!("{LINK}=oot_acc")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("rtl[0]: \"nc0.tensor.sem -> nc0.sem.tensor.op=oot_acc\": block oot_acc has no port in_valid (an input): not a link receive FIFO's ports"), "{e}");
    assert!(e.contains("(blocks with them: link_fifo, link_fifo_w100_d5, oot_fifo, oot_fifo_late_credit)"), "{e}");
    let o = bin(&["run", "e2e-llm-layer", "--system", "trn2-chip", "--rtl", "nc0.sbuf.bank0=nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("no block called \"nope\" (blocks with an SRAM bank arbiter's ports: sbuf_bank, psum_bank)"),
        "{}",
        stderr(&o)
    );
}

/// The binary is trnsim's command line: every command is there, the crate's blocks listed.
#[test]
fn the_binary_has_every_trnsim_command_and_lists_the_crates_blocks() {
    let o = bin(&["--help"]);
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    for cmd in ["run", "diff", "regress", "describe", "workload", "collective"] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(&format!("{cmd} "))), "{cmd} missing:\n{help}");
    }
    let o = bin(&["diff", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list = String::from_utf8_lossy(&o.stdout).into_owned();
    for b in ["link_fifo ", "oot_acc ", "oot_fifo ", "oot_fifo_late_credit "] {
        assert!(list.lines().any(|l| l.starts_with(b)), "{b} missing:\n{list}");
    }
    let o = bin(&["describe", "chip", "trn2-chip"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
