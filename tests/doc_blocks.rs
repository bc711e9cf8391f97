//! Docs that are executed: the commands a doc shows, read from its fenced blocks, and the
//! figures it quotes from their output, checked against a run (the rules are in README.md,
//! "Docs are executed").
//!
//! - A ```` ```sh ```` block holds commands, one a line (a line ending in `\` continues on the
//!   next; `# ...` is a comment). Each runs and must exit 0.
//! - A ```` ```text ```` block whose lines start with `$ ` holds commands and, after each, lines
//!   of its output: every line shown must appear in the command's output (stdout, then
//!   stderr), in the order shown; lines between may be left out (`...` says so to a reader), and
//!   a line ending in `...` matches an output line that starts with the tokens before it. The
//!   command exits 2 when a shown line starts with `error:`, 0 otherwise, unless its comment
//!   says `[exits: N]` (a check that finds a failure exits 1). A `text` block without
//!   `$ ` lines is a picture, not checked.
//! - Figures: words are compared exactly, whitespace apart; numbers (`4,545`, `-0.7`, `91.8`)
//!   match to the digits shown (half a unit of the last digit), or within the block's
//!   `tolerance=N%` (on the fence line: ```` ```text tolerance=2% ````) where that is wider.
//!   A token `[..]` matches any one token.
//! - A command's comment may say `[tested as: CMD]`: the test runs CMD (a smaller size of the
//!   same command: its program is a word of the command shown, which may wrap it in a
//!   measurement such as `/usr/bin/time`, followed there by the same subcommand) instead; or
//!   `[not tested: REASON]`. A command with output shown cannot be replaced: the output
//!   shown is the command's own.
//! - A command's comment may say `[needs: WHAT]`: it runs only where WHAT is present, and is
//!   counted as skipped, never passed, where it is not. WHAT is `rtl` or `mpi` (the test
//!   build of `trnsim` has that feature: `make test` builds it so) or a program of a reference
//!   tool built outside the repository (found on `PATH`, e.g. `dramsim3main`), or
//!   `outside-block`, the example block crate's binary, where the test build made it.
//!   `alias trnsim=...` lines are the reader's set-up: `trnsim` is the test's binary.
//! - A command that reads and writes no file of its folder (`trnsim` with no path among its
//!   words: [`shareable`]) runs once per test process: docs that show the same command check
//!   what each shows against that one run. A doc's test starts its shareable commands on a
//!   second thread ([`prefetch`]), beside the commands that must run in order.
//!
//! - Figures quoted in a table or a sentence are tied to a command's output by a comment
//!   before the block (`<!-- figure: CMD ==> OUTPUT LINE -->`, `doc_figures.rs`).
//!
//! What this leaves out: figures in prose without such a comment; commands shown inline in a
//! sentence; indented code blocks (refused in a checked doc, so a
//! command cannot hide in one).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What a step does when the test runs it.
#[derive(Debug, Clone, PartialEq)]
pub enum Run {
    /// Run this shell command.
    Cmd(String),
    /// Not run, for this reason (said in the doc).
    Skip(String),
}

/// Output a command must show.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    /// (doc line, text) of each line shown.
    pub lines: Vec<(usize, String)>,
    /// Relative tolerance of the block's figures (0.02 for `tolerance=2%`).
    pub tolerance: f64,
}

/// One command of a doc.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The doc's line of the command.
    pub line: usize,
    /// The command as shown (comment left out).
    pub shown: String,
    /// What the test runs.
    pub run: Run,
    /// The output shown for it, if any.
    pub expect: Option<Expect>,
    /// What it needs to run (`[needs: WHAT]`), if anything beyond the test build.
    pub needs: Option<String>,
    /// The exit code it must give when not the usual one (`[exits: N]`: a check that finds a
    /// failure exits 1, not a usage error's 2).
    pub exits: Option<i32>,
    /// The figures of its output a table or sentence quotes (`<!-- figure: ... -->`).
    pub figure: Option<crate::doc_figures::Figure>,
}

/// `path:line: message` for a doc's errors.
fn at(doc: &str, line: usize, msg: impl std::fmt::Display) -> String {
    format!("{doc}:{line}: {msg}")
}

