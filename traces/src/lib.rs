//! Trace writers for trnsim, in simulated time. Each implements the kernel's
//! [`TraceSink`]:
//!
//! | writer | file | shows | for |
//! |---|---|---|---|
//! | [`PerfettoWriter`] | `.pftrace` | groups, slices, instants, counters, flows, args | the Perfetto UI; main format (~20 B/event) |
//! | [`ChromeJsonWriter`] | `.json` | the same, as Chrome Trace Event JSON | small traces, scripts, chrome://tracing |
//! | [`VcdWriter`] | `.vcd` | signals only, in scopes | waveform viewers (GTKWave, Surfer) |
//!
//! [`Fanout`] feeds several at once; [`create_sink`] picks one from a file extension.
//! [`TraceProcessor`] loads a written trace in Perfetto's own trace processor, for checks.
//!
//! Common rules: every writer validates that records name a declared track of a fitting kind
//! (a mismatch is a [`TraceError`], never a panic); errors name the output path; slices that
//! overlap on one track are moved to extra "lane" tracks named `"<track> #k"` so viewers nest them
//! correctly (see `lanes.rs`). What the crate leaves out: reading traces, compression, and
//! wall-clock time (everything is simulated time).

#![warn(missing_docs)]

mod chrome_json;
mod fanout;
mod lanes;
mod perfetto;
mod processor;
mod protobuf;
mod tracks;
mod vcd;

#[cfg(test)]
mod alloc_tests;

pub use self::vcd::VcdWriter;
pub use chrome_json::ChromeJsonWriter;
pub use fanout::Fanout;
pub use perfetto::{PerfettoStats, PerfettoWriter, TimeScale};
pub use processor::{record_skip, skip_log, skip_test, TraceProcessor};

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use trnsim_kernel::{TraceError, TraceSink};

/// The extensions of a Perfetto protobuf trace ([`PerfettoWriter`]), in every command that
/// writes one.
pub const PERFETTO_EXTENSIONS: [&str; 3] = ["pftrace", "perfetto", "perfetto-trace"];

/// Creates the writer matching `path`'s extension, with default options: `.pftrace`,
/// `.perfetto` or `.perfetto-trace` → [`PerfettoWriter`] ([`TimeScale::Ns`]), `.json` → [`ChromeJsonWriter`],
/// `.vcd` → [`VcdWriter`]. Any other extension is an error listing these.
pub fn create_sink(path: impl AsRef<Path>) -> Result<Box<dyn TraceSink>, TraceError> {
    let path = path.as_ref();
    check_sink_format(path)?;
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "json" => Ok(Box::new(ChromeJsonWriter::create(path)?)),
        "vcd" => Ok(Box::new(VcdWriter::create(path)?)),
        _ => Ok(Box::new(PerfettoWriter::create(path)?)),
    }
}

/// Checks that [`create_sink`] knows `path`'s format (by its extension), before anything is
/// opened: the error names `path`.
pub fn check_sink_format(path: &Path) -> Result<(), TraceError> {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        ext if PERFETTO_EXTENSIONS.contains(&ext) => Ok(()),
        "json" | "vcd" => Ok(()),
        _ => Err(sink_error(
            &path.display().to_string(),
            "unknown trace format: expected a .pftrace, .perfetto, .perfetto-trace, .json or .vcd file",
        )),
    }
}

/// A [`TraceError`] from sink `sink`.
pub(crate) fn sink_error(sink: &str, message: impl Into<String>) -> TraceError {
    TraceError { sink: sink.to_string(), message: message.into() }
}

/// Creates (truncates) `path` for buffered writing; returns it with its display name.
pub(crate) fn create_file(path: &Path) -> Result<(BufWriter<File>, String), TraceError> {
    let name = path.display().to_string();
    match File::create(path) {
        Ok(f) => Ok((BufWriter::with_capacity(1 << 16, f), name)),
        Err(e) => Err(sink_error(&name, format!("cannot create file: {e}"))),
    }
}
