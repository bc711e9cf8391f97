//! Link tests: small simulations of source -> link -> order-checking sink, one file per
//! behaviour. `run` builds and runs one; the files assert on its [`Outcome`].

mod conservation;
mod determinism;
mod efficiency;
mod latency;
mod replay;

use crate::link::traffic::{OrderedSink, PacketSource, SourceSpec};
use crate::link::{attach, LinkFaults, LinkParams, LinkRx, LinkTx, RxStats, TxStats};
use trnsim_kernel::{Dur, Frequency, SimBuilder, SimOptions, StatsReport, Stop, Time};

/// One experiment.
#[derive(Clone, Debug)]
pub(super) struct Setup {
    pub params: LinkParams,
    pub source: SourceSpec,
    /// The sink takes at most one packet per interval.
    pub sink_interval: Option<Dur>,
    pub clock: Frequency,
    pub seed: u64,
    pub faults: LinkFaults,
    pub limit: Dur,
}

impl Setup {
    /// `count` saturating packets of `sizes` over 4 flows on `encoding` x `lanes`, at `ber`,
    /// with a 1 GHz link clock.
    pub fn new(encoding: &str, lanes: u32, ber: f64, count: u64, sizes: &[u32]) -> Setup {
        Setup {
            params: LinkParams { ber, ..LinkParams::with(encoding, lanes) },
            source: SourceSpec { flows: 4, count, sizes: sizes.to_vec(), interval: None, src: 0, dst: 1 },
            sink_interval: None,
            clock: Frequency::from_mhz(1000),
            seed: 7,
            faults: LinkFaults::default(),
            limit: Dur::from_us(100_000),
        }
    }
}

/// What came out.
pub(super) struct Outcome {
    pub tx: TxStats,
    pub rx: RxStats,
    pub sent_per_flow: Vec<u64>,
    pub received: u64,
    pub verdict: Result<(), String>,
    pub report: StatsReport,
    pub stop: Stop,
    pub end: Time,
}

pub(super) fn run(s: &Setup) -> Outcome {
    let mut b = SimBuilder::with_options(SimOptions { seed: s.seed, ..SimOptions::default() });
    let clk = b.clock("link", s.clock).expect("clock");
    let src = b.reserve("src", clk).expect("src");
    let sink = b.reserve("sink", clk).expect("sink");
    let h = attach(&mut b, "l", clk, &s.params, s.seed, (src, "out"), (sink, "in")).expect("link");
    b.install(src, PacketSource::new(h.input, s.source.clone(), s.seed, 1)).expect("install src");
    b.install(sink, OrderedSink::new(h.output, s.sink_interval)).expect("install sink");
    let mut sim = b.build().expect("build");
    sim.component_mut::<LinkRx>(h.rx).expect("rx").set_faults(s.faults);
    let stop = sim.run_until_idle(s.limit).expect("run");
    let source = sim.component::<PacketSource>(src).expect("source");
    let sink = sim.component::<OrderedSink>(sink).expect("sink");
    Outcome {
        tx: sim.component::<LinkTx>(h.tx).expect("tx").stats().clone(),
        rx: sim.component::<LinkRx>(h.rx).expect("rx").stats().clone(),
        sent_per_flow: source.per_flow().to_vec(),
        received: sink.received,
        verdict: sink.verify(source.per_flow()),
        report: sim.report(),
        stop,
        end: sim.now(),
    }
}
