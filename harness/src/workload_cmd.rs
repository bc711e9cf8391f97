//! `trnsim workload llm` (write a workload file) and `trnsim compare` (one workload on several
//! systems, side by side); `trnsim run --workload FILE` is in cli.rs and shares [`run_file`].

use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use trnsim_harness::workload::{self, WorkloadRun};
use trnsim_system::doc::{Resolved, SystemDoc};
use trnsim_workloads::format::{self, Checked};
use trnsim_workloads::llm::Llm;

/// `trnsim workload` subcommands.
#[derive(Subcommand, Debug)]
pub enum WorkloadCmd {
    /// Write one training or inference step of a dense or MoE transformer as a workload file
    /// (docs/whatif.md), e.g. `trnsim workload llm --arch moe --experts 64 --ep 16 -o moe.ron`.
    Llm(LlmArgs),
    /// Write a benchmark as a workload file: e2e-llm-layer, tp-matmul-N or moe-alltoall-144,
    /// with the benchmark's shapes, routing and collectives; run it with `trnsim run
    /// --workload FILE --system SYSTEM --compute cycle` (docs/whatif.md compares the two).
    Bench(BenchArgs),
    /// Read MLCommons Chakra execution traces dumped to JSON (chakra_jsonizer's output, or
    /// the JSON feeder's `workload_graph` form), one file per rank in rank order, and write
    /// them as one workload file (docs/whatif.md).
    Chakra(ChakraArgs),
}

/// `trnsim workload chakra` flags.
#[derive(Args, Debug)]
pub struct ChakraArgs {
    /// The ranks' JSON files, rank 0 first.
    #[arg(required = true, value_name = "RANK.json")]
    files: Vec<PathBuf>,
    /// One file run by this many ranks (a symmetric trace), 1..=1048576.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    replicate: Option<u32>,
    /// The workload's name (default: the first file's name without its extension).
    #[arg(long)]
    name: Option<String>,
    /// Write here (RON; .json for JSON) instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `trnsim workload bench` flags.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The benchmark: e2e-llm-layer, tp-matmul-N (N chips) or moe-alltoall-144.
    name: String,
    /// Write here (RON; .json for JSON) instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `trnsim workload llm` flags.
#[derive(Args, Debug)]
pub struct LlmArgs {
    /// dense or moe.
    #[arg(long, default_value = "dense")]
    arch: String,
    /// Transformer layers.
    #[arg(long, default_value_t = 2)]
    layers: u32,
    /// Model width.
    #[arg(long, default_value_t = 4096)]
    hidden: u64,
    /// MLP (or each expert's) inner width.
    #[arg(long, default_value_t = 16384)]
    ffn: u64,
    /// Attention heads.
    #[arg(long, default_value_t = 32)]
    heads: u64,
    /// Experts per MoE layer (--arch moe; default 8).
    #[arg(long)]
    experts: Option<u64>,
    /// Experts per token (--arch moe; default 2).
    #[arg(long = "top-k")]
    top_k: Option<u64>,
    /// Sequence length.
    #[arg(long, default_value_t = 2048)]
    seq: u64,
    /// Sequences per step over all data-parallel replicas.
    #[arg(long, default_value_t = 8)]
    batch: u64,
    /// Tensor-parallel degree.
    #[arg(long, default_value_t = 4)]
    tp: u32,
    /// Expert-parallel degree (--arch moe; default 1).
    #[arg(long)]
    ep: Option<u32>,
    /// Data-parallel degree.
    #[arg(long, default_value_t = 1)]
    dp: u32,
    /// Pipeline stages.
    #[arg(long, default_value_t = 1)]
    pp: u32,
    /// Element type: bf16, fp16, fp32, fp8, mxfp8 (MXFP8 needs a core with that format: Trn3).
    #[arg(long, default_value = "bf16")]
    dtype: String,
    /// A training step (forward, backward, gradient all-reduce, update) instead of inference.
    #[arg(long)]
    train: bool,
    /// Expert load of the busiest rank over the mean (1..=1000, --arch moe; default 1): a
    /// what-if for skewed routing.
    #[arg(long)]
    imbalance: Option<f64>,
    /// Write here (RON; .json for JSON) instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `trnsim compare` flags.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The workload file.
    #[arg(long, value_name = "FILE.ron")]
    workload: PathBuf,
    /// A system to run it on (repeatable; presets or RON files).
    #[arg(long = "system", value_name = "PRESET|FILE.ron", required = true)]
    systems: Vec<String>,
    /// Override a field of every system (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Write the side-by-side figures as JSON.
    #[arg(long, value_name = "FILE.json")]
    json: Option<PathBuf>,
    /// Write the breakdown of every system as one SVG here.
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
    /// The fraction of the tensor engines' peak GEMMs reach (0.001 <= F <= 1), instead of
    /// measuring it on each system's cycle-level chip.
    #[arg(long, value_name = "F", value_parser = parse_efficiency)]
    gemm_efficiency: Option<f64>,
    /// How compute nodes are timed: `roofline` (at the GEMM efficiency), or `cycle` (GEMMs
    /// as NeuronCore programs on each system's cycle-level chip).
    #[arg(long, value_name = "MODEL", default_value = "roofline", value_parser = workload::Compute::parse)]
    compute: workload::Compute,
    /// Print each collective's bus bandwidth after the summary (one row per collective).
    #[arg(long)]
    collectives: bool,
}

/// A GEMM efficiency: a number in [0.001, 1] (a thousandth of peak already makes a step
/// a thousand times longer than the hardware's; below it, times run past any useful scale).
pub fn parse_efficiency(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.001..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is out of range (allowed: 0.001 <= F <= 1)")),
    }
}

