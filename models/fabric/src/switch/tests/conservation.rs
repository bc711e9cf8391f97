//! Conservation (every injected packet delivered exactly once, to its destination, in order
//! per source and destination), back-pressure bounds, and determinism.

use super::saturation::cfg;
use crate::switch::traffic::{study_config, Bench, BenchParams};
use crate::switch::{Forwarding, Queueing, SwitchConfig};

fn drained(cfg: &SwitchConfig, p: &BenchParams) -> Bench {
    let mut b = Bench::new(cfg, p).unwrap();
    assert!(b.run_until_drained(10_000_000).unwrap(), "{cfg:?} did not drain");
    b
}

#[test]
fn every_injected_packet_is_delivered_exactly_once() {
    let base = SwitchConfig { ports: 8, input_buffer_cells: 12, output_buffer_cells: 4, ..study_config(8) };
    let per_source = 300;
    for queueing in [Queueing::Voq, Queueing::Fifo] {
        for arbiter in ["islip", "round-robin"] {
            for forwarding in [Forwarding::CutThrough, Forwarding::StoreAndForward] {
                for (speedup, latency_ps) in [(1, 0), (2, 5_000)] {
                    let c = SwitchConfig {
                        queueing,
                        arbiter: arbiter.into(),
                        iterations: 2,
                        forwarding,
                        speedup,
                        port_to_port_ps: latency_ps,
                        ..base.clone()
                    };
                    let p = BenchParams {
                        load: 0.9,
                        packet_bytes: 200, // 4 cells
                        limit: Some(per_source),
                        sink_service_cycles: 5, // slower than the switch: back-pressure
                        record_ids: true,
                        ..BenchParams::default()
                    };
                    let b = drained(&c, &p);
                    check_delivery(&b, c.ports, per_source);
                    let st = b.switch().stats();
                    assert_eq!(st.unroutable_packets, 0);
                    for ps in &st.ports {
                        assert!(ps.occupancy_cells.max() <= u64::from(c.input_buffer_cells), "{c:?}");
                    }
                }
            }
        }
    }
}

fn check_delivery(b: &Bench, ports: u16, per_source: u64) {
    assert_eq!(b.injected(), u64::from(ports) * per_source);
    assert_eq!(b.switch().held_packets(), 0);
    let mut all = Vec::new();
    for k in 0..usize::from(ports) {
        let s = b.sink(k);
        assert_eq!(s.misdelivered, 0);
        for src in 0..ports {
            let seqs: Vec<u64> = s.ids.iter().filter(|i| i.0 == src).map(|i| i.1).collect();
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "order from {src} to {k}");
        }
        all.extend_from_slice(&s.ids);
    }
    all.sort_unstable();
    let want: Vec<(u16, u64)> = (0..ports).flat_map(|s| (0..per_source).map(move |q| (s, q))).collect();
    assert_eq!(all, want, "each packet exactly once");
}

#[test]
fn same_seed_same_statistics() {
    let c = cfg(Queueing::Voq, "islip", 2);
    let run = |seed| {
        let mut b = Bench::new(&c, &BenchParams { load: 0.8, seed, ..BenchParams::default() }).unwrap();
        b.run_cycles(3_000).unwrap();
        b.sim.report()
    };
    let (a, b, other) = (run(5), run(5), run(6));
    assert_eq!(a, b);
    assert_ne!(a, other);
}

#[test]
fn full_outputs_hold_packets_back_without_loss() {
    // Sinks take one packet per 4 cycles while inputs offer one per cycle: the outputs run out
    // of credits, the output queues and input buffers fill, and the injectors' links block.
    let c = SwitchConfig { input_buffer_cells: 16, output_buffer_cells: 2, ..study_config(4) };
    let p = BenchParams { load: 1.0, sink_service_cycles: 4, ..BenchParams::default() };
    let mut b = Bench::new(&c, &p).unwrap();
    b.run_cycles(4_000).unwrap();
    let st = b.switch().stats();
    let delivered = b.total().packets;
    assert!((3_950..=4_000).contains(&delivered), "4 sinks at 1/4 per cycle: {delivered}");
    for ps in &st.ports {
        assert_eq!(ps.occupancy_cells.max(), 16, "input buffers fill and stop there");
    }
    let held = b.switch().held_packets();
    assert_eq!(b.injected(), delivered + held + links_in_flight(&mut b));
}

fn links_in_flight(b: &mut Bench) -> u64 {
    b.sim.messages_in_links()
}
