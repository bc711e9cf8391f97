//! UltraClusters: the presets build with the chips and switches they say; a small message
//! between UltraServers takes the documented ~15 us; the hierarchical all-reduce keeps
//! NeuronLink traffic inside UltraServers and beats the flat ring; bad scale-out networks are
//! located errors naming the field (links that do not match the NICs or switches, a radix
//! too small for the tier, a chip without a NIC latency, rail placement that does not fit).

use trnsim_fabric::collective::{self, Collective, Params};
use trnsim_fabric::topo::Network;
use trnsim_system::cluster::BUILTIN_CLUSTERS;
use trnsim_system::doc::{Resolved, SystemDoc};

fn cluster(name: &str, sets: &[&str]) -> Result<trnsim_system::cluster::UltraCluster, String> {
    let mut doc = SystemDoc::open(name)?;
    for s in sets {
        doc.set(s)?;
    }
    match doc.resolve()? {
        Resolved::UltraCluster(c) => Ok(*c),
        _ => Err(format!("{name} is not an UltraCluster")),
    }
}

/// Bytes the chips of `t` sent into EFA (onto their NICs) in run `r`.
fn efa_bytes(t: &trnsim_fabric::topo::Topology, r: &collective::RunResult) -> u64 {
    t.edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.from < t.chips && t.nodes[e.to].name.starts_with("efa."))
        .map(|(i, _)| r.edge_stats[i].bytes)
        .sum()
}

#[test]
fn presets_build_with_their_ultraservers_and_scale_out_switches() {
    // The 4,096-chip preset is checked by `trnsim config check` in the docs; here the others.
    for (name, _) in BUILTIN_CLUSTERS.iter().filter(|(n, _)| !n.ends_with("-64")) {
        let c = cluster(name, &[]).unwrap_or_else(|e| panic!("{e}"));
        let per = c.ultraserver.topology.chips;
        assert_eq!(c.topology.chips, per * c.spec.ultraservers as usize, "{name}");
        assert_eq!(c.topology.chips_per_server, per, "{name}: a collective's server is one UltraServer");
        let efa_nodes = c.topology.nodes.iter().filter(|n| n.name.starts_with("efa.")).count();
        let shape = c.scale_out.shape(per).unwrap();
        let spines = if shape.leaves > 1 { c.scale_out.spines as usize } else { 0 };
        assert_eq!(efa_nodes, shape.leaves + spines, "{name}");
    }
}

#[test]
fn a_small_write_between_ultraservers_takes_the_documented_15_us() {
    // spec §6 (D A10): HBM to HBM between servers about 15 us (ib_write_lat, Trn2).
    for name in ["trn2-ultracluster-16", "trn3-gen2-ultracluster-2"] {
        let c = cluster(name, &[]).unwrap();
        let t = c.topology.clone();
        let (src, dst) = (0, t.chips - 1);
        let mut net = Network::new(t);
        net.send(0, src, dst, 8, 0);
        while net.next_time().is_some() {
            net.step();
        }
        let us = net.msgs[0].done_ps.unwrap() as f64 / 1e6;
        assert!((14.25..=15.75).contains(&us), "{name}: {us} us");
    }
}

#[test]
fn hierarchical_all_reduce_crosses_efa_once_per_piece_and_beats_the_flat_ring() {
    let c = cluster("trn3-gen1-ultracluster-2", &[]).unwrap();
    let t = &c.topology;
    let size = 8 << 20;
    let p = Params::default();
    let run = |algo: &str| collective::run(t, algo.parse::<Collective>().unwrap(), size, &p).unwrap();
    let (hier, ring) = (run("all_reduce:hierarchical"), run("all_reduce:ring"));
    let efa_bytes = |r: &collective::RunResult| efa_bytes(t, r);
    // 128 chips, 2 UltraServers of 64: each chip sends its 1/64 piece, halved, twice across.
    let want = 128 * 2 * (size / 64).div_ceil(2);
    assert_eq!(efa_bytes(&hier), want);
    assert!(hier.row.time_us < ring.row.time_us, "{:?} vs {:?}", hier.row, ring.row);
}

#[test]
fn hierarchical_all_gather_and_reduce_scatter_cross_efa_once_and_auto_picks_them() {
    let c = cluster("trn3-gen1-ultracluster-2", &[]).unwrap();
    let t = &c.topology;
    let size = 8 << 20;
    let p = Params::default();
    let run = |algo: &str| collective::run(t, algo.parse::<Collective>().unwrap(), size, &p).unwrap();
    let efa_bytes = |r: &collective::RunResult| efa_bytes(t, r);
    for op in ["all_gather", "reduce_scatter"] {
        let (hier, ring, auto) =
            (run(&format!("{op}:hierarchical")), run(&format!("{op}:ring")), run(&format!("{op}:auto")));
        // 128 chips, 2 UltraServers: each chip's 1/128 piece crosses EFA once.
        assert_eq!(efa_bytes(&hier), 128 * (size / 128), "{op}");
        assert!(efa_bytes(&ring) > efa_bytes(&hier), "{op}");
        assert!(hier.row.time_us * 2.0 < ring.row.time_us, "{op}: {:?} vs {:?}", hier.row, ring.row);
        assert_eq!(auto.algo, collective::Algo::Hierarchical, "{op}");
        assert_eq!(auto.row.time_us, hier.row.time_us, "{op}");
    }
}