/// Runs `trnsim workload`.
pub fn run(cmd: WorkloadCmd) -> Result<(), (String, i32)> {
    let a = match cmd {
        WorkloadCmd::Llm(a) => a,
        WorkloadCmd::Chakra(c) => return chakra(c),
        WorkloadCmd::Bench(b) => {
            let chip = trnsim_system::chip::trn3().map_err(|e| (e, 1))?;
            let w = trnsim_harness::bench_workloads::workload(&b.name, chip.spec.cores).map_err(|e| (e, 2))?;
            let system = trnsim_harness::bench_workloads::system_of(&b.name);
            return write_workload(&w, b.out.as_deref(), &format!("run it on --system {system}"));
        }
    };
    // The MoE flags mean nothing to a dense model: refused, not ignored.
    let moe_flags = [
        ("--experts", a.experts.is_some()),
        ("--top-k", a.top_k.is_some()),
        ("--ep", a.ep.is_some()),
        ("--imbalance", a.imbalance.is_some()),
    ];
    if let Some((flag, _)) = moe_flags.iter().find(|(_, given)| *given).filter(|_| a.arch != "moe") {
        return Err((format!("{flag} applies to --arch moe (this is --arch {})", a.arch), 2));
    }
    let d = Llm::default();
    let llm = Llm {
        arch: a.arch,
        layers: a.layers,
        hidden: a.hidden,
        ffn: a.ffn,
        heads: a.heads,
        experts: a.experts.unwrap_or(d.experts),
        top_k: a.top_k.unwrap_or(d.top_k),
        seq: a.seq,
        batch: a.batch,
        tp: a.tp,
        ep: a.ep.unwrap_or(d.ep),
        dp: a.dp,
        pp: a.pp,
        dtype: a.dtype,
        train: a.train,
        imbalance: a.imbalance.unwrap_or(d.imbalance),
    };
    let cmdline = format!("trnsim workload llm {}", std::env::args().skip(3).collect::<Vec<_>>().join(" "));
    let w = llm.generate(cmdline.trim()).map_err(|e| (e, 2))?;
    write_workload(&w, a.out.as_deref(), "")
}

/// `trnsim workload chakra`.
fn chakra(c: ChakraArgs) -> Result<(), (String, i32)> {
    if c.replicate.is_some() && c.files.len() != 1 {
        return Err(("--replicate N takes one file (the trace every rank runs)".into(), 2));
    }
    let mut files = Vec::new();
    for p in &c.files {
        files.push(trnsim_system::located::read_ron_file(p).map_err(|e| (e.to_string(), 2))?);
    }
    let name = c
        .name
        .clone()
        .unwrap_or_else(|| c.files[0].file_stem().map_or("chakra".into(), |s| s.to_string_lossy().into_owned()));
    let imported = trnsim_workloads::chakra::read_replicated(&name, &files, c.replicate.unwrap_or(1))
        .map_err(|e| (e.to_string(), 2))?;
    for n in &imported.notes {
        eprintln!("note: {n}");
    }
    write_workload(&imported.workload.w, c.out.as_deref(), "")
}

