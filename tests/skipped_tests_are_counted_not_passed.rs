//! A test that cannot run for want of a tool is counted as skipped, never as passed: the skip
//! is recorded in the skip log (`trnsim_traces::record_skip`, what `skip_test` and
//! `TraceProcessor::for_tests` write), and `scripts/test-summary.sh` (the last line of
//! `make test`) takes it out of libtest's "passed" and counts it as skipped.

use crate::common::{root, scratch};
use std::process::Command;

#[test]
fn a_recorded_skip_is_counted_as_skipped_not_passed() {
    let dir = scratch("skipped_tests_are_counted_not_passed");
    let log = dir.join("skips.log");
    trnsim_traces::record_skip(
        &log,
        "traces::demo_loads_in_perfetto",
        "node is missing\t(tab and\nnewline kept on one line)",
    );
    let lines = std::fs::read_to_string(&log).expect("the skip log was written");
    assert_eq!(lines.lines().count(), 1, "one line per skip: {lines:?}");
    // libtest reports the skipped test as one of the "passed": 3 passed, of which 1 skipped.
    let output = dir.join("cargo-test.out");
    std::fs::write(
        &output,
        "test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\
         test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n",
    )
    .expect("write");
    let out = Command::new("bash")
        .arg(root().join("scripts/test-summary.sh"))
        .arg(&output)
        .arg(&log)
        .output()
        .expect("run test-summary.sh");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let first = text.lines().next().unwrap_or_default();
    assert_eq!(first, "tests: 2 passed, 0 failed, 1 skipped, 1 ignored", "{text}");
    assert!(text.contains("skipped: traces::demo_loads_in_perfetto: node is missing"), "{text}");
}

#[test]
fn no_skip_log_means_nothing_skipped_and_a_failure_fails_the_summary() {
    let dir = scratch("skipped_tests_none");
    let output = dir.join("cargo-test.out");
    std::fs::write(&output, "test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured\n").expect("write");
    let out = Command::new("bash")
        .arg(root().join("scripts/test-summary.sh"))
        .arg(&output)
        .arg(dir.join("absent.log"))
        .output()
        .expect("run test-summary.sh");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().next(), Some("tests: 4 passed, 1 failed, 0 skipped"), "{text}");
    assert_eq!(out.status.code(), Some(1));
}
