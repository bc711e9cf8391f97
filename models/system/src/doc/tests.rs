//! Overrides reach the model, keep errors located, and name the nearest paths when unknown.

use super::{Resolved, SystemDoc};

fn doc(name: &str) -> SystemDoc {
    SystemDoc::open(name).unwrap()
}

#[test]
fn presets_open_by_name_with_every_part_resolved() {
    let d = doc("trn3-gen2-ultraserver");
    assert_eq!(d.kind(), super::DocKind::UltraServer);
    assert_eq!(d.get("chip.hbm.stacks").as_deref(), Some("4"));
    assert_eq!(d.get("fabric.kind.switched.chips").as_deref(), Some("144"));
    let Resolved::UltraServer(u) = d.resolve().unwrap() else { panic!("not an UltraServer") };
    assert_eq!(u.topology.chips, 144);
    let e = SystemDoc::open("trn9").unwrap_err();
    assert!(e.contains("unknown preset") && e.contains("trn3-chip"), "{e}");
}

#[test]
fn an_override_changes_the_validated_system() {
    let mut d = doc("trn3-chip");
    d.set("chip.hbm.stacks=2").unwrap();
    d.set("hbm.cores_per_stack=4").unwrap();
    let c = d.resolve().unwrap().chip().cloned().unwrap();
    assert_eq!((c.spec.hbm.stacks, c.spec.hbm.cores_per_stack), (2, 4));
    assert!((c.peak_hbm_gbps() - 2457.6).abs() < 1e-6, "{}", c.peak_hbm_gbps());
}

#[test]
fn an_invalid_override_is_located_in_the_file_and_names_the_flag() {
    let mut d = doc("trn3-chip");
    d.set("chip.hbm.stacks=3").unwrap();
    let e = d.resolve().unwrap_err();
    assert!(e.starts_with("trn3-chip.ron (built in):"), "{e}");
    assert!(e.contains("hbm.cores_per_stack") && e.contains("--set chip.hbm.stacks=3"), "{e}");
    let mut d = doc("trn3-chip");
    d.set("chip.dma.queues=99").unwrap();
    let e = d.resolve().unwrap_err();
    assert!(
        e.contains(": dma.queues: 99 is out of range") && e.contains("(the value of --set chip.dma.queues=99)"),
        "{e}"
    );
}

#[test]
fn unknown_and_ill_typed_paths_are_one_line_errors() {
    let mut d = doc("trn3-chip");
    let e = d.set("chip.hbm.stack=2").unwrap_err();
    assert!(e.starts_with("--set chip.hbm.stack=2: unknown path") && e.contains("chip.hbm.stacks"), "{e}");
    assert!(!e.contains('\n'));
    let e = d.set("chip.hbm.stacks=two").unwrap_err();
    assert!(e.contains("is not an integer"), "{e}");
    let e = d.set("chip.hbm.stacks=4294967296").unwrap_err();
    assert!(e.contains("4294967296") && e.contains("u32"), "{e}");
    let e = d.set("chip.hbm.stacks").unwrap_err();
    assert!(e.contains("expected PATH=VALUE"), "{e}");
    // A failed override leaves the document as it was.
    assert_eq!(d.get("chip.hbm.stacks").as_deref(), Some("4"));
}

#[test]
fn shorthands_and_wildcards_reach_every_switch_tier() {
    let mut d = doc("trn3-gen2-ultraserver");
    d.set("fabric.switch.latency=200ns").unwrap();
    assert_eq!(d.get("fabric.kind.switched.tiers[0].switch_latency").as_deref(), Some("200ns"));
    assert_eq!(d.get("fabric.kind.switched.tiers[1].switch_latency").as_deref(), Some("200ns"));
    d.set("fabric.tiers[1].switch_latency=300ns").unwrap();
    assert_eq!(d.get("fabric.kind.switched.tiers[1].switch_latency").as_deref(), Some("300ns"));
    let Resolved::UltraServer(u) = d.resolve().unwrap() else { panic!() };
    assert_eq!(u.topology.chips, 144);
    let e = d.set("fabric.tiers[7].switch_latency=1ns").unwrap_err();
    assert!(e.contains("2 elements"), "{e}");
}

#[test]
fn ultraserver_checks_see_overridden_parts() {
    let mut d = doc("trn3-gen2-ultraserver");
    d.set("chip.neuronlink.ports=10").unwrap();
    d.set("chip.neuronlink.documented_GBps=1280").unwrap();
    let e = d.resolve().unwrap_err();
    assert!(e.contains("wires 11 links per chip") && e.contains("10 NeuronLink ports"), "{e}");
}

