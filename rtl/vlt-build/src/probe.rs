//! What a testbench sees inside a model beyond its ports: public signals (read, deposit,
//! force), the counts of the RTL's `cover property` statements, and the messages of failing
//! assertions (severity, label, text).
//!
//! - Public signals: those a model declares with [`crate::Model::public`] (written to a
//!   Verilator configuration file, `public_flat_rw -module M -var V`) and any the sources mark
//!   `/*verilator public_flat_rw*/` (or `public_flat_rd`: read only). The shim lists every
//!   public variable of every scope at construction, named by its path below the top module
//!   (`cnt`, `u_core.acc`); unpacked arrays, parameters and signals wider than 128 bits are not
//!   listed.
//! - `cover property`: the model is verilated with `--coverage-user`; the build reads the
//!   cover points Verilator registers (`__vlCoverInsert` in the generated C++: counter index,
//!   file, line, hierarchy, label) into a table, and the shim reads the counters.
//! - Assertion passes: beside each labelled concurrent assertion (`LABEL: assert property
//!   (SPEC) ...;`) the build adds `LABEL__pass: cover property (SPEC);` to the copy of the
//!   source Verilator reads, on the same line; its matches are the assertion's passes
//!   (evaluations not disabled where the property held, vacuous ones included).
//! - Assertion messages: the runtime's `VL_PRINTF` is `vlt_printf` (runtime_shim.cpp), which
//!   keeps Verilator's `Assertion failed in ...` lines for the model to collect and prints
//!   everything else (`$display`) as before.
//!
//! Leaves out: sequences in cover properties (Verilator 5.006 parses no `##`), per-element
//! access to unpacked arrays, forcing a signal Verilator did not make writable (`public_flat_rd`,
//! or a signal it folded away).

use crate::Model;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// One `cover property` of the model, as Verilator registers it.
pub(crate) struct CoverPoint {
    /// Index into the model's `__Vcoverage` counters.
    pub index: u32,
    /// Source file name and line.
    pub file: String,
    pub line: u32,
    /// Its hierarchy below the top, which ends in its label (`.top.c_full` becomes `c_full`;
    /// in a submodule `u_core.c_full`).
    pub path: String,
}

/// The Verilator configuration file that makes `m`'s declared signals public and writable.
/// `None` when it declares none.
pub(crate) fn public_config(m: &Model) -> Option<String> {
    if m.public.is_empty() {
        return None;
    }
    let mut s = String::from("`verilator_config\n");
    for (module, var) in &m.public {
        let module = module.as_deref().unwrap_or(&m.top);
        writeln!(s, "public_flat_rw -module \"{module}\" -var \"{var}\"").unwrap();
    }
    Some(s)
}

/// Writes [`public_config`] into `dir` and returns its path (Verilator reads it before the
/// sources).
pub(crate) fn write_public_config(m: &Model, dir: &Path) -> Result<Option<std::path::PathBuf>, String> {
    let Some(text) = public_config(m) else { return Ok(None) };
    fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{}_public.vlt", m.name));
    fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(path))
}

/// The cover points of a verilated model: every `__vlCoverInsert(&(vlSymsp->__Vcoverage[N]),
/// first, "FILE", LINE, COL, ".HIER", "PAGE", "COMMENT", "")` of its C++ in `mdir`, by index.
pub(crate) fn cover_points(mdir: &Path, top: &str) -> Result<Vec<CoverPoint>, String> {
    let mut points = Vec::new();
    let rd = fs::read_dir(mdir).map_err(|e| format!("{}: {e}", mdir.display()))?;
    let mut files: Vec<_> =
        rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension() == Some("cpp".as_ref())).collect();
    files.sort();
    for f in files {
        let text = fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("vlSelf->__vlCoverInsert(&(vlSymsp->__Vcoverage[") else {
                continue;
            };
            if let Some(p) = parse_insert(rest, top) {
                points.push(p);
            }
        }
    }
    points.sort_by_key(|p| p.index);
    points.dedup_by_key(|p| p.index);
    Ok(points)
}