/// The steps of a doc's text, in order; `doc` names it in errors.
pub fn parse(doc: &str, text: &str) -> Result<Vec<Step>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    let mut prev_blank = true;
    while i < lines.len() {
        let l = lines[i];
        if let Some(info) = l.trim_start().strip_prefix("```") {
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].trim_start().starts_with("```"))
                .ok_or_else(|| at(doc, i + 1, "code block never closed"))?;
            let body: Vec<(usize, &str)> = (i + 1..end).map(|j| (j + 1, lines[j])).collect();
            block(doc, i + 1, info.trim(), &body, &mut steps)?;
            i = end + 1;
            prev_blank = false;
            continue;
        }
        if let Some((cmd, figure)) = crate::doc_figures::parse_comment(doc, i + 1, l.trim(), &lines, i + 1)? {
            let mut s = step(doc, i + 1, &cmd)?;
            if s.run != Run::Cmd(s.shown.clone()) {
                return Err(at(doc, i + 1, "a figure's command is run as written"));
            }
            s.figure = Some(figure);
            steps.push(s);
            i += 1;
            continue;
        }
        let indented = l.starts_with("    ") && !l.trim().is_empty();
        if indented && prev_blank && looks_like_command(l.trim()) {
            return Err(at(doc, i + 1, "a command in an indented block: show it in a ```sh block, so it runs"));
        }
        prev_blank = l.trim().is_empty() || (prev_blank && indented);
        i += 1;
    }
    Ok(steps)
}

fn looks_like_command(l: &str) -> bool {
    ["trnsim ", "make ", "cargo ", "scripts/", "./target/"].iter().any(|p| l.starts_with(p))
}

/// The steps of one fenced block opened at `line` with info string `info`.
fn block(doc: &str, line: usize, info: &str, body: &[(usize, &str)], steps: &mut Vec<Step>) -> Result<(), String> {
    let mut words = info.split_whitespace();
    let lang = words.next().unwrap_or("");
    let mut tolerance = 0.0;
    for w in words {
        match w.strip_prefix("tolerance=").and_then(|t| t.strip_suffix('%')) {
            Some(t) => {
                tolerance = t
                    .parse::<f64>()
                    .ok()
                    .filter(|t| (0.0..=100.0).contains(t))
                    .ok_or_else(|| at(doc, line, format!("tolerance: `{w}` is not N% with N in 0..=100")))?
                    / 100.0
            }
            None => return Err(at(doc, line, format!("unknown block option `{w}` (known: tolerance=N%)"))),
        }
    }
    match lang {
        "sh" | "bash" | "shell" => {
            if tolerance > 0.0 {
                return Err(at(doc, line, "tolerance= is for output blocks (```text with $ lines)"));
            }
            for (l, cmd) in joined(body) {
                if !cmd.is_empty() {
                    steps.push(step(doc, l, &cmd)?);
                }
            }
        }
        "text" | "console" if body.iter().any(|(_, t)| t.starts_with("$ ")) => {
            let first = body.iter().find(|(_, t)| !t.trim().is_empty());
            if let Some((l, t)) = first.filter(|(_, t)| !t.starts_with("$ ")) {
                return Err(at(doc, *l, format!("output before any `$ ` command: `{t}`")));
            }
            output_block(doc, body, tolerance, steps)?;
        }
        _ if tolerance > 0.0 => return Err(at(doc, line, "tolerance= on a block without commands")),
        _ => {}
    }
    Ok(())
}

/// Commands and their shown output from a ```text block with `$ ` lines.
fn output_block(doc: &str, body: &[(usize, &str)], tolerance: f64, steps: &mut Vec<Step>) -> Result<(), String> {
    let mut k = 0;
    while k < body.len() {
        let (l, t) = body[k];
        let mut cmd = t.trim_start_matches("$ ").to_string();
        while cmd.ends_with('\\') && k + 1 < body.len() {
            cmd.pop();
            k += 1;
            cmd.push_str(body[k].1.trim_start());
        }
        let mut s = step(doc, l, &cmd)?;
        k += 1;
        let mut lines = Vec::new();
        while k < body.len() && !body[k].1.starts_with("$ ") {
            if !body[k].1.trim().is_empty() {
                lines.push((body[k].0, body[k].1.to_string()));
            }
            k += 1;
        }
        if !lines.is_empty() && matches!(&s.run, Run::Cmd(c) if *c != s.shown) {
            return Err(at(doc, l, "a command with output shown is tested as shown, not [tested as: ...]"));
        }
        s.expect = Some(Expect { lines, tolerance });
        steps.push(s);
    }
    Ok(())
}

