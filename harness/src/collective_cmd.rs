//! `trnsim collective`: one collective over a range of sizes on any system's fabric, printed
//! as the Neuron SDK's nccom-test prints it (or as nccl-tests does, `--format nccl-tests`), so
//! a simulated table can be held beside a measured one.
//!
//! Sizes are per rank, as both tools take them: the all-reduce input, the all-gather output,
//! the reduce-scatter input, the all-to-all send buffer, the broadcast buffer, the permute
//! buffer. `algbw = size / time`, `busbw = algbw x` the operation's bus factor
//! (`trnsim_fabric::collective::Op::busbw_factor`). Each size is one simulated run of the
//! packet-level fabric; there is no warm-up and no run-to-run noise, so nccl-tests' in-place
//! columns repeat the out-of-place ones, and `#wrong` is `N/A` as nccl-tests prints it
//! without validation (data is not modelled). `-J FILE.json` writes nccl-tests' own JSON
//! results file.

use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;
use trnsim_fabric::collective::{self, Algo, Collective, Op, Params};
use trnsim_system::cluster::Level;
use trnsim_system::doc::{DocKind, SystemDoc};
use trnsim_system::energy_stats::{fabric_counts, price_fabric};

/// `trnsim collective` arguments.
#[derive(Args, Debug)]
pub struct CollectiveArgs {
    /// The operation: all-reduce (allr), all-gather (allg), reduce-scatter (redsct),
    /// all-to-all (alltoall), broadcast (bcast), permute (send-recv).
    pub op: String,
    /// The system: an UltraServer or fabric preset, or a RON file.
    #[arg(long, default_value = "trn3-gen2-ultraserver", value_name = "PRESET|FILE.ron")]
    pub system: String,
    /// Override a field of the system, e.g. `fabric.switch.latency=200ns` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Smallest size per rank, in bytes (K, M, G = 2^10, 2^20, 2^30); 1 B ..= 16G.
    #[arg(short = 'b', long = "minbytes", default_value = "32M", value_parser = parse_size)]
    pub minbytes: u64,
    /// Largest size per rank; 1 B ..= 16G (a 1G all-reduce on 144 chips simulates in ~25
    /// CPU-s, and the time grows with the size).
    #[arg(short = 'e', long = "maxbytes", default_value = "32M", value_parser = parse_size)]
    pub maxbytes: u64,
    /// Multiply the size by this factor between rows (>= 2).
    #[arg(short = 'f', long = "stepfactor", default_value_t = 2, value_parser = clap::value_parser!(u64).range(2..=1024))]
    pub stepfactor: u64,
    /// The algorithm: ring, rhd (recursive halving-doubling), direct, tree (broadcast),
    /// hierarchical (all-reduce, all-gather, reduce-scatter: rings inside servers and across
    /// them), hierarchical-rhd (all-reduce: rings inside servers, recursive halving-doubling
    /// across them: 2 log2 m steps across m servers instead of 2(m - 1)), pipelined (all-reduce: server mates, direct-link pairs and the other servers at
    /// once, over chunks; the fastest from ~3 MB on the Trn3 UltraServers), auto (by size; over
    /// two or more servers an all-reduce of 1 MB or more runs pipelined, an all-gather or
    /// reduce-scatter hierarchical; over 128 servers or more an all-reduce runs
    /// hierarchical-rhd). See docs/whatif.md and docs/scaleout.md.
    #[arg(long, default_value = "auto")]
    pub algo: String,
    /// Ranks taking part: the first N chips in ring order (default: every chip).
    #[arg(short = 'r', long = "nworkers", value_name = "N")]
    pub nworkers: Option<u32>,
    /// Ranks taking part, as chip numbers: `0-15`, `0,4,8,12` or `0-3,72-75` (instead of -r).
    #[arg(short = 'g', long = "group", value_name = "CHIPS", conflicts_with = "nworkers")]
    pub group: Option<String>,
    /// Element type, for the count column: uint8, int8, bf16, fp16, fp32, int32, ...
    #[arg(short = 'd', long = "datatype", default_value = "uint8")]
    pub datatype: String,
    /// Output format: nccom (nccom-test's table) or nccl-tests.
    #[arg(long, default_value = "nccom")]
    pub format: String,
    /// The network model: packet (packets through link FIFOs, store and forward) or flow
    /// (messages as fluid flows: split over the source's links by their queues, sharing links
    /// older step first and max-min fairly within a step; events per message, not per packet;
    /// docs/validation.md compares the two). Flow runs every chip (no -r or -g).
    #[arg(long, default_value = "packet", value_parser = ["packet", "flow"])]
    pub network: String,
    /// Software time before each step's sends (the collective engine's per-step cost;
    /// 0ns..=1ms).
    #[arg(long, default_value = "1500ns", value_parser = parse_step_overhead)]
    pub step_overhead: trnsim_kernel::Dur,
    /// Write every row as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub json: Option<PathBuf>,
    /// Write nccl-tests' own JSON results file (its `-J` output, file version 3), which its
    /// tools/analyze_perf_json.py reads.
    #[arg(short = 'J', long = "output-file", value_name = "FILE.json")]
    pub output_file: Option<PathBuf>,
}

