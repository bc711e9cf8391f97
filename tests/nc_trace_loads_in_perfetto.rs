//! A NeuronCore run's Perfetto trace loads in the trace processor with --check and has a track
//! per engine with a slice per instruction.

use crate::common::{root, scratch, trnsim};
use trnsim_traces::TraceProcessor;

#[test]
fn matmul_trace_has_a_slice_per_instruction_on_the_tensor_track() {
    let dir = scratch("nc_trace_loads_in_perfetto");
    let trace = dir.join("nc.pftrace");
    let out = trnsim().args(["run", "nc-matmul-bf16", "--trace"]).arg(&trace).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sql = [
        "select count(*) from slice s join track t on s.track_id = t.id where (t.name = 'tensor' or t.name like 'tensor #%') and s.name = 'matmul'",
        "select count(*) from slice where name = 'matmul'",
        "select count(*) from slice where name = 'ldweights'",
        "select count(*) from track where name = 'tensor'",
        "select min(dur), max(dur) from slice where name = 'matmul'",
    ];
    let Some(tp) = TraceProcessor::for_tests(&root()) else { return };
    let rows = tp.query(&trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows[0][0][0], 256, "the matmul slices are on the tensor engine's track (nc0 / tensor) or its lanes (pipelined instructions overlap)");
    assert_eq!(rows[1][0][0], 256, "a slice per matmul");
    assert_eq!(rows[2][0][0], 256, "a slice per ldweights");
    assert_eq!(rows[3][0][0], 1, "a track for the tensor engine");
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
        "select count(distinct name) from track where name in ('tensor', 'scalar', 'vector', 'sync')",
        "select count(distinct name) from track where name like 'engine%' and name not like '% #%'",
        "select count(*) from track where name like 'ch%.pc% commands'",
        "select count(*) from flow",
        "select count(*) from slice where name = 'dma'",
        "select count(*) from slice where name = 'packet'",
        "select count(*) from slice where name = 'sem_inc'",
        "select count(distinct t.name) from slice s join track t on s.track_id = t.id where s.name = 'dma' and t.name like 'queue%'",
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