/// A sh block's lines joined over trailing `\`, with the line each starts on.
fn joined(body: &[(usize, &str)]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for &(l, t) in body {
        let (code, comment) = split_comment(t);
        let cont = code.trim_end().ends_with('\\');
        let code = code.trim_end().trim_end_matches('\\').trim();
        let piece = if comment.is_empty() { code.to_string() } else { format!("{code} #{comment}") };
        if code.is_empty() {
            // A comment alone on its line goes on with the comment of the command above.
            if let (false, Some(last)) = (comment.trim().is_empty(), out.last_mut()) {
                last.1 = if split_comment(&last.1).1.is_empty() {
                    format!("{} #{comment}", last.1)
                } else {
                    format!("{}{comment}", last.1)
                };
            }
            continue;
        }
        match (open, out.last_mut()) {
            (true, Some(last)) => {
                // A comment on a continued line stays with the command's comment.
                let (c0, m0) = split_comment(&last.1);
                let (c1, m1) = split_comment(&piece);
                let c = format!("{} {}", c0.trim(), c1.trim());
                let m = format!("{m0}{m1}");
                last.1 = if m.trim().is_empty() { c } else { format!("{c} #{m}") };
            }
            _ => out.push((l, piece)),
        }
        open = cont;
    }
    out
}

/// (code, comment) of a shell line: the comment starts at a `#` that begins a word outside
/// quotes.
fn split_comment(t: &str) -> (&str, &str) {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in t.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return (&t[..i], &t[i + 1..]),
            _ => {}
        }
        prev = c;
    }
    (t, "")
}

/// One step from a command line with its comment.
fn step(doc: &str, line: usize, text: &str) -> Result<Step, String> {
    let (code, comment) = split_comment(text);
    let shown = code.trim().to_string();
    let marker = |name: &str| {
        comment.find(name).map(|s| {
            let rest = &comment[s + name.len()..];
            rest[..rest.find(']').unwrap_or(rest.len())].trim().to_string()
        })
    };
    let run = if let Some(reason) = marker("[not tested:") {
        if reason.is_empty() {
            return Err(at(doc, line, "[not tested: ...] needs a reason"));
        }
        Run::Skip(reason)
    } else if let Some(cmd) = marker("[tested as:") {
        // The same program and subcommand: the replacement's program is a word of the shown
        // command (which may wrap it in a measurement: `taskset`, `/usr/bin/time`), and the
        // word after it there, if any, is the replacement's second word.
        let head: Vec<&str> = cmd.split_whitespace().take(2).collect();
        let words: Vec<&str> = shown.split_whitespace().collect();
        let same = head
            .first()
            .and_then(|p| words.iter().position(|w| w == p))
            .is_some_and(|i| words.get(i + 1).is_none_or(|next| head.get(1) == Some(next)));
        if !same {
            return Err(at(doc, line, format!("[tested as: {cmd}] is not the same command as `{shown}`")));
        }
        Run::Cmd(cmd)
    } else if shown.starts_with("alias trnsim=") {
        Run::Skip("the reader's alias for the binary; the test runs its own".into())
    } else {
        Run::Cmd(shown.clone())
    };
    let needs = marker("[needs:");
    if needs.as_deref() == Some("") {
        return Err(at(doc, line, "[needs: ...] names a feature (rtl, mpi) or a program"));
    }
    let exits = match marker("[exits:") {
        None => None,
        Some(n) => Some(n.parse::<i32>().map_err(|_| at(doc, line, format!("[exits: {n}] is not an exit code")))?),
    };
    Ok(Step { line, shown, run, expect: None, needs, exits, figure: None })
}

/// A piece of a token: a number (value, half a unit of its last digit) or other text.
#[derive(Debug, PartialEq)]
enum Piece {
    Num(f64, f64),
    Text(String),
}

