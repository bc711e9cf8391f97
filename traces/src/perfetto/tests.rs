//! Checks the bytes of a small trace with a hand-written protobuf decoder: field numbers, wire
//! types (fixed64 flow ids), sequence flags, interning, lanes and time scales.

use super::*;

/// One decoded field value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
}

fn read_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = buf[*pos];
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
    }
    panic!("varint too long");
}

/// All fields of one message, in order. Panics on anything malformed.
fn fields(buf: &[u8]) -> Vec<(u32, Val<'_>)> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < buf.len() {
        let tag = read_varint(buf, &mut pos);
        let (field, wire) = ((tag >> 3) as u32, tag & 7);
        let val = match wire {
            0 => Val::Varint(read_varint(buf, &mut pos)),
            1 => {
                let v = u64::from_le_bytes(buf[pos..pos + 8].try_into().expect("8 bytes"));
                pos += 8;
                Val::Fixed64(v)
            }
            2 => {
                let len = read_varint(buf, &mut pos) as usize;
                pos += len;
                Val::Bytes(&buf[pos - len..pos])
            }
            w => panic!("unexpected wire type {w} for field {field}"),
        };
        out.push((field, val));
    }
    out
}

fn get<'a>(msg: &[(u32, Val<'a>)], field: u32) -> Option<Val<'a>> {
    msg.iter().find(|(f, _)| *f == field).map(|&(_, v)| v)
}

fn varint(msg: &[(u32, Val<'_>)], field: u32) -> Option<u64> {
    match get(msg, field) {
        Some(Val::Varint(v)) => Some(v),
        other => other.map(|v| panic!("field {field} is not a varint: {v:?}")),
    }
}

fn sub<'a>(msg: &[(u32, Val<'a>)], field: u32) -> Option<Vec<(u32, Val<'a>)>> {
    match get(msg, field) {
        Some(Val::Bytes(b)) => Some(fields(b)),
        other => other.map(|v| panic!("field {field} is not a message: {v:?}")),
    }
}

