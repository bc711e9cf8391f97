//! A NeuronCore run with DMA, HBM, semaphores and four engines on two clocks gives identical
//! statistics and identical Perfetto bytes under any tick order.

use trnsim_benchmarks::neuroncore::{assemble_text, attention_program, run_cores};
use trnsim_kernel::{LinkSelection, TickOrder, TraceOptions};

fn once(order: TickOrder, path: &std::path::Path) -> (String, Vec<u8>) {
    let program = assemble_text("attention", &attention_program(6)).unwrap();
    let sink = Box::new(trnsim_traces::PerfettoWriter::create(path).unwrap());
    let opts = TraceOptions { link_occupancy: true, signal_links: LinkSelection::None };
    let (sim, _) = run_cores(&program, 2, order, Some((sink, opts))).unwrap();
    (serde_json::to_string(&sim.report()).unwrap(), std::fs::read(path).unwrap())
}

#[test]
fn neuroncore_statistics_and_traces_do_not_depend_on_tick_order() {
    let dir = crate::common::scratch("nc_determinism");
    let (s0, t0) = once(TickOrder::Structural, &dir.join("a.pftrace"));
    for (i, order) in [TickOrder::Reversed, TickOrder::Shuffled(5), TickOrder::Structural].into_iter().enumerate() {
        let (s, t) = once(order, &dir.join(format!("b{i}.pftrace")));
        assert_eq!(s, s0, "{order:?}: statistics differ");
        assert!(t == t0, "{order:?}: trace bytes differ");
    }
}