fn parse_step_overhead(s: &str) -> Result<trnsim_kernel::Dur, String> {
    let d = s.parse::<trnsim_kernel::Dur>().map_err(|e| e.to_string())?;
    if d > trnsim_kernel::Dur::from_ms(1) {
        return Err(format!("{d} is out of range (allowed: 0ns..=1ms)"));
    }
    Ok(d)
}

use trnsim_benchmarks::limits::parse_size;

/// The largest size per rank `-b` and `-e` accept: 16 GiB. Simulation time grows with the
/// bytes moved (~25 CPU-s for a 1 GiB all-reduce on 144 chips), so this bounds one row to
/// minutes and keeps every message's packet count far inside the network's 32-bit counts.
pub const MAX_BYTES: u64 = 16 << 30;

/// Checks `-b` and `-e`: each at most [`MAX_BYTES`], `-b` at most `-e`.
fn check_sizes(min: u64, max: u64) -> Result<(), String> {
    for (flag, v) in [("-b", min), ("-e", max)] {
        if v > MAX_BYTES {
            return Err(format!("{flag} {v} is out of range (allowed: 1 ..= {MAX_BYTES} bytes, 16G)"));
        }
    }
    if min > max {
        return Err(format!("-b {min} is larger than -e {max}"));
    }
    Ok(())
}

/// The operation an nccom-test or trnsim name stands for.
pub fn parse_op(s: &str) -> Result<Op, String> {
    Ok(match s {
        "all-reduce" | "all_reduce" | "allr" => Op::AllReduce,
        "all-gather" | "all_gather" | "allg" => Op::AllGather,
        "reduce-scatter" | "reduce_scatter" | "redsct" => Op::ReduceScatter,
        "all-to-all" | "all_to_all" | "alltoall" => Op::AllToAll,
        "broadcast" | "bcast" => Op::Broadcast,
        "permute" | "send-recv" | "sendrecv" => Op::Permute,
        _ => {
            return Err(format!(
                "unknown operation {s:?} (allowed: all-reduce/allr, all-gather/allg, reduce-scatter/redsct, all-to-all/alltoall, broadcast/bcast, permute/send-recv)"
            ))
        }
    })
}

fn parse_algo(s: &str) -> Result<Algo, String> {
    Ok(match s {
        "ring" => Algo::Ring,
        "rhd" | "halving_doubling" => Algo::HalvingDoubling,
        "direct" | "mesh" => Algo::Direct,
        "tree" => Algo::Tree,
        "hierarchical" => Algo::Hierarchical,
        "hierarchical-rhd" | "hierarchical_rhd" => Algo::HierarchicalRhd,
        "pipelined" => Algo::Pipelined,
        "auto" => Algo::Auto,
        _ => {
            return Err(format!(
                "unknown algorithm {s:?} (allowed: ring, rhd, direct, tree, hierarchical, hierarchical-rhd, pipelined, auto)"
            ))
        }
    })
}

