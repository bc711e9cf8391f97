//! The configuration matched to DRAMsim3's (docs/validation.md, "Against DRAMsim3 and
//! Ramulator 2") keeps trnsim's figures: a 100 k-request trace of each pattern (20 k for the
//! stride) gives the bandwidth and mean read latency of the table's 1 M-request runs within
//! 1 %, and its row-hit rate within 0.1 points. A change to the controller that moves the comparison
//! fails here first.

use crate::common::{root, scratch, trnsim};
use trnsim_harness::memtrace::{synth, write_trace, MemRequest, SynthKind, TraceFormat};

/// (pattern, GB/s, mean read latency ns, row hits %) of the 1 M-request runs in the table.
const TABLE: [(&str, f64, f64, f64); 4] = [
    ("seq", 31.979, 84.801, 96.766),
    ("random", 31.991, 58.265, 0.007),
    ("mix", 31.983, 55.080, 0.007),
    ("stride", 0.634, 3245.743, 0.0),
];

fn figure(out: &str, name: &str) -> f64 {
    let line = out.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("{name} in {out}"));
    line.split_whitespace().last().unwrap().parse().unwrap()
}

/// Reads 1 MiB apart, wrapping around the 4 GiB stack one burst further each time.
fn stride(n: u64) -> impl Iterator<Item = MemRequest> {
    let cap: u64 = 4 << 30;
    (0..n).map(move |i| {
        let a = i * (1 << 20);
        MemRequest { addr: (a + a / cap * 32) % cap, write: false, cycle: Some(i) }
    })
}

#[test]
fn matched_hbm2_runs_keep_the_table_figures() {
    let dir = scratch("hbm_matched_tools");
    for (name, gbps, ns, hits) in TABLE {
        // The stride pattern runs at one request per row cycle: fewer requests reach its
        // steady state.
        let n = if name == "stride" { 20_000 } else { 100_000 };
        let path = dir.join(format!("{name}.trace"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let cap = 4u64 << 30;
        match name {
            "seq" => write_trace(&mut f, TraceFormat::Dramsim3, synth(SynthKind::StreamRead, n, 1, cap, 32)),
            "random" => write_trace(&mut f, TraceFormat::Dramsim3, synth(SynthKind::RandomRead, n, 1, cap, 32)),
            "mix" => write_trace(&mut f, TraceFormat::Dramsim3, synth(SynthKind::Mix, n, 1, cap, 32)),
            _ => write_trace(&mut f, TraceFormat::Dramsim3, stride(n as u64)),
        }
        .unwrap();
        drop(f);
        let p = path.to_str().unwrap();
        let args = [
            "hbm",
            "--preset",
            "hbm2-2000",
            "--trace",
            p,
            "--request-bytes",
            "32",
            "--width",
            "1",
            "--in-flight",
            "256",
            "--intake-buffer",
            "0",
            "--address-map",
            "rorabgbachco",
        ];
        let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{name}: {stderr}");
        let (b, l, h) = (
            figure(&stdout, "bandwidth_GBps"),
            figure(&stdout, "read_latency_ns_mean"),
            figure(&stdout, "row_hit_pct"),
        );
        println!("{name}: {b} GB/s, {l} ns, {h} % hits");
        assert!((b / gbps - 1.0).abs() <= 0.01, "{name}: {b} GB/s against the table's {gbps}");
        assert!((l / ns - 1.0).abs() <= 0.01, "{name}: {l} ns against the table's {ns}");
        assert!((h - hits).abs() <= 0.1, "{name}: {h} % row hits against the table's {hits}");
    }
}
