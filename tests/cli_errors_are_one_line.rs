//! Bad CLI arguments give a one-line error and exit code 2; none panics. Good ones work.

use crate::common::{root, scratch, trnsim};

/// Runs trnsim with `args`; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn check_usage_error(args: &[&str], expect: &str) {
    let (code, _, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("error:"), "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: expected {expect:?} in {err}");
}

#[test]
fn bad_arguments_are_reported_not_panicked() {
    check_usage_error(&["run", "no-such-bench"], "unknown benchmark \"no-such-bench\" (allowed: kernel-ring");
    check_usage_error(&["run", "--order", "sideways"], "invalid order \"sideways\"");
    check_usage_error(&["run", "demo", "--trace", "x.txt"], "unknown extension \"txt\"");
    // Other commands' traces: the error names the file given, not a temporary one.
    for cmd in [
        &["bench", "nc-gemm", "--m", "128", "--k", "128", "--n", "512"][..],
        &["core", "models/programs/softmax_rows.asm"],
    ] {
        check_usage_error(&[cmd, &["--trace", "x.txt"]].concat(), "trace sink x.txt: unknown trace format");
    }
    check_usage_error(&["run", "--config", "/nonexistent.ron"], "/nonexistent.ron");
    check_usage_error(&["bench", "kernel-ring", "--tokens", "999", "--modules", "4", "--depth", "2"], "does not fit");
    check_usage_error(&["bench", "kernel-ring", "--depth", "0"], "--depth");
    check_usage_error(&["bench", "kernel-ring", "--cycles", "many"], "invalid value 'many'");
    check_usage_error(&["frobnicate"], "unrecognized subcommand");
    check_usage_error(&["config", "check", "/nonexistent.ron"], "cannot read");
    check_usage_error(
        &["describe", "foo"],
        "unknown kind `foo` (known: core, hbm, sram, dma, link, switch, topology, chip, ultraserver, ultracluster, scaleout)",
    );
    check_usage_error(&["describe", "hbm", "nope"], "no preset named `nope`");
    check_usage_error(&["describe", "core", "nc-v9"], "no preset named `nc-v9`");
    check_usage_error(&["describe", "core", "/nonexistent.ron"], "core file /nonexistent.ron: cannot read");
    check_usage_error(&["describe", "core", "Cargo.toml.json"], "cannot read");
    check_usage_error(&["core", "/nonexistent.asm"], "cannot read /nonexistent.asm");
    check_usage_error(&["bench", "nc-gemm", "--m", "100"], "multiples of 128");
    check_usage_error(&["run", "kernel-ring", "--fidelity", "fast"], "kernel-ring has no HBM or DMA to make fast");
    check_usage_error(&["run", "e2e-llm-layer", "hbm-random", "--fidelity", "fast"], "run e2e-llm-layer");
    check_usage_error(&["run", "hbm-random", "--fidelity", "quick"], "invalid value 'quick'");
    check_usage_error(&["hbm", "--fidelity", "quick"], "--fidelity: unknown `quick` (known: cycle, fast)");
    check_usage_error(&["hbm", "--fidelity", "fast", "--check"], "--fidelity fast issues no commands");
    let compare = ["compare", "--workload", "w.ron", "--system", "trn3-gen2-ultraserver"];
    let (plots, efficiency) = (
        [&compare[..], &["--plots", "Cargo.toml"]].concat(),
        [&compare[..], &["--gemm-efficiency", "1e-300"]].concat(),
    );
    let cases: [(&[&str], &str); 9] = [
        (
            &["collective", "all-reduce", "-b", "1K", "-e", "1K", "--algo", "tree"],
            "algorithm tree does not implement all_reduce (it does: broadcast)",
        ),
        (&["collective", "all-reduce", "-b", "3", "-e", "3", "-d", "fp32"], "-b 3 is less than one fp32 element"),
        (&["collective", "all-reduce", "--step-overhead", "1000s"], "1000s is out of range (allowed: 0ns..=1ms)"),
        (&["run", "hbm-latency-sweep", "--plots", "Cargo.toml"], "--plots Cargo.toml: is a file"),
        (&plots, "--plots Cargo.toml: is a file"),
        (&efficiency, "\"1e-300\" is out of range (allowed: 0.001 <= F <= 1)"),
        (&["workload", "llm", "--experts", "64"], "--experts applies to --arch moe (this is --arch dense)"),
        (&["workload", "llm", "--layers", "4294967295"], "--layers 4294967295 is out of range (allowed: 1..=16384)"),
        (
            &["workload", "llm", "--tp", "4294967295", "--dp", "4294967295", "--pp", "4294967295"],
            "--tp x --dp x --pp = 4294967295 x 4294967295 x 4294967295 ranks is out of range",
        ),
    ];
    for (args, expect) in cases {
        check_usage_error(args, expect);
    }
    check_usage_error(
        &["run", "e2e-llm-layer", "--set", "chip.dma.fidelity=fast"],
        "dma.fidelity: fast needs hbm.fidelity fast",
    );
}

