//! `trnsim diff`: a block's Rust model against its RTL in lock-step (the block registry of
//! trnsim-rtl), and `--swap`, a switch bench run all-model against the same run with switch
//! instances on the RTL arbiter. Needs a build with feature `rtl`; without it every run (but
//! `--list`) is a one-line usage error saying how to build one.
//!
//! A crate with blocks of its own (outside trnsim: docs/rtl.md, "A block in your own crate")
//! builds a small binary whose `main` is [`crate::main_with`] with its extra
//! [`BlockEntry`]s: that binary is `trnsim` with those blocks added (`mybin diff NAME ...` is
//! `trnsim diff NAME ...`; `mybin run ... --rtl INSTANCE=NAME` swaps one into a chip).

use clap::Args;
use std::path::PathBuf;
use std::time::Instant;
use trnsim_fabric::switch::traffic::{study_config, Bench, BenchParams};
use trnsim_rtl::diff::{DiffError, DiffReport, Waves};
use trnsim_rtl::registry::{self, BlockEntry, DiffRequest, StimulusKind};
use trnsim_rtl::scoreboard::Order;
use trnsim_rtl::swap::{Impl, RtlArbiters};
use trnsim_rtl::trace::PortTrace;

/// Arguments of `trnsim diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The block (see `--list`).
    block: Option<String>,
    /// List the blocks and exit.
    #[arg(long)]
    list: bool,
    /// Cycles to run (a fuzz or trace stimulus may end sooner; with --swap: switch port cycles).
    #[arg(long, default_value_t = 1_000_000)]
    cycles: u64,
    /// Seed of the random stimulus (with --swap: of the traffic).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// On a divergence, write <block>.model.vcd and <block>.rtl.vcd of the cycles before it here.
    #[arg(long, value_name = "DIR")]
    vcd: Option<PathBuf>,
    /// With --vcd: also write each waveform as FST (<block>.model.fst, .rtl.fst, .diff.fst).
    #[arg(long, requires = "vcd")]
    fst: bool,
    /// With --vcd: which cycles the waveforms cover: `fail` (the cycles before a failure,
    /// replayed; nothing for a clean run), `all` (the whole run, clean or not) or `FROM..TO`
    /// (cycles FROM to TO inclusive, clean or not).
    #[arg(long, requires = "vcd", default_value = "fail", value_parser = parse_waves, value_name = "fail|all|FROM..TO")]
    waves: Waves,
    /// Inputs: `random` (seeded), `reactive` (seeded drivers that see the block's outputs:
    /// credits, handshakes), `fuzz:FILE` (arbitrary bytes, e.g. a fuzzer corpus entry) or
    /// `trace:FILE` (a recorded port trace, docs/rtl.md).
    #[arg(long, default_value = "random", value_name = "random|reactive|fuzz:FILE|trace:FILE")]
    stimulus: String,
    /// Cycles (and matched transactions) shown before a divergence.
    #[arg(long, default_value_t = 8, value_name = "N")]
    last: usize,
    /// Compare output transactions (valid/ready handshakes and their data) instead of every
    /// port every cycle: for cycle-approximate blocks.
    #[arg(long)]
    scoreboard: bool,
    /// Scoreboard: cycles by which matched transactions may differ.
    #[arg(long, value_name = "CYCLES", requires = "scoreboard")]
    tolerance: Option<u64>,
    /// Scoreboard: pair transactions in order, in order per ID, or in any order within the
    /// tolerance window (`out-of-order`: a dropped one is missing once the window closes);
    /// default: the block's.
    #[arg(long, value_parser = ["in-order", "by-id", "out-of-order"], requires = "scoreboard")]
    order: Option<String>,
    /// Swap-in check: run the single-switch bench (switch instance `sw`) all-model and with
    /// these comma-separated instances on the RTL arbiter (`sw=BLOCK`: that registered arbiter
    /// block, if it has the switch's ports); exit 1 if the statistics differ.
    #[arg(long, value_name = "INSTANCES", conflicts_with_all = ["block", "scoreboard", "stimulus", "vcd"])]
    swap: Option<String>,
    /// With --swap: switch ports.
    #[arg(long, default_value_t = 8, requires = "swap")]
    ports: u16,
    /// With --swap: offered load per input (cells per port cycle).
    #[arg(long, default_value_t = 0.8, requires = "swap")]
    load: f64,
    /// With --swap: record the RTL arbiter's inputs into this port trace (replay it with
    /// `trnsim diff BLOCK --stimulus trace:FILE`).
    #[arg(long, value_name = "FILE", requires = "swap")]
    record: Option<PathBuf>,
    /// Stop once both sides have hit this percentage of the block's coverage bins (0-100),
    /// or at --cycles.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent, conflicts_with = "swap")]
    until_coverage: Option<f64>,
    /// Write the coverage report (every cover point and bin, both sides) as JSON.
    #[arg(long, value_name = "FILE.json", conflicts_with = "swap")]
    coverage_json: Option<PathBuf>,
}

