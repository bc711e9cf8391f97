//! `trnsim workload llm` (write a workload file) and `trnsim compare` (one workload on several
//! systems, side by side); `trnsim run --workload FILE` is in cli.rs and shares [`run_file`].

use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use trnsim_harness::workload::{self, WorkloadRun};
use trnsim_system::doc::{Resolved, SystemDoc};
use trnsim_workloads::format::{self, Checked};
use trnsim_workloads::llm::preset::ModelPreset;
use trnsim_workloads::llm::{Llm, Mode};

/// `trnsim workload` subcommands.
#[derive(Subcommand, Debug)]
pub enum WorkloadCmd {
    /// Write one training step, forward pass, prefill or decode step of a dense or MoE
    /// transformer as a workload file (docs/whatif.md), e.g. `trnsim workload llm --arch moe
    /// --experts 64 --ep 16 -o moe.ron` or `trnsim workload llm --model gpt-oss-120b --mode
    /// decode --tp 8 --dp 8 --ep 64 --batch 64 -o d.ron`.
    Llm(Box<LlmArgs>),
    /// Write a benchmark as a workload file: e2e-llm-layer, tp-matmul-N or moe-alltoall-144,
    /// with the benchmark's shapes, routing and collectives; run it with `trnsim run
    /// --workload FILE --system SYSTEM --compute cycle` (docs/whatif.md compares the two).
    Bench(BenchArgs),
    /// Sweep an inference model's layouts (TP, EP, DP) and batches on a system and print the
    /// Pareto frontier of tokens/s per chip against tokens/s per user, e.g. `trnsim workload
    /// frontier --model gpt-oss-120b --system trn3-gen2-ultraserver --svg f.svg`.
    Frontier(Box<FrontierArgs>),
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

/// `trnsim workload frontier` flags.
#[derive(Args, Debug)]
pub struct FrontierArgs {
    /// The model: a preset (gpt-oss-120b, ...) or a preset file.
    #[arg(long, value_name = "NAME|FILE")]
    model: String,
    /// The system (a preset or a RON file).
    #[arg(long, value_name = "PRESET|FILE.ron")]
    system: String,
    /// decode (time per output token) or prefill (time to first token).
    #[arg(long, default_value = "decode", value_parser = parse_serving_mode)]
    mode: Mode,
    /// Tokens in each sequence's KV cache (decode) or prompt (prefill), 1..=2^24.
    #[arg(long, default_value_t = 8192)]
    context: u64,
    /// Transformer layers (default: the model's), for a quicker sweep.
    #[arg(long)]
    layers: Option<u32>,
    /// TP degrees (comma-separated); DP fills the chips (chips / TP).
    #[arg(long = "tp", value_delimiter = ',', default_value = "1,2,4,8")]
    tps: Vec<u32>,
    /// EP degrees (comma-separated; a dense model takes 1).
    #[arg(long = "ep", value_delimiter = ',', default_value = "1,4,16,64")]
    eps: Vec<u32>,
    /// Sequences per DP replica (comma-separated, ascending; the batch is this x DP).
    #[arg(long = "per-replica", value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    per_replica: Vec<u64>,
    /// Chips used (default: the system's).
    #[arg(long)]
    chips: Option<u32>,
    /// Activations' element type.
    #[arg(long, default_value = "bf16")]
    dtype: String,
    /// Format of the experts' weights (default: the model's).
    #[arg(long = "expert-weights")]
    expert_weights: Option<String>,
    /// The roofline's fraction of the tensor engines' peak (0.001 <= F <= 1; with `--compute
    /// roofline`), instead of measuring it on the system's cycle-level chip.
    #[arg(long, value_name = "F", value_parser = parse_efficiency)]
    gemm_efficiency: Option<f64>,
    /// How compute nodes are timed: `cycle` (the default: the kernel library's NeuronCore
    /// programs on the system's cycle-level chip, each distinct program simulated once for
    /// the whole sweep) or `roofline` (the quick estimate, at the GEMM efficiency).
    #[arg(long, value_name = "MODEL", default_value = "cycle", value_parser = parse_sweep_compute)]
    compute: workload::Compute,
    /// Simulate up to N distinct kernel programs at the same time, each on its own thread
    /// (default: the host's cores; results do not depend on it).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: Option<u32>,
    /// Keep each simulated kernel program's time in DIR (created if needed) and read the
    /// ones an earlier run of this build simulated on the same chip there (docs/whatif.md).
    #[arg(long, value_name = "DIR")]
    op_cache: Option<PathBuf>,
    /// Also print the point of most tokens/s per chip whose step (time per output token, or
    /// time to first token) is at most this many ms: the throughput at a given interactivity.
    #[arg(long, value_name = "MS")]
    within_ms: Option<f64>,
    /// Write the plot here.
    #[arg(long, value_name = "FILE.svg")]
    svg: Option<PathBuf>,
    /// Write the points as JSON here.
    #[arg(long, value_name = "FILE.json")]
    json: Option<PathBuf>,
}

/// `decode` or `prefill`.
fn parse_serving_mode(s: &str) -> Result<Mode, String> {
    match Mode::parse(s)? {
        m if m.serving() => Ok(m),
        _ => Err(format!("{s:?}: the frontier is of a serving mode (allowed: decode, prefill)")),
    }
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

/// `trnsim workload llm` flags. With `--model`, the model's shape and weight formats come
/// from the preset and the shape flags given override them; without, from the defaults shown.
#[derive(Args, Debug)]
pub struct LlmArgs {
    /// Start from a published model: gpt-oss-120b, gpt-oss-20b, llama-3.3-70b,
    /// llama-3.1-405b, deepseek-v3, or a preset file (models/configs/models/*.ron).
    #[arg(long, value_name = "NAME|FILE")]
    model: Option<String>,
    /// forward (a forward pass, no KV cache), train (forward, backward, gradient
    /// all-reduce, update), prefill (the prompts into the KV cache: time to first token) or
    /// decode (one token a sequence against the KV cache: time per output token).
    #[arg(long, value_name = "MODE", default_value = "forward", value_parser = Mode::parse)]
    mode: Mode,
    /// Same as --mode train.
    #[arg(long, conflicts_with = "mode")]
    train: bool,
    /// dense or moe (default dense).
    #[arg(long)]
    arch: Option<String>,
    /// Transformer layers (default 2).
    #[arg(long)]
    layers: Option<u32>,
    /// Model width (default 4096).
    #[arg(long)]
    hidden: Option<u64>,
    /// MLP (or each expert's) inner width (default 16384).
    #[arg(long)]
    ffn: Option<u64>,
    /// Query heads (default 32).
    #[arg(long)]
    heads: Option<u64>,
    /// Key/value heads, grouped-query attention (default: --heads).
    #[arg(long = "kv-heads")]
    kv_heads: Option<u64>,
    /// Each head's width (default: --hidden / --heads).
    #[arg(long = "head-dim")]
    head_dim: Option<u64>,
    /// Gated MLP, SwiGLU: the up projection is gate and up (true or false; default false).
    #[arg(long, value_name = "BOOL")]
    gated: Option<bool>,
    /// Experts per MoE layer (--arch moe; default 8).
    #[arg(long)]
    experts: Option<u64>,
    /// Experts per token (--arch moe; default 2).
    #[arg(long = "top-k")]
    top_k: Option<u64>,
    /// Shared experts per MoE layer, a dense MLP every token takes (--arch moe; default 0).
    #[arg(long = "shared-experts")]
    shared_experts: Option<u64>,
    /// Vocabulary: the LM head's width (0: no LM head; default 0).
    #[arg(long)]
    vocab: Option<u64>,
    /// Sliding-window attention's window in tokens (0: none; default 0).
    #[arg(long = "sliding-window")]
    sliding_window: Option<u64>,
    /// Every N-th layer from layer 0 uses the sliding window (default 1: all).
    #[arg(long = "sliding-every", value_name = "N")]
    sliding_every: Option<u32>,
    /// Sequence length (--mode forward and train).
    #[arg(long, default_value_t = 2048)]
    seq: u64,
    /// Prefill: each prompt's tokens; decode: the tokens already in each sequence's KV cache
    /// (--mode prefill and decode; default 2048).
    #[arg(long)]
    context: Option<u64>,
    /// Sequences per step over all data-parallel replicas (serving: concurrent users).
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
    /// Micro-batches each replica's batch is split into, run through the pipeline in 1F1B
    /// order (--pp >= 2; divides --batch / --dp).
    #[arg(long = "micro-batches", default_value_t = 1)]
    micro_batches: u32,
    /// Activations' element type: bf16, fp16, fp32, fp8, mxfp8 (MXFP8 needs a core with that
    /// format: Trn3; attention and the KV cache then stay BF16).
    #[arg(long, default_value = "bf16")]
    dtype: String,
    /// Format of the non-expert weights in HBM (default: the preset's, else --dtype).
    #[arg(long)]
    weights: Option<String>,
    /// Format of the experts' weights in HBM, e.g. mxfp4 (default: the preset's, else
    /// --weights).
    #[arg(long = "expert-weights")]
    expert_weights: Option<String>,
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
    /// The roofline's fraction of the tensor engines' peak (0.001 <= F <= 1; with `--compute
    /// roofline` or `both`, and for opaque kernel nodes), instead of measuring it on each
    /// system's cycle-level chip.
    #[arg(long, value_name = "F", value_parser = parse_efficiency)]
    gemm_efficiency: Option<f64>,
    /// How compute nodes are timed: `cycle` (the default: GEMM, attention and elementwise
    /// nodes as the kernel library's NeuronCore programs on each system's cycle-level chip),
    /// `roofline` (the quick estimate, at the GEMM efficiency), or `both` (cycle, with the
    /// roofline's time per node kind beside it).
    #[arg(long, value_name = "MODEL", default_value = "cycle", value_parser = workload::Compute::parse)]
    compute: workload::Compute,
    /// Print each collective's bus bandwidth after the summary (one row per collective).
    #[arg(long)]
    collectives: bool,
    /// Simulate up to N distinct kernel programs at the same time, each on its own thread
    /// (default: the host's cores; results do not depend on it).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: Option<u32>,
    /// Keep each simulated kernel program's time in DIR (created if needed) and read the
    /// ones an earlier run of this build simulated on the same chip there (docs/whatif.md).
    #[arg(long, value_name = "DIR")]
    op_cache: Option<PathBuf>,
}

/// The op runs' threads (`--jobs`, default the host's cores) and on-disk cache (`--op-cache
/// DIR`, opened: a path that is not a directory, or cannot be made one, is exit 2).
pub fn op_runs(jobs: Option<u32>, dir: Option<&Path>) -> Result<trnsim_kernels::run::OpRuns, (String, i32)> {
    let disk = match dir {
        Some(d) => {
            Some(std::sync::Arc::new(trnsim_kernels::disk::DiskCache::open(d, "--op-cache").map_err(|e| (e, 2))?))
        }
        None => None,
    };
    let jobs = jobs.unwrap_or_else(trnsim_kernel::host::cores) as usize;
    Ok(trnsim_kernels::run::OpRuns { jobs, disk })
}

/// The on-disk op cache's line on stderr (what was read and stored), if one was used.
pub fn note_op_cache(ops: &trnsim_kernels::run::OpRuns) {
    if let Some(d) = &ops.disk {
        eprintln!("{}", d.summary());
    }
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
        WorkloadCmd::Frontier(f) => return frontier(*f),
        WorkloadCmd::Bench(b) => {
            let chip = trnsim_system::chip::trn3().map_err(|e| (e, 1))?;
            let w = trnsim_benchmarks::bench_workloads::workload(&b.name, chip.spec.cores).map_err(|e| (e, 2))?;
            let system = trnsim_benchmarks::bench_workloads::system_of(&b.name);
            return write_workload(&w, b.out.as_deref(), &format!("run it on --system {system}"));
        }
    };
    let llm = llm_of(*a)?;
    let cmdline = format!("trnsim workload llm {}", std::env::args().skip(3).collect::<Vec<_>>().join(" "));
    let w = llm.0.generate(cmdline.trim()).map_err(|e| (e, 2))?;
    write_workload(&w, llm.1.as_deref(), "")
}

/// The generator's parameters from the flags (a preset's, overridden by the flags given),
/// and the output file.
fn llm_of(a: LlmArgs) -> Result<(Llm, Option<PathBuf>), (String, i32)> {
    let d = Llm::default();
    let mode = if a.train { Mode::Train } else { a.mode };
    let base = Llm { seq: a.seq, batch: a.batch, tp: a.tp, dp: a.dp, pp: a.pp, mode, ..d.clone() };
    let mut llm = match &a.model {
        Some(m) => ModelPreset::open(m).map_err(|e| (e, 2))?.apply(base),
        None => base,
    };
    if a.context.is_some() && !mode.serving() {
        return Err((
            "--context applies to --mode prefill and decode (--seq sets a forward or training pass)".into(),
            2,
        ));
    }
    llm.context = a.context.unwrap_or(a.seq);
    let given = |v: Option<u64>, cur: u64| v.unwrap_or(cur);
    llm.arch = a.arch.clone().unwrap_or(llm.arch);
    llm.layers = a.layers.unwrap_or(llm.layers);
    llm.hidden = given(a.hidden, llm.hidden);
    llm.ffn = given(a.ffn, llm.ffn);
    llm.heads = given(a.heads, llm.heads);
    if a.model.is_none() {
        // Without a preset, KV heads and head size follow the heads and width.
        llm.kv_heads = llm.heads;
        llm.head_dim = llm.hidden / llm.heads.max(1);
        llm.weights = a.dtype.clone();
        llm.expert_weights = a.dtype.clone();
    }
    llm.kv_heads = given(a.kv_heads, llm.kv_heads);
    llm.head_dim = given(a.head_dim, llm.head_dim);
    llm.gated = a.gated.unwrap_or(llm.gated);
    llm.vocab = given(a.vocab, llm.vocab);
    llm.sliding_window = given(a.sliding_window, llm.sliding_window);
    llm.sliding_every = a.sliding_every.unwrap_or(llm.sliding_every);
    llm.micro_batches = a.micro_batches;
    llm.dtype = a.dtype.clone();
    llm.weights = a.weights.clone().unwrap_or(llm.weights);
    llm.expert_weights = a.expert_weights.clone().or(a.weights.clone()).unwrap_or(llm.expert_weights);
    // The MoE flags mean nothing to a dense model: refused, not ignored.
    let moe_flags = [
        ("--experts", a.experts.is_some()),
        ("--top-k", a.top_k.is_some()),
        ("--ep", a.ep.is_some()),
        ("--imbalance", a.imbalance.is_some()),
        ("--shared-experts", a.shared_experts.is_some()),
        ("--expert-weights", a.expert_weights.is_some()),
    ];
    if let Some((flag, _)) = moe_flags.iter().find(|(_, given)| *given).filter(|_| llm.arch != "moe") {
        return Err((format!("{flag} applies to --arch moe (this is --arch {})", llm.arch), 2));
    }
    llm.experts = given(a.experts, llm.experts);
    llm.top_k = given(a.top_k, llm.top_k);
    llm.shared_experts = given(a.shared_experts, llm.shared_experts);
    llm.ep = a.ep.unwrap_or(d.ep);
    llm.imbalance = a.imbalance.unwrap_or(d.imbalance);
    // The layout's rules first; then, without a preset or --head-dim, the head size the
    // width and heads give must be whole.
    llm.check().map_err(|e| (e, 2))?;
    if a.model.is_none() && a.head_dim.is_none() && !llm.hidden.is_multiple_of(llm.heads) {
        return Err((format!("--hidden {} must divide by --heads {} (or give --head-dim)", llm.hidden, llm.heads), 2));
    }
    Ok((llm, a.out))
}

/// `trnsim workload frontier`.
fn frontier(a: FrontierArgs) -> Result<(), (String, i32)> {
    use trnsim_harness::frontier;
    let preset = ModelPreset::open(&a.model).map_err(|e| (e, 2))?;
    let doc = SystemDoc::open(&a.system).map_err(|e| (e, 2))?;
    let sys = doc.resolve().map_err(|e| (e, 2))?;
    let chip = sys.chip().ok_or(("--system: the frontier runs on a system with chips".to_string(), 2))?;
    let have = sys.fabric().map_or(1, |t| t.chips) as u32;
    let chips = a.chips.unwrap_or(have);
    if chips == 0 || chips > have {
        return Err((format!("--chips {chips} is out of range (allowed: 1..={have}, the chips of {})", doc.name()), 2));
    }
    let mut base = preset.apply(Llm { mode: a.mode, context: a.context, dtype: a.dtype.clone(), ..Llm::default() });
    base.layers = a.layers.unwrap_or(base.layers);
    base.expert_weights = a.expert_weights.clone().unwrap_or(base.expert_weights);
    // The grid's first point checks the flags (ranges, formats) before anything runs.
    let probe = Llm { tp: 1, ep: 1, dp: 1, batch: 1, ..base.clone() };
    probe.check().map_err(|e| (e, 2))?;
    let w = probe.generate("probe").map_err(|e| (e, 2))?;
    let c = format::parse("probe.ron", &format::to_ron(&w).map_err(|e| (e, 1))?).map_err(|e| (e.to_string(), 2))?;
    trnsim_workloads::costs::check_formats(&c, chip)
        .map_err(|e| (e.replacen("probe.ron", "--dtype/--expert-weights", 1), 2))?;
    let cycle = a.compute == workload::Compute::Cycle;
    let ops = op_runs(a.jobs, a.op_cache.as_deref())?;
    let eff = match a.gemm_efficiency {
        Some(e) => e,
        // Only opaque kernel nodes would use it, and the generator writes none.
        None if cycle => 1.0,
        None => workload::gemm_efficiency(chip).map_err(|e| (e, 1))?,
    };
    let grid = frontier::Grid { tps: a.tps.clone(), eps: a.eps.clone(), per_replica: a.per_replica.clone(), chips };
    let (points, refused) = frontier::sweep(&base, &sys, &grid, eff, cycle.then_some(&ops)).map_err(|e| (e, 1))?;
    note_op_cache(&ops);
    let time = if a.mode == Mode::Decode { "tpot(ms)" } else { "ttft(ms)" };
    let timed = if cycle {
        "compute as kernel programs on the cycle-level chip".to_string()
    } else {
        format!("GEMMs at {:.1} % of peak", 100.0 * eff)
    };
    println!(
        "{} {} on {} ({chips} chips), context {}, {timed}: {} points, {} on the frontier",
        preset.name,
        a.mode.name(),
        doc.name(),
        a.context,
        points.len(),
        points.iter().filter(|p| p.frontier).count()
    );
    print!("{}", frontier::table(&points, time));
    for r in &refused {
        println!("refused: {r}");
    }
    if let Some(ms) = a.within_ms {
        let best = points
            .iter()
            .filter(|p| p.step_ms <= ms)
            .max_by(|x, y| x.tokens_per_s_per_chip.total_cmp(&y.tokens_per_s_per_chip));
        match best {
            Some(p) => println!(
                "best within {ms} ms: tp {} ep {} dp {} batch {}: {} {:.3} ms, {:.1} tokens/s per chip, {:.1} per user",
                p.tp,
                p.ep,
                p.dp,
                p.batch,
                &time[..4],
                p.step_ms,
                p.tokens_per_s_per_chip,
                p.tokens_per_s_per_user
            ),
            None => println!("best within {ms} ms: no point is that fast"),
        }
    }
    let title = format!("{} {} on {}: tokens/s per chip against per user", preset.name, a.mode.name(), doc.name());
    if let Some(p) = &a.svg {
        write_new(p, &frontier::svg(&title, &points))?;
        eprintln!("plot: {}", p.display());
    }
    if let Some(p) = &a.json {
        let doc = serde_json::json!({ "trnsim": env!("CARGO_PKG_VERSION"), "title": title, "points": points, "refused": refused });
        write_new(p, &trnsim_benchmarks::outputs::json_text(&doc).map_err(|e| (e, 1))?)?;
    }
    Ok(())
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
    trnsim_benchmarks::outputs::write_atomic(p, text.as_bytes()).map_err(|e| (format!("{}: {e}", p.display()), 1))
}

impl WorkloadCmd {
    /// The input files it names.
    pub fn inputs(&self) -> Vec<(&'static str, PathBuf)> {
        match self {
            WorkloadCmd::Chakra(c) => c.files.iter().map(|p| ("RANK.json", p.clone())).collect(),
            WorkloadCmd::Llm(a) => {
                a.model.iter().filter(|m| Path::new(m).is_file()).map(|m| ("--model", m.into())).collect()
            }
            WorkloadCmd::Frontier(f) => [("--model", &f.model), ("--system", &f.system)]
                .into_iter()
                .filter(|(_, p)| Path::new(p).is_file())
                .map(|(k, p)| (k, PathBuf::from(p)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The output files it names (checked against each other and the inputs).
    pub fn io_paths(&self) -> Vec<(&'static str, PathBuf)> {
        let out = match self {
            WorkloadCmd::Llm(a) => &a.out,
            WorkloadCmd::Bench(b) => &b.out,
            WorkloadCmd::Chakra(c) => &c.out,
            WorkloadCmd::Frontier(f) => {
                let outs = [("--svg", &f.svg), ("--json", &f.json)];
                return outs.iter().filter_map(|(k, p)| (*p).clone().map(|p| (*k, p))).collect();
            }
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
    run_resolved(w, doc, &sys, opts)
}

/// [`run_file`] on `doc` already resolved (validated) as `sys`: the points of a sweep that set
/// nothing in the system share one.
pub fn run_resolved(
    w: &Checked,
    doc: &SystemDoc,
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
                doc.name(),
                sys.fabric().map_or(1, |t| t.chips)
            ),
            2,
        ));
    }
    if sys.chip().is_some() {
        workload::check_fits(w, sys).map_err(|e| (e, 2))?;
        workload::check_compute(w, sys, opts.compute).map_err(|e| (e, 2))?;
    }
    let mut r = workload::run(w, sys, opts).map_err(|e| {
        let code = if e.contains("hbm_bytes_per_rank") || e.contains("needs a system") { 2 } else { 1 };
        (e, code)
    })?;
    r.energy = trnsim_harness::energy_report::account(w, &r.report, doc, sys).map_err(|e| (e, 2))?;
    Ok(r)
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
        let sys = doc.resolve().map_err(|e| (e, 2))?;
        // Every system is checked before any runs: a workload that does not fit one is
        // refused with nothing run.
        if sys.chip().is_some() {
            workload::check_fits(&w, &sys).map_err(|e| (e, 2))?;
            workload::check_compute(&w, &sys, a.compute).map_err(|e| (e, 2))?;
        }
        runs.push((doc.name(), doc));
    }
    let ops = op_runs(a.jobs, a.op_cache.as_deref())?;
    let mut done = Vec::new();
    for (k, (name, doc)) in runs.iter().enumerate() {
        eprintln!("[{}/{}] {} on {name}", k + 1, runs.len(), trnsim_system::doc::suggest::clip(&w.w.name));
        let opts = workload::Options { efficiency: a.gemm_efficiency, compute: a.compute, ops: ops.clone() };
        done.push((name.clone(), run_file(&w, doc, &opts)?));
    }
    note_op_cache(&ops);
    print!("{}", side_by_side(&w.w.name, &done, a.collectives));
    if let Some(dir) = &a.plots {
        std::fs::create_dir_all(dir).map_err(|e| (format!("--plots {}: {e}", dir.display()), 2))?;
        let reports: Vec<(String, &trnsim_workloads::exec::Report)> =
            done.iter().map(|(n, r)| (n.clone(), &r.report)).collect();
        let p = dir.join(format!("compare-{}.svg", trnsim_benchmarks::outputs::file_safe(&w.w.name)));
        write_new(&p, &workload::breakdown_svg(&w.w.name, &reports))?;
        eprintln!("plot: {}", p.display());
    }
    if let Some(p) = &a.json {
        let rows: Vec<serde_json::Value> = done
            .iter()
            .map(|(n, r)| serde_json::json!({ "system": n, "figures": workload::headline(r), "report": r.report, "energy": r.energy }))
            .collect();
        let doc = serde_json::json!({ "trnsim": env!("CARGO_PKG_VERSION"), "workload": w.w.name, "systems": rows });
        let body = trnsim_benchmarks::outputs::json_text(&doc).map_err(|e| (e, 1))?;
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
    let fmt = trnsim_benchmarks::suite::fmt_figure;
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

/// A frontier's `--compute`: `roofline` or `cycle` (`both` would run the sweep twice).
fn parse_sweep_compute(s: &str) -> Result<workload::Compute, String> {
    match workload::Compute::parse(s)? {
        workload::Compute::Both => Err("a frontier takes roofline or cycle (run the two separately to compare)".into()),
        c => Ok(c),
    }
}