#[test]
fn a_workloads_all_gather_over_ultraservers_runs_hierarchical_by_default() {
    use trnsim_workloads::exec::Costs;
    use trnsim_workloads::format::{Comm, Op};
    let c = cluster("trn3-gen1-ultracluster-2", &[]).unwrap();
    let mut costs = trnsim_workloads::costs::SystemCosts::new(&c.ultraserver.chip, Some(&c.topology), 1.0);
    let gather = |algo: Option<&str>| {
        Op::AllGather(Comm { bytes: 8 << 20, group: "world".into(), algo: algo.map(String::from), duration_ns: 0 })
    };
    let world = vec![(0..c.topology.chips).collect::<Vec<usize>>()];
    let mut ns = |algo: Option<&str>| costs.comm_ns(&gather(algo), &world).unwrap()[0];
    let (auto, hier, ring) = (ns(None), ns(Some("hierarchical")), ns(Some("ring")));
    assert_eq!(auto, hier, "auto is hierarchical for a group over two UltraServers");
    assert!(hier * 2.0 < ring, "{hier} vs ring {ring}");
    // A group inside one UltraServer keeps the ring.
    let inside = vec![(0..64).collect::<Vec<usize>>()];
    let mut ns = |algo: Option<&str>| costs.comm_ns(&gather(algo), &inside).unwrap()[0];
    assert_eq!(ns(None), ns(Some("ring")));
}

#[test]
fn overrides_reshape_the_cluster_and_are_checked_like_the_file() {
    let c = cluster("trn3-gen1-ultracluster-2", &["ultraservers=1"]).unwrap();
    assert_eq!(c.topology.chips, 64);
    let c = cluster("trn3-gen2-ultracluster-2", &["scale_out.spines=4", "scale_out.switch.latency=500ns"]).unwrap();
    assert_eq!(c.scale_out.switch_latency_ps, 500_000);
    let e = cluster("trn3-gen2-ultracluster-2", &["scale_out.link.Gbps=400"]).unwrap_err();
    assert!(
        e.contains("scale_out.link.Gbps: EFA links of 400 Gb/s do not match chip \"trn3-chip\"'s NIC ports"),
        "{e}"
    );
    assert!(e.contains("(the value of --set scale_out.link.Gbps=400)"), "{e}");
}

/// The Gen2 8-UltraServer preset edited by `text_edit`, written to a scratch file (its names
/// resolve among the presets) and resolved: the error it must give.
fn bad(text_edit: &dyn Fn(String) -> String) -> String {
    let text = text_edit(
        std::fs::read_to_string(crate::common::root().join("models/configs/system/trn3-gen2-ultracluster-8.ron"))
            .unwrap(),
    );
    let dir = crate::common::scratch("ultracluster-bad");
    let path = dir.join("c.ron");
    std::fs::write(&path, text).unwrap();
    let doc = SystemDoc::load(&path);
    match doc.and_then(|d| d.resolve().map(|_| ())) {
        Ok(()) => panic!("accepted"),
        Err(e) => e,
    }
}

