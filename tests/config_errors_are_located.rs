//! Every kind of config mistake gives one located error (file:line:col: field: message with the
//! allowed values), never a panic and never a silent default.

use trnsim_harness::config;

const GOOD: &str = r#"(
    seed: 1,
    clocks: [(name: "core", freq: "1.4GHz")],
    components: [
        (name: "src", clock: "core", kind: Source(count: 10, bytes: 64, rate: 0.5)),
        (name: "dst", clock: "core", kind: Sink),
    ],
    links: [(from: "src.out", to: "dst.in", latency: 2, depth: 4)],
    run: (limit: "10us"),
)"#;

/// Applies `edit` to the good config and checks the error text.
fn check(from: &str, to: &str, expect: &str) {
    assert!(GOOD.contains(from), "test bug: {from:?} not in the good config");
    let text = GOOD.replacen(from, to, 1);
    let err = config::parse("sys.ron", &text).expect_err(&format!("{to:?} should be rejected"));
    let msg = err.to_string();
    assert!(msg.starts_with("sys.ron:"), "{msg}");
    assert!(err.line > 0 && err.col > 0, "{msg}");
    assert!(!msg.contains('\n'), "not one line: {msg}");
    assert!(msg.contains(expect), "expected {expect:?} in: {msg}");
}

#[test]
fn good_config_is_accepted() {
    let sys = config::parse("sys.ron", GOOD).unwrap();
    assert_eq!(sys.cfg.components.len(), 2);
}

#[test]
fn each_mistake_names_file_line_field_and_allowed_values() {
    check(r#""1.4GHz""#, r#""1.4GJz""#, "sys.ron:3:");
    check(r#""1.4GHz""#, r#""1.4GJz""#, "clocks[0].freq: invalid quantity \"1.4GJz\"");
    check(r#"clock: "core", kind: Sink"#, r#"clock: "cor", kind: Sink"#, "sys.ron:6:");
    check(
        r#"clock: "core", kind: Sink"#,
        r#"clock: "cor", kind: Sink"#,
        "components[1].clock: unknown clock \"cor\" (allowed: core)",
    );
    check(r#"to: "dst.in""#, r#"to: "dst.input""#, "has no input port \"input\" (allowed: in)");
    check(r#"to: "dst.in""#, r#"to: "dts.in""#, "unknown component \"dts\" (allowed: src, dst)");
    check("latency: 2", "latency: 0", "links[0].latency: 0 is out of range (allowed: 1..=1000000000 sender cycles)");
    check("depth: 4", "depth: 0", "links[0].depth");
    check("rate: 0.5", "rate: 1.5", "components[0].kind.rate: rate = 1.5 is out of range");
    check(r#"limit: "10us""#, r#"limit: "10 parsecs""#, "run.limit: invalid quantity");
    check("depth: 4)", r#"depth: 4, bandwidth: "fast")"#, "links[0].bandwidth: invalid bandwidth \"fast\" (allowed:");
    check("seed: 1,", "seed: 1, colour: 3,", "sys.ron:2:");
    check("seed: 1,", "seed: 1, colour: 3,", "colour");
    check("seed: 1,", "", "seed");
    check("latency: 2", "latency: \"two\"", "latency");
    // Numbers the field's type cannot hold are named, not only "out of bounds".
    check(
        "depth: 4",
        "depth: 4294967296",
        "sys.ron:8:74: depth: 4294967296 is out of range: the field's integer type cannot hold it",
    );
    check("depth: 4", "depth: -4", "depth: -4 is out of range: the field takes no negative numbers");
    check("depth: 4", "depth: 4.5", "depth: 4.5 is not a whole number: the field takes integers");
    check(
        r#"(name: "dst", clock: "core", kind: Sink),"#,
        r#"(name: "src", clock: "core", kind: Sink),"#,
        "duplicate component name \"src\"",
    );
    check(
        r#"links: [(from: "src.out", to: "dst.in", latency: 2, depth: 4)]"#,
        "links: []",
        "port src.out is not connected",
    );
    check("kind: Sink", "kind: Sinc", "Sinc");
}

#[test]
fn missing_file_is_a_clean_error() {
    let err = config::load(std::path::Path::new("/nonexistent/x.ron")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.ron"));
}
