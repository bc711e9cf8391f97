//! `mpirun -np N trnsim run --mpi NAME` gives the serial run's statistics, byte for byte, on
//! the 144-chip NL72x2 all-reduce, a cluster, a data-parallel step, four whole chips and
//! random component graphs, with 2 and 4 ranks (4 is
//! oversubscribed on a 2-core machine); a rank that fails ends the job instead of hanging it.
//! Without feature `mpi`, `--mpi` is a one-line usage error saying how to build it.

use std::process::{Command, Output};

fn trnsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trnsim")).args(args).output().expect("run trnsim")
}

#[cfg(feature = "mpi")]
fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[cfg(not(feature = "mpi"))]
#[test]
fn mpi_without_the_feature_is_a_usage_error_saying_how_to_build() {
    let o = trnsim(&["run", "--mpi", "fabric-allreduce-nl72x2-nodes"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("make mpi") && err.contains("libopenmpi-dev"), "{err}");
}

#[cfg(feature = "mpi")]
fn tmp(name: &str) -> std::path::PathBuf {
    // Under the target directory (one place, overwritten by the next run), not a new /tmp
    // directory per run.
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpi_cli");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// The statistics of each benchmark in a results file (the headline names how it ran).
#[cfg(feature = "mpi")]
fn stats(path: &std::path::Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["benchmarks"].as_array().expect("benchmarks").iter().map(|r| r["stats"].clone()).collect()
}

#[cfg(feature = "mpi")]
fn mpirun(np: u32, args: &[&str]) -> Output {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/mpirun.sh");
    let np = np.to_string();
    let mut all = vec!["-np", np.as_str(), env!("CARGO_BIN_EXE_trnsim")];
    all.extend_from_slice(args);
    Command::new("bash").arg(script).args(&all).output().expect("run mpirun")
}

#[cfg(feature = "mpi")]
#[test]
fn mpi_runs_give_the_serial_statistics() {
    // Seeds 4 and 15 go idle; 3 deadlocks (then the run fails on every backend alike).
    for name in [
        "fabric-allreduce-nl72x2-nodes",
        "fabric-allreduce-ultracluster-nodes",
        "dp-step-2:1M:4:262144",
        // Whole chips, split by chip: ranks other than 0 skip the declaration of the chips
        // they make none of.
        "tp-matmul-4",
        "kernel-random-graph:4",
        "kernel-random-graph:15",
    ] {
        let serial = tmp(&format!("{}-serial.json", name.replace(':', "_")));
        let o = trnsim(&["run", name, "--json", serial.to_str().unwrap()]);
        assert!(o.status.success(), "{name} serial: {}", text(&o));
        for np in [2, 4] {
            let out = tmp(&format!("{}-np{np}.json", name.replace(':', "_")));
            let o = mpirun(np, &["run", "--mpi", name, "--json", out.to_str().unwrap()]);
            assert!(o.status.success(), "{name} np {np}: {}", text(&o));
            assert!(text(&o).contains(&format!("partitions: {np}")), "{}", text(&o));
            assert_eq!(stats(&serial), stats(&out), "{name}: {np} ranks differ from serial");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn mpi_traces_equal_the_serial_trace() {
    for name in ["fabric-allreduce-nl72x2-nodes", "kernel-random-graph:15"] {
        let tag = name.replace(':', "_");
        let serial = tmp(&format!("{tag}-serial.pftrace"));
        let o = trnsim(&["run", name, "--trace", serial.to_str().unwrap()]);
        assert!(o.status.success(), "{name} serial: {}", text(&o));
        let want = std::fs::read(&serial).unwrap();
        assert!(want.len() > 1_000, "{name}: a real trace: {} bytes", want.len());
        for np in [2, 4] {
            let p = tmp(&format!("{tag}-np{np}.pftrace"));
            let o = mpirun(np, &["run", "--mpi", name, "--trace", p.to_str().unwrap()]);
            assert!(o.status.success(), "{name} np {np}: {}", text(&o));
            assert!(std::fs::read(&p).unwrap() == want, "{name} np {np}: trace bytes differ from the serial trace");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn a_failing_rank_ends_the_job() {
    // Rank 0 cannot create its trace file; the other rank is then waiting in a collective.
    let o = mpirun(2, &["run", "--mpi", "kernel-random-graph:4", "--trace", "/nonexistent-dir/x.pftrace"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("/nonexistent-dir/x.pftrace"), "{}", text(&o));
}
