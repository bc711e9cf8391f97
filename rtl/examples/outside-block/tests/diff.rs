//! The out-of-tree block against its RTL (with the RTL: verilator-sys feature `rtl`, e.g.
//! `cargo test -p trnsim-outside-block --features trnsim-rtl/rtl`; without it the RTL tests
//! are reported ignored, never passed).

use std::process::Command;
use trnsim_outside_block::{Acc, AccStimulus, BLOCKS};
use trnsim_rtl::diff::{diff, DiffConfig, DiffError};
use trnsim_rtl::registry::DiffRequest;

fn entry(name: &str) -> &'static trnsim_rtl::registry::BlockEntry {
    BLOCKS.iter().find(|b| b.name == name).unwrap()
}

#[test]
fn model_against_itself_and_against_a_wrapping_model() {
    // No RTL needed: the model is deterministic, and the stimulus reaches both limits.
    let cfg = DiffConfig::every_cycle(50_000);
    diff(|| Acc::new(3, true), || Ok(Acc::new(3, true)), || AccStimulus::new(5), &cfg).unwrap();
    let e = diff(|| Acc::new(3, true), || Ok(Acc::new(3, false)), || AccStimulus::new(5), &cfg).unwrap_err();
    assert!(matches!(e, DiffError::Diverged(_)), "{e}");
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn oot_acc_matches_its_rtl_for_100k_cycles_with_full_coverage() {
    let t = std::time::Instant::now();
    let r = entry("oot_acc").diff(&DiffRequest::new(100_000, 1)).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("oot_acc: {} cycles in {:.2} s", r.cycles, t.elapsed().as_secs_f64());
    assert_eq!(r.cycles, 100_000);
    let (model, rtl) = r.coverage.expect("coverage");
    assert_eq!(model, rtl);
    assert_eq!(model.percent(), 100.0, "{}", model.table(20));
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn the_planted_bug_a_string_parameter_flipped_is_caught() {
    let e = entry("oot_acc_wrap_bug").diff(&DiffRequest::new(100_000, 1)).unwrap_err();
    let DiffError::Diverged(d) = &e else { panic!("expected a divergence, got {e}") };
    eprintln!("{e}");
    assert_eq!(d.port, "count");
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn the_blocks_own_binary_is_trnsim_diff_with_the_block_added() {
    let bin = env!("CARGO_BIN_EXE_outside-block");
    let list = Command::new(bin).args(["diff", "--list"]).output().unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success() && text.contains("oot_acc ") && text.contains("islip_n4_i1"), "{text}");
    let ok = Command::new(bin).args(["diff", "oot_acc", "--cycles", "20000", "--seed", "3"]).output().unwrap();
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{text}{}", String::from_utf8_lossy(&ok.stderr));
    assert!(text.contains("oot_acc: 20000 cycles (random, seed 3), no divergence"), "{text}");
    let bug = Command::new(bin).args(["diff", "oot_acc_wrap_bug", "--cycles", "20000"]).output().unwrap();
    assert_eq!(bug.status.code(), Some(1), "{}", String::from_utf8_lossy(&bug.stdout));
    assert!(String::from_utf8_lossy(&bug.stdout).contains("DIVERGED"));
    // trnsim's own blocks still run from here.
    let own = Command::new(bin).args(["diff", "link_fifo", "--cycles", "2000"]).output().unwrap();
    assert!(own.status.success(), "{}", String::from_utf8_lossy(&own.stderr));
}

fn fuzz_bytes(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn fuzz_stimulus_drives_the_declared_active_low_reset() {
    use trnsim_rtl::block::Block;
    use trnsim_rtl::stimulus::FuzzStimulus;
    let m = Acc::new(3, true);
    let f = FuzzStimulus::from_bytes_reset(m.ports(), m.reset(), &fuzz_bytes(20_000));
    let v = f.vectors();
    let arst = trnsim_outside_block::port::ARST_NI;
    assert_eq!((v[0][arst], v[1][arst]), (0, 0), "asserted (low) in cycles 0 and 1");
    let low = v.iter().filter(|c| c[arst] == 0).count();
    assert!(low >= 2 && low < v.len() / 20, "asserted rarely: {low} of {}", v.len());
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn oot_acc_matches_its_rtl_on_fuzz_stimulus() {
    use trnsim_rtl::registry::StimulusKind;
    let req = DiffRequest { stimulus: StimulusKind::Fuzz(fuzz_bytes(50_000)), ..DiffRequest::new(100_000, 1) };
    let r = entry("oot_acc").diff(&req).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.cycles > 1000, "{} cycles", r.cycles);
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn an_assertion_in_the_crates_own_rtl_is_reported_by_its_label() {
    // A wrapping model agrees with the wrapping RTL port for port: only the RTL's assertion
    // (the spec: counting up never lowers the count) catches the bug.
    #[cfg(trnsim_rtl)]
    {
        use trnsim_outside_block::models::OotAccWrap;
        use trnsim_rtl::rtl::Rtl;
        let cfg = DiffConfig::every_cycle(100_000);
        let e = diff(|| Acc::new(3, false), Rtl::<OotAccWrap>::new, || AccStimulus::new(1), &cfg).unwrap_err();
        let DiffError::Assertion(a) = &e else { panic!("expected an assertion failure, got {e}") };
        assert_eq!(a.label, "a_up_never_wraps");
        assert!(a.location.starts_with("acc_core.sv:"), "{}", a.location);
    }
}

#[test]
#[cfg_attr(not(trnsim_rtl), ignore = "needs the RTL: build with --features trnsim-rtl/rtl (Verilator 5)")]
fn a_divergence_writes_its_waveforms_as_fst_too() {
    let dir = std::env::temp_dir().join(format!("oot-fst-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_outside-block"))
        .args(["diff", "oot_acc_wrap_bug", "--vcd", dir.to_str().unwrap(), "--fst"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for side in ["model", "rtl", "diff"] {
        let fst = dir.join(format!("oot_acc_wrap_bug.{side}.fst"));
        assert!(text.contains(&fst.display().to_string()), "{text}");
        let (f, v) = (std::fs::read(&fst).unwrap(), std::fs::read(fst.with_extension("vcd")).unwrap());
        // An FST starts with its header block (type 0, 329 bytes) and is smaller than the VCD.
        assert_eq!(&f[..9], &[0, 0, 0, 0, 0, 0, 0, 1, 0x49], "{side}");
        assert!(f.len() < v.len(), "{side}: {} bytes of FST, {} of VCD", f.len(), v.len());
    }
    // Without --vcd, --fst is a usage error.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_outside-block"))
        .args(["diff", "oot_acc", "--fst"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first and last timestamps of a VCD (10 time units a cycle).
fn vcd_span(path: &std::path::Path) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let stamps: Vec<u64> = text.lines().filter_map(|l| l.strip_prefix('#')).map(|t| t.parse().unwrap()).collect();
    (stamps[0], *stamps.last().unwrap())
}

#[test]
fn waves_cover_the_whole_run_or_a_window_clean_or_not() {
    use trnsim_rtl::diff::Waves;
    let e = entry("oot_acc");
    let dir = std::env::temp_dir().join(format!("oot-waves-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = || Ok(Box::new(trnsim_outside_block::Acc::new(3, true)) as Box<dyn trnsim_rtl::block::Block>);
    // The model against itself: a clean run, so only --waves all or a window writes anything.
    let req = |waves| DiffRequest { vcd_dir: Some(dir.clone()), waves, ..DiffRequest::new(500, 2) };
    let r = e.diff_with(&req(Waves::All), model).unwrap();
    let (m, rtl, merged) = r.waves.expect("waveforms of the whole run");
    assert!(m.is_file() && rtl.is_file() && merged.is_file());
    let (first, last) = vcd_span(&m);
    assert!(first == 0 && last >= 4990, "cycles 0 to 499: {first}..{last}");
    let r = e.diff_with(&req(Waves::Window(100, 199)), model).unwrap();
    let (m, _, _) = r.waves.expect("the window's waveforms");
    let (first, last) = vcd_span(&m);
    assert!((1000..=1010).contains(&first) && (1990..=2010).contains(&last), "cycles 100 to 199: {first}..{last}");
    // A window the run never reaches writes nothing; the default writes only on a failure.
    assert!(e.diff_with(&req(Waves::Window(600, 700)), model).unwrap().waves.is_none());
    assert!(e.diff_with(&req(Waves::Fail), model).unwrap().waves.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
