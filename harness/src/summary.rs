//! The summary table at the end of the default suite: the Trn3 figures an architect asks for
//! first (HBM bandwidth, TFLOPS per data type, DMA bandwidth, link and switch latency,
//! all-reduce bus bandwidth), each model figure beside its published or analytic reference,
//! the deviation, the tolerance and a verdict.
//!
//! The rows are data ([`ROWS`]): which benchmark figure, how it is scaled, the reference with
//! its source, and the tolerance with the reason for it, declared once. [`summary`] evaluates
//! them on a run's results; rows whose benchmark did not run are left out. Nothing here runs
//! a model: it only reads [`BenchResult`] headlines.

use serde::Serialize;
use trnsim_benchmarks::suite::BenchResult;

/// How a row's model value is taken from its benchmark's headline.
#[derive(Clone, Copy, Debug)]
pub enum Pick {
    /// The headline figure with this name.
    Key(&'static str),
    /// The largest headline figure whose name ends with this suffix (best of a sweep).
    MaxOf(&'static str),
}

/// The value a row is compared against.
#[derive(Clone, Copy, Debug)]
pub enum Reference {
    /// A published or derived constant.
    Value(f64),
    /// Another headline figure of the same benchmark (an analytic estimate it reports).
    Key(&'static str),
}

/// How the model value is judged against the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Check {
    /// |model / reference - 1| <= this fraction.
    Within(f64),
    /// model <= reference: an upper bound the model must respect. Shown as a bound ("BOUND"
    /// when respected, "FAIL" when not), never as a validation: it says little about accuracy.
    AtMost,
    /// Shown for context only: the two are not like for like (verdict "n/a").
    Info,
}

/// One declared row of the summary table.
#[derive(Clone, Copy, Debug)]
pub struct RowSpec {
    /// What the row shows, with its unit.
    pub figure: &'static str,
    /// The benchmark the model value comes from.
    pub bench: &'static str,
    /// Which headline figure.
    pub pick: Pick,
    /// Multiplier applied to the picked figure (8 for "8 cores of a one-core benchmark").
    pub scale: f64,
    /// The reference value.
    pub reference: Reference,
    /// Where the reference comes from (spec section and source key, or the analytic model).
    pub source: &'static str,
    /// The tolerance.
    pub check: Check,
    /// Why that tolerance (or why the row is not comparable).
    pub why: &'static str,
}

/// The rows, in print order.
pub const ROWS: &[RowSpec] = &[
    RowSpec {
        figure: "HBM bandwidth, chip (GB/s)",
        bench: "hbm-trn3",
        pick: Pick::Key("bandwidth_GBps"),
        scale: 1.0,
        reference: Reference::Value(4900.0),
        source: "spec §1 (D A4): 4.9 TB/s (A3: 4.7)",
        check: Check::Within(0.10),
        why: "pin peak 4915 GB/s less per-bank refresh (~5 % of bank time) and row switches; AWS's own figures differ by 4 % (spec §11)",
    },
    RowSpec {
        figure: "BF16 TFLOPS, one NC-v4",
        bench: "nc-matmul-bf16",
        pick: Pick::Key("tflops"),
        scale: 1.0,
        reference: Reference::Value(78.64),
        source: "spec §2/§5: 128 x 128 MACs x 2 x 2.4 GHz (§11: use the per-core engine model)",
        check: Check::Within(0.02),
        why: "back-to-back matmuls keep the array busy except the first fill and drain (< 1 %)",
    },
    RowSpec {
        figure: "BF16 TFLOPS, 8 cores",
        bench: "nc-matmul-8cores",
        pick: Pick::Key("tflops"),
        scale: 1.0,
        reference: Reference::Value(632.0),
        source: "spec §11: 8 x 79 per-core TFLOPS (D A4)",
        check: Check::Within(0.02),
        why: "8 independent cores: 8 x the one-core figure; 79 is AWS's rounding of 78.64",
    },
    RowSpec {
        figure: "BF16 TFLOPS, 8 cores vs chip figure",
        bench: "nc-matmul-8cores",
        pick: Pick::Key("tflops"),
        scale: 1.0,
        reference: Reference::Value(671.0),
        source: "spec §1 (D A4): 671 dense BF16 TFLOPS per chip",
        check: Check::Info,
        why: "AWS's chip TFLOPS are 3-13 % above 8 x its per-core figure on Trn2/Trn3, unexplained (spec §11)",
    },
    RowSpec {
        figure: "MXFP8 TFLOPS, 8 x one NC-v4",
        bench: "nc-matmul-mxfp8",
        pick: Pick::Key("tflops"),
        scale: 8.0,
        reference: Reference::Value(2517.0),
        source: "spec §1 (D A4): 2,517 MXFP8 TFLOPS = 8 x 314.6 exactly (§11)",
        check: Check::Within(0.02),
        why: "cores are independent (nc-matmul-8cores is exactly 8 x one core); fill and drain < 1 %",
    },
    RowSpec {
        figure: "DMA GB/s, one NC (16 engines, best size)",
        bench: "nc-dma-bandwidth",
        pick: Pick::MaxOf("_per_partition_GBps"),
        scale: 1.0,
        reference: Reference::Value(528.0),
        source: "spec §4 (D A6): achievable 33 B/ns per engine x 16 = 528 GB/s per NC (peak 38.4 x 16 = 614.4)",
        check: Check::Within(0.10),
        why: "the 1.3 us start cost per DMA (spec §4) is not fully amortized at the sizes swept (1-60 KiB per partition)",
    },
    RowSpec {
        figure: "DMA GB/s, chip (8 x one NC, best size)",
        bench: "nc-dma-bandwidth",
        pick: Pick::MaxOf("_per_partition_GBps"),
        scale: 8.0,
        reference: Reference::Value(4900.0),
        source: "spec §1 (D A4): 4.9 TB/s DMA per chip = 128 x 38.4 GB/s peak",
        check: Check::Within(0.20),
        why: "a peak figure: AWS's achievable rate is 14 % below it (33 vs 38.4 B/ns, spec §4 A6), plus start costs",
    },
    RowSpec {
        figure: "HBM GB/s used by the LLM layer, 8 cores",
        bench: "e2e-llm-layer",
        pick: Pick::Key("hbm_GBps"),
        scale: 1.0,
        reference: Reference::Key("analytic_hbm_GBps"),
        source: "analytic estimate (docs/validation.md, e2e::estimate)",
        check: Check::Within(0.05),
        why: "the tolerance of tests/e2e_llm_layer_matches_its_analytic_estimate.rs; compute-bound, so far below 4.9 TB/s",
    },
    RowSpec {
        figure: "NeuronLink x8 Gen6 goodput, 4 KiB writes (GB/s)",
        bench: "fabric-link-efficiency",
        pick: Pick::Key("pcie-gen6_x8_4096B_GBps"),
        scale: 1.0,
        reference: Reference::Value(64.0),
        source: "spec §6 (D A5): 64 GB/s per Gen6 x8, per direction (raw)",
        check: Check::Within(0.10),
        why: "64 GB/s is the raw signalling rate; FLIT framing, TLP headers and DLLPs leave ~92 % for payload (the benchmark checks the cycle-level link against the analytic payload rate within 1 %)",
    },
    RowSpec {
        figure: "NeuronLink per chip as wired, 11 x8 links, both dirs (GB/s)",
        bench: "fabric-link-efficiency",
        pick: Pick::Key("pcie-gen6_x8_4096B_GBps"),
        scale: 22.0,
        reference: Reference::Value(1408.0),
        source: "spec §6 (D A5): the UltraServer fabrics wire 11 x8 links per chip (docs/system.md), 64 GB/s raw each per direction: 11 x 64 x 2",
        check: Check::Within(0.10),
        why: "what a chip in the Trn3 UltraServer presets can move: 11 links x the simulated payload rate x 2 directions; the gap is link-layer overhead (raw vs goodput)",
    },
    RowSpec {
        figure: "NeuronLink per chip, the chip's 20 x8 ports, both dirs (GB/s)",
        bench: "fabric-link-efficiency",
        pick: Pick::Key("pcie-gen6_x8_4096B_GBps"),
        scale: 40.0,
        reference: Reference::Value(2560.0),
        source: "spec §1 (D A4): 2.56 TB/s NL-v4 per chip = 160 lanes x 64 Gb/s x 2 (spec §10, E: 20 x8 ports)",
        check: Check::Within(0.10),
        why: "the chip preset's 20 x8 ports x the simulated payload rate x 2 directions, against AWS's per-chip figure; only 11 of the 20 are wired in the UltraServer presets (row above)",
    },
    RowSpec {
        figure: "TP matmul, 4 chips: all-reduces end vs pipeline model (ns)",
        bench: "tp-matmul-4",
        pick: Pick::Key("allreduce_end_ns"),
        scale: 1.0,
        reference: Reference::Key("overlap_model_ns"),
        source: "docs/multichip.md: D_p = max(ready_p, D_(p-1)) + alone_p, from the run's trigger times and the all-reduces alone",
        check: Check::Within(0.01),
        why: "chips finish a phase a few packet times apart; the model takes the slowest chip",
    },
    RowSpec {
        figure: "NeuronLink one-way, 64 B, Gen6 x8 (ns)",
        bench: "fabric-link-pingpong",
        pick: Pick::Key("link_gen6_x8_64B_one_way_ns"),
        scale: 1.0,
        reference: Reference::Key("link_gen6_x8_64B_analytic_ns"),
        source: "spec §10 (E): PHY 2 x 20 ns + wire 5 + link layer 10 + one 256 B flit at 64 GB/s",
        check: Check::Within(0.02),
        why: "the cycle-level link adds nothing unloaded; 2 % is one 1 ns clock edge",
    },
    RowSpec {
        figure: "chip-switch-chip one-way, 64 B (ns)",
        bench: "fabric-link-pingpong",
        pick: Pick::Key("switch_64B_one_way_ns"),
        scale: 1.0,
        reference: Reference::Key("switch_64B_analytic_one_way_ns"),
        source: "spec §10 (E): 2 links + switch 120 ns (R8: 105 ns Gen4 cut-through)",
        check: Check::Within(0.01),
        why: "an idle network adds no queueing: the path's latencies exactly",
    },
    RowSpec {
        figure: "chip-to-chip round trip across servers (ns)",
        bench: "fabric-link-pingpong",
        pick: Pick::Key("inter_server_64B_round_trip_ns"),
        scale: 1.0,
        reference: Reference::Value(10_000.0),
        source: "spec §6 (R4): AWS: chip-to-chip communication under 10 us",
        check: Check::AtMost,
        why: "an upper bound; the model has no software or DMA cost in this figure (hardware path only)",
    },
    RowSpec {
        figure: "32-port switch latency, load 0.1 (cycles)",
        bench: "fabric-switch-latency",
        pick: Pick::Key("voq_islip1_load0.10_latency_cycles"),
        scale: 1.0,
        reference: Reference::Value(2.0),
        source: "zero-load: 2 link cycles, cut-through (docs/validation.md)",
        check: Check::Within(0.05),
        why: "at 10 % load a cell rarely waits for its output: queueing adds a few % (M/D/1-like)",
    },
    RowSpec {
        figure: "ring all-reduce, 16 MiB, Trn2 16-chip torus (us)",
        bench: "fabric-allreduce-trn2-16",
        pick: Pick::Key("all_reduce_ring_16777216B_time_us"),
        scale: 1.0,
        reference: Reference::Value(296.06),
        source: "spec §10 (E): T = 2(n-1)/n x B / BW + 2(n-1) x 1.5 us, n = 16, B = 16 MiB, BW = 125.3 GB/s per neighbour bundle (spec §6: Trn2 X/Y ~128 GB/s raw; the link model's payload rate)",
        check: Check::Within(0.02),
        why: "the packet model adds one 55 ns link latency per step (30 steps: +0.6 %); §10's 0.85 efficiency is already in the payload rate",
    },
    RowSpec {
        figure: "all-reduce busbw, ring, 16 MiB, 64 chips (GB/s)",
        bench: "fabric-collectives-nl32x2",
        pick: Pick::Key("all_reduce_ring_16777216B_busbw_GBps"),
        scale: 1.0,
        reference: Reference::Value(1280.0),
        source: "spec §1 (D A4): NeuronLink-v4 2.56 TB/s per chip = 1,280 GB/s per direction",
        check: Check::AtMost,
        why: "a bound: a ring uses one neighbour's links, 126 steps of ~1.5-2 us software cost (spec §7) dominate; no published busbw (spec §7)",
    },
    RowSpec {
        figure: "all-reduce busbw, halving-doubling, 16 MiB, 64 chips (GB/s)",
        bench: "fabric-collectives-nl32x2",
        pick: Pick::Key("all_reduce_halving_doubling_16777216B_busbw_GBps"),
        scale: 1.0,
        reference: Reference::Value(1280.0),
        source: "spec §1 (D A4): 1,280 GB/s per direction per chip",
        check: Check::AtMost,
        why: "a bound; 12 steps instead of 126, so closer to the links' rate",
    },
    RowSpec {
        figure: "all-reduce busbw, ring, 16 MiB, 144 chips (GB/s)",
        bench: "fabric-allreduce-nl72x2",
        pick: Pick::Key("all_reduce_ring_16777216B_busbw_GBps"),
        scale: 1.0,
        reference: Reference::Value(1280.0),
        source: "spec §1 (D A4): 1,280 GB/s per direction per chip",
        check: Check::AtMost,
        why: "a bound; 286 software steps dominate at 16 MiB",
    },
];

/// One evaluated row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    /// What the row shows, with its unit.
    pub figure: String,
    /// The benchmark it comes from.
    pub bench: String,
    /// The model's value.
    pub model: f64,
    /// The reference value.
    pub reference: f64,
    /// Where the reference comes from.
    pub source: String,
    /// (model / reference - 1) x 100.
    pub deviation_pct: f64,
    /// The tolerance as text ("±10 %", "upper bound", "n/a").
    pub tolerance: String,
    /// "PASS" or "FAIL" for a check within a tolerance; "BOUND" for an upper bound the model
    /// respects ("FAIL" when it does not); "n/a" for a figure shown for context.
    pub verdict: String,
    /// Why that tolerance.
    pub why: String,
}

fn pick(r: &BenchResult, p: Pick) -> Option<f64> {
    match p {
        Pick::Key(k) => r.headline.iter().find(|(n, _)| n == k).map(|x| x.1),
        Pick::MaxOf(suffix) => r.headline.iter().filter(|(n, _)| n.ends_with(suffix)).map(|x| x.1).reduce(f64::max),
    }
}

/// Evaluates one declared row on a benchmark's result; None when a figure it needs is missing.
pub fn evaluate(spec: &RowSpec, r: &BenchResult) -> Option<SummaryRow> {
    let model = pick(r, spec.pick)? * spec.scale;
    let reference = match spec.reference {
        Reference::Value(v) => v,
        Reference::Key(k) => pick(r, Pick::Key(k))?,
    };
    let deviation_pct = (model / reference - 1.0) * 100.0;
    let (tolerance, ok) = match spec.check {
        Check::Within(f) => (format!("±{:.0} %", f * 100.0), Some(deviation_pct.abs() <= f * 100.0)),
        Check::AtMost => ("upper bound".to_string(), Some(model <= reference)),
        Check::Info => ("n/a".to_string(), None),
    };
    let verdict = match (ok, spec.check) {
        (Some(true), Check::AtMost) => "BOUND",
        (Some(true), _) => "PASS",
        (Some(false), _) => "FAIL",
        (None, _) => "n/a",
    };
    Some(SummaryRow {
        figure: spec.figure.into(),
        bench: spec.bench.into(),
        model,
        reference,
        source: spec.source.into(),
        deviation_pct,
        tolerance,
        verdict: verdict.into(),
        why: spec.why.into(),
    })
}

/// The summary rows for `results`, in [`ROWS`] order; rows whose benchmark was not run (or
/// lacks the figure) are left out.
pub fn summary(results: &[BenchResult]) -> Vec<SummaryRow> {
    ROWS.iter()
        .filter_map(|spec| results.iter().find(|r| r.name == spec.bench).and_then(|r| evaluate(spec, r)))
        .collect()
}

fn num(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The table as text: figure, model, reference, deviation, tolerance, verdict, then each row's
/// reference source and reason below the table.
pub fn to_table(rows: &[SummaryRow]) -> String {
    let groups = [
        ("Checks: model against a reference, within a tolerance", "reference", "dev %", "tolerance", "verdict"),
        (
            "Bounds: the model must stay at or below; they bound, they do not validate",
            "bound",
            "of bound",
            "",
            "verdict",
        ),
        ("For context: not like for like, no verdict", "reference", "dev %", "", ""),
    ];
    let group_of = |r: &SummaryRow| match r.tolerance.as_str() {
        "upper bound" => 1,
        "n/a" => 2,
        _ => 0,
    };
    let mut s = String::from("Summary (Trn3 preset)\n");
    let mut order = Vec::new();
    for (g, (title, reference, dev, tolerance, verdict)) in groups.iter().enumerate() {
        let members: Vec<&SummaryRow> = rows.iter().filter(|r| group_of(r) == g).collect();
        if members.is_empty() {
            continue;
        }
        s += &format!(
            "\n{title}\n{:<66} {:>10} {:>10} {:>9} {:>11} {:>9}\n",
            "figure", "model", reference, dev, tolerance, verdict
        );
        for r in members {
            order.push(r);
            let dev = if g == 1 {
                format!("{:.1} %", 100.0 * r.model / r.reference)
            } else {
                format!("{:+.1}", r.deviation_pct)
            };
            let tol = if g == 0 { r.tolerance.as_str() } else { "" };
            s += &format!(
                "{:<66} {:>10} {:>10} {:>9} {:>11} {:>9}\n",
                format!("{:>2}. {}", order.len(), r.figure),
                num(r.model),
                num(r.reference),
                dev,
                tol,
                r.verdict
            );
        }
    }
    s += "\nreferences and tolerances:\n";
    for (i, r) in order.iter().enumerate() {
        s += &format!("  {:>2}. {}: {}; {}\n", i + 1, r.figure, r.source, r.why);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnsim_benchmarks::suite::Speed;
    use trnsim_kernel::StatsReport;

    fn result(name: &str, headline: &[(&str, f64)]) -> BenchResult {
        BenchResult {
            name: name.into(),
            headline: headline.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            stats: StatsReport::default(),
            speed: Speed::default(),
        }
    }

    fn row<'a>(rows: &'a [SummaryRow], figure: &str) -> &'a SummaryRow {
        rows.iter().find(|r| r.figure == figure).unwrap()
    }

    #[test]
    fn deviation_tolerance_and_verdict() {
        let results = [
            // 4410 is exactly -10 %: on the boundary, PASS; 4409 is outside.
            result("hbm-trn3", &[("bandwidth_GBps", 4410.0)]),
            result("nc-matmul-mxfp8", &[("tflops", 300.0)]),
            result("nc-dma-bandwidth", &[("1KiB_per_partition_GBps", 200.0), ("32KiB_per_partition_GBps", 500.0)]),
            result("nc-matmul-8cores", &[("tflops", 625.0)]),
            result("e2e-llm-layer", &[("hbm_GBps", 1000.0), ("analytic_hbm_GBps", 900.0)]),
            result("fabric-link-pingpong", &[("inter_server_64B_round_trip_ns", 10_001.0)]),
        ];
        let rows = summary(&results);
        let hbm = row(&rows, "HBM bandwidth, chip (GB/s)");
        assert!((hbm.deviation_pct + 10.0).abs() < 1e-9 && hbm.verdict == "PASS", "{hbm:?}");
        let mut r2 = results.clone();
        r2[0].headline[0].1 = 4409.0;
        assert_eq!(row(&summary(&r2), "HBM bandwidth, chip (GB/s)").verdict, "FAIL");
        // Scaled: 8 x 300 = 2400 vs 2517 = -4.6 %, outside ±2 %.
        let mx = row(&rows, "MXFP8 TFLOPS, 8 x one NC-v4");
        assert_eq!((mx.model, mx.verdict.as_str()), (2400.0, "FAIL"));
        assert!((mx.deviation_pct - (2400.0 / 2517.0 - 1.0) * 100.0).abs() < 1e-9);
        // Best of a sweep, and scaled best.
        let dma = row(&rows, "DMA GB/s, one NC (16 engines, best size)");
        assert_eq!((dma.model, dma.verdict.as_str()), (500.0, "PASS"));
        assert_eq!(row(&rows, "DMA GB/s, chip (8 x one NC, best size)").model, 4000.0);
        // A reference taken from the same benchmark's analytic figure: +11 % against ±5 %.
        let e2e = row(&rows, "HBM GB/s used by the LLM layer, 8 cores");
        assert_eq!((e2e.reference, e2e.verdict.as_str()), (900.0, "FAIL"));
        // Info rows have no verdict; bounds fail above the reference.
        assert_eq!(row(&rows, "BF16 TFLOPS, 8 cores vs chip figure").verdict, "n/a");
        assert_eq!(row(&rows, "BF16 TFLOPS, 8 cores").verdict, "PASS");
        assert_eq!(row(&rows, "chip-to-chip round trip across servers (ns)").verdict, "FAIL");
        let mut r3 = results.clone();
        r3[5].headline[0].1 = 704.0;
        let rt = summary(&r3).into_iter().find(|r| r.figure.starts_with("chip-to-chip round trip")).unwrap();
        assert_eq!((rt.verdict.as_str(), rt.tolerance.as_str()), ("BOUND", "upper bound"), "a bound never reads PASS");
        // Benchmarks not run give no rows; a missing figure gives no row either.
        assert!(rows.iter().all(|r| r.bench != "fabric-collectives-nl32x2" && r.bench != "nc-matmul-bf16"));
        assert!(!rows.iter().any(|r| r.figure.starts_with("NeuronLink one-way")));
        assert_eq!(rows.len(), 8);
        let t = to_table(&rows);
        assert!(t.contains("FAIL") && t.contains("n/a") && t.contains("spec §11"), "{t}");
    }

    #[test]
    fn every_row_names_a_suite_benchmark_and_a_reason() {
        for r in ROWS {
            let known = trnsim_benchmarks::suite::BENCHES.iter().any(|(n, _)| *n == r.bench);
            assert!(known, "{}", r.bench);
            assert!(!r.source.is_empty() && !r.why.is_empty() && r.scale > 0.0, "{}", r.figure);
        }
    }

    #[test]
    fn the_ping_pong_benchmark_reports_what_its_rows_read() {
        let r = trnsim_benchmarks::fabric::run_named("fabric-link-pingpong", None).unwrap();
        let rows = summary(&[r]);
        assert_eq!(rows.len(), 3, "{rows:?}");
        // Two checks and one bound (the round trip across servers, against AWS's "under 10 us").
        let verdicts: Vec<&str> = rows.iter().map(|r| r.verdict.as_str()).collect();
        assert_eq!(verdicts, ["PASS", "PASS", "BOUND"], "{rows:?}");
        let link = &rows[0];
        assert!((link.reference - 59.0).abs() < 1e-9, "{link:?}");
        // One switch: 2 x (55 ns + 4 ns flit... at the network's payload rate) + 120 ns.
        assert!(rows[1].model > 2.0 * 55.0 + 120.0 && rows[1].model < 2.0 * 60.0 + 120.0, "{rows:?}");
    }
}
