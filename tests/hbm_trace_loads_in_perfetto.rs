//! The Perfetto trace of an HBM run loads in Perfetto's trace processor with --check and shows
//! one slice per DRAM command on a track per pseudo-channel, at the simulated cycles the timing
//! formulas give, plus queue-depth and bandwidth counters.

use crate::common::{root, scratch, trnsim};
use trnsim_traces::TraceProcessor;

#[test]
fn hbm_trace_has_a_slice_per_command_and_counters_per_pseudo_channel() {
    let dir = scratch("hbm_trace_loads_in_perfetto");
    let trace = dir.join("hbm.pftrace");
    let json = dir.join("hbm.json");
    let out = trnsim()
        .args(["run", "hbm-same-bank", "--trace"])
        .arg(&trace)
        .arg("--json")
        .arg(&json)
        .current_dir(root())
        .output()
        .expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let stats = &results["benchmarks"][0]["stats"]["owners"]["hbm"];
    let sql = [
        "select count(*) from slice where name = 'ACT'",
        "select count(*) from slice where name = 'RD'",
        "select count(*) from slice where name = 'REFPB'",
        "select count(distinct name) from track where name like 'ch%.pc% commands'",
        "select min(ts) from slice where name = 'ACT'",
        "select min(ts) from slice where name = 'RD'",
        "select count(*) from counter_track where name like 'ch0.pc0 %'",
        "select max(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'ch0.pc0 queue'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    let one = |i: usize| rows[i][0][0].clone();
    assert_eq!(one(0), stats["cmd_ACT"], "an ACT slice per ACT command");
    assert_eq!(one(1), stats["cmd_RD"], "an RD slice per read");
    assert_eq!(one(1), 2000);
    assert_eq!(one(2), stats["cmd_REFPB"], "refresh commands are traced too");
    assert!(one(3).as_u64().unwrap() >= 1, "command tracks are named chC.pcP commands");
    // HBM3E, CK = 2.4 GHz: the first request is sent at cycle 0, arrives at cycle 1 (one-cycle
    // link), ACT issues at cycle 2 (833 ps, shown as 1 ns) and RD tRCDRD = 47 CK later, at
    // cycle 49 (20.4 ns).
    assert_eq!(one(4), 1);
    assert_eq!(one(5), 20);
    assert_eq!(one(6), 2, "queue and bandwidth counters for ch0.pc0");
    assert!(one(7).as_f64().unwrap() >= 1.0, "the same-bank queue fills");
}
