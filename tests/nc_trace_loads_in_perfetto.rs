//! A NeuronCore run's Perfetto trace loads in the trace processor with --check, has a track
//! per engine with a slice per instruction, and lays the core's rows out as AWS Neuron
//! Explorer's device profile does (names and order).

use crate::common::{root, scratch, trnsim};
use trnsim_traces::TraceProcessor;

#[test]
fn matmul_trace_has_a_slice_per_instruction_on_the_tensor_track() {
    let dir = scratch("nc_trace_loads_in_perfetto");
    let trace = dir.join("nc.pftrace");
    let out = trnsim().args(["run", "nc-matmul-bf16", "--trace"]).arg(&trace).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sql = [
        "select count(*) from slice s join track t on s.track_id = t.id where t.name glob 'TensorMatrix Engine - Row [0-9]*' and s.name = 'matmul'",
        "select count(*) from slice where name = 'matmul'",
        "select count(*) from slice s join track t on s.track_id = t.id where t.name glob 'Tensor Engine - Row [0-9]*' and s.name = 'ldweights'",
        "select count(*) from track where name = 'TensorMatrix Engine - Row 0'",
        "select min(dur), max(dur) from slice where name = 'matmul'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        rows[0][0][0], 256,
        "the matmul slices are on the TensorMatrix rows (pipelined instructions overlap onto further rows)"
    );
    assert_eq!(rows[1][0][0], 256, "a slice per matmul");
    assert_eq!(rows[2][0][0], 256, "a slice per ldweights, on the Tensor rows");
    assert_eq!(rows[3][0][0], 1, "a TensorMatrix row for the tensor engine's multiplies");
    // Each matmul streams 512 columns at 2.4 GHz (213 ns) plus the SBUF read and PSUM write.
    assert!(rows[4][0][0].as_i64().unwrap() >= 213, "{:?}", rows[4]);
}

#[test]
fn attention_trace_has_engine_dma_and_hbm_tracks_and_flows() {
    let dir = scratch("nc_attention_trace");
    let trace = dir.join("att.pftrace");
    let out = trnsim().args(["run", "nc-attention", "--trace"]).arg(&trace).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sql = [
        "select count(distinct name) from track where name in ('Tensor Engine - Row 0', 'Scalar Engine - Row 0', 'Vector Engine - Row 0', 'Sync Engine - Row 0')",
        "select count(distinct name) from track where name glob 'DMA Engine [0-9]* - Row 0'",
        "select count(*) from track where name like 'ch%.pc% commands'",
        "select count(*) from flow",
        "select count(*) from slice where name = 'dma'",
        "select count(*) from slice where name = 'packet'",
        "select count(*) from slice where name = 'sem_inc'",
        "select count(distinct t.name) from slice s join track t on s.track_id = t.id where s.name = 'dma' and t.name glob 'DMA Queue [0-9]*'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    let one = |i: usize| rows[i][0][0].as_i64().unwrap();
    assert_eq!(one(0), 4, "a track per engine with a stream");
    assert_eq!(one(1), 16, "a track per DMA engine");
    assert_eq!(one(2), 32, "a command track per HBM pseudo-channel");
    assert_eq!(one(4), 17, "a dma slice per command (16 tiles + the weights)");
    assert!(one(5) >= 17 * 16, "packets on the DMA engines");
    assert!(one(6) > 0, "semaphore signals");
    assert_eq!(one(7), 5, "dma slices on the tracks of the queues used (q0..q3 and q15)");
    // Flows: one per DMA (start -> completion), and from the signal that releases a wait to the
    // instruction it releases (at least one per tile).
    assert!(one(3) >= 17 + 16, "flows: {}", one(3));
}

/// The rows of core nc0 as Neuron Explorer shows a device profile's: instruction rows per
/// engine (Tensor for loads, TensorMatrix for multiplies), DMA engine rows, DMA queue rows, a
/// counter per semaphore named for its engine, the DMA throughput, pending DMA count, MFU and
/// HFU counters, with values a reader can check (Perfetto's trace processor); the slice rows in
/// that order (the Chrome JSON writer's `thread_sort_index`, which follows declaration order
/// as Perfetto's `sibling_order_rank` does; the counters' order is checked where they are
/// declared, in trnsim-core's layout tests).
#[test]
fn a_core_trace_has_neuron_explorers_rows_in_its_order() {
    let dir = scratch("nc_trace_explorer_layout");
    let (trace, json) = (dir.join("att.pftrace"), dir.join("att.json"));
    for t in [&trace, &json] {
        let out = trnsim().args(["run", "nc-attention", "--trace"]).arg(t).current_dir(root()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // Slice rows in sort order.
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let events =
        v.get("traceEvents").and_then(|e| e.as_array()).cloned().unwrap_or_else(|| v.as_array().unwrap().clone());
    let meta = |what: &str| -> std::collections::BTreeMap<i64, serde_json::Value> {
        events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == what)
            .map(|e| (e["tid"].as_i64().unwrap_or(-1), e["args"].clone()))
            .collect()
    };
    let (names, sorts) = (meta("thread_name"), meta("thread_sort_index"));
    let mut rows: Vec<(i64, String)> = names
        .iter()
        .filter_map(|(tid, a)| {
            let name = a["name"].as_str()?.strip_prefix("nc0/")?.to_string();
            Some((sorts.get(tid)?["sort_index"].as_i64()?, name))
        })
        .collect();
    rows.sort();
    let order: Vec<&str> =
        rows.iter().map(|(_, n)| n.as_str()).filter(|n| !n.contains(" - Row ") || n.ends_with(" - Row 0")).collect();
    let mut want: Vec<String> =
        ["Tensor", "TensorMatrix", "Vector", "Scalar", "Sync"].iter().map(|e| format!("{e} Engine - Row 0")).collect();
    want.extend((0..16).map(|k| format!("DMA Engine {k} - Row 0")));
    want.extend((0..16).map(|k| format!("DMA Queue {k}")));
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    assert_eq!(&order[..want.len()], &want[..], "the rows in the profiler's order");

    let sql = [
        "select count(distinct t.name) from track t join track p on t.parent_id = p.id where p.name = 'nc0' and (t.name glob '* Engine - Row 0' or t.name glob 'DMA Engine [0-9]* - Row 0' or t.name glob 'DMA Queue [0-9]*')",
        "select max(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'Pending DMA Count'",
        "select max(c.value), min(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'DMA Throughput'",
        "select max(c.value), min(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'MFU'",
        "select count(*), max(c.value) from counter c join counter_track t on c.track_id = t.id where t.name = 'S[4] (Tensor)'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    let v = |i: usize, k: usize| rows[i][0][k].as_f64().unwrap();
    assert_eq!(
        v(0, 0),
        5.0 + 16.0 + 5.0,
        "engine rows, 16 DMA engine rows and the 5 queues used, in Perfetto: {:?}",
        rows[0]
    );
    assert!(v(1, 0) >= 2.0, "DMAs overlap: pending count {}", v(1, 0));
    assert!(v(2, 0) > 10.0 && v(2, 1) == 0.0, "throughput in GB/s, back to 0 when idle: {:?}", rows[2]);
    assert!(v(3, 0) <= 100.0 && v(3, 1) > 0.0, "MFU in %: {:?}", rows[3]);
    assert_eq!((v(4, 0), v(4, 1)), (16.0, 16.0), "S[4] counts the 16 tiles' loads the tensor engine waits for");
}
