//! `trnsim hbm --trace` on a DRAMsim3 or Ramulator 2 trace runs by default with those tools'
//! front end (`trace-cpu`) and says so; the `port` requester says when its in-flight cap bound
//! the bandwidth, with the Little's-law figure; `requests` counts trace lines (or synthetic
//! requests of `--request-bytes`) and `bursts` the 32 B bursts moved; `--request-bytes` works
//! on synthetic patterns.

use crate::common::{root, scratch, trnsim};
use trnsim_harness::memtrace::{synth, write_trace, SynthKind, TraceFormat};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn figure(out: &str, name: &str) -> f64 {
    let line =
        out.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{name} in {out}"));
    line.split_whitespace().last().unwrap().parse().unwrap()
}

/// A Ramulator-format trace of `lines` random 64 B-aligned reads over 4 GiB.
fn random_lines(name: &str, lines: u64) -> std::path::PathBuf {
    let path = scratch(name).join("rand64.trace");
    let mut f = std::fs::File::create(&path).unwrap();
    write_trace(&mut f, TraceFormat::Ramulator, synth(SynthKind::RandomRead, lines as usize, 9, 4 << 30, 64)).unwrap();
    path
}

#[test]
fn a_tools_trace_runs_with_the_tools_front_end_by_default() {
    let path = random_lines("hbm_requester_default", 20_000);
    let p = path.to_str().unwrap();
    let (code, out, err) = run(&["hbm", "--trace", p]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("requester: trace-cpu"), "{out}");
    let (code, explicit, err) = run(&["hbm", "--trace", p, "--requester", "trace-cpu"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(figure(&out, "bandwidth_GBps"), figure(&explicit, "bandwidth_GBps"));
    // One burst per CK (32 B at 1.6 GHz) binds a trace the memory could serve faster.
    assert!(out.contains("the requester bound the bandwidth: one burst per CK is 51.2 GB/s"), "{out}");
    // The lines are counted as requests, their bursts apart.
    assert_eq!(figure(&out, "requests"), 20_000.0);
    assert_eq!(figure(&out, "bursts"), 40_000.0);
}

#[test]
fn the_port_requester_says_when_its_cap_bound_the_bandwidth() {
    let path = random_lines("hbm_requester_cap", 40_000);
    let p = path.to_str().unwrap();
    let (code, out, err) = run(&["hbm", "--trace", p, "--in-flight", "256", "--width", "16"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("requester: port (16 bursts offered per CK, at most 256 in flight)"), "{out}");
    let note =
        out.lines().find(|l| l.contains("the in-flight cap bound the bandwidth")).unwrap_or_else(|| panic!("{out}"));
    // Little's law: 256 bursts of 32 B over the mean latency (offer to response) the note
    // names, against the bandwidth measured.
    let words: Vec<&str> = note.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "law").unwrap();
    let lat: f64 = words[at + 6].parse().unwrap();
    let little: f64 = words[at + 9].parse().unwrap();
    assert!((little - 256.0 * 32.0 / lat).abs() < 0.3, "{note}");
    let bw = figure(&out, "bandwidth_GBps");
    assert!(bw <= little * 1.01 && bw >= little * 0.9, "{bw} against {little}: {note}");
    // With a cap that does not bind, no such note, and more bandwidth.
    let (code, free, err) = run(&["hbm", "--trace", p, "--in-flight", "4096", "--width", "64"]);
    assert_eq!(code, 0, "{err}");
    assert!(!free.contains("cap bound"), "{free}");
    assert!(figure(&free, "bandwidth_GBps") > 2.0 * bw);
}

#[test]
fn request_bytes_sizes_synthetic_requests_too() {
    let (code, out, err) = run(&["hbm", "--pattern", "random", "--requests", "2000", "--request-bytes", "128"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(figure(&out, "requests"), 2_000.0);
    assert_eq!(figure(&out, "bursts"), 8_000.0);
    // Without it a synthetic request is one burst, as before.
    let (code, out, err) = run(&["hbm", "--pattern", "random", "--requests", "2000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(figure(&out, "requests"), 2_000.0);
    assert_eq!(figure(&out, "bursts"), 2_000.0);
    let (code, _, err) = run(&["hbm", "--pattern", "random", "--requests", "20", "--request-bytes", "48"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--request-bytes: 48 is not allowed"), "{err}");
}
