//! Did-you-mean suggestions: the field names or dotted paths nearest to a mistyped one, by edit
//! distance on each path segment. The work is bounded whatever the input: names are compared
//! over their first [`MAX_LEN`] characters, paths over their first [`MAX_SEGMENTS`] segments,
//! and at most [`MAX_CANDIDATES`] candidates are scored (a tree's paths are gathered with each
//! list's elements folded into `[*]`, so a workload of a million nodes offers the paths of a
//! few, not a million).

use serde_json::Value;
use std::collections::BTreeSet;

/// Characters of a name compared (a longer name is compared by its start).
pub const MAX_LEN: usize = 64;
/// Segments of a path compared.
pub const MAX_SEGMENTS: usize = 16;
/// Candidates scored at most.
pub const MAX_CANDIDATES: usize = 10_000;
/// Elements of one list visited when gathering a tree's paths (elements may differ in shape:
/// a workload's nodes hold different operations).
pub const MAX_ELEMENTS: usize = 64;

/// Characters of a user's text quoted back in a message at most.
pub const MAX_QUOTED: usize = 200;

/// `text` cut to [`MAX_QUOTED`] characters (with `...` when cut), control characters
/// escaped: what a message quotes back of a user's input.
pub fn clip(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().take(MAX_QUOTED) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if text.chars().nth(MAX_QUOTED).is_some() {
        out.push_str("...");
    }
    out
}

/// The edit distance of the first [`MAX_LEN`] characters of `a` and `b`: insertions,
/// deletions, substitutions and swaps of two neighbours (`croes` for `cores`) each count one
/// (the optimal-string-alignment distance).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(MAX_LEN).collect();
    let b: Vec<char> = b.chars().take(MAX_LEN).collect();
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let mut d = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
            if i > 0 && j > 0 && *ca == b[j - 1] && a[i - 1] == *cb {
                d = d.min(before[j - 1] + 1);
            }
            cur[j + 1] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// How far segment `want` is from `have`: 0 when equal, 1 when one starts the other (a name
/// typed short, `lanes` for `lanes_per_port`), else the edit distance.
fn seg_distance(want: &str, have: &str) -> usize {
    if want == have {
        return 0;
    }
    let short = want.len().min(have.len());
    if short >= 3 && (have.starts_with(want) || want.starts_with(have)) {
        return 1;
    }
    distance(want, have)
}

/// Whether `have` is near enough to `want` to suggest: within a third of its length (at
/// least 2 edits), or one starting the other.
fn near(want: &str, have: &str) -> bool {
    let d = seg_distance(want, have);
    d <= 2.max(want.chars().take(MAX_LEN).count() / 3)
}

/// The names of `candidates` nearest to `want` (at most `k`, nearest first, ties in the
/// candidates' order), only those near enough to be a likely mistyping.
pub fn names<'a>(want: &str, candidates: impl IntoIterator<Item = &'a str>, k: usize) -> Vec<&'a str> {
    let mut scored: Vec<(usize, usize, &str)> = candidates
        .into_iter()
        .take(MAX_CANDIDATES)
        .enumerate()
        .filter(|(_, c)| near(want, c))
        .map(|(i, c)| (seg_distance(want, c), i, c))
        .collect();
    scored.sort();
    scored.into_iter().take(k).map(|s| s.2).collect()
}

/// A path's field names, list indices left out (`tiers[0].x` is `tiers`, `x`).
fn segments(path: &str) -> Vec<&str> {
    path.split('.')
        .map(|s| s.split('[').next().unwrap_or(""))
        .filter(|s| !s.is_empty() && s.parse::<usize>().is_err())
        .take(MAX_SEGMENTS)
        .collect()
}

/// How far path `want` is from `have`, segment by segment. A longer `have` may be `want`
/// shortened (the fields it is nested in left out): its first segment against `want`'s
/// first, `want`'s others against `have`'s last ones, one per segment left out.
fn path_distance(want: &[&str], have: &[&str]) -> usize {
    if want.is_empty() || have.is_empty() {
        return usize::MAX / 2;
    }
    if have.len() >= want.len() {
        let skipped = have.len() - want.len();
        let tail = want.len() - 1;
        let first = if want.len() == 1 { 0 } else { seg_distance(want[0], have[0]) };
        let rest: usize =
            want[want.len() - tail..].iter().zip(&have[have.len() - tail..]).map(|(w, h)| seg_distance(w, h)).sum();
        let last = if want.len() == 1 { seg_distance(want[0], have[have.len() - 1]) } else { 0 };
        first + rest + last + skipped
    } else {
        let extra: usize = want[have.len()..].iter().map(|s| s.len().min(MAX_LEN)).sum();
        want.iter().zip(have).map(|(w, h)| seg_distance(w, h)).sum::<usize>() + extra
    }
}

