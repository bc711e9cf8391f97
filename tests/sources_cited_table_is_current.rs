//! docs/sources.md's "Where each key is cited" table is the repository as it is: for every
//! source key of the fact sheet, exactly the tracked files that name it (or the name it is
//! cited by, `(as "JESD238")`), a directory's files of one kind folded into `dir/*.ext` when all
//! of them cite it. The table is generated, not kept by hand: `scripts/sources-cited.sh`
//! rewrites it.

use crate::common::root;
use std::collections::{BTreeMap, BTreeSet};

const DOC: &str = "docs/sources.md";
const START: &str = "## Where each key is cited\n";
const END: &str = "## The fact sheet\n";
/// File kinds searched for keys.
const KINDS: [&str; 8] = ["rs", "md", "ron", "json", "sh", "toml", "sv", "py"];
/// Files that name every key by construction (and this one, whose examples name some).
const SKIP: [&str; 3] = [DOC, "CHANGELOG.md", "tests/sources_cited_table_is_current.rs"];

/// The tracked files of the repository (`git ls-files`), of the kinds searched.
fn tracked() -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(root())
        .output()
        .expect("git ls-files: this test needs git and a checkout");
    assert!(out.status.success(), "git ls-files failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .expect("file names are UTF-8")
        .lines()
        .filter(|f| !SKIP.contains(f))
        .filter(|f| KINDS.iter().any(|k| f.ends_with(&format!(".{k}"))))
        .map(String::from)
        .collect()
}

/// Whether `text` names `word` as a whole word (not inside `A10` for `A1`).
fn names(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The keys of the fact sheet's section 0, in order.
fn keys(doc: &str) -> Vec<String> {
    let sheet = doc.split("### 0. Source keys").nth(1).expect("section 0 of the fact sheet");
    let table = sheet.split("\n### ").next().unwrap_or("");
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(" |").next())
        .filter(|k| *k != "Key" && !k.starts_with('-') && k.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(String::from)
        .collect()
}

/// The names keys are cited by, from the current table's `(as "NAME")`.
fn aliases(section: &str) -> BTreeMap<String, String> {
    section
        .lines()
        .filter_map(|l| {
            let key = l.strip_prefix("| ")?.split(" |").next()?;
            let alias = l.split("(as \"").nth(1)?.split('"').next()?;
            Some((key.to_string(), alias.to_string()))
        })
        .collect()
}

/// `files` with each directory's files of one kind folded into `dir/*.ext` when all
/// `all` files there cite the key (and there are at least two).
fn fold(files: &BTreeSet<&str>, all: &[String]) -> Vec<String> {
    let group = |f: &str| {
        let (dir, name) = f.rsplit_once('/').unwrap_or(("", f));
        (dir.to_string(), name.rsplit_once('.').map_or(String::new(), |(_, e)| e.to_string()))
    };
    let mut sizes: BTreeMap<(String, String), usize> = BTreeMap::new();
    for f in all {
        *sizes.entry(group(f)).or_default() += 1;
    }
    let mut cited: BTreeMap<(String, String), usize> = BTreeMap::new();
    for f in files {
        *cited.entry(group(f)).or_default() += 1;
    }
    let mut out = BTreeSet::new();
    for f in files {
        let g = group(f);
        if cited[&g] >= 2 && cited[&g] == sizes[&g] {
            out.insert(format!("{}/*.{}", g.0, g.1));
        } else {
            out.insert(f.to_string());
        }
    }
    out.into_iter().collect()
}

/// The section as it should read.
fn generated(doc: &str, section: &str, files: &[String]) -> String {
    let texts: Vec<(String, String)> =
        files.iter().map(|f| (f.clone(), std::fs::read_to_string(root().join(f)).unwrap_or_default())).collect();
    let aliases = aliases(section);
    let mut out = String::from(START);
    out += "\nGenerated from the tracked files by `scripts/sources-cited.sh`; `make test` fails when it is\n";
    out += "stale (tests/sources_cited_table_is_current.rs).\n";
    out += "\n| Key | Cited in |\n|---|---|\n";
    for key in keys(doc) {
        let alias = aliases.get(&key);
        let citing: BTreeSet<&str> = texts
            .iter()
            .filter(|(_, t)| names(t, &key) || alias.is_some_and(|a| t.contains(a.as_str())))
            .map(|(f, _)| f.as_str())
            .collect();
        let list = fold(&citing, files).iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ");
        let cell = match (list.is_empty(), alias) {
            (true, _) => "(not cited in the code; kept for the figures below)".to_string(),
            (false, Some(a)) => format!("{list} (as \"{a}\")"),
            (false, None) => list,
        };
        out += &format!("| {key} | {cell} |\n");
    }
    out.push('\n');
    out
}

#[test]
fn the_where_each_key_is_cited_table_lists_exactly_the_files_that_cite_it() {
    let path = root().join(DOC);
    let doc = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = doc.split_once(START).expect("the section heading");
    let (section, tail) = rest.split_once(END).expect("the fact sheet heading");
    let want = generated(&doc, section, &tracked());
    let have = format!("{START}{section}");
    if have == want {
        return;
    }
    if std::env::var_os("TRNSIM_WRITE_SOURCES_TABLE").is_some() {
        std::fs::write(&path, format!("{head}{want}{END}{tail}")).unwrap();
        return;
    }
    let out = crate::common::scratch("sources-cited").join("section.md");
    std::fs::write(&out, &want).unwrap();
    let first = have.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
    panic!(
        "{DOC}: the \"Where each key is cited\" table is stale from its line {} (`{}`, should be `{}`); \
         the table as it should read is in {}; `scripts/sources-cited.sh` rewrites it",
        first + 1,
        have.lines().nth(first).unwrap_or(""),
        want.lines().nth(first).unwrap_or(""),
        out.display()
    );
}

#[test]
fn keys_are_whole_words_and_folding_needs_every_file_of_the_kind() {
    assert!(names("see A1.", "A1") && names("(A1, A2)", "A1"));
    assert!(!names("A10 A11", "A1") && !names("XA1", "A1") && !names("A1_x", "A1"));
    let all: Vec<String> = ["d/a.ron", "d/b.ron", "d/c.rs", "e/x.ron"].map(String::from).to_vec();
    let both: BTreeSet<&str> = ["d/a.ron", "d/b.ron", "e/x.ron"].into();
    assert_eq!(fold(&both, &all), ["d/*.ron", "e/x.ron"]);
    let one: BTreeSet<&str> = ["d/a.ron"].into();
    assert_eq!(fold(&one, &all), ["d/a.ron"]);
}
