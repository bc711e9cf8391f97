//! Every file a run reads is an input, not only those typed on the command line: the chip,
//! fabric, UltraServer and switch files a system file pulls in are never overwritten by an
//! output (by name, by another spelling, through a hard link or a symlink), and the refusal
//! comes before anything runs or is written.

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

/// Asserts a one-line refusal (exit 2) naming `flag` and the pulled-in file, with nothing
/// printed on stdout.
fn refused(args: &[&str], expect: &str) {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.contains(expect) && err.contains("never overwrites an input"),
        "{args:?}: expected {expect:?} in {err}"
    );
    assert!(out.is_empty(), "{args:?}: nothing runs: {out}");
}

#[test]
fn outputs_never_overwrite_the_chip_ultraserver_or_switch_a_system_file_reads() {
    let d = scratch("hostile_pulled_in");
    let sys = root().join("models/configs/system");
    let chip = std::fs::read_to_string(sys.join("trn3-chip.ron")).unwrap().replacen("\"trn3-chip\"", "\"mychip\"", 1);
    std::fs::write(d.join("mychip.ron"), &chip).unwrap();
    let us = std::fs::read_to_string(sys.join("trn3-gen1-ultraserver.ron"))
        .unwrap()
        .replacen("\"trn3-gen1-ultraserver\"", "\"myus\"", 1)
        .replacen("chip: \"trn3-chip\"", "chip: \"mychip\"", 1);
    std::fs::write(d.join("myus.ron"), &us).unwrap();
    let cl = std::fs::read_to_string(sys.join("trn3-gen1-ultracluster-2.ron")).unwrap().replacen(
        "ultraserver: \"trn3-gen1-ultraserver\"",
        "ultraserver: \"myus\"",
        1,
    );
    std::fs::write(d.join("cl.ron"), &cl).unwrap();
    let sw = std::fs::read_to_string(root().join("models/configs/scaleout/eth-51.2t.ron")).unwrap();
    std::fs::write(d.join("eth-51.2t.ron"), &sw).unwrap();
    let w = d.join("w.ron");
    let gen = ["workload", "llm", "--layers", "1", "--hidden", "512", "--ffn", "1024", "--heads", "4", "--tp", "4"];
    let (code, _, err) = run(&[&gen[..], &["--seq", "128", "--batch", "1", "-o", p(&w)]].concat());
    assert_eq!(code, 0, "{err}");
    let (us_f, chip_f, cl_f, sw_f) =
        (d.join("myus.ron"), d.join("mychip.ron"), d.join("cl.ron"), d.join("eth-51.2t.ron"));
    refused(&["run", "--workload", p(&w), "--system", p(&us_f), "--json", p(&chip_f)], "its chip file");
    refused(&["compare", "--workload", p(&w), "--system", p(&us_f), "--json", p(&chip_f)], "its chip file");
    refused(
        &["collective", "all-reduce", "-b", "1M", "-e", "1M", "--system", p(&cl_f), "-J", p(&us_f)],
        "its ultraserver file",
    );
    refused(
        &["collective", "all-reduce", "-b", "1M", "-e", "1M", "--system", p(&cl_f), "--json", p(&sw_f)],
        "its switch file",
    );
    refused(&["run", "fabric-allreduce-trn2-16", "--system", p(&us_f), "--json", p(&chip_f)], "its chip file");
    // Another spelling, a hard link and a symlink are the same file.
    let dotted = d.join(".").join("mychip.ron");
    refused(&["compare", "--workload", p(&w), "--system", p(&us_f), "--json", p(&dotted)], "its chip file");
    let hard = d.join("hard.json");
    std::fs::hard_link(&chip_f, &hard).unwrap();
    refused(&["compare", "--workload", p(&w), "--system", p(&us_f), "--json", p(&hard)], "its chip file");
    #[cfg(unix)]
    {
        let soft = d.join("soft.json");
        std::os::unix::fs::symlink(&chip_f, &soft).unwrap();
        refused(&["compare", "--workload", p(&w), "--system", p(&us_f), "--json", p(&soft)], "its chip file");
    }
    // Nothing was written: every input reads back as it was, and the cluster still loads.
    assert_eq!(std::fs::read_to_string(&chip_f).unwrap(), chip);
    assert_eq!(std::fs::read_to_string(&us_f).unwrap(), us);
    assert_eq!(std::fs::read_to_string(&sw_f).unwrap(), sw);
    let (code, _, err) = run(&["config", "check", p(&cl_f)]);
    assert_eq!(code, 0, "{err}");
    // Elsewhere the same run writes its output.
    let r = d.join("r.json");
    let (code, _, err) =
        run(&["compare", "--compute", "roofline", "--workload", p(&w), "--system", p(&us_f), "--json", p(&r)]);
    assert_eq!(code, 0, "{err}");
    assert!(d.join("r.json").is_file());
}
