//! Checks the JSON a small trace produces: threads named by path, exact decimal microseconds,
//! lanes, v2 flows, counters, and a closed array.

use super::*;
use serde_json::Value as Json;
use trnsim_kernel::TrackId;

fn decl(id: u32, parent: Option<u32>, name: &str, kind: TrackKind) -> TrackDecl {
    TrackDecl { id: TrackId(id), parent: parent.map(TrackId), name: name.into(), kind }
}

fn rec(time: u64, track: u32, kind: RecordKind) -> TraceRecord {
    TraceRecord { time: Time::from_ps(time), track: TrackId(track), kind }
}

fn slice(track: u32, name: &'static str, start: u64, end: u64, flow: Flow) -> TraceRecord {
    let (start, end) = (Time::from_ps(start), Time::from_ps(end));
    rec(end.as_ps(), track, RecordKind::Slice { name, start, end, flow, arg: None })
}

fn write(records: &[TraceRecord]) -> Vec<Json> {
    let mut w = ChromeJsonWriter::new(Vec::new(), "t.json");
    for d in [
        decl(0, None, "chip", TrackKind::Group),
        decl(1, Some(0), "dma \"0\"", TrackKind::Slice),
        decl(2, Some(0), "queue", TrackKind::Counter { unit: "msgs" }),
        decl(3, Some(0), "valid", TrackKind::Signal { width: 1 }),
    ] {
        w.declare(&d).expect("declare");
    }
    for r in records {
        w.record(r).expect("record");
    }
    w.finish(Time::ZERO).expect("finish");
    let text = String::from_utf8(w.into_inner()).expect("utf-8");
    let json: Json = serde_json::from_str(&text).expect("valid JSON");
    json.as_array().expect("an array").clone()
}

fn by_ph<'a>(events: &'a [Json], ph: &str) -> Vec<&'a Json> {
    events.iter().filter(|e| e["ph"] == ph).collect()
}

#[test]
fn threads_are_named_by_path_and_lanes_follow() {
    let events = write(&[slice(1, "a", 0, 10_000, Flow::None), slice(1, "b", 5_000, 6_000, Flow::None)]);
    let names: Vec<_> = by_ph(&events, "M")
        .into_iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| (e["tid"].as_u64().unwrap_or(0), e["args"]["name"].as_str().unwrap_or("").to_string()))
        .collect();
    assert_eq!(names, vec![(1, "chip/dma \"0\"".to_string()), (2, "chip/dma \"0\" #1".to_string())]);
    let sorts: Vec<_> = by_ph(&events, "M").iter().filter_map(|e| e["args"]["sort_index"].as_u64()).collect();
    assert_eq!(sorts, vec![0, 1]);
    let xs = by_ph(&events, "X");
    assert_eq!((xs[0]["tid"].as_u64(), xs[1]["tid"].as_u64()), (Some(1), Some(2)));
}

#[test]
fn times_are_exact_decimal_microseconds() {
    let mut w = ChromeJsonWriter::new(Vec::new(), "t.json");
    w.declare(&decl(0, None, "pe", TrackKind::Slice)).expect("declare");
    w.record(&slice(0, "mac", 1_234_567, 1_235_000, Flow::None)).expect("record");
    w.finish(Time::ZERO).expect("finish");
    let text = String::from_utf8(w.into_inner()).expect("utf-8");
    assert!(text.contains(r#""ts":1.234567,"dur":0.000433,"#), "{text}");
    assert!(text.starts_with("[\n{\"ph\":\"M\""), "{text}");
    assert!(text.ends_with("}\n]\n"), "{text}");
}

#[test]
fn flows_are_v1_events_after_their_slices() {
    let events = write(&[
        slice(1, "issue", 0, 1_000, Flow::Step(0x2a)),
        slice(1, "read", 1_000, 2_000, Flow::Step(0x2a)),
        slice(1, "done", 2_000, 3_000, Flow::End(0x2a)),
        rec(3_000, 1, RecordKind::Instant { name: "irq", flow: Flow::Step(7), arg: None }),
        rec(3_000, 1, RecordKind::Instant { name: "tick", flow: Flow::None, arg: Some(Arg { key: "n", value: -3 }) }),
    ]);
    let seq: Vec<_> = events
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| (e["ph"].as_str().unwrap_or(""), e["id"].as_str(), e["bp"].as_str(), e["ts"].as_f64()))
        .collect();
    assert_eq!(
        seq,
        vec![
            ("X", None, None, Some(0.0)),
            ("s", Some("0x2a"), None, Some(0.0)),
            ("X", None, None, Some(0.001)),
            ("t", Some("0x2a"), Some("e"), Some(0.001)),
            ("X", None, None, Some(0.002)),
            ("f", Some("0x2a"), Some("e"), Some(0.002)),
            ("i", None, None, Some(0.003)),
            ("s", Some("0x7"), None, Some(0.003)),
            ("i", None, None, Some(0.003)),
        ]
    );
    let instants = by_ph(&events, "i");
    assert_eq!((instants[1]["s"].as_str(), instants[1]["args"]["n"].as_i64()), (Some("t"), Some(-3)));
}

#[test]
fn counters_carry_value_and_skip_non_finite_samples() {
    let events = write(&[
        rec(0, 2, RecordKind::Counter { value: 1.0 }),
        rec(1_500, 2, RecordKind::Counter { value: f64::NAN }),
        rec(2_000, 2, RecordKind::Counter { value: 16.4 }),
        rec(2_000, 3, RecordKind::Signal { value: 1 }),
    ]);
    let cs = by_ph(&events, "C");
    let got: Vec<_> = cs.iter().map(|e| (e["name"].as_str(), e["ts"].as_f64(), e["args"]["value"].as_f64())).collect();
    assert_eq!(got, vec![(Some("chip/queue"), Some(0.0), Some(1.0)), (Some("chip/queue"), Some(0.002), Some(16.4))]);
}

#[test]
fn empty_trace_is_an_empty_array_and_errors_name_the_sink() {
    let mut w = ChromeJsonWriter::new(Vec::new(), "t.json");
    w.finish(Time::ZERO).expect("finish");
    assert_eq!(String::from_utf8(w.into_inner()).unwrap_or_default(), "[]\n");
    let mut w = ChromeJsonWriter::new(Vec::new(), "t.json");
    w.declare(&decl(0, None, "g", TrackKind::Group)).expect("declare");
    let err = w.record(&slice(0, "s", 0, 1, Flow::None)).expect_err("slice on a group");
    assert_eq!(err.sink, "t.json");
    assert!(w.record(&rec(0, 0, RecordKind::Counter { value: 1.0 })).is_err());
}
