//! The configurations matched to DRAMsim3's (HBM2) and Ramulator 2's (HBM2 and HBM3; with
//! Ramulator's refresh rule, all-bank refresh, postponed and pulled-in all-bank refresh and its
//! MOP4CLXOR map too) (docs/validation.md,
//! "Against DRAMsim3 and Ramulator 2") keep trnsim's figures: a
//! 400 k-request trace of random reads and of the mix, 20 k of the stride, and the table's own
//! sequential trace give the bandwidth and mean read latency of the table's 1 M-request runs
//! within 1 %, and their row-hit rates within 0.1 points. A change to the controller that
//! moves the comparison fails here first.

use crate::common::{root, scratch, trnsim};
use trnsim_harness::memtrace::{synth, write_trace, MemRequest, SynthKind, TraceFormat};

/// (preset, address map, refresh policy, stack GiB, [(pattern, GB/s, mean read latency ns,
/// row hits %)]) of the 1 M-request runs in the tables: HBM2 as matched to DRAMsim3, HBM2 and
/// HBM3 to Ramulator 2.
type Runs = &'static [(&'static str, f64, f64, f64)];
const TABLES: [(&str, &str, &str, u64, Runs); 7] = [
    (
        "hbm2-2000",
        "rorabgbachco",
        "per-bank",
        4,
        &[
            ("seq", 31.979, 84.801, 96.766),
            ("random", 31.991, 58.265, 0.007),
            ("mix", 31.983, 55.080, 0.007),
            ("stride", 0.634, 3245.743, 0.0),
        ],
    ),
    (
        "hbm3-6400",
        "RoBaRaCoCh",
        "per-bank",
        16,
        &[
            ("seq", 50.738, 24.076, 96.648),
            ("random", 51.176, 58.070, 0.006),
            ("mix", 51.144, 57.132, 0.004),
            ("stride", 0.673, 3063.258, 0.0),
        ],
    ),
    (
        "hbm2-2000",
        "RoBaRaCoCh",
        "per-bank",
        4,
        &[
            ("seq", 31.999, 24.691, 96.686),
            ("random", 31.995, 58.262, 0.005),
            ("mix", 31.984, 55.151, 0.007),
            ("stride", 0.644, 3220.830, 0.0),
        ],
    ),
    (
        "hbm3-6400",
        "RoBaRaCoCh",
        "per-bank-hold",
        16,
        &[("random", 51.176, 68.341, 0.006), ("mix", 46.999, 65.597, 0.004)],
    ),
    ("hbm3-6400", "RoBaRaCoCh", "all-bank", 16, &[("random", 51.168, 75.972, 0.005)]),
    ("hbm3-6400", "RoBaRaCoCh", "all-bank-flex", 16, &[("random", 51.150, 68.097, 0.005)]),
    ("hbm3-6400", "MOP4CLXOR", "per-bank", 16, &[("seq", 51.192, 24.675, 82.458)]),
];

fn figure(out: &str, name: &str) -> f64 {
    let line = out.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("{name} in {out}"));
    line.split_whitespace().last().unwrap().parse().unwrap()
}

/// Reads 1 MiB apart, wrapping around the stack (`cap` bytes) one burst further each time.
fn stride(n: u64, cap: u64) -> impl Iterator<Item = MemRequest> {
    (0..n).map(move |i| {
        let a = i * (1 << 20);
        MemRequest { addr: (a + a / cap * 32) % cap, write: false, cycle: Some(i) }
    })
}

#[test]
fn matched_runs_keep_the_table_figures() {
    let dir = scratch("hbm_matched_tools");
    for (preset, map, refresh, gib, runs) in TABLES {
        let cap = gib << 30;
        for &(name, gbps, ns, hits) in runs {
            // The stride runs at one request per row cycle: fewer requests reach its steady
            // state. A sequential stream's mean latency drifts with where refresh falls along
            // it (HBM3: 22.2 ns over 100 k, 23.6 over 400 k, 24.1 over 1 M), so it runs whole:
            // the same addresses as the table's trace.
            // Postponed and pulled-in refresh settles more slowly (69.1 ns over 400 k random
            // requests, 68.1 over 1 M): it runs whole too.
            let n = match name {
                "stride" => 20_000,
                "seq" => 1_000_000,
                _ if refresh == "all-bank-flex" => 1_000_000,
                _ => 400_000,
            };
            let path = dir.join(format!("{preset}-{map}-{refresh}-{name}.trace"));
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let fmt = TraceFormat::Dramsim3;
            match name {
                "seq" => write_trace(&mut f, fmt, synth(SynthKind::StreamRead, n, 1, cap, 32)),
                "random" => write_trace(&mut f, fmt, synth(SynthKind::RandomRead, n, 1, cap, 32)),
                "mix" => write_trace(&mut f, fmt, synth(SynthKind::Mix, n, 1, cap, 32)),
                _ => write_trace(&mut f, fmt, stride(n as u64, cap)),
            }
            .unwrap();
            drop(f);
            let p = path.to_str().unwrap();
            let args = [
                "hbm",
                "--preset",
                preset,
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
                map,
                "--refresh",
                refresh,
            ];
            let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "{preset} {name}: {stderr}");
            let b = figure(&stdout, "bandwidth_GBps");
            let l = figure(&stdout, "read_latency_ns_mean");
            let h = figure(&stdout, "row_hit_pct");
            let run = format!("{preset} {map} {refresh} {name}");
            println!("{run}: {b} GB/s, {l} ns, {h} % hits");
            assert!((b / gbps - 1.0).abs() <= 0.01, "{run}: {b} GB/s against the table's {gbps}");
            assert!((l / ns - 1.0).abs() <= 0.01, "{run}: {l} ns against the table's {ns}");
            assert!((h - hits).abs() <= 0.1, "{run}: {h} % row hits against the table's {hits}");
        }
    }
}
