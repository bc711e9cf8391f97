//! A benchmark's energy (`trnsim run NAME`, on its own system or with `--system`) is priced from
//! counts over every chip it runs, not only the first chip its report keeps; MACs are priced by
//! their format, PSUM bytes as PSUM, EFA bytes at the NIC's figure; the counts the engines and
//! DMA blocks keep of SBUF and PSUM bytes are the SBUF/PSUM unit's own.

use std::path::Path;
use trnsim_kernel::{StatValue, StatsReport, TickOrder};
use trnsim_system::energy_stats::{price, Counts, COUNTS_OWNER, PARTS};

use crate::common::{root, scratch, trnsim};

fn run_json(args: &[&str], json: &Path) -> serde_json::Value {
    let out = trnsim().args(args).arg("--json").arg(json).current_dir(root()).output().expect("run trnsim");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

fn figures(doc: &serde_json::Value) -> Vec<(String, f64)> {
    serde_json::from_value(doc["benchmarks"][0]["headline"].clone()).unwrap()
}

fn get(figs: &[(String, f64)], k: &str) -> f64 {
    figs.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k} in {figs:?}")).1
}

fn stat(doc: &serde_json::Value, owner: &str, k: &str) -> f64 {
    doc["benchmarks"][0]["stats"]["owners"][owner][k].as_f64().unwrap_or_else(|| panic!("no {owner} {k}"))
}

#[test]
fn a_chip_benchmark_reports_energy_on_its_own_system_as_with_system() {
    let dir = scratch("cycle_energy_e2e");
    let plain = run_json(&["run", "e2e-llm-layer"], &dir.join("plain.json"));
    let sys = run_json(&["run", "e2e-llm-layer", "--system", "trn3-chip"], &dir.join("sys.json"));
    let (p, s) = (figures(&plain), figures(&sys));
    for k in
        PARTS.iter().map(|n| format!("energy_{n}_mJ")).chain(["energy_mJ", "power_W", "GFLOPS_per_W"].map(String::from))
    {
        assert_eq!(get(&p, &k), get(&s, &k), "{k}: the plain run and --system trn3-chip differ");
    }
    let parts: f64 = PARTS.iter().map(|n| get(&p, &format!("energy_{n}_mJ"))).sum();
    assert!((parts - get(&p, "energy_mJ")).abs() <= 1e-12 * parts, "the parts do not sum to the total");
    // SBUF and PSUM bytes as the engines and DMA blocks count them are the unit's own.
    for c in 0..8 {
        let unit = |k: &str| stat(&plain, &format!("nc{c}.sbuf"), k);
        let by = |mem: &str| -> f64 {
            ["tensor", "vector", "scalar", "gpsimd", "sync", "dma"]
                .iter()
                .map(|e| {
                    plain["benchmarks"][0]["stats"]["owners"][format!("nc{c}.{e}")][format!("{mem}_bytes")]
                        .as_f64()
                        .unwrap_or(0.0)
                })
                .sum()
        };
        assert_eq!(by("sbuf"), unit("sbuf.read_bytes") + unit("sbuf.write_bytes"), "nc{c}: SBUF bytes");
        assert_eq!(by("psum"), unit("psum.read_bytes") + unit("psum.write_bytes"), "nc{c}: PSUM bytes");
    }
    // PSUM is priced at the PSUM figure, the MACs at BF16's (this run's format).
    let doc = trnsim_system::doc::SystemDoc::open("trn3-chip").unwrap();
    let t = doc.energy().unwrap().unwrap();
    let psum: f64 = (0..8)
        .map(|c| {
            stat(&plain, &format!("nc{c}.sbuf"), "psum.write_bytes")
                + stat(&plain, &format!("nc{c}.sbuf"), "psum.read_bytes")
        })
        .sum();
    let want = psum * t.psum_access.pj_per_access / f64::from(t.psum_access.access_bytes) * 1e-9;
    assert!((get(&p, "energy_psum_mJ") - want).abs() <= 1e-9 * want, "PSUM {} mJ vs {want}", get(&p, "energy_psum_mJ"));
    let macs: f64 = (0..8).map(|c| stat(&plain, &format!("nc{c}.tensor"), "macs_bf16")).sum();
    let want = macs * t.tensor_pj_per_mac.bf16 * 1e-9;
    assert!(
        (get(&p, "energy_tensor_mJ") - want).abs() <= 1e-9 * want,
        "tensor {} mJ vs {want}",
        get(&p, "energy_tensor_mJ")
    );
}

