//! Wiring a switch by hand (as topologies will), routing tables, clock checks, and every
//! preset carrying traffic.

use crate::switch::presets::ALL;
use crate::switch::traffic::{run_point, study_config, BenchParams, Injector, InjectorParams, Sink, SweepParams};
use crate::switch::{ConfigError, Packet, Switch, SwitchConfig, TableRouting};
use trnsim_kernel::{Frequency, SimBuilder};

#[test]
fn unroutable_packets_are_counted_and_dropped() {
    let cfg = SwitchConfig { ports: 2, ..study_config(2) };
    let routing = TableRouting::new(vec![None, Some(1)], 2).unwrap(); // destination 0 has no route
    let mut sw = Switch::new(&cfg, Box::new(routing)).unwrap();
    let mut b = SimBuilder::new();
    let clock = b.clock("cell", cfg.cell_clock()).unwrap();
    cfg.check_clock(b.clock_of(clock)).unwrap();
    let id = b.reserve("sw", clock).unwrap();
    let spec = cfg.port_link(1, 4);
    let mut sinks = Vec::new();
    for port in 0..2u16 {
        let inj = b.reserve(&format!("inj{port}"), clock).unwrap();
        let sink = b.reserve(&format!("sink{port}"), clock).unwrap();
        let (to_sw, from_inj) = b.link::<Packet>(inj, "out", id, &format!("in{port}"), spec).unwrap();
        let (to_sink, from_sw) = b.link::<Packet>(id, &format!("out{port}"), sink, "in", spec).unwrap();
        sw.connect(port, from_inj, to_sink).unwrap();
        let load = if port == 0 { 0.5 } else { 0.0 };
        let p = InjectorParams {
            src: port,
            destinations: 2,
            pattern: crate::switch::traffic::Pattern::Uniform,
            load,
            packet_bytes: 64,
            cells: 1,
            limit: Some(1_000),
            seed: 3,
        };
        b.install(inj, Injector::new(p, to_sw)).unwrap();
        b.install(sink, Sink::new(port, from_sw, 64, 0, false)).unwrap();
        sinks.push(sink);
    }
    let (o, i) = foreign_ports();
    assert!(matches!(sw.connect(2, i, o), Err(ConfigError::BadField { field: "port", .. })));
    b.install(id, sw).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(trnsim_kernel::Dur::from_us(100)).unwrap();
    let s = sim.component::<Switch>(id).unwrap();
    let to_1 = sim.component::<Sink>(sinks[1]).unwrap().total.packets;
    assert_eq!(sim.component::<Sink>(sinks[0]).unwrap().total.packets, 0);
    assert_eq!(s.stats().unroutable_packets + to_1, 1_000);
    assert!((400..600).contains(&to_1), "{to_1}");
    assert_eq!(s.held_packets(), 0);
}

/// Ports of a throwaway simulation, to show that a bad port number is refused.
fn foreign_ports() -> (trnsim_kernel::OutPort<Packet>, trnsim_kernel::InPort<Packet>) {
    let mut b = SimBuilder::new();
    let c = b.clock("c", Frequency::from_mhz(1)).unwrap();
    let (x, y) = (b.reserve("x", c).unwrap(), b.reserve("y", c).unwrap());
    b.link::<Packet>(x, "o", y, "i", trnsim_kernel::LinkSpec::default()).unwrap()
}

#[test]
fn a_switch_on_the_wrong_clock_is_refused() {
    let cfg = study_config(4);
    let mut b = SimBuilder::new();
    let clock = b.clock("core", Frequency::from_mhz(1_400)).unwrap();
    let e = cfg.check_clock(b.clock_of(clock)).unwrap_err();
    assert_eq!(e, ConfigError::ClockMismatch { clock: "core".into(), have_hz: 1_400_000_000, want_hz: 1_000_000_000 });
    assert!(e.to_string().contains("core"), "{e}");
}

#[test]
fn every_preset_carries_half_load() {
    let sp = SweepParams { warmup_cycles: 1_000, sample_cycles: 1_000, ..SweepParams::default() };
    for p in ALL.iter() {
        let cfg = p.config.clone();
        let bp = BenchParams { packet_bytes: cfg.cell_bytes, ..BenchParams::default() };
        let pt = run_point(&cfg, &bp, &sp, 0.5).unwrap();
        assert!(!pt.saturated && (pt.accepted - 0.5).abs() < 0.02, "{}: {pt:?}", p.name);
        let zero_load = cfg.latency_cycles() as f64 + 2.0;
        assert!(pt.latency_mean_cycles >= zero_load && pt.latency_mean_cycles < zero_load + 10.0, "{}: {pt:?}", p.name);
    }
}
