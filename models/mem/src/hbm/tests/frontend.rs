//! The stack's front end: a full pseudo-channel queue does not stop a port's requests to
//! other channels while that pseudo-channel's intake buffer has room; with no buffer it does
//! (head-of-line blocking).

use crate::hbm::org::Location;
use crate::hbm::traffic::{attach, GenParams, RequestSource, SourceReq};
use crate::hbm::{presets, HbmStack, StackConfig};
use trnsim_kernel::{Dur, SimBuilder};

/// 96 reads to one bank of ch0.pc0, each to another row (a slow queue that overflows), then
/// 512 reads spread over the other channels.
struct HotThenSpread {
    addrs: Vec<u64>,
    next: usize,
}

impl RequestSource for HotThenSpread {
    fn next_request(&mut self) -> Option<SourceReq> {
        let a = *self.addrs.get(self.next)?;
        self.next += 1;
        Some(SourceReq { addr: a, write: false, cycle: None })
    }
}

fn run(intake_buffer: u32) -> trnsim_kernel::StatsReport {
    let mut cfg = StackConfig::from_preset(presets::find("hbm3-6400").unwrap());
    cfg.controller.intake_buffer = intake_buffer;
    let map = HbmStack::new(&cfg).unwrap().address_map().clone();
    let mut addrs: Vec<u64> = (0..96).map(|r| map.encode(&Location { row: r, ..Location::default() })).collect();
    addrs.extend((0..512u32).map(|i| {
        let channel = 1 + i % (cfg.org.channels - 1);
        map.encode(&Location { channel, pc: i % 2, column: i / 32, ..Location::default() })
    }));
    let mut b = SimBuilder::new();
    let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
    let gp = GenParams { width: 8, in_flight: 1024, rate: f64::INFINITY, bytes: cfg.org.access_bytes() };
    attach(&mut b, "hbm", clk, &cfg, Box::new(HotThenSpread { addrs, next: 0 }), gp, false).unwrap();
    let mut sim = b.build().unwrap();
    sim.run_until_idle(Dur::from_us(1_000)).unwrap();
    sim.report()
}

#[test]
fn a_full_queue_blocks_its_port_only_without_an_intake_buffer() {
    let blocked = run(0);
    let buffered = run(64);
    for r in [&blocked, &buffered] {
        assert_eq!(r.int("hbm", "reads"), Some(608));
    }
    // Without a buffer the 65th hot request waits at the link head, and every request behind
    // it (all to idle channels) waits with it: the spread reads finish only as the hot bank
    // drains, one row conflict at a time.
    assert!(blocked.int("hbm", "port_stall_cycles").unwrap() > 0);
    assert_eq!(blocked.int("hbm", "intake_buffered"), Some(0));
    // With one, the 32 hot requests beyond the queue wait in ch0.pc0's buffer and the spread
    // reads go straight to their queues: the port never stalls.
    assert_eq!(buffered.int("hbm", "port_stall_cycles"), Some(0));
    assert_eq!(buffered.int("hbm", "intake_buffered"), Some(32));
    assert_eq!(buffered.int("hbm", "intake_buffer_max"), Some(32));
    let mean = |r: &trnsim_kernel::StatsReport| r.get("hbm.gen", "latency_cycles_mean").unwrap().as_f64();
    assert!(mean(&buffered) < 0.5 * mean(&blocked), "{} vs {}", mean(&buffered), mean(&blocked));
}

#[test]
fn an_intake_buffer_out_of_range_is_refused_by_name() {
    let mut cfg = StackConfig::from_preset(presets::find("hbm3-6400").unwrap());
    cfg.controller.intake_buffer = 4097;
    let e = HbmStack::new(&cfg).err().unwrap();
    assert_eq!(e, "controller.intake_buffer: 4097 is outside 0..=4096");
    cfg.controller.intake_buffer = 4096;
    assert!(HbmStack::new(&cfg).is_ok());
}

/// Addresses of a two-stack memory sent to stack 1: the stack counts those whose `st` level
/// names stack 0 (a router's error) as `misrouted_requests`, and serves every request, in
/// both fidelities and for requests of one burst and of several.
#[test]
fn a_stack_counts_requests_meant_for_another_stack() {
    use crate::hbm::Fidelity;
    for fidelity in [Fidelity::Cycle, Fidelity::Fast] {
        for bursts in [1u32, 4] {
            let mut cfg = StackConfig::from_preset(presets::find("hbm3-6400").unwrap());
            cfg.controller.address_map = format!("st-{}", crate::hbm::AddressMap::DEFAULT);
            (cfg.stacks, cfg.index, cfg.fidelity) = (2, 1, fidelity);
            let map = HbmStack::new(&cfg).unwrap().address_map().clone();
            let bytes = cfg.org.access_bytes() * bursts;
            // 40 requests, the stack level of every third one 0 (14 of them), the others 1.
            let addrs: Vec<u64> = (0..40u32)
                .map(|i| {
                    let stack = u32::from(i % 3 != 0);
                    map.encode(&Location { stack, channel: i % cfg.org.channels, row: i, ..Location::default() })
                })
                .collect();
            let mut b = SimBuilder::new();
            let clk = b.clock("hbm", cfg.timing.frequency()).unwrap();
            let gp = GenParams { width: 4, in_flight: 64, rate: f64::INFINITY, bytes };
            attach(&mut b, "hbm", clk, &cfg, Box::new(HotThenSpread { addrs, next: 0 }), gp, false).unwrap();
            let mut sim = b.build().unwrap();
            sim.run_until_idle(Dur::from_us(1_000)).unwrap();
            let r = sim.report();
            let case = format!("{fidelity:?}, {bursts} bursts");
            assert_eq!(r.int("hbm", "misrouted_requests"), Some(14), "{case}");
            assert_eq!(r.int("hbm.gen", "reads"), Some(40), "{case}");
        }
    }
}
