//! The command-line interface (clap). Every user mistake is a one-line error and exit code 2
//! (an output file that cannot be created before the run starts among them); a failed run
//! (deadlock, a trace or result file that cannot be written once the run has produced it) is
//! exit code 1.

use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use trnsim_benchmarks::outputs::{self, Named, Staged};
use trnsim_benchmarks::ring::RingParams;
use trnsim_benchmarks::suite::{self, BenchResult, RunOpts, BENCHES};
use trnsim_harness::config;
use trnsim_kernel::{LinkSelection, PartitionRule, TickOrder, TraceOptions, TraceSink};

/// `trnsim --version`: the release and the git revision it was built from.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (git ", env!("TRNSIM_GIT_REV"), ")");

/// trnsim: a cycle-approximate simulator of a Trainium3-class AI system.
///
/// Start with `trnsim run` (the default microbenchmark suite, a table on stdout). Add
/// `--trace out.pftrace` and open the file at <https://ui.perfetto.dev> (timestamps are simulated
/// time). `trnsim run --config models/configs/demo.ron` runs a system described in RON;
/// `trnsim config check FILE.ron` validates one (or a chip, UltraServer or topology file)
/// without running it. What-if runs: `--system`, `--set` and `--sweep` on `trnsim run`,
/// `trnsim workload`, `trnsim compare` and `trnsim collective` (docs/whatif.md).
#[derive(Parser, Debug)]
#[command(name = "trnsim", version = VERSION, about, long_about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Write a wall-clock profile of the simulator itself (Chrome JSON, via tracing-chrome; open it in Perfetto): nested spans for the command, each benchmark or what-if point, a system's build and simulation, and the simulation alone.
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
    Diff(trnsim_harness::diff_cmd::DiffArgs),
    /// A regression of lock-step diffs: blocks x stimuli x seeds in parallel (random seeds,
    /// printed), a summary table, JUnit XML, coverage merged across runs, the first failing
    /// seed's reproduction command (needs a build with feature `rtl`).
    Regress(trnsim_harness::regress::RegressArgs),
    /// One collective over a range of sizes on a system's fabric, printed as the Neuron SDK's
    /// nccom-test prints it (`--format nccl-tests` for nccl-tests' columns), e.g.
    /// `trnsim collective all-reduce -b 1M -e 1G -f 4`.
    Collective(crate::collective_cmd::CollectiveArgs),
    /// Write workload files (per-rank operation graphs, docs/whatif.md), and sweep an inference model's serving frontier.
    Workload {
        #[command(subcommand)]
        which: crate::workload_cmd::WorkloadCmd,
    },
    /// Run one workload file on several systems and print them side by side: step time,
    /// where it went, each collective's bus bandwidth, energy, power, performance per watt and
    /// cost (docs/energy.md).
    Compare(crate::workload_cmd::CompareArgs),
    /// List the benchmarks `trnsim run` knows.
    List,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Benchmarks to run (see `trnsim list`); none = the default suite, which ends with a
    /// summary table of Trn3 figures against their references (also in --json as `summary`).
    /// Families run by name too: tp-matmul-N (N whole chips), kernel-random-graph:SEED and
    /// dp-step-N[:GRADIENT[:BUCKETS[:TOKENS]]] (a data-parallel step on N Trn3 Gen2
    /// UltraServers; docs/scaleout.md).
    benches: Vec<String>,
    /// Run the system described in this RON file (after any named benchmarks). A chip,
    /// UltraServer or fabric file is the system the named benchmarks (or --workload FILE)
    /// run on.
    #[arg(long, value_name = "FILE.ron")]
    config: Option<PathBuf>,
    /// Run the named benchmarks on this system instead of their own: a preset (trn3-chip,
    /// trn3-gen1-ultraserver, trn3-gen2-nl72x2, ...) or a chip, UltraServer or fabric RON
    /// file. Benchmarks that take it: e2e-llm-layer, tp-matmul-N, moe-alltoall-144 and the
    /// fabric collective benchmarks.
    #[arg(long, value_name = "PRESET|FILE.ron")]
    system: Option<String>,
    /// A workload file to run (`trnsim workload llm -o FILE`; RON or JSON, told apart by
    /// content) on --system (or --config); the report adds energy, power, performance per watt
    /// and cost from the chip's energy table (docs/energy.md).
    #[arg(long, value_name = "FILE")]
    workload: Option<PathBuf>,
    /// Fidelity of the HBM stacks and DMA engines: cycle (default) or fast (transaction-level;
    /// docs/validation.md). For e2e-llm-layer, tp-matmul-N and moe-alltoall-144 the same as
    /// `--set chip.hbm.fidelity=fast --set chip.dma.fidelity=fast`; hbm-* and nc-* take it
    /// too (run them apart from the first three).
    #[arg(long, default_value = "cycle", value_parser = ["cycle", "fast"])]
    fidelity: String,
    /// Override one field of the system before it is validated, e.g. `chip.hbm.stacks=2`,
    /// `fabric.switch.latency=200ns`, or with --workload FILE of the workload,
    /// `workload.repeat=4` (repeatable; paths: docs/whatif.md).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Run once per value, e.g. `chip.neuronlink.ports=16,20` (repeatable: every combination);
    /// one row per point, all points in --json, and with --plots an SVG per figure.
    #[arg(long = "sweep", value_name = "PATH=V1,V2,...", value_parser = parse_sweep)]
    sweeps: Vec<trnsim_harness::whatif::Sweep>,
    /// With --workload FILE: the roofline's fraction of the tensor engines' peak (0.001 <= F
    /// <= 1; with `--compute roofline` or `both`, and for opaque kernel nodes), instead of
    /// measuring it on the cycle-level chip.
    #[arg(long, value_name = "F", value_parser = crate::workload_cmd::parse_efficiency)]
    gemm_efficiency: Option<f64>,
    /// With --workload FILE: how compute nodes are timed: `cycle` (GEMM, attention and
    /// elementwise nodes as the kernel library's NeuronCore programs on the cycle-level chip,
    /// each distinct program simulated once; docs/whatif.md), `roofline` (the quick
    /// estimate, at the GEMM efficiency), or `both` (cycle, with the roofline per node kind
    /// beside it). Default: cycle.
    #[arg(long, value_name = "MODEL", value_parser = trnsim_harness::workload::Compute::parse)]
    compute: Option<trnsim_harness::workload::Compute>,
    /// With --workload FILE: keep each simulated kernel program's time in DIR (created if
    /// needed) and read the ones an earlier run of this build simulated on the same chip there
    /// (docs/whatif.md).
    #[arg(long, value_name = "DIR")]
    op_cache: Option<PathBuf>,
    /// With --workload FILE and --sweep: print each collective's bus bandwidth per point after
    /// the summary (one row per collective).
    #[arg(long)]
    collectives: bool,
    /// Write a trace of the runs: .pftrace, .perfetto or .perfetto-trace (Perfetto protobuf) or
    /// .json (Chrome JSON); link waveforms go to --vcd. With several benchmarks, each gets its
    /// own file: NAME inserted before the extension. Runs of chips (e2e-llm-layer, tp-matmul-N,
    /// moe-alltoall-144) add power counters per chip and component, sampled every 100 ns.
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
    /// systems that can be split: fabric-allreduce-nl72x2-nodes,
    /// fabric-allreduce-ultracluster-nodes, kernel-ring, tp-matmul-N and moe-alltoall-144
    /// (whole chips), dp-step-N (a data-parallel step on N UltraServers); each partition makes
    /// only its own components. tp-matmul-N and moe-alltoall-144 split so also on --system,
    /// with --set, --sweep (points one after another) and --fidelity fast. N partitions more
    /// than the host's cores run on one thread per core, each taking several partitions'
    /// windows in turn; for whole chips that pays: each partition's chips stay in cache
    /// through a window (e.g. moe-alltoall-144 --threads 48 on one core: 2.6x faster than the
    /// serial kernel in cycle fidelity, 1.4x in fast). Without --threads, untraced runs of
    /// tp-matmul-N and moe-alltoall-144 already run so, in windows on one thread.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Option<u32>,
    /// How to split the system with --threads or --mpi: auto (cut the longest links, balance
    /// component counts), by-name (group by the first dotted name segment, e.g. per chip, or
    /// per UltraServer on a cluster) or by-name:DEPTH, either followed by ,attach=GROUP to
    /// spread GROUP's components (e.g. efa, a cluster's scale-out switches) over the
    /// partitions next to their links, or by ,attach-singles to spread every component alone
    /// in its group (a fabric's switches, idle chips) likewise. Default: by-name,attach=efa on
    /// clusters (by UltraServer, when there are at least as many UltraServers as partitions),
    /// by-name,attach-singles for tp-matmul-N and moe-alltoall-144 (by busy chip, when there
    /// are at least as many as partitions), auto otherwise. A rule that splits a chip of
    /// tp-matmul-N or moe-alltoall-144 is an error.
    #[arg(long, value_name = "RULE", value_parser = PartitionRule::parse)]
    partition: Option<PartitionRule>,
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
    /// Run this instance's RTL block beside its model, checked where the system uses it
    /// (repeatable): `hbm0.ch0.pc0.bank3`, bank 3's timing FSM (block hbm_bank) in
    /// pseudo-channel 0 of channel 0 of stack 0; `nc0.sbuf.bank0` (or `nc0.psum.bank0`), bank
    /// 0 of core 0's SBUF (block sbuf_bank; psum_bank); `nc0.dma.engine0`, DMA engine 0's
    /// descriptor queues and arbiter (block dma_queue_q16_qos; dma_queue on nc-v2/v3 cores);
    /// `"nc0.tensor.sem -> nc0.sem.tensor.op"`, a kernel link's receive side (block
    /// link_fifo). `INSTANCE=BLOCK` runs the registered
    /// block BLOCK there instead (`trnsim diff --list`; a block crate's own), if it has the
    /// instance's ports. For the benchmarks that run on a chip
    /// (e2e-llm-layer, tp-matmul-N, moe-alltoall-144) the same as `--set chip.rtl=[...]`.
    /// After the run the block's inputs replay against its model: a decision the block does
    /// not share, or a divergence, fails the run with both sides' history and VCDs
    /// (docs/rtl.md, Swap-in). Needs a build with feature rtl.
    #[arg(long = "rtl", value_name = "INSTANCE[=BLOCK]")]
    rtl: Vec<String>,
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
        /// Columns of C (a multiple of 512, at most 65536).
        #[arg(long, default_value_t = 2048)]
        n: u32,
        /// Write a trace of the run: .pftrace, .perfetto or .perfetto-trace (Perfetto), .json
        /// (Chrome JSON) or .vcd (waveforms).
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
        /// How to split (auto, by-name, by-name:DEPTH, optionally ,attach=GROUP or
        /// ,attach-singles; default: by UltraServer on clusters, by busy chip on tp-matmul-N and
        /// moe-alltoall-144, auto on the others).
        #[arg(long, value_parser = PartitionRule::parse)]
        partition: Option<PartitionRule>,
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
        /// Cycles to simulate (1..=10^12).
        #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
        cycles: u64,
        /// Write the figures as JSON (includes host timing).
        #[arg(long, value_name = "FILE.json")]
        json: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum ConfigCmd {
    /// Validate files; print a located error for the first mistake in each. A file is a
    /// system config, a chip (`ChipSpec(`), an UltraServer (`UltraServerSpec(`), an
    /// UltraCluster, a scale-out switch, a fabric topology (`TopologySpec(`) or a workload
    /// (`Workload(`, or JSON), told apart by its content.
    Check {
        /// RON or JSON files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print every path `--set` and `--sweep` accept on a system, with its value, e.g.
    /// `trnsim config paths trn3-gen2-ultraserver` (a preset or a chip, UltraServer or fabric
    /// file; `--set` applies first).
    Paths {
        /// The system: a preset or a RON file.
        system: String,
        /// Overrides to apply first.
        #[arg(long = "set", value_name = "PATH=VALUE")]
        sets: Vec<String>,
    },
}

fn parse_sweep(s: &str) -> Result<trnsim_harness::whatif::Sweep, String> {
    s.parse()
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
    if let Err(m) = check_io_paths(&cli) {
        eprintln!("error: {m}");
        return 2;
    }
    let profile = match cli.profile.as_ref().map(|p| start_profile(p)).transpose() {
        Ok(p) => p,
        Err(m) => {
            eprintln!("error: {m}");
            return 2;
        }
    };
    // The profile's outermost span: the command (its phases nest inside, docs/performance.md).
    let command = match &cli.cmd {
        Cmd::Run(_) => "run",
        Cmd::Bench { .. } => "bench",
        Cmd::Config { .. } => "config",
        Cmd::Hbm(_) => "hbm",
        Cmd::Core(_) => "core",
        Cmd::Describe(_) => "describe",
        Cmd::Workload { .. } => "workload",
        Cmd::Compare(_) => "compare",
        Cmd::Collective(_) => "collective",
        Cmd::Diff(_) => "diff",
        Cmd::Regress(_) => "regress",
        Cmd::List => "list",
    };
    let span = tracing::info_span!("command", name = command).entered();
    let r = match cli.cmd {
        Cmd::Run(a) => cmd_run(a),
        Cmd::Bench { which } => cmd_bench(which),
        Cmd::Config { which: ConfigCmd::Check { files } } => cmd_check(&files),
        Cmd::Config { which: ConfigCmd::Paths { system, sets } } => cmd_paths(&system, &sets),
        Cmd::Hbm(a) => {
            crate::hbm_cmd::run(a).map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Core(a) => {
            crate::core_cmd::run(a).map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Describe(a) => crate::describe::run(a).map_err(Failure::Usage),
        Cmd::Workload { which } => {
            crate::workload_cmd::run(which)
                .map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Compare(a) => {
            crate::workload_cmd::compare(a)
                .map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Collective(a) => {
            crate::collective_cmd::run(a)
                .map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Diff(a) => {
            trnsim_harness::diff_cmd::run(a)
                .map_err(|(m, code)| if code == 2 { Failure::Usage(m) } else { Failure::Run(m) })
        }
        Cmd::Regress(a) => trnsim_harness::regress::run_with(a, &[], &crate::program_name()).map_err(|(m, code)| {
            if code == 2 {
                Failure::Usage(m)
            } else {
                Failure::Run(m)
            }
        }),
        Cmd::List => {
            for (n, d) in BENCHES {
                println!("{n:<26} {d}");
            }
            Ok(())
        }
    };
    drop(span);
    let r = r.and(finish_profile(profile));
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

/// The wall-clock profile being written: its flush guard, its staged file and the first
/// write error.
type Profile = (tracing_chrome::FlushGuard, Staged, KeptError);

/// The first write error of the profile's file, kept for [`finish_profile`].
type KeptError = std::sync::Arc<std::sync::Mutex<Option<std::io::Error>>>;

/// The profile's file as the profiler's writer thread sees it: a write error is kept (the
/// first) and later bytes are dropped, instead of returned, because that thread panics on
/// one; [`finish_profile`] reports it.
struct ProfileFile {
    file: std::fs::File,
    error: KeptError,
}

impl ProfileFile {
    fn keep(&self, r: std::io::Result<()>) {
        if let (Err(e), Ok(mut kept)) = (r, self.error.lock()) {
            kept.get_or_insert(e);
        }
    }

    fn failed(&self) -> bool {
        self.error.lock().map_or(true, |e| e.is_some())
    }
}

impl std::io::Write for ProfileFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.failed() {
            let r = self.file.write_all(buf);
            self.keep(r);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.failed() {
            let r = self.file.flush();
            self.keep(r);
        }
        Ok(())
    }
}

/// Starts the wall-clock profile, written under a temporary name until [`finish_profile`].
fn start_profile(path: &Path) -> Result<Profile, String> {
    use tracing_subscriber::prelude::*;
    let staged = Staged::new(path);
    let file = std::fs::File::create(staged.path()).map_err(|e| format!("--profile {}: {e}", path.display()))?;
    let error = KeptError::default();
    let out = ProfileFile { file, error: error.clone() };
    let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new().writer(out).include_args(true).build();
    let _ = tracing_subscriber::registry().with(layer).try_init();
    Ok((guard, staged, error))
}

/// Flushes the profile (its writer thread ends) and gives it its final name, or reports its
/// first write error.
fn finish_profile(p: Option<Profile>) -> Result<(), Failure> {
    let Some((guard, staged, error)) = p else { return Ok(()) };
    drop(guard);
    let kept = error
        .lock()
        .map_or_else(|_| Some("the profile's writer failed".to_string()), |e| e.as_ref().map(|e| e.to_string()));
    if let Some(e) = kept {
        return Err(Failure::Run(format!("--profile {}: {e}", staged.dest().display())));
    }
    staged.commit().map_err(Failure::Run)
}

/// Every input and output path the command line names (a run's per-benchmark trace names
/// included), checked before anything is opened for writing: no output may be an input or
/// another output ([`outputs::check`]).
fn check_io_paths(cli: &Cli) -> Result<(), String> {
    let mut ins: Vec<(&str, PathBuf)> = Vec::new();
    let mut outs: Vec<(&str, PathBuf)> = Vec::new();
    // Trace paths whose format to check: (path, written by `run`'s own sinks).
    let mut formats: Vec<(PathBuf, bool)> = Vec::new();
    match &cli.cmd {
        Cmd::Run(a) => {
            let mut names: Vec<String> = a.benches.clone();
            if names.is_empty() && a.config.is_none() && a.workload.is_none() {
                names = BENCHES.iter().map(|(n, _)| n.to_string()).collect();
            }
            if a.workload.is_some() {
                names.clear();
            }
            if let Some(p) = &a.config {
                ins.push(("--config", p.clone()));
                names.push(format!("config:{}", p.display()));
            }
            for n in &names {
                let many = names.len() > 1;
                outs.extend(a.trace.as_deref().map(|p| ("--trace", per_bench_path(p, n, many))));
                outs.extend(a.vcd.as_deref().map(|p| ("--vcd", per_bench_path(p, n, many))));
            }
            outs.extend(a.json.clone().map(|p| ("--json", p)));
            if a.workload.is_some() {
                // A workload run writes its trace under the name given.
                outs.extend(a.trace.clone().map(|p| ("--trace", p)));
                formats.extend(a.trace.clone().map(|p| (p, false)));
            } else {
                // A benchmark's trace format (`run`'s own), before anything runs or prints.
                formats.extend(a.trace.clone().map(|p| (p, true)));
            }
            ins.extend(a.workload.clone().map(|w| ("--workload", w)));
            ins.extend(a.system.iter().filter(|s| Path::new(s).is_file()).map(|s| ("--system", PathBuf::from(s))));
        }
        Cmd::Compare(a) => {
            let (i, o) = a.io_paths();
            ins.extend(i);
            outs.extend(o);
        }
        Cmd::Workload { which } => {
            outs.extend(which.io_paths());
            ins.extend(which.inputs());
        }
        Cmd::Diff(a) => {
            let (i, o) = a.io_paths();
            ins.extend(i);
            outs.extend(o);
        }
        Cmd::Regress(a) => outs.extend(a.io_paths().1),
        Cmd::Collective(a) => {
            ins.extend(Path::new(&a.system).is_file().then(|| ("--system", PathBuf::from(&a.system))));
            outs.extend(a.json.clone().map(|p| ("--json", p)));
            outs.extend(a.output_file.clone().map(|p| ("--output-file", p)));
        }
        Cmd::Bench { which: BenchCmd::NcGemm { trace, .. } } => outs.extend(trace.clone().map(|p| ("--trace", p))),
        Cmd::Bench { which: BenchCmd::KernelRing { json, .. } } => outs.extend(json.clone().map(|p| ("--json", p))),
        Cmd::Hbm(a) => {
            let (i, o) = a.io_paths();
            ins.extend(i);
            outs.extend(o);
        }
        Cmd::Core(a) => {
            let (i, o) = a.io_paths();
            ins.extend(i);
            outs.extend(o);
        }
        _ => {}
    }
    // Every other command's trace is written by `trnsim_traces::create_sink`.
    if !matches!(&cli.cmd, Cmd::Run(_)) {
        formats.extend(outs.iter().filter(|(f, _)| *f == "--trace").map(|(_, p)| (p.clone(), false)));
    }
    outs.extend(cli.profile.clone().map(|p| ("--profile", p)));
    // The files a system file pulls in (its chip, fabric, UltraServer, switch) are inputs too.
    let pulled = pulled_in(&cli.cmd);
    let ins: Vec<Named<'_>> =
        ins.iter().map(|(f, p)| outputs::named(f, p)).chain(pulled.iter().map(|(f, p)| outputs::named(f, p))).collect();
    let outs: Vec<Named<'_>> = outs.iter().map(|(f, p)| outputs::named(f, p)).collect();
    outputs::check(&ins, &outs)?;
    let plots = match &cli.cmd {
        Cmd::Run(a) => a.plots.as_deref(),
        Cmd::Compare(a) => a.plots(),
        _ => None,
    };
    if let Some(d) = plots {
        outputs::check_dir("--plots", d)?;
    }
    // Then each trace's format, on the name given, before anything runs or is staged under a
    // temporary name.
    for (p, run) in &formats {
        if *run {
            run_trace_format(p)?;
        } else {
            trnsim_traces::check_sink_format(p).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The files the systems a command names read besides the one named (a chip, fabric,
/// UltraServer or switch file found beside it or among the presets on disk), each with the
/// flag and part that pulled it in. A system that does not open is left to the run, which
/// reports it.
fn pulled_in(cmd: &Cmd) -> Vec<(String, PathBuf)> {
    let mut systems: Vec<(&str, String)> = Vec::new();
    match cmd {
        Cmd::Run(a) => {
            systems.extend(a.system.iter().map(|s| ("--system", s.clone())));
            if system_file_kind(a.config.as_deref()).is_some() {
                systems.extend(a.config.iter().map(|c| ("--config", c.display().to_string())));
            }
        }
        Cmd::Compare(a) => systems.extend(a.systems().iter().map(|s| ("--system", s.clone()))),
        Cmd::Collective(a) => systems.push(("--system", a.system.clone())),
        _ => {}
    }
    let mut out = Vec::new();
    for (flag, arg) in systems {
        let Ok(doc) = trnsim_system::doc::SystemDoc::open(&arg) else { continue };
        for (part, p) in doc.files() {
            out.push((format!("{flag} {arg}: its {part} file"), p));
        }
    }
    out
}

fn per_bench_path(p: &Path, name: &str, many: bool) -> PathBuf {
    // `-` stays `-`, for the outputs check to refuse as it does for one benchmark.
    if !many || p.as_os_str() == "-" {
        return p.to_path_buf();
    }
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
    let ext = p.extension().and_then(|s| s.to_str()).unwrap_or("");
    let safe: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    p.with_file_name(format!("{stem}.{safe}.{ext}"))
}

/// A run's trace sink (if any) and the temporary files it writes.
type StagedSink = (Option<Box<dyn TraceSink>>, Vec<Staged>);

/// The trace and VCD sinks of one run, written under temporary names: commit the returned
/// [`Staged`] files when the run has finished (its sinks dropped).
fn open_sink(trace: Option<&Path>, vcd: Option<&Path>) -> Result<StagedSink, Failure> {
    let staged: Vec<Staged> = trace.iter().chain(vcd.iter()).map(|p| Staged::new(p)).collect();
    let mut paths = staged.iter().map(Staged::path);
    let trace = trace.and_then(|_| paths.next());
    let vcd = vcd.and_then(|_| paths.next());
    open_sink_at(trace, vcd).map(|s| (s, staged))
}

/// Gives staged outputs their final names.
fn commit_all(staged: Vec<Staged>) -> Result<(), Failure> {
    staged.into_iter().try_for_each(|s| s.commit().map_err(Failure::Run))
}

/// Checks that `trnsim run --trace` can write `p`: Perfetto (`.pftrace`, `.perfetto`,
/// `.perfetto-trace`: [`trnsim_traces::PERFETTO_EXTENSIONS`]) or Chrome JSON (`.json`), told by
/// its extension. A `.vcd` is refused pointing at `--vcd`, which writes the link waveforms.
fn run_trace_format(p: &Path) -> Result<(), String> {
    const ALLOWED: &str = ".pftrace, .perfetto, .perfetto-trace, .json";
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        ext if trnsim_traces::PERFETTO_EXTENSIONS.contains(&ext) || ext == "json" => Ok(()),
        "vcd" => Err(format!(
            "--trace {}: a run's link waveforms go to --vcd FILE.vcd (--trace takes {ALLOWED})",
            p.display()
        )),
        ext => Err(format!("--trace {}: unknown extension {ext:?} (allowed: {ALLOWED})", p.display())),
    }
}

fn open_sink_at(trace: Option<&Path>, vcd: Option<&Path>) -> Result<Option<Box<dyn TraceSink>>, Failure> {
    let mut sinks: Vec<Box<dyn TraceSink>> = Vec::new();
    if let Some(p) = trace {
        run_trace_format(p).map_err(Failure::Usage)?;
        let sink: Box<dyn TraceSink> = match p.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                Box::new(trnsim_traces::ChromeJsonWriter::create(p).map_err(|e| Failure::Usage(e.to_string()))?)
            }
            _ => Box::new(trnsim_traces::PerfettoWriter::create(p).map_err(|e| Failure::Usage(e.to_string()))?),
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

/// `--fidelity` as the models' setting (the flag's parser admits only "cycle" and "fast").
fn run_fidelity(s: &str) -> trnsim_mem::hbm::Fidelity {
    trnsim_mem::hbm::Fidelity::parse(s).unwrap_or_default()
}

fn cmd_run(mut a: RunArgs) -> Result<(), Failure> {
    if a.fidelity == "fast" {
        // Chips of a system take it as overrides; the benchmarks that build their own stacks
        // and cores (hbm-*, nc-*) take it as an option.
        let on_system = |n: &String| n == "e2e-llm-layer" || n.starts_with("tp-matmul-") || n == "moe-alltoall-144";
        let own = |n: &String| n.starts_with("hbm-") || n.starts_with("nc-");
        if a.benches.is_empty() || a.config.is_some() {
            return Err(Failure::Usage(
                "--fidelity fast: name the benchmarks (e2e-llm-layer, tp-matmul-N, moe-alltoall-144, hbm-*, nc-*)"
                    .into(),
            ));
        }
        if let Some(n) = a.benches.iter().find(|n| !on_system(n) && !own(n)) {
            return Err(Failure::Usage(format!(
                "--fidelity fast: {n} has no HBM or DMA to make fast (those that do: e2e-llm-layer, tp-matmul-N, moe-alltoall-144, hbm-*, nc-*)"
            )));
        }
        if a.benches.iter().all(on_system) {
            a.sets.insert(0, "chip.dma.fidelity=fast".into());
            a.sets.insert(0, "chip.hbm.fidelity=fast".into());
        } else if a.benches.iter().any(on_system) {
            return Err(Failure::Usage(
                "--fidelity fast: run e2e-llm-layer, tp-matmul-N and moe-alltoall-144 apart from hbm-* and nc-* (the first take it as --set overrides of their system)".into(),
            ));
        }
    }
    if !a.rtl.is_empty() {
        let on_system = |n: &String| n == "e2e-llm-layer" || n.starts_with("tp-matmul-") || n == "moe-alltoall-144";
        if a.benches.is_empty() || a.config.is_some() || a.workload.is_some() {
            return Err(Failure::Usage(
                "--rtl: name the benchmarks that run on a chip (e2e-llm-layer, tp-matmul-N, moe-alltoall-144); in a chip file, list the instances in its `rtl`".into(),
            ));
        }
        if let Some(n) = a.benches.iter().find(|n| !on_system(n)) {
            return Err(Failure::Usage(format!(
                "--rtl: {n} does not run on a chip system (those that do: e2e-llm-layer, tp-matmul-N, moe-alltoall-144)"
            )));
        }
        let list: Vec<String> = a.rtl.iter().map(|s| format!("{s:?}")).collect();
        a.sets.push(format!("chip.rtl=[{}]", list.join(", ")));
    }
    if let Some(w) = &a.workload {
        return cmd_run_workload(&a, w);
    }
    if a.compute.is_some() || a.gemm_efficiency.is_some() || a.op_cache.is_some() {
        return Err(Failure::Usage(
            "--compute, --gemm-efficiency and --op-cache time a workload's nodes: give --workload FILE".into(),
        ));
    }
    if let Some(kind) = system_file_kind(a.config.as_deref()) {
        return cmd_run_system_file(&a, kind);
    }
    if a.system.is_some() || !a.sets.is_empty() || !a.sweeps.is_empty() {
        return cmd_whatif(&a, a.benches.clone(), a.system.clone());
    }
    let mut names: Vec<String> = a.benches.clone();
    let default_suite = names.is_empty() && a.config.is_none();
    if default_suite {
        names = BENCHES.iter().map(|(n, _)| n.to_string()).collect();
    }
    for n in &names {
        // Families beyond the suite's members: kernel-random-graph:SEED, tp-matmul-N (any chip
        // count the shape splits over; tp::TpShape::chip_shape says which), dp-step-N[:...].
        let family = n.starts_with("kernel-random-graph:") || n.starts_with("tp-matmul-") || n.starts_with("dp-step-");
        if !BENCHES.iter().any(|(b, _)| b == n) && !family {
            let all: Vec<&str> = BENCHES.iter().map(|(b, _)| *b).collect();
            return Err(Failure::Usage(format!("unknown benchmark {n:?} (allowed: {})", all.join(", "))));
        }
        // A family member's parameters are checked before any benchmark runs or prints.
        check_family(n).map_err(Failure::Usage)?;
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
    // One benchmark at a time: progress on a terminal (never with parallel jobs).
    trnsim_benchmarks::progress::set_enabled(workers == 1);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let run_bench = |name: &String| -> Result<BenchResult, Failure> {
        let _span = tracing::info_span!("bench", name = name.as_str()).entered();
        let tp = a.trace.as_deref().map(|p| per_bench_path(p, name, total > 1));
        let vp = a.vcd.as_deref().map(|p| per_bench_path(p, name, total > 1));
        // Benchmarks that are not one simulation (sweeps, analytic benches) write no trace.
        let traceable =
            !matches!(name.as_str(), "sbuf-bandwidth" | "hbm-latency-sweep" | "nc-gemm-sweep" | "nc-dma-bandwidth")
                && (!name.starts_with("fabric-") || name.ends_with("-nodes"));
        if !traceable && (tp.is_some() || vp.is_some()) {
            eprintln!("note: {name} runs several simulations (a sweep or a study): it writes no trace or VCD");
        }
        let (tp, vp) = if traceable { (tp, vp) } else { (None, None) };
        let (sink, staged) = open_sink(tp.as_deref(), vp.as_deref())?;
        let signal_links = if vp.is_some() { LinkSelection::All } else { LinkSelection::None };
        let trace = sink.map(|s| (s, TraceOptions { link_occupancy: true, signal_links }));
        let opts = RunOpts { order: a.order, trace, progress: workers == 1, fidelity: run_fidelity(&a.fidelity) };
        let r = run_one(name, system.as_ref(), opts, a.plots.as_deref()).map_err(Failure::Run);
        commit_all(staged)?;
        let mut r = r?;
        trnsim_harness::whatif::add_builtin_energy(&mut r).map_err(Failure::Run)?;
        if workers > 1 {
            // Progress on stderr as each finishes (its rows print once those before it have).
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            eprintln!("[{n}/{}] {name}: {:.1} s", jobs.len(), r.speed.wall_s);
        }
        if let Some(p) = &tp {
            eprintln!("trace: {}", p.display());
        }
        Ok(r)
    };
    // Each benchmark's rows print as soon as it and those before it are done.
    print_header();
    results.extend(run_pool_emitting(&jobs, workers, run_bench, |_, r| print_result(r))?);
    print_full(&results, a.full);
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

/// Runs `jobs` on `workers` threads (one: in order, on this thread); results keep the jobs'
/// order. After a failure no more jobs start, and the first failure in job order is returned.
fn run_pool<J: Sync, R: Send>(
    jobs: &[J],
    workers: usize,
    run: impl Fn(&J) -> Result<R, Failure> + Sync,
) -> Result<Vec<R>, Failure> {
    run_pool_emitting(jobs, workers, run, |_, _| {})
}

/// [`run_pool`], calling `emit` on each result in job order as soon as it and every result
/// before it are done (so output streams while the order, and the output, stay the same).
fn run_pool_emitting<J: Sync, R: Send>(
    jobs: &[J],
    workers: usize,
    run: impl Fn(&J) -> Result<R, Failure> + Sync,
    emit: impl Fn(usize, &R) + Sync,
) -> Result<Vec<R>, Failure> {
    if workers <= 1 {
        let mut out = Vec::with_capacity(jobs.len());
        for (k, j) in jobs.iter().enumerate() {
            let r = run(j)?;
            emit(k, &r);
            out.push(r);
        }
        return Ok(out);
    }
    // The next result to emit: a worker that completes the head of the line emits every
    // consecutive finished result after it.
    let emitted = std::sync::Mutex::new(0usize);
    // A shared cursor hands out jobs in order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<R, Failure>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|sc| {
        for _ in 0..workers {
            sc.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(k) else { break };
                let r = run(job);
                let failed = r.is_err();
                *slots[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                if failed {
                    next.store(jobs.len(), std::sync::atomic::Ordering::Relaxed);
                }
                let mut head = emitted.lock().unwrap_or_else(|e| e.into_inner());
                while let Some(slot) = slots.get(*head) {
                    match &*slot.lock().unwrap_or_else(|e| e.into_inner()) {
                        Some(Ok(r)) => emit(*head, r),
                        _ => break,
                    }
                    *head += 1;
                }
            });
        }
    });
    let mut results = Vec::new();
    for slot in slots {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(r) => results.push(r?),
            None => break,
        }
    }
    Ok(results)
}

/// The kind of system file `config` is (chip, UltraServer or fabric), None for a system config
/// or no file. An unreadable file is left to the config loader, which locates the error.
fn system_file_kind(config: Option<&Path>) -> Option<&'static str> {
    let text = trnsim_kernel::input::read_text(config?).ok()?;
    match trnsim_system::chip::top_level_name(&text).as_deref() {
        Some("ChipSpec") => Some("a chip"),
        Some("UltraServerSpec") => Some("an UltraServer"),
        Some("UltraClusterSpec") => Some("an UltraCluster"),
        Some("TopologySpec") => Some("a fabric"),
        _ => None,
    }
}

/// `trnsim run --config FILE` of a chip, UltraServer or fabric: the --workload benchmarks on
/// it, or a one-line error saying which can run.
fn cmd_run_system_file(a: &RunArgs, kind: &str) -> Result<(), Failure> {
    let Some(path) = &a.config else { return Ok(()) };
    let file = path.display().to_string();
    if a.system.is_some() {
        return Err(Failure::Usage(format!("--config {file} is {kind}: it is the system; drop --system")));
    }
    if a.benches.is_empty() {
        let mut doc = trnsim_system::doc::SystemDoc::open(&file).map_err(Failure::Usage)?;
        for s in &a.sets {
            doc.set(s).map_err(Failure::Usage)?;
        }
        let sys = doc.resolve().map_err(Failure::Usage)?;
        return Err(Failure::Usage(format!(
            "{file} is {kind}: name the benchmarks to run on it (`trnsim run NAME --config {file}`; it can run: {}) or give --workload FILE",
            trnsim_harness::whatif::fitting(&sys)
        )));
    }
    cmd_whatif(a, a.benches.clone(), Some(file))
}

/// `trnsim run --workload FILE`: the workload on --system (or a --config system file; default
/// the Trn3 Gen2 UltraServer, or the Trn3 chip for one rank), once per sweep point.
fn cmd_run_workload(a: &RunArgs, path: &Path) -> Result<(), Failure> {
    use trnsim_harness::whatif;
    let code = |(m, c): (String, i32)| if c == 2 { Failure::Usage(m) } else { Failure::Run(m) };
    if !a.benches.is_empty() || a.threads.is_some() || a.mpi || a.vcd.is_some() {
        return Err(Failure::Usage(
            "--workload FILE runs alone (no benchmark names, --threads, --mpi or --vcd)".into(),
        ));
    }
    if !path.is_file() {
        let p = outputs::shown(path);
        let bench = BENCHES.iter().any(|(b, _)| Path::new(b) == path) || p.starts_with("tp-matmul-");
        let hint = if bench {
            format!(" ({p} is a benchmark: name it without a flag, `trnsim run {p}`)")
        } else {
            String::new()
        };
        return Err(Failure::Usage(format!("--workload {p}: cannot read: no such file{hint}")));
    }
    let w = crate::workload_cmd::load(path).map_err(code)?;
    let system = match (&a.system, &a.config) {
        (Some(s), None) => s.clone(),
        (None, Some(c)) => c.display().to_string(),
        (Some(_), Some(_)) => return Err(Failure::Usage("--system and --config name the same thing: give one".into())),
        (None, None) if w.w.ranks == 1 => "trn3-chip".into(),
        (None, None) => "trn3-gen2-ultraserver".into(),
    };
    // `workload.PATH=V` overrides the workload, anything else the system.
    let of_workload = |s: &str| s.starts_with("workload.").then(|| s.to_string());
    let mut base = trnsim_system::doc::SystemDoc::open(&system).map_err(Failure::Usage)?;
    let mut wsets = Vec::new();
    for s in &a.sets {
        match of_workload(s) {
            Some(ws) => wsets.push(ws),
            None => base.set(s).map_err(Failure::Usage)?,
        }
    }
    let w = w.with("--set", &wsets).map_err(Failure::Usage)?;
    let points = whatif::points(&a.sweeps).map_err(Failure::Usage)?;
    let workers = (a.jobs as usize).min(points.len()).max(1);
    // Points that set the same system values share a system; each distinct one is validated
    // here, and built again (a few at a time) as its points run.
    let systems =
        trnsim_harness::sweep_systems::PointSystems::new(&base, &points, |p| of_workload(p).is_none(), workers)
            .map_err(Failure::Usage)?;
    let mut loads = Vec::new();
    for p in &points {
        let ws: Vec<String> =
            p.iter().filter_map(|(path, v)| of_workload(path).map(|wp| format!("{wp}={v}"))).collect();
        // A point that sweeps no workload field runs the workload as loaded (no copy a point).
        loads.push(if ws.is_empty() { None } else { Some(w.with("--sweep", &ws).map_err(Failure::Usage)?) });
    }
    let jobs: Vec<(usize, &trnsim_workloads::format::Checked)> =
        loads.iter().enumerate().map(|(k, l)| (k, l.as_ref().unwrap_or(&w))).collect();
    trnsim_benchmarks::progress::set_enabled(workers == 1);
    let done = std::sync::atomic::AtomicUsize::new(0);
    // The --jobs threads not running points simulate a point's kernel programs.
    let ops = crate::workload_cmd::op_runs(Some((a.jobs as usize / workers).max(1) as u32), a.op_cache.as_deref())
        .map_err(code)?;
    let mut runs = run_pool(&jobs, workers, |&(k, w)| {
        let system = systems.get(k).map_err(Failure::Usage)?;
        let (doc, sys) = (&system.0, &system.1);
        let opts = trnsim_harness::workload::Options {
            efficiency: a.gemm_efficiency,
            compute: a.compute.unwrap_or_default(),
            ops: ops.clone(),
        };
        let r = crate::workload_cmd::run_resolved(w, doc, sys, &opts).map_err(code)?;
        if let Some(t) = a.trace.as_deref().filter(|_| k == 0) {
            // Refused before the report prints: a trace past its range would be wrong.
            trnsim_harness::workload::traceable(&r.report)
                .map_err(|e| Failure::Usage(format!("--trace {}: {e}", outputs::shown(t))))?;
        }
        if points.len() > 1 {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            let vals: Vec<String> = points[k].iter().map(|(k, v)| format!("{k}={v}")).collect();
            eprintln!("[{n}/{}] {} on {} [{}]", points.len(), w.w.name, doc.name(), vals.join(","));
        } else {
            print!("{}", trnsim_harness::workload::to_text(&r, &doc.name()));
        }
        Ok(r)
    })?;
    crate::workload_cmd::note_op_cache(&ops);
    let label = |p: &Vec<(String, String)>| p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
    if points.len() > 1 {
        let named: Vec<(String, trnsim_harness::workload::WorkloadRun)> =
            points.iter().map(label).zip(runs.drain(..)).collect();
        print!("{}", crate::workload_cmd::side_by_side(&w.w.name, &named, a.collectives));
        runs = named.into_iter().map(|x| x.1).collect();
    }
    if let (Some(t), Some(r)) = (&a.trace, runs.first()) {
        let staged = Staged::new(t);
        let mut sink = trnsim_traces::create_sink(staged.path()).map_err(|e| Failure::Usage(e.to_string()))?;
        let peak = systems.get(0).map_err(Failure::Usage)?.1.chip().map(|c| c.peak_bf16_tflops()).unwrap_or(0.0);
        trnsim_harness::workload::trace(
            loads[0].as_ref().unwrap_or(&w),
            &r.report,
            peak,
            r.energy.as_ref(),
            sink.as_mut(),
        )
        .map_err(Failure::Run)?;
        drop(sink);
        staged.commit().map_err(Failure::Run)?;
        eprintln!("trace: {}", t.display());
    }
    if let Some(dir) = &a.plots {
        std::fs::create_dir_all(dir).map_err(|e| Failure::Usage(format!("--plots {}: {e}", dir.display())))?;
        let reports: Vec<(String, &trnsim_workloads::exec::Report)> =
            points.iter().map(label).zip(runs.iter().map(|r| &r.report)).collect();
        let p = dir.join(format!("{}-breakdown.svg", outputs::file_safe(&w.w.name)));
        outputs::write_plot(&p, trnsim_harness::workload::breakdown_svg(&w.w.name, &reports).as_bytes())
            .map_err(|e| Failure::Run(format!("--plots {}: {e}", p.display())))?;
        eprintln!("plot: {}", p.display());
    }
    if let Some(p) = &a.json {
        let rows: Vec<serde_json::Value> = points
            .iter()
            .zip(&runs)
            .map(|(pt, r)| {
                let set: serde_json::Map<String, serde_json::Value> =
                    pt.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
                serde_json::json!({ "set": set, "figures": trnsim_harness::workload::headline(r), "report": r.report, "energy": r.energy })
            })
            .collect();
        let doc = serde_json::json!({ "trnsim": env!("CARGO_PKG_VERSION"), "workload": w.w.name, "system": base.name(), "overrides": a.sets, "points": rows });
        let body = outputs::json_text(&doc).map_err(Failure::Run)?;
        outputs::write_atomic(p, body.as_bytes()).map_err(|e| Failure::Run(format!("--json {}: {e}", p.display())))?;
    }
    Ok(())
}

/// Benchmarks on a chosen system, with overrides and sweeps (harness/src/whatif.rs).
fn cmd_whatif(a: &RunArgs, names: Vec<String>, system: Option<String>) -> Result<(), Failure> {
    use trnsim_harness::whatif;
    if a.mpi {
        return Err(Failure::Usage(format!(
            "--system, --set and --sweep run in one process (no --mpi; --threads splits {})",
            whatif::PARTITIONABLE_ON_SYSTEM
        )));
    }
    if names.is_empty() {
        return Err(Failure::Usage(format!(
            "name the benchmarks to run on the system (those that can: {})",
            whatif::names()
        )));
    }
    let jobs = whatif::jobs(&names, system.as_deref(), &a.sets, &a.sweeps).map_err(Failure::Usage)?;
    if let Some(threads) = a.threads {
        return whatif_partitioned(a, &jobs, threads);
    }
    let workers = (a.jobs as usize).min(jobs.len()).max(1);
    let many = jobs.len() > 1;
    trnsim_benchmarks::progress::set_enabled(workers == 1 && !many);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results = run_pool(&jobs, workers, |job| {
        let tp = a.trace.as_deref().map(|p| per_bench_path(p, &job.label, many));
        let vp = a.vcd.as_deref().map(|p| per_bench_path(p, &job.label, many));
        let (sink, staged) = open_sink(tp.as_deref(), vp.as_deref())?;
        let signal_links = if vp.is_some() { LinkSelection::All } else { LinkSelection::None };
        let trace = sink.map(|s| (s, TraceOptions { link_occupancy: true, signal_links }));
        let opts =
            RunOpts { order: a.order, trace, progress: workers == 1 && !many, fidelity: run_fidelity(&a.fidelity) };
        let r = whatif::run(job, opts, a.plots.as_deref()).map_err(Failure::Run);
        commit_all(staged)?;
        let r = r?;
        let k = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if many {
            eprintln!("[{k}/{}] {} on {}: done in {:.1} s", jobs.len(), job.label, job.system, r.speed.wall_s);
        }
        Ok(r)
    })?;
    whatif_output(a, &jobs, &results)
}

/// `trnsim run --threads N` with --system, --set or --sweep: each point split by chip on N
/// threads, one after another (each shows its progress on a terminal).
fn whatif_partitioned(a: &RunArgs, jobs: &[trnsim_harness::whatif::Job], threads: u32) -> Result<(), Failure> {
    use trnsim_harness::whatif;
    if a.vcd.is_some() || a.trace.is_some() {
        return Err(Failure::Usage(
            "--threads on a system writes no trace or VCD (partitioned runs of whole chips are not traced): trace the serial run".into(),
        ));
    }
    if a.jobs > 1 {
        return Err(Failure::Usage(
            "--threads runs one point at a time, split over its threads: give --jobs or --threads, not both".into(),
        ));
    }
    if let Some(why) = jobs.iter().find_map(whatif::cannot_split) {
        return Err(Failure::Usage(why));
    }
    warn_oversubscribed(threads);
    trnsim_benchmarks::progress::set_enabled(true);
    let mut results = Vec::with_capacity(jobs.len());
    for (k, job) in jobs.iter().enumerate() {
        let (r, table) = whatif::run_partitioned(job, a.order, threads, a.partition.as_ref(), a.plots.as_deref())
            .map_err(Failure::Run)?;
        eprint!("{}: {table}", job.label);
        if jobs.len() > 1 {
            eprintln!("[{}/{}] {} on {}: done in {:.1} s", k + 1, jobs.len(), job.label, job.system, r.speed.wall_s);
        }
        results.push(r);
    }
    whatif_output(a, jobs, &results)
}

/// The table, plots and JSON of what-if runs.
fn whatif_output(
    a: &RunArgs,
    jobs: &[trnsim_harness::whatif::Job],
    results: &[trnsim_benchmarks::suite::BenchResult],
) -> Result<(), Failure> {
    use trnsim_harness::whatif;
    if a.sweeps.is_empty() {
        print_results(results, a.full);
    } else {
        print!("{}", whatif::table(jobs, results, 6));
        if a.full {
            print_results(results, true);
        }
    }
    if let Some(dir) = a.plots.as_deref().filter(|_| !a.sweeps.is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Failure::Usage(format!("--plots {}: {e}", dir.display())))?;
        for (name, svg) in whatif::plots(jobs, results) {
            let p = dir.join(name);
            outputs::write_plot(&p, svg.as_bytes())
                .map_err(|e| Failure::Run(format!("--plots {}: {e}", p.display())))?;
        }
        eprintln!("plots: {}/sweep-*.svg", dir.display());
    }
    if let Some(p) = &a.json {
        let points: Vec<serde_json::Value> = jobs
            .iter()
            .map(|j| {
                let set: serde_json::Map<String, serde_json::Value> =
                    j.point.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
                serde_json::json!({ "benchmark": j.bench, "label": j.label, "system": j.system, "set": set })
            })
            .collect();
        let doc = serde_json::json!({
            "trnsim": env!("CARGO_PKG_VERSION"),
            "overrides": a.sets,
            "points": points,
            "benchmarks": results,
        });
        let body = outputs::json_text(&doc).map_err(|e| Failure::Run(format!("{}: {e}", p.display())))?;
        outputs::write_atomic(p, body.as_bytes()).map_err(|e| Failure::Run(format!("--json {}: {e}", p.display())))?;
    }
    Ok(())
}

/// The partitionable systems a `--threads` or `--mpi` run asks for (checked).
fn partitioned_names(a: &RunArgs, names: &[String]) -> Result<Vec<String>, Failure> {
    if a.config.is_some() || a.vcd.is_some() {
        return Err(Failure::Usage("--threads and --mpi work with named partitionable benchmarks only (no --config, no --vcd: link waveforms need a serial run)".into()));
    }
    let names: Vec<String> = if a.benches.is_empty() {
        trnsim_benchmarks::parallel::PARTITIONABLE
            .iter()
            .filter(|(n, _)| !n.contains(':') && !n.ends_with("-N"))
            .map(|(n, _)| n.to_string())
            .collect()
    } else {
        names.to_vec()
    };
    for n in &names {
        trnsim_benchmarks::parallel::system(n, a.order).map_err(Failure::Usage)?;
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
    // Rank 0's progress, if its standard error is a terminal (under `mpirun` it is a pipe:
    // nothing shows); one benchmark at a time.
    trnsim_benchmarks::progress::set_enabled(rank == 0);
    let mut results = Vec::new();
    for name in names {
        let tp = a.trace.as_deref().map(|p| per_bench_path(p, name, names.len() > 1));
        let (sink, staged) = if rank == 0 { open_sink(tp.as_deref(), None)? } else { (None, Vec::new()) };
        let tracing = tp.as_ref().map(|_| TraceOptions::default());
        let sys = trnsim_benchmarks::parallel::system(name, a.order).map_err(Failure::Usage)?;
        let rule = a.partition.clone().unwrap_or_else(|| sys.default_rule(ranks));
        let run = sys.run_transport(t, &rule, tracing.as_ref(), sink).map_err(Failure::Run);
        commit_all(staged)?;
        let run = run?;
        if let Some((run, wall_s)) = run {
            let (mut r, table) = trnsim_benchmarks::parallel::result(name, &sys, run, wall_s, Some(("ranks", ranks)))
                .map_err(Failure::Run)?;
            trnsim_harness::whatif::add_builtin_energy(&mut r).map_err(Failure::Run)?;
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

/// Notes when `threads` exceed the host's cores: the partitions then take turns on one
/// thread per core, which is slower for most systems but faster for whole chips.
fn warn_oversubscribed(threads: u32) {
    if let Some(cores) = trnsim_benchmarks::parallel::workers_for(threads) {
        eprintln!(
            "note: --threads {threads} is more than this host's {cores} cores: the {threads} partitions run on {cores} threads, each taking several in turn. Whole chips (tp-matmul-N, moe-alltoall-144, in either fidelity) often run faster so, each partition's chips staying in cache through a window; other systems run slower than with fewer partitions (docs/parallel.md)"
        );
    }
}

/// `trnsim run --threads N`: the named partitionable systems, split and run on N threads.
fn run_partitioned(a: &RunArgs, names: &[String], threads: u32) -> Result<(), Failure> {
    let names = partitioned_names(a, names)?;
    if a.jobs > 1 {
        return Err(Failure::Usage(
            "--threads runs one benchmark at a time, split over its threads: give --jobs or --threads, not both".into(),
        ));
    }
    warn_oversubscribed(threads);
    // One benchmark at a time: each shows its progress on a terminal.
    trnsim_benchmarks::progress::set_enabled(true);
    let mut results = Vec::new();
    for name in &names {
        let tp = a.trace.as_deref().map(|p| per_bench_path(p, name, names.len() > 1));
        let (sink, staged) = open_sink(tp.as_deref(), None)?;
        let trace = sink.map(|s| (s, TraceOptions::default()));
        let r = trnsim_benchmarks::parallel::run_named(name, a.order, threads, a.partition.as_ref(), trace)
            .map_err(Failure::Run);
        commit_all(staged)?;
        let (mut r, table) = r?;
        trnsim_harness::whatif::add_builtin_energy(&mut r).map_err(Failure::Run)?;
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

/// The parameters of a family member (`tp-matmul-N`, `kernel-random-graph:SEED`,
/// `dp-step-N[:...]`) as its run reads them; other names pass.
fn check_family(name: &str) -> Result<(), String> {
    if name.starts_with("tp-matmul-") {
        trnsim_benchmarks::tp::check_named(name)
    } else if name.starts_with("kernel-random-graph:") {
        trnsim_benchmarks::random_graph::seed_of(name).map(|_| ())
    } else if name.starts_with("dp-step-") {
        trnsim_benchmarks::dp::DpStep::parse(name).map(|_| ())
    } else {
        Ok(())
    }
}

fn run_one(
    name: &str,
    system: Option<&config::System>,
    opts: RunOpts,
    plots: Option<&Path>,
) -> Result<BenchResult, String> {
    let ring = |tokens| RingParams { modules: 64, tokens, depth: 4 };
    match name {
        "sbuf-bandwidth" => trnsim_benchmarks::memory::sbuf_bandwidth(),
        "fabric-allreduce-nl72x2-nodes" | "fabric-allreduce-ultracluster-nodes" => suite::run_partitionable(name, opts),
        n if n.starts_with("kernel-random-graph:") || n.starts_with("dp-step-") => suite::run_partitionable(name, opts),
        n if n.starts_with("fabric-") => trnsim_benchmarks::fabric::run_named(n, plots),
        "e2e-llm-layer" => trnsim_benchmarks::e2e::run_named(name, opts.order, opts.trace),
        n if n.starts_with("tp-matmul-") => trnsim_benchmarks::tp::run_named(n, opts.order, opts.trace, plots),
        "moe-alltoall-144" => trnsim_benchmarks::moe::run_named(name, opts.order, opts.trace),
        n if n.starts_with("nc-") => {
            trnsim_benchmarks::neuroncore::run_named_at(n, opts.order, opts.trace, opts.fidelity)
        }
        n if n.starts_with("hbm-") => {
            trnsim_benchmarks::memory::run_named_at(n, opts.order, opts.trace, plots, opts.fidelity)
        }
        "kernel-ring" => suite::run_ring(name, ring(16), 200_000, opts),
        "kernel-ring-sparse" => suite::run_ring(name, ring(2), 200_000, opts),
        "demo" => {
            let sys = config::parse("models/configs/demo.ron (built in)", trnsim_harness::system::DEMO_RON)
                .map_err(|e| e.to_string())?;
            trnsim_harness::system::run_system(name, &sys, opts)
        }
        _ => match system {
            Some(sys) => trnsim_harness::system::run_system(name, sys, opts),
            None => Err(format!("unknown benchmark {name:?}")),
        },
    }
}

fn print_results(results: &[BenchResult], full: bool) {
    print_header();
    results.iter().for_each(print_result);
    print_full(results, full);
}

fn print_header() {
    println!("{:<22} {:<44} {:>16}", "benchmark", "figure", "value");
}

/// One benchmark's rows, flushed (stdout may be a pipe, which Rust buffers by line anyway).
fn print_result(r: &BenchResult) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    for (k, v) in &r.headline {
        let _ = writeln!(out, "{:<22} {:<44} {:>16}", r.name, k, fmt_num(*v));
    }
    // Host speed: kernel ticks per second only for benchmarks that ran the kernel.
    let ticks = if r.speed.ticks_per_s > 0.0 { format!("{:.3e}", r.speed.ticks_per_s) } else { "n/a".into() };
    let wall = if r.speed.wall_s >= 0.001 { format!("{:.3}", r.speed.wall_s) } else { "<0.001".into() };
    let _ = writeln!(out, "{:<22} {:<44} {:>16}", r.name, "host: wall_s / ticks_per_s", format!("{wall} / {ticks}"));
    let _ = out.flush();
}

/// With --full, every benchmark's statistics tables.
fn print_full(results: &[BenchResult], full: bool) {
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
    // Written straight from the results (fields in name order, as a JSON value would print
    // them), not through a JSON value: a cluster's statistics would be copied whole.
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        benchmarks: &'a [BenchResult],
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<serde_json::Value>,
        trnsim: &'static str,
    }
    let summary = (!summary.is_empty()).then(|| serde_json::json!(summary));
    let doc = Doc { benchmarks: results, summary, trnsim: env!("CARGO_PKG_VERSION") };
    // Streamed to the file (a cluster's results are tens of megabytes of text), then renamed.
    let staged = outputs::Staged::new(p);
    let io = |e: std::io::Error| Failure::Run(format!("--json {}: {e}", p.display()));
    let mut w = std::io::BufWriter::new(std::fs::File::create(staged.path()).map_err(io)?);
    outputs::to_json_writer(&mut w, &doc).map_err(|e| Failure::Run(format!("--json {}: {e}", p.display())))?;
    std::io::Write::write_all(&mut w, b"\n").map_err(io)?;
    std::io::Write::flush(&mut w).map_err(io)?;
    drop(w);
    staged.commit().map_err(|e| Failure::Run(format!("--json {e}")))
}

/// The widest `bench nc-gemm --n`: B streams through SBUF in 512-column blocks, and the
/// generated program grows with N.
const MAX_GEMM_N: u32 = 65536;

fn cmd_nc_gemm(m: u32, k: u32, n: u32, trace: Option<PathBuf>) -> Result<(), Failure> {
    if m == 0 || k == 0 || n == 0 || !m.is_multiple_of(128) || !k.is_multiple_of(128) || !n.is_multiple_of(512) {
        return Err(Failure::Usage(format!(
            "--m {m} --k {k} --n {n}: M and K must be positive multiples of 128, N of 512"
        )));
    }
    let a_bytes = u64::from(k / 128) * u64::from(m) * 2;
    if m > 512 || a_bytes > 96 * 1024 {
        return Err(Failure::Usage(format!(
            "--m {m} --k {k}: A (K/128 x M BF16 per partition = {} KiB) must fit in 96 KiB of SBUF and M <= 512 (four PSUM banks per N block)",
            a_bytes / 1024
        )));
    }
    if n > MAX_GEMM_N {
        return Err(Failure::Usage(format!(
            "--n {n} is out of range (allowed: 512..={MAX_GEMM_N}, a multiple of 512)"
        )));
    }
    use trnsim_benchmarks::neuroncore as nc;
    let program = nc::assemble_text(&format!("gemm {m}x{k}x{n} (generated)"), &nc::tiled_gemm_program(m, k, n))
        .map_err(Failure::Run)?;
    let staged = trace.as_deref().map(Staged::new);
    let sink = match &staged {
        Some(s) => Some((
            trnsim_traces::create_sink(s.path()).map_err(|e| Failure::Usage(e.to_string()))?,
            TraceOptions { link_occupancy: false, signal_links: LinkSelection::None },
        )),
        None => None,
    };
    let run = nc::run_cores(&program, 1, TickOrder::Structural, sink).map_err(Failure::Run);
    commit_all(staged.into_iter().collect())?;
    let (sim, ids) = run?;
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
            trnsim_benchmarks::parallel::system(&system, TickOrder::Structural).map_err(Failure::Usage)?;
            threads.iter().for_each(|&t| warn_oversubscribed(t));
            let out = trnsim_benchmarks::parallel::bench(&system, &threads, partition.as_ref(), reps)
                .map_err(Failure::Run)?;
            print!("{out}");
            return Ok(());
        }
        BenchCmd::KernelRing { modules, tokens, depth, cycles, json } => (modules, tokens, depth, cycles, json),
    };
    if u64::from(tokens) > u64::from(modules) * u64::from(depth) {
        return Err(Failure::Usage(format!("--tokens {tokens} does not fit in --modules {modules} x --depth {depth}")));
    }
    // Measured: about 2.7 KiB per module (component, link, trace track) and 80 B per token.
    let bytes = u64::from(modules) * 3 * 1024 + u64::from(tokens) * 96;
    trnsim_benchmarks::limits::check_fits(&format!("--modules {modules} --tokens {tokens}"), bytes)
        .map_err(Failure::Usage)?;
    let p = RingParams { modules, tokens, depth };
    let opts = RunOpts { order: TickOrder::Structural, trace: None, progress: true, fidelity: Default::default() };
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
        outputs::write_atomic(&p, (out.to_string() + "\n").as_bytes())
            .map_err(|e| Failure::Run(format!("--json {}: {e}", p.display())))?;
    }
    Ok(())
}

fn cmd_paths(system: &str, sets: &[String]) -> Result<(), Failure> {
    let mut doc = trnsim_system::doc::SystemDoc::open(system).map_err(Failure::Usage)?;
    for s in sets {
        doc.set(s).map_err(Failure::Usage)?;
    }
    doc.resolve().map_err(Failure::Usage)?;
    for p in doc.paths() {
        let v = doc.get(&p).unwrap_or_default();
        let v =
            if v.len() > 60 { format!("{}...", &v[..v.char_indices().nth(57).map_or(v.len(), |c| c.0)]) } else { v };
        println!("{p:<56} {v}");
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
