//! Figures quoted in a doc's tables and sentences, tied to the command whose output holds
//! them (the rules are in README.md, "Docs are executed"; the blocks' own: `doc_blocks.rs`).
//!
//! An HTML comment on a line of its own, before a table or a paragraph (several may stand
//! one after another), names a command, a line of its output and, optionally, the row or
//! sentence of the block below that quotes it:
//!
//! ```text
//! <!-- figure: trnsim run e2e-llm-layer ==> e2e-llm-layer {} ns ... ==> `trnsim run e2e-llm-layer` -->
//! ```
//!
//! The command runs as a doc's commands do (a file-free one once per test process, shared
//! with every doc that runs it). The output line is matched as an output block's line is
//! (`...` at the end leaves the rest out, `[..]` is any one token), and each `{}` token takes
//! the number of the output token in its place (`{/1000}` divides it by 1000: an output in
//! ns quoted in us; `{*100}` multiplies). The figures taken must appear, in the same
//! order, among the numbers of the block below (the comment's last part, when given, picks
//! the first line holding it: in a table that row alone, in a paragraph from that line to the
//! paragraph's end), each to the digits the doc shows, or within `tolerance=N%` written
//! right after `figure` (`<!-- figure tolerance=1%: ... -->`) where that is wider. An HTML
//! comment is not shown to a reader, and a comment line inside a table would end it: the
//! comments stand before the block.
//!
//! Left out: which cell of a row a figure is in (the figures are found in order among the
//! row's numbers, so a doctored cell fails unless a later number of the row happens to equal
//! the true figure).

/// A figure check: where its figures are quoted and what output line holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The output line, `{}` for each figure.
    pub pattern: String,
    /// (doc line, text) of each line the figures may be quoted in, in order.
    pub target: Vec<(usize, String)>,
    /// Relative tolerance (0.01 for `tolerance=1%`).
    pub tolerance: f64,
}

/// Parses the comment at doc line `line` (`text` its trimmed text), its block below being
/// the lines after `next` (0-based index of the line after the comment). `Ok(None)` when it
/// is not a figure comment.
pub fn parse_comment(
    doc: &str,
    line: usize,
    text: &str,
    lines: &[&str],
    next: usize,
) -> Result<Option<(String, Figure)>, String> {
    let err = |m: String| format!("{doc}:{line}: {m}");
    let Some(rest) = text.strip_prefix("<!-- figure") else { return Ok(None) };
    let body = rest.strip_suffix("-->").ok_or_else(|| err("a figure comment ends on its own line with -->".into()))?;
    let (opts, spec) = body.split_once(':').ok_or_else(|| err("`<!-- figure: CMD ==> OUTPUT LINE -->`".into()))?;
    let tolerance = match opts.trim() {
        "" => 0.0,
        o => {
            o.strip_prefix("tolerance=")
                .and_then(|t| t.strip_suffix('%'))
                .and_then(|t| t.parse::<f64>().ok())
                .filter(|t| (0.0..=100.0).contains(t))
                .ok_or_else(|| err(format!("`{o}`: the option is tolerance=N% with N in 0..=100")))?
                / 100.0
        }
    };
    let parts: Vec<&str> = spec.split("==>").map(str::trim).collect();
    let (cmd, pattern, anchor) = match parts[..] {
        [c, p] => (c, p, None),
        [c, p, a] => (c, p, Some(a)),
        _ => return Err(err("`<!-- figure: CMD ==> OUTPUT LINE [==> ROW] -->`".into())),
    };
    if cmd.is_empty() || !pattern.split_whitespace().any(|t| slot(t).is_some()) {
        return Err(err("a figure comment names a command and an output line with a {} for each figure".into()));
    }
    // The block below: after any further figure comments, up to a blank line.
    let start = (next..lines.len())
        .find(|&j| !lines[j].trim().is_empty() && !lines[j].trim_start().starts_with("<!-- figure"))
        .ok_or_else(|| err("no table or paragraph after the figure comment".into()))?;
    let end = (start..lines.len()).find(|&j| lines[j].trim().is_empty()).unwrap_or(lines.len());
    let block: Vec<(usize, String)> = (start..end).map(|j| (j + 1, lines[j].to_string())).collect();
    let target = match anchor {
        None => block,
        Some(a) => {
            let at = block
                .iter()
                .position(|(_, l)| l.contains(a))
                .ok_or_else(|| err(format!("no line of the block below holds `{a}`")))?;
            let table = block[at].1.trim_start().starts_with('|');
            block[at..if table { at + 1 } else { block.len() }].to_vec()
        }
    };
    Ok(Some((cmd.to_string(), Figure { pattern: pattern.to_string(), target, tolerance })))
}

/// The figures of the first output line matching `pattern`, or None.
fn take(pattern: &str, output: &str) -> Option<Vec<f64>> {
    let mut want: Vec<&str> = pattern.split_whitespace().collect();
    let prefix = want.len() > 1 && want.last() == Some(&"...");
    if prefix {
        want.pop();
    }
    output.lines().find_map(|l| {
        let got: Vec<&str> = l.split_whitespace().collect();
        if got.len() < want.len() || (!prefix && got.len() != want.len()) {
            return None;
        }
        let mut figures = Vec::new();
        for (w, g) in want.iter().zip(&got) {
            if let Some(scale) = slot(w) {
                figures.push(numbers(g).first()?.0 * scale);
            } else if *w != "[..]" && !crate::doc_blocks::line_matches(w, g, 0.0) {
                return None;
            }
        }
        Some(figures)
    })
}

/// The scale of a figure slot: `{}` 1, `{/N}` 1/N, `{*N}` N (an output in ns quoted in us:
/// `{/1000}`); None for another token.
fn slot(token: &str) -> Option<f64> {
    let inner = token.strip_prefix('{')?.strip_suffix('}')?;
    match inner.split_at_checked(1) {
        None => Some(1.0),
        Some(("/", n)) => n.parse::<f64>().ok().filter(|n| *n > 0.0).map(|n| 1.0 / n),
        Some(("*", n)) => n.parse::<f64>().ok().filter(|n| *n > 0.0),
        _ => None,
    }
}

/// The numbers of `text`, each with half a unit of its last digit shown.
fn numbers(text: &str) -> Vec<(f64, f64)> {
    crate::doc_blocks::numbers_of(text)
}

/// Checks a figure against the output of its command: the error names the doc line of the
/// quote the figure is missing from.
pub fn check(doc: &str, line: usize, f: &Figure, output: &str) -> Result<(), String> {
    let figures =
        take(&f.pattern, output).ok_or_else(|| format!("{doc}:{line}: the output has no line like `{}`", f.pattern))?;
    let quoted: Vec<(usize, f64, f64)> =
        f.target.iter().flat_map(|(l, t)| numbers(t).into_iter().map(move |(v, h)| (*l, v, h))).collect();
    let mut from = 0;
    for v in figures {
        let hit = (from..quoted.len()).find(|&k| {
            let (_, q, half) = quoted[k];
            (v - q).abs() <= half.max(f.tolerance * q.abs()) * (1.0 + 1e-12)
        });
        match hit {
            Some(k) => from = k + 1,
            None => {
                let l = f.target.first().map_or(line, |t| t.0);
                return Err(format!(
                    "{doc}:{l}: the figure {v} (`{}`, tolerance {} %) is not quoted here",
                    f.pattern,
                    f.tolerance * 100.0
                ));
            }
        }
    }
    Ok(())
}
