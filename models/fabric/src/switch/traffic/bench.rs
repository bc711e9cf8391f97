//! A single-switch bench: one injector per input, one sink per output, all on the switch's
//! cell clock, routed by destination id = port.

use super::injector::{Injector, InjectorParams};
use super::sink::{Sink, Window};
use crate::switch::config::{ConfigError, Forwarding, Queueing, SwitchConfig};
use crate::switch::routing::TableRouting;
use crate::switch::{ArbiterProvider, ConfigArbiters, Packet, Switch};
use std::fmt;
use trnsim_kernel::{BuildError, ClockId, ComponentId, Dur, RunError, SimBuilder, SimOptions, Simulation, Stop};

/// How the bench drives the switch.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchParams {
    /// Offered load per input, cells per port cycle, in [0, 1].
    pub load: f64,
    /// Bytes per packet.
    pub packet_bytes: u32,
    /// Packets per injector (None: unlimited).
    pub limit: Option<u64>,
    /// Run seed.
    pub seed: u64,
    /// Latency of every injector→switch and switch→sink link, port cycles (>= 1).
    pub link_latency: u64,
    /// Depth (credits) of those links, packets (>= 1; 4 covers the credit loop at line rate
    /// with one-cycle links).
    pub link_depth: u32,
    /// 0: sinks take everything; n: each sink takes one packet per n cycles (back-pressure).
    pub sink_service_cycles: u32,
    /// Sinks keep every packet's (src, seq) (for conservation checks).
    pub record_ids: bool,
    /// When set, only this input injects (one source never contends: zero-load latency at any
    /// load).
    pub single_source: Option<u16>,
    /// Destination pattern.
    pub pattern: super::pattern::Pattern,
}

impl Default for BenchParams {
    /// Load 0.5, one 64 B packet, unlimited, seed 1, one-cycle links of depth 4, free sinks,
    /// every input injecting, uniform random destinations.
    fn default() -> Self {
        BenchParams {
            load: 0.5,
            packet_bytes: 64,
            limit: None,
            seed: 1,
            link_latency: 1,
            link_depth: 4,
            sink_service_cycles: 0,
            record_ids: false,
            single_source: None,
            pattern: super::pattern::Pattern::Uniform,
        }
    }
}

/// The textbook switch of the head-of-line and iSLIP studies: `ports` ports, 64 B cells at
/// 1 GHz (64 GB/s ports), no port-to-port pipeline, 1024-cell input buffers (nearly infinite
/// next to the 32 cells an input holds per output on average), 16-cell output queues, VOQ +
/// iSLIP with one iteration, speedup 1, cut-through.
pub fn study_config(ports: u16) -> SwitchConfig {
    SwitchConfig {
        ports,
        cell_bytes: 64,
        port_bytes_per_s: 64_000_000_000,
        port_to_port_ps: 0,
        forwarding: Forwarding::CutThrough,
        queueing: Queueing::Voq,
        arbiter: "islip".into(),
        iterations: 1,
        speedup: 1,
        input_buffer_cells: 1024,
        output_buffer_cells: 16,
    }
}

/// Why a bench could not be built or run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BenchError {
    /// The switch configuration is invalid (fatal).
    Config(ConfigError),
    /// Assembly failed (fatal).
    Build(BuildError),
    /// The run failed, e.g. a deadlock (fatal for this run).
    Run(RunError),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Config(e) => write!(f, "bench: {e}"),
            BenchError::Build(e) => write!(f, "bench assembly: {e}"),
            BenchError::Run(e) => write!(f, "bench run: {e}"),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<ConfigError> for BenchError {
    fn from(e: ConfigError) -> Self {
        BenchError::Config(e)
    }
}
impl From<BuildError> for BenchError {
    fn from(e: BuildError) -> Self {
        BenchError::Build(e)
    }
}
impl From<RunError> for BenchError {
    fn from(e: RunError) -> Self {
        BenchError::Run(e)
    }
}

/// A built single-switch simulation: `sw`, `inj{p}` and `sink{p}` for every port `p`.
pub struct Bench {
    /// The simulation.
    pub sim: Simulation,
    /// The cell clock.
    pub clock: ClockId,
    /// The switch.
    pub switch: ComponentId,
    /// Injectors, by port.
    pub injectors: Vec<ComponentId>,
    /// Sinks, by port.
    pub sinks: Vec<ComponentId>,
}

impl Bench {
    /// Builds the bench for `cfg` driven as `p` says.
    pub fn new(cfg: &SwitchConfig, p: &BenchParams) -> Result<Bench, BenchError> {
        Bench::with_arbiters(cfg, p, &mut ConfigArbiters)
    }