/// `N]), first, "FILE", LINE, COL, ".HIER", "PAGE", "COMMENT", "");`
fn parse_insert(rest: &str, top: &str) -> Option<CoverPoint> {
    let (index, rest) = rest.split_once(']')?;
    let index: u32 = index.parse().ok()?;
    let fields = split_args(rest.split_once(',')?.1);
    // first, "FILE", LINE, COL, ".HIER", "PAGE", "COMMENT", ...
    let unq = |s: &str| s.trim().trim_matches('"').to_string();
    let file = unq(fields.get(1)?);
    let line: u32 = fields.get(2)?.trim().parse().ok()?;
    let hier = unq(fields.get(4)?);
    // Verilator writes `__` in a name as `___05F`.
    let hier = hier.trim_start_matches('.').replace("___05F", "__");
    let hier = hier.as_str();
    let path = hier.strip_prefix(top).map(|h| h.trim_start_matches('.')).unwrap_or(hier).to_string();
    let file = Path::new(&file).file_name()?.to_string_lossy().into_owned();
    Some(CoverPoint { index, file, line, path })
}

/// Comma-separated C arguments, commas inside string literals kept.
fn split_args(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut escaped) = (Vec::new(), String::new(), false, false);
    for c in s.chars() {
        match c {
            '\\' if quoted && !escaped => {
                escaped = true;
                cur.push(c);
                continue;
            }
            '"' if !escaped => quoted = !quoted,
            ',' if !quoted => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        escaped = false;
        cur.push(c);
    }
    out.push(cur);
    out
}

/// Suffix of the cover property added beside each labelled concurrent assertion: its matches
/// are the assertion's passes.
pub(crate) const PASS_SUFFIX: &str = "__pass";

/// `text` with `LABEL__pass: cover property (SPEC);` added after every labelled concurrent
/// assertion `LABEL: assert property (SPEC) ...;`, on the line where the assertion ends (so
/// every line keeps its number). An assertion whose end cannot be found is left alone.
pub(crate) fn with_pass_covers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    let (mut i, mut copied) = (0, 0);
    while let Some(k) = text[i..].find("assert").map(|k| k + i) {
        i = k + 6;
        let Some((label, spec, end)) = assertion_at(text, k) else { continue };
        out.push_str(&text[copied..end]);
        // On one line (`//` comments dropped), so that no line moves.
        let spec: Vec<&str> = spec.lines().map(|l| l.split_once("//").map_or(l, |(code, _)| code).trim()).collect();
        out.push_str(&format!(" {label}{PASS_SUFFIX}: cover property {};", spec.join(" ")));
        copied = end;
        i = end;
    }
    out.push_str(&text[copied..]);
    out
}

/// The labelled concurrent assertion whose `assert` keyword is at `k`: (label, the
/// parenthesized property, the byte just past its closing `;`).
fn assertion_at(text: &str, k: usize) -> Option<(&str, &str, usize)> {
    let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let before = text[..k].trim_end();
    let before = before.strip_suffix(':')?.trim_end();
    let start = before.rfind(|c: char| !is_id(c)).map_or(0, |p| p + 1);
    let label = &before[start..];
    if label.is_empty() || !label.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return None;
    }
    let rest = text[k + 6..].trim_start();
    let rest = rest.strip_prefix("property")?;
    let open = k + 6 + (text[k + 6..].len() - rest.len()) + (rest.len() - rest.trim_start().len());
    if !text[open..].starts_with('(') {
        return None;
    }
    let close = matching_paren(text, open)?;
    let spec = &text[open..=close];
    let end = statement_end(text, close + 1)?;
    Some((label, spec, end))
}

/// The sources Verilator reads for `m`: each with its pass covers added ([`with_pass_covers`])
/// written under `dir` (the original's folder added to the include path, for its relative
/// `` `include ``s), or the original when it has no labelled concurrent assertion.
pub(crate) fn sources_with_pass_covers(m: &Model, dir: &Path) -> Result<Vec<std::ffi::OsString>, String> {
    let mut args = Vec::new();
    for (k, src) in m.sources.iter().enumerate() {
        let text = fs::read_to_string(src).map_err(|e| format!("{}: {e}", src.display()))?;
        let with = with_pass_covers(&text);
        if with == text {
            args.push(src.as_os_str().to_owned());
            continue;
        }
        let sub = dir.join(format!("src{k}"));
        fs::create_dir_all(&sub).map_err(|e| format!("{}: {e}", sub.display()))?;
        let copy = sub.join(src.file_name().ok_or_else(|| format!("{}: not a file", src.display()))?);
        fs::write(&copy, with).map_err(|e| format!("{}: {e}", copy.display()))?;
        if let Some(parent) = src.parent().filter(|p| !p.as_os_str().is_empty()) {
            args.push(format!("-I{}", parent.display()).into());
        }
        args.push(copy.into_os_string());
    }
    Ok(args)
}

/// The index of the `)` closing the `(` at `open` (strings skipped).
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let (mut depth, mut quoted) = (0i32, false);
    let mut chars = text[open..].char_indices();
    while let Some((j, c)) = chars.next() {
        match c {
            '\\' if quoted => {
                chars.next();
            }
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + j);
                }
            }
            _ => {}
        }
    }
    None
}

