//! Runs Perfetto's own trace processor on a written trace: the WebAssembly build from the
//! Perfetto UI, under Node, through `scripts/perfetto/tp_query.js` (see scripts/perfetto/README.md). It proves a trace really loads in Perfetto (`--check`: no load error, no problem
//! stats, no unfinished slice, not empty) and answers PerfettoSQL queries about it.
//!
//! What it leaves out: fetching the trace processor (`scripts/install-test-deps.sh` does that) and
//! any judgement of the rows: callers assert what they expect.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A located trace processor: the Node harness script and the folder holding the wasm.
#[derive(Clone, Debug)]
pub struct TraceProcessor {
    script: PathBuf,
    ui_dir: PathBuf,
}

impl TraceProcessor {
    /// Finds the harness (`$TP_QUERY_JS`, else `<workspace>/scripts/perfetto/tp_query.js`),
    /// the wasm folder (`$PERFETTO_UI_DIR`, else `<workspace>/target/perfetto-ui`) and `node`.
    /// The error says which is missing.
    pub fn locate(workspace: &Path) -> Result<TraceProcessor, String> {
        let env_path = |var: &str, default: PathBuf| std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
        let script = env_path("TP_QUERY_JS", workspace.join("scripts/perfetto/tp_query.js"));
        let ui_dir = env_path("PERFETTO_UI_DIR", workspace.join("target/perfetto-ui"));
        let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
        if !node {
            return Err("node is missing".into());
        }
        if !script.is_file() {
            return Err(format!("{} is missing", script.display()));
        }
        if !ui_dir.join("trace_processor.wasm").is_file() {
            return Err(format!("{}/trace_processor.wasm is missing", ui_dir.display()));
        }
        Ok(TraceProcessor { script, ui_dir })
    }

    /// For tests: the located trace processor, or `None` when it is missing, after recording
    /// the skip with [`skip_test`] (so the test counts as skipped, not passed). Panics when it
    /// is missing and the environment variable `CI` is set, so CI never passes a trace test it
    /// did not run.
    pub fn for_tests(workspace: &Path) -> Option<TraceProcessor> {
        match TraceProcessor::locate(workspace) {
            Ok(tp) => Some(tp),
            Err(why) => {
                skip_test(workspace, &format!("{why} (scripts/install-test-deps.sh installs it)"));
                None
            }
        }
    }

    /// Loads `trace` with `--check` and runs each query; returns each query's rows (a JSON
    /// array of arrays). An error carries the harness output when the trace does not load, a
    /// check fails or a query errors.
    pub fn query(&self, trace: &Path, sql: &[&str]) -> Result<Vec<Value>, String> {
        let out = Command::new("node")
            .arg(&self.script)
            .arg("--ui")
            .arg(&self.ui_dir)
            .arg(trace)
            .arg("--check")
            .args(sql)
            .output()
            .map_err(|e| format!("cannot run node: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let result: Value = serde_json::from_str(&stdout).map_err(|e| {
            format!("trace processor output is not JSON ({e}): {stdout}{}", String::from_utf8_lossy(&out.stderr))
        })?;
        if !out.status.success() || result["ok"] != true {
            return Err(format!("{} failed to load or check: {result:#}", trace.display()));
        }
        let queries = result["queries"].as_array().ok_or_else(|| format!("no queries in {result}"))?;
        Ok(queries.iter().map(|q| q["rows"].clone()).collect())
    }
}

/// The skip log of a test run: `$TRNSIM_SKIP_LOG`, else `<workspace>/target/test-skips.log`.
/// `make test` empties it first and counts its lines as skipped tests in its last line
/// (scripts/test-summary.sh).
pub fn skip_log(workspace: &Path) -> PathBuf {
    std::env::var_os("TRNSIM_SKIP_LOG").map(PathBuf::from).unwrap_or_else(|| workspace.join("target/test-skips.log"))
}

/// For a test that cannot run because a tool is missing: panics when the environment variable
/// `CI` is set (CI never passes a test it did not run); otherwise prints `skipped: WHY` and
/// appends the test's name and `why` to the [`skip_log`], so the run's summary counts the
/// test as skipped rather than passed. The caller then returns early.
pub fn skip_test(workspace: &Path, why: &str) {
    let test = std::thread::current().name().unwrap_or("unnamed test").to_string();
    assert!(std::env::var_os("CI").is_none(), "{test}: {why}; CI runs every test, none may be skipped");
    eprintln!("skipped: {test}: {why}");
    record_skip(&skip_log(workspace), &test, why);
}

/// Appends one line, `TEST<tab>WHY`, to the skip log `log` (creating it and its folder).
/// A log that cannot be written is reported on stderr, never ignored silently.
pub fn record_skip(log: &Path, test: &str, why: &str) {
    use std::io::Write;
    let line = format!("{test}\t{}\n", why.replace(['\n', '\t'], " "));
    let written = log
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::OpenOptions::new().create(true).append(true).open(log)?.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot record the skip of {test} in {}: {e}", log.display());
    }
}
