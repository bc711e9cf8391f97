//! What-if runs from the command line: overrides are checked before anything runs (exit 2,
//! one line, nearest paths), a 2 x 3 sweep gives 6 rows and 6 results, a workload file
//! round-trips (write, read, run) to identical results in RON and JSON, bad workloads are
//! located one-line errors, and `trnsim collective` prints nccom-test's and nccl-tests' tables.

use crate::common::{root, scratch, trnsim};
use serde_json::Value;

/// Runs trnsim with `args`; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Exit 2, one line starting `error:` (clap adds its `--help` hint), containing every `want`.
fn usage_error(args: &[&str], want: &[&str]) {
    let (code, _, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.is_empty() && !l.starts_with("For more information")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected: {err}");
    let err = lines[0];
    assert!(err.starts_with("error: ") && !err.contains("panicked"), "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: expected {w:?} in {err}");
    }
}

#[test]
fn bad_overrides_stop_before_anything_runs() {
    usage_error(
        &["run", "e2e-llm-layer", "--set", "chip.hbm.stack=2"],
        &["--set chip.hbm.stack=2: unknown path", "nearest: chip.hbm.stacks"],
    );
    usage_error(&["run", "e2e-llm-layer", "--set", "chip.hbm.stacks=two"], &["is not an integer"]);
    usage_error(
        &["run", "e2e-llm-layer", "--set", "chip.dma.queues=99"],
        &["trn3-chip.ron (built in):", ": dma.queues: 99 is out of range", "--set chip.dma.queues=99"],
    );
    usage_error(
        &["run", "tp-matmul-4", "--system", "trn3-chip"],
        &["runs on an UltraServer", "it can run: e2e-llm-layer"],
    );
    usage_error(&["run", "hbm-random", "--system", "trn3-chip"], &["does not run on a system"]);
    usage_error(
        &["run", "--config", "models/configs/system/trn3-chip.ron"],
        &["is a chip", "--workload", "e2e-llm-layer"],
    );
    usage_error(&["run", "fabric-allreduce-trn2-16", "--sweep", "fabric.phy=40ns,,2"], &["--sweep"]);
    usage_error(&["run", "e2e-llm-layer", "--compute", "cycle"], &["give --workload FILE"]);
    usage_error(&["run", "e2e-llm-layer", "--compute", "rtl"], &["allowed: roofline, cycle"]);
    usage_error(&["workload", "bench", "tp-matmul-5"], &["tp-matmul-5", "multiple of 128"]);
    usage_error(&["workload", "bench", "ring"], &["known: e2e-llm-layer"]);
}

#[test]
fn a_two_by_three_sweep_gives_six_rows_and_six_results() {
    let dir = scratch("whatif_sweep");
    let json = dir.join("sweep.json");
    let (code, out, err) = run(&[
        "run",
        "fabric-allreduce-trn2-16",
        "--sweep",
        "fabric.phy=40ns,80ns",
        "--sweep",
        "fabric.packet_bytes=1024,2048,4096",
        "--json",
        json.to_str().unwrap(),
        "--plots",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("fabric-allreduce-trn2-16")).collect();
    assert_eq!(rows.len(), 6, "{out}");
    assert!(rows[5].contains("80ns") && rows[5].contains("4096"), "{}", rows[5]);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["benchmarks"].as_array().unwrap().len(), 6);
    assert_eq!(v["points"][3]["set"]["fabric.phy"], "80ns");
    // More latency per hop: a slower all-reduce at every packet size.
    let t = |i: usize| v["benchmarks"][i]["headline"][0][1].as_f64().unwrap();
    for i in 0..3 {
        assert!(t(i + 3) > t(i), "point {i}: {} vs {}", t(i + 3), t(i));
    }
    assert!(std::fs::read_dir(&dir).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("sweep-")));
}

