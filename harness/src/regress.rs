//! `trnsim regress`: a regression of lock-step diffs, blocks x stimuli x seeds, run in
//! parallel. Each named block is one registry entry (one built configuration of a block:
//! `link_fifo` and `link_fifo_w100_d5` are two configurations of the link FIFO); each run is
//! `trnsim diff BLOCK --stimulus S --seed SEED --cycles N`. Seeds are drawn from a base seed,
//! random unless `--base-seed` is given, and printed, so any regression repeats exactly.
//!
//! Reports: a summary table (runs, passes, failures, coverage merged over the block's passing
//! runs, the first failing seed), the first failure's report and the command that reproduces
//! it, JUnit XML (`--junit`: one test suite per block, one test case per run) and the merged
//! coverage as JSON (`--coverage-json`). Everything but the base-seed line and the wall time is
//! a function of the arguments and the base seed: the same whatever `--jobs`.
//!
//! Leaves out: runs that stop early on a coverage goal (every run is `--cycles` long), the
//! scoreboard mode, fuzz and trace stimulus (a file is one run, not a seed sweep).

use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use trnsim_rtl::coverage::CoverageReport;
use trnsim_rtl::diff::DiffError;
use trnsim_rtl::registry::{self, BlockEntry, DiffRequest, StimulusKind};

/// Most runs one regression may ask for (blocks x stimuli x seeds).
pub const MAX_RUNS: u64 = 1 << 20;

/// Arguments of `trnsim regress`.
#[derive(Args, Debug)]
pub struct RegressArgs {
    /// The blocks (registry entries, see `trnsim diff --list`), comma- or space-separated.
    #[arg(required = true, value_delimiter = ',')]
    blocks: Vec<String>,
    /// Stimulus kinds, comma-separated: `random`, `reactive` (blocks without a reactive
    /// driver refuse it).
    #[arg(long, default_value = "random", value_delimiter = ',', value_parser = ["random", "reactive"])]
    stimulus: Vec<String>,
    /// Seeds per block and stimulus (1..=65536).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    seeds: u64,
    /// The base seed the run seeds are drawn from (default: a random one, printed).
    #[arg(long)]
    base_seed: Option<u64>,
    /// Cycles per run (1..=10^12).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
    cycles: u64,
    /// Runs at once (default: the host's cores; 1..=1024).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
    /// Write JUnit XML here (one test suite per block, one test case per run).
    #[arg(long, value_name = "FILE.xml")]
    junit: Option<PathBuf>,
    /// Write every block's coverage, merged over its passing runs, as JSON here.
    #[arg(long, value_name = "FILE.json")]
    coverage_json: Option<PathBuf>,
    /// Failing runs write their VCDs to DIR/BLOCK-STIMULUS-SEED/ (model, RTL and merged).
    #[arg(long, value_name = "DIR")]
    vcd: Option<PathBuf>,
}

