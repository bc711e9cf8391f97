//! The trace writers' output loads in Perfetto's own trace processor (the WebAssembly engine of
//! the Perfetto UI, run headless by `scripts/perfetto/tp_query.js`), and reads back with the
//! simulated times, tracks, lanes, counters, flows and args that were recorded; and the protobuf
//! passes a strict decoder (`scripts/strict-proto-check.sh`).
//!
//! The scenario goes through the `TraceSink` API only: a chip with two groups, a 2.4 GHz engine
//! with one-cycle slices, a 1.4 GHz DMA queue whose long prefetch overlaps its requests (so it
//! needs the lane "dma #1"), HBM reads, counters, three DMA flow chains of two hops each plus
//! one flow from an instant, and a signal (ignored by these formats, written to the VCD).
//!
//! Needs `node` and the trace processor (`scripts/install-test-deps.sh` installs both); without
//! them the tests skip and are counted as skipped (see `TraceProcessor::for_tests`), unless `CI`
//! is set, when they fail.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use trnsim_kernel::{Arg, Flow, RecordKind, Time, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};
use trnsim_traces::{ChromeJsonWriter, Fanout, PerfettoWriter, TimeScale, TraceProcessor, VcdWriter};

/// Edge `k` of a 1.4 GHz clock in ps: floor(k * 1e12 / 1.4e9).
fn c14(k: u64) -> u64 {
    k * 5000 / 7
}

/// Edge `k` of a 2.4 GHz clock in ps: floor(k * 1e12 / 2.4e9).
fn c24(k: u64) -> u64 {
    k * 1250 / 3
}

/// Picoseconds to Perfetto ns as `TimeScale::Ns` writes them (half up).
fn ns(ps: u64) -> u64 {
    (ps + 500) / 1000
}

const PE: u32 = 2;
const DMA: u32 = 3;
const QUEUE: u32 = 4;
const HBM0: u32 = 6;
const BW: u32 = 7;
const VALID: u32 = 8;

fn tracks() -> Vec<TrackDecl> {
    let t = |id, parent: Option<u32>, name: &str, kind| TrackDecl {
        id: TrackId(id),
        parent: parent.map(TrackId),
        name: name.into(),
        kind,
    };
    vec![
        t(0, None, "chip", TrackKind::Group),
        t(1, Some(0), "core0", TrackKind::Group),
        t(PE, Some(1), "pe", TrackKind::Slice),
        t(DMA, Some(1), "dma", TrackKind::Slice),
        t(QUEUE, Some(1), "queue", TrackKind::Counter { unit: "msgs" }),
        t(5, Some(0), "hbm", TrackKind::Group),
        t(HBM0, Some(5), "hbm0", TrackKind::Slice),
        t(BW, Some(5), "bw", TrackKind::Counter { unit: "GB/s" }),
        t(VALID, Some(1), "valid", TrackKind::Signal { width: 1 }),
    ]
}

fn slice(track: u32, name: &'static str, start: u64, end: u64, flow: Flow, arg: Option<Arg>) -> TraceRecord {
    let (start, end) = (Time::from_ps(start), Time::from_ps(end));
    TraceRecord { time: end, track: TrackId(track), kind: RecordKind::Slice { name, start, end, flow, arg } }
}

fn at(time: u64, track: u32, kind: RecordKind) -> TraceRecord {
    TraceRecord { time: Time::from_ps(time), track: TrackId(track), kind }
}

/// The records, in the order the kernel would deliver them (by record time, stable).
fn records() -> Vec<TraceRecord> {
    let mut r = Vec::new();
    for k in 0..6 {
        r.push(slice(PE, "mac", c24(k), c24(k + 1), Flow::None, Some(Arg { key: "cycle", value: k as i64 })));
    }
    r.push(at(
        c24(6),
        PE,
        RecordKind::Instant { name: "retire", flow: Flow::None, arg: Some(Arg { key: "n", value: 6 }) },
    ));
    for i in 0..3u64 {
        let (k, id) = (4 * i, 100 + i);
        let bytes = Some(Arg { key: "bytes", value: 64 * (i as i64 + 1) });
        r.push(slice(DMA, "dma.issue", c14(k), c14(k + 1), Flow::Step(id), bytes));
        r.push(slice(HBM0, "hbm.read", c14(k + 1), c14(k + 3), Flow::Step(id), None));
        r.push(slice(DMA, "dma.complete", c14(k + 3), c14(k + 4), Flow::End(id), None));
    }
    r.push(slice(DMA, "dma.prefetch", c14(1), c14(11), Flow::None, None));
    r.push(at(c14(12), DMA, RecordKind::Instant { name: "irq", flow: Flow::Step(200), arg: None }));
    r.push(slice(PE, "isr", c24(30), c24(31), Flow::End(200), None));
    for (k, v) in [(0, 1.0), (4, 2.0), (8, 1.0), (12, 0.0)] {
        r.push(at(c14(k), QUEUE, RecordKind::Counter { value: v }));
    }
    r.push(at(c14(1), BW, RecordKind::Counter { value: 16.4 }));
    r.push(at(c14(12), BW, RecordKind::Counter { value: 0.0 }));
    for (k, v) in [(1, 1), (3, 0), (5, 1), (7, 0)] {
        r.push(at(c14(k), VALID, RecordKind::Signal { value: v }));
    }
    r.sort_by_key(|rec| rec.time);
    r
}