/// Writes `w` to `out` (RON, or JSON for a .json name) or standard output.
fn write_workload(w: &format::Workload, out: Option<&Path>, hint: &str) -> Result<(), (String, i32)> {
    let json = out.is_some_and(|p| p.extension().is_some_and(|e| e == "json"));
    let text = if json {
        serde_json::to_string_pretty(w).map_err(|e| (e.to_string(), 1))? + "\n"
    } else {
        format::to_ron(w).map_err(|e| (e, 1))? + "\n"
    };
    match out {
        Some(p) => {
            write_new(p, &text)?;
            let hint = if hint.is_empty() { String::new() } else { format!("; {hint}") };
            let name = trnsim_system::doc::suggest::clip(&w.name);
            eprintln!("{}: {} ranks, {} nodes ({name}){hint}", p.display(), w.ranks, w.nodes.len());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// Writes `text` to `p` through a temporary file renamed into place.
fn write_new(p: &Path, text: &str) -> Result<(), (String, i32)> {
    trnsim_harness::outputs::write_atomic(p, text.as_bytes()).map_err(|e| (format!("{}: {e}", p.display()), 1))
}

impl WorkloadCmd {
    /// The input files it names.
    pub fn inputs(&self) -> Vec<(&'static str, PathBuf)> {
        match self {
            WorkloadCmd::Chakra(c) => c.files.iter().map(|p| ("RANK.json", p.clone())).collect(),
            _ => Vec::new(),
        }
    }

    /// The output files it names (checked against each other and the inputs).
    pub fn io_paths(&self) -> Vec<(&'static str, PathBuf)> {
        let out = match self {
            WorkloadCmd::Llm(a) => &a.out,
            WorkloadCmd::Bench(b) => &b.out,
            WorkloadCmd::Chakra(c) => &c.out,
        };
        out.clone().map(|p| ("-o", p)).into_iter().collect()
    }
}

impl CompareArgs {
    /// The input and output files it names.
    #[allow(clippy::type_complexity)]
    pub fn io_paths(&self) -> (Vec<(&'static str, PathBuf)>, Vec<(&'static str, PathBuf)>) {
        let mut ins = vec![("--workload", self.workload.clone())];
        ins.extend(self.systems.iter().filter(|s| Path::new(s).is_file()).map(|s| ("--system", PathBuf::from(s))));
        (ins, self.json.clone().map(|p| ("--json", p)).into_iter().collect())
    }

    /// The systems, as given.
    pub fn systems(&self) -> &[String] {
        &self.systems
    }

    /// The `--plots` directory, if given.
    pub fn plots(&self) -> Option<&Path> {
        self.plots.as_deref()
    }
}

/// Reads a workload file; errors are located.
pub fn load(path: &Path) -> Result<Checked, (String, i32)> {
    format::load(path).map_err(|e| (e.to_string(), 2))
}

/// Runs workload `w` on `doc` (overrides applied); usage errors are exit 2.
pub fn run_file(w: &Checked, doc: &SystemDoc, opts: &workload::Options) -> Result<WorkloadRun, (String, i32)> {
    let sys = doc.resolve().map_err(|e| (e, 2))?;
    run_resolved(w, &doc.name(), &sys, opts)
}

/// [`run_file`] on a system already resolved (validated), named `name`: the points of a sweep
/// that set nothing in the system share one.
pub fn run_resolved(
    w: &Checked,
    name: &str,
    sys: &Resolved,
    opts: &workload::Options,
) -> Result<WorkloadRun, (String, i32)> {
    if w.w.ranks as usize > sys.fabric().map_or(1, |t| t.chips) {
        return Err((
            format!(
                "{}: ranks: workload {:?} has {} ranks but {} has {} chips",
                w.at("ranks"),
                w.w.name,
                w.w.ranks,
                name,
                sys.fabric().map_or(1, |t| t.chips)
            ),
            2,
        ));
    }
    workload::run(w, sys, opts).map_err(|e| {
        let code = if e.contains("hbm_bytes_per_rank") || e.contains("needs a system") { 2 } else { 1 };
        (e, code)
    })
}

/// Runs `trnsim compare`.
pub fn compare(a: CompareArgs) -> Result<(), (String, i32)> {
    let w = load(&a.workload)?;
    let mut runs = Vec::new();
    for s in &a.systems {
        let mut doc = SystemDoc::open(s).map_err(|e| (e, 2))?;
        for set in &a.sets {
            doc.set(set).map_err(|e| (e, 2))?;
        }
        doc.resolve().map_err(|e| (e, 2))?;
        runs.push((doc.name(), doc));
    }
    let mut done = Vec::new();
    for (k, (name, doc)) in runs.iter().enumerate() {
        eprintln!("[{}/{}] {} on {name}", k + 1, runs.len(), trnsim_system::doc::suggest::clip(&w.w.name));
        let opts = workload::Options { efficiency: a.gemm_efficiency, compute: a.compute };
        done.push((name.clone(), run_file(&w, doc, &opts)?));
    }
    print!("{}", side_by_side(&w.w.name, &done, a.collectives));
    if let Some(dir) = &a.plots {
        std::fs::create_dir_all(dir).map_err(|e| (format!("--plots {}: {e}", dir.display()), 2))?;
        let reports: Vec<(String, &trnsim_workloads::exec::Report)> =
            done.iter().map(|(n, r)| (n.clone(), &r.report)).collect();
        let p = dir.join(format!("compare-{}.svg", trnsim_harness::outputs::file_safe(&w.w.name)));
        write_new(&p, &workload::breakdown_svg(&w.w.name, &reports))?;
        eprintln!("plot: {}", p.display());
    }
    if let Some(p) = &a.json {
        let rows: Vec<serde_json::Value> = done
            .iter()
            .map(|(n, r)| serde_json::json!({ "system": n, "figures": workload::headline(r), "report": r.report }))
            .collect();
        let doc = serde_json::json!({ "trnsim": env!("CARGO_PKG_VERSION"), "workload": w.w.name, "systems": rows });
        let body = trnsim_harness::outputs::json_text(&doc).map_err(|e| (e, 1))?;
        write_new(p, &body)?;
    }
    Ok(())
}

/// The runs side by side: a summary first (the headline figures, the number of collectives
/// and their summed time), then with `per_collective` each collective's bus bandwidth (one
/// row per collective: hundreds on a deep model).
pub fn side_by_side(workload: &str, runs: &[(String, WorkloadRun)], per_collective: bool) -> String {
    let mut rows: Vec<Vec<String>> =
        vec![std::iter::once(format!("workload {}", trnsim_system::doc::suggest::clip(workload)))
            .chain(runs.iter().map(|r| r.0.clone()))
            .collect()];
    let heads: Vec<Vec<(String, f64)>> = runs.iter().map(|r| workload::headline(&r.1)).collect();
    let by_name: Vec<std::collections::BTreeMap<&str, f64>> =
        heads.iter().map(|h| h.iter().map(|(k, v)| (k.as_str(), *v)).collect()).collect();
    // Each collective's row, in the order the runs report them.
    let mut collectives: Vec<String> = Vec::new();
    let mut named = std::collections::BTreeSet::new();
    for c in runs.iter().flat_map(|r| &r.1.report.collectives) {
        let k = format!("{}_busbw_GBps", c.name);
        if named.insert(k.clone()) {
            collectives.push(k);
        }
    }
    let mut keys: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for h in &heads {
        for (k, _) in h {
            if seen.insert(k.clone()) && !named.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let fmt = trnsim_harness::suite::fmt_figure;
    for k in keys {
        let mut row = vec![k.clone()];
        row.extend(by_name.iter().map(|h| h.get(k.as_str()).map_or("n/a".into(), |x| fmt(*x))));
        rows.push(row);
    }
    let count = |r: &WorkloadRun| r.report.collectives.len();
    rows.push(std::iter::once("collectives".to_string()).chain(runs.iter().map(|r| count(&r.1).to_string())).collect());
    let sum = |r: &WorkloadRun| r.report.collectives.iter().map(|c| c.time_us).sum::<f64>() + 0.0;
    rows.push(std::iter::once("collective_time_us".to_string()).chain(runs.iter().map(|r| fmt(sum(&r.1)))).collect());
    if per_collective {
        for k in &collectives {
            let mut row = vec![k.clone()];
            row.extend(by_name.iter().map(|h| h.get(k.as_str()).map_or("n/a".into(), |x| fmt(*x))));
            rows.push(row);
        }
    }
    let widths: Vec<usize> = (0..rows[0].len()).map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0)).collect();
    let mut s = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| if i == 0 { format!("{c:<w$}") } else { format!("{c:>w$}") })
            .collect();
        s += cells.join("  ").trim_end();
        s.push('\n');
    }
    if !per_collective && !collectives.is_empty() {
        s += &format!("({} collectives; each one's bus bandwidth: --collectives)\n", collectives.len());
    }
    s
}