/// Bytes per element of a data type name.
fn elem_bytes(t: &str) -> Result<u64, String> {
    Ok(match t {
        "uint8" | "int8" | "fp8" | "fp8_e4m3" | "fp8_e5m2" => 1,
        "uint16" | "int16" | "fp16" | "bf16" => 2,
        "uint32" | "int32" | "fp32" | "float" => 4,
        "uint64" | "int64" | "fp64" | "double" => 8,
        _ => return Err(format!("unknown data type {t:?} (allowed: uint8, int8, fp8, uint16, int16, fp16, bf16, uint32, int32, fp32, uint64, int64, fp64)")),
    })
}

/// Chip numbers from `0-15`, `0,4,8` or `0-3,72-75`, each below `chips`.
pub fn parse_group(s: &str, chips: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let num = |x: &str| -> Result<usize, String> {
            let v: usize = x.trim().parse().map_err(|_| format!("-g {s}: {x:?} is not a chip number"))?;
            if v >= chips {
                return Err(format!("-g {s}: chip {v} is not in the system (chips 0..{})", chips - 1));
            }
            Ok(v)
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("-g {s}: range {a}-{b} runs backwards"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    let mut sorted = out.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("-g {s}: chip {} is listed twice", w[0]));
    }
    if out.len() < 2 {
        return Err(format!("-g {s}: a collective needs at least 2 ranks"));
    }
    Ok(out)
}

/// One printed row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// Bytes per rank.
    pub size: u64,
    /// Elements per rank.
    pub count: u64,
    /// Simulated time, in microseconds.
    pub time_us: f64,
    /// size / time, in GB/s.
    pub algbw: f64,
    /// algbw x bus factor, in GB/s.
    pub busbw: f64,
    /// The algorithm that ran.
    pub algo: &'static str,
    /// The fabric's energy over the run (NeuronLink bits, switch flits, the static power of
    /// every wired port), in microjoules; left out when the system names no energy table,
    /// on an UltraCluster and on the flow-level network (it counts no bytes per link).
    #[serde(rename = "energy_uJ", skip_serializing_if = "Option::is_none")]
    pub energy_uj: Option<f64>,
}

/// The sizes of a sweep: `min`, then multiplied by `factor` up to `max`.
fn sizes(min: u64, max: u64, factor: u64) -> Vec<u64> {
    let mut v = vec![min];
    while let Some(next) = v.last().and_then(|s| s.checked_mul(factor)).filter(|&s| s <= max) {
        v.push(next);
    }
    v
}