fn text(msg: &[(u32, Val<'_>)], field: u32) -> Option<String> {
    match get(msg, field) {
        Some(Val::Bytes(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

fn decl(id: u32, parent: Option<u32>, name: &str, kind: TrackKind) -> TrackDecl {
    TrackDecl { id: TrackId(id), parent: parent.map(TrackId), name: name.into(), kind }
}

fn slice(track: u32, name: &'static str, start: u64, end: u64, flow: Flow, arg: Option<Arg>) -> TraceRecord {
    let (start, end) = (Time::from_ps(start), Time::from_ps(end));
    TraceRecord { time: end, track: TrackId(track), kind: RecordKind::Slice { name, start, end, flow, arg } }
}

/// A group with a slice track, a counter and a signal; two overlapping slices with a flow.
fn small_trace(scale: TimeScale) -> (Vec<u8>, PerfettoStats) {
    let mut w = PerfettoWriter::new(Vec::new(), "test").with_time_scale(scale);
    let decls = [
        decl(0, None, "core0", TrackKind::Group),
        decl(1, Some(0), "dma", TrackKind::Slice),
        decl(2, Some(0), "queue", TrackKind::Counter { unit: "msgs" }),
        decl(3, Some(0), "valid", TrackKind::Signal { width: 1 }),
    ];
    for d in &decls {
        w.declare(d).expect("declare");
    }
    let arg = Some(Arg { key: "bytes", value: -64 });
    let id = 0xdead_beef_0000_0001;
    let records = [
        slice(1, "dma.issue", 0, 1_400, Flow::Step(id), arg),
        slice(1, "dma.issue", 714, 2_142, Flow::End(id), None),
        TraceRecord { time: Time::from_ps(2_500), track: TrackId(2), kind: RecordKind::Counter { value: 2.5 } },
        TraceRecord { time: Time::from_ps(2_500), track: TrackId(3), kind: RecordKind::Signal { value: 1 } },
    ];
    for r in &records {
        w.record(r).expect("record");
    }
    w.finish(Time::from_ps(3_000)).expect("finish");
    let stats = w.stats();
    (w.into_inner(), stats)
}

#[test]
fn packets_decode_with_the_expected_fields() {
    let (bytes, stats) = small_trace(TimeScale::Ns);
    assert_eq!(stats.bytes, bytes.len() as u64);
    assert_eq!((stats.events, stats.lanes), (5, 1));
    let packets: Vec<_> = fields(&bytes)
        .into_iter()
        .map(|(f, v)| match (f, v) {
            (TRACE_PACKET, Val::Bytes(b)) => fields(b),
            other => panic!("not a packet: {other:?}"),
        })
        .collect();
    // 3 descriptors (the signal is skipped), the lane's descriptor, 2 slices x 2, 1 counter.
    assert_eq!(packets.len(), 3 + 1 + 4 + 1);
    for (i, p) in packets.iter().enumerate() {
        assert_eq!(varint(p, PACKET_SEQUENCE_ID), Some(1));
        let flags = if i == 0 { SEQ_INCREMENTAL_STATE_CLEARED } else { SEQ_NEEDS_INCREMENTAL_STATE };
        assert_eq!(varint(p, PACKET_SEQUENCE_FLAGS), Some(flags), "packet {i}");
    }

    let group = sub(&packets[0], PACKET_TRACK_DESCRIPTOR).expect("group descriptor");
    assert_eq!(varint(&group, TRACK_UUID), Some(1 << 8));
    assert_eq!(text(&group, TRACK_NAME).as_deref(), Some("core0"));
    assert_eq!(varint(&group, TRACK_CHILD_ORDERING), Some(CHILD_ORDERING_EXPLICIT));
    let dma = sub(&packets[1], PACKET_TRACK_DESCRIPTOR).expect("slice descriptor");
    assert_eq!(varint(&dma, TRACK_PARENT_UUID), Some(1 << 8));
    assert_eq!(varint(&dma, TRACK_SIBLING_ORDER_RANK), Some(0));
    let queue = sub(&packets[2], PACKET_TRACK_DESCRIPTOR).expect("counter descriptor");
    assert_eq!(varint(&queue, TRACK_SIBLING_ORDER_RANK), Some(256), "rank 1, lane slots 256");
    let unit = sub(&queue, TRACK_COUNTER).expect("counter descriptor");
    assert_eq!(text(&unit, COUNTER_UNIT_NAME).as_deref(), Some("msgs"));

    // First slice: BEGIN at 0 ns with fixed64 flow id, interned name, category, annotation.
    let begin = sub(&packets[3], PACKET_TRACK_EVENT).expect("event");
    assert_eq!(varint(&packets[3], PACKET_TIMESTAMP), Some(0));
    assert_eq!(varint(&begin, EVENT_TYPE), Some(TYPE_SLICE_BEGIN));
    assert_eq!(varint(&begin, EVENT_TRACK_UUID), Some(2 << 8));
    assert_eq!(varint(&begin, EVENT_NAME_IID), Some(1));
    assert_eq!(varint(&begin, EVENT_CATEGORY_IIDS), Some(CATEGORY_IID));
    assert_eq!(get(&begin, EVENT_FLOW_IDS), Some(Val::Fixed64(0xdead_beef_0000_0001)));
    let ann = sub(&begin, EVENT_DEBUG_ANNOTATIONS).expect("annotation");
    assert_eq!(varint(&ann, ANNOTATION_NAME_IID), Some(1));
    assert_eq!(varint(&ann, ANNOTATION_INT_VALUE), Some(-64i64 as u64));
    let interned = sub(&packets[3], PACKET_INTERNED_DATA).expect("interned data");
    assert_eq!(interned.iter().filter(|(f, _)| *f == INTERNED_EVENT_CATEGORIES).count(), 1);
    let name = sub(&interned, INTERNED_EVENT_NAMES).expect("event name");
    assert_eq!((varint(&name, INTERNED_IID), text(&name, INTERNED_NAME).as_deref()), (Some(1), Some("dma.issue")));
    let arg_name = sub(&interned, INTERNED_DEBUG_ANNOTATION_NAMES).expect("annotation name");
    assert_eq!(text(&arg_name, INTERNED_NAME).as_deref(), Some("bytes"));

    // END at round(1.4 ns) = 1, no name.
    let end = sub(&packets[4], PACKET_TRACK_EVENT).expect("event");
    assert_eq!(varint(&packets[4], PACKET_TIMESTAMP), Some(1));
    assert_eq!((varint(&end, EVENT_TYPE), varint(&end, EVENT_NAME_IID)), (Some(TYPE_SLICE_END), None));

    // The overlapping slice opens lane "dma #1" (uuid (1 + 1) << 8 | 1), a sibling of "dma".
    let lane = sub(&packets[5], PACKET_TRACK_DESCRIPTOR).expect("lane descriptor");
    assert_eq!(text(&lane, TRACK_NAME).as_deref(), Some("dma #1"));
    assert_eq!(varint(&lane, TRACK_UUID), Some(2 << 8 | 1));
    assert_eq!(varint(&lane, TRACK_PARENT_UUID), Some(1 << 8));
    assert_eq!(varint(&lane, TRACK_SIBLING_ORDER_RANK), Some(1));
    let begin2 = sub(&packets[6], PACKET_TRACK_EVENT).expect("event");
    assert_eq!(varint(&begin2, EVENT_TRACK_UUID), Some(2 << 8 | 1));
    assert_eq!(get(&begin2, EVENT_TERMINATING_FLOW_IDS), Some(Val::Fixed64(0xdead_beef_0000_0001)));
    assert_eq!(get(&packets[6], PACKET_INTERNED_DATA), None, "names already interned");

    let counter = sub(&packets[8], PACKET_TRACK_EVENT).expect("event");
    assert_eq!(varint(&counter, EVENT_TYPE), Some(TYPE_COUNTER));
    assert_eq!(get(&counter, EVENT_DOUBLE_COUNTER_VALUE), Some(Val::Fixed64(2.5f64.to_bits())));
    assert_eq!(varint(&packets[8], PACKET_TIMESTAMP), Some(3), "2.5 ns rounds half up");
}

#[test]
fn ps_as_ns_keeps_picoseconds() {
    let (bytes, _) = small_trace(TimeScale::PsAsNs);
    let packets: Vec<_> = fields(&bytes)
        .into_iter()
        .filter_map(|(_, v)| match v {
            Val::Bytes(b) => Some(fields(b)),
            _ => None,
        })
        .collect();
    let stamps: Vec<_> = packets.iter().filter_map(|p| varint(p, PACKET_TIMESTAMP)).collect();
    assert_eq!(stamps, vec![0, 1_400, 714, 2_142, 2_500]);
}

#[test]
fn time_scales_round_half_up() {
    let ns = |ps| TimeScale::Ns.timestamp(Time::from_ps(ps));
    assert_eq!([ns(0), ns(416), ns(499), ns(500), ns(1_499), ns(1_500)], [0, 0, 0, 1, 1, 2]);
    assert_eq!(ns(u64::MAX), u64::MAX / 1000 + 1);
    assert_eq!(TimeScale::PsAsNs.timestamp(Time::from_ps(416)), 416);
}

#[test]
fn lane_uuids_are_disjoint() {
    assert_eq!(lane_uuid(TrackId(0), 0), Some(256));
    assert_eq!(lane_uuid(TrackId(0), 255), Some(511));
    assert_eq!(lane_uuid(TrackId(1), 0), Some(512));
    assert_eq!(lane_uuid(TrackId(0), 256), Some(1 << 62 | 1 << 24 | 256));
    assert_eq!(lane_uuid(TrackId(u32::MAX), 0xff_ffff), Some(1 << 62 | 1 << 56 | 0xff_ffff));
    assert_eq!(lane_uuid(TrackId(0), 1 << 24), None);
}

#[test]
fn mismatched_records_are_errors_naming_the_sink() {
    let mut w = PerfettoWriter::new(Vec::new(), "out/x.pftrace");
    w.declare(&decl(0, None, "c", TrackKind::Counter { unit: "" })).expect("declare");
    let bad = slice(0, "s", 0, 1, Flow::None, None);
    let err = w.record(&bad).expect_err("slice on a counter track");
    assert_eq!(err.sink, "out/x.pftrace");
    assert!(err.message.contains("slice record on counter track"), "{}", err.message);
    assert!(w.record(&slice(7, "s", 0, 1, Flow::None, None)).is_err(), "undeclared");
    assert!(w.declare(&decl(1, None, "s", TrackKind::Slice)).is_ok());
    assert!(w.record(&slice(1, "s", 5, 1, Flow::None, None)).is_err(), "end before start");
    w.finish(Time::ZERO).expect("finish");
    assert!(w.record(&slice(1, "s", 0, 1, Flow::None, None)).is_err(), "after finish");
}
