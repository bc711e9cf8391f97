//! An HBM stack is data: the built-in presets are the files of models/configs/mem/hbm, a chip
//! file may name its stack by path (relative to the chip file), `trnsim hbm --preset FILE` and
//! `trnsim describe hbm FILE` take one, every field is settable with `--set`, and a bad field
//! is one located error in the file that holds it, exit 2, nothing run.

use crate::common::{root, scratch, trnsim};
use trnsim_system::doc::SystemDoc;

fn preset_text(name: &str) -> String {
    std::fs::read_to_string(root().join(format!("models/configs/mem/hbm/{name}.ron"))).unwrap()
}

/// A chip file beside a stack file `slow.ron` (hbm3e-9600 renamed, its CK at `ck`).
fn write_pair(dir: &std::path::Path, ck: &str) -> std::path::PathBuf {
    let stack = preset_text("hbm3e-9600").replacen("name: \"hbm3e-9600\"", "name: \"slow\"", 1).replacen(
        "ck_mhz: 2400,",
        &format!("ck_mhz: {ck},"),
        1,
    );
    std::fs::write(dir.join("slow.ron"), stack).unwrap();
    let chip = std::fs::read_to_string(root().join("models/configs/system/trn3-chip.ron")).unwrap();
    let chip = chip.replacen("preset: \"hbm3e-9600\"", "preset: \"slow.ron\"", 1);
    assert!(chip.contains("slow.ron"), "trn3-chip.ron names its stack as preset: \"hbm3e-9600\"");
    let path = dir.join("chip.ron");
    std::fs::write(&path, chip).unwrap();
    path
}

#[test]
fn the_built_in_presets_are_the_files() {
    for p in trnsim_mem::hbm::presets::ALL.iter() {
        let path = root().join(format!("models/configs/mem/hbm/{}.ron", p.name));
        let file = trnsim_system::chip::stack_file::load(path.to_str().unwrap(), "").unwrap();
        assert_eq!(&file, p);
    }
}

#[test]
fn a_stack_file_beside_a_chip_file_is_the_chips_stack() {
    let dir = scratch("hbm-stack-file-by-path");
    let chip = write_pair(&dir, "1200");
    let mut doc = SystemDoc::open(chip.to_str().unwrap()).unwrap();
    let c = doc.resolve().unwrap();
    let c = c.chip().unwrap();
    assert_eq!((c.hbm.name.as_str(), c.hbm.timing.ck_mhz), ("slow", 1200));
    // Half the clock: half trn3-chip's 4915.2 GB/s.
    assert!((c.peak_hbm_gbps() - 2457.6).abs() < 1e-6, "{}", c.peak_hbm_gbps());
    assert!(doc.files().iter().any(|(part, p)| *part == "hbm stack" && p.ends_with("slow.ron")));
    // Every field of the stack is a path of the system's tree.
    assert!(doc.paths().iter().any(|p| p == "chip.hbm.preset.timing.cl"), "{:?}", doc.paths());
    doc.set("chip.hbm.preset.timing.ck_mhz=2400").unwrap();
    doc.set("chip.hbm.preset.org.rows=12288").unwrap();
    let c = doc.resolve().unwrap();
    let c = c.chip().unwrap();
    assert_eq!((c.hbm.timing.ck_mhz, c.stack_bytes()), (2400, 18 << 30));
    // A set value is checked where read: a located error in the stack file, naming the flag.
    doc.set("chip.hbm.preset.org.bank_groups=0").unwrap();
    let e = doc.resolve().map(|_| ()).unwrap_err();
    assert!(e.contains("slow.ron:") && e.contains("hbm.preset.org.bank_groups: 0 is out of range"), "{e}");
    assert!(e.contains("chip.hbm.preset.org.bank_groups=0"), "{e}");
}

#[test]
fn a_bad_field_in_a_stack_file_is_located_there_and_nothing_runs() {
    let dir = scratch("hbm-stack-file-bad");
    let chip = write_pair(&dir, "0");
    let e = SystemDoc::open(chip.to_str().unwrap()).and_then(|d| d.resolve().map(|_| ())).unwrap_err();
    let line = preset_text("hbm3e-9600").lines().position(|l| l.contains("ck_mhz:")).unwrap() + 1;
    assert!(e.contains(&format!("slow.ron:{line}:9: timing.ck_mhz: 0 is out of range")), "{e}");
    for args in [vec!["describe", "hbm"], vec!["hbm", "--requests", "10", "--preset"]] {
        let out = trnsim().args(&args).arg(dir.join("slow.ron")).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("slow.ron:{line}:9: timing.ck_mhz:")), "{err}");
        assert!(out.stdout.is_empty(), "{args:?} ran: {}", String::from_utf8_lossy(&out.stdout));
    }
    // Missing, unknown and mistyped fields are located too.
    let base = preset_text("hbm3-6400");
    for (bad, want) in [
        (base.replace("        rrefd: 8, // CK, REFPB to ACT/REFPB, other bank\n", ""), "rrefd"),
        (base.replace("rrefd: 8,", "rrefd: 8, refab: 3,"), "refab"),
        (base.replace("rrefd: 8,", "rrefd: \"8ns\","), "rrefd"),
        (base.replace("rrefd: 8,", "rrefd: -8,"), "rrefd"),
    ] {
        std::fs::write(dir.join("b.ron"), &bad).unwrap();
        let out = trnsim().args(["hbm", "--requests", "10", "--preset"]).arg(dir.join("b.ron")).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("b.ron:") && err.contains(want) && err.lines().count() == 1, "{err}");
    }
}

#[test]
fn a_preset_and_its_file_run_the_same() {
    let dir = scratch("hbm-stack-file-same");
    std::fs::write(
        dir.join("copy.json"),
        serde_json::to_string(trnsim_mem::hbm::presets::find("hbm3-5700").unwrap()).unwrap(),
    )
    .unwrap();
    let run = |preset: &std::path::Path| {
        let out = trnsim().args(["hbm", "--requests", "500", "--preset"]).arg(preset).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // Everything but the host's own speed.
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines().filter(|l| !l.trim_start().starts_with("host_")).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(run(std::path::Path::new("hbm3-5700")), run(&dir.join("copy.json")));
    let out = trnsim().args(["describe", "hbm"]).arg(dir.join("copy.json")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("hbm3-5700: HBM3 5.7 Gb/s") && text.contains("timing (CK cycles)"), "{text}");
}

/// A chip on a stack of the user's own, which the HBM energy table does not know, says so in
/// one located warning rather than reporting its HBM energy as a silent zero; a built-in
/// stack draws no warning.
#[test]
fn a_stack_without_energy_figures_is_said_not_counted_silently() {
    let dir = scratch("hbm_stack_without_energy");
    let chip = write_pair(&dir, "2400");
    let out = trnsim().args(["config", "paths"]).arg(&chip).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("chip.ron:") && err.contains("energy: HBM stack \"slow\" has no energy figures"),
        "a located warning: {err}"
    );
    assert_eq!(err.matches("warning:").count(), 1, "once: {err}");
    let out = trnsim().args(["config", "paths", "trn3-chip"]).output().unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("energy figures"), "a built-in stack has its figures");
}
