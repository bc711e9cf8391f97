//! Fabric microbenchmarks: link efficiency per encoding against the analytic payload rate, and
//! the single-switch studies (saturation throughput of VOQ + iSLIP, round-robin matching and a
//! single FIFO per input; latency against offered load, plotted); unloaded latency over one
//! NeuronLink and through the Trn3 switches (`fabric-link-pingpong`).

use crate::cpu::Stopwatch;
use crate::plot::{Plot, Series};
use crate::result::{BenchResult, Speed};
use trnsim_fabric::link::stats::RxStats;
use trnsim_fabric::link::traffic::{OrderedSink, PacketSource, SourceSpec};
use trnsim_fabric::link::{attach, effective_payload_bytes_per_s, BondedLink, LinkParams, LinkRx};
use trnsim_fabric::switch::traffic::{saturation_throughput, study_config, sweep, BenchParams, SweepParams};
use trnsim_fabric::switch::{Queueing, SwitchConfig};
use trnsim_kernel::{Dur, Frequency, SimBuilder, SimOptions, Simulation, StatsReport};
use trnsim_system::energy_stats::{fabric_counts, Counts, COUNTS_OWNER};

/// One link of `params` between a packet source (`spec`, seed 7) and an order-checking sink,
/// on a 1 GHz clock, run until idle (at most `limit`): the simulation, the validated link and
/// the receiver's statistics.
fn one_link(params: &LinkParams, spec: SourceSpec, limit: Dur) -> Result<(Simulation, BondedLink, RxStats), String> {
    let link = params.validate().map_err(|e| e.to_string())?;
    let mut b = SimBuilder::with_options(SimOptions { seed: 7, ..SimOptions::default() });
    let clk = b.clock("link", Frequency::from_mhz(1000)).map_err(|e| e.to_string())?;
    let src = b.reserve("src", clk).map_err(|e| e.to_string())?;
    let sink = b.reserve("sink", clk).map_err(|e| e.to_string())?;
    let h = attach(&mut b, "link", clk, params, 7, (src, "out"), (sink, "in")).map_err(|e| e.to_string())?;
    b.install(src, PacketSource::new(h.input, spec, 7, 1)).map_err(|e| e.to_string())?;
    b.install(sink, OrderedSink::new(h.output, None)).map_err(|e| e.to_string())?;
    let mut sim = b.build().map_err(|e| e.to_string())?;
    crate::progress::run_until_idle(&mut sim, limit).map_err(|e| e.to_string())?;
    let stats = sim.component::<LinkRx>(h.rx).ok_or("link receiver")?.stats().clone();
    Ok((sim, link, stats))
}

/// Runs `count` packets of `payload` bytes over one saturated, error-free link; returns
/// (measured goodput, analytic) in GB/s and the statistics.
pub fn link_goodput(encoding: &str, lanes: u32, payload: u32, count: u64) -> Result<(f64, f64, StatsReport), String> {
    let params = LinkParams::with(encoding, lanes);
    let spec = SourceSpec { flows: 4, count, sizes: vec![payload], interval: None, src: 0, dst: 1 };
    let (sim, link, stats) = one_link(&params, spec, Dur::from_us(1_000_000))?;
    let got = stats.goodput_gbytes_per_s();
    let want = effective_payload_bytes_per_s(&link, payload) / 1e9;
    Ok((got, want, sim.report()))
}

fn link_efficiency() -> Result<BenchResult, String> {
    let sw = Stopwatch::start();
    let mut headline = Vec::new();
    let mut stats = StatsReport::default();
    for (enc, lanes) in [("pcie-gen6", 8), ("ualink-200g", 4), ("pcie-gen5", 16)] {
        for payload in [256u32, 4096] {
            let count = if payload == 256 { 20_000 } else { 2_000 };
            let (got, want, report) = link_goodput(enc, lanes, payload, count)?;
            if (got - want).abs() > 0.01 * want {
                return Err(format!("{enc} x{lanes} {payload} B: {got:.3} GB/s vs analytic {want:.3}"));
            }
            let tag = format!("{enc}_x{lanes}_{payload}B");
            headline.push((format!("{tag}_GBps"), got));
            headline.push((format!("{tag}_analytic_GBps"), want));
            stats = report;
        }
    }
    let (wall_s, cpu_s) = sw.elapsed();
    Ok(BenchResult {
        name: "fabric-link-efficiency".into(),
        headline,
        stats,
        speed: Speed { wall_s, cpu_s, ..Speed::default() },
    })
}