/// `file:line:col: field:` at the start of a one-line error.
fn located_at(e: &str, file: &str, field: &str) -> bool {
    let Some(rest) = e.strip_prefix(file).and_then(|r| r.strip_prefix(':')) else { return false };
    let mut parts = rest.splitn(3, ':');
    let (line, col) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    line.parse::<u32>().is_ok()
        && col.parse::<u32>().is_ok()
        && parts.next().is_some_and(|r| r.starts_with(&format!(" {field}:")))
        && !e.contains('\n')
}

#[test]
fn a_cluster_above_4096_chips_is_refused_by_the_packet_network_and_taken_by_the_flow_network() {
    use crate::cluster::{Level, MAX_CLUSTER_CHIPS};
    // 65 Gen1 UltraServers of 64 chips: 4,160 chips.
    let mut d = doc("trn3-gen1-ultracluster-64");
    d.set("ultraservers=65").unwrap();
    d.set("scale_out.spines=32").unwrap();
    let e = d.resolve().unwrap_err();
    assert!(located_at(&e, "trn3-gen1-ultracluster-64.ron (built in)", "ultraservers"), "{e}");
    assert!(e.contains("out of range (allowed: 1..=64) for the packet-level network"), "{e}");
    assert!(e.contains("--network flow"), "names the way: {e}");
    let Resolved::UltraCluster(c) = d.resolve_for(Level::Flow).unwrap() else { panic!("not a cluster") };
    assert_eq!(c.topology.chips, 4160);
    assert!(c.topology.chips > MAX_CLUSTER_CHIPS);
    // Within 64 UltraServers but over 4,096 chips: 29 Gen2 UltraServers of 144.
    let mut d = doc("trn3-gen2-ultracluster-8");
    d.set("ultraservers=29").unwrap();
    let e = d.resolve().unwrap_err();
    assert!(located_at(&e, "trn3-gen2-ultracluster-8.ron (built in)", "ultraservers"), "{e}");
    assert!(e.contains("= 4176 chips; the packet-level network takes at most 4096"), "{e}");
    assert!(e.contains("the flow-level network (--network flow) takes up to 1048576"), "{e}");
}

#[test]
fn the_flow_networks_own_limits_are_checked_and_located() {
    use crate::cluster::Level;
    let cases = [
        ("ultraservers=8193", "8193 is out of range (allowed: 1..=8192) (the value of --set ultraservers=8193)"),
        (
            "ultraservers=7282",
            "7282 UltraServers of 144 chips = 1048608 chips; the flow-level network takes at most 1048576",
        ),
        ("ultraservers=0", "0 is out of range (allowed: 1..=8192)"),
    ];
    for (set, want) in cases {
        let mut d = doc("trn3-gen2-ultracluster-8");
        d.set(set).unwrap();
        let e = d.resolve_for(Level::Flow).unwrap_err();
        assert!(located_at(&e, "trn3-gen2-ultracluster-8.ron (built in)", "ultraservers"), "{e}");
        assert!(e.contains(want), "{set}: expected {want:?} in {e}");
    }
}

#[test]
fn the_100000_chip_cluster_file_runs_on_the_flow_network_only() {
    use crate::cluster::Level;
    let path = crate::chip::ultraserver::presets_dir().join("flow-only/trn3-gen2-ultracluster-695.ron");
    let d = SystemDoc::load(&path).unwrap();
    let e = d.resolve().unwrap_err();
    assert!(e.contains(":16:5: ultraservers: 695 is out of range (allowed: 1..=64)"), "{e}");
    assert!(e.contains("--network flow"), "{e}");
    let Resolved::UltraCluster(c) = d.resolve_for(Level::Flow).unwrap() else { panic!("not a cluster") };
    assert_eq!(c.topology.chips, 100_080);
    assert_eq!(c.switch.spec.name, "eth-102.4t", "the switch beside the file");
}

#[test]
fn the_million_chip_cluster_file_runs_on_the_flow_network_only() {
    use crate::cluster::Level;
    let path = crate::chip::ultraserver::presets_dir().join("flow-only/trn3-gen2-ultracluster-6945.ron");
    let d = SystemDoc::load(&path).unwrap();
    let e = d.resolve().unwrap_err();
    assert!(e.contains(":17:5: ultraservers: 6945 is out of range (allowed: 1..=64)"), "{e}");
    let Resolved::UltraCluster(c) = d.resolve_for(Level::Flow).unwrap() else { panic!("not a cluster") };
    assert_eq!(c.topology.chips, 1_000_080);
    assert_eq!(c.switch.spec.name, "eth-409.6t-chassis", "the switch beside the file");
    assert_eq!(c.scale_out.shape(144).unwrap().leaves, 977);
}