#[test]
fn a_bad_family_member_or_trace_name_is_refused_before_any_benchmark_runs_or_prints() {
    // Each after a benchmark that would run first: nothing runs, nothing reaches stdout.
    for (name, expect) in [
        ("tp-matmul-0", "tp-matmul-0: expected tp-matmul-N with N a chip count (2..=64)"),
        ("tp-matmul-65", "tp-matmul-65: expected tp-matmul-N with N a chip count (2..=64)"),
        ("tp-matmul-3", "tp-matmul-3: tp shape (tokens 512, d_in 8192, d_out 4096, phases 4) over 3 chips"),
        ("kernel-random-graph:x", "the seed after `kernel-random-graph:` must be a number"),
        ("dp-step-99", "N \"99\" is not valid; expected dp-step-N"),
    ] {
        let args = ["run", "kernel-ring", name];
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error:") && err.contains(expect), "{args:?}: expected {expect:?} in {err}");
        assert_eq!(out, "", "{args:?}: printed before the error");
    }
    // So is a trace file of a format `run` does not write.
    let (code, out, err) = run(&["run", "kernel-ring", "--trace", "/tmp/x.txt"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--trace /tmp/x.txt: unknown extension \"txt\""), "{err}");
    assert!(err.contains("(allowed: .pftrace, .perfetto, .perfetto-trace, .json)"), "{err}");
    assert_eq!(out, "", "printed before the error");
    // A VCD is pointed at --vcd, which writes a run's waveforms.
    let (code, out, err) = run(&["run", "kernel-ring", "--trace", "/tmp/x.vcd"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--trace /tmp/x.vcd: a run's link waveforms go to --vcd FILE.vcd"), "{err}");
    assert_eq!(out, "", "printed before the error");
}

#[test]
fn every_perfetto_extension_is_written_by_run_as_by_the_other_commands() {
    // `.pftrace`, `.perfetto` and `.perfetto-trace` name one format in every command.
    let dir = scratch("perfetto_extensions");
    for ext in ["pftrace", "perfetto", "perfetto-trace"] {
        let path = dir.join(format!("demo.{ext}"));
        let _ = std::fs::remove_file(&path);
        let p = path.to_str().expect("a UTF-8 path");
        let (code, _, err) = run(&["run", "demo", "--trace", p]);
        assert_eq!(code, 0, "--trace {p}: {err}");
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "--trace {p} wrote nothing");
    }
}

#[test]
fn an_input_that_never_ends_is_refused_by_name() {
    // Every command that reads a file whole stops at the input limit (256 MiB) with an error
    // naming the file, instead of reading /dev/zero until memory runs out.
    for args in [
        &["run", "--config", "/dev/zero"][..],
        &["config", "check", "/dev/zero"],
        &["core", "/dev/zero"],
        &["workload", "chakra", "/dev/zero"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.starts_with("error:") && err.contains("/dev/zero") && err.contains("larger than 256 MiB"),
            "{args:?}: {err}"
        );
        assert_eq!(out, "", "{args:?}");
    }
}

#[test]
fn config_check_names_the_line_of_a_bad_field() {
    let dir = scratch("cli_config_check");
    let f = dir.join("bad.ron");
    let text = trnsim_harness::system::DEMO_RON
        .replace("\"fabric\", kind: Relay(delay: 3", "\"fabrik\", kind: Relay(delay: 3");
    std::fs::write(&f, text).unwrap();
    let (code, _, err) = run(&["config", "check", f.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.ron:15:38:"), "{err}");
    assert!(err.contains("components[2].clock: unknown clock \"fabrik\" (allowed: core, fabric, io)"), "{err}");
    let (code, out, _) = run(&["config", "check", "models/configs/demo.ron"]);
    assert_eq!(code, 0);
    assert!(out.contains("ok (3 clocks, 6 components, 4 links)"), "{out}");
}

#[test]
fn help_and_list_work() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("trnsim run"));
    let (code, out, _) = run(&["list"]);
    assert_eq!(code, 0);
    assert!(out.contains("kernel-ring-sparse"));
}

#[test]
fn run_json_is_deterministic_across_tick_orders() {
    let dir = scratch("cli_determinism");
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    let (c1, _, e1) = run(&["run", "demo", "kernel-ring-sparse", "--json", a.to_str().unwrap()]);
    let (c2, _, e2) =
        run(&["run", "demo", "kernel-ring-sparse", "--order", "shuffled:5", "--json", b.to_str().unwrap()]);
    assert_eq!((c1, c2), (0, 0), "{e1}{e2}");
    let (ja, jb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert!(ja == jb, "results JSON differs between tick orders");
    assert!(String::from_utf8_lossy(&ja).contains("packets_received"));
}

#[test]
fn describe_prints_every_kind_of_preset() {
    for kind in ["hbm", "sram", "dma", "link", "switch", "topology"] {
        let (code, out, err) = run(&["describe", kind]);
        assert_eq!(code, 0, "{kind}: {err}");
        assert!(out.lines().count() >= 2, "{kind}: {out}");
    }
    let (code, out, _) = run(&["describe", "hbm", "hbm3-6400"]);
    assert_eq!(code, 0);
    assert!(out.contains("rcd_rd: 31") && out.contains("source: timing M1"), "{out}");
}
