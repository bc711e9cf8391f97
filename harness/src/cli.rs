//! The command-line interface (clap). Every user mistake is a one-line error and exit code 2;
//! a failed run (deadlock, trace I/O) is exit code 1.

use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use trnsim_harness::config;
use trnsim_harness::ring::RingParams;
use trnsim_harness::suite::{self, BenchResult, RunOpts, BENCHES};
use trnsim_kernel::{LinkSelection, PartitionRule, TickOrder, TraceOptions, TraceSink};

/// trnsim: a cycle-approximate simulator of a Trainium3-class AI system.
///
/// Start with `trnsim run` (the default microbenchmark suite, a table on stdout). Add
/// `--trace out.pftrace` and open the file at <https://ui.perfetto.dev> (timestamps are simulated
/// time). `trnsim run --config models/configs/demo.ron` runs a system described in RON;
/// `trnsim config check FILE.ron` validates one (or a chip, UltraServer or topology file)
/// without running it.
/// `trnsim --version`: the release and the git revision it was built from.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (git ", env!("TRNSIM_GIT_REV"), ")");

#[derive(Parser, Debug)]
#[command(name = "trnsim", version = VERSION, about, long_about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Write a wall-clock profile of the simulator itself (Chrome JSON, via tracing-chrome).
    #[arg(long, global = true, value_name = "FILE")]
    profile: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run benchmarks by name (default: the whole suite) or a system from a RON config.
    Run(RunArgs),
    /// Parameterized benchmarks: the kernel's speed yardstick (kernel-ring) and a tiled GEMM of
    /// any shape on a NeuronCore (nc-gemm).
    Bench {
        #[command(subcommand)]
        which: BenchCmd,
    },
    /// Work with config files.
    Config {
        #[command(subcommand)]
        which: ConfigCmd,
    },
    /// Run one HBM stack on a request trace (DRAMsim3 or Ramulator 2 format) or a synthetic
    /// pattern; print bandwidth, latency and row-buffer statistics.
    Hbm(crate::hbm_cmd::HbmArgs),
    /// Run a NeuronCore assembly program (docs/isa.md) on one or more cores and print
    /// per-engine statistics.
    Core(crate::core_cmd::CoreArgs),
    /// Describe the models' presets: parameters (from the declarations the models run on),
    /// sources and estimates. `trnsim describe` lists the kinds; `trnsim describe hbm hbm3-6400`
    /// prints one preset in full.
    Describe(crate::describe::DescribeArgs),
    /// Run a block's Rust model against its RTL in lock-step and report the first divergence
    /// (`trnsim diff --list` lists the blocks; needs a build with feature `rtl`).
    Diff(crate::diff_cmd::DiffArgs),
    /// List the benchmarks `trnsim run` knows.
    List,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Benchmarks to run (see `trnsim list`); none = the default suite, which ends with a
    /// summary table of Trn3 figures against their references (also in --json as `summary`).
    benches: Vec<String>,
    /// Run the system described in this RON file (after any named benchmarks).
    #[arg(long, value_name = "FILE.ron")]
    config: Option<PathBuf>,
    /// Write a trace of the runs: .pftrace (Perfetto protobuf) or .json (Chrome JSON). With
    /// several benchmarks, each gets its own file: NAME inserted before the extension.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Write link waveforms (valid/data/credits of every link) as VCD. With several benchmarks,
    /// each gets its own file: NAME inserted before the extension.
    #[arg(long, value_name = "FILE.vcd")]
    vcd: Option<PathBuf>,
    /// Write results (simulated statistics only, deterministic) as JSON.
    #[arg(long, value_name = "FILE.json")]
    json: Option<PathBuf>,
    /// Tick order within a time step: structural, reversed, or shuffled:SEED. Results never
    /// depend on it; this exists to prove that.
    #[arg(long, default_value = "structural", value_parser = parse_order)]
    order: TickOrder,
    /// Print every statistic, not just the headline table.
    #[arg(long)]
    full: bool,
    /// Write plots (SVG) of the benchmarks that make them (e.g. hbm-latency-sweep) here.
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
    /// Run partitioned on N threads (results identical to the serial run). Only for the
    /// systems that can be split: fabric-allreduce-nl72x2-nodes, kernel-ring.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Option<u32>,
    /// How to split the system with --threads: auto (cut the longest links, balance component
    /// counts), by-name (group by the first dotted name segment, e.g. per chip) or by-name:DEPTH.
    #[arg(long, value_name = "RULE", default_value = "auto", value_parser = PartitionRule::parse)]
    partition: PartitionRule,
    /// Run partitioned across MPI ranks, one partition per rank: `mpirun -np N trnsim run --mpi
    /// NAME` (rank 0 prints; results identical to the serial run). Needs a build with feature
    /// `mpi` (make mpi).
    #[arg(long, conflicts_with = "threads")]
    mpi: bool,
    /// Run up to N benchmarks at the same time, each on its own thread (results and traces are
    /// the same as one at a time; host timings then include the others' load). `make run` uses
    /// one per core.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: u32,
}