/// Runs a workload by the roofline (these tests check the schedule, files and overrides, not
/// the op programs) and reads its `--json`.
fn workload_json(args: &[&str], json: &std::path::Path) -> Value {
    let roofline = ["--compute", "roofline", "--gemm-efficiency", "0.6", "--json", json.to_str().unwrap()];
    let (code, _, err) = run(&[args, &roofline[..]].concat());
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

#[test]
fn a_workload_round_trips_and_runs_the_same_from_ron_and_json() {
    let dir = scratch("whatif_workload");
    let (ron, js) = (dir.join("w.ron"), dir.join("w.json"));
    let gen =
        ["workload", "llm", "--arch", "moe", "--layers", "2", "--hidden", "1024", "--ffn", "2048", "--heads", "8"];
    let more = ["--experts", "8", "--ep", "4", "--tp", "4", "--seq", "256", "--batch", "4", "--train"];
    for out in [&ron, &js] {
        let (code, _, err) = run(&[&gen[..], &more[..], &["-o", out.to_str().unwrap()]].concat());
        assert_eq!(code, 0, "{err}");
    }
    let sys = ["--system", "trn3-gen1-ultraserver"];
    let a = workload_json(&[&["run", "--workload", ron.to_str().unwrap()], &sys[..]].concat(), &dir.join("a.json"));
    let b = workload_json(&[&["run", "--workload", ron.to_str().unwrap()], &sys[..]].concat(), &dir.join("b.json"));
    let c = workload_json(&[&["run", "--workload", js.to_str().unwrap()], &sys[..]].concat(), &dir.join("c.json"));
    assert_eq!(a, b, "same file, same results");
    assert_eq!(a["points"], c["points"], "RON and JSON give the same results");
    let figures = a["points"][0]["figures"].as_array().unwrap();
    let get = |k: &str| figures.iter().find(|f| f[0] == k).map(|f| f[1].as_f64().unwrap()).unwrap();
    assert!(get("step_us") > 0.0 && get("comm_us") > 0.0 && get("compute_us") > 0.0);
    assert!(get("exposed_comm_us") <= get("comm_us") + 1e-9);
    // An override of the workload itself: the graph twice, back to back, takes twice as long.
    let r = ["run", "--workload", ron.to_str().unwrap(), "--set", "workload.repeat=2"];
    let d = workload_json(&[&r[..], &sys[..]].concat(), &dir.join("d.json"));
    let twice = d["points"][0]["figures"].as_array().unwrap().iter().find(|f| f[0] == "step_us").unwrap()[1].as_f64();
    assert!((twice.unwrap() / get("step_us") - 2.0).abs() < 1e-9, "{twice:?} vs {}", get("step_us"));
    usage_error(
        &[&r[..2], &[ron.to_str().unwrap(), "--set", "workload.nodes[0].mm=3"]].concat(),
        &["unknown path", "nodes[0].id"],
    );
}

#[test]
fn bad_workloads_are_located_one_line_errors() {
    let dir = scratch("whatif_bad_workloads");
    let bad = dir.join("bad.ron");
    std::fs::write(
        &bad,
        "Workload(name: \"x\", ranks: 2, nodes: [(id: 0, op: Gemm(m: 1, k: 1, n: 1, dtype: \"int4\"))])",
    )
    .unwrap();
    let p = bad.to_str().unwrap();
    usage_error(&["run", "--workload", p], &[&format!("{p}:1:"), "nodes[0].op.dtype: unknown dtype \"int4\""]);
    std::fs::write(&bad, "Workload(name: \"x\", ranks: 4, nodes: [(id: 0, op: AllReduce((bytes: 8, group: \"tp\")))])")
        .unwrap();
    usage_error(&["run", "--workload", p], &["unknown group set \"tp\""]);
    std::fs::write(&bad, "Workload(name: \"x\", ranks: 200, nodes: [(id: 0, op: Load(bytes: 8))])").unwrap();
    usage_error(
        &["run", "--workload", p, "--system", "trn3-gen2-ultraserver"],
        &[&format!("{p}:1:"), "ranks: ", "200 ranks", "144 chips"],
    );
    std::fs::write(&bad, "Workload(name: \"x\", ranks: 1, hbm_bytes_per_rank: Some(1000000000000), nodes: [(id: 0, op: Load(bytes: 8))])").unwrap();
    usage_error(
        &["run", "--workload", p, "--system", "trn3-chip"],
        &[&format!("{p}:1:"), "hbm_bytes_per_rank", "144.0 GiB"],
    );
    usage_error(&["workload", "llm", "--heads", "30", "--tp", "4"], &["--heads 30 must divide by --tp 4"]);
    // Outputs never overwrite the workload they read.
    usage_error(&["run", "--workload", p, "--trace", p], &["same file as input --workload"]);
    usage_error(
        &["compare", "--workload", p, "--system", "trn3-chip", "--json", p],
        &["same file as input --workload"],
    );
    usage_error(&["run", "--workload", "/nonexistent.ron"], &["/nonexistent.ron", "cannot read"]);
}

#[test]
fn collectives_print_nccom_test_and_nccl_tests_tables() {
    let args =
        ["collective", "all-reduce", "--system", "trn2-server-4x4", "-b", "64K", "-e", "1M", "-f", "4", "-d", "fp32"];
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let head: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(head, ["size(B)", "count(elems)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)"]);
    assert_eq!(lines.len(), 5, "{out}");
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!((row[0], row[1], row[2]), ("65536", "16384", "fp32"));
    assert!(lines[4].starts_with("Avg bus bandwidth:\t") && lines[4].ends_with("GB/s"), "{}", lines[4]);
    let dir = scratch("collective_nccl_tests");
    let json = dir.join("allr.json");
    let json_arg = json.to_str().unwrap();
    let (code, out, err) = run(&[&args[..], &["--format", "nccl-tests", "-J", json_arg]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l == "# Collective test starting: all_reduce_perf"), "{out}");
    assert!(out.lines().any(|l| l == "# Collective test concluded: all_reduce_perf"), "{out}");
    // nccl-tests' JSON results file (version 3), the rows the text prints.
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["version"], 3);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!((results[0]["size"].as_u64(), results[0]["type"].as_str()), (Some(65536), Some("float")));
    for r in results {
        let oop = &r["out_of_place"];
        assert!(oop["bus_bw"].as_f64().unwrap() > 0.0 && oop["nwrong"].is_null(), "{r}");
        assert_eq!(r["out_of_place_per_iter"]["times_us"][0], oop["time"]);
    }
    assert_eq!(v["config"]["devices"].as_array().unwrap().len(), 16);
    assert!(v["average_bus_bandwidth"]["bandwidth"].as_f64().unwrap() > 0.0);
    let data: Vec<Vec<&str>> =
        out.lines().filter(|l| !l.starts_with('#')).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(data.len(), 3);
    for d in &data {
        assert_eq!(d.len(), 13, "{d:?}");
        assert_eq!((d[2], d[3], d[4]), ("float", "sum", "-1"));
        assert_eq!(d[5..8], d[9..12], "in-place repeats out-of-place");
        assert_eq!((d[8], d[12]), ("N/A", "N/A"), "no validation: #wrong is N/A");
    }
    assert!(out.lines().any(|l| l.starts_with("# Avg bus bandwidth    : ")), "{out}");
    assert!(out.contains("#       size         count      type   redop    root     time   algbw   busbw #wrong"));
    usage_error(
        &["collective", "allr", "-g", "0-99", "--system", "trn2-server-4x4"],
        &["chip 99 is not in the system"],
    );
    usage_error(&["collective", "frobnicate"], &["unknown operation"]);
}

