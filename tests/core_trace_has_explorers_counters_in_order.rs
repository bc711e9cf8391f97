//! A traced NeuronCore run has Neuron Explorer's counters by name and in the profiler's order
//! (`DMA Throughput`, `Sb Usage`, `PSUM Usage`, `Throttling`, `Pending DMA Count`, `MFU`,
//! `HFU`: their `sibling_order_rank` in core nc0's group, which Perfetto sorts the rows by),
//! with values that follow the run, loads in Perfetto's trace processor, and is
//! byte-identical when run again; a traced multi-chip run has a `CC-core 0` row per core with a
//! slice per collective.

use crate::common::{root, scratch, trnsim};
use trnsim_traces::TraceProcessor;

const COUNTERS: [&str; 7] =
    ["DMA Throughput", "Sb Usage", "PSUM Usage", "Throttling", "Pending DMA Count", "MFU", "HFU"];

fn traced(bench: &str, file: &std::path::Path) {
    let out = trnsim().args(["run", bench, "--trace"]).arg(file).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_core_trace_has_explorers_counters_in_order_and_is_deterministic() {
    let dir = scratch("core_trace_explorer_counters");
    let (a, b) = (dir.join("a.pftrace"), dir.join("b.pftrace"));
    traced("nc-attention", &a);
    traced("nc-attention", &b);
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(), "the same run traces the same bytes");
    let names = COUNTERS.map(|n| format!("'{n}'")).join(", ");
    let order = format!(
        "select t.name from track t join track p on t.parent_id = p.id join args a on a.arg_set_id = t.source_arg_set_id \
         where p.name = 'nc0' and a.key = 'sibling_order_rank' and t.name in ({names}) order by a.int_value"
    );
    let stat = |n: &str| {
        format!("select max(c.value), min(c.value), count(*) from counter c join counter_track t on c.track_id = t.id where t.name = '{n}'")
    };
    let last = |n: &str| {
        format!("select c.value from counter c join counter_track t on c.track_id = t.id where t.name = '{n}' order by c.ts desc limit 1")
    };
    let sql = [order.as_str(), &stat("Sb Usage"), &stat("PSUM Usage"), &stat("MFU"), &stat("HFU"), &last("PSUM Usage")];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&a, &sql).unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<&str> = rows[0].as_array().unwrap().iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(got, COUNTERS, "the counters by name, in the profiler's order");
    let v = |i: usize, k: usize| rows[i][0][k].as_f64().unwrap();
    // nc-attention loads 16 tiles of 128 partitions x 2 KiB and its weights into 32 MiB of SBUF.
    assert!(v(1, 0) > 0.0 && v(1, 0) < 50.0 && v(1, 2) > 2.0, "Sb Usage rises and moves: {:?}", rows[1]);
    assert!(v(2, 0) > 0.0 && v(2, 1) == 0.0, "PSUM Usage: banks filled and drained: {:?}", rows[2]);
    assert!(v(3, 0) <= 100.0 && v(3, 1) > 0.0, "MFU in %: {:?}", rows[3]);
    assert!(
        v(4, 0) <= 100.0 && v(4, 0) >= v(3, 0),
        "HFU >= MFU (padding and throttle included): {:?} {:?}",
        rows[4],
        rows[3]
    );
    // The score banks 0-3 are drained by the exps that read them; the PV products in banks
    // 4-7 are never read by the benchmark, so they stay live: 4 of 8 banks.
    assert_eq!(v(5, 0), 50.0, "PSUM at the end: the four PV banks nothing reads");
}

#[test]
fn a_multi_chip_trace_has_a_cc_core_row_per_core_with_its_collectives() {
    let dir = scratch("core_trace_cc_core");
    let trace = dir.join("tp.pftrace");
    traced("tp-matmul-4", &trace);
    let sql = [
        "select count(*) from track where name = 'CC-core 0'",
        "select count(*), min(dur) from slice s join track t on s.track_id = t.id where t.name glob 'CC-core 0*' and s.name = 'collective'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    let v = |i: usize, k: usize| rows[i][0][k].as_i64().unwrap();
    assert!(v(0, 0) >= 8, "a CC-core row per traced core: {:?}", rows[0]);
    assert!(v(1, 0) >= v(0, 0) && v(1, 1) > 0, "collective slices on them: {:?}", rows[1]);
}
