//! Steady-state recording does not allocate: after warm-up (tracks declared, names interned,
//! lanes opened), thousands of slices, instants and counter samples cause no heap allocation
//! in the Perfetto and Chrome JSON writers. Counted by `trnsim_kernel::alloc_count::CountingAlloc`
//! as this test binary's global allocator, which counts only on the thread that asks, so
//! concurrent tests do not disturb it.

use crate::{ChromeJsonWriter, PerfettoWriter};
use trnsim_kernel::alloc_count::CountingAlloc;
use trnsim_kernel::{Arg, Flow, RecordKind, Time, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};

#[global_allocator]
static COUNTING: CountingAlloc = CountingAlloc;

/// Records of round `r`: two overlapping slices (lanes 0 and 1), an instant, a counter sample.
fn round(r: u64) -> [TraceRecord; 4] {
    let t = |ps| Time::from_ps(r * 10_000 + ps);
    let slice = |s, e, flow| RecordKind::Slice {
        name: "op",
        start: t(s),
        end: t(e),
        flow,
        arg: Some(Arg { key: "k", value: 1 }),
    };
    [
        TraceRecord { time: t(5_000), track: TrackId(1), kind: slice(0, 5_000, Flow::Step(r)) },
        TraceRecord { time: t(6_000), track: TrackId(1), kind: slice(1_000, 6_000, Flow::End(r)) },
        TraceRecord {
            time: t(6_000),
            track: TrackId(1),
            kind: RecordKind::Instant { name: "i", flow: Flow::None, arg: None },
        },
        TraceRecord { time: t(6_000), track: TrackId(2), kind: RecordKind::Counter { value: r as f64 } },
    ]
}

/// Allocations made while recording rounds 1..=2000 after round 0 warmed `sink` up.
fn steady_state_allocs(sink: &mut dyn TraceSink) -> u64 {
    for (id, parent, kind) in
        [(0, None, TrackKind::Group), (1, Some(0), TrackKind::Slice), (2, Some(0), TrackKind::Counter { unit: "u" })]
    {
        let decl = TrackDecl { id: TrackId(id), parent: parent.map(TrackId), name: format!("t{id}"), kind };
        sink.declare(&decl).expect("declare");
    }
    for rec in round(0) {
        sink.record(&rec).expect("record");
    }
    assert!(CountingAlloc::installed(), "the counting allocator is the global allocator");
    let ((), allocs) = CountingAlloc::count(|| {
        for r in 1..=2000 {
            for rec in round(r) {
                sink.record(&rec).expect("record");
            }
        }
    });
    allocs
}

#[test]
fn perfetto_writer_does_not_allocate_per_event() {
    assert_eq!(steady_state_allocs(&mut PerfettoWriter::new(std::io::sink(), "sink")), 0);
}

#[test]
fn chrome_json_writer_does_not_allocate_per_event() {
    assert_eq!(steady_state_allocs(&mut ChromeJsonWriter::new(std::io::sink(), "sink")), 0);
}
