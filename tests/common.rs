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

/// The seeded property tests' budget: `TRNSIM_FUZZ_CASES` cases (default `default`) from seed
/// `TRNSIM_FUZZ_SEED` (default 1), stopping early after `TRNSIM_FUZZ_SECONDS` if set. `make
/// test` runs the short default pass; `make fuzz` raises the count.
pub struct FuzzBudget {
    /// First seed; case `i` uses `seed + i`.
    pub seed: u64,
    /// Cases to run.
    pub cases: u64,
    deadline: Option<std::time::Instant>,
}

impl FuzzBudget {
    /// The budget from the environment.
    pub fn from_env(default: u64) -> FuzzBudget {
        let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
        let deadline =
            var("TRNSIM_FUZZ_SECONDS").map(|s| std::time::Instant::now() + std::time::Duration::from_secs(s));
        FuzzBudget {
            seed: var("TRNSIM_FUZZ_SEED").unwrap_or(1),
            cases: var("TRNSIM_FUZZ_CASES").unwrap_or(default),
            deadline,
        }
    }

    /// The seeds to run, in order, until the count or the time runs out.
    pub fn seeds(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.cases)
            .take_while(|_| self.deadline.is_none_or(|d| std::time::Instant::now() < d))
            .map(|i| self.seed.wrapping_add(i))
    }
}

/// `n` pseudo-random bytes for `arbitrary::Unstructured`, from `seed`.
pub fn fuzz_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut rng = trnsim_kernel::SimRng::new(seed, 0xf022);
    (0..n).map(|_| (rng.next_u64() >> 56) as u8).collect()
}

/// Integers a hostile user tries: boundaries of every width, and a random one.
pub fn hostile_number(u: &mut arbitrary::Unstructured<'_>) -> u64 {
    const VALUES: [u64; 18] = [
        0,
        1,
        2,
        3,
        7,
        64,
        255,
        4096,
        65_536,
        1 << 20,
        1_000_000_000,
        (1 << 31) - 1,
        1 << 31,
        u32::MAX as u64,
        1 << 32,
        1 << 53,
        u64::MAX / 2,
        u64::MAX,
    ];
    match u.int_in_range(0..=3u8).unwrap_or(0) {
        0 => u.arbitrary::<u64>().unwrap_or(0),
        1 => u.int_in_range(0..=100u64).unwrap_or(0),
        _ => VALUES[u.choose_index(VALUES.len()).unwrap_or(0)],
    }
}

/// A quantity string a hostile user tries: a hostile number with a unit trnsim reads (or not).
pub fn hostile_quantity(u: &mut arbitrary::Unstructured<'_>) -> String {
    const UNITS: [&str; 12] = ["ps", "ns", "us", "ms", "s", "Hz", "kHz", "MHz", "GHz", "B/cycle", "msg/cycle", ""];
    let n = hostile_number(u);
    let unit = UNITS[u.choose_index(UNITS.len()).unwrap_or(0)];
    match u.int_in_range(0..=3u8).unwrap_or(0) {
        0 => format!("{n}.5{unit}"),
        1 => format!(" {n} {unit} "),
        _ => format!("{n}{unit}"),
    }
}

/// `text` with one to four hostile mutations: a number or quoted string replaced by a hostile
/// one, a line deleted, duplicated or swapped, a byte-order mark or comment put first, or the
/// text cut short. Deterministic in `u`.
pub fn mutate(text: &str, u: &mut arbitrary::Unstructured<'_>) -> String {
    let mut t = text.to_string();
    let rounds = 1 + u.int_in_range(0..=3u8).unwrap_or(0);
    for _ in 0..rounds {
        let kind = u.int_in_range(0..=9u8).unwrap_or(0);
        t = match kind {
            0..=3 => replace_token(&t, u, |c| c.is_ascii_digit(), |u| hostile_number(u).to_string()),
            4..=5 => replace_quoted(&t, u),
            6 => edit_lines(&t, u),
            7 => {
                let pre = ["\u{feff}", "/* a\n (b) */\n", "// c\n", "\n\n"];
                format!("{}{t}", pre[u.choose_index(pre.len()).unwrap_or(0)])
            }
            8 => {
                let cut = u.int_in_range(0..=t.len()).unwrap_or(t.len());
                let cut = (0..=cut).rev().find(|&i| t.is_char_boundary(i)).unwrap_or(0);
                t[..cut].to_string()
            }
            _ => replace_token(&t, u, |c| c.is_ascii_digit(), |u| format!("-{}", hostile_number(u))),
        };
    }
    t
}

