//! Stamps the git revision into the binary for `trnsim --version` ("unknown" outside a git
//! checkout, e.g. from a source archive). Reruns when HEAD moves.
//!
//! Invariant: only files that exist are watched. Cargo treats a watched path that does not
//! exist as changed on every build, so watching a fresh clone's absent `packed-refs` (or a
//! branch whose ref lives only in `packed-refs`) would rerun this script and relink trnsim on
//! every `cargo build`, even when nothing changed. A branch ref that lives only in
//! `packed-refs` is watched through the nearest folder that exists on its path, so the first
//! commit that writes it as a loose file still reruns this script.
use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// Watches `path` if it exists (see the invariant above).
fn watch(path: &str) {
    if Path::new(path).is_file() {
        println!("cargo:rerun-if-changed={path}");
    }
}

/// Watches `path`, or while it does not exist the nearest folder on its path that does.
fn watch_or_folder(path: &str) {
    let mut p = Path::new(path);
    while !p.exists() {
        match p.parent() {
            Some(parent) => p = parent,
            None => return,
        }
    }
    println!("cargo:rerun-if-changed={}", p.display());
}

fn main() {
    let rev = git(&["rev-parse", "--short=10", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TRNSIM_GIT_REV={rev}");
    // HEAD names the branch; the branch's ref file (or packed-refs) holds the commit.
    if let Some(head) = git(&["rev-parse", "--path-format=absolute", "--git-path", "HEAD"]) {
        watch(&head);
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(r) = git(&["rev-parse", "--path-format=absolute", "--git-path", &branch]) {
            watch_or_folder(&r);
        }
    }
    if let Some(packed) = git(&["rev-parse", "--path-format=absolute", "--git-path", "packed-refs"]) {
        watch(&packed);
    }
    println!("cargo:rerun-if-changed=build.rs");
}
