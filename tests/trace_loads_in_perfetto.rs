//! The Perfetto trace of a small multi-clock system (the demo: 1.4, 2.4 and 1.0 GHz) loads in
//! Perfetto's own trace processor with --check, and SQL finds the tracks, slice counts,
//! simulated timestamps, counter values and flows the model implies.

use crate::common::{root, scratch, trnsim};
use trnsim_traces::TraceProcessor;

#[test]
fn demo_trace_loads_in_perfetto_with_expected_contents() {
    let dir = scratch("trace_loads_in_perfetto");
    let trace = dir.join("demo.pftrace");
    let out = trnsim().args(["run", "demo", "--trace"]).arg(&trace).current_dir(root()).output().expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sql = [
        "select count(*) from slice where name = 'inject'",
        "select count(*) from slice where name = 'forward'",
        "select count(*) from slice where name = 'deliver'",
        "select count(*) from flow",
        "select count(*) from slice where dur < 0",
        "select min(ts) from slice where name = 'inject'",
        "select min(ts) from slice where name = 'deliver'",
        "select name from track where name in ('src0','src1','relay0','relay1','sink0','sink1') order by name",
        "select count(*) from counter_track where name = 'occupancy'",
        "select max(c.value), min(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'occupancy'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    let one = |i: usize| rows[i][0][0].clone();
    assert_eq!(one(0), 800, "inject instants: one per packet");
    assert_eq!(one(1), 800, "forward slices: one per packet per relay");
    assert_eq!(one(2), 800, "deliver instants");
    assert_eq!(one(3), 1600, "flows: inject -> forward -> deliver per packet");
    assert_eq!(one(4), 0);
    assert_eq!(one(5), 0, "src1 injects at time 0");
    // src1 sends at 0 ps; +1 core cycle (714 ps) -> relay1's edge 2 (833 ps); +5 cycles -> edge 7
    // (2916 ps); +4 fabric cycles (1666 ps) = 4582 ps -> sink1's first 1 GHz edge: 5000 ps.
    assert_eq!(one(6), 5, "first delivery at 5 ns of simulated time");
    let names: Vec<String> = rows[7].as_array().unwrap().iter().map(|r| r[0].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["relay0", "relay1", "sink0", "sink1", "src0", "src1"]);
    assert_eq!(one(8), 4, "an occupancy counter per link");
    // The sinks drain every edge, so occupancy is the messages in flight: at most 3 on the
    // 4-cycle, 2.4 GHz relay1 -> sink1 link (below every depth), and every link empties.
    assert_eq!(rows[9][0][0].as_f64(), Some(3.0), "peak link occupancy");
    assert_eq!(rows[9][0][1].as_f64(), Some(0.0));
}