/// Just past the `;` ending a statement from `from` (an action block's parentheses, strings
/// and `begin`/`end` skipped).
fn statement_end(text: &str, from: usize) -> Option<usize> {
    let (mut depth, mut blocks, mut quoted) = (0i32, 0i32, false);
    let bytes = text.as_bytes();
    let mut j = from;
    while j < bytes.len() {
        let c = bytes[j] as char;
        if quoted {
            match c {
                '\\' => j += 1,
                '"' => quoted = false,
                _ => {}
            }
        } else if c == '"' {
            quoted = true;
        } else if c == '(' {
            depth += 1;
        } else if c == ')' {
            depth -= 1;
        } else if c == ';' && depth == 0 && blocks == 0 {
            return Some(j + 1);
        } else if c.is_ascii_alphabetic() && (j == 0 || !(bytes[j - 1] as char).is_ascii_alphanumeric()) {
            let w: String = text[j..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            match w.as_str() {
                "begin" => blocks += 1,
                "end" => blocks -= 1,
                _ => {}
            }
            j += w.len();
            continue;
        }
        j += 1;
    }
    None
}

/// The shim's cover-count body (reads each counter) and the Rust table of the points.
pub(crate) fn cover_code(points: &[CoverPoint]) -> (String, String) {
    let mut body = String::new();
    for (k, p) in points.iter().enumerate() {
        writeln!(body, "    if ({k} < n) out[{k}] = s->top->rootp->vlSymsp->__Vcoverage[{}].load();", p.index).unwrap();
    }
    let mut table = String::new();
    for p in points {
        writeln!(table, "        ({:?}, {:?}, {}),", p.path, p.file, p.line).unwrap();
    }
    (body, table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cover_inserts_parse_with_their_labels_and_paths() {
        let line = r#"5]), first, "/x/t.sv", 10, 11, ".t.c_wrap", "v_user/t", "c_wrap", "");"#;
        let p = parse_insert(line, "t").unwrap();
        assert_eq!((p.index, p.file.as_str(), p.line, p.path.as_str()), (5, "t.sv", 10, "c_wrap"));
        let sub = r#"0]), first, "a.sv", 3, 1, ".t.u_core.c_x", "v_user/core", "c_x", "");"#;
        assert_eq!(parse_insert(sub, "t").unwrap().path, "u_core.c_x");
        let pass = r#"1]), first, "a.sv", 3, 1, ".t.a_x___05Fpass", "v_user/t", "a_x___05Fpass", "");"#;
        assert_eq!(parse_insert(pass, "t").unwrap().path, "a_x__pass");
        assert_eq!(split_args(r#"a, "b,c", d"#), vec!["a", r#" "b,c""#, " d"]);
    }

    #[test]
    fn labelled_concurrent_assertions_get_a_pass_cover_on_their_last_line() {
        let src = "module m;\n  a_one: assert property (@(posedge clk) disable iff (rst) x |-> (y));\n  a_two: assert property (@(posedge clk)\n      z != 1) else $warning(\"z; (is 1\");\n  a_imm: assert (q);\n  assert property (@(posedge clk) w);\nendmodule\n";
        let out = with_pass_covers(src);
        assert_eq!(out.lines().count(), src.lines().count(), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[1].ends_with("; a_one__pass: cover property (@(posedge clk) disable iff (rst) x |-> (y));"),
            "{out}"
        );
        assert!(lines[3].ends_with("\"); a_two__pass: cover property (@(posedge clk) z != 1);"), "{out}");
        assert_eq!(lines[4], "  a_imm: assert (q);", "immediate assertions are left alone");
        assert_eq!(lines[5], "  assert property (@(posedge clk) w);", "unlabelled ones too");
        let unterminated = "  a_x: assert property (@(posedge clk) w)\n";
        assert_eq!(with_pass_covers(unterminated), unterminated);
    }

    #[test]
    fn declared_signals_become_a_verilator_config() {
        let m = Model::new("m", "M", "top", ["top.sv"]).public("cnt").public_in("core", "acc");
        let c = public_config(&m).unwrap();
        assert!(c.starts_with("`verilator_config\n"), "{c}");
        assert!(c.contains("public_flat_rw -module \"top\" -var \"cnt\""), "{c}");
        assert!(c.contains("public_flat_rw -module \"core\" -var \"acc\""), "{c}");
        assert!(public_config(&Model::new("m", "M", "top", ["top.sv"])).is_none());
    }
}