/// A planted mispricing fails: a format priced at another's figure, PSUM at SBUF's.
#[test]
fn each_format_and_memory_has_its_own_price() {
    let doc = trnsim_system::doc::SystemDoc::open("trn3-gen1-ultraserver").unwrap();
    let (sys, t) = (doc.resolve().unwrap(), doc.energy().unwrap().unwrap());
    let chip = sys.chip().unwrap();
    let mut s = StatsReport::default();
    let mut put = |o: &str, k: &str, v: u64| {
        s.owners.entry(o.into()).or_default().insert(k.into(), StatValue::Int(v));
    };
    put("kernel", "sim_time_ps", 1_000_000);
    put("chip000.nc0.tensor", "macs_fp8", 1_000_000);
    put("chip001.nc3.tensor", "macs_mxfp8", 1_000_000);
    put("chip002.nc1.vector", "psum_bytes", 64_000);
    put("link:us0.chip0000.tx.efa.leaf0.0 -> efa.leaf0.rx.us0.chip0000.0", "bytes", 1_000);
    let e = price(&Counts::of(&s), &t, chip, sys.fabric());
    let m = &t.tensor_pj_per_mac;
    assert_eq!(e.parts_j[0], (1e6 * m.fp8 + 1e6 * m.mxfp8) * 1e-12);
    assert_ne!(m.fp8, m.bf16, "the table must tell the formats apart for this test to mean anything");
    assert_eq!(e.parts_j[5], 1000.0 * t.psum_access.pj_per_access * 1e-12);
    assert_eq!(e.parts_j[10], 1000.0 * t.efa_nic.pj_per_byte * 1e-12);
    assert_eq!(e.flops, 4e6);
}

/// Whole chips: the counts a run cut to its first chip keeps cover every chip, the same in a
/// serial run and a run in windows.
#[test]
fn a_run_of_whole_chips_counts_every_chip() {
    use trnsim_benchmarks::parallel::{run_in_windows, tp_system};
    use trnsim_benchmarks::tp;
    let mut chip = trnsim_system::chip::trn3().unwrap();
    chip.spec.hbm.fidelity = trnsim_mem::hbm::Fidelity::Fast;
    chip.dma.bulk = true;
    let t = trnsim_fabric::topo::load(&trnsim_fabric::topo::presets_dir().join("trn3-gen1-nl32x2.ron")).unwrap();
    let sys = tp_system(chip.clone(), t.clone(), tp::SHAPE, 8, TickOrder::Structural).unwrap();
    let windows = run_in_windows("tp-matmul-8", &sys).unwrap().expect("splits by chip");
    let serial = tp::run_on("tp-matmul-8", &chip, &t, TickOrder::Structural, None, None).unwrap();
    for r in [&windows, &serial] {
        let c = Counts::of(&r.stats);
        assert!(r.stats.owners.contains_key(COUNTS_OWNER));
        let chip0: u64 = (0..chip.spec.cores)
            .map(|k| r.stats.int(&format!("chip000.nc{k}.tensor"), "macs_bf16").expect("chip 0's engines kept"))
            .sum();
        assert!(chip0 > 0);
        assert_eq!(c.macs[0], 8 * chip0, "8 chips run the same shard: 8 x chip 0's MACs");
        let dma0: u64 =
            (0..chip.spec.cores).map(|k| r.stats.int(&format!("chip000.nc{k}.dma"), "bytes").unwrap_or(0)).sum();
        assert_eq!(c.dma_bytes, 8 * dma0, "every chip's DMA bytes");
        assert!(c.link_bytes > 0 && c.switch_bytes > 0);
    }
    assert_eq!(Counts::of(&windows.stats), Counts::of(&serial.stats));
}
