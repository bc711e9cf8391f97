//! The mistakes users make in files and flags get one located line (exit 2) that says what was
//! meant: a mistyped `--set` path or field name gets the nearest names by edit distance on each
//! segment, a missing field is reported at the struct that lacks it, NaN or inf in a system
//! file is refused at the number through every entry point, JSON errors name the field's path,
//! `config check` takes workload files, and `--workload` always names a file (told apart by
//! content, whatever its extension).

use crate::common::{root, scratch, trnsim};
use std::path::Path;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn p(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// Exit 2, one line on stderr containing every `want`, nothing on stdout.
fn refused(args: &[&str], want: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line expected: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: expected {w:?} in {err}");
    }
    assert!(out.is_empty(), "{args:?}: nothing runs: {out}");
    err
}

/// A small four-rank workload written by `trnsim workload llm` as `name` in `d`.
fn workload(d: &Path, name: &str) -> std::path::PathBuf {
    let w = d.join(name);
    let gen = ["workload", "llm", "--layers", "1", "--hidden", "512", "--ffn", "1024", "--heads", "4", "--tp", "4"];
    let (code, _, err) = run(&[&gen[..], &["--seq", "128", "--batch", "1", "-o", p(&w)]].concat());
    assert_eq!(code, 0, "{err}");
    w
}

#[test]
fn a_mistyped_path_or_field_suggests_the_nearest_by_segment() {
    let err = refused(
        &["run", "fabric-allreduce-trn2-16", "--system", "trn3-gen1-ultraserver", "--set", "fabric.swich.latency=1ns"],
        &["unknown path fabric.swich.latency"],
    );
    let near = err.split("nearest: ").nth(1).unwrap_or("");
    assert!(near.starts_with("fabric.switch.latency"), "the same path with the segment fixed comes first: {err}");
    let err = refused(&["run", "e2e-llm-layer", "--set", "chip.neuronlink.lanes=4"], &["unknown path"]);
    let near = err.split("nearest: ").nth(1).unwrap_or("");
    assert!(near.starts_with("chip.neuronlink.lanes_per_port"), "a name typed short finds its field: {err}");
    // A typo in a file's field name: located at the name, the nearest allowed names first.
    let d = scratch("hostile_mistakes_fields");
    let chip = std::fs::read_to_string(root().join("models/configs/system/trn3-chip.ron")).unwrap();
    let line = chip.lines().position(|l| l.trim_start().starts_with("cores:")).expect("cores line") + 1;
    let typo = d.join("typo.ron");
    std::fs::write(&typo, chip.replacen("    cores:", "    croes:", 1)).unwrap();
    refused(
        &["config", "check", p(&typo)],
        &[&format!("typo.ron:{line}:5: croes: unknown field `croes`"), "did you mean `cores`"],
    );
}

#[test]
fn a_missing_field_is_reported_at_the_struct_that_lacks_it() {
    let d = scratch("hostile_mistakes_missing");
    let chip = std::fs::read_to_string(root().join("models/configs/system/trn3-chip.ron")).unwrap();
    let open = chip.lines().position(|l| l.starts_with("ChipSpec(")).expect("ChipSpec( line") + 1;
    let text: String =
        chip.lines().filter(|l| !l.trim_start().starts_with("cores:")).map(|l| format!("{l}\n")).collect();
    let f = d.join("nocores.ron");
    std::fs::write(&f, text).unwrap();
    let err = refused(&["config", "check", p(&f)], &[&format!("nocores.ron:{open}:1: cores: missing field `cores`")]);
    assert!(!err.contains("sbuf"), "not at the field after it: {err}");
}

