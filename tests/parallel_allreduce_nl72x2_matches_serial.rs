//! The 144-chip Trn3 Gen2 (NL72x2) ring all-reduce, built per chip and switch, gives the same
//! statistics JSON and the same Perfetto trace bytes serially and split on 2 and 4 threads
//! (both partition rules), and the trace loads in Perfetto's trace processor.

use crate::kernel_random_graphs_are_order_independent::SharedBuf;
use trnsim_fabric::collective::{Collective, Params};
use trnsim_kernel::{run_threads, Dur, ParallelConfig, PartitionRule, SimBuilder, TraceOptions};
use trnsim_traces::PerfettoWriter;

const SIZE: u64 = 1 << 20;

fn builder() -> Result<SimBuilder, String> {
    let topo = trnsim_fabric::topo::load(&trnsim_fabric::topo::presets_dir().join("trn3-gen2-nl72x2.ron"))?;
    let coll: Collective = "all_reduce:ring".parse()?;
    let mut b = SimBuilder::new();
    trnsim_fabric::system::build_collective(&mut b, &topo, coll, SIZE, &Params::default())?;
    Ok(b)
}

fn limit() -> Dur {
    Params::default().limit
}

#[test]
fn the_144_chip_all_reduce_is_identical_serial_and_partitioned() {
    let mut sim = builder().unwrap().build().unwrap();
    let buf = SharedBuf::default();
    sim.attach_trace(Box::new(PerfettoWriter::new(buf.clone(), "perfetto")), &TraceOptions::default());
    sim.run_until_idle(limit()).unwrap();
    sim.finish_trace().unwrap();
    let json = serde_json::to_string(&sim.report()).unwrap();
    let trace = buf.take();
    let finish =
        sim.report().owners.values().filter_map(|s| s.get("finish_ps")).map(|v| v.as_f64()).fold(0.0, f64::max);
    assert!(finish > 100e6, "the all-reduce took {finish} ps");
    for (threads, rule) in [(2, PartitionRule::Auto), (2, PartitionRule::ByName { depth: 1 }), (4, PartitionRule::Auto)]
    {
        let cfg = ParallelConfig {
            workers: None,
            threads,
            rule: rule.clone(),
            min_lookahead: Some(Dur::from_ns(50)),
            on_window: None,
            report_where: None,
        };
        let pbuf = SharedBuf::default();
        let sink = Box::new(PerfettoWriter::new(pbuf.clone(), "perfetto"));
        let (run, _) = run_threads(builder, &cfg, limit(), Some((sink, TraceOptions::default())), |_| ()).unwrap();
        assert!(run.plan.cut.len() > 100, "{threads} threads {rule:?}: only {} links cut", run.plan.cut.len());
        assert!(run.plan.lookahead >= Dur::from_ns(50));
        let pjson = serde_json::to_string(&run.report).unwrap();
        assert_eq!(json, pjson, "{threads} threads, {rule:?}: statistics differ");
        assert!(trace == pbuf.take(), "{threads} threads, {rule:?}: trace bytes differ");
    }
    // A step slice per chip per ring step: 2 (n - 1) steps on each of the 144 chips.
    let path = crate::common::scratch("allreduce_nl72x2_partitioned").join("serial.pftrace");
    std::fs::write(&path, &trace).unwrap();
    let Some(tp) = trnsim_traces::TraceProcessor::for_tests(&crate::common::root()) else { return };
    let rows = tp.query(&path, &["select count(*) from slice where name = 'step'"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows[0][0][0], 144 * 2 * 143, "step slices");
}
