//! The block crate's binary runs `regress` with its own blocks: the planted bug fails every
//! seed, the good block none, the JUnit XML carries the failure and its reproduction command,
//! and that command reproduces the failure at the same cycle.

use std::process::Command;

fn bin(args: &[&str], dir: &std::path::Path) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_outside-block")).args(args).current_dir(dir).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn a_regression_finds_the_planted_bug_on_every_seed_and_its_command_reproduces_it() {
    let dir = std::env::temp_dir().join(format!("oot-regress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = ["regress", "oot_acc,oot_acc_wrap_bug", "--seeds", "4", "--cycles", "50000", "--base-seed", "5"];
    let (code, out, err) = bin(&[&args[..], &["--junit", "r.xml", "--vcd", "waves"]].concat(), &dir);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(err.contains("4 of 8 runs failed"), "{err}");
    let row =
        |b: &str| out.lines().find(|l| l.starts_with(&format!("{b} "))).unwrap_or_else(|| panic!("{out}")).to_string();
    let good: Vec<String> = row("oot_acc").split_whitespace().map(String::from).collect();
    assert_eq!(&good[1..4], ["4", "4", "0"], "{out}");
    let bad: Vec<String> = row("oot_acc_wrap_bug").split_whitespace().map(String::from).collect();
    assert_eq!(&bad[1..4], ["4", "0", "4"], "{out}");
    let repro = out.lines().find_map(|l| l.strip_prefix("reproduce: ")).expect("a reproduction command");
    assert!(repro.starts_with("outside-block diff oot_acc_wrap_bug --stimulus random --seed "), "{repro}");
    let cycle = out.split("divergence at cycle ").nth(1).and_then(|s| s.split(' ').next()).expect("cycle").to_string();
    // Waveforms of the failing runs only, one folder each with the model, RTL and merged VCDs.
    let mut folders: Vec<String> = std::fs::read_dir(dir.join("waves"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(folders.len(), 4, "{folders:?}");
    for f in &folders {
        assert!(f.starts_with("oot_acc_wrap_bug-random-"), "{folders:?}");
        assert!(dir.join("waves").join(f).join("oot_acc_wrap_bug.diff.vcd").is_file(), "{f}");
    }
    let junit = std::fs::read_to_string(dir.join("r.xml")).unwrap();
    assert_eq!(junit.matches("<failure ").count(), 4, "{junit}");
    assert!(junit.contains(&format!("reproduce: {repro}")), "{junit}");
    // The command, run as printed, fails the same way at the same cycle and writes waves.
    let words: Vec<&str> = repro.split_whitespace().skip(1).collect();
    let (code, out, err) = bin(&words, &dir);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains(&format!("divergence at cycle {cycle} ")), "{out}");
    assert!(dir.join("vcd/oot_acc_wrap_bug.diff.vcd").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
