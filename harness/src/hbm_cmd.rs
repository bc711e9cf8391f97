//! `trnsim hbm`: one HBM stack driven by a request trace or a synthetic pattern.

use clap::Args;
use std::cell::RefCell;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::rc::Rc;
use trnsim_benchmarks::memory::{self, HbmSpec};
use trnsim_benchmarks::outputs::Staged;
use trnsim_harness::memtrace::{TraceError, TraceFormat, TraceReader};
use trnsim_kernel::{Dur, TickOrder};
use trnsim_mem::hbm::checker::Checker;
use trnsim_mem::hbm::cmdtrace::CmdTraceWriter;
use trnsim_mem::hbm::presets;
use trnsim_mem::hbm::traffic::{GenParams, Pattern, RequestSource, SourceReq, Synthetic, TrafficGen};
use trnsim_mem::hbm::{CommandSink, HbmStack, PagePolicy};

/// Bytes of one trace line when `--request-bytes` is not given: a cache line.
const TRACE_LINE_BYTES: u32 = 64;

/// Arguments of `trnsim hbm`.
#[derive(Args, Debug)]
pub struct HbmArgs {
    /// Stack: a preset (hbm2-2000, hbm3-5700, hbm3-6400, hbm3e-9600, hbm4-8000, hbm4-9600;
    /// `trnsim describe hbm`) or a stack file (FILE.ron or FILE.json, the fields of
    /// models/configs/mem/hbm/*.ron).
    #[arg(long, default_value = "hbm3-6400", value_name = "NAME|FILE")]
    preset: String,
    /// Request trace: DRAMsim3 (`0xADDR READ|WRITE cycle`) or Ramulator 2 (`LD|ST 0xADDR`)
    /// lines; `#` comments allowed. Without it, a synthetic --pattern runs.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Trace format: auto (detect from the first line; the default), dramsim3 or ramulator.
    #[arg(long)]
    format: Option<TraceFormat>,
    /// Bytes of one request (a power of two from the preset's burst, 32 B, to 4096): a trace
    /// line or synthetic request is the aligned block of this size holding its address, moved
    /// as consecutive bursts; `requests` counts these, `bursts` the bursts. Default: 64 (a
    /// cache line) for a trace, the burst for a synthetic pattern.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    request_bytes: Option<u32>,
    /// Synthetic pattern when no --trace: stream-read, stream-write, random, mix, same-bank.
    #[arg(long, default_value = "random", conflicts_with = "trace")]
    pattern: String,
    /// Synthetic requests to run (1..=10^12).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000), conflicts_with = "trace")]
    requests: u64,
    /// Seed of the synthetic pattern.
    #[arg(long, default_value_t = 1, conflicts_with = "trace")]
    seed: u64,
    /// Most bursts outstanding (the `port` requester; default 256).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    in_flight: Option<u32>,
    /// Most bursts offered per memory cycle (the `port` requester; default 16).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    width: Option<u32>,
    /// The requester: `port` (the open-loop generator of --width and --in-flight) or
    /// `trace-cpu`, the trace front ends of DRAMsim3 and Ramulator 2: one burst per memory
    /// cycle, no limit in flight (four times what the queues hold, so it never binds), and a
    /// full queue holds the whole stream (no intake buffer). `trace-cpu` sets --width,
    /// --in-flight and --intake-buffer, so it takes none of them. Default: `trace-cpu` with
    /// a --trace and none of those flags (the tools' own front end for their traces), `port`
    /// otherwise.
    #[arg(long)]
    requester: Option<String>,
    /// Row-buffer policy: open or closed.
    #[arg(long, default_value = "open")]
    page_policy: String,
    /// Refresh policy: per-bank, per-bank-hold (Ramulator 2.1's rule), all-bank, all-bank-flex
    /// (postpones and pulls in up to 8 REFs) or none.
    #[arg(long, default_value = "per-bank")]
    refresh: String,
    /// How the pseudo-channels' refreshes line up: staggered (spread evenly over the refresh
    /// interval) or simultaneous (every pseudo-channel in the same cycle, as Ramulator 2 and
    /// DRAMsim3 refresh).
    #[arg(long, default_value = "staggered")]
    refresh_schedule: String,
    /// Scheduler: frfcfs or fcfs.
    #[arg(long, default_value = "frfcfs")]
    scheduler: String,
    /// Address map, MSB first (docs/memory.md, "Address maps"), or a reference tool's by name
    /// (RoBaRaCoCh, ChRaBaRoCo, MOP4CLXOR, rorabgbachco). Default: ro-sid-ba-co-bg-pc-ch-co:1
    /// (channels interleaved every 64 B; the Trainium chips use ro-sid-ba-co-bg-pc-ch).
    #[arg(long)]
    address_map: Option<String>,
    /// Requests per pseudo-channel that may wait in its intake buffer when its queue is full
    /// (0..=4096; 0 = a full queue blocks the whole request stream, as DRAMsim3's and
    /// Ramulator 2's trace front ends do). Default: the controller default (128).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=4096))]
    intake_buffer: Option<u32>,
    /// Fidelity: cycle (controllers scheduling every command) or fast (each request's
    /// completion computed when it arrives; no commands, so no --cmd-trace or --check).
    #[arg(long, default_value = "cycle")]
    fidelity: String,
    /// Write every issued command (ACT/RD/WR/PRE/REF...) with its cycle to this file, one line
    /// per command, in cycle order.
    #[arg(long, value_name = "FILE")]
    cmd_trace: Option<PathBuf>,
    /// Replay every issued command through the independent JEDEC timing checker.
    #[arg(long)]
    check: bool,
    /// Energy table (RON, the shape of models/configs/mem/hbm-energy.ron: IDD currents, VDD
    /// and I/O pJ/bit per preset) instead of the built-in one; the run prints and writes
    /// energy by action and in total.
    #[arg(long, value_name = "FILE.ron")]
    energy: Option<PathBuf>,
    /// Print the preset (organization, timing, sources, estimates, the constraint table) and
    /// exit without running.
    #[arg(long)]
    describe: bool,
    /// Write the headline figures and statistics as JSON.
    #[arg(long, value_name = "FILE.json")]
    json: Option<PathBuf>,
}