#[test]
fn chakra_traces_become_workloads_that_run() {
    let dir = scratch("chakra_cli");
    let rank = |r: u32| {
        format!(
            r#"{{"version": "0.0.4"}}
{{"id": "1", "name": "mm", "type": "COMP_NODE", "attr": [{{"name": "num_ops", "int64Val": "4000000000"}}]}}
{{"id": "2", "name": "ar", "type": "COMM_COLL_NODE", "dataDeps": ["1"],
  "attr": [{{"name": "comm_type", "int64Val": "0"}}, {{"name": "comm_size", "int64Val": "1048576"}}]}}
{{"id": "3", "name": "tail{r}", "type": "COMP_NODE", "dataDeps": ["2"], "durationMicros": "2"}}
"#
        )
    };
    let files: Vec<String> = (0..4)
        .map(|r| {
            let p = dir.join(format!("et.{r}.json"));
            std::fs::write(&p, rank(r)).unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect();
    let out = dir.join("et.ron");
    let mut args = vec!["workload", "chakra"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", out.to_str().unwrap()]);
    let (code, _, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let json = dir.join("et-run.json");
    let v = workload_json(&["run", "--workload", out.to_str().unwrap(), "--system", "trn3-gen1-ultraserver"], &json);
    assert!(v["points"][0]["report"]["step_ns"].as_f64().unwrap() > 2000.0, "{v}");
    // The output may not be one of the inputs; a bad trace is a located one-line error.
    usage_error(&["workload", "chakra", &files[0], "-o", &files[0]], &["-o"]);
    std::fs::write(dir.join("bad.json"), "{\"id\": \"1\", \"type\": \"COMM_SEND_NODE\"}").unwrap();
    usage_error(
        &["workload", "chakra", dir.join("bad.json").to_str().unwrap()],
        &["bad.json:1:1: nodes[0].type:", "COMM_SEND_NODE is not read"],
    );
}

/// `--threads` on a what-if run splits each point by chip: a 2-point sweep of the fast
/// two-chip TP matmul with an override gives the serial run's results (less the `threads` row
/// and host timings); what cannot be split, or asks for several processes or jobs, is refused.
#[test]
fn what_if_points_split_by_chip_give_the_serial_results() {
    let dir = scratch("whatif_threads");
    let results = |extra: &[&str], name: &str| -> Value {
        let json = dir.join(name);
        let mut args = vec![
            "run",
            "tp-matmul-2",
            "--fidelity",
            "fast",
            "--set",
            "chip.dma.queues=8",
            "--sweep",
            "fabric.switch.latency=100ns,300ns",
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
    };
    let serial = results(&[], "serial.json");
    let split = results(&["--threads", "2"], "split.json");
    let (serial, split) = (serial["benchmarks"].as_array().unwrap(), split["benchmarks"].as_array().unwrap());
    assert_eq!(serial.len(), 2);
    assert_eq!(split.len(), 2);
    for (s, p) in serial.iter().zip(split) {
        assert_eq!(s["name"], p["name"]);
        assert_eq!(s["stats"], p["stats"], "{}: statistics differ", s["name"]);
        let mut head = p["headline"].as_array().unwrap().clone();
        let threads = head.pop().unwrap();
        assert_eq!(threads, serde_json::json!(["threads", 2.0]));
        assert_eq!(&head, s["headline"].as_array().unwrap(), "{}: headline differs", s["name"]);
    }
    // The two points differ (the override and the sweep reached the split runs).
    assert_ne!(split[0]["headline"], split[1]["headline"]);
    usage_error(&["run", "e2e-llm-layer", "--fidelity", "fast", "--threads", "2"], &["e2e-llm-layer cannot be split"]);
    usage_error(
        &["run", "tp-matmul-2", "--set", "fabric.switch.latency=200ns", "--threads", "2", "--jobs", "2"],
        &["give --jobs or --threads"],
    );
    usage_error(&["run", "tp-matmul-2", "--set", "fabric.switch.latency=200ns", "--mpi"], &["no --mpi"]);
}
