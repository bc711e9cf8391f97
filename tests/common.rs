//! Helpers: paths, and running the trnsim binary.

use std::path::PathBuf;
use std::process::Command;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fresh scratch directory under target/test-out/<name>.
pub fn scratch(name: &str) -> PathBuf {
    let d = root().join("target").join("test-out").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

/// The trnsim binary of the same build profile (cargo builds it with the workspace's tests).
pub fn trnsim() -> Command {
    let me = std::env::current_exe().expect("current exe");
    let dir = me.parent().and_then(|d| d.parent()).expect("target/<profile>");
    let exe = dir.join("trnsim");
    assert!(exe.exists(), "{} missing: run the tests with `cargo test --workspace`", exe.display());
    Command::new(exe)
}