impl RegressArgs {
    /// The output files it names (checked against each other before anything runs).
    pub fn io_paths(&self) -> trnsim_benchmarks::outputs::IoPaths {
        let mut outs: Vec<(&'static str, PathBuf)> = Vec::new();
        outs.extend(self.junit.clone().map(|p| ("--junit", p)));
        outs.extend(self.coverage_json.clone().map(|p| ("--coverage-json", p)));
        (Vec::new(), outs)
    }
}

/// One run: a block, a stimulus, a seed.
#[derive(Clone, Debug)]
struct Run {
    block: usize,
    stimulus: usize,
    seed: u64,
}

/// How a run ended.
#[derive(Clone, Debug)]
enum Outcome {
    Pass {
        cycles: u64,
        coverage: Option<(CoverageReport, CoverageReport)>,
    },
    /// A divergence, transaction failure, protocol violation or assertion: the one-line
    /// summary, the cycle and the full report.
    Fail {
        what: String,
        cycle: u64,
        report: String,
    },
    /// The run could not go on (an RTL `$fatal`, a VCD that cannot be written).
    Error {
        message: String,
    },
}

/// The `i`th run seed of a regression (splitmix64 of the base seed plus `i`): well spread,
/// so neighbouring seeds are unrelated streams.
pub fn run_seed(base: u64, i: u64) -> u64 {
    let mut z = base.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A base seed from the clock and the process id, for a regression that names none.
fn fresh_base_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    run_seed(nanos ^ u64::from(std::process::id()) << 32, 0) >> 1 // fits i64 too, for other tools
}

/// Runs `trnsim regress` (`prog` names the binary in the reproduction command); `extra` are a
/// block crate's own entries. Err((message, exit code)): 2 for usage errors, 1 when a run
/// failed.
pub fn run_with(a: RegressArgs, extra: &[BlockEntry], prog: &str) -> Result<(), (String, i32)> {
    let usage = |m: String| (m, 2);
    if !registry::HAS_RTL {
        return Err(usage(format!("{prog} regress: {}", registry::NO_RTL)));
    }
    let mut blocks: Vec<&BlockEntry> = Vec::new();
    for name in a.blocks.iter().flat_map(|b| b.split_whitespace()) {
        let e = registry::find(name).or_else(|| extra.iter().find(|b| b.name == name)).ok_or_else(|| {
            let mine: Vec<&str> = extra.iter().map(|b| b.name).collect();
            usage(format!("unknown block {name:?} (known: {}{})", registry::names(), prefixed(&mine)))
        })?;
        if blocks.iter().any(|b| b.name == e.name) {
            return Err(usage(format!("block {name:?} is named twice")));
        }
        blocks.push(e);
    }
    if let Some(k) = (1..a.stimulus.len()).find(|&k| a.stimulus[..k].contains(&a.stimulus[k])) {
        return Err(usage(format!("stimulus {:?} is named twice", a.stimulus[k])));
    }
    let stimuli: Vec<StimulusKind> = a
        .stimulus
        .iter()
        .map(|s| if s == "reactive" { StimulusKind::Reactive } else { StimulusKind::Random })
        .collect();
    // A block that cannot take a stimulus is the user's mistake: say so before running.
    for b in &blocks {
        for s in &stimuli {
            b.stimulus(s, 1).map(drop).map_err(|e| usage(format!("{}: {e}", b.name)))?;
        }
    }
    let total = (blocks.len() as u64).saturating_mul(stimuli.len() as u64).saturating_mul(a.seeds);
    if total > MAX_RUNS {
        return Err(usage(format!("{total} runs asked for (at most {MAX_RUNS}): fewer blocks, stimuli or --seeds")));
    }
    if let Some(dir) = &a.vcd {
        trnsim_benchmarks::outputs::check_dir("--vcd", dir).map_err(usage)?;
    }
    let base = a.base_seed.unwrap_or_else(fresh_base_seed);
    let seeds: Vec<u64> = (0..a.seeds).map(|i| run_seed(base, i)).collect();
    let mut runs: Vec<Run> = Vec::with_capacity(total as usize);
    for block in 0..blocks.len() {
        for stimulus in 0..stimuli.len() {
            runs.extend(seeds.iter().map(|&seed| Run { block, stimulus, seed }));
        }
    }
    let jobs = a.jobs.map_or_else(|| trnsim_kernel::host::cores().max(1) as usize, |j| j as usize).min(runs.len());
    println!(
        "regress: {} blocks x {} stimuli x {} seeds = {} runs of {} cycles, {jobs} at once; base seed {base} (--base-seed {base} repeats them)",
        blocks.len(),
        stimuli.len(),
        a.seeds,
        runs.len(),
        a.cycles
    );
    let t = Instant::now();
    let outcomes = execute(&runs, &blocks, &stimuli, &a, jobs);
    let secs = t.elapsed().as_secs_f64();
    let names: Vec<&str> = a.stimulus.iter().map(String::as_str).collect();
    let report = Report { blocks: &blocks, stimuli: &names, runs: &runs, outcomes: &outcomes, cycles: a.cycles, base };
    print!("{}", report.table());
    let failed = outcomes.iter().filter(|o| !matches!(o, Outcome::Pass { .. })).count();
    if let Some(p) = &a.junit {
        trnsim_benchmarks::outputs::write_atomic(p, report.junit(prog).as_bytes())
            .map_err(|e| (format!("--junit {}: {e}", p.display()), 1))?;
    }
    if let Some(p) = &a.coverage_json {
        let body = trnsim_benchmarks::outputs::json_text(&report.coverage_json()).map_err(|e| (e, 1))?;
        trnsim_benchmarks::outputs::write_atomic(p, body.as_bytes())
            .map_err(|e| (format!("--coverage-json {}: {e}", p.display()), 1))?;
    }
    println!("{} runs in {secs:.1} s wall: {} passed, {failed} failed", runs.len(), runs.len() - failed);
    match report.first_failure() {
        None => Ok(()),
        Some(k) => {
            let (run, o) = (&runs[k], &outcomes[k]);
            let text = match o {
                Outcome::Fail { report, .. } => report.clone(),
                Outcome::Error { message } => message.clone(),
                Outcome::Pass { .. } => String::new(),
            };
            println!("first failure: {} {} seed {}\n{text}", blocks[run.block].name, names[run.stimulus], run.seed);
            println!("reproduce: {}", report.repro(prog, run));
            Err((format!("{failed} of {} runs failed", runs.len()), 1))
        }
    }
}

fn prefixed(names: &[&str]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(", {}", names.join(", "))
    }
}

