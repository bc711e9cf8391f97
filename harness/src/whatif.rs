//! What-if runs: the benchmarks that run on a chip, an UltraServer or a fabric, on any system
//! (`--system PRESET|FILE.ron`), with overrides (`--set PATH=VALUE`) and sweeps
//! (`--sweep PATH=V1,V2,...`, several = their cartesian product).
//!
//! Every point's system is validated before the first run, so a bad value stops the command
//! at once with a located error. Each point runs as its own job (in parallel with `--jobs`);
//! its label is the benchmark name followed by the swept values, `tp-matmul-4[chip.hbm.stacks=2]`.

use trnsim_benchmarks::plot::{Plot, Series};
use trnsim_benchmarks::suite::{BenchResult, RunOpts};
use trnsim_fabric::topo::Topology;
use trnsim_system::chip::{Chip, UltraServer};
use trnsim_system::doc::{Resolved, SystemDoc};

/// What a benchmark runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// A chip (a chip file, or an UltraServer's chip).
    Chip,
    /// Chips on a fabric: an UltraServer.
    UltraServer,
    /// A fabric (a fabric file, or an UltraServer's fabric).
    Fabric,
}

impl Needs {
    fn name(self) -> &'static str {
        match self {
            Needs::Chip => "a chip or an UltraServer",
            Needs::UltraServer => "an UltraServer",
            Needs::Fabric => "a fabric or an UltraServer",
        }
    }
}

/// The benchmarks that take `--system`: (name, what it needs, its default system preset). A
/// name ending in `-N` is a family (`tp-matmul-N`: any chip count that splits the shape).
pub const ON_SYSTEM: &[(&str, Needs, &str)] = &[
    ("e2e-llm-layer", Needs::Chip, "trn3-chip"),
    ("tp-matmul-N", Needs::UltraServer, "trn3-gen1-ultraserver"),
    ("moe-alltoall-144", Needs::UltraServer, "trn3-gen2-ultraserver"),
    ("fabric-allreduce-trn2-16", Needs::Fabric, "trn2-server-4x4"),
    ("fabric-allreduce-nl72x2", Needs::Fabric, "trn3-gen2-nl72x2"),
    ("fabric-collectives-nl32x2", Needs::Fabric, "trn3-gen1-nl32x2"),
];

/// The [`ON_SYSTEM`] entry of benchmark `name`.
pub fn entry(name: &str) -> Option<(Needs, &'static str)> {
    ON_SYSTEM.iter().find_map(|(n, needs, preset)| {
        let hit = match n.strip_suffix("-N") {
            Some(family) => name.strip_prefix(family).and_then(|r| r.strip_prefix('-')).is_some(),
            None => name == *n,
        };
        hit.then_some((*needs, *preset))
    })
}