impl HbmArgs {
    /// (inputs, outputs) named on the command line, with their flags.
    pub(crate) fn io_paths(&self) -> trnsim_benchmarks::outputs::IoPaths {
        let ins = self.trace.iter().map(|p| ("--trace", p.clone())).collect();
        let mut outs: Vec<(&'static str, PathBuf)> =
            self.cmd_trace.iter().map(|p| ("--cmd-trace", p.clone())).collect();
        outs.extend(self.json.iter().map(|p| ("--json", p.clone())));
        (ins, outs)
    }
}

/// A trace file's lines as requests; a bad line ends the stream and is kept in `error`.
struct FileSource {
    reader: TraceReader<BufReader<File>>,
    error: Rc<RefCell<Option<TraceError>>>,
}

impl RequestSource for FileSource {
    fn next_request(&mut self) -> Option<SourceReq> {
        match self.reader.next()? {
            Ok(r) => Some(SourceReq { addr: r.addr, write: r.write, cycle: r.cycle }),
            Err(e) => {
                *self.error.borrow_mut() = Some(e);
                None
            }
        }
    }
}

/// A source's requests of `line` bytes each (the aligned block holding the address), handed
/// on as the consecutive bursts that move them; counts the requests in `lines`.
struct Lines {
    src: Box<dyn RequestSource>,
    /// Bytes of one request (`--request-bytes`) and of one burst.
    line: u64,
    burst: u64,
    /// The current request's next burst, and the bursts it has left.
    next: SourceReq,
    left: u64,
    lines: Rc<std::cell::Cell<u64>>,
}

impl RequestSource for Lines {
    fn next_request(&mut self) -> Option<SourceReq> {
        if self.left == 0 {
            let r = self.src.next_request()?;
            self.next = SourceReq { addr: r.addr - r.addr % self.line, ..r };
            self.left = self.line / self.burst;
            self.lines.set(self.lines.get() + 1);
        }
        let out = self.next;
        self.next.addr += self.burst;
        self.left -= 1;
        Some(out)
    }
}

/// The requester a run uses: its name, bursts offered per cycle and most bursts in flight.
struct Requester {
    name: &'static str,
    width: u32,
    in_flight: u32,
}

/// The requester `a` asks for (see `--requester`), setting the intake buffer it implies.
fn requester(a: &HbmArgs, cfg: &mut trnsim_mem::hbm::StackConfig) -> Result<Requester, String> {
    let port_flags = a.width.is_some() || a.in_flight.is_some() || a.intake_buffer.is_some();
    let default = if a.trace.is_some() && !port_flags { "trace-cpu" } else { "port" };
    match a.requester.as_deref().unwrap_or(default) {
        "port" => Ok(Requester { name: "port", width: a.width.unwrap_or(16), in_flight: a.in_flight.unwrap_or(256) }),
        "trace-cpu" if port_flags => {
            Err("--requester trace-cpu sets --width, --in-flight and --intake-buffer: give none of them".into())
        }
        "trace-cpu" => {
            cfg.controller.intake_buffer = 0;
            let c = &cfg.controller;
            let held = u64::from(cfg.org.pcs()) * (u64::from(c.read_queue) + u64::from(c.write_queue));
            let in_flight = u32::try_from(held.saturating_mul(4).clamp(4096, 1_000_000)).unwrap_or(1_000_000);
            Ok(Requester { name: "trace-cpu", width: 1, in_flight })
        }
        o => Err(format!("--requester: unknown `{o}` (known: port, trace-cpu)")),
    }
}

/// Runs `trnsim hbm`; Err((message, exit code)).
pub fn run(a: HbmArgs) -> Result<(), (String, i32)> {
    let usage = |m: String| (m, 2);
    // A trace's flags without a trace would be ignored: refused instead.
    if a.format.is_some() && a.trace.is_none() {
        return Err(usage("--format reads a --trace FILE: give one (a synthetic --pattern has no format)".into()));
    }
    let p = &stack(&a.preset).map_err(usage)?;
    let mut cfg = memory::preset_cfg(p);
    cfg.controller.page_policy = match a.page_policy.as_str() {
        "open" => PagePolicy::Open,
        "closed" => PagePolicy::Closed,
        o => return Err(usage(format!("--page-policy: unknown `{o}` (known: open, closed)"))),
    };
    cfg.controller.refresh = a.refresh.clone();
    cfg.controller.refresh_schedule = trnsim_mem::hbm::refresh::RefreshSchedule::parse(&a.refresh_schedule)
        .ok_or_else(|| {
            let names: Vec<_> = trnsim_mem::hbm::refresh::SCHEDULES.iter().map(|s| s.0).collect();
            usage(format!("--refresh-schedule: unknown `{}` (known: {})", a.refresh_schedule, names.join(", ")))
        })?;
    cfg.controller.scheduler = a.scheduler.clone();
    if let Some(m) = &a.address_map {
        cfg.controller.address_map = m.clone();
    }
    if let Some(n) = a.intake_buffer {
        cfg.controller.intake_buffer = n;
    }
    let req = requester(&a, &mut cfg).map_err(usage)?;
    cfg.energy = memory::energy_spec(a.energy.as_deref(), &p.name).map_err(usage)?;
    let (width, in_flight) = (req.width, req.in_flight);
    cfg.fidelity = trnsim_mem::hbm::Fidelity::parse(&a.fidelity)
        .ok_or_else(|| usage(format!("--fidelity: unknown `{}` (known: cycle, fast)", a.fidelity)))?;
    if cfg.fidelity == trnsim_mem::hbm::Fidelity::Fast && (a.cmd_trace.is_some() || a.check) {
        return Err(usage("--fidelity fast issues no commands: --cmd-trace and --check need --fidelity cycle".into()));
    }
    cfg.validate().map_err(|e| usage(format!("--{}", e.replace("controller.", "").replace('_', "-"))))?;
    if a.describe {
        describe(p, &cfg);
        return Ok(());
    }
    let gen = GenParams { width, in_flight, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    let spec = HbmSpec {
        name: format!("hbm {}", p.name),
        cfg,
        stacks: 1,
        gen,
        order: TickOrder::Structural,
        limit: Dur::from_us(u64::MAX / 2_000_000),
    };
    let error = Rc::new(RefCell::new(None));
    let burst = u64::from(spec.cfg.org.access_bytes());
    let line = u64::from(a.request_bytes.unwrap_or(if a.trace.is_some() { TRACE_LINE_BYTES } else { burst as u32 }));
    if !line.is_power_of_two() || line < burst {
        return Err(usage(format!(
            "--request-bytes: {line} is not allowed (allowed: a power of two from the burst, {burst}, to 4096)"
        )));
    }
    let src: Box<dyn RequestSource> = match &a.trace {
        Some(path) => {
            let reader = TraceReader::open(path, a.format.unwrap_or(TraceFormat::Auto))
                .map_err(|e| usage(e.to_string()))?
                .with_capacity(spec.cfg.org.stack_bytes());
            Box::new(FileSource { reader, error: error.clone() })
        }
        None => {
            let pattern = Pattern::ALL.iter().find(|(_, n)| *n == a.pattern).map(|x| x.0).ok_or_else(|| {
                let names: Vec<_> = Pattern::ALL.iter().map(|x| x.1).collect();
                usage(format!("--pattern: unknown `{}` (known: {})", a.pattern, names.join(", ")))
            })?;
            let stack = HbmStack::new(&spec.cfg).map_err(usage)?;
            let (map, rows) = (stack.address_map(), spec.cfg.org.rows);
            Box::new(Synthetic::new(pattern, a.requests, a.seed, map.capacity(), line, map, rows))
        }
    };
    let lines = Rc::new(std::cell::Cell::new(0));
    let next = SourceReq { addr: 0, write: false, cycle: None };
    let src = Box::new(Lines { src, line, burst, next, left: 0, lines: lines.clone() });
    let (mut sinks, staged) = make_sinks(&a, &spec)?;
    let mut out = memory::run(&spec, vec![src], None, &mut |_| sinks.pop()).map_err(|e| (e, 1))?;
    if let Some(e) = error.borrow_mut().take() {
        return Err(usage(e.to_string()));
    }
    let stack = out.sim.component_mut::<HbmStack>(out.stacks[0]).ok_or(("no stack".to_string(), 1))?;
    let verdict = finish_sink(stack.take_command_sink(), &out.sim)?;
    if let Some(s) = staged {
        s.commit().map_err(|e| (e, 1))?;
    }
    let gen = out.sim.component::<TrafficGen>(out.gens[0]).ok_or(("no generator".to_string(), 1))?;
    let stats = &out.result.stats;
    // Requests that found their queue full (waited in an intake buffer or at the port): the
    // memory pushed back, so the requester's cap was not what bound it.
    let pushed_back =
        stats.int("hbm", "intake_buffered").unwrap_or(0) + stats.int("hbm", "port_stall_cycles").unwrap_or(0);
    let bw = out.result.headline.iter().find(|h| h.0 == "bandwidth_GBps");
    let notes = requester_notes(&req, &spec, gen, bw, pushed_back);
    let mut r = out.result;
    // `requests` counts the run's requests (trace lines, or synthetic requests of
    // --request-bytes), `bursts` what the stack moved.
    if let Some(k) = r.headline.iter().position(|h| h.0 == "requests") {
        let bursts = r.headline[k].1;
        r.headline[k].1 = lines.get() as f64;
        r.headline.insert(k + 1, ("bursts".into(), bursts));
    }
    println!("trnsim hbm: {} ({}), {}", p.name, p.description, source_name(&a, line));
    for n in &notes {
        println!("  {n}");
    }
    for (k, v) in &r.headline {
        // Counts as integers, measured quantities with three decimals.
        let v = if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { format!("{v:.3}") };
        println!("  {k:<24} {v:>14}");
    }
    let reqs = r.headline.iter().find(|h| h.0 == "requests").map_or(0.0, |h| h.1);
    println!("  {:<24} {:>14.3}", "sim_time_us", out.sim.now().as_ps() as f64 * 1e-6);
    println!("  {:<24} {:>14.3}", "host_cpu_s", r.speed.cpu_s);
    println!("  {:<24} {:>14.0}", "host_requests_per_cpu_s", reqs / r.speed.cpu_s.max(1e-9));
    print_energy(&r.stats);
    if let Some((v, _)) = &verdict {
        println!("  checker: {v}");
    }
    if let Some(path) = &a.json {
        let body = serde_json::json!({ "preset": p.name, "requester": req.name, "request_bytes": line,
            "notes": notes, "headline": r.headline, "stats": r.stats,
            "host_cpu_s": r.speed.cpu_s, "host_requests_per_cpu_s": reqs / r.speed.cpu_s.max(1e-9) });
        let text = trnsim_benchmarks::outputs::json_text(&body).map_err(|e| (e, 1))?;
        trnsim_benchmarks::outputs::write_atomic(path, text.as_bytes())
            .map_err(|e| (format!("--json {}: {e}", path.display()), 1))?;
    }
    match verdict {
        Some((v, bad)) if bad > 0 => Err((v, 1)),
        _ => Ok(()),
    }
}

/// The stack's energy by action and in total (uJ), and its mean power (mW), when it has them.
fn print_energy(stats: &trnsim_kernel::StatsReport) {
    let value = |name: &str| match stats.get("hbm", name) {
        Some(trnsim_kernel::StatValue::Float(v)) => Some(*v),
        _ => None,
    };
    let Some(total) = value("energy_pJ_total") else { return };
    let parts: Vec<String> = trnsim_mem::hbm::energy::ACTIONS
        .iter()
        .map(|a| format!("{a} {:.3}", value(&format!("energy_pJ_{a}")).unwrap_or(0.0) * 1e-6))
        .collect();
    println!("  {:<24} {:>14.3}", "energy_uJ", total * 1e-6);
    println!("    by action (uJ): {}", parts.join(", "));
    if let Some(mw) = value("power_mW_mean") {
        println!("  {:<24} {:>14.3}", "power_mW_mean", mw);
    }
}

fn source_name(a: &HbmArgs, line: u64) -> String {
    match &a.trace {
        Some(p) => format!("trace {}, {line} B per line", p.display()),
        None => format!("{} x {} of {line} B (seed {})", a.pattern, a.requests, a.seed),
    }
}

/// Share of the run the requester must have been held by its cap for the output to say the cap
/// bound the bandwidth (with fewer than 1 % of its requests finding their queue full: else
/// the memory pushed back and a larger cap would only lengthen the queues).
const CAP_BOUND_FRAC: f64 = 0.5;

/// What the output says about the requester: its name and limits, and when its in-flight cap
/// (by Little's law) or its one burst per cycle bound the bandwidth.
fn requester_notes(
    req: &Requester,
    spec: &HbmSpec,
    gen: &TrafficGen,
    bw: Option<&(String, f64)>,
    pushed_back: u64,
) -> Vec<String> {
    let burst = spec.cfg.org.access_bytes();
    let ns_per = 1000.0 / spec.cfg.timing.ck_mhz as f64;
    let mut notes = Vec::new();
    if req.name == "trace-cpu" {
        let bound = f64::from(burst) / ns_per;
        notes.push(format!(
            "requester: trace-cpu (the reference tools' trace front end: one {burst} B burst offered per CK, no cap in flight, a full queue holds the stream), at most {bound:.1} GB/s"
        ));
        if bw.is_some_and(|b| b.1 >= 0.95 * bound) {
            notes.push(format!("the requester bound the bandwidth: one burst per CK is {bound:.1} GB/s (the port requester, --width W --in-flight K, offers more)"));
        }
        return notes;
    }
    notes.push(format!("requester: port ({} bursts offered per CK, at most {} in flight)", req.width, req.in_flight));
    let active = gen.active_cycles().max(1) as f64;
    let held = gen.capped_cycles as f64 / active;
    let lat_ns = gen.latency.mean() * ns_per;
    if held >= CAP_BOUND_FRAC && pushed_back * 100 < gen.sent && lat_ns > 0.0 {
        let little = f64::from(req.in_flight) * f64::from(burst) / lat_ns;
        notes.push(format!(
            "the in-flight cap bound the bandwidth: it held the requester {:.1} % of the run; by Little's law {} x {burst} B / {lat_ns:.1} ns = {little:.1} GB/s, whatever the memory could do (raise --in-flight)",
            100.0 * held,
            req.in_flight
        ));
    }
    notes
}

/// The run's command sink, and the command trace's temporary file (renamed when complete).
type Sinks = (Vec<Box<dyn CommandSink>>, Option<Staged>);

fn make_sinks(a: &HbmArgs, spec: &HbmSpec) -> Result<Sinks, (String, i32)> {
    if a.check && a.cmd_trace.is_some() {
        return Err(("--check and --cmd-trace: choose one per run".into(), 2));
    }
    if a.check {
        return Ok((vec![Box::new(Checker::new(&spec.cfg.org, &spec.cfg.timing))], None));
    }
    if let Some(path) = &a.cmd_trace {
        let staged = Staged::new(path);
        let f = File::create(staged.path()).map_err(|e| (format!("--cmd-trace {}: {e}", path.display()), 2))?;
        // (The writer buffers: a second buffer here would be flushed only when dropped, where
        // a write error is lost.)
        let sink: Box<dyn CommandSink> = Box::new(CmdTraceWriter::new(f, &spec.cfg.preset, spec.cfg.timing.ck_mhz));
        return Ok((vec![sink], Some(staged)));
    }
    Ok((Vec::new(), None))
}

/// Finishes the run's command sink: the checker's verdict (text, violation count), or the
/// command-trace writer flushed.
fn finish_sink(
    sink: Option<Box<dyn CommandSink>>,
    sim: &trnsim_kernel::Simulation,
) -> Result<Option<(String, u64)>, (String, i32)> {
    let Some(sink) = sink else { return Ok(None) };
    let any: Box<dyn std::any::Any> = sink;
    let any = match any.downcast::<Checker>() {
        Ok(mut c) => {
            let end = sim.clock(trnsim_kernel::ClockId::first()).edge_index_at_or_after(sim.now());
            c.finish(end);
            let first = c.violations().first().map(|v| format!("; first: {v}")).unwrap_or_default();
            let text = format!("{} violations in {} commands{first}", c.violation_count(), c.commands_checked());
            return Ok(Some((text, c.violation_count())));
        }
        Err(a) => a,
    };
    if let Ok(w) = any.downcast::<CmdTraceWriter<File>>() {
        w.finish().map_err(|e| (format!("--cmd-trace: {e}"), 1))?;
    }
    Ok(None)
}

/// `--preset NAME|FILE`: a built-in stack, or a stack file read and checked (its errors
/// located in it).
fn stack(name: &str) -> Result<presets::StackSpec, String> {
    use trnsim_system::chip::stack_file;
    if stack_file::is_path(name) {
        return stack_file::load(name, "");
    }
    presets::find(name)
        .cloned()
        .ok_or_else(|| format!("--preset: unknown `{name}` (known: {}, or a stack file's path)", presets::names()))
}

fn describe(p: &presets::Preset, cfg: &trnsim_mem::hbm::StackConfig) {
    let (o, t) = (&cfg.org, &cfg.timing);
    println!("{}: {}", p.name, p.description);
    println!("source: {}", p.source);
    for e in &p.estimated {
        println!("estimate: {e}");
    }
    println!(
        "organization: {} channels x {} pseudo-channels x {} bit, {} SIDs x {} bank groups x {} banks, {} rows x {} columns, BL{}, {} B per access, {} GiB",
        o.channels, o.pseudo_channels, o.dq_bits, o.sids, o.bank_groups, o.banks_per_group, o.rows, o.columns,
        o.burst_length, o.access_bytes(), o.stack_bytes() >> 30
    );
    println!(
        "peak: {:.1} GB/s per pseudo-channel, {:.1} GB/s per stack",
        p.pc_peak_bytes_per_s() / 1e9,
        p.stack_peak_bytes_per_s() / 1e9
    );
    println!("timing (CK = {} MHz): {}", t.ck_mhz, ron::to_string(t).unwrap_or_default());
    println!("controller: {}", ron::to_string(&cfg.controller).unwrap_or_default());
    println!("constraint table (scope, preceding -> following, cycles):");
    for c in trnsim_mem::hbm::constraints(t) {
        let names = |s: trnsim_mem::hbm::CmdSet| s.iter().map(|c| c.name()).collect::<Vec<_>>().join("|");
        let w = if c.window > 1 { format!(" (window {})", c.window) } else { String::new() };
        let scope = format!("{:?}", c.scope);
        println!(
            "  {:<10} {scope:<9} {:>10} -> {:<24} {:>5}{w}",
            c.name,
            names(c.preceding),
            names(c.following),
            c.cycles
        );
    }
}
