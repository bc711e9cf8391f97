//! `trnsim hbm` runs DRAMsim3- and Ramulator-format traces, and a bad line stops the run with
//! the file, line and field (exit 2), never a panic.

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
    let line = out.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("{name} in {out}"));
    line.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn both_trace_formats_run_and_are_checked() {
    let dir = scratch("hbm_cli_traces");
    for (fmt, name) in [(TraceFormat::Dramsim3, "t.dramsim3"), (TraceFormat::Ramulator, "t.ramulator")] {
        let path = dir.join(name);
        let mut f = std::fs::File::create(&path).unwrap();
        write_trace(&mut f, fmt, synth(SynthKind::Mix, 20_000, 3, 1 << 30, 32)).unwrap();
        let p = path.to_str().unwrap();
        let (code, out, err) = run(&["hbm", "--preset", "hbm3-6400", "--trace", p, "--check", "--request-bytes", "32"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(figure(&out, "requests"), 20_000.0);
        assert!(out.contains("checker: 0 violations"), "{out}");
        assert!(figure(&out, "bandwidth_GBps") > 0.0);
    }
}

#[test]
fn a_trace_line_is_a_cache_line_of_bursts_by_default() {
    let dir = scratch("hbm_cli_lines");
    let path = dir.join("t.ramulator");
    // Three reads inside one 64 B line and one in the next: 4 lines of 2 bursts each.
    std::fs::write(&path, "LD 0x40\nLD 0x48\nLD 0x60\nLD 0x80\n").unwrap();
    let p = path.to_str().unwrap();
    let (code, out, err) = run(&["hbm", "--trace", p, "--check"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(figure(&out, "requests"), 4.0);
    assert_eq!(figure(&out, "bursts"), 8.0);
    assert!(out.contains("checker: 0 violations"), "{out}");
    let (code, out, err) = run(&["hbm", "--trace", p, "--request-bytes", "256"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(figure(&out, "requests"), 4.0);
    assert_eq!(figure(&out, "bursts"), 32.0);
    for bad in ["48", "16", "8192", "0"] {
        let (code, _, err) = run(&["hbm", "--trace", p, "--request-bytes", bad]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--request-bytes"), "{bad}: {err}");
    }
    // A flag the run would ignore is refused: a trace's without a trace, a synthetic
    // pattern's with one.
    for (args, expect) in [
        (&["hbm", "--requests", "5", "--format", "ramulator"][..], "--format reads a --trace FILE"),
        (&["hbm", "--trace", p, "--pattern", "stream-read"], "cannot be used with '--pattern <PATTERN>'"),
        (&["hbm", "--trace", p, "--requests", "5"], "cannot be used with '--requests <REQUESTS>'"),
        (&["hbm", "--trace", p, "--seed", "5"], "cannot be used with '--seed <SEED>'"),
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(expect), "{args:?}: expected {expect:?} in {err}");
        assert_eq!(out, "", "{args:?}");
    }
}

#[test]
fn bad_trace_lines_and_presets_are_located_errors() {
    let dir = scratch("hbm_cli_bad");
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, "0x1000 READ 0\n0x2000 READ 1\n0xZZ WRITE 2\n").unwrap();
    let p = bad.to_str().unwrap();
    let (code, _, err) = run(&["hbm", "--trace", p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.trace:3:1: field `address`"), "{err}");
    assert!(!err.contains("panicked"));
    let (code, _, err) = run(&["hbm", "--preset", "hbm9"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "--preset: unknown `hbm9` (known: hbm2-2000, hbm3-5700, hbm3-6400, hbm3e-9600, hbm4-8000, hbm4-9600, or a stack file's path)"
        ),
        "{err}"
    );
    let (code, _, err) = run(&["hbm", "--address-map", "ro-ba-bg-pc-ch-co", "--requests", "10"]);
    assert_eq!(code, 2);
    assert!(err.contains("level `sid` is missing"), "{err}");
    let (code, _, err) = run(&["hbm", "--trace", "/nonexistent.trace"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent.trace"), "{err}");
}

#[test]
fn the_trace_cpu_requester_is_one_request_per_cycle_with_no_cap_in_flight() {
    let dir = scratch("hbm_cli_requester");
    let path = dir.join("mix.trace");
    let mut f = std::fs::File::create(&path).unwrap();
    write_trace(&mut f, TraceFormat::Dramsim3, synth(SynthKind::Mix, 60_000, 5, 16 << 30, 32)).unwrap();
    drop(f);
    let p = path.to_str().unwrap();
    let base =
        ["hbm", "--trace", p, "--request-bytes", "32", "--address-map", "RoBaRaCoCh", "--refresh", "per-bank-hold"];
    let with = |extra: &[&str]| {
        let (code, out, err) = run(&[&base[..], extra].concat());
        assert_eq!(code, 0, "{extra:?}: {err}");
        (figure(&out, "bandwidth_GBps"), figure(&out, "read_latency_ns_mean"))
    };
    let cpu = with(&["--requester", "trace-cpu"]);
    // The same as its flags spelt out, with a cap that never binds (4 x 32 x 128 = 16384)...
    assert_eq!(cpu, with(&["--width", "1", "--in-flight", "16384", "--intake-buffer", "0"]));
    assert_eq!(cpu, with(&["--width", "1", "--in-flight", "4096", "--intake-buffer", "0"]));
    // ...where 256 in flight binds: writes stay outstanding while the refresh hold delays them.
    let capped = with(&["--width", "1", "--in-flight", "256", "--intake-buffer", "0"]);
    assert!(capped.0 < 0.97 * cpu.0, "{capped:?} against {cpu:?}");
    for flag in ["--width", "--in-flight", "--intake-buffer"] {
        let (code, _, err) = run(&[&base[..], &["--requester", "trace-cpu", flag, "2"]].concat());
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(err.contains("--requester trace-cpu sets --width, --in-flight and --intake-buffer"), "{flag}: {err}");
    }
    // The port requester takes them, named or by default.
    assert_eq!(with(&["--requester", "port", "--width", "1", "--in-flight", "256", "--intake-buffer", "0"]), capped);
    let (code, _, err) = run(&[&base[..], &["--requester", "cpu"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--requester: unknown `cpu` (known: port, trace-cpu)"), "{err}");
}

#[test]
fn a_command_trace_is_in_cycle_order_and_holds_every_command() {
    // Same-bank traffic (one busy channel, every other idle and refreshing, caught up when
    // the stack next looks) and a mix with all-bank refresh: the file is one stream in cycle
    // order, every command the run counted in it once.
    let dir = scratch("hbm_cli_cmd_trace");
    for (i, args) in [
        &["--pattern", "same-bank", "--requests", "3000"][..],
        &["--pattern", "mix", "--requests", "20000", "--refresh", "all-bank"][..],
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.join(format!("cmd{i}.txt"));
        let json = dir.join(format!("run{i}.json"));
        let mut all = vec!["hbm", "--cmd-trace", path.to_str().unwrap(), "--json", json.to_str().unwrap()];
        all.extend_from_slice(args);
        let (code, _, err) = run(&all);
        assert_eq!(code, 0, "{args:?}: {err}");
        let text = std::fs::read_to_string(&path).unwrap();
        let reader = trnsim_mem::hbm::cmdtrace::CmdTraceReader::new(text.as_bytes(), "cmd").unwrap();
        let (mut last, mut lines) = (0u64, 0u64);
        for r in reader {
            let r = r.unwrap();
            assert!(r.cycle >= last, "{args:?}: line {} at cycle {} after cycle {last}", lines + 2, r.cycle);
            last = r.cycle;
            lines += 1;
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let stats = &v["stats"]["owners"]["hbm"];
        let counted: u64 = ["ACT", "PRE", "PREA", "RD", "RDA", "WR", "WRA", "REF", "REFPB"]
            .iter()
            .map(|c| stats[format!("cmd_{c}")].as_u64().unwrap())
            .sum();
        assert!(counted > 1000, "{counted}");
        assert_eq!(lines, counted, "{args:?}");
    }
}