/// A token cut into numbers and the text between them: `4,545` is one number, `-0.7` one,
/// `tp-matmul-4` text then 4, `127.5GB/s` 127.5 then text.
fn pieces(tok: &str) -> Vec<Piece> {
    let b = tok.as_bytes();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < b.len() {
        let signed = (b[i] == b'-' || b[i] == b'+')
            && i + 1 < b.len()
            && b[i + 1].is_ascii_digit()
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if b[i].is_ascii_digit() || signed {
            let start = i;
            i += 1;
            let mut decimals: Option<i32> = None;
            while i < b.len() {
                let next_digit = i + 1 < b.len() && b[i + 1].is_ascii_digit();
                if b[i].is_ascii_digit() {
                    decimals = decimals.map(|d| d + 1);
                } else if b[i] == b',' && decimals.is_none() && next_digit && tok[i + 1..].len() >= 3 {
                    // a thousands separator: three digits follow
                } else if b[i] == b'.' && decimals.is_none() && next_digit {
                    decimals = Some(0);
                } else {
                    break;
                }
                i += 1;
            }
            let s: String = tok[start..i].chars().filter(|&c| c != ',').collect();
            match s.parse::<f64>() {
                Ok(v) => {
                    if !text.is_empty() {
                        out.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    out.push(Piece::Num(v, 0.5 * 10f64.powi(-decimals.unwrap_or(0))));
                }
                Err(_) => text.push_str(&tok[start..i]),
            }
        } else {
            let c = tok[i..].chars().next().unwrap_or(' ');
            text.push(c);
            i += c.len_utf8();
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

/// The numbers of `text`, each with half a unit of its last digit shown.
pub fn numbers_of(text: &str) -> Vec<(f64, f64)> {
    let nums =
        |t: &str| pieces(t).into_iter().filter_map(|p| if let Piece::Num(v, h) = p { Some((v, h)) } else { None });
    text.split_whitespace().flat_map(nums).collect()
}

/// Whether an output line matches a line shown, within `tolerance`.
pub fn line_matches(shown: &str, actual: &str, tolerance: f64) -> bool {
    let mut want: Vec<&str> = shown.split_whitespace().collect();
    let got: Vec<&str> = actual.split_whitespace().collect();
    let prefix = want.len() > 1 && want.last() == Some(&"...");
    if prefix {
        want.pop();
    }
    if got.len() < want.len() || (!prefix && got.len() != want.len()) {
        return false;
    }
    want.iter().zip(&got).all(|(w, g)| *w == "[..]" || token_matches(w, g, tolerance))
}

fn token_matches(want: &str, got: &str, tolerance: f64) -> bool {
    let (w, g) = (pieces(want), pieces(got));
    w.len() == g.len()
        && w.iter().zip(&g).all(|(w, g)| match (w, g) {
            (Piece::Num(e, half), Piece::Num(a, _)) => (a - e).abs() <= half.max(tolerance * e.abs()) * (1.0 + 1e-12),
            (Piece::Text(e), Piece::Text(a)) => e == a,
            _ => false,
        })
}

/// Checks a command's output against what the doc shows; the error names the doc line of the
/// first line shown that the output lacks, and the output line most like it.
pub fn check_output(doc: &str, expect: &Expect, output: &str) -> Result<(), String> {
    let out: Vec<&str> = output.lines().collect();
    let mut from = 0;
    for (l, shown) in &expect.lines {
        if shown.trim() == "..." {
            continue;
        }
        match (from..out.len()).find(|&j| line_matches(shown, out[j], expect.tolerance)) {
            Some(j) => from = j + 1,
            None => {
                let near = nearest(shown, &out[from.min(out.len())..]);
                return Err(at(
                    doc,
                    *l,
                    format!(
                        "the output has no line like `{}` (tolerance {} %) after the lines matched before it; nearest: `{}`",
                        shown.trim(),
                        expect.tolerance * 100.0,
                        near.trim()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The output line sharing the most tokens with `shown`.
fn nearest<'a>(shown: &str, out: &[&'a str]) -> &'a str {
    let want: Vec<&str> = shown.split_whitespace().collect();
    out.iter().copied().max_by_key(|l| l.split_whitespace().filter(|t| want.contains(t)).count()).unwrap_or("")
}

/// Where commands run: a scratch folder with the repository's `models` and `scripts` linked
/// in, `traces/out` for outputs, and `trnsim` on the path as the test build's binary.
#[derive(Clone)]
pub struct Workspace {
    /// The folder commands run in.
    pub dir: PathBuf,
    bin: PathBuf,
}

impl Workspace {
    /// A fresh workspace under target/test-out/`name`.
    pub fn new(name: &str, trnsim: &Path) -> Workspace {
        let dir = crate::common::scratch(name);
        let root = crate::common::root().canonicalize().expect("workspace root");
        for d in ["models", "scripts"] {
            std::os::unix::fs::symlink(root.join(d), dir.join(d)).expect("link into the workspace");
        }
        std::fs::create_dir_all(dir.join("traces/out")).expect("traces/out");
        let bin = dir.join(".bin");
        std::fs::create_dir_all(&bin).expect(".bin");
        std::os::unix::fs::symlink(trnsim, bin.join("trnsim")).expect("link trnsim");
        // The example block crate's binary (`trnsim` with its blocks added), where the test
        // build made it beside trnsim: a doc's `[needs: outside-block]` commands run with it.
        if let Some(ob) = trnsim.parent().map(|d| d.join("outside-block")).filter(|p| p.is_file()) {
            std::os::unix::fs::symlink(ob, bin.join("outside-block")).expect("link outside-block");
        }
        Workspace { dir, bin }
    }

    /// Runs `cmd` under bash (`pipefail`), stdin closed, at most `limit`: (exit code, stdout
    /// then stderr). A run over the limit is killed and reported as an error.
    pub fn run(&self, cmd: &str, limit: Duration) -> Result<(i32, String), String> {
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap_or_default());
        let mut child = Command::new("bash")
            .args(["-o", "pipefail", "-c", cmd])
            .current_dir(&self.dir)
            .env("PATH", path)
            .env("TRNSIM", self.bin.join("trnsim"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("bash: {e}"))?;
        let out_t = drain(child.stdout.take());
        let err_t = drain(child.stderr.take());
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
                break s;
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("took more than {} s: give it a smaller [tested as: ...] size", limit.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let text = format!("{}{}", out_t.join().unwrap_or_default(), err_t.join().unwrap_or_default());
        Ok((status.code().unwrap_or(-1), text))
    }
}

/// Reads a pipe to its end on a thread of its own (so a full stderr cannot block stdout).
fn drain<R: std::io::Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_string(&mut s);
        }
        s
    })
}

/// A command's result, once per test process, for the commands [`shareable`] admits.
type Shared = Arc<OnceLock<Result<(i32, String), String>>>;
static SHARED: Mutex<Option<HashMap<String, Shared>>> = Mutex::new(None);

/// Whether `cmd` reads and writes no file of its workspace, so that its result in one
/// workspace is its result in any: `trnsim` with no path among its words (no `/`, no file
/// extension), no redirection, pipe, variable or quoting. The repository's models and the
/// binary are the same in every workspace, and a run is deterministic (its figures and
/// words; a time it measures is shown as `[..]`), so docs that show the same command check
/// their figures against one run of it.
pub fn shareable(cmd: &str) -> bool {
    let file_like = |w: &str| {
        w.contains('/')
            || w.char_indices().any(|(i, c)| c == '.' && w[i + 1..].starts_with(|n: char| n.is_ascii_alphabetic()))
    };
    cmd.starts_with("trnsim ")
        && !cmd.contains(|c: char| "<>|;&$`'\"\\*?(){}~".contains(c))
        && !cmd.split_whitespace().any(file_like)
}

/// Runs `cmd` in `ws`, or, when it is [`shareable`], gives the result of its first run in
/// this process (a doc running it while another runs it waits for that run).
fn run_shared(ws: &Workspace, cmd: &str, limit: Duration) -> Result<(i32, String), String> {
    if !shareable(cmd) {
        return ws.run(cmd, limit);
    }
    let cell = {
        let mut m = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        m.get_or_insert_with(HashMap::new).entry(cmd.to_string()).or_default().clone()
    };
    cell.get_or_init(|| ws.run(cmd, limit)).clone()
}

/// Starts a doc's [`shareable`] commands (those of `steps` that need nothing beyond the test
/// build) in order on a thread of their own, so that they run beside the doc's other commands,
/// which [`run_steps`] runs in order: it takes each shareable result from its cell, waiting for
/// a run under way, or runs the command itself if the thread has not reached it. Join the
/// thread once the doc's steps have run.
pub fn prefetch(steps: &[Step], ws: &Workspace, limit: Duration) -> std::thread::JoinHandle<()> {
    let cmds: Vec<String> = steps
        .iter()
        .filter(|s| s.needs.is_none())
        .filter_map(|s| match &s.run {
            Run::Cmd(c) if shareable(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    let ws = ws.clone();
    std::thread::spawn(move || {
        for c in cmds {
            let _ = run_shared(&ws, &c, limit);
        }
    })
}

/// What running a doc's steps gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The failures, `doc:line: ...`.
    pub errors: Vec<String>,
    /// (doc line, seconds) of each command run.
    pub times: Vec<(usize, f64)>,
    /// `doc:line: needs WHAT` of each command not run for want of what it needs.
    pub skipped: Vec<String>,
}

/// Whether `what` (of a `[needs: WHAT]` marker) is present for `ws`'s binary: the `rtl` or
/// `mpi` feature of the test build (asked of the binary: a build without it says so), or a
/// program on `PATH`.
pub fn has(ws: &Workspace, what: &str) -> bool {
    let probe =
        |cmd: &str, without: &str| ws.run(cmd, Duration::from_secs(60)).is_ok_and(|(_, out)| !out.contains(without));
    match what {
        "rtl" => probe("trnsim diff --list", "built without RTL co-simulation"),
        "mpi" => probe("trnsim run --mpi demo", "built without MPI"),
        prog => ws
            .run(&format!("command -v -- '{}'", prog.replace('\'', "")), Duration::from_secs(10))
            .is_ok_and(|(c, _)| c == 0),
    }
}

/// A command's exit code and output, or why it did not run.
type RunResult = Result<(i32, String), String>;

/// Runs every step of a doc in order in `ws`: the errors (`doc:line: ...`), each step's time
/// and the steps skipped for want of what they need.
pub fn run_steps(doc: &str, steps: &[Step], ws: &Workspace, limit: Duration) -> Outcome {
    let mut errors = Vec::new();
    let mut times = Vec::new();
    let mut skipped = Vec::new();
    let mut present: Vec<(String, bool)> = Vec::new();
    let mut last_figure: Option<(String, RunResult)> = None;
    for s in steps {
        let Run::Cmd(cmd) = &s.run else { continue };
        if let Some(what) = &s.needs {
            let found = match present.iter().find(|(w, _)| w == what) {
                Some(&(_, f)) => f,
                None => {
                    let f = has(ws, what);
                    present.push((what.clone(), f));
                    f
                }
            };
            if !found {
                skipped.push(at(doc, s.line, format!("needs {what}")));
                continue;
            }
        }
        let t0 = Instant::now();
        // Figure comments stacked before one block that name the same command share its run.
        let result = match &last_figure {
            Some((c, r)) if s.figure.is_some() && c == cmd => r.clone(),
            _ => run_shared(ws, cmd, limit),
        };
        last_figure = s.figure.as_ref().map(|_| (cmd.clone(), result.clone()));
        times.push((s.line, t0.elapsed().as_secs_f64()));
        let (code, output) = match result {
            Ok(r) => r,
            Err(e) => {
                errors.push(at(doc, s.line, format!("`{cmd}`: {e}")));
                continue;
            }
        };
        let wants_error = s.expect.as_ref().is_some_and(|e| e.lines.iter().any(|(_, l)| l.starts_with("error:")));
        let want = s.exits.unwrap_or(if wants_error { 2 } else { 0 });
        if code != want {
            let tail: Vec<&str> = output.lines().rev().take(3).collect();
            errors.push(at(doc, s.line, format!("`{cmd}` exited {code}, not {want}: {}", tail.join(" / "))));
        } else if let Some(e) = &s.expect {
            if let Err(msg) = check_output(doc, e, &output) {
                errors.push(format!("{msg}\n  (command `{cmd}`)"));
            }
        }
        if let (true, Some(f)) = (code == want, &s.figure) {
            if let Err(msg) = crate::doc_figures::check(doc, s.line, f, &output) {
                errors.push(format!("{msg}\n  (command `{cmd}`)"));
            }
        }
    }
    Outcome { errors, times, skipped }
}
