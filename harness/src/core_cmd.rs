//! `trnsim core`: run a NeuronCore assembly program on one or more cores (with HBM3E stacks for
//! its DMAs) and print per-engine statistics.

use clap::Args;
use std::path::PathBuf;
use trnsim_benchmarks::neuroncore::{assemble_for, run_cores_on};
use trnsim_benchmarks::outputs::Staged;
use trnsim_core::engine::EngineUnit;
use trnsim_kernel::{Dur, LinkSelection, TickOrder, TraceOptions};
use trnsim_mem::hbm::Fidelity;

/// Arguments of `trnsim core`.
#[derive(Args, Debug)]
pub struct CoreArgs {
    /// The program: one `.engine NAME` section per engine (see docs/isa.md).
    program: PathBuf,
    /// Run this many copies of the program, one per core (two cores share an HBM3E stack).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    cores: u32,
    /// Write a Perfetto trace (.pftrace, .perfetto, .perfetto-trace), Chrome JSON (.json) or
    /// waveforms (.vcd): a track per engine, DMA engine and HBM pseudo-channel, flows from
    /// semaphore signals and DMA starts.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print every statistic.
    #[arg(long)]
    full: bool,
    /// The NeuronCore: a preset (nc-v2, nc-v3, nc-v4, nc-v5; `trnsim describe core`) or a core
    /// file (FILE.ron or FILE.json). The program is checked against its partitions and SBUF size.
    #[arg(long, value_name = "NAME|FILE", default_value = "nc-v4")]
    core: String,
    /// Stop a program that has not halted after this much simulated time, with an error naming
    /// the engine and the source line it was at (range 1ns..=1s; a Trn3 core runs ~1.4 million
    /// cycles per millisecond; the default, 10ms, is ~14 million cycles).
    #[arg(long, value_name = "TIME", default_value = "10ms", value_parser = parse_max_sim_time)]
    max_sim_time: Dur,
}

/// `--max-sim-time`: a duration such as "100ms" in 1ns..=1s.
pub(crate) fn parse_max_sim_time(s: &str) -> Result<Dur, String> {
    let d: Dur = s.parse().map_err(|e: trnsim_kernel::QuantityError| e.to_string())?;
    if d < Dur::from_ns(1) || d > Dur::from_ms(1000) {
        return Err(format!("{d} is out of range (allowed: 1ns..=1s)"));
    }
    Ok(d)
}

impl CoreArgs {
    /// (inputs, outputs) named on the command line, with their flags.
    pub(crate) fn io_paths(&self) -> trnsim_benchmarks::outputs::IoPaths {
        let mut inputs = vec![("PROGRAM", self.program.clone())];
        if trnsim_system::chip::core_file::is_path(&self.core) {
            inputs.push(("--core", PathBuf::from(&self.core)));
        }
        (inputs, self.trace.iter().map(|p| ("--trace", p.clone())).collect())
    }
}

/// Runs `trnsim core`; Err((message, exit code)).
pub fn run(a: CoreArgs) -> Result<(), (String, i32)> {
    let text = trnsim_kernel::input::read_text(&a.program)
        .map_err(|e| (format!("cannot read {}: {e}", a.program.display()), 2))?;
    let (file, core_text) =
        trnsim_system::chip::core_file::find(&a.core, "").map_err(|e| (format!("--core: {e}"), 2))?;
    let core = trnsim_system::chip::core_file::parse(&file, &core_text).map_err(|e| (e.to_string(), 2))?;
    let core = std::sync::Arc::new(core);
    let program = assemble_for(&a.program.display().to_string(), &text, &core).map_err(|e| (e, 2))?;
    let staged = a.trace.as_deref().map(Staged::new);
    let trace = match &staged {
        Some(s) => Some((
            trnsim_traces::create_sink(s.path()).map_err(|e| (e.to_string(), 2))?,
            TraceOptions { link_occupancy: false, signal_links: LinkSelection::None },
        )),
        None => None,
    };
    let run = run_cores_on(
        &program,
        core,
        a.cores as usize,
        TickOrder::Structural,
        trace,
        a.max_sim_time,
        Fidelity::Cycle,
        &|_| {},
    );
    if let Some(s) = staged {
        s.commit().map_err(|e| (e, 1))?;
    }
    let (sim, ids) = run.map_err(|e| (e, 1))?;
    println!("{}: {} core(s), simulated {:.3} us", a.program.display(), a.cores, sim.now().as_ns_f64() / 1000.0);
    println!(
        "{:<14} {:>12} {:>12} {:>14} {:>12} {:>14} {:>10}",
        "engine", "data instrs", "control", "busy cycles", "utilization", "GFLOP", "dmas"
    );
    for core in &ids {
        for (e, id) in &core.engines {
            let u = sim.component::<EngineUnit>(*id).ok_or(("engine".to_string(), 1))?;
            let s = &u.stats;
            let span = s.last.saturating_sub(s.first.unwrap_or(0)).max(1);
            let name = format!("{}.{}", sim.component_names()[id.index()].split('.').next().unwrap_or(""), e);
            println!(
                "{name:<14} {:>12} {:>12} {:>14} {:>12} {:>14.3} {:>10}",
                s.instrs,
                s.control_instrs,
                s.busy_cycles,
                // An engine that ran no data instruction has no datapath utilization.
                if s.instrs == 0 {
                    "n/a".to_string()
                } else {
                    format!("{:.1}%", 100.0 * s.busy_cycles as f64 / span as f64)
                },
                s.flops as f64 / 1e9,
                s.dmas
            );
        }
    }
    if a.full {
        println!("\n{}", sim.report().to_table());
    }
    if let Some(p) = &a.trace {
        eprintln!("trace: {}", p.display());
    }
    Ok(())
}