/// The names of the benchmarks that take `--system`, for messages.
pub fn names() -> String {
    ON_SYSTEM.iter().map(|(n, _, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The benchmarks that can run on a system of this kind, as a one-line list.
pub fn fitting(sys: &Resolved) -> String {
    let fits = |needs: Needs| match needs {
        Needs::Chip => sys.chip().is_some(),
        Needs::UltraServer => matches!(sys, Resolved::UltraServer(_)),
        Needs::Fabric => sys.fabric().is_some(),
    };
    let chips = sys.fabric().map_or(0, |t| t.chips);
    let mut out = Vec::new();
    for (n, _, _) in ON_SYSTEM.iter().filter(|(_, needs, _)| fits(*needs)) {
        match (n.strip_suffix("-N"), sys.chip()) {
            (Some(family), Some(chip)) => {
                let counts: Vec<String> = (2..=chips as u32)
                    .filter(|&k| trnsim_benchmarks::tp::SHAPE.chip_shape(k, chip.spec.cores).is_ok())
                    .map(|k| k.to_string())
                    .collect();
                if !counts.is_empty() {
                    out.push(format!("{family}-N (N = {})", counts.join(", ")));
                }
            }
            _ => out.push(n.to_string()),
        }
    }
    out.join(", ")
}

/// One `--sweep PATH=V1,V2,...`, or several paths swept together:
/// `--sweep chip.hbm.stacks+chip.hbm.cores_per_stack=2+4,4+2` (two points, not four).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The paths swept together.
    pub paths: Vec<String>,
    /// Each point's values, one per path.
    pub values: Vec<Vec<String>>,
}

/// The largest number of points a sweep may expand to.
pub const MAX_POINTS: usize = 10_000;

impl std::str::FromStr for Sweep {
    type Err = String;
    fn from_str(s: &str) -> Result<Sweep, String> {
        let usage = || format!("--sweep {s}: expected PATH=V1,V2,... or PATH+PATH=V1+W1,V2+W2,... with no empty value");
        let (path, vals) = s.split_once('=').ok_or_else(usage)?;
        let paths: Vec<String> = path.split('+').map(|p| p.trim().to_string()).collect();
        let values: Vec<Vec<String>> =
            vals.split(',').map(|v| v.split('+').map(|x| x.trim().to_string()).collect()).collect();
        let empty = paths.iter().chain(values.iter().flatten()).any(String::is_empty);
        if empty || values.iter().any(|v| v.len() != paths.len()) {
            return Err(usage());
        }
        Ok(Sweep { paths, values })
    }
}

/// Every point of the sweeps' cartesian product (the first sweep varies slowest), each a list
/// of (path, value); one empty point without sweeps. A path swept twice (by two sweeps, or
/// twice in one) is refused: the later values would overwrite the earlier ones, and the
/// points' labels would name values that had no effect.
pub fn points(sweeps: &[Sweep]) -> Result<Vec<Vec<(String, String)>>, String> {
    let mut seen = std::collections::BTreeSet::new();
    for p in sweeps.iter().flat_map(|s| &s.paths) {
        if !seen.insert(p.as_str()) {
            let p = trnsim_system::doc::suggest::clip(p);
            return Err(format!("--sweep {p}: the path is swept twice (sweep it once, with every value)"));
        }
    }
    let total = sweeps.iter().try_fold(1usize, |n, s| n.checked_mul(s.values.len()).filter(|&n| n <= MAX_POINTS));
    if total.is_none() {
        return Err(format!("the sweeps expand to more than {MAX_POINTS} points"));
    }
    let mut out = vec![Vec::new()];
    for s in sweeps {
        out = out
            .into_iter()
            .flat_map(|p| {
                s.values.iter().map(move |vals| {
                    let mut q = p.clone();
                    q.extend(s.paths.iter().cloned().zip(vals.iter().cloned()));
                    q
                })
            })
            .collect();
    }
    Ok(out)
}

/// One run of a benchmark on one system.
#[derive(Clone, Debug)]
pub struct Job {
    /// The label results carry: the benchmark, then the point's values.
    pub label: String,
    /// The benchmark.
    pub bench: String,
    /// The system's name.
    pub system: String,
    /// The swept values of this point (empty without sweeps).
    pub point: Vec<(String, String)>,
    /// The system with the `--set` overrides, shared by the benchmark's points; the point's
    /// values are applied to it when the job runs ([`Job::resolve`]).
    base: std::sync::Arc<SystemDoc>,
    /// Whether the chip has RTL blocks swapped in (such a run is not split).
    rtl: bool,
}

/// A job's system, validated, and its chip's energy table (None: it names none), for the
/// run's energy figures.
pub struct JobSystem {
    /// The system.
    pub resolved: Resolved,
    /// The chip's energy table.
    pub energy: Option<trnsim_system::energy::EnergyTable>,
}

impl Job {
    /// The job's system: the base with the point's values, validated (as [`jobs`] validated
    /// it before anything ran). Built when the job runs, so a sweep holds the systems of the
    /// points running, not one per point.
    pub fn resolve(&self) -> Result<JobSystem, String> {
        let doc = point_doc(&self.base, &self.point)?;
        Ok(JobSystem { resolved: doc.resolve()?, energy: doc.energy()? })
    }
}

fn point_doc(base: &SystemDoc, point: &[(String, String)]) -> Result<SystemDoc, String> {
    let mut doc = base.clone();
    for (path, v) in point {
        doc.set_from("--sweep", &format!("{path}={v}"))?;
    }
    Ok(doc)
}

/// The jobs of `benches` on `system` (each benchmark's default when None) with `sets` and every
/// point of `sweeps`. Every point's fields and energy table are checked first, then every
/// system is validated, before anything runs, one at a time: a job keeps the shared base and
/// its point, not its system.
pub fn jobs(benches: &[String], system: Option<&str>, sets: &[String], sweeps: &[Sweep]) -> Result<Vec<Job>, String> {
    let pts = points(sweeps)?;
    let mut out = Vec::new();
    for bench in benches {
        let (needs, preset) =
            entry(bench).ok_or_else(|| format!("{bench} does not run on a system (those that do: {})", names()))?;
        let mut base = SystemDoc::open(system.unwrap_or(preset))?;
        for s in sets {
            base.set(s)?;
        }
        let base = std::sync::Arc::new(base);
        // A cheap pass first: each point's fields (set and type-checked) and its energy table,
        // so that a bad value late in a long sweep is refused before the systems ahead of it
        // are validated in full.
        for p in &pts {
            point_doc(&base, p)?.energy()?;
        }
        for p in &pts {
            let doc = point_doc(&base, p)?;
            let resolved = doc.resolve()?;
            check_fits(bench, needs, &doc, &resolved)?;
            let label = if p.is_empty() {
                bench.clone()
            } else {
                let vals: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!("{bench}[{}]", vals.join(","))
            };
            doc.energy()?;
            let rtl = resolved.chip().is_some_and(|c| !c.spec.rtl.is_empty());
            out.push(Job {
                label,
                bench: bench.clone(),
                system: doc.name(),
                point: p.clone(),
                base: base.clone(),
                rtl,
            });
        }
    }
    Ok(out)
}

fn check_fits(bench: &str, needs: Needs, doc: &SystemDoc, sys: &Resolved) -> Result<(), String> {
    let ok = match needs {
        Needs::Chip => sys.chip().is_some(),
        Needs::UltraServer => matches!(sys, Resolved::UltraServer(_)),
        Needs::Fabric => sys.fabric().is_some(),
    };
    if ok {
        return Ok(());
    }
    Err(format!(
        "{bench} runs on {}, but {} is {} {} (it can run: {})",
        needs.name(),
        doc.file(),
        if doc.kind() == trnsim_system::doc::DocKind::UltraServer { "an" } else { "a" },
        doc.kind().name(),
        fitting(sys)
    ))
}

fn ultraserver(sys: &Resolved) -> Result<&UltraServer, String> {
    match sys {
        Resolved::UltraServer(u) => Ok(u),
        _ => Err("this benchmark needs an UltraServer".into()),
    }
}

fn chip(sys: &Resolved) -> Result<&Chip, String> {
    sys.chip().ok_or_else(|| "this benchmark needs a chip".into())
}

fn fabric(sys: &Resolved) -> Result<&Topology, String> {
    sys.fabric().ok_or_else(|| "this benchmark needs a fabric".into())
}

/// Runs one job.
pub fn run(job: &Job, opts: RunOpts, plots: Option<&std::path::Path>) -> Result<BenchResult, String> {
    let _span = tracing::info_span!("point", label = job.label.as_str()).entered();
    let js = job.resolve()?;
    let sys = &js.resolved;
    let mut r = match job.bench.as_str() {
        "e2e-llm-layer" => trnsim_benchmarks::e2e::run_on(&job.bench, chip(sys)?, opts.order, opts.trace)?,
        "moe-alltoall-144" => {
            let u = ultraserver(sys)?;
            trnsim_benchmarks::moe::run_on(&job.bench, &u.chip, &u.topology, opts.order, opts.trace)?
        }
        n if n.starts_with("tp-matmul-") => {
            let u = ultraserver(sys)?;
            trnsim_benchmarks::tp::run_on(n, &u.chip, &u.topology, opts.order, opts.trace, plots)?
        }
        n if n.starts_with("fabric-") => trnsim_benchmarks::fabric::run_on(n, fabric(sys)?)?,
        other => return Err(format!("{other} does not run on a system (those that do: {})", names())),
    };
    r.name = job.label.clone();
    let at = r.headline.len();
    add_energy(&js, &mut r, at);
    Ok(r)
}

/// Inserts the run's energy figures (when the chip names an energy table) into its headline
/// at `at`.
fn add_energy(js: &JobSystem, r: &mut BenchResult, at: usize) {
    use trnsim_system::energy_stats::{price, price_fabric, Counts, COUNTS_OWNER};
    let Some(t) = &js.energy else { return };
    let e = match (js.resolved.chip(), js.resolved.fabric()) {
        (Some(c), fabric) => price(&Counts::of(&r.stats), t, c, fabric).headline(),
        // A fabric alone: its collectives' bytes and time (a benchmark that keeps none has
        // nothing to price).
        (None, Some(f)) if r.stats.owners.contains_key(COUNTS_OWNER) => {
            price_fabric(&Counts::of(&r.stats), t, f).fabric_headline()
        }
        (None, _) => return,
    };
    r.headline.splice(at..at, e);
}

/// A benchmark run on its own system (`trnsim run NAME`, no `--system`): its energy figures,
/// priced by the energy table of the system preset it runs on ([`ON_SYSTEM`]), added to its
/// headline before the figures of a partitioned run (`threads`, `ranks`), as a run with
/// `--system` adds them: a chip's table prices a run of chips, a fabric file's a fabric's
/// collectives. Benchmarks that run on no system (a core, a stack, one link or switch) get none.
pub fn add_builtin_energy(r: &mut BenchResult) -> Result<(), String> {
    let Some((_, preset)) = entry(&r.name) else { return Ok(()) };
    let job = jobs(std::slice::from_ref(&r.name), Some(preset), &[], &[])?.remove(0);
    let at = r.headline.iter().position(|(k, _)| k == "threads" || k == "ranks").unwrap_or(r.headline.len());
    add_energy(&job.resolve()?, r, at);
    Ok(())
}

/// The benchmarks `--threads` splits on a system: whole chips of an UltraServer.
pub const PARTITIONABLE_ON_SYSTEM: &str = "tp-matmul-N, moe-alltoall-144";

/// Why [`run_partitioned`] cannot split `job`, if it cannot: only the benchmarks of whole
/// chips split ([`PARTITIONABLE_ON_SYSTEM`]), and a chip with RTL blocks swapped in runs
/// serially (its blocks are checked after a serial run).
pub fn cannot_split(job: &Job) -> Option<String> {
    if job.bench != "moe-alltoall-144" && !job.bench.starts_with("tp-matmul-") {
        return Some(format!(
            "{} cannot be split with --threads (on a system, those that can: {PARTITIONABLE_ON_SYSTEM}); run it without --threads",
            job.bench
        ));
    }
    job.rtl.then(|| {
        format!(
            "{}: a chip with RTL blocks swapped in (--rtl, or the chip's rtl list) runs serially: run it without --threads",
            job.label
        )
    })
}

/// Runs one job split by chip on `threads` threads (`rule`: how to split, the benchmark's
/// default when None): results equal to [`run`]'s plus a `threads` row; also returns the
/// partitions' timing table. Only the benchmarks of whole chips split
/// ([`PARTITIONABLE_ON_SYSTEM`]); a trace needs the serial run.
pub fn run_partitioned(
    job: &Job,
    order: trnsim_kernel::TickOrder,
    threads: u32,
    rule: Option<&trnsim_kernel::PartitionRule>,
    plots: Option<&std::path::Path>,
) -> Result<(BenchResult, String), String> {
    if let Some(why) = cannot_split(job) {
        return Err(why);
    }
    let _span = tracing::info_span!("point", label = job.label.as_str(), threads).entered();
    let js = job.resolve()?;
    let system = match job.bench.as_str() {
        "moe-alltoall-144" => {
            let u = ultraserver(&js.resolved)?;
            trnsim_benchmarks::parallel::moe_system(
                u.chip.clone(),
                u.topology.clone(),
                trnsim_benchmarks::moe::SHAPE,
                order,
            )?
        }
        n if n.starts_with("tp-matmul-") => {
            let u = ultraserver(&js.resolved)?;
            let chips = trnsim_benchmarks::tp::chips_of(n, u.topology.chips)?;
            trnsim_benchmarks::parallel::tp_system(
                u.chip.clone(),
                u.topology.clone(),
                trnsim_benchmarks::tp::SHAPE,
                chips,
                order,
            )?
        }
        other => return Err(format!("{other} cannot be split with --threads")),
    };
    let rule = rule.cloned().unwrap_or_else(|| system.default_rule(threads));
    let (run, wall_s) = system.run_parallel(threads, &rule, None)?;
    let (mut r, table) =
        trnsim_benchmarks::parallel::result(&job.bench, &system, run, wall_s, Some(("threads", threads)))?;
    // Before the last figure, the thread count, as a serial run's figures end.
    let at = r.headline.len().saturating_sub(1);
    add_energy(&js, &mut r, at);
    if let (Some(dir), true) = (plots, job.bench.starts_with("tp-matmul-")) {
        trnsim_benchmarks::tp::write_plot(dir, &job.bench, &r.headline)?;
    }
    r.name = job.label.clone();
    Ok((r, table))
}

/// The sweep table: one row per job, the swept values, then the figures every row has (the
/// first `max_figures` of them).
pub fn table(jobs: &[Job], results: &[BenchResult], max_figures: usize) -> String {
    let swept: Vec<String> = jobs.first().map(|j| j.point.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();
    let figures: Vec<String> = results
        .first()
        .map(|r| r.headline.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|k| results.iter().all(|r| r.headline.iter().any(|(n, _)| n == k)))
        .take(max_figures)
        .collect();
    let mut rows = vec![];
    let mut head = vec!["benchmark".to_string(), "system".to_string()];
    head.extend(swept.iter().cloned());
    head.extend(figures.iter().cloned());
    rows.push(head);
    for (j, r) in jobs.iter().zip(results) {
        let mut row = vec![j.bench.clone(), j.system.clone()];
        row.extend(j.point.iter().map(|(_, v)| v.clone()));
        for f in &figures {
            let v = r.headline.iter().find(|(n, _)| n == f).map_or(f64::NAN, |x| x.1);
            row.push(trnsim_benchmarks::suite::fmt_figure(v));
        }
        rows.push(row);
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|c| rows.iter().map(|r| r.get(c).map_or(0, String::len)).max().unwrap_or(0)).collect();
    let mut s = String::new();
    for r in rows {
        let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

/// SVG plots of each headline figure against the first swept value (numeric values only),
/// one series per benchmark and combination of the other swept values. Returns (file name,
/// SVG) pairs.
pub fn plots(jobs: &[Job], results: &[BenchResult]) -> Vec<(String, String)> {
    let Some(first) = jobs.first().and_then(|j| j.point.first()) else { return Vec::new() };
    let x_path = first.0.clone();
    let x_of = |j: &Job| j.point.first().and_then(|(_, v)| leading_number(v));
    if jobs.iter().any(|j| x_of(j).is_none()) {
        return Vec::new();
    }
    let figures: Vec<String> =
        results.first().map(|r| r.headline.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();
    let mut out = Vec::new();
    for f in figures {
        let mut series: Vec<Series> = Vec::new();
        for (j, r) in jobs.iter().zip(results) {
            let Some(y) = r.headline.iter().find(|(n, _)| *n == f).map(|x| x.1) else { continue };
            let rest: Vec<String> = j.point.iter().skip(1).map(|(k, v)| format!("{k}={v}")).collect();
            let name = if rest.is_empty() { j.bench.clone() } else { format!("{} {}", j.bench, rest.join(",")) };
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x_of(j).unwrap_or(0.0), y)),
                None => series.push(Series { name, points: vec![(x_of(j).unwrap_or(0.0), y)] }),
            }
        }
        let plot = Plot {
            title: format!("{f} against {x_path}"),
            x_label: x_path.clone(),
            y_label: f.clone(),
            series,
            log_y: false,
        };
        let safe: String = format!("sweep-{f}")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        out.push((format!("{safe}.svg"), plot.to_svg()));
    }
    out
}

/// The number a value starts with ("200ns" -> 200), for plotting quantities.
fn leading_number(v: &str) -> Option<f64> {
    let end =
        v.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == '+')).unwrap_or(v.len());
    v[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{entry, points, Needs, Sweep};

    #[test]
    fn sweeps_expand_to_their_cartesian_product() {
        let a: Sweep = "chip.hbm.stacks=2,4".parse().unwrap();
        let b: Sweep = "fabric.packet_bytes=1024,2048,4096".parse().unwrap();
        let p = points(&[a, b]).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], vec![("chip.hbm.stacks".into(), "2".into()), ("fabric.packet_bytes".into(), "1024".into())]);
        assert_eq!(p[5][1].1, "4096");
        assert!("x".parse::<Sweep>().is_err() && "x=1,,2".parse::<Sweep>().is_err());
        let linked: Sweep = "a+b=1+2,3+4".parse().unwrap();
        let p = points(&[linked]).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1], vec![("a".into(), "3".into()), ("b".into(), "4".into())]);
        assert!("a+b=1,2".parse::<Sweep>().is_err());
        let big: Sweep = format!("a={}", vec!["1"; 200].join(",")).parse().unwrap();
        let big_b: Sweep = format!("b={}", vec!["1"; 200].join(",")).parse().unwrap();
        assert!(points(&[big.clone(), big_b]).unwrap_err().contains("10000 points"));
        assert!(points(&[big.clone(), big]).unwrap_err().contains("--sweep a: the path is swept twice"));
    }

    #[test]
    fn families_and_plain_names_find_their_entry() {
        assert_eq!(entry("tp-matmul-16").map(|e| e.0), Some(Needs::UltraServer));
        assert_eq!(entry("e2e-llm-layer").map(|e| e.1), Some("trn3-chip"));
        assert!(entry("hbm-random").is_none() && entry("tp-matmul").is_none());
    }
}