    /// As [`Bench::new`], with the switch's arbiter (instance `sw`) from `arbiters` when it
    /// supplies one (e.g. the RTL swapped in); its error is a config error on `arbiter`.
    pub fn with_arbiters(
        cfg: &SwitchConfig,
        p: &BenchParams,
        arbiters: &mut dyn ArbiterProvider,
    ) -> Result<Bench, BenchError> {
        if !(0.0..=1.0).contains(&p.load) {
            let e = ConfigError::BadField { field: "load", value: p.load.to_string(), allowed: "0..=1".into() };
            return Err(e.into());
        }
        if let Err(why) = p.pattern.validate(cfg.ports) {
            return Err(
                ConfigError::BadField { field: "pattern", value: format!("{:?}", p.pattern), allowed: why }.into()
            );
        }
        let routing = Box::new(TableRouting::identity(cfg.ports));
        let supplied = arbiters.arbiter("sw", cfg).map_err(|why| ConfigError::BadField {
            field: "arbiter",
            value: cfg.arbiter.clone(),
            allowed: why,
        })?;
        let mut sw = match supplied {
            Some(a) => Switch::with_arbiter(cfg, routing, a)?,
            None => Switch::new(cfg, routing)?,
        };
        let mut b = SimBuilder::with_options(SimOptions { seed: p.seed, ..SimOptions::default() });
        let clock = b.clock("cell", cfg.cell_clock())?;
        cfg.check_clock(b.clock_of(clock))?;
        let id = b.reserve("sw", clock)?;
        let spec = cfg.port_link(p.link_latency, p.link_depth);
        let (mut injectors, mut sinks) = (Vec::new(), Vec::new());
        for port in 0..cfg.ports {
            let inj = b.reserve(&format!("inj{port}"), clock)?;
            let sink = b.reserve(&format!("sink{port}"), clock)?;
            let (to_sw, from_inj) = b.link::<Packet>(inj, "out", id, &format!("in{port}"), spec)?;
            let (to_sink, from_sw) = b.link::<Packet>(id, &format!("out{port}"), sink, "in", spec)?;
            sw.connect(port, from_inj, to_sink)?;
            let ip = InjectorParams {
                src: port,
                destinations: cfg.ports,
                pattern: p.pattern,
                load: if p.single_source.is_none_or(|s| s == port) { p.load } else { 0.0 },
                packet_bytes: p.packet_bytes,
                cells: cfg.cells(p.packet_bytes),
                limit: p.limit,
                seed: p.seed,
            };
            b.install(inj, Injector::new(ip, to_sw))?;
            b.install(sink, Sink::new(port, from_sw, cfg.cell_bytes, p.sink_service_cycles, p.record_ids))?;
            injectors.push(inj);
            sinks.push(sink);
        }
        b.install(id, sw)?;
        Ok(Bench { sim: b.build()?, clock, switch: id, injectors, sinks })
    }

    /// Runs `n` port cycles.
    pub fn run_cycles(&mut self, n: u64) -> Result<(), BenchError> {
        self.sim.run_cycles(self.clock, n)?;
        Ok(())
    }

    /// Runs until nothing is left to do (every limited injector done, every packet delivered)
    /// or `max_cycles` pass; returns whether it drained.
    pub fn run_until_drained(&mut self, max_cycles: u64) -> Result<bool, BenchError> {
        let period = self.sim.clock(self.clock).cycles_to_dur(trnsim_kernel::Cycles(1)).as_ps();
        let stop = self.sim.run_until_idle(Dur::from_ps(period.saturating_mul(max_cycles)))?;
        Ok(stop == Stop::Idle)
    }

    /// The switch.
    pub fn switch(&self) -> &Switch {
        self.sim.component::<Switch>(self.switch).expect("the bench's switch")
    }
    /// The injector of port `p`.
    pub fn injector(&self, p: usize) -> &Injector {
        self.sim.component::<Injector>(self.injectors[p]).expect("an injector")
    }
    /// The sink of port `p`.
    pub fn sink(&self, p: usize) -> &Sink {
        self.sim.component::<Sink>(self.sinks[p]).expect("a sink")
    }

    /// Every sink's current window, merged; each sink starts a new one.
    pub fn take_window(&mut self) -> Window {
        let mut w = Window::default();
        for &s in &self.sinks {
            let sink = self.sim.component_mut::<Sink>(s).expect("a sink");
            w.merge(&sink.take_window());
        }
        w
    }

    /// Everything the sinks saw since the start, merged.
    pub fn total(&self) -> Window {
        let mut w = Window::default();
        (0..self.sinks.len()).for_each(|p| w.merge(&self.sink(p).total));
        w
    }

    /// Packets sent by all injectors.
    pub fn injected(&self) -> u64 {
        (0..self.injectors.len()).map(|p| self.injector(p).sent).sum()
    }
}