/// The `k` paths of `candidates` nearest to `want` by [`path_distance`] (ties: by the whole
/// path's edit distance, then by name): the nearest always (a path to start from), the others
/// only when near enough to be a likely mistyping (within a third of the longest typed
/// segment's length, at least 2 edits), so a hint never lists unrelated paths.
pub fn paths(want: &str, candidates: &[String], k: usize) -> Vec<String> {
    let w = segments(want);
    let limit = 2.max(w.iter().map(|s| s.chars().take(MAX_LEN).count()).max().unwrap_or(0) / 3);
    let mut scored: Vec<(usize, usize, &String)> = candidates
        .iter()
        .take(MAX_CANDIDATES)
        .map(|c| (path_distance(&w, &segments(c)), distance(want, c), c))
        .collect();
    scored.sort();
    scored.into_iter().enumerate().filter(|(i, s)| *i == 0 || s.0 <= limit).take(k).map(|(_, s)| s.2.clone()).collect()
}

/// `suggestion` with each folded list `name[*]` given the index the user typed for the same
/// field at the same place (`nodes[*].id` for `nodes[0].mm` is `nodes[0].id`).
pub fn with_indices(suggestion: &str, typed: &str) -> String {
    let typed: Vec<&str> = typed.split('.').take(MAX_SEGMENTS).collect();
    let segs: Vec<String> = suggestion
        .split('.')
        .enumerate()
        .map(|(i, seg)| match (seg.strip_suffix("[*]"), typed.get(i)) {
            (Some(name), Some(t)) => match t.strip_prefix(name).and_then(|r| r.strip_prefix('[')) {
                Some(r)
                    if r.strip_suffix(']').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
                {
                    t.to_string()
                }
                _ => seg.to_string(),
            },
            _ => seg.to_string(),
        })
        .collect();
    segs.join(".")
}

/// The paths of `tree` that name a value, each list's elements folded into `[*]` (the first
/// [`MAX_ELEMENTS`] visited), at most [`MAX_CANDIDATES`], sorted.
pub fn tree_paths(tree: &Value) -> Vec<String> {
    let mut out = BTreeSet::new();
    gather(tree, String::new(), &mut out);
    out.into_iter().collect()
}

fn gather(v: &Value, at: String, out: &mut BTreeSet<String>) {
    if out.len() >= MAX_CANDIDATES {
        return;
    }
    let join = |k: &str| if at.is_empty() { k.to_string() } else { format!("{at}.{k}") };
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                gather(c, join(k), out);
            }
        }
        Value::Array(xs) if xs.iter().any(|x| x.is_object()) => {
            for c in xs.iter().take(MAX_ELEMENTS) {
                gather(c, format!("{at}[*]"), out);
            }
        }
        _ => {
            out.insert(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_segment_is_compared_and_a_short_name_finds_its_longer_field() {
        let all: Vec<String> = [
            "fabric.switch.latency",
            "fabric.kind.switched.tiers[*].switch_latency",
            "chip.efa.latency",
            "chip.neuronlink.ports",
            "chip.neuronlink.lanes_per_port",
            "fabric.name",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(paths("fabric.swich.latency", &all, 1), ["fabric.switch.latency"]);
        assert_eq!(paths("chip.neuronlink.lanes", &all, 1), ["chip.neuronlink.lanes_per_port"]);
        assert_eq!(names("croes", ["core", "cores", "dies"], 1), ["cores"]);
        // Only near paths follow the nearest: no unrelated third guess.
        let chip: Vec<String> =
            ["chip.hbm.stacks", "chip.core.dma.clock", "chip.core.name", "chip.hbm.cl"].map(String::from).to_vec();
        assert_eq!(paths("chip.hbm.stack", &chip, 3), ["chip.hbm.stacks"]);
        assert_eq!(paths("chip.hbm.c", &chip, 3), ["chip.hbm.cl"]);
        assert_eq!(paths("chip.hmb.stak", &chip, 3), ["chip.hbm.stacks"]);
        assert_eq!(paths("zzzz.yyyy", &chip, 3).len(), 1, "the nearest is always named");
        assert_eq!(distance("croes", "cores"), 1, "a swap of neighbours is one edit");
        assert!(names("zzzzzz", ["core", "cores"], 3).is_empty(), "nothing near is suggested");
        assert_eq!(with_indices("nodes[*].op.Gemm.m", "nodes[3].mm"), "nodes[3].op.Gemm.m");
        assert_eq!(with_indices("nodes[*].id", "node[3].mm"), "nodes[*].id", "another field keeps [*]");
    }

    #[test]
    fn long_inputs_cost_bounded_work() {
        let long = "x".repeat(1_000_000);
        assert_eq!(distance(&long, &long), 0);
        let t = std::time::Instant::now();
        let many: Vec<String> = (0..100_000).map(|i| format!("nodes[{i}].op.gemm.m")).collect();
        let _ = paths(&format!("{long}.{long}"), &many, 3);
        assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
        let nodes: Vec<Value> = (0..100_000).map(|i| serde_json::json!({ "id": i, "op": { "m": 1 } })).collect();
        assert_eq!(tree_paths(&serde_json::json!({ "nodes": nodes })), ["nodes[*].id", "nodes[*].op.m"]);
    }
}