#[test]
fn bad_scale_out_networks_are_located_errors_naming_the_field() {
    let cases: &[(&dyn Fn(String) -> String, &str)] = &[
        (&|t| t.replace("Gbps: 200.0", "Gbps: 100.0"), ":16:16: scale_out.link.Gbps: EFA links of 100 Gb/s do not match chip"),
        (&|t| t.replace("chips_per_leaf: 128", "chips_per_leaf: 300"), ":15:9: scale_out.switch: switch \"eth-51.2t\": a leaf needs 300 ports"),
        (&|t| t.replace("chips_per_leaf: 128", "chips_per_leaf: 100"), ":17:9: scale_out.chips_per_leaf: rail placement puts one local index of each of the 8 UltraServers on a leaf"),
        (&|t| t.replace("spines: 8", "spines: 200"), ":18:9: scale_out.spines: a leaf has 128 ports left"),
        (&|t| t.replace("spines: 8", "spines: 1"), "scale_out.spines: each spine needs 9 leaves x 128 links"),
        (&|t| t.replace("ultraservers: 8", "ultraservers: 0"), ":13:5: ultraservers: 0 is out of range (allowed: 1..=64)"),
        (&|t| t.replace("ultraservers: 8", "ultraservers: 29"), "ultraservers: 29 UltraServers of 144 chips = 4176 chips; the packet-level network takes at most 4096"),
        (&|t| t.replace("\"eth-51.2t\"", "\"eth-99t\""), ":15:9: switch: unknown scale-out switch preset \"eth-99t\" (known: eth-12.8t, eth-25.6t, eth-51.2t)"),
        (&|t| t.replace("ultraserver: \"trn3-gen2-ultraserver\"", "ultraserver: \"trn9\""), ":12:5: ultraserver: unknown UltraServer preset \"trn9\""),
        (&|t| t.replace("efficiency: 0.97", "efficiency: 1.5"), ":16:29: scale_out.link.efficiency: 1.5 is out of range (allowed: > 0, <= 1)"),
        (&|t| t.replace("latency: \"50ns\"", "latency: \"0ns\""), "scale_out.link.latency: 0ns is out of range"),
        (&|t| t.replace("placement: rail", "placement: diagonal"), ":19:20: placement: unknown variant `diagonal` of PlacementPart (allowed: contiguous, rail)"),
    ];
    for (edit, want) in cases {
        let e = bad(edit);
        assert!(e.contains(want), "expected {want:?} in {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn a_chip_without_a_nic_latency_cannot_join_a_cluster() {
    let e = cluster("trn3-gen1-ultracluster-2", &["chip.efa.latency="]).unwrap_err();
    assert!(e.contains("ultraserver: chip \"trn3-chip\" has no efa.latency"), "{e}");
    let e = cluster("trn3-gen1-ultracluster-2", &["chip.efa.latency=2 fortnights"]).unwrap_err();
    assert!(e.contains("efa.latency"), "{e}");
    let e = cluster("trn3-gen1-ultracluster-2", &["chip.efa.ports=2"]).unwrap_err();
    assert!(e.contains("NIC ports (100 Gb/s each: efa.Gbps 200 / efa.ports 2)"), "{e}");
}

/// The 2-UltraServer cluster's hierarchical all-reduce, built per chip and switch.
fn cluster_builder() -> Result<trnsim_kernel::SimBuilder, String> {
    let c = cluster("trn3-gen1-ultracluster-2", &[])?;
    let coll: Collective = "all_reduce:hierarchical".parse()?;
    let mut b = trnsim_kernel::SimBuilder::new();
    trnsim_fabric::system::build_collective(&mut b, &c.topology, coll, 1 << 20, &Params::default())?;
    Ok(b)
}

#[test]
fn the_cluster_all_reduce_is_identical_serial_on_threads_and_over_bytes_by_ultraserver() {
    use trnsim_kernel::{run_threads, run_transport, LoopbackTransport, ParallelConfig, PartitionRule};
    let limit = Params::default().limit;
    let mut sim = cluster_builder().unwrap().build().unwrap();
    sim.run_until_idle(limit).unwrap();
    let serial = serde_json::to_string(&sim.report()).unwrap();
    assert!(serial.contains("us1.chip127") && serial.contains("efa.leaf0"), "names say where nodes are");
    let by_us = PartitionRule::ByName { depth: 1 };
    // The default: by UltraServer, the EFA switches spread over the partitions.
    let spread = PartitionRule::ByNameAttached { depth: 1, attach: "efa".into() };
    for (threads, rule) in [(2, by_us.clone()), (2, spread), (4, PartitionRule::Auto)] {
        let cfg = ParallelConfig {
            workers: None,
            threads,
            rule: rule.clone(),
            min_lookahead: None,
            on_window: None,
            report_where: None,
        };
        let (run, _) = run_threads(cluster_builder, &cfg, limit, None, |_| ()).unwrap();
        assert_eq!(serial, serde_json::to_string(&run.report).unwrap(), "{threads} threads, {rule:?}");
        if rule == by_us {
            // By UltraServer: only the EFA links between one UltraServer's chips and the leaf
            // (in the other partition) are cut.
            assert_eq!(run.plan.cut.len(), 2 * 64, "{rule:?}");
        }
    }
    // The bytes MPI ranks exchange, between threads: 2 ranks.
    let two = ParallelConfig::new(2, by_us.clone());
    let reports = std::thread::scope(|s| {
        let mut eps = LoopbackTransport::group(2);
        let mut t1 = eps.pop().unwrap();
        let mut t0 = eps.pop().unwrap();
        let cfg = &two;
        let h = s.spawn(move || run_transport(cluster_builder, cfg, &mut t1, limit, None, None).map(|r| r.is_none()));
        let r0 = run_transport(cluster_builder, cfg, &mut t0, limit, None, None).unwrap();
        assert!(h.join().unwrap().unwrap(), "rank 1 returns nothing");
        r0.unwrap().report
    });
    assert_eq!(serial, serde_json::to_string(&reports).unwrap(), "over bytes");
}