fn study(queueing: Queueing, arbiter: &str, iterations: u32) -> SwitchConfig {
    SwitchConfig { queueing, arbiter: arbiter.into(), iterations, ..study_config(32) }
}

const STUDIES: [(&str, Queueing, &str, u32); 4] = [
    ("voq_islip1", Queueing::Voq, "islip", 1),
    ("voq_islip4", Queueing::Voq, "islip", 4),
    ("voq_rrm", Queueing::Voq, "round-robin", 1),
    ("fifo", Queueing::Fifo, "islip", 1),
];

fn switch_hol() -> Result<BenchResult, String> {
    let sw = Stopwatch::start();
    let mut headline = Vec::new();
    for (name, q, arb, it) in STUDIES {
        if name == "voq_rrm" {
            continue; // its pointers lock in step at offered load 1: see the latency sweep
        }
        let warm = if q == Queueing::Voq { 40_000 } else { 5_000 };
        let sp = SweepParams { warmup_cycles: warm, sample_cycles: 5_000, max_samples: 4, ..SweepParams::default() };
        let th = saturation_throughput(&study(q, arb, it), &BenchParams { seed: 7, ..BenchParams::default() }, &sp)
            .map_err(|e| e.to_string())?;
        headline.push((format!("{name}_saturation_throughput"), th));
    }
    headline.push(("hol_limit_karol_1987".into(), 2.0 - 2f64.sqrt()));
    let (wall_s, cpu_s) = sw.elapsed();
    Ok(BenchResult {
        name: "fabric-switch-hol".into(),
        headline,
        stats: StatsReport::default(),
        speed: Speed { wall_s, cpu_s, ..Speed::default() },
    })
}

fn switch_latency(plot_dir: Option<&std::path::Path>) -> Result<BenchResult, String> {
    let sw = Stopwatch::start();
    let loads = [0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95];
    let mut headline = Vec::new();
    let mut series = Vec::new();
    for (name, q, arb, it) in STUDIES {
        let pts = sweep(
            &study(q, arb, it),
            &BenchParams { seed: 7, ..BenchParams::default() },
            &SweepParams::default(),
            &loads,
        )
        .map_err(|e| e.to_string())?;
        let mut points = Vec::new();
        for p in &pts {
            if !p.saturated {
                points.push((p.accepted, p.latency_mean_cycles));
            }
            // A saturated point (the switch accepts less than is offered) has no steady-state
            // latency: its mean grows with the run's length and may fall below the point
            // before. Its name says so, and the plot leaves it out.
            let flag = if p.saturated { "_saturated" } else { "" };
            headline.push((format!("{name}_load{:.2}_latency_cycles{flag}", p.offered), p.latency_mean_cycles));
        }
        series.push(Series { name: name.replace('_', " "), points });
    }
    if let Some(dir) = plot_dir {
        let plot = Plot {
            title: "32-port switch, uniform random traffic: latency against accepted load".into(),
            x_label: "accepted load (cells per port cycle)".into(),
            y_label: "mean latency (port cycles)".into(),
            series,
            log_y: true,
        };
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = dir.join("fabric-switch-latency.svg");
        crate::outputs::write_plot(&path, plot.to_svg().as_bytes())
            .map_err(|e| format!("--plots {}: {e}", path.display()))?;
    }
    let (wall_s, cpu_s) = sw.elapsed();
    Ok(BenchResult {
        name: "fabric-switch-latency".into(),
        headline,
        stats: StatsReport::default(),
        speed: Speed { wall_s, cpu_s, ..Speed::default() },
    })
}

