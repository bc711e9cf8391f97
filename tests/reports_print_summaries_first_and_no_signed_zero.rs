//! What a run prints is read by people and scripts: `compare` prints a summary (step, compute,
//! memory and communication, the number of collectives) and each collective's row only with
//! `--collectives`, and no output ever writes a signed zero (`-0.0`).

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

#[test]
fn compare_prints_a_summary_and_collectives_on_request_and_no_signed_zero() {
    let d = scratch("reports_summaries");
    let w = d.join("w.ron");
    let gen = ["workload", "llm", "--layers", "6", "--hidden", "512", "--ffn", "1024", "--heads", "4", "--tp", "4"];
    let (code, _, err) = run(&[&gen[..], &["--seq", "128", "--batch", "1", "-o", p(&w)]].concat());
    assert_eq!(code, 0, "{err}");
    let systems = ["--system", "trn3-gen1-ultraserver", "--system", "trn3-gen2-ultraserver"];
    let json = d.join("c.json");
    let (code, out, err) =
        run(&[&["compare", "--compute", "roofline", "--workload", p(&w), "--json", p(&json)][..], &systems].concat());
    assert_eq!(code, 0, "{err}");
    // Six layers, two all-reduces each: twelve collectives, summarised in two rows.
    assert!(out.lines().any(|l| l.starts_with("collectives ") && l.ends_with(" 12")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("collective_time_us ")), "{out}");
    assert!(!out.contains("_busbw_GBps"), "no per-collective rows without --collectives: {out}");
    // The time rows, the collectives' two, energy's (total, power per chip and server,
    // performance per watt, tokens per joule) and cost's (per step, per million tokens, tokens/s
    // per kW).
    assert!(out.lines().count() < 25, "a summary: {out}");
    assert!(out.contains("12 collectives; each one's bus bandwidth: --collectives"), "{out}");
    let (code, all, err) =
        run(&[&["compare", "--compute", "roofline", "--workload", p(&w), "--collectives"][..], &systems].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(all.lines().filter(|l| l.contains("_busbw_GBps")).count(), 12, "{all}");
    assert!(all.starts_with(out.lines().next().unwrap_or("?")), "the summary comes first: {all}");
    // The workload has no memory-bound node: its memory time is zero, written unsigned.
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(text.contains("\"memory_us\""), "{text}");
    assert!(!text.contains("-0.0") && !text.contains("-0,") && !out.contains("-0 "), "a signed zero: {text}");
    let rj = d.join("r.json");
    let (code, out, err) = run(&["run", "--compute", "roofline", "--workload", p(&w), "--json", p(&rj)]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("-0.0"), "{out}");
    assert!(!std::fs::read_to_string(&rj).unwrap().contains("-0.0"), "a signed zero in run --json");
}