/// Where each test writes: `target/tmp/perfetto_load/<test>/`.
fn out_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("perfetto_load").join(test);
    std::fs::create_dir_all(&dir).expect("create the output directory");
    dir
}

/// Writes the scenario through one `Fanout` of all writers; returns (ns .pftrace, ps .pftrace,
/// .json).
fn write_traces(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let paths = (dir.join("sim.pftrace"), dir.join("sim-ps.pftrace"), dir.join("sim.json"));
    let mut fan = Fanout::default();
    fan.push(Box::new(PerfettoWriter::create(&paths.0).expect("create")));
    fan.push(Box::new(PerfettoWriter::create(&paths.1).expect("create").with_time_scale(TimeScale::PsAsNs)));
    fan.push(Box::new(ChromeJsonWriter::create(&paths.2).expect("create")));
    fan.push(Box::new(VcdWriter::create(dir.join("sim.vcd")).expect("create")));
    for t in tracks() {
        fan.declare(&t).expect("declare");
    }
    for r in records() {
        fan.record(&r).expect("record");
    }
    fan.finish(Time::from_ps(c14(12))).expect("finish");
    paths
}

/// The workspace root (the parent of this crate).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Loads `trace` with `--check`, runs each query, and compares its rows with the expectation.
fn check(trace: &Path, cases: &[(&str, Value)]) {
    let Some(tp) = TraceProcessor::for_tests(&workspace()) else { return };
    let sql: Vec<&str> = cases.iter().map(|(sql, _)| *sql).collect();
    let rows = tp.query(trace, &sql).unwrap_or_else(|e| panic!("{e}"));
    for ((sql, want), got) in cases.iter().zip(&rows) {
        assert_eq!(numbers_as_f64(got), numbers_as_f64(want), "{}: {sql}", trace.display());
    }
}

/// `v` with every number as an f64, so that the harness's `1` equals an expected `1.0`.
fn numbers_as_f64(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(a) => a.iter().map(numbers_as_f64).collect(),
        other => other.clone(),
    }
}

/// Rows of (ts, dur) for the one-cycle 2.4 GHz slices, through `to` (ps to the trace's unit).
fn mac_rows(to: fn(u64) -> u64) -> Value {
    (0..6).map(|k| json!([to(c24(k)), to(c24(k + 1)) - to(c24(k))])).collect()
}

/// Queries common to both formats, in Perfetto ns.
fn common_cases() -> Vec<(&'static str, Value)> {
    vec![
        ("select count(*) from slice where dur < 0", json!([[0]])),
        (
            "select name, count(*) from slice group by name order by name",
            json!([
                ["dma.complete", 3],
                ["dma.issue", 3],
                ["dma.prefetch", 1],
                ["hbm.read", 3],
                ["irq", 1],
                ["isr", 1],
                ["mac", 6],
                ["retire", 1]
            ]),
        ),
        ("select ts, dur from slice where name = 'mac' order by ts, dur", mac_rows(ns)),
        ("select ts, dur from slice where name = 'dma.prefetch'", json!([[ns(c14(1)), ns(c14(11)) - ns(c14(1))]])),
        ("select count(*) from flow", json!([[7]])),
        (
            "select o.name, i.name, count(*) from flow f join slice o on f.slice_out = o.id \
             join slice i on f.slice_in = i.id group by 1, 2 order by 1, 2",
            json!([["dma.issue", "hbm.read", 3], ["hbm.read", "dma.complete", 3], ["irq", "isr", 1]]),
        ),
        ("select min(ts), max(ts + dur) from slice", json!([[0, ns(c24(31))]])),
    ]
}