/// Runs the command; `Err((message, exit code))`.
pub fn run(a: CollectiveArgs) -> Result<(), (String, i32)> {
    let usage = |m: String| (m, 2);
    let op = parse_op(&a.op).map_err(usage)?;
    let algo = parse_algo(&a.algo).map_err(usage)?;
    let esize = elem_bytes(&a.datatype).map_err(usage)?;
    check_sizes(a.minbytes, a.maxbytes).map_err(usage)?;
    if a.minbytes < esize {
        return Err(usage(format!("-b {} is less than one {} element ({esize} B)", a.minbytes, a.datatype)));
    }
    for (flag, v) in [("-b", a.minbytes), ("-e", a.maxbytes)] {
        if v % esize != 0 {
            return Err(usage(format!(
                "{flag} {v} is not a whole number of {} elements ({esize} B each; {} would be)",
                a.datatype,
                v - v % esize
            )));
        }
    }
    trnsim_fabric::collective::schedule::supports(algo, op).map_err(usage)?;
    if !matches!(a.format.as_str(), "nccom" | "nccl-tests") {
        return Err(usage(format!("--format {}: unknown format (allowed: nccom, nccl-tests)", a.format)));
    }
    let mut doc = SystemDoc::open(&a.system).map_err(usage)?;
    for s in &a.sets {
        doc.set(s).map_err(usage)?;
    }
    // A cluster is checked within the limits of the network that runs it (the flow-level
    // network takes far larger clusters than the packet-level one).
    let level = if a.network == "flow" { Level::Flow } else { Level::Packet };
    let sys = doc.resolve_for(level).map_err(usage)?;
    let topo = sys.fabric().ok_or_else(|| usage(format!("{} is a chip: a collective needs a fabric", doc.file())))?;
    let members: Vec<usize> = match (&a.group, a.nworkers) {
        (Some(g), _) => parse_group(g, topo.chips).map_err(usage)?,
        (None, Some(n)) if (2..=topo.chips as u32).contains(&n) => topo.ring[..n as usize].to_vec(),
        (None, Some(n)) => return Err(usage(format!("-r {n} is out of range (allowed: 2..={})", topo.chips))),
        (None, None) => topo.ring.clone(),
    };
    // The fabric's energy table: a fabric file's, or an UltraServer chip's (an UltraCluster's
    // EFA switches are not in the tables).
    let table = match doc.kind() {
        DocKind::Fabric | DocKind::UltraServer => doc.energy().map_err(usage)?,
        _ => None,
    };
    let params = Params { step_overhead: a.step_overhead, ..Params::default() };
    let coll = Collective { op, algo };
    let all = sizes(a.minbytes, a.maxbytes, a.stepfactor);
    let flow = a.network == "flow";
    if flow && (members.len() != topo.chips || a.group.is_some()) {
        return Err(usage("--network flow runs every chip: drop -r / -g".into()));
    }
    if a.format == "nccl-tests" {
        print!("{}", nccl_header(&a, op, &members, topo.name.as_str()));
    } else {
        println!(
            "{:>12}{:>16}{:>9}{:>12}{:>15}{:>15}",
            "size(B)", "count(elems)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)"
        );
    }
    let mut rows = Vec::new();
    for &size in &all {
        if flow {
            let r = collective::run_flow(topo, coll, size, &params).map_err(|e| (e, 1))?;
            let algo = coll.resolve_in(topo.chips, size, Some(topo.chips_per_server)).algo.name();
            let row = Row {
                size,
                count: size / esize,
                time_us: r.time_us,
                algbw: r.algbw_gbps,
                busbw: r.busbw_gbps,
                algo,
                energy_uj: None,
            };
            if a.format == "nccl-tests" {
                println!("{}", nccl_row(&row, &a.datatype, op));
            } else {
                println!(
                    "{:>12}{:>16}{:>9}{:>12}{:>15.2}{:>15.2}",
                    row.size,
                    row.count,
                    a.datatype,
                    format!("{:.0}", row.time_us),
                    row.algbw,
                    row.busbw
                );
            }
            rows.push(row);
            continue;
        }
        let r = if members.len() == topo.chips && a.group.is_none() {
            collective::run(topo, coll, size, &params)
        } else {
            collective::run_group(topo, coll, size, &members, &params)
        }
        .map_err(|e| (e, 1))?;
        let row = Row {
            size,
            count: size / esize,
            time_us: r.row.time_us,
            algbw: r.row.algbw_gbps,
            busbw: r.row.busbw_gbps,
            algo: r.algo.name(),
            energy_uj: table.as_ref().map(|t| {
                let c = fabric_counts(topo, r.edge_stats.iter().map(|e| e.bytes), r.finish_ps);
                price_fabric(&c, t, topo).total_j * 1e6
            }),
        };
        // Rows print as each size completes.
        if a.format == "nccl-tests" {
            println!("{}", nccl_row(&row, &a.datatype, op));
        } else {
            println!(
                "{:>12}{:>16}{:>9}{:>12}{:>15.2}{:>15.2}",
                row.size,
                row.count,
                a.datatype,
                format!("{:.0}", row.time_us),
                row.algbw,
                row.busbw
            );
        }
        rows.push(row);
    }
    let avg = rows.iter().map(|r| r.busbw).sum::<f64>() / rows.len().max(1) as f64;
    if a.format == "nccl-tests" {
        println!("# Out of bounds values : 0 OK");
        println!("# Avg bus bandwidth    : {} ", g6(avg));
        println!("#");
        println!("# Collective test concluded: {}", perf_name(op));
    } else {
        println!("Avg bus bandwidth:\t{avg:.4}GB/s");
    }
    eprintln!(
        "{} on {} ({} of {} chips), algorithm {}: simulated by the {}-level fabric",
        op.name(),
        doc.name(),
        members.len(),
        topo.chips,
        rows.last().map_or("-", |r| r.algo),
        a.network
    );
    let energy: Option<f64> = rows.iter().map(|r| r.energy_uj).sum();
    if let Some(e) = energy {
        eprintln!(
            "fabric energy over the {} sizes: {e:.3} uJ (NeuronLinks, switches, wired ports' static power)",
            rows.len()
        );
    }
    if let Some(p) = &a.json {
        let doc = serde_json::json!({
            "trnsim": env!("CARGO_PKG_VERSION"), "op": op.name(), "system": doc.name(),
            "ranks": members, "datatype": a.datatype, "rows": rows, "avg_busbw_GBps": avg,
        });
        let body = trnsim_benchmarks::outputs::json_text(&doc).map_err(|e| (e, 1))?;
        trnsim_benchmarks::outputs::write_atomic(p, body.as_bytes())
            .map_err(|e| (format!("--json {}: {e}", p.display()), 1))?;
    }
    if let Some(p) = &a.output_file {
        let body = nccl_json(&a, op, &members, &doc.name(), &rows, avg);
        let body = trnsim_benchmarks::outputs::json_text(&body).map_err(|e| (e, 1))?;
        trnsim_benchmarks::outputs::write_atomic(p, body.as_bytes())
            .map_err(|e| (format!("--output-file {}: {e}", p.display()), 1))?;
    }
    Ok(())
}