impl DiffArgs {
    /// The input and output files it names (checked against each other before anything runs).
    #[allow(clippy::type_complexity)]
    pub fn io_paths(&self) -> (Vec<(&'static str, PathBuf)>, Vec<(&'static str, PathBuf)>) {
        let ins = match self.stimulus.split_once(':') {
            Some(("fuzz" | "trace", f)) => vec![("--stimulus", PathBuf::from(f))],
            _ => Vec::new(),
        };
        let mut outs: Vec<(&'static str, PathBuf)> = Vec::new();
        outs.extend(self.coverage_json.clone().map(|p| ("--coverage-json", p)));
        outs.extend(self.record.clone().map(|p| ("--record", p)));
        (ins, outs)
    }
}

/// `fail`, `all` or `FROM..TO` (FROM <= TO, both cycles).
fn parse_waves(s: &str) -> Result<Waves, String> {
    match s {
        "fail" => Ok(Waves::Fail),
        "all" => Ok(Waves::All),
        _ => {
            let (a, b) = s.split_once("..").ok_or("fail, all or FROM..TO (e.g. 1000..1999)")?;
            let num = |x: &str| x.trim().parse::<u64>().map_err(|e| format!("{x:?}: {e} (a cycle number)"));
            let (from, to) = (num(a)?, num(b)?);
            if from > to {
                return Err(format!("{from}..{to}: FROM after TO"));
            }
            Ok(Waves::Window(from, to))
        }
    }
}

/// A percentage in 0..=100.
fn parse_percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is out of range (allowed: 0..=100)")),
    }
}

/// Runs `trnsim diff`; Err((message, exit code)): 2 for user errors, 1 for a divergence.
pub fn run(a: DiffArgs) -> Result<(), (String, i32)> {
    run_with(a, &[])
}

/// `trnsim diff` with `extra` blocks besides trnsim's own (an extra block's name must not be
/// one of trnsim's).
pub fn run_with(a: DiffArgs, extra: &[BlockEntry]) -> Result<(), (String, i32)> {
    if let Some(b) = extra.iter().find(|b| registry::find(b.name).is_some()) {
        return Err((format!("block {:?} is already one of trnsim's: rename it", b.name), 2));
    }
    let names = || {
        let own = registry::names();
        let mine: Vec<&str> = extra.iter().map(|b| b.name).collect();
        if mine.is_empty() {
            own
        } else {
            format!("{own}, {}", mine.join(", "))
        }
    };
    if a.list {
        for b in registry::all().into_iter().chain(extra) {
            println!("{:<26} {}", b.name, b.description);
        }
        if !registry::HAS_RTL {
            println!("({})", registry::NO_RTL);
        }
        return Ok(());
    }
    if !registry::HAS_RTL {
        return Err((format!("trnsim diff: {}", registry::NO_RTL), 2));
    }
    if let Some(instances) = &a.swap {
        return swap(&a, instances);
    }
    let Some(name) = a.block.as_deref() else {
        return Err((format!("trnsim diff: name a block ({}) or pass --list", names()), 2));
    };
    let entry = registry::find(name)
        .or_else(|| extra.iter().find(|b| b.name == name))
        .ok_or_else(|| (format!("unknown block {name:?} (known: {})", names()), 2))?;
    let req = request(&a, entry)?;
    let t = Instant::now();
    let r = entry.diff(&req);
    let secs = t.elapsed().as_secs_f64();
    let wrote = match &r {
        Ok(rep) => rep.waves.is_some(),
        Err(e) => e.divergence_cycle().is_some(),
    };
    let fst = match (&a.vcd, a.fst && wrote) {
        (Some(dir), true) => write_fst(dir, entry.name)?,
        _ => None,
    };
    let out = report(entry, &req, &a.stimulus, r, secs, a.coverage_json.as_deref());
    if let Some(line) = fst {
        println!("{line}");
    }
    out
}

