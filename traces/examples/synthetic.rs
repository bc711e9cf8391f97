//! Writes a synthetic trace of N slices (default 100 000) through the Perfetto and Chrome JSON
//! writers and prints bytes per slice, bytes per event and write speed, for sizing runs:
//!
//!     cargo run --release -p trnsim-traces --example synthetic [N]
//!
//! 16 slice tracks in 2 groups, back-to-back slices of 1..8 cycles of a 2.4 GHz clock. "bare":
//! slices only. "rich": also an argument on every 4th slice, a flow from every 8th slice to
//! the next slice on its track, and a counter sample every 4th slice. Files go to target/synthetic/.

use std::path::Path;
use std::time::Instant;
use trnsim_kernel::{Arg, Flow, RecordKind, Time, TraceError, TraceRecord, TraceSink, TrackDecl, TrackId, TrackKind};
use trnsim_traces::{ChromeJsonWriter, PerfettoWriter};

const TRACKS: u32 = 16;

fn tracks() -> Vec<TrackDecl> {
    let mut v = Vec::new();
    for g in 0..2 {
        v.push(TrackDecl { id: TrackId(g), parent: None, name: format!("core{g}"), kind: TrackKind::Group });
    }
    for t in 0..TRACKS {
        let (id, parent) = (TrackId(2 + t), Some(TrackId(t % 2)));
        v.push(TrackDecl { id, parent, name: format!("engine{t}"), kind: TrackKind::Slice });
    }
    let queue = TrackKind::Counter { unit: "msgs" };
    v.push(TrackDecl { id: TrackId(2 + TRACKS), parent: Some(TrackId(0)), name: "queue".into(), kind: queue });
    v
}

/// The records: slice `i` is on track `i % 16`; `rich` adds args, flows and counter samples.
fn records(n: u64, rich: bool) -> Vec<TraceRecord> {
    let mut ends = vec![0u64; TRACKS as usize];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut out = Vec::with_capacity(n as usize * 2);
    for i in 0..n {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let t = (i % u64::from(TRACKS)) as usize;
        let cycles = 1 + seed % 8;
        let (start, end) = (ends[t], ends[t] + cycles * 1250 / 3);
        ends[t] = end;
        // Slice i + 16 is the next slice on the same track, so each flow goes forward in time.
        let flow = match i % 32 {
            k if rich && k % 4 == 0 && k < 16 => Flow::Step(i),
            k if rich && k % 4 == 0 => Flow::End(i - 16),
            _ => Flow::None,
        };
        let arg = (rich && i % 4 == 0).then_some(Arg { key: "bytes", value: (seed % 4096) as i64 });
        let (s, e) = (Time::from_ps(start), Time::from_ps(end));
        let kind = RecordKind::Slice { name: if i % 3 == 0 { "load" } else { "compute" }, start: s, end: e, flow, arg };
        out.push(TraceRecord { time: e, track: TrackId(2 + t as u32), kind });
        if rich && i % 4 == 0 {
            let kind = RecordKind::Counter { value: (seed % 64) as f64 };
            out.push(TraceRecord { time: e, track: TrackId(2 + TRACKS), kind });
        }
    }
    out.sort_by_key(|r| r.time);
    out
}

fn run(sink: &mut dyn TraceSink, records: &[TraceRecord]) -> Result<f64, TraceError> {
    for t in tracks() {
        sink.declare(&t)?;
    }
    let started = Instant::now();
    for r in records {
        sink.record(r)?;
    }
    sink.finish(records.last().map_or(Time::ZERO, |r| r.time))?;
    Ok(started.elapsed().as_secs_f64())
}

fn main() -> Result<(), TraceError> {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/synthetic");
    std::fs::create_dir_all(&dir)
        .map_err(|e| TraceError { sink: dir.display().to_string(), message: e.to_string() })?;
    println!(
        "{:<8} {:<5} {:>9} {:>9} {:>11} {:>8} {:>8} {:>9} {:>10}",
        "format", "kind", "slices", "events", "bytes", "B/slice", "B/event", "ms", "Mslices/s"
    );
    for rich in [false, true] {
        let recs = records(n, rich);
        let kind = if rich { "rich" } else { "bare" };
        let path = dir.join(format!("{kind}.pftrace"));
        let mut w = PerfettoWriter::create(&path)?;
        let secs = run(&mut w, &recs)?;
        let s = w.stats();
        print_row("pftrace", kind, n, s.events, s.bytes, secs);
        let path = dir.join(format!("{kind}.json"));
        let secs = run(&mut ChromeJsonWriter::create(&path)?, &recs)?;
        let text = std::fs::read(&path).unwrap_or_default();
        let events = text.iter().filter(|&&b| b == b'\n').count().saturating_sub(1) as u64;
        print_row("json", kind, n, events, text.len() as u64, secs);
    }
    Ok(())
}

fn print_row(format: &str, kind: &str, slices: u64, events: u64, bytes: u64, secs: f64) {
    let (b_slice, b_event) = (bytes as f64 / slices as f64, bytes as f64 / events as f64);
    let ms = secs * 1e3;
    let rate = slices as f64 / secs / 1e6;
    println!("{format:<8} {kind:<5} {slices:>9} {events:>9} {bytes:>11} {b_slice:>8.1} {b_event:>8.1} {ms:>9.1} {rate:>10.2}");
}