/// nccl-tests-style tables of collectives as packet-level traffic on a topology preset:
/// (collective, algorithm) pairs at a few sizes, headline = time and busbw per size.
fn collectives(
    name: &str,
    topo: &trnsim_fabric::topo::Topology,
    runs: &[(&str, &[u64])],
) -> Result<BenchResult, String> {
    use trnsim_fabric::collective::{run, Collective, Params};
    let sw = Stopwatch::start();
    let mut headline = Vec::new();
    let mut counts = Counts::default();
    for (coll, sizes) in runs {
        let c: Collective = coll.parse()?;
        for &size in sizes.iter() {
            let run = run(topo, c, size, &Params::default())?;
            let r = &run.row;
            let tag = format!("{}_{}B", coll.replace(':', "_"), r.size_bytes);
            headline.push((format!("{tag}_time_us"), r.time_us));
            headline.push((format!("{tag}_busbw_GBps"), r.busbw_gbps));
            let c = fabric_counts(topo, run.edge_stats.iter().map(|e| e.bytes), run.finish_ps);
            counts = counts.plus(&c);
        }
    }
    let (wall_s, cpu_s) = sw.elapsed();
    // The runs' bytes and time, one after another, for the energy (priced by the fabric's
    // table where the run knows its system: `trnsim run NAME`, `--system`).
    let mut stats = StatsReport::default();
    stats.owners.insert(COUNTS_OWNER.to_string(), counts.to_owner());
    Ok(BenchResult { name: name.into(), headline, stats, speed: Speed { wall_s, cpu_s, ..Speed::default() } })
}

/// One-way latency of unloaded `payload`-byte packets (5, 2 us apart) over one link of the
/// cycle-level link model; returns (mean measured, analytic) in ns. Analytic = PHY + wire + link
/// layer + one wire unit's serialization (a flit on Gen6).
pub fn link_one_way_ns(encoding: &str, lanes: u32, payload: u32) -> Result<(f64, f64), String> {
    let params = LinkParams::with(encoding, lanes);
    let spec = SourceSpec { flows: 1, count: 5, sizes: vec![payload], interval: Some(Dur::from_us(2)), src: 0, dst: 1 };
    let (_, link, stats) = one_link(&params, spec, Dur::from_us(1_000))?;
    let lat = &stats.latency_ps;
    if lat.count() != 5 {
        return Err(format!("{encoding} x{lanes}: {} of 5 packets delivered", lat.count()));
    }
    let analytic = params.fixed_latency().as_ps() as f64 + link.serialization_ps(link.unit_bytes(payload));
    Ok((lat.mean() / 1e3, analytic / 1e3))
}

/// Ping-pong of `bytes` between chips `a` and `b` on an idle packet network: (one-way,
/// round trip, analytic one-way) in ns, and the hops. Analytic = the sum over the first-choice
/// path of each edge's serialization and fixed latency (PHY + wire + link layer, + switch).
pub fn ping_pong_ns(topo: &trnsim_fabric::topo::Topology, a: usize, b: usize, bytes: u32) -> (f64, f64, f64, usize) {
    use trnsim_fabric::topo::Network;
    let mut analytic = 0u64;
    let mut n = a;
    while n != b {
        let e = &topo.edges[topo.next_edges(n, b).first().expect("every chip reaches every chip") as usize];
        analytic += e.serialization_ps(bytes) + e.latency_ps;
        n = e.to;
    }
    let hops = topo.hops(a, b);
    let mut net = Network::new(topo.clone());
    let ping = net.send(0, a, b, u64::from(bytes), 0);
    let mut t = [0u64; 2];
    while net.next_time().is_some() {
        if let Some(id) = net.step() {
            let done = net.msgs[id].done_ps.unwrap_or(0);
            if id == ping {
                t[0] = done;
                net.send(done, b, a, u64::from(bytes), 1);
            } else {
                t[1] = done;
            }
        }
    }
    (t[0] as f64 / 1e3, t[1] as f64 / 1e3, analytic as f64 / 1e3, hops)
}