fn request(a: &DiffArgs, entry: &BlockEntry) -> Result<DiffRequest, (String, i32)> {
    let usage = |m: String| (m, 2);
    let read = |f: &str| {
        trnsim_kernel::input::read_bytes(std::path::Path::new(f)).map_err(|e| usage(format!("cannot read {f}: {e}")))
    };
    let stimulus = match a.stimulus.split_once(':') {
        None if a.stimulus == "random" => StimulusKind::Random,
        None if a.stimulus == "reactive" => StimulusKind::Reactive,
        Some(("fuzz", f)) => StimulusKind::Fuzz(read(f)?),
        Some(("trace", f)) => StimulusKind::Trace(PortTrace::read(f.as_ref()).map_err(|e| usage(e.to_string()))?),
        _ => {
            return Err(usage(format!(
                "invalid --stimulus {:?} (allowed: random, reactive, fuzz:FILE, trace:FILE)",
                a.stimulus
            )))
        }
    };
    // A trace for other ports is the user's mistake: say so before running anything.
    if let Err(e) = entry.stimulus(&stimulus, a.seed) {
        return Err(usage(e));
    }
    let scoreboard = match (a.scoreboard, entry.scoreboard) {
        (false, _) => None,
        (true, None) => return Err(usage(format!("block {} has no transaction view for --scoreboard", entry.name))),
        (true, Some(f)) => {
            let mut sb = f();
            if let Some(t) = a.tolerance {
                sb.tolerance = t;
                sb.timeout = sb.timeout.max(4 * t);
            }
            match a.order.as_deref() {
                Some("in-order") => sb.order = Order::InOrder,
                Some("by-id") => sb.order = Order::ById,
                Some("out-of-order") => sb.order = Order::OutOfOrder,
                _ => {}
            }
            Some(sb)
        }
    };
    if let Some(dir) = &a.vcd {
        std::fs::create_dir_all(dir).map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    Ok(DiffRequest {
        cycles: a.cycles,
        seed: a.seed,
        stimulus,
        scoreboard,
        vcd_dir: a.vcd.clone(),
        history: a.last,
        until_coverage: a.until_coverage,
        waves: a.waves,
    })
}

/// FST copies of the VCDs a diff of `block` wrote in `dir` (those it wrote: a divergence
/// writes three, an assertion two): the line naming them.
fn write_fst(dir: &std::path::Path, block: &str) -> Result<Option<String>, (String, i32)> {
    let mut written = Vec::new();
    for side in ["model", "rtl", "diff"] {
        let vcd = dir.join(format!("{block}.{side}.vcd"));
        if vcd.is_file() {
            let fst = vcd.with_extension("fst");
            trnsim_rtl::fst::vcd_to_fst(&vcd, &fst).map_err(|e| (format!("--fst: {e}"), 1))?;
            written.push(fst.display().to_string());
        }
    }
    Ok((!written.is_empty()).then(|| format!("  fst: {}", written.join(" "))))
}

fn report(
    entry: &BlockEntry,
    req: &DiffRequest,
    stimulus: &str,
    r: Result<DiffReport, DiffError>,
    secs: f64,
    coverage_json: Option<&std::path::Path>,
) -> Result<(), (String, i32)> {
    let name = entry.name;
    let what = match &req.stimulus {
        StimulusKind::Random => format!("random, seed {}", req.seed),
        StimulusKind::Reactive => format!("reactive, seed {}", req.seed),
        _ => stimulus.to_string(),
    };
    match r {
        Ok(r) => {
            let rate = r.cycles as f64 / secs.max(1e-9) / 1e6;
            print!("{name}: {} cycles ({what}), no divergence, {rate:.2} Mcycles/s", r.cycles);
            match r.transactions {
                Some(t) => println!(
                    "; {} transactions matched ({} within tolerance but not on the same cycle, max skew {} cycles, {} in flight at the end)",
                    t.matched, t.jittered, t.max_skew, t.in_flight
                ),
                None => println!(),
            }
            if let Some((m, rtl, merged)) = &r.waves {
                println!("  vcds: model {} rtl {} merged {}", m.display(), rtl.display(), merged.display());
            }
            print!("{}", r.rtl_checks());
            if let Some((model, rtl)) = &r.coverage {
                // The two sides sample their own ports; they agree unless a don't-care port
                // differs, so the RTL's table is printed only then.
                println!("coverage (model), {} cycles:\n{}", r.cycles, model.table(12));
                if rtl != model {
                    println!("coverage (RTL):\n{}", rtl.table(12));
                }
                if let Some(p) = coverage_json {
                    let doc = serde_json::json!({
                        "block": name, "cycles": r.cycles, "stimulus": what,
                        "model": model, "rtl": rtl, "model_percent": model.percent(), "rtl_percent": rtl.percent(),
                    });
                    let body = trnsim_benchmarks::outputs::json_text(&doc).map_err(|e| (e, 1))?;
                    trnsim_benchmarks::outputs::write_atomic(p, body.as_bytes())
                        .map_err(|e| (format!("--coverage-json {}: {e}", p.display()), 1))?;
                }
            }
            Ok(())
        }
        Err(e @ (DiffError::Diverged(_) | DiffError::Transactions(_))) => {
            let cycle = e.divergence_cycle().unwrap_or(0);
            println!("{name}: DIVERGED ({what})\n{e}");
            Err((format!("{name}: model and RTL diverge at cycle {cycle}"), 1))
        }
        Err(DiffError::Assertion(a)) => {
            println!("{name}: ASSERTION FAILED ({what})\n{a}");
            Err((format!("{name}: assertion {} failed at cycle {}", a.label, a.cycle), 1))
        }
        Err(DiffError::Protocol(p)) => {
            println!("{name}: PROTOCOL VIOLATION ({what})\n{p}");
            Err((format!("{name}: the {} breaks {} at cycle {}", p.side, p.violation.monitor, p.cycle), 1))
        }
        Err(e @ DiffError::Ports(_)) => Err((format!("{name}: {e}"), 2)),
        Err(e) => Err((format!("{name}: {e}"), 1)),
    }
}

fn swap(a: &DiffArgs, instances: &str) -> Result<(), (String, i32)> {
    let list: Vec<&str> = instances.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if list.is_empty() {
        return Err(("--swap: name at least one switch instance (the bench's is `sw`)".into(), 2));
    }
    let cfg = study_config(a.ports);
    let p = BenchParams { load: a.load, seed: a.seed, ..BenchParams::default() };
    let run = |arbiters: Option<&mut RtlArbiters>| -> Result<(String, f64), (String, i32)> {
        let t = Instant::now();
        let mut bench = match arbiters {
            Some(arb) => Bench::with_arbiters(&cfg, &p, arb),
            None => Bench::new(&cfg, &p),
        }
        .map_err(|e| (e.to_string(), 2))?;
        bench.run_cycles(a.cycles).map_err(|e| (e.to_string(), 1))?;
        let json = serde_json::to_string_pretty(&bench.sim.report()).map_err(|e| (e.to_string(), 1))?;
        Ok((json, t.elapsed().as_secs_f64()))
    };
    let (model, t_model) = run(None)?;
    let mut arbiters = RtlArbiters::new(&list, Impl::Rtl);
    if let Some(f) = &a.record {
        arbiters = arbiters.record_to(f.clone());
    }
    let (rtl, t_rtl) = run(Some(&mut arbiters))?;
    arbiters.check().map_err(|e| (e, 1))?;
    let st = arbiters.status();
    for s in &st {
        let rec = s.recorded.as_ref().map_or(String::new(), |f| format!(", inputs recorded to {}", f.display()));
        println!("{}: RTL {} clocked {} times{rec}", s.instance, s.block, s.cycles);
    }
    let lines = model.lines().count();
    println!(
        "switch bench, {} ports, load {}, seed {}, {} cycles: all-model {:.2} s, RTL arbiter {:.2} s",
        a.ports, a.load, a.seed, a.cycles, t_model, t_rtl
    );
    if model == rtl {
        println!("statistics identical ({lines} lines of JSON)");
        return Ok(());
    }
    let first = model.lines().zip(rtl.lines()).position(|(x, y)| x != y).unwrap_or(0);
    let (m, r) = (model.lines().nth(first).unwrap_or(""), rtl.lines().nth(first).unwrap_or(""));
    println!("statistics differ at JSON line {}:\n  model: {}\n  rtl:   {}", first + 1, m.trim(), r.trim());
    Err(("the RTL arbiter changed the switch's statistics".into(), 1))
}

/// The `main` of a block crate's binary: the whole `trnsim` command line with `extra` blocks
/// added ([`crate::main_with`]; kept under this name for crates written against it).
pub fn main_with(extra: &'static [BlockEntry]) -> i32 {
    crate::main_with(extra)
}
