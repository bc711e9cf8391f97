//! Checks the VCD text: header scopes and sanitized names, initial values, coalescing of
//! same-time changes, and errors for time going back.

use super::*;

fn decl(id: u32, parent: Option<u32>, name: &str, kind: TrackKind) -> TrackDecl {
    TrackDecl { id: TrackId(id), parent: parent.map(TrackId), name: name.into(), kind }
}

fn sig(time: u64, track: u32, value: u64) -> TraceRecord {
    TraceRecord { time: Time::from_ps(time), track: TrackId(track), kind: RecordKind::Signal { value } }
}

fn writer() -> VcdWriter<Vec<u8>> {
    let mut w = VcdWriter::new(Vec::new(), "t.vcd");
    for d in [
        decl(0, None, "chip", TrackKind::Group),
        decl(1, Some(0), "ring.m3", TrackKind::Group),
        decl(2, Some(1), "valid", TrackKind::Signal { width: 1 }),
        decl(3, Some(1), "data", TrackKind::Signal { width: 8 }),
        decl(4, Some(0), "empty", TrackKind::Group),
        decl(5, Some(0), "dma", TrackKind::Slice),
        decl(6, Some(5), "3rd-state", TrackKind::Signal { width: 2 }),
        decl(7, None, "ring_m3", TrackKind::Signal { width: 1 }),
        decl(8, None, "ring.m3", TrackKind::Signal { width: 1 }),
    ] {
        w.declare(&d).expect("declare");
    }
    w
}

fn text(w: &mut VcdWriter<Vec<u8>>) -> String {
    String::from_utf8(w.get_mut().clone()).expect("utf-8")
}

#[test]
fn header_nests_groups_with_signals_and_sanitizes_names() {
    let mut w = writer();
    w.finish(Time::from_ps(100)).expect("finish");
    let t = text(&mut w);
    let header: Vec<_> = t.lines().take_while(|l| !l.starts_with("$enddefinitions")).collect();
    assert_eq!(
        header,
        vec![
            "$version",
            concat!("    trnsim-traces ", env!("CARGO_PKG_VERSION")),
            "$end",
            "$timescale 1 ps $end",
            "$scope module trnsim $end",
            "$scope module chip $end",
            "$scope module ring_m3 $end",
            "$var wire 1 ! valid $end",
            "$var wire 8 \" data $end",
            "$upscope $end",
            "$var wire 2 # _3rd_state $end",
            "$upscope $end",
            "$var wire 1 $ ring_m3 $end",
            "$var wire 1 % ring_m3_2 $end",
            "$upscope $end",
        ]
    );
    let body: Vec<_> = t.lines().skip(header.len() + 1).collect();
    assert_eq!(body, vec!["#0", "$dumpvars", "0!", "b0 \"", "b0 #", "0$", "0%", "$end", "#100"]);
}

#[test]
fn same_time_changes_coalesce_and_unchanged_values_are_left_out() {
    let mut w = writer();
    for r in [
        sig(0, 3, 0x1ff), // masked to 8 bits: 0xff, folded into $dumpvars
        sig(10, 2, 1),
        sig(10, 3, 5),
        sig(10, 2, 0), // last wins: valid stays 0, so no change is written
        sig(10, 3, 6),
        sig(20, 2, 0), // no change at all: no #20
        sig(30, 2, 1),
    ] {
        w.record(&r).expect("record");
    }
    w.finish(Time::from_ps(30)).expect("finish");
    let t = text(&mut w);
    let body: Vec<_> = t.lines().skip_while(|l| !l.starts_with("$enddefinitions")).skip(1).collect();
    assert_eq!(
        body,
        vec!["#0", "$dumpvars", "0!", "b11111111 \"", "b0 #", "0$", "0%", "$end", "#10", "b110 \"", "#30", "1!"]
    );
}

#[test]
fn time_going_back_and_late_signals_are_errors() {
    let mut w = writer();
    w.record(&sig(10, 2, 1)).expect("record");
    let err = w.record(&sig(9, 2, 0)).expect_err("back in time");
    assert_eq!(err.sink, "t.vcd");
    assert!(err.message.contains("goes back in time"), "{}", err.message);
    let late = decl(9, None, "late", TrackKind::Signal { width: 1 });
    assert!(w.declare(&late).is_err());
    assert!(w.declare(&decl(10, None, "slices", TrackKind::Slice)).is_ok());
    assert!(w.record(&sig(11, 5, 1)).is_err(), "signal record on a slice track");
    let slice = TraceRecord { time: Time::from_ps(1), track: TrackId(5), kind: RecordKind::Counter { value: 1.0 } };
    assert!(w.record(&slice).is_ok(), "non-signal records are ignored");
}

#[test]
fn output_parses_back_with_the_vcd_crate() {
    let mut w = writer();
    for r in [sig(0, 2, 1), sig(5, 3, 0xa5), sig(5, 6, 3), sig(9, 8, 1)] {
        w.record(&r).expect("record");
    }
    w.finish(Time::from_ps(12)).expect("finish");
    let bytes = w.get_mut().clone();
    let mut parser = ::vcd::Parser::new(&bytes[..]);
    let header = parser.parse_header().expect("header parses");
    assert_eq!(header.timescale, Some((1, TimescaleUnit::PS)));
    let data = header.find_var(&["trnsim", "chip", "ring_m3", "data"]).expect("data var");
    assert_eq!(data.size, 8);
    let commands: Vec<_> = parser.collect::<Result<_, _>>().expect("body parses");
    let stamps: Vec<_> = commands
        .iter()
        .filter_map(|c| match c {
            ::vcd::Command::Timestamp(t) => Some(*t),
            _ => None,
        })
        .collect();
    assert_eq!(stamps, vec![0, 5, 9, 12]);
    assert!(commands.contains(&::vcd::Command::ChangeVector(data.code, "10100101".parse().expect("vector"))));
}