#[derive(Subcommand, Debug)]
enum BenchCmd {
    /// A tiled BF16 GEMM C[M x N] = A[M x K] x B[K x N] on one NC-v4 core: A loaded once, B
    /// streamed from HBM through four SBUF buffers, C drained and stored (double buffering).
    NcGemm {
        /// Rows of C (a multiple of 128).
        #[arg(long, default_value_t = 512)]
        m: u32,
        /// The contraction dimension (a multiple of 128).
        #[arg(long, default_value_t = 512)]
        k: u32,
        /// Columns of C (a multiple of 512).
        #[arg(long, default_value_t = 2048)]
        n: u32,
        /// Write a trace of the run (.pftrace or .json).
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
    },
    /// Serial against partitioned runs of a partitionable system: wall time, speedup, windows
    /// and sync cost per window, per-partition busy and waiting time. Checks that every
    /// partitioned run's statistics equal the serial run's.
    Parallel {
        /// The system (fabric-allreduce-nl72x2-nodes or kernel-ring).
        #[arg(long, default_value = "fabric-allreduce-nl72x2-nodes")]
        system: String,
        /// Thread counts to try.
        #[arg(long, value_delimiter = ',', default_value = "2", value_parser = clap::value_parser!(u32).range(1..=256))]
        threads: Vec<u32>,
        /// How to split (auto, by-name, by-name:DEPTH).
        #[arg(long, default_value = "auto", value_parser = PartitionRule::parse)]
        partition: PartitionRule,
        /// Runs per configuration (the best wall time counts).
        #[arg(long, default_value_t = 3)]
        reps: u32,
    },
    /// The kernel yardstick: a ring of clocked modules passing tokens through credit FIFOs.
    KernelRing {
        /// Modules in the ring.
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        modules: u32,
        /// Tokens circulating (at most modules x depth).
        #[arg(long, default_value_t = 16)]
        tokens: u32,
        /// Input FIFO depth of each module.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        depth: u32,
        /// Cycles to simulate.
        #[arg(long, default_value_t = 1_000_000)]
        cycles: u64,
        /// Write the figures as JSON (includes host timing).
        #[arg(long, value_name = "FILE.json")]
        json: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum ConfigCmd {
    /// Validate RON files; print a located error for the first mistake in each. A file is a
    /// system config, a chip (`ChipSpec(`), an UltraServer (`UltraServerSpec(`) or a fabric
    /// topology (`TopologySpec(`), told apart by its top-level struct name.
    Check {
        /// RON files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn parse_order(s: &str) -> Result<TickOrder, String> {
    match s {
        "structural" => Ok(TickOrder::Structural),
        "reversed" => Ok(TickOrder::Reversed),
        _ => match s.strip_prefix("shuffled:").map(str::parse::<u64>) {
            Some(Ok(seed)) => Ok(TickOrder::Shuffled(seed)),
            _ => Err(format!("invalid order {s:?} (allowed: structural, reversed, shuffled:SEED)")),
        },
    }
}

/// Entry point; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let _guard = cli.profile.as_ref().map(|p| start_profile(p));
    let r = match cli.cmd {
        Cmd::Run(a) => cmd_run(a),
        Cmd::Bench { which } => cmd_bench(which),
        Cmd::Config { which: ConfigCmd::Check { files } } => cmd_check(&files),
        Cmd::Hbm(a) => {
            crate::hbm_cmd::run(a).map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Core(a) => {
            crate::core_cmd::run(a).map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Describe(a) => crate::describe::run(a).map_err(Failure::Usage),
        Cmd::Diff(a) => {
            crate::diff_cmd::run(a).map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::List => {
            for (n, d) in BENCHES {
                println!("{n:<26} {d}");
            }
            Ok(())
        }
    };
    match r {
        Ok(()) => 0,
        Err(Failure::Usage(m)) => {
            eprintln!("error: {m}");
            2
        }
        Err(Failure::Run(m)) => {
            eprintln!("error: {m}");
            1
        }
    }
}

enum Failure {
    Usage(String),
    Run(String),
}

fn start_profile(path: &Path) -> tracing_chrome::FlushGuard {
    use tracing_subscriber::prelude::*;
    let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new().file(path).build();
    let _ = tracing_subscriber::registry().with(layer).try_init();
    guard
}

fn per_bench_path(p: &Path, name: &str, many: bool) -> PathBuf {
    if !many {
        return p.to_path_buf();
    }
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
    let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    p.with_file_name(format!("{stem}.{safe}.{ext}"))
}

fn open_sink(trace: Option<&Path>, vcd: Option<&Path>) -> Result<Option<Box<dyn TraceSink>>, Failure> {
    let mut sinks: Vec<Box<dyn TraceSink>> = Vec::new();
    if let Some(p) = trace {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        let sink: Box<dyn TraceSink> = match ext {
            "pftrace" | "perfetto" => {
                Box::new(trnsim_traces::PerfettoWriter::create(p).map_err(|e| Failure::Usage(e.to_string()))?)
            }
            "json" => Box::new(trnsim_traces::ChromeJsonWriter::create(p).map_err(|e| Failure::Usage(e.to_string()))?),
            _ => {
                return Err(Failure::Usage(format!(
                    "--trace {}: unknown extension {ext:?} (allowed: .pftrace, .json)",
                    p.display()
                )))
            }
        };
        sinks.push(sink);
    }
    if let Some(p) = vcd {
        sinks.push(Box::new(trnsim_traces::VcdWriter::create(p).map_err(|e| Failure::Usage(e.to_string()))?));
    }
    Ok(match sinks.len() {
        0 => None,
        1 => sinks.pop(),
        _ => Some(Box::new(trnsim_traces::Fanout::new(sinks))),
    })
}

fn cmd_run(a: RunArgs) -> Result<(), Failure> {
    let mut names: Vec<String> = a.benches.clone();
    let default_suite = names.is_empty() && a.config.is_none();
    if default_suite {
        names = BENCHES.iter().map(|(n, _)| n.to_string()).collect();
    }
    for n in &names {
        // Families beyond the suite's members: kernel-random-graph:SEED, tp-matmul-N (any chip
        // count the shape splits over; tp::TpShape::chip_shape says which).
        let family = n.starts_with("kernel-random-graph:") || n.starts_with("tp-matmul-");
        if !BENCHES.iter().any(|(b, _)| b == n) && !family {
            let all: Vec<&str> = BENCHES.iter().map(|(b, _)| *b).collect();
            return Err(Failure::Usage(format!("unknown benchmark {n:?} (allowed: {})", all.join(", "))));
        }
    }
    let system = match &a.config {
        Some(p) => Some(config::load(p).map_err(|e| Failure::Usage(e.to_string()))?),
        None => None,
    };
    let total = names.len() + usize::from(system.is_some());
    let mut results = Vec::new();
    let mut jobs: Vec<String> = names.clone();
    if let Some(p) = &a.config {
        jobs.push(format!("config:{}", p.display()));
    }
    if a.mpi {
        return run_mpi(&a, &names);
    }
    if let Some(threads) = a.threads {
        return run_partitioned(&a, &names, threads);
    }
    let workers = (a.jobs as usize).min(jobs.len()).max(1);
    let run_bench = |name: &String| -> Result<BenchResult, Failure> {
        let _span = tracing::info_span!("bench", name = name.as_str()).entered();
        let tp = a.trace.as_deref().map(|p| per_bench_path(p, name, total > 1));
        let vp = a.vcd.as_deref().map(|p| per_bench_path(p, name, total > 1));
        // Benchmarks that are not one simulation (sweeps, analytic benches) write no trace.
        let traceable =
            !matches!(name.as_str(), "sbuf-bandwidth" | "hbm-latency-sweep" | "nc-gemm-sweep" | "nc-dma-bandwidth")
                && (!name.starts_with("fabric-") || name == "fabric-allreduce-nl72x2-nodes");
        if !traceable && (tp.is_some() || vp.is_some()) {
            eprintln!("note: {name} runs several simulations (a sweep or a study): it writes no trace or VCD");
        }
        let (tp, vp) = if traceable { (tp, vp) } else { (None, None) };
        let sink = open_sink(tp.as_deref(), vp.as_deref())?;
        let signal_links = if vp.is_some() { LinkSelection::All } else { LinkSelection::None };
        let trace = sink.map(|s| (s, TraceOptions { link_occupancy: true, signal_links }));
        let opts = RunOpts { order: a.order, trace, progress: workers == 1 };
        let r = run_one(name, system.as_ref(), opts, a.plots.as_deref()).map_err(Failure::Run)?;
        if let Some(p) = &tp {
            eprintln!("trace: {}", p.display());
        }
        Ok(r)
    };
    if workers == 1 {
        for name in &jobs {
            results.push(run_bench(name)?);
        }
    } else {
        // A shared cursor hands out benchmarks in suite order; results keep that order.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<Result<BenchResult, Failure>>>> =
            jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|sc| {
            for _ in 0..workers {
                sc.spawn(|| loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(name) = jobs.get(k) else { break };
                    let r = run_bench(name);
                    // Progress on stderr as each finishes (results print together at the end).
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    if let Ok(b) = &r {
                        eprintln!("[{n}/{}] {name}: {:.1} s", jobs.len(), b.speed.wall_s);
                    }
                    let failed = r.is_err();
                    *slots[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                    if failed {
                        // Stop handing out work; the first failure in suite order is reported.
                        next.store(jobs.len(), std::sync::atomic::Ordering::Relaxed);
                    }
                });
            }
        });
        for slot in slots {
            match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(r) => results.push(r?),
                None => break,
            }
        }
    }
    print_results(&results, a.full);
    // The default suite ends with the Trn3 summary table (harness/src/summary.rs).
    let summary = if default_suite { trnsim_harness::summary::summary(&results) } else { Vec::new() };
    if !summary.is_empty() {
        print!("\n{}", trnsim_harness::summary::to_table(&summary));
    }
    if let Some(p) = &a.json {
        write_json_with(p, &results, &summary)?;
    }
    Ok(())
}

/// The partitionable systems a `--threads` or `--mpi` run asks for (checked).
fn partitioned_names(a: &RunArgs, names: &[String]) -> Result<Vec<String>, Failure> {
    if a.config.is_some() || a.vcd.is_some() {
        return Err(Failure::Usage("--threads and --mpi work with named partitionable benchmarks only (no --config, no --vcd: link waveforms need a serial run)".into()));
    }
    let names: Vec<String> = if a.benches.is_empty() {
        trnsim_harness::parallel::PARTITIONABLE
            .iter()
            .filter(|(n, _)| !n.contains(':'))
            .map(|(n, _)| n.to_string())
            .collect()
    } else {
        names.to_vec()
    };
    for n in &names {
        trnsim_harness::parallel::system(n, a.order).map_err(Failure::Usage)?;
    }
    Ok(names)
}

/// `trnsim run --mpi` without the feature: say how to get it.
#[cfg(not(feature = "mpi"))]
fn run_mpi(_a: &RunArgs, _names: &[String]) -> Result<(), Failure> {
    Err(Failure::Usage(
        "this trnsim was built without MPI: build it with `make mpi` (or `CARGO_TARGET_DIR=target/mpi cargo build --release -p trnsim-harness --features mpi`, after `apt-get install -y libopenmpi-dev openmpi-bin libclang-dev`) and run `scripts/mpirun.sh -np N target/mpi/release/trnsim run --mpi NAME`".into(),
    ))
}

/// `mpirun -np N trnsim run --mpi NAME`: partition `rank` here; rank 0 prints the merged results.
/// Any error after MPI starts ends the whole job (`MPI_Abort`): the other ranks may be waiting
/// in a collective, and a plain exit would leave them (and `MPI_Finalize`) waiting forever.
#[cfg(feature = "mpi")]
fn run_mpi(a: &RunArgs, names: &[String]) -> Result<(), Failure> {
    let names = partitioned_names(a, names)?;
    let (_universe, mut t) = trnsim_harness::mpi::init().map_err(Failure::Run)?;
    let rank = trnsim_kernel::Transport::rank(&t);
    let r = run_mpi_ranks(a, &names, &mut t);
    if let Err(e) = &r {
        let (m, code) = match e {
            Failure::Usage(m) => (m, 2),
            Failure::Run(m) => (m, 1),
        };
        eprintln!("error: rank {rank}: {m}");
        if trnsim_kernel::Transport::size(&t) > 1 {
            t.abort(code);
        }
    }
    r
}

#[cfg(feature = "mpi")]
fn run_mpi_ranks(a: &RunArgs, names: &[String], t: &mut trnsim_harness::mpi::MpiTransport) -> Result<(), Failure> {
    let rank = trnsim_kernel::Transport::rank(t);
    let ranks = trnsim_kernel::Transport::size(t);
    let mut results = Vec::new();
    for name in names {
        let tp = a.trace.as_deref().map(|p| per_bench_path(p, name, names.len() > 1));
        let sink = if rank == 0 { open_sink(tp.as_deref(), None)? } else { None };
        let tracing = tp.as_ref().map(|_| TraceOptions::default());
        let sys = trnsim_harness::parallel::system(name, a.order).map_err(Failure::Usage)?;
        let run = sys.run_transport(t, &a.partition, tracing.as_ref(), sink).map_err(Failure::Run)?;
        if let Some((run, wall_s)) = run {
            let (r, table) =
                trnsim_harness::parallel::result(name, &sys, run, wall_s, ("ranks", ranks)).map_err(Failure::Run)?;
            eprint!("{name}: {table}");
            if let Some(p) = &tp {
                eprintln!("trace: {}", p.display());
            }
            results.push(r);
        }
    }
    if rank == 0 {
        print_results(&results, a.full);
        if let Some(p) = &a.json {
            write_json(p, &results)?;
        }
    }
    Ok(())
}

/// `trnsim run --threads N`: the named partitionable systems, split and run on N threads.
fn run_partitioned(a: &RunArgs, names: &[String], threads: u32) -> Result<(), Failure> {
    let names = partitioned_names(a, names)?;
    let mut results = Vec::new();
    for name in &names {
        let tp = a.trace.as_deref().map(|p| per_bench_path(p, name, names.len() > 1));
        let sink = open_sink(tp.as_deref(), None)?;
        let trace = sink.map(|s| (s, TraceOptions::default()));
        let (r, table) =
            trnsim_harness::parallel::run_named(name, a.order, threads, &a.partition, trace).map_err(Failure::Run)?;
        eprint!("{name}: {table}");
        if let Some(p) = &tp {
            eprintln!("trace: {}", p.display());
        }
        results.push(r);
    }
    print_results(&results, a.full);
    if let Some(p) = &a.json {
        write_json(p, &results)?;
    }
    Ok(())
}

fn run_one(
    name: &str,
    system: Option<&config::System>,
    opts: RunOpts,
    plots: Option<&Path>,
) -> Result<BenchResult, String> {
    let ring = |tokens| RingParams { modules: 64, tokens, depth: 4 };
    match name {
        "sbuf-bandwidth" => trnsim_harness::memory::sbuf_bandwidth(),
        "fabric-allreduce-nl72x2-nodes" => suite::run_partitionable(name, opts),
        n if n.starts_with("kernel-random-graph:") => suite::run_partitionable(name, opts),
        n if n.starts_with("fabric-") => trnsim_harness::fabric::run_named(n, plots),
        "e2e-llm-layer" => trnsim_harness::e2e::run_named(name, opts.order, opts.trace),
        n if n.starts_with("tp-matmul-") => trnsim_harness::tp::run_named(n, opts.order, opts.trace, plots),
        "moe-alltoall-144" => trnsim_harness::moe::run_named(name, opts.order, opts.trace),
        n if n.starts_with("nc-") => trnsim_harness::neuroncore::run_named(n, opts.order, opts.trace),
        n if n.starts_with("hbm-") => trnsim_harness::memory::run_named(n, opts.order, opts.trace, plots),
        "kernel-ring" => suite::run_ring(name, ring(16), 200_000, opts),
        "kernel-ring-sparse" => suite::run_ring(name, ring(2), 200_000, opts),
        "demo" => {
            let sys = config::parse("models/configs/demo.ron (built in)", trnsim_harness::system::DEMO_RON)
                .map_err(|e| e.to_string())?;
            suite::run_system(name, &sys, opts)
        }
        _ => match system {
            Some(sys) => suite::run_system(name, sys, opts),
            None => Err(format!("unknown benchmark {name:?}")),
        },
    }
}

fn print_results(results: &[BenchResult], full: bool) {
    println!("{:<22} {:<44} {:>16}", "benchmark", "figure", "value");
    for r in results {
        for (k, v) in &r.headline {
            println!("{:<22} {:<44} {:>16}", r.name, k, fmt_num(*v));
        }
        // Host speed: kernel ticks per second only for benchmarks that ran the kernel.
        let ticks = if r.speed.ticks_per_s > 0.0 { format!("{:.3e}", r.speed.ticks_per_s) } else { "n/a".into() };
        let wall = if r.speed.wall_s >= 0.001 { format!("{:.3}", r.speed.wall_s) } else { "<0.001".into() };
        println!("{:<22} {:<44} {:>16}", r.name, "host: wall_s / ticks_per_s", format!("{wall} / {ticks}"));
    }
    if full {
        for r in results {
            println!("\n== {} ==\n{}", r.name, r.stats.to_table());
        }
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

fn write_json(p: &Path, results: &[BenchResult]) -> Result<(), Failure> {
    write_json_with(p, results, &[])
}

/// Results JSON (simulated figures only); with a `summary` field when there are summary rows.
fn write_json_with(
    p: &Path,
    results: &[BenchResult],
    summary: &[trnsim_harness::summary::SummaryRow],
) -> Result<(), Failure> {
    let mut doc = serde_json::json!({ "trnsim": env!("CARGO_PKG_VERSION"), "benchmarks": results });
    if !summary.is_empty() {
        doc["summary"] = serde_json::json!(summary);
    }
    let body = serde_json::to_string_pretty(&doc).map_err(|e| Failure::Run(format!("{}: {e}", p.display())))?;
    std::fs::write(p, body + "\n").map_err(|e| Failure::Usage(format!("--json {}: {e}", p.display())))
}

fn cmd_nc_gemm(m: u32, k: u32, n: u32, trace: Option<PathBuf>) -> Result<(), Failure> {
    if m == 0 || k == 0 || n == 0 || !m.is_multiple_of(128) || !k.is_multiple_of(128) || !n.is_multiple_of(512) {
        return Err(Failure::Usage(format!(
            "--m {m} --k {k} --n {n}: M and K must be positive multiples of 128, N of 512"
        )));
    }
    if m > 512 || (k / 128) * m * 2 > 96 * 1024 {
        return Err(Failure::Usage(format!(
            "--m {m} --k {k}: A (K/128 x M BF16 per partition = {} KiB) must fit in 96 KiB of SBUF and M <= 512 (four PSUM banks per N block)",
            k / 128 * m * 2 / 1024
        )));
    }
    use trnsim_harness::neuroncore as nc;
    let program = nc::assemble_text(&format!("gemm {m}x{k}x{n} (generated)"), &nc::tiled_gemm_program(m, k, n))
        .map_err(Failure::Run)?;
    let sink = match &trace {
        Some(p) => Some((
            trnsim_traces::create_sink(p).map_err(|e| Failure::Usage(e.to_string()))?,
            TraceOptions { link_occupancy: false, signal_links: LinkSelection::None },
        )),
        None => None,
    };
    let (sim, ids) = nc::run_cores(&program, 1, TickOrder::Structural, sink).map_err(Failure::Run)?;
    let te_id = ids[0]
        .engines
        .iter()
        .find(|(e, _)| *e == trnsim_core::isa::Engine::Tensor)
        .map(|x| x.1)
        .ok_or_else(|| Failure::Run("no tensor engine".into()))?;
    let te =
        sim.component::<trnsim_core::engine::EngineUnit>(te_id).ok_or_else(|| Failure::Run("tensor engine".into()))?;
    let flops = 2.0 * m as f64 * k as f64 * n as f64;
    let secs = sim.now().as_ps() as f64 * 1e-12;
    let span = te.stats.last - te.stats.first.unwrap_or(0);
    println!("gemm {m} x {k} x {n} (BF16, FP32 accumulate) on one NC-v4 core");
    println!("  simulated time        {:>10.3} us", secs * 1e6);
    println!("  TFLOPS (whole run)    {:>10.2}  (peak 78.64)", flops / secs / 1e12);
    println!(
        "  tensor utilization    {:>9.1}%  (busy {} of {} cycles from its first issue)",
        100.0 * te.stats.busy_cycles as f64 / span.max(1) as f64,
        te.stats.busy_cycles,
        span
    );
    if let Some(p) = &trace {
        eprintln!("trace: {}", p.display());
    }
    Ok(())
}

fn cmd_bench(which: BenchCmd) -> Result<(), Failure> {
    let (modules, tokens, depth, cycles, json) = match which {
        BenchCmd::NcGemm { m, k, n, trace } => return cmd_nc_gemm(m, k, n, trace),
        BenchCmd::Parallel { system, threads, partition, reps } => {
            trnsim_harness::parallel::system(&system, TickOrder::Structural).map_err(Failure::Usage)?;
            let out = trnsim_harness::parallel::bench(&system, &threads, &partition, reps).map_err(Failure::Run)?;
            print!("{out}");
            return Ok(());
        }
        BenchCmd::KernelRing { modules, tokens, depth, cycles, json } => (modules, tokens, depth, cycles, json),
    };
    if u64::from(tokens) > u64::from(modules) * u64::from(depth) {
        return Err(Failure::Usage(format!("--tokens {tokens} does not fit in --modules {modules} x --depth {depth}")));
    }
    let p = RingParams { modules, tokens, depth };
    let opts = RunOpts { order: TickOrder::Structural, trace: None, progress: true };
    let r = suite::run_ring("kernel-ring", p, cycles, opts).map_err(Failure::Run)?;
    let hops = r
        .stats
        .owners
        .values()
        .filter_map(|m| match m.get("hops") {
            Some(trnsim_kernel::StatValue::Int(v)) => Some(*v),
            _ => None,
        })
        .sum::<u64>();
    let t = u64::from(tokens);
    let payload_sum = t * t.saturating_sub(1) / 2 + hops;
    let s = &r.speed;
    let ticks = r.stats.int("kernel", "ticks").unwrap_or(0);
    let out = serde_json::json!({
        "bench": "kernel-ring", "modules": modules, "tokens": tokens, "depth": depth, "cycles": cycles,
        "hops": hops, "payload_sum": payload_sum, "ticks": ticks,
        "wall_s": s.wall_s, "cpu_s": s.cpu_s,
        "cycles_per_s": cycles as f64 / s.wall_s.max(1e-9),
        "ticks_per_s": ticks as f64 / s.wall_s.max(1e-9),
        "hops_per_s": hops as f64 / s.wall_s.max(1e-9),
        "hops_per_cpu_s": hops as f64 / s.cpu_s.max(1e-9),
    });
    println!("kernel-ring  modules {modules}  tokens {tokens}  depth {depth}  cycles {cycles}");
    println!("  hops {hops}  (checksum ok)");
    println!(
        "  simulated cycles/s {:.3e}   ticks/s {:.3e}   hops/s {:.3e}   hops per CPU-s {:.3e}",
        out["cycles_per_s"].as_f64().unwrap_or(0.0),
        out["ticks_per_s"].as_f64().unwrap_or(0.0),
        out["hops_per_s"].as_f64().unwrap_or(0.0),
        out["hops_per_cpu_s"].as_f64().unwrap_or(0.0)
    );
    if let Some(p) = json {
        std::fs::write(&p, out.to_string() + "\n")
            .map_err(|e| Failure::Usage(format!("--json {}: {e}", p.display())))?;
    }
    Ok(())
}

fn cmd_check(files: &[PathBuf]) -> Result<(), Failure> {
    let mut bad = Vec::new();
    for f in files {
        match config::check_file(f) {
            Ok(line) => println!("{line}"),
            Err(e) => bad.push(e),
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(Failure::Usage(bad.join("\nerror: ")))
    }
}
