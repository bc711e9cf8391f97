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