#[test]
fn perfetto_protobuf_loads_with_tracks_lanes_counters_flows_and_ns_times() {
    let (pftrace, _, _) = write_traces(&out_dir("proto_ns"));
    let mut cases = common_cases();
    cases.extend([
        (
            "select t.name, p.name from track t left join track p on t.parent_id = p.id \
             where t.name is not null order by t.name",
            json!([
                ["bw", "hbm"],
                ["chip", null],
                ["core0", "chip"],
                ["dma", "core0"],
                ["dma #1", "core0"],
                ["hbm", "chip"],
                ["hbm0", "hbm"],
                ["pe", "core0"],
                ["queue", "core0"]
            ]),
        ),
        (
            "select t.name from slice s join track t on s.track_id = t.id where s.name = 'dma.prefetch'",
            json!([["dma #1"]]),
        ),
        ("select max(depth) from slice", json!([[0]])),
        (
            "select t.name, c.ts, c.value from counter c join track t on c.track_id = t.id order by t.name, c.ts",
            json!([
                ["bw", ns(c14(1)), 16.4],
                ["bw", ns(c14(12)), 0.0],
                ["queue", 0, 1.0],
                ["queue", ns(c14(4)), 2.0],
                ["queue", ns(c14(8)), 1.0],
                ["queue", ns(c14(12)), 0.0]
            ]),
        ),
        (
            "select a.key, a.int_value from slice s join args a using (arg_set_id) \
             where s.name = 'dma.issue' order by s.ts",
            json!([["debug.bytes", 64], ["debug.bytes", 128], ["debug.bytes", 192]]),
        ),
    ]);
    check(&pftrace, &cases);
}

#[test]
fn perfetto_protobuf_in_ps_as_ns_keeps_every_cycle_non_empty() {
    let (_, pftrace, _) = write_traces(&out_dir("proto_ps"));
    let id = |ps| ps;
    check(
        &pftrace,
        &[
            ("select ts, dur from slice where name = 'mac' order by ts", mac_rows(id)),
            ("select count(*) from slice where name = 'mac' and dur > 0", json!([[6]])),
            ("select ts from slice where name = 'irq'", json!([[c14(12)]])),
            ("select count(*) from flow", json!([[7]])),
        ],
    );
}

#[test]
fn chrome_json_loads_with_the_same_times_as_the_ns_protobuf() {
    let (_, _, json_path) = write_traces(&out_dir("json"));
    let mut cases = common_cases();
    cases.extend([
        (
            "select name from thread where name is not null order by tid",
            json!([["chip/core0/pe"], ["chip/core0/dma"], ["chip/hbm/hbm0"], ["chip/core0/dma #1"]]),
        ),
        (
            "select t.name, c.ts, c.value from counter c join track t on c.track_id = t.id order by t.name, c.ts",
            json!([
                ["chip/core0/queue value", 0, 1.0],
                ["chip/core0/queue value", ns(c14(4)), 2.0],
                ["chip/core0/queue value", ns(c14(8)), 1.0],
                ["chip/core0/queue value", ns(c14(12)), 0.0],
                ["chip/hbm/bw value", ns(c14(1)), 16.4],
                ["chip/hbm/bw value", ns(c14(12)), 0.0]
            ]),
        ),
        (
            "select a.key, a.int_value from slice s join args a using (arg_set_id) \
             where s.name = 'dma.issue' and a.key like 'args.%' order by s.ts",
            json!([["args.bytes", 64], ["args.bytes", 128], ["args.bytes", 192]]),
        ),
    ]);
    check(&json_path, &cases);
}

#[test]
fn perfetto_protobuf_passes_the_strict_decoder() {
    let protoc = Command::new("protoc").arg("--version").output().is_ok_and(|o| o.status.success());
    if !protoc && std::env::var_os("CI").is_none() {
        trnsim_traces::skip_test(&workspace(), "protoc is missing (scripts/strict-proto-check.sh installs it)");
        return;
    }
    let (ns_trace, ps_trace, _) = write_traces(&out_dir("strict"));
    let out = Command::new("bash")
        .arg(workspace().join("scripts/strict-proto-check.sh"))
        .arg(&ns_trace)
        .arg(&ps_trace)
        .output()
        .expect("run strict-proto-check.sh");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "strict check failed:\n{text}");
    assert_eq!(text.matches("no unknown fields").count(), 2, "{text}");
}
