//! Random graphs of components with random latencies, depths, credit latencies, bandwidths and
//! clock frequencies give bit-identical statistics and trace bytes whatever the tick order
//! within a time step; credits are never exceeded; no message is lost or duplicated.

pub(crate) use trnsim_benchmarks::random_graph::builder;
use trnsim_benchmarks::random_graph::{acc, Chatter, Msg};
use trnsim_kernel::{Dur, Simulation, TickOrder, TraceOptions};

struct Graph {
    sim: Simulation,
    depths: Vec<u32>,
}

fn build(seed: u64, order: TickOrder) -> Graph {
    let (b, depths) = builder(seed, order);
    Graph { sim: b.build().unwrap(), depths }
}

/// Runs one graph; returns (outcome text, stats JSON, Perfetto bytes, VCD bytes).
fn run(seed: u64, order: TickOrder) -> (String, String, Vec<u8>, Vec<u8>) {
    let mut g = build(seed, order);
    let pf = SharedBuf::default();
    let vcd = SharedBuf::default();
    let sinks: Vec<Box<dyn trnsim_kernel::TraceSink>> = vec![
        Box::new(trnsim_traces::PerfettoWriter::new(pf.clone(), "perfetto")),
        Box::new(trnsim_traces::VcdWriter::new(vcd.clone(), "vcd")),
    ];
    g.sim.attach_trace(
        Box::new(trnsim_traces::Fanout::new(sinks)),
        &TraceOptions { link_occupancy: true, signal_links: trnsim_kernel::LinkSelection::All },
    );
    let outcome = format!("{:?}", g.sim.run_until_idle(Dur::from_us(200)));
    g.sim.finish_trace().expect("trace finishes");
    let report = g.sim.report();
    check_conservation(&mut g, &report);
    for (i, d) in g.depths.iter().enumerate() {
        let name = format!("link:{}", g.sim.links()[i].name);
        let max = report.int(&name, "occupancy_msgs_max").unwrap();
        assert!(max <= u64::from(*d), "{name}: occupancy {max} exceeds depth {d}");
    }
    check_report_where(&g.sim, &report);
    let json = serde_json::to_string(&report).unwrap();
    (outcome, json, pf.take(), vcd.take())
}

/// A report of some owners equals the whole report less the others, and counts them.
fn check_report_where(sim: &Simulation, whole: &trnsim_kernel::StatsReport) {
    let (all, none_left) = sim.report_where(&|_| true);
    assert_eq!(&all, whole, "keeping every owner gives the whole report");
    assert_eq!(none_left, 0);
    // Keep every other owner (by a hash of the name), and the kernel.
    let keep =
        |o: &str| o == "kernel" || o.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b))) % 2 == 0;
    let (some, left_out) = sim.report_where(&keep);
    let mut want = whole.clone();
    want.owners.retain(|o, _| keep(o));
    assert_eq!(some, want, "a filtered report is the whole one, filtered");
    assert_eq!(left_out as usize, whole.owners.len() - want.owners.len(), "owners left out are counted");
}

fn check_conservation(g: &mut Graph, report: &trnsim_kernel::StatsReport) {
    let mut created = (0u64, 0u64, 0u64);
    let mut remaining = (0u64, 0u64, 0u64);
    let n = g.sim.component_count();
    for i in 0..n {
        let id = g.sim.component_id(&format!("g.n{i}")).unwrap();
        let c = g.sim.component::<Chatter>(id).unwrap();
        created =
            (created.0 + c.created().0, created.1.wrapping_add(c.created().1), created.2.wrapping_add(c.created().2));
        let part = c.consumed();
        remaining = (remaining.0 + part.0, remaining.1.wrapping_add(part.1), remaining.2.wrapping_add(part.2));
        for m in c.queued() {
            acc(&mut remaining, m.id);
        }
    }
    for l in 0..g.sim.links().len() {
        for m in g.sim.link_contents::<Msg>(trnsim_kernel::LinkId::from_index(l)).unwrap() {
            acc(&mut remaining, m.id);
        }
    }
    assert_eq!(created, remaining, "messages lost or duplicated (count, sum, sum of squares)");
    assert!(report.int("kernel", "ticks").unwrap() > 0);
}

#[derive(Clone, Default)]
pub(crate) struct SharedBuf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl SharedBuf {
    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn random_graphs_give_identical_results_under_any_tick_order() {
    let mut deadlocks = 0;
    for seed in 1..=40u64 {
        let base = run(seed, TickOrder::Structural);
        assert!(!base.2.is_empty(), "seed {seed}: empty perfetto trace");
        if base.0.contains("Deadlock") {
            deadlocks += 1;
        }
        for order in [TickOrder::Reversed, TickOrder::Shuffled(seed), TickOrder::Shuffled(seed * 7 + 1)] {
            let other = run(seed, order);
            assert_eq!(base.0, other.0, "seed {seed} {order:?}: outcome differs");
            assert_eq!(base.1, other.1, "seed {seed} {order:?}: statistics differ");
            assert!(base.2 == other.2, "seed {seed} {order:?}: perfetto trace bytes differ");
            assert!(base.3 == other.3, "seed {seed} {order:?}: vcd bytes differ");
        }
    }
    // The generator must exercise both outcomes, or the test proves less than it claims.
    assert!(deadlocks < 40, "every random graph deadlocked");
}