/// Unloaded latency: 64 B over one PCIe Gen6 x8 NeuronLink (cycle-level link model), and 64 B
/// ping-pongs on the Trn3 Gen1 fabric (packet network): over a direct link (chip 0 to its peer
/// 32), through one intra-server switch (chip 0 to 1) and across servers (chip 0 to 16, one
/// inter-server plane), each against the analytic sum of the path's latencies.
fn link_pingpong() -> Result<BenchResult, String> {
    let sw = Stopwatch::start();
    let (got, want) = link_one_way_ns("pcie-gen6", 8, 64)?;
    let mut headline =
        vec![("link_gen6_x8_64B_one_way_ns".to_string(), got), ("link_gen6_x8_64B_analytic_ns".to_string(), want)];
    let path = trnsim_fabric::topo::presets_dir().join("trn3-gen1-nl32x2.ron");
    let topo = trnsim_fabric::topo::load(&path)?;
    for (tag, a, b) in [("direct", 0, 32), ("switch", 0, 1), ("inter_server", 0, 16)] {
        let (one, rtt, analytic, hops) = ping_pong_ns(&topo, a, b, 64);
        if (one - analytic).abs() > 1e-6 * analytic {
            return Err(format!("fabric-link-pingpong {tag}: one-way {one} ns vs analytic {analytic} ns"));
        }
        headline.push((format!("{tag}_hops"), hops as f64));
        headline.push((format!("{tag}_64B_one_way_ns"), one));
        headline.push((format!("{tag}_64B_round_trip_ns"), rtt));
        headline.push((format!("{tag}_64B_analytic_one_way_ns"), analytic));
    }
    let (wall_s, cpu_s) = sw.elapsed();
    Ok(BenchResult {
        name: "fabric-link-pingpong".into(),
        headline,
        stats: StatsReport::default(),
        speed: Speed { wall_s, cpu_s, ..Speed::default() },
    })
}

/// The collectives (`op:algo`) and per-chip sizes each collective benchmark runs, and the
/// fabric preset it runs them on by default.
type CollectiveSet = (&'static str, &'static str, &'static [(&'static str, &'static [u64])]);

/// The collective benchmarks: name, default fabric, collectives and sizes.
pub const COLLECTIVE_BENCHES: &[CollectiveSet] = &[
    ("fabric-allreduce-trn2-16", "trn2-server-4x4", &[("all_reduce:ring", &[65_536, 1 << 20, 16 << 20])]),
    (
        "fabric-allreduce-nl72x2",
        "trn3-gen2-nl72x2",
        &[
            ("all_reduce:ring", &[1 << 20, 16 << 20]),
            ("all_reduce:auto", &[1 << 20, 16 << 20]),
            ("all_to_all", &[1 << 20]),
        ],
    ),
    (
        "fabric-collectives-nl32x2",
        "trn3-gen1-nl32x2",
        &[
            ("all_reduce:ring", &[1 << 20, 16 << 20]),
            ("all_reduce:halving_doubling", &[1 << 20, 16 << 20]),
            ("all_to_all", &[1 << 20, 16 << 20]),
        ],
    ),
];

/// Runs one fabric benchmark.
pub fn run_named(name: &str, plot_dir: Option<&std::path::Path>) -> Result<BenchResult, String> {
    match name {
        "fabric-link-efficiency" => link_efficiency(),
        "fabric-switch-hol" => switch_hol(),
        "fabric-switch-latency" => switch_latency(plot_dir),
        "fabric-link-pingpong" => link_pingpong(),
        _ => {
            let (_, fabric, _) = COLLECTIVE_BENCHES
                .iter()
                .find(|(n, _, _)| *n == name)
                .ok_or_else(|| format!("unknown fabric benchmark `{name}`"))?;
            let topo = trnsim_fabric::topo::load(&trnsim_fabric::topo::presets_dir().join(format!("{fabric}.ron")))?;
            run_on(name, &topo)
        }
    }
}

/// Runs collective benchmark `name`'s collectives on `topo`.
pub fn run_on(name: &str, topo: &trnsim_fabric::topo::Topology) -> Result<BenchResult, String> {
    let (_, _, runs) = COLLECTIVE_BENCHES
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(|| format!("{name} is not a collective benchmark"))?;
    collectives(name, topo, runs)
}
