//! Assembles a [`Simulation`] from a validated config of generic blocks.

use crate::blocks::{Packet, Relay, Sink, Source};
use crate::config::{KindCfg, System};
use fxhash::FxHashMap;
use trnsim_benchmarks::suite::{drive, BenchResult, RunOpts};
use trnsim_kernel::{
    ClockId, ComponentId, Cycles, InPort, LinkSpec, OutPort, SimBuilder, SimOptions, SimRng, Simulation, Stop,
    TickOrder,
};

/// Builds the simulation described by `sys` with the given tick order.
pub fn build(sys: &System, order: TickOrder) -> Result<Simulation, String> {
    let cfg = &sys.cfg;
    let opts = SimOptions { seed: cfg.seed, tick_order: order, deadlock_window: sys.deadlock_window };
    let mut b = SimBuilder::with_options(opts);
    let mut clocks = Vec::new();
    for (c, f) in cfg.clocks.iter().zip(&sys.freqs) {
        clocks.push(b.clock(&c.name, *f).map_err(|e| e.to_string())?);
    }
    let clock_of = |name: &str| -> Result<ClockId, String> {
        let i = cfg.clocks.iter().position(|c| c.name == name);
        i.map(|i| clocks[i]).ok_or_else(|| format!("internal: clock {name:?} not declared after validation"))
    };
    let ids: Vec<_> = cfg
        .components
        .iter()
        .map(|c| clock_of(&c.clock).and_then(|k| b.reserve(&c.name, k).map_err(|e| e.to_string())))
        .collect::<Result<_, _>>()?;
    let mut outs: FxHashMap<(usize, String), OutPort<Packet>> = FxHashMap::default();
    let mut ins: FxHashMap<(usize, String), InPort<Packet>> = FxHashMap::default();
    for (i, (l, (a, ap, z, zp))) in cfg.links.iter().zip(&sys.endpoints).enumerate() {
        let spec = LinkSpec {
            latency: Cycles(l.latency),
            depth: l.depth,
            credit_latency: Cycles(l.credit_latency),
            bandwidth: sys.bandwidths[i],
        };
        let (tx, rx) = b.link::<Packet>(ids[*a], ap, ids[*z], zp, spec).map_err(|e| e.to_string())?;
        outs.insert((*a, ap.clone()), tx);
        ins.insert((*z, zp.clone()), rx);
    }
    let port_missing = |c: &str, p: &str| format!("internal: port {c}.{p} not wired after validation");
    for (i, c) in cfg.components.iter().enumerate() {
        let out = |p: &str| outs.get(&(i, p.to_string())).copied().ok_or_else(|| port_missing(&c.name, p));
        let inp = |p: &str| ins.get(&(i, p.to_string())).copied().ok_or_else(|| port_missing(&c.name, p));
        match c.kind {
            KindCfg::Source { count, bytes, rate } => {
                let rng = SimRng::new(cfg.seed, i as u64);
                b.install(ids[i], Source::new(out("out")?, count, bytes, rate, rng, i as u32))
            }
            KindCfg::Relay { delay, slots } => {
                b.install(ids[i], Relay::new(inp("in")?, out("out")?, delay, slots as usize))
            }
            KindCfg::Sink => b.install(ids[i], Sink::new(inp("in")?)),
        }
        .map_err(|e| e.to_string())?;
    }
    b.build().map_err(|e| e.to_string())
}

/// The built-in demo: two sources on a 1.4 GHz clock feeding 2.4 GHz relays into sinks, one
/// path bandwidth-limited. Exercises multi-clock links, credits, bandwidth and traces.
pub const DEMO_RON: &str = include_str!("../../models/configs/demo.ron");

/// Runs a config-described system until idle or its limit.
pub fn run_system(name: &str, sys: &System, opts: RunOpts) -> Result<BenchResult, String> {
    let mut sim = build(sys, opts.order)?;
    if let Some((sink, topts)) = opts.trace {
        sim.attach_trace(sink, &topts);
    }
    let (stop, speed) = drive(&mut sim, sys.limit, opts.progress).map_err(|e| format!("{name}: {e}"))?;
    sim.finish_trace().map_err(|e| e.to_string())?;
    let stats = sim.report();
    let sinks: Vec<&Sink> =
        (0..sim.component_count()).filter_map(|i| sim.component::<Sink>(ComponentId::from_index(i))).collect();
    let delivered = sinks.iter().map(|s| s.received()).sum::<u64>() as f64;
    let bytes = sinks.iter().map(|s| s.bytes()).sum::<u64>() as f64;
    let end_ns = sim.now().as_ns_f64();
    let headline = vec![
        ("packets_delivered".to_string(), delivered),
        ("bytes_delivered".to_string(), bytes),
        ("sim_time_ns".to_string(), end_ns),
        ("finished_idle".to_string(), if stop == Stop::Idle { 1.0 } else { 0.0 }),
    ];
    Ok(BenchResult { name: name.into(), headline, stats, speed })
}
