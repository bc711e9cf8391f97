//! `trnsim diff` end to end: exit codes, the block list, each stimulus kind, scoreboard mode,
//! and the swap-in run whose recorded arbiter trace replays. Without feature `rtl` only the
//! "how to build it" error is checked.

use std::process::{Command, Output};

fn trnsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trnsim")).args(args).output().expect("run trnsim")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn diff_list_names_every_registered_block() {
    let o = trnsim(&["diff", "--list"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    for b in ["link_fifo", "islip_n8_i1", "rrm_n5_i2", "sram_bank"] {
        assert!(out.lines().any(|l| l.starts_with(b)), "{b} missing from:\n{out}");
    }
}

#[cfg(not(feature = "rtl"))]
#[test]
fn diff_without_rtl_is_a_usage_error_saying_how_to_build() {
    let o = trnsim(&["diff", "islip_n8_i1"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("--features rtl") && err.contains("apt-get install -y verilator"), "{err}");
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;

    fn tmp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("trnsim-diff-cli-{}-{name}", std::process::id()))
    }

    #[test]
    fn diff_runs_clean_on_random_fuzz_and_scoreboard_and_rejects_mistakes_with_2() {
        let o = trnsim(&["diff", "islip_n4_i3", "--cycles", "20000", "--seed", "3"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        assert!(out.starts_with("islip_n4_i3: 20000 cycles (random, seed 3), no divergence"), "{out}");
        assert!(out.contains("coverage (model), 20000 cycles:") && out.contains("all bins"), "{out}");
        // Coverage as JSON, and a run that stops once every bin is hit.
        let json = tmp("coverage.json");
        let o = trnsim(&["diff", "hbm_bank", "--until-coverage", "100", "--coverage-json", json.to_str().unwrap()]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!((v["model_percent"].as_f64(), v["rtl_percent"].as_f64()), (Some(100.0), Some(100.0)), "{v}");
        assert!(v["cycles"].as_u64().unwrap() < 1_000_000, "stopped at full coverage: {v}");
        assert_eq!(v["model"]["points"][0]["name"], "state");
        let _ = std::fs::remove_file(json);
        let fuzz = tmp("fuzz.bin");
        std::fs::write(&fuzz, (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect::<Vec<_>>())
            .unwrap();
        let arg = format!("fuzz:{}", fuzz.display());
        let o = trnsim(&["diff", "link_fifo", "--stimulus", &arg]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        let o = trnsim(&["diff", "sram_bank", "--cycles", "20000", "--scoreboard", "--tolerance", "1"]);
        let (out, _) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}");
        assert!(out.contains("transactions matched"), "{out}");
        for bad in [
            &["diff", "no_such_block"][..],
            &["diff", "link_fifo", "--stimulus", "trace:/nonexistent/x.trace"],
            &["diff", "link_fifo", "--stimulus", "sometimes"],
            &["diff", "link_fifo", "--cycles", "many"],
            &["diff", "link_fifo", "--until-coverage", "101"],
            &["diff"],
        ] {
            let o = trnsim(bad);
            assert_eq!(o.status.code(), Some(2), "{bad:?}: {:?}", text(&o));
        }
        let _ = std::fs::remove_file(fuzz);
    }

    #[test]
    fn swap_in_gives_identical_statistics_and_its_recorded_trace_replays() {
        let trace = tmp("arb.trace");
        let o = trnsim(&[
            "diff",
            "--swap",
            "sw",
            "--cycles",
            "3000",
            "--load",
            "0.9",
            "--record",
            &trace.to_string_lossy(),
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        assert!(out.contains("statistics identical"), "{out}");
        let clocks = out.split("clocked ").nth(1).and_then(|s| s.split(' ').next()).expect("clock count");
        let arg = format!("trace:{}", trace.display());
        let o = trnsim(&["diff", "islip_n8_i1", "--stimulus", &arg]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        assert!(out.contains(&format!(": {clocks} cycles")) && out.contains("no divergence"), "{out}");
        // The same trace on a 4-port arbiter: a located usage error.
        let o = trnsim(&["diff", "islip_n4_i1", "--stimulus", &arg]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2));
        assert!(err.contains(":3:1: req: 64 bits in the trace, 16 on the block"), "{err}");
        let _ = std::fs::remove_file(trace);
    }
}
