//! `trnsim hbm` reports the stack's energy by action and in total (printed, and in `--json`),
//! from the built-in table of IDD currents or one given with `--energy`; the total is the sum
//! of the actions; the figures are deterministic; a bad table is one located error, exit 2.

use crate::common::{root, scratch, trnsim};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn stat(json: &serde_json::Value, name: &str) -> f64 {
    json["stats"]["owners"]["hbm"][name].as_f64().unwrap_or_else(|| panic!("{name}"))
}

const ACTIONS: [&str; 9] = ["act", "pre", "rd", "wr", "ref", "refpb", "bg_active", "bg_precharged", "io"];

#[test]
fn the_energy_is_printed_and_written_and_sums_its_actions() {
    let dir = scratch("hbm_energy_json");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    for path in [&a, &b] {
        let p = path.to_str().unwrap();
        let (code, out, err) =
            run(&["hbm", "--pattern", "mix", "--requests", "20000", "--refresh", "all-bank", "--json", p]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("energy_uJ") && out.contains("by action (uJ): act "), "{out}");
    }
    let text = std::fs::read_to_string(&a).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let sum: f64 = ACTIONS.iter().map(|k| stat(&json, &format!("energy_pJ_{k}"))).sum();
    let total = stat(&json, "energy_pJ_total");
    assert!((sum - total).abs() < 1e-6 * total, "{sum} against {total}");
    for k in ["act", "pre", "rd", "wr", "ref", "bg_active", "io"] {
        assert!(stat(&json, &format!("energy_pJ_{k}")) > 0.0, "{k}");
    }
    assert_eq!(stat(&json, "energy_pJ_refpb"), 0.0, "all-bank refresh issues no REFPB");
    // Deterministic: the same figures in a second run (the host timing aside).
    let strip = |t: &str| {
        let mut v: serde_json::Value = serde_json::from_str(t).unwrap();
        v.as_object_mut().unwrap().retain(|k, _| !k.starts_with("host_"));
        v.to_string()
    };
    assert_eq!(strip(&text), strip(&std::fs::read_to_string(&b).unwrap()));
}

#[test]
fn a_users_energy_table_replaces_the_builtin_one() {
    let dir = scratch("hbm_energy_table");
    let builtin = std::fs::read_to_string(root().join("models/configs/mem/hbm-energy.ron")).unwrap();
    let twice = builtin.replace("io_pj_per_bit: 0.4", "io_pj_per_bit: 0.8");
    let path = dir.join("t.ron");
    std::fs::write(&path, twice).unwrap();
    let json = |extra: &[&str]| {
        let out = dir.join("o.json");
        let mut args = vec!["hbm", "--pattern", "random", "--requests", "5000", "--json", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&out).unwrap()).unwrap()
    };
    let (a, b) = (json(&[]), json(&["--energy", path.to_str().unwrap()]));
    assert_eq!(2.0 * stat(&a, "energy_pJ_io"), stat(&b, "energy_pJ_io"));
    assert_eq!(stat(&a, "energy_pJ_act"), stat(&b, "energy_pJ_act"));
}

#[test]
fn a_bad_energy_table_is_one_located_error() {
    let dir = scratch("hbm_energy_bad");
    let builtin = std::fs::read_to_string(root().join("models/configs/mem/hbm-energy.ron")).unwrap();
    let line_of = |needle: &str| builtin[..builtin.find(needle).unwrap()].matches('\n').count() + 1;
    let first_idd3n = line_of("idd3n: 27.5");
    for (name, text, want) in [
        (
            "negative.ron",
            builtin.replacen("idd3n: 27.5", "idd3n: -1.0", 1),
            format!(":{first_idd3n}:13: stacks.hbm2-2000.idd3n: -1 is not allowed"),
        ),
        (
            "nan.ron",
            builtin.replacen("idd3n: 27.5", "idd3n: NaN", 1),
            // Refused where it is read, as every RON loader refuses NaN: at the number.
            format!(":{first_idd3n}:20: idd3n: NaN is not a number the simulator can use"),
        ),
        ("missing.ron", builtin.replacen("idd3n: 27.5,", "", 1), "missing field `idd3n`".to_string()),
        ("unknown.ron", builtin.replacen("idd3n: 27.5", "idd3x: 27.5", 1), "idd3x".to_string()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let (code, out, err) =
            run(&["hbm", "--pattern", "random", "--requests", "10", "--energy", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(&want), "{name}: {err}");
        assert!(crate::common::is_located(err.trim().trim_start_matches("error: ")), "{name}: {err}");
    }
}
