//! `trnsim regress` end to end: a regression of two blocks in two configurations each over
//! eight seeds writes JUnit XML and the coverage merged over each configuration's runs; the
//! same base seed repeats it byte for byte whatever `--jobs`; a random base seed is printed;
//! mistakes are usage errors. Without feature `rtl` only the "how to build it" error is checked.

use std::process::{Command, Output};

pub(crate) fn trnsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trnsim")).args(args).output().expect("run trnsim")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[cfg(not(feature = "rtl"))]
#[test]
fn regress_without_rtl_is_a_usage_error_saying_how_to_build() {
    let o = trnsim(&["regress", "link_fifo"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--features rtl"), "{err}");
}

#[cfg(feature = "rtl")]
mod rtl {
    use super::*;
    use std::path::PathBuf;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trnsim-regress-cli-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The link FIFO and the iSLIP arbiter, two built configurations each.
    const BLOCKS: &str = "link_fifo,link_fifo_w100_d5,islip_n4_i1,islip_n4_i3";

    fn regress(dir: &std::path::Path, jobs: &str) -> (String, String, String) {
        let (junit, cov) = (dir.join("junit.xml"), dir.join("coverage.json"));
        let o = trnsim(&[
            "regress",
            BLOCKS,
            "--seeds",
            "8",
            "--cycles",
            "4000",
            "--base-seed",
            "11",
            "--jobs",
            jobs,
            "--junit",
            junit.to_str().unwrap(),
            "--coverage-json",
            cov.to_str().unwrap(),
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        (out, std::fs::read_to_string(junit).unwrap(), std::fs::read_to_string(cov).unwrap())
    }

    #[test]
    fn two_blocks_in_two_configurations_over_eight_seeds_write_junit_and_merged_coverage() {
        let dir = tmp("matrix");
        let (out, junit, cov) = regress(&dir, "2");
        assert!(out.starts_with("regress: 4 blocks x 1 stimuli x 8 seeds = 32 runs of 4000 cycles"), "{out}");
        assert!(out.contains("base seed 11 (--base-seed 11 repeats them)"), "{out}");
        assert!(out.contains("32 runs in") && out.contains("32 passed, 0 failed"), "{out}");
        // JUnit: one suite per configuration, one case per seed, the same 8 seeds in each.
        assert!(junit.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"trnsim regress\" tests=\"32\" failures=\"0\" errors=\"0\">"), "{junit}");
        assert_eq!(junit.matches("<testsuite name=").count(), 4, "{junit}");
        assert_eq!(junit.matches("<testcase ").count(), 32, "{junit}");
        let seeds = |block: &str| -> Vec<String> {
            junit
                .lines()
                .filter(|l| l.contains(&format!("classname=\"regress.{block}\"")))
                .map(|l| l.split("name=\"random seed ").nth(1).unwrap().split('"').next().unwrap().to_string())
                .collect()
        };
        let s = seeds("link_fifo");
        assert_eq!(s.len(), 8);
        let mut distinct = s.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 8, "eight different seeds: {s:?}");
        assert_eq!(s, seeds("islip_n4_i3"), "every block runs the same seeds");
        // Coverage merged over each configuration's 8 runs: every bin's hits are the sum of
        // the runs' hits, so each is at least what one run of the same seed hits.
        let v: serde_json::Value = serde_json::from_str(&cov).unwrap();
        assert_eq!(v["base_seed"], 11);
        let blocks = v["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 4);
        for b in blocks {
            assert_eq!((b["runs"].as_u64(), b["merged_runs"].as_u64()), (Some(8), Some(8)), "{b}");
            assert_eq!(b["model_percent"].as_f64(), Some(100.0), "{b}");
            assert_eq!(b["model"], b["rtl"], "model and RTL reach the same bins: {b}");
        }
        let one_seed = &s[0];
        let single = dir.join("one.json");
        let o = trnsim(&[
            "diff",
            "link_fifo",
            "--seed",
            one_seed,
            "--cycles",
            "4000",
            "--coverage-json",
            single.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
        let one: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&single).unwrap()).unwrap();
        let bins = |p: &serde_json::Value| -> Vec<u64> {
            p["points"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|p| p["bins"].as_array().unwrap().iter().map(|b| b["hits"].as_u64().unwrap()))
                .collect()
        };
        let (merged, single) = (bins(&blocks[0]["model"]), bins(&one["model"]));
        assert_eq!(merged.len(), single.len());
        assert!(merged.iter().zip(&single).all(|(m, s)| m >= s), "{merged:?} vs {single:?}");
        assert!(merged.iter().sum::<u64>() > single.iter().sum::<u64>(), "eight runs hit more than one");
        // The same base seed repeats the regression exactly, on one thread or two.
        let (out1, junit1, cov1) = regress(&tmp("matrix-serial"), "1");
        assert_eq!((junit1, cov1), (junit, cov));
        let table = |o: &str| o.lines().skip(1).take(5).map(String::from).collect::<Vec<_>>();
        assert_eq!(table(&out1), table(&out));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_regression_without_a_base_seed_draws_and_prints_one_and_mistakes_are_usage_errors() {
        let o = trnsim(&["regress", "link_fifo", "--seeds", "2", "--cycles", "100"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        let base = out.split("base seed ").nth(1).and_then(|s| s.split(' ').next()).expect("printed base seed");
        assert!(out.contains(&format!("(--base-seed {base} repeats them)")), "{out}");
        for bad in [
            &["regress", "no_such_block"][..],
            &["regress", "link_fifo,link_fifo"],
            &["regress", "link_fifo", "--seeds", "0"],
            &["regress", "link_fifo", "--stimulus", "fuzz"],
            &["regress", "link_fifo", "--jobs", "0"],
            &["regress", "link_fifo", "--stimulus", "random,random"],
        ] {
            let o = trnsim(bad);
            assert_eq!(o.status.code(), Some(2), "{bad:?}: {:?}", text(&o));
        }
        // More runs than a regression may ask for: refused before any runs.
        let (list, _) = text(&trnsim(&["diff", "--list"]));
        let all: Vec<&str> = list.lines().filter_map(|l| l.split_whitespace().next()).collect();
        assert!(all.len() > 16, "{list}");
        let o = trnsim(&["regress", &all.join(","), "--seeds", "65536", "--cycles", "1"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{out}{err}");
        assert!(err.contains("runs asked for (at most 1048576)") && out.is_empty(), "{out}{err}");
    }
}