/// The nccl-tests program that runs `op`.
fn perf_name(op: Op) -> &'static str {
    match op {
        Op::AllReduce => "all_reduce_perf",
        Op::AllGather => "all_gather_perf",
        Op::ReduceScatter => "reduce_scatter_perf",
        Op::AllToAll => "alltoall_perf",
        Op::Broadcast => "broadcast_perf",
        _ => "sendrecv_perf",
    }
}

/// nccl-tests' type name of a datatype.
fn nccl_type(datatype: &str) -> &str {
    match datatype {
        "fp32" => "float",
        "fp16" => "half",
        "bf16" => "bfloat16",
        "fp64" => "double",
        other => other,
    }
}

/// nccl-tests' reduction and root columns of `op`.
fn redop_root(op: Op) -> (&'static str, i32) {
    match op {
        Op::AllReduce | Op::ReduceScatter => ("sum", -1),
        Op::Broadcast => ("none", 0),
        _ => ("none", -1),
    }
}

/// nccl-tests' JSON results (file version 3): the run's configuration, the devices (chips),
/// a result per size with its out-of-place and in-place figures and their one-iteration
/// statistics, and the average bus bandwidth. Times are simulated: the start is the epoch of
/// simulated time and the end the sum of the rows' times, so the file is deterministic.
fn nccl_json(a: &CollectiveArgs, op: Op, members: &[usize], system: &str, rows: &[Row], avg: f64) -> serde_json::Value {
    use serde_json::json;
    let (redop, root) = redop_root(op);
    let devices: Vec<serde_json::Value> = members
        .iter()
        .enumerate()
        .map(|(r, c)| {
            json!({ "rank": r, "group": 0, "pid": 0, "hostname": system, "device": c,
                    "device_hex": "sim", "device_info": format!("trnsim chip{c}") })
        })
        .collect();
    let stats = |t: f64| {
        json!({ "skipped_iterations": 0, "min_us": t, "max_us": t, "avg_us": t, "p50_us": t, "p95_us": t,
                "p99_us": t, "stdev_us": 0.0, "cv_pct": 0.0, "times_us": [t] })
    };
    let results: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let body = json!({ "time": r.time_us, "alg_bw": r.algbw, "bus_bw": r.busbw, "nwrong": null });
            json!({
                "size": r.size, "count": r.count, "type": nccl_type(&a.datatype), "redop": redop,
                "root": format!("{root:6}"), "out_of_place": body, "out_of_place_per_iter": stats(r.time_us),
                "in_place": body, "in_place_per_iter": stats(r.time_us), "actual_iterations": 1,
                "experiment_name": "",
            })
        })
        .collect();
    let total_s = rows.iter().map(|r| 2.0 * r.time_us).sum::<f64>() / 1e6;
    let end = format!("1970-01-01 00:00:{:02}", (total_s.floor() as u64).min(59));
    let args: Vec<String> = std::env::args().collect();
    json!({
        "version": 3,
        "start_time": "1970-01-01 00:00:00",
        "args": args,
        "env": [],
        "nccl_version": 0,
        "config": {
            "nthreads": 1, "ngpus": 1, "minimum_bytes": a.minbytes, "maximum_bytes": a.maxbytes,
            "step_factor": a.stepfactor, "warmup_iters": 0, "iterations": 1, "aggregated_iterations": 1,
            "validation": 0, "graph": 0, "blocking_collectives": false, "per_iter_timing": true,
            "per_iter_skip": 0, "parallel_init": false, "devices": devices,
        },
        "results": results,
        "out_of_bounds": { "count": 0, "okay": true },
        "average_bus_bandwidth": { "bandwidth": avg, "okay": "unchecked" },
        "errors": [],
        "end_time": end,
    })
}