/// Runs every run on `jobs` threads (each run builds its own model and RTL on its thread:
/// Verilated models stay on one thread); outcomes in run order.
fn execute(
    runs: &[Run],
    blocks: &[&BlockEntry],
    stimuli: &[StimulusKind],
    a: &RegressArgs,
    jobs: usize,
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; runs.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(run) = runs.get(k) else { break };
                let o = one(run, blocks[run.block], &stimuli[run.stimulus], a);
                out.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(o);
            });
        }
    });
    let done = out.into_inner().unwrap_or_else(|e| e.into_inner());
    done.into_iter().map(|o| o.unwrap_or(Outcome::Error { message: "the run's thread stopped".into() })).collect()
}

fn one(run: &Run, entry: &BlockEntry, stimulus: &StimulusKind, a: &RegressArgs) -> Outcome {
    let vcd_dir = a.vcd.as_ref().map(|d| {
        let kind = if matches!(stimulus, StimulusKind::Reactive) { "reactive" } else { "random" };
        d.join(format!("{}-{kind}-{}", entry.name, run.seed))
    });
    if let Some(d) = &vcd_dir {
        if let Err(e) = std::fs::create_dir_all(d) {
            return Outcome::Error { message: format!("cannot create {}: {e}", d.display()) };
        }
    }
    let req =
        DiffRequest { stimulus: stimulus.clone(), vcd_dir: vcd_dir.clone(), ..DiffRequest::new(a.cycles, run.seed) };
    match entry.diff(&req) {
        Ok(r) => {
            // A passing run writes no waveforms: its folder goes (only if empty).
            if let Some(d) = &vcd_dir {
                let _ = std::fs::remove_dir(d);
            }
            Outcome::Pass { cycles: r.cycles, coverage: r.coverage }
        }
        Err(e) => match e.divergence_cycle() {
            Some(cycle) => {
                let what = match &e {
                    DiffError::Diverged(d) => format!("divergence on port {}", d.port),
                    DiffError::Transactions(_) => "transaction failure".into(),
                    DiffError::Protocol(p) => format!("protocol violation by the {}: {}", p.side, p.violation.monitor),
                    DiffError::Assertion(x) => format!("assertion {} ({})", x.label, x.location),
                    _ => "failure".into(),
                };
                Outcome::Fail { what: format!("{what} at cycle {cycle}"), cycle, report: e.to_string() }
            }
            None => Outcome::Error { message: e.to_string() },
        },
    }
}

/// The results, for the table, JUnit and JSON.
struct Report<'a> {
    blocks: &'a [&'a BlockEntry],
    stimuli: &'a [&'a str],
    runs: &'a [Run],
    outcomes: &'a [Outcome],
    cycles: u64,
    base: u64,
}