/// Replaces a random maximal run of characters matching `is` by `with(u)`.
fn replace_token(
    t: &str,
    u: &mut arbitrary::Unstructured<'_>,
    is: impl Fn(char) -> bool,
    with: impl Fn(&mut arbitrary::Unstructured<'_>) -> String,
) -> String {
    let mut runs = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices() {
        match (is(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, t.len()));
    }
    if runs.is_empty() {
        return t.to_string();
    }
    let (s, e) = runs[u.choose_index(runs.len()).unwrap_or(0)];
    format!("{}{}{}", &t[..s], with(u), &t[e..])
}

/// Replaces the contents of a random double-quoted string by a hostile quantity or name.
fn replace_quoted(t: &str, u: &mut arbitrary::Unstructured<'_>) -> String {
    let quotes: Vec<usize> = t.match_indices('"').map(|(i, _)| i).collect();
    if quotes.len() < 2 {
        return t.to_string();
    }
    let k = u.choose_index(quotes.len() / 2).unwrap_or(0) * 2;
    let (s, e) = (quotes[k] + 1, quotes[k + 1]);
    let with = match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 => hostile_quantity(u),
        1 => String::new(),
        _ => t[s..e].repeat(2),
    };
    format!("{}{}{}", &t[..s], with, &t[e..])
}

/// Deletes, duplicates or swaps random lines.
fn edit_lines(t: &str, u: &mut arbitrary::Unstructured<'_>) -> String {
    let mut lines: Vec<&str> = t.lines().collect();
    if lines.is_empty() {
        return t.to_string();
    }
    let i = u.choose_index(lines.len()).unwrap_or(0);
    let j = u.choose_index(lines.len()).unwrap_or(0);
    match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 => {
            lines.remove(i);
        }
        1 => lines.insert(i, lines[j]),
        _ => lines.swap(i, j),
    }
    lines.join("\n")
}

/// True if `e` is a one-line located error: `FILE:LINE:COL: ...`.
pub fn is_located(e: &str) -> bool {
    let mut parts = e.splitn(4, ':');
    let _file = parts.next();
    let line = parts.next().is_some_and(|s| s.trim().parse::<u64>().is_ok());
    let col = parts.next().is_some_and(|s| s.trim().parse::<u64>().is_ok());
    line && col && parts.next().is_some() && !e.trim_end().contains('\n')
}

/// trn3-chip with each `PATH=VALUE` of `sets` applied (`--set`), resolved.
pub fn system<S: AsRef<str>>(sets: &[S]) -> trnsim_system::doc::Resolved {
    let mut doc = trnsim_system::doc::SystemDoc::open("trn3-chip").unwrap();
    for s in sets {
        doc.set(s.as_ref()).unwrap();
    }
    doc.resolve().unwrap()
}

/// A one-rank workload of the single node `op` (RON, e.g. `Gemm(m: 8, ...)`).
pub fn one_node(op: &str) -> trnsim_workloads::format::Checked {
    let text = format!("Workload(name: \"op\", ranks: 1, nodes: [Node(id: 0, name: \"n\", op: {op})])");
    trnsim_workloads::format::parse("op.ron", &text).unwrap()
}

/// Workload `w`'s step time on `sys` in ns, every op on the cycle-level chip.
pub fn cycle_ns(w: &trnsim_workloads::format::Checked, sys: &trnsim_system::doc::Resolved) -> f64 {
    use trnsim_harness::workload::{self, Compute, Options};
    let opts = Options { efficiency: Some(0.5), compute: Compute::Cycle, ..Default::default() };
    workload::run(w, sys, &opts).unwrap().report.step_ns
}