/// nccl-tests' preamble, filled with what the simulation knows.
fn nccl_header(a: &CollectiveArgs, op: Op, members: &[usize], system: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# trnsim {} (simulated on {system}), in nccl-tests' output format", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(s, "# Collective test starting: {}", perf_name(op));
    let _ = writeln!(
        s,
        "# nThread 1 nGpus 1 minBytes {} maxBytes {} step: {}(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0 unalign: 0",
        a.minbytes, a.maxbytes, a.stepfactor
    );
    let _ = writeln!(s, "#");
    let _ = writeln!(s, "# Using devices");
    for (r, c) in members.iter().enumerate() {
        let _ = writeln!(s, "#  Rank {r:>2} Group  0 Pid      0 on {system:>10} device {c:>2} [sim] trnsim chip{c}");
    }
    let _ = writeln!(s, "#");
    let _ = writeln!(s, "#                                                              out-of-place                       in-place          ");
    let _ = writeln!(s, "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong");
    let _ = writeln!(s, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ");
    s
}

/// One nccl-tests row: out-of-place then in-place (the same, see the module docs).
fn nccl_row(r: &Row, datatype: &str, op: Op) -> String {
    let ty = nccl_type(datatype);
    let (redop, root) = redop_root(op);
    // Validation 0 (data is not modelled): nccl-tests then prints N/A for #wrong.
    let half =
        format!("  {:>7}  {:>6}  {:>6}    N/A", float_str(r.time_us, 7), float_str(r.algbw, 6), float_str(r.busbw, 6));
    format!("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{half}{half}", r.size, r.count, ty, redop, root)
}

/// A figure in `width` characters as nccl-tests prints it: two decimals, then one, then
/// none as it grows, then an exponent.
fn float_str(v: f64, width: usize) -> String {
    for d in [2, 1, 0] {
        let s = format!("{v:>width$.d$}");
        if s.len() <= width {
            return s;
        }
    }
    let p = if width >= 7 { 1 } else { 0 };
    // C's %e: mantissa, 'e', sign, at least two exponent digits.
    let s = format!("{v:.p$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
    format!("{:>width$}", format!("{m}e{sign}{digits:0>2}"))
}

/// `%g` with 6 significant digits, as nccl-tests prints the average bus bandwidth.
fn g6(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = 6 - 1 - v.abs().log10().floor() as i32;
    let s = format!("{:.*}", digits.max(0) as usize, v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{check_sizes, float_str, g6, nccl_row, parse_algo, parse_group, parse_size, sizes, Row};
    use trnsim_fabric::collective::Algo;
    use trnsim_fabric::collective::Op;

    #[test]
    fn sizes_parse_with_binary_units_and_reject_nonsense() {
        assert_eq!(parse_size("8").unwrap(), 8);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert!(parse_size("1Q").is_err() && parse_size("0").is_err() && parse_size("99999999999T").is_err());
        for bad in ["1iBiBiB", "4BBBB", "1KBiB", "1iB", "1MiBB"] {
            assert!(parse_size(bad).unwrap_err().contains("unknown unit"), "{bad}");
        }
        assert_eq!(parse_size("4B").unwrap(), 4);
        assert_eq!(parse_size("2MB").unwrap(), 2 << 20);
        assert_eq!(sizes(1 << 20, 1 << 30, 4).len(), 6);
        assert!(check_sizes(1, 16 << 30).is_ok());
        assert!(check_sizes(1, (16 << 30) + 1).unwrap_err().contains("-e 17179869185 is out of range"));
        assert!(check_sizes(1 << 40, 1 << 40).unwrap_err().contains("-b 1099511627776 is out of range"));
        assert!(check_sizes(2, 1).unwrap_err().contains("larger than"));
    }

    #[test]
    fn algorithms_parse_by_their_command_line_names() {
        assert_eq!(parse_algo("pipelined"), Ok(Algo::Pipelined));
        assert_eq!(parse_algo("hierarchical-rhd"), Ok(Algo::HierarchicalRhd));
        assert_eq!(parse_algo("hierarchical"), Ok(Algo::Hierarchical));
        assert!(parse_algo("pipeline").unwrap_err().contains("hierarchical, hierarchical-rhd, pipelined, auto"));
    }

    #[test]
    fn groups_are_checked_against_the_system() {
        assert_eq!(parse_group("0-3,72-75", 144).unwrap(), vec![0, 1, 2, 3, 72, 73, 74, 75]);
        assert!(parse_group("0-200", 144).unwrap_err().contains("chip 200 is not in the system"));
        assert!(parse_group("3,3", 144).unwrap_err().contains("twice"));
        assert!(parse_group("5", 144).unwrap_err().contains("at least 2"));
    }

    #[test]
    fn nccl_tests_rows_have_their_thirteen_columns() {
        let r = Row {
            size: 1048576,
            count: 262144,
            time_us: 105.93,
            algbw: 9.9,
            busbw: 17.33,
            algo: "ring",
            energy_uj: None,
        };
        let line = nccl_row(&r, "fp32", Op::AllReduce);
        assert_eq!(line, "     1048576        262144     float     sum      -1   105.93    9.90   17.33    N/A   105.93    9.90   17.33    N/A");
        assert_eq!(line.split_whitespace().count(), 13);
        // nccl-tests' getFloatStr: as many decimals (2, 1, 0) as fit the width, then %e.
        let cases = [
            (90330.2, 7, "90330.2"),
            (18.054, 7, "  18.05"),
            (1234.567, 6, "1234.6"),
            (123456.7, 6, "123457"),
            (12345678.0, 6, " 1e+07"),
            (123456789.0, 7, "1.2e+08"),
        ];
        for (v, w, want) in cases {
            assert_eq!(float_str(v, w), want, "{v} in {w}");
        }
        assert_eq!(g6(220.92123), "220.921");
    }
}
