//! Runs Perfetto's own trace processor on a written trace: the WebAssembly build from the
//! Perfetto UI, under Node, through `../shared/tools/perfetto/tp_query.js` (see that folder's
//! README). It proves a trace really loads in Perfetto (`--check`: no load error, no problem
//! stats, no unfinished slice, not empty) and answers PerfettoSQL queries about it.
//!
//! What it leaves out: fetching the trace processor (`scripts/install-deps.sh` does that) and
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
    /// Finds the harness (`$TP_QUERY_JS`, else `<workspace>/../shared/tools/perfetto/tp_query.js`),
    /// the wasm folder (`$PERFETTO_UI_DIR`, else `<workspace>/target/perfetto-ui`) and `node`.
    /// The error says which is missing.
    pub fn locate(workspace: &Path) -> Result<TraceProcessor, String> {
        let env_path = |var: &str, default: PathBuf| std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
        let script = env_path("TP_QUERY_JS", workspace.join("../shared/tools/perfetto/tp_query.js"));
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

    /// For tests: the located trace processor, or `None` (with a "skipped" message) when it is
    /// missing. Panics when it is missing and the environment variable `CI` is set, so CI never
    /// passes a trace test it did not run.
    pub fn for_tests(workspace: &Path) -> Option<TraceProcessor> {
        match TraceProcessor::locate(workspace) {
            Ok(tp) => Some(tp),
            Err(why) => {
                assert!(std::env::var_os("CI").is_none(), "trace processor unavailable in CI: {why}");
                eprintln!("skipped: {why} (run scripts/install-deps.sh); CI would fail here");
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