impl Report<'_> {
    /// Indices of block `b`'s runs.
    fn of(&self, b: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.runs.len()).filter(move |&k| self.runs[k].block == b)
    }

    /// Block `b`'s coverage over its passing runs (model, RTL), if it declares any.
    fn merged(&self, b: usize) -> Option<(CoverageReport, CoverageReport)> {
        let mut acc: Option<(CoverageReport, CoverageReport)> = None;
        for k in self.of(b) {
            if let Outcome::Pass { coverage: Some((m, r)), .. } = &self.outcomes[k] {
                match acc.as_mut() {
                    Some((am, ar)) => {
                        am.merge(m);
                        ar.merge(r);
                    }
                    None => acc = Some((m.clone(), r.clone())),
                }
            }
        }
        acc
    }

    fn first_failure(&self) -> Option<usize> {
        self.outcomes.iter().position(|o| !matches!(o, Outcome::Pass { .. }))
    }

    fn repro(&self, prog: &str, run: &Run) -> String {
        format!(
            "{prog} diff {} --stimulus {} --seed {} --cycles {} --vcd vcd",
            self.blocks[run.block].name, self.stimuli[run.stimulus], run.seed, self.cycles
        )
    }

    /// One line per block: runs, passed, failed, cycles, merged coverage, first failing seed;
    /// then the holes of blocks short of 100 %.
    fn table(&self) -> String {
        let mut s = format!(
            "{:<26} {:>5} {:>6} {:>6} {:>13} {:>9}  first failure\n",
            "block", "runs", "passed", "failed", "cycles", "coverage"
        );
        let mut holes = String::new();
        for (b, e) in self.blocks.iter().enumerate() {
            let ks: Vec<usize> = self.of(b).collect();
            let passed = ks.iter().filter(|&&k| matches!(self.outcomes[k], Outcome::Pass { .. })).count();
            let cycles: u64 = ks
                .iter()
                .map(|&k| match &self.outcomes[k] {
                    Outcome::Pass { cycles, .. } => *cycles,
                    Outcome::Fail { cycle, .. } => cycle + 1,
                    Outcome::Error { .. } => 0,
                })
                .sum();
            let merged = self.merged(b);
            let cov = merged.as_ref().map_or("-".to_string(), |(m, _)| format!("{:.1} %", m.percent()));
            let first = ks.iter().find_map(|&k| match &self.outcomes[k] {
                Outcome::Fail { what, .. } => {
                    Some(format!("{} seed {}: {what}", self.stimuli[self.runs[k].stimulus], self.runs[k].seed))
                }
                Outcome::Error { message } => Some(format!(
                    "{} seed {}: {}",
                    self.stimuli[self.runs[k].stimulus],
                    self.runs[k].seed,
                    message.lines().next().unwrap_or("")
                )),
                Outcome::Pass { .. } => None,
            });
            s += &format!(
                "{:<26} {:>5} {:>6} {:>6} {:>13} {:>9}  {}\n",
                e.name,
                ks.len(),
                passed,
                ks.len() - passed,
                cycles,
                cov,
                first.unwrap_or_else(|| "-".into())
            );
            if let Some((m, _)) = merged.filter(|(m, _)| m.percent() < 100.0) {
                let h = m.holes();
                let shown: Vec<&str> = h.iter().take(8).map(String::as_str).collect();
                let more = if h.len() > 8 { format!(" and {} more", h.len() - 8) } else { String::new() };
                holes += &format!("  {} holes: {}{more}\n", e.name, shown.join(", "));
            }
        }
        s + &holes
    }

    /// JUnit XML: a test suite per block, a test case per run (`STIMULUS seed SEED`), a
    /// `failure` with the report and the reproduction command, or an `error`. No timings, so
    /// the file is the same for the same regression.
    fn junit(&self, prog: &str) -> String {
        let failures = |ks: &[usize]| ks.iter().filter(|&&k| matches!(self.outcomes[k], Outcome::Fail { .. })).count();
        let errors = |ks: &[usize]| ks.iter().filter(|&&k| matches!(self.outcomes[k], Outcome::Error { .. })).count();
        let all: Vec<usize> = (0..self.runs.len()).collect();
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        x += &format!(
            "<testsuites name=\"trnsim regress\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n",
            all.len(),
            failures(&all),
            errors(&all)
        );
        for (b, e) in self.blocks.iter().enumerate() {
            let ks: Vec<usize> = self.of(b).collect();
            x += &format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\">\n",
                esc(e.name),
                ks.len(),
                failures(&ks),
                errors(&ks)
            );
            let cov = self.merged(b).map_or(String::new(), |(m, _)| format!("{:.1}", m.percent()));
            x += &format!(
                "    <properties>\n      <property name=\"base_seed\" value=\"{}\"/>\n      <property name=\"cycles\" value=\"{}\"/>\n      <property name=\"coverage_percent\" value=\"{cov}\"/>\n    </properties>\n",
                self.base, self.cycles
            );
            for &k in &ks {
                let run = &self.runs[k];
                let name = format!("{} seed {}", self.stimuli[run.stimulus], run.seed);
                x += &format!("    <testcase classname=\"regress.{}\" name=\"{}\"", esc(e.name), esc(&name));
                match &self.outcomes[k] {
                    Outcome::Pass { .. } => x += "/>\n",
                    Outcome::Fail { what, report, .. } => {
                        let body = format!("{report}\nreproduce: {}", self.repro(prog, run));
                        x += &format!(
                            ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                            esc(what),
                            esc(what.split(" at cycle").next().unwrap_or("failure")),
                            esc(&body)
                        );
                    }
                    Outcome::Error { message } => {
                        x += &format!(
                            ">\n      <error message=\"{}\">{}</error>\n    </testcase>\n",
                            esc(message.lines().next().unwrap_or("")),
                            esc(message)
                        );
                    }
                }
            }
            x += "  </testsuite>\n";
        }
        x + "</testsuites>\n"
    }

    /// Every block's merged coverage (model and RTL sides), with its runs and seeds.
    fn coverage_json(&self) -> serde_json::Value {
        let blocks: Vec<serde_json::Value> = (0..self.blocks.len())
            .map(|b| {
                let ks: Vec<usize> = self.of(b).collect();
                let passed: Vec<&Run> =
                    ks.iter().filter(|&&k| matches!(self.outcomes[k], Outcome::Pass { .. })).map(|&k| &self.runs[k]).collect();
                let merged = self.merged(b);
                serde_json::json!({
                    "block": self.blocks[b].name,
                    "runs": ks.len(),
                    "merged_runs": passed.len(),
                    "merged_seeds": passed.iter().map(|r| format!("{} {}", self.stimuli[r.stimulus], r.seed)).collect::<Vec<_>>(),
                    "model": merged.as_ref().map(|(m, _)| m),
                    "rtl": merged.as_ref().map(|(_, r)| r),
                    "model_percent": merged.as_ref().map(|(m, _)| m.percent()),
                })
            })
            .collect();
        serde_json::json!({ "base_seed": self.base, "cycles": self.cycles, "blocks": blocks })
    }
}

/// `s` escaped for XML text and attribute values (and stripped of characters XML 1.0 cannot
/// hold).
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o += "&amp;",
            '<' => o += "&lt;",
            '>' => o += "&gt;",
            '"' => o += "&quot;",
            '\'' => o += "&apos;",
            '\n' | '\t' | '\r' => o.push(c),
            c if (c as u32) < 0x20 => {}
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_seeds_are_spread_and_repeatable() {
        let a: Vec<u64> = (0..8).map(|i| run_seed(42, i)).collect();
        let b: Vec<u64> = (0..8).map(|i| run_seed(42, i)).collect();
        assert_eq!(a, b);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 8, "distinct seeds");
        assert_ne!(run_seed(43, 0), a[0]);
    }

    #[test]
    fn xml_escapes_markup_and_drops_control_characters() {
        assert_eq!(esc("a<b & \"c\" 'd'>\u{1}\n"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;\n");
    }
}
