//! The harness (CLI, outputs, reports) sits above the benchmarks crate, and neither crate's
//! modules import each other in a circle: a module graph read from each file's `crate::`
//! paths (`use crate::a::X`, `use crate::{a, b::Y}`, `crate::a::f()`), one node per top-level
//! module (a folder counts as one), must have no cycle. `scripts/check-layers.sh` runs this
//! test after `cargo tree` shows the crates' order.

use crate::common::{root, scratch};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the crate's other top-level modules it names through `crate::`.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module graph of the crate whose sources are under `src`.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = Graph::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let top = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        graph.entry(top).or_default().extend(crate_paths(&text));
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for (m, deps) in graph.iter_mut() {
        deps.retain(|d| d != m && modules.contains(d));
    }
    graph
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The first segment of every `crate::` path in `text`, comments left out.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `trnsim_crate::` or the like
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of a group: `{a, b::{c, d}, e::f}` -> a, b, e.
            let (mut depth, mut name, mut names) = (0, String::new(), Vec::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => names.push(std::mem::take(&mut name)),
                    _ if depth == 0 => name.push(c),
                    _ => {}
                }
            }
            names.push(name);
            for n in names {
                let first = n.split("::").next().unwrap_or("").trim().to_string();
                if !first.is_empty() && first != "self" {
                    out.insert(first);
                }
            }
        } else {
            let first: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !first.is_empty() {
                out.insert(first);
            }
        }
    }
    out
}

/// A cycle of `graph` as the modules along it (first repeated last), if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit<'a>(
        g: &'a Graph,
        m: &'a str,
        state: &mut BTreeMap<&'a str, bool>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(m, false); // on the path
        path.push(m);
        for d in &g[m] {
            match state.get(d.as_str()) {
                Some(false) => {
                    let at = path.iter().position(|p| *p == d).unwrap();
                    let mut c: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
                    c.push(d.clone());
                    return Some(c);
                }
                Some(true) => {}
                None => {
                    if let Some(c) = visit(g, d, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(m, true); // done
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        if !state.contains_key(m.as_str()) {
            if let Some(c) = visit(graph, m, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The trnsim crates a Cargo.toml's `[dependencies]` names.
fn our_dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut in_deps = false;
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps {
            let name = line.split(['=', ' ']).next().unwrap_or("");
            if name.starts_with("trnsim-") {
                out.insert(name.to_string());
            }
        }
    }
    out
}

#[test]
fn harness_and_benchmarks_modules_import_in_one_direction() {
    for krate in ["harness", "benchmarks"] {
        let g = module_graph(&root().join(krate).join("src"));
        assert!(g.len() > 10, "{krate}: only {} modules found: {:?}", g.len(), g.keys());
        if let Some(c) = find_cycle(&g) {
            panic!("{krate}/src: modules import each other in a circle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn the_benchmarks_crate_is_below_the_harness() {
    let harness = our_dependencies(&root().join("harness/Cargo.toml"));
    let benchmarks = our_dependencies(&root().join("benchmarks/Cargo.toml"));
    assert!(harness.contains("trnsim-benchmarks"), "the harness does not use trnsim-benchmarks: {harness:?}");
    assert!(!benchmarks.is_empty() && benchmarks.contains("trnsim-workloads"), "{benchmarks:?}");
    for above in ["trnsim-harness", "trnsim-tests"] {
        assert!(!benchmarks.contains(above), "trnsim-benchmarks depends on {above}");
    }
}

#[test]
fn the_module_check_finds_a_circle_through_groups_and_paths() {
    // The check itself: a circle made of a grouped import, a plain path and a nested
    // folder module is found; the same files with the circle cut are not flagged.
    let dir = scratch("module-graph-circle");
    let src = dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(src.join("c")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod a; pub mod b; pub mod c;").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::{b::{X, Y}, self as me};\n// crate::c in a comment\n").unwrap();
    std::fs::write(src.join("b.rs"), "pub fn f() { crate::c::g(); } let s = trnsim_crate::a;").unwrap();
    std::fs::write(src.join("c/mod.rs"), "mod inner;").unwrap();
    std::fs::write(src.join("c/inner.rs"), "use crate::a::Z;").unwrap();
    let g = module_graph(&src);
    assert_eq!(g["a"], BTreeSet::from(["b".to_string()]), "comments and `self` are not imports");
    assert_eq!(g["b"], BTreeSet::from(["c".to_string()]), "`trnsim_crate::` is not `crate::`");
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    std::fs::write(src.join("c/inner.rs"), "use super::X;").unwrap();
    assert_eq!(find_cycle(&module_graph(&src)), None);
}

/// The harness names what it uses by the crate that owns it: no `pub use` of a crate of ours
/// below it (a module moved down is imported from its crate, not re-exported as a shim), so a
/// caller sees where each module lives.
#[test]
fn the_harness_re_exports_nothing_of_the_crates_below_it() {
    let mut files = Vec::new();
    rust_files(&root().join("harness/src"), &mut files);
    let mut shims = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, l) in text.lines().enumerate() {
            let l = l.trim_start();
            let re_export = l.starts_with("pub use trnsim_") || l.starts_with("pub extern crate trnsim_");
            if re_export {
                shims.push(format!("{}:{}: {l}", f.strip_prefix(root()).unwrap_or(f).display(), i + 1));
            }
        }
    }
    assert!(shims.is_empty(), "re-exports of lower crates in the harness:\n{}", shims.join("\n"));
}