#[test]
fn nan_or_inf_in_a_system_file_is_refused_at_the_number_everywhere() {
    let d = scratch("hostile_mistakes_nan");
    let sys = root().join("models/configs/system");
    let chip = std::fs::read_to_string(sys.join("trn3-chip.ron")).unwrap();
    let line = chip.lines().position(|l| l.trim_start().starts_with("dma_GBps:")).expect("dma_GBps line") + 1;
    let bad: String = chip
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("dma_GBps:") {
                "        dma_GBps: -inf,".to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect::<String>()
        .replacen("\"trn3-chip\"", "\"nanchip\"", 1);
    std::fs::write(d.join("nanchip.ron"), &bad).unwrap();
    let us = std::fs::read_to_string(sys.join("trn3-gen1-ultraserver.ron")).unwrap().replacen(
        "chip: \"trn3-chip\"",
        "chip: \"nanchip\"",
        1,
    );
    std::fs::write(d.join("us.ron"), us).unwrap();
    let w = workload(&d, "w.ron");
    let at = format!("nanchip.ron:{line}:19: dma_GBps: -inf is not a number");
    let (chip_f, us_f) = (d.join("nanchip.ron"), d.join("us.ron"));
    refused(&["config", "check", p(&chip_f)], &[&at]);
    refused(&["run", "e2e-llm-layer", "--system", p(&chip_f)], &[&at]);
    refused(&["run", "e2e-llm-layer", "--config", p(&chip_f)], &[&at]);
    refused(&["run", "--workload", p(&w), "--system", p(&us_f)], &[&at]);
    refused(&["compare", "--workload", p(&w), "--system", p(&us_f)], &[&at]);
    refused(&["collective", "all-reduce", "-b", "1M", "-e", "1M", "--system", p(&us_f)], &[&at]);
}

#[test]
fn workload_files_are_checked_located_and_told_apart_by_content() {
    let d = scratch("hostile_mistakes_workloads");
    let w = workload(&d, "w.json");
    // `config check` takes workload files, RON or JSON, whatever the extension.
    let upper = d.join("W.JSON");
    let txt = d.join("w.txt");
    std::fs::copy(&w, &upper).unwrap();
    std::fs::copy(workload(&d, "w.ron"), &txt).unwrap();
    for f in [&w, &upper, &txt] {
        let (code, out, err) = run(&["config", "check", p(f)]);
        assert_eq!(code, 0, "{f:?}: {err}");
        assert!(out.contains(": ok (workload llm-dense-1l") && out.contains("4 ranks"), "{out}");
    }
    // JSON errors name the field's path, not `(top level)`; unknown names suggest the nearest.
    let text = std::fs::read_to_string(&w).unwrap();
    let line = text.lines().position(|l| l.contains("\"m\": ")).expect("an m field") + 1;
    let bad = d.join("bad.json");
    std::fs::write(&bad, text.replacen("\"m\": 128", "\"m\": \"x\"", 1)).unwrap();
    refused(&["config", "check", p(&bad)], &[&format!("bad.json:{line}:"), ": nodes[0].op.Gemm.m: invalid type"]);
    refused(&["run", "--workload", p(&bad)], &[&format!("bad.json:{line}:"), ": nodes[0].op.Gemm.m: invalid type"]);
    std::fs::write(&bad, text.replacen("\"ranks\": 4", "\"rank\": 4", 1)).unwrap();
    refused(&["config", "check", p(&bad)], &["bad.json:4:", ": rank: unknown field `rank`", "did you mean `ranks`"]);
    // `--workload` names a file, always: an upper-case or other extension runs as its content
    // says, and a benchmark name is told where it goes.
    let json = |f: &Path, out: &Path| {
        let (code, _, err) = run(&["run", "--compute", "roofline", "--workload", p(f), "--json", p(out)]);
        assert_eq!(code, 0, "{f:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
        v["points"].clone()
    };
    assert_eq!(json(&upper, &d.join("r1.json")), json(&txt, &d.join("r2.json")), "JSON and RON run the same");
    refused(
        &["run", "--workload", "e2e-llm-layer"],
        &["--workload e2e-llm-layer: cannot read: no such file", "`trnsim run e2e-llm-layer`"],
    );
    refused(&["run", "--workload", p(&d.join("none.ron"))], &["none.ron: cannot read: no such file"]);
    // An output directory error names the path the user gave.
    refused(&["run", "--workload", p(&txt), "--trace", "no-such-dir/x.pftrace"], &["--trace no-such-dir/x.pftrace:"]);
}

#[test]
fn a_value_far_from_the_one_it_replaces_runs_with_one_warning_line() {
    let c = ["collective", "all-reduce", "-b", "1K", "-e", "1K", "--system", "trn3-gen1-ultraserver"];
    let (code, out, err) = run(&[&c[..], &["--set", "chip.efa.latency=900ms"]].concat());
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    let want = "--set chip.efa.latency=900ms: chip.efa.latency is 900ms, 64286x above the 14us it replaces";
    assert!(warnings[0].contains(want), "{err}");
    // A value refused by its range check prints the error alone.
    refused(&[&c[..], &["--set", "chip.efa.latency=20s"]].concat(), &["efa.latency: 20s is out of range"]);
    assert!(out.contains("Avg bus bandwidth"), "the run goes on: {out}");
    // Within two orders of magnitude, and across a sweep's points, no more than that.
    let (code, _, err) = run(&[&c[..], &["--set", "chip.efa.latency=140us"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    let (code, _, err) =
        run(&["run", "fabric-allreduce-trn2-16", "--set", "fabric.phy=5us", "--sweep", "fabric.wire=1ns,2ns"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("warning: ")).count(), 1, "{err}");
}

#[test]
fn names_from_files_are_escaped_and_never_leave_the_plots_directory() {
    let d = scratch("hostile_mistakes_names");
    let w = workload(&d, "w.ron");
    let text = std::fs::read_to_string(&w).unwrap();
    let name = text.lines().find(|l| l.trim_start().starts_with("name:")).expect("name line").to_string();
    let bad = d.join("bad.ron");
    std::fs::write(&bad, text.replacen(&name, "    name: \"../../escaped\\u{1b}[31m\",", 1)).unwrap();
    let plots = d.join("plots");
    let (code, out, err) =
        run(&["run", "--workload", p(&bad), "--compute", "roofline", "--gemm-efficiency", "0.5", "--plots", p(&plots)]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains('\u{1b}') && !err.contains('\u{1b}'), "a raw escape reached the terminal: {out}{err}");
    assert!(out.contains("workload ../../escaped\\u{1b}[31m on"), "{out}");
    let files: Vec<String> =
        std::fs::read_dir(&plots).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(files, ["_.._.._escaped__31m-breakdown.svg"], "the plot stays in --plots");
    assert!(!d.join("escaped\u{1b}[31m-breakdown.svg").exists() && !root().join("..").join("escaped").exists());
}
