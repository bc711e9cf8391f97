//! The chip presets load, agree with the documented figures they cite, and bad files fail with
//! located errors.

use super::{parse, trn2, trn3, TRN2_CHIP_RON, TRN3_CHIP_RON};

#[test]
fn presets_load_and_match_the_spec_figures() {
    let c = trn3().unwrap();
    assert_eq!((c.spec.cores, c.spec.hbm.stacks, c.dma.engines), (8, 4, 16));
    assert_eq!(c.spec.cores * c.dma.engines, c.spec.documented.dma_engines);
    assert_eq!((0..8).map(|i| c.stack_of(i)).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2, 3, 3]);
    assert!((c.peak_bf16_tflops() - 629.1456).abs() < 1e-3, "{}", c.peak_bf16_tflops());
    assert!((c.peak_hbm_gbps() - 4915.2).abs() < 1e-6, "{}", c.peak_hbm_gbps());
    assert!((c.peak_dma_gbps() - 4915.2).abs() < 1e-6, "{}", c.peak_dma_gbps());
    assert!((c.peak_hbm_gbps() / c.spec.documented.hbm_GBps - 1.0).abs() < 0.01);
    assert_eq!(c.dma.start_latency, trnsim_kernel::Dur::from_ns(1300));
    let t2 = trn2().unwrap();
    assert_eq!(t2.spec.cores * t2.dma.engines, 128);
    assert!((t2.peak_dma_gbps() - 3481.6).abs() < 1e-6);
    assert!(!c.spec.estimated.is_empty() && !t2.spec.estimated.is_empty());
}

fn err(text: &str) -> String {
    parse("chip.ron", text).unwrap_err().to_string()
}

#[test]
fn bad_files_fail_with_file_line_column_and_field() {
    let e = err(&TRN3_CHIP_RON.replace("core: \"nc-v4\"", "core: \"nc-v9\""));
    assert!(e.starts_with("chip.ron:") && e.contains(": core: unknown core \"nc-v9\""), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("cores_per_stack: 2", "cores_per_stack: 3"));
    assert!(e.contains(": hbm.cores_per_stack: stacks (4) x cores_per_stack (3)"), "{e}");
    let line = TRN3_CHIP_RON.lines().position(|l| l.contains("cores_per_stack:")).unwrap() + 1;
    assert!(e.starts_with(&format!("chip.ron:{line}:")), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("\"hbm3e-9600\"", "\"hbm9\""));
    assert!(e.contains(": hbm.preset: unknown HBM preset \"hbm9\" (allowed: hbm2-2000"), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("engines_per_core: 16", "engines_per_core: 24"));
    assert!(e.contains(": dma.engines_per_core: 24 is out of range"), "{e}");
    let e = err(&TRN3_CHIP_RON.replace("\"1300ns\"", "\"fast\""));
    assert!(e.contains(": dma.start_latency: "), "{e}");
    // A misspelt key is a parse error located at the key, naming the field before it.
    let e = err(&TRN3_CHIP_RON.replace("queues: 16", "queue: 16"));
    let line = TRN3_CHIP_RON.lines().position(|l| l.contains("queues: 16")).unwrap() + 1;
    assert!(e.starts_with(&format!("chip.ron:{line}:")) && e.contains("queue"), "{e}");
    let e = parse("x.ron", "ChipSpec(").unwrap_err();
    assert!(e.line >= 1 && e.col >= 1, "{e}");
}

/// `text` (a chip file) with `rtl: [LIST]` added as its last field, and the line it is on.
fn with_rtl(text: &str, list: &str) -> (String, usize) {
    let end = text.rfind(')').unwrap();
    let t = format!("{}    rtl: [{list}],\n)\n", &text[..end]);
    let line = t.lines().position(|l| l.contains("rtl: [")).unwrap() + 1;
    (t, line)
}

#[test]
fn swap_in_lists_name_existing_instances_with_built_blocks_or_fail_located() {
    let cases: &[(&str, &str, &str)] = &[
        (
            TRN2_CHIP_RON,
            "\"nc0.dram.bank3\"",
            "rtl[0]: unknown instance \"nc0.dram.bank3\" (swappable: hbm{k}.ch{c}.pc{p}.bank{b}",
        ),
        (
            TRN2_CHIP_RON,
            "\"nc0.sbuf.bank16\"",
            "rtl[0]: unknown instance \"nc0.sbuf.bank16\": bank16 does not exist (0..16)",
        ),
        (
            TRN2_CHIP_RON,
            "\"nc8.psum.bank0\"",
            "rtl[0]: unknown instance \"nc8.psum.bank0\": core nc8 does not exist (0..8)",
        ),
        (
            TRN2_CHIP_RON,
            "\"nc0.psum.bank8\"",
            "rtl[0]: unknown instance \"nc0.psum.bank8\": bank8 does not exist (0..8)",
        ),
        (TRN2_CHIP_RON, "\"nc0.tensor.sem ->\"", "rtl[0]: unknown instance \"nc0.tensor.sem ->\" (swappable:"),
        (TRN2_CHIP_RON, "\"nc0.sbuf.bank2\", \"nc0.sbuf.bank2\"", "rtl[1]: \"nc0.sbuf.bank2\" is listed twice"),
        (
            TRN2_CHIP_RON,
            "\"nc0.sbuf.bank2\", \"nc0.sbuf.bank2=psum_bank\"",
            "rtl[1]: \"nc0.sbuf.bank2=psum_bank\" is listed twice (the same instance with another block)",
        ),
        (TRN2_CHIP_RON, "\"nc0.sbuf.bank2=\"", "rtl[0]: unknown instance \"nc0.sbuf.bank2=\" (swappable:"),
        (
            TRN2_CHIP_RON,
            "\"nc0.sbuf.bank20=sbuf_bank\"",
            "rtl[0]: unknown instance \"nc0.sbuf.bank20=sbuf_bank\": bank20 does not exist (0..16)",
        ),
        (
            TRN2_CHIP_RON,
            "\"hbm4.ch0.pc0.bank0\"",
            "rtl[0]: unknown instance \"hbm4.ch0.pc0.bank0\": stack hbm4 does not exist (0..4)",
        ),
        (TRN2_CHIP_RON, "\"hbm0.ch0.pc0.bank99\"", "bank99 does not exist (0..48)"),
        (
            TRN2_CHIP_RON,
            "\"nc0.dma.engine16\"",
            "rtl[0]: unknown instance \"nc0.dma.engine16\": engine16 does not exist (0..16)",
        ),
        (
            TRN2_CHIP_RON,
            "\"nc8.dma.engine0\"",
            "rtl[0]: unknown instance \"nc8.dma.engine0\": core nc8 does not exist (0..8)",
        ),
        (
            TRN2_CHIP_RON,
            "\"hbm0.ch0.pc0.bank1\", \"hbm0.ch0.pc0.bank1\"",
            "rtl[1]: \"hbm0.ch0.pc0.bank1\" is listed twice",
        ),
        (
            TRN3_CHIP_RON,
            "\"hbm0.ch0.pc0.bank1\"",
            "no hbm_bank block is built for preset \"hbm3e-9600\" (built: hbm3-6400, hbm2-2000, hbm3-5700)",
        ),
    ];
    for (text, list, want) in cases {
        let (t, line) = with_rtl(text, list);
        let e = err(&t);
        assert!(e.starts_with(&format!("chip.ron:{line}:")) && e.contains(want), "{list}: {e}");
    }
    let (t, _) =
        with_rtl(&TRN2_CHIP_RON.replace("stacks: 4,", "stacks: 4,\n        fidelity: fast,"), "\"hbm0.ch0.pc0.bank1\"");
    assert!(err(&t).contains("needs hbm.fidelity cycle"), "{}", err(&t));
    for (name, block) in [
        ("hbm3.ch7.pc1.bank15", "hbm_bank_hbm3_5700"),
        ("nc7.sbuf.bank15", "sbuf_bank"),
        ("nc7.psum.bank7", "psum_bank"),
        ("nc7.dma.engine15", "dma_queue"),
        ("nc0.tensor.sem -> nc0.sem.tensor.op", "link_fifo"),
    ] {
        let (t, _) = with_rtl(TRN2_CHIP_RON, &format!("{name:?}"));
        if trnsim_rtl::registry::HAS_RTL {
            assert_eq!(parse("chip.ron", &t).unwrap().spec.rtl, [name]);
        } else {
            let e = err(&t);
            let want = format!("block {block} is not built: this trnsim was built without RTL co-simulation");
            assert!(e.contains(&want), "{e}");
        }
    }
}

/// A link the chip does not have is refused when the chip is read, located at its entry and
/// naming the links out of the port asked for (or into it), before anything is built to run;
/// its neighbours on the list, and a DMA engine's link, read fine.
#[test]
fn a_swapped_link_that_does_not_exist_is_refused_where_the_chip_is_read() {
    if !trnsim_rtl::registry::HAS_RTL {
        return; // (without the RTL a link entry is refused as not built: the test above)
    }
    let (t, line) = with_rtl(TRN2_CHIP_RON, "\"nc0.sbuf.bank0\", \"nc0.tensor.sem -> nc0.sem.tensr.op\"");
    let e = err(&t);
    let want = "rtl[1]: no link called \"nc0.tensor.sem -> nc0.sem.tensr.op\" (links out of that port: nc0.tensor.sem -> nc0.sem.tensor.op)";
    assert!(e.starts_with(&format!("chip.ron:{line}:")) && e.contains(want), "{e}");
    let (t, _) = with_rtl(TRN2_CHIP_RON, "\"nc9.tensor.sem -> nc0.sem.tensor.op\"");
    assert!(err(&t).contains("rtl[0]: no link called \"nc9.tensor.sem -> nc0.sem.tensor.op\" (links into that port: nc0.tensor.sem -> nc0.sem.tensor.op)"), "{}", err(&t));
    let dma = "nc3.dma.sbuf0 -> nc3.sbuf.dma0.req";
    let (t, _) = with_rtl(TRN2_CHIP_RON, &format!("\"nc0.sbuf.bank0\", {dma:?}"));
    assert_eq!(parse("chip.ron", &t).unwrap().spec.rtl, ["nc0.sbuf.bank0", dma]);
}

/// The 1-based line of the first line of `text` containing `needle` after the first containing
/// `section` (the line a located error must name).
fn line_of(text: &str, section: &str, needle: &str) -> usize {
    let start = text.lines().position(|l| l.contains(section)).unwrap();
    text.lines().skip(start).position(|l| l.contains(needle)).unwrap() + start + 1
}

#[test]
fn new_chip_fields_are_documented_consistently() {
    use trnsim_fabric::link::encoding::find;
    let c = trn3().unwrap();
    assert_eq!((c.spec.cc_cores, c.spec.neuronlink.ports, c.spec.neuronlink.lanes_per_port), (20, 20, 8));
    assert!((c.neuronlink_raw_gbps() - 2560.0).abs() < 1e-9, "{}", c.neuronlink_raw_gbps());
    assert_eq!((c.host.name, c.spec.host.lanes, c.spec.efa.Gbps), ("pcie-gen5", 16, 200.0));
    let t2 = trn2().unwrap();
    assert!((t2.neuronlink_raw_gbps() - 1280.0).abs() < 1e-9, "{}", t2.neuronlink_raw_gbps());
    assert_eq!(t2.neuronlink, find("pcie-gen5").unwrap());
    for chip in [&c, &t2] {
        let est = chip.spec.estimated.join("\n");
        assert!(est.contains("cc_cores 20") && est.contains("host port") && est.contains("EFA"), "{est}");
    }
}

#[test]
fn a_bad_value_in_each_new_field_is_located() {
    let t = TRN3_CHIP_RON;
    // (replace, by, section the error's line is in, text on that line, expected message part)
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        ("cc_cores: 20", "cc_cores: 15", "cc_cores:", "cc_cores", "cc_cores: 15 is out of range (allowed: >= 2 per NeuronCore = 16"),
        ("\"nl-v4\"", "\"nl-v3\"", "neuronlink:", "version", "neuronlink.version: \"nl-v3\" does not go with core \"nc-v4\""),
        ("encoding: \"pcie-gen6\"", "encoding: \"pcie-gen9\"", "neuronlink:", "encoding", "neuronlink.encoding: unknown encoding \"pcie-gen9\""),
        ("lanes_per_port: 8", "lanes_per_port: 3", "neuronlink:", "lanes_per_port", "neuronlink.lanes_per_port: 3 is out of range"),
        ("ports: 20", "ports: 0", "neuronlink:", "ports", "neuronlink.ports: 0 is out of range"),
        ("ports: 20", "ports: 19", "neuronlink:", "ports", "neuronlink.ports: ports (19) x lanes_per_port (8) x 64000 Mb/s x 2 directions = 2432.0 GB/s, not within 2 %"),
        ("documented_GBps: 2560.0", "documented_GBps: -1.0", "neuronlink:", "documented_GBps", "neuronlink.documented_GBps: -1 is out of range"),
        ("documented_GBps: 2560.0", "documented_GBps: 2700.0", "neuronlink:", "ports", "not within 2 % of documented_GBps (2700)"),
        ("encoding: \"pcie-gen5\"", "encoding: \"pcie-gen4\"", "host:", "encoding", "host.encoding: unknown encoding \"pcie-gen4\""),
        ("lanes: 16", "lanes: 12", "host:", "lanes", "host.lanes: 12 is out of range"),
        ("Gbps: 200.0", "Gbps: 0.0", "efa:", "Gbps", "efa.Gbps: 0 is out of range"),
    ];
    for (from, to, section, on, want) in cases {
        assert!(t.contains(from), "{from}");
        let bad = t.replacen(from, to, 1);
        let e = err(&bad);
        let line = line_of(&bad, section, on);
        assert!(e.starts_with(&format!("chip.ron:{line}:")) && e.contains(want), "{from} -> {to}: {e}");
    }
    // A missing new field is a parse error naming it.
    let e = err(&t.replace("    cc_cores: 20,\n", ""));
    assert!(e.contains("cc_cores"), "{e}");
}

mod ultraserver {
    use super::super::ultraserver::{self, parse, TRN3_GEN1_RON};
    use super::line_of;

    #[test]
    fn each_preset_loads_with_its_chip_and_fabric() {
        let g1 = ultraserver::trn3_gen1().unwrap();
        assert_eq!((g1.topology.chips, g1.chip.spec.name.as_str(), g1.chips_per_server()), (64, "trn3-chip", 16));
        assert_eq!(g1.links_per_chip(), 11);
        assert!((g1.wired_raw_gbps_per_chip() - 1408.0).abs() < 1e-9);
        assert!((g1.efa_tbps() - 12.8).abs() < 1e-9);
        let g2 = ultraserver::trn3_gen2().unwrap();
        assert_eq!((g2.topology.chips, g2.chips_per_server(), g2.links_per_chip()), (144, 4, 11));
        assert!((g2.efa_tbps() - 28.8).abs() < 1e-9);
        let t2 = ultraserver::trn2_ultraserver().unwrap();
        assert_eq!((t2.topology.chips, t2.links_per_chip(), t2.chip.spec.name.as_str()), (64, 20, "trn2-chip"));
        assert!((t2.wired_raw_gbps_per_chip() - t2.spec.documented.scale_up_GBps_per_chip).abs() < 1e-9);
        // Injection is payload after the link layer: below the raw rate, one direction.
        assert!(g1.injection_gbps_per_chip() < g1.wired_raw_gbps_per_chip() / 2.0);
        assert!(g1.injection_gbps_per_chip() > 0.9 * g1.wired_raw_gbps_per_chip() / 2.0);
        // From disk, names resolve in models/configs/system and the fabric presets directory.
        for f in ["trn3-gen1-ultraserver", "trn3-gen2-ultraserver", "trn2-ultraserver"] {
            let u = ultraserver::load(&ultraserver::presets_dir().join(format!("{f}.ron"))).unwrap();
            assert_eq!(u.spec.name, f);
        }
    }

    fn err(text: &str) -> String {
        match parse("us.ron", text) {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn mismatches_and_unknown_names_are_located() {
        let t = TRN3_GEN1_RON;
        let cases: &[(&str, &str, &str, &str)] = &[
            ("chips: 64", "chips: 72", "chips:", "chips: 72 differs from fabric \"trn3-gen1-nl32x2\"'s 64 chips"),
            ("\"trn3-chip\"", "\"trn9-chip\"", "chip:", "chip: unknown chip preset \"trn9-chip\" (known: trn2-chip, trn3-chip, trn4-chip)"),
            ("\"trn3-gen1-nl32x2\"", "\"nl99\"", "fabric:", "fabric: unknown fabric preset \"nl99\" (known: fat-tree-pcie6-r20-l2, trn2-server-4x4,"),
            ("\"trn3-chip\"", "\"trn2-chip\"", "fabric:", "fabric: fabric \"trn3-gen1-nl32x2\" links are pcie-gen6 x8, but chip \"trn2-chip\"'s NeuronLink ports are pcie-gen5 x8"),
            ("servers: 4", "servers: 8", "servers:", "documented.servers: 8 servers of 8 chips, but fabric"),
            ("servers: 4", "servers: 5", "servers:", "documented.servers: 5 is out of range"),
            ("efa_Tbps: 12.8", "efa_Tbps: 25.6", "efa_Tbps:", "documented.efa_Tbps: 25.6 Tb/s differs from chips (64)"),
            ("scale_up_GBps_per_chip: 2560.0", "scale_up_GBps_per_chip: 0.0", "scale_up", "out of range (allowed: > 0)"),
        ];
        for (from, to, on, want) in cases {
            assert!(t.contains(from), "{from}");
            let bad = t.replacen(from, to, 1);
            let e = err(&bad);
            let line = line_of(&bad, "UltraServerSpec(", &format!("    {}", on.trim_start()));
            assert!(e.starts_with(&format!("us.ron:{line}:")) && e.contains(want), "{from} -> {to}: {e}");
        }
        // Misspelt key: a parse error located at it.
        let e = err(&t.replace("fabric:", "fabrik:"));
        assert!(e.starts_with("us.ron:") && e.contains("fabrik"), "{e}");
        // From disk, unknown names list the files that are presets of that kind.
        let dir = std::env::temp_dir().join(format!("trnsim-us-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.ron");
        std::fs::write(&p, t.replace("\"trn3-chip\"", "\"nope\"")).unwrap();
        let e = ultraserver::load(&p).unwrap_err();
        assert!(e.contains("unknown chip preset \"nope\" (known: trn2-chip, trn3-chip, trn4-chip)"), "{e}");
        // A chip in the file's own directory with fewer ports than the fabric wires per chip.
        let chip = super::super::TRN3_CHIP_RON
            .replace("name: \"trn3-chip\"", "name: \"small\"")
            .replace("ports: 20", "ports: 10")
            .replace("documented_GBps: 2560.0", "documented_GBps: 1280.0");
        std::fs::write(dir.join("small.ron"), chip).unwrap();
        std::fs::write(&p, t.replace("\"trn3-chip\"", "\"small\"")).unwrap();
        let e = ultraserver::load(&p).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        let line = line_of(t, "UltraServerSpec(", "    fabric:");
        let want =
            "fabric: fabric \"trn3-gen1-nl32x2\" wires 11 links per chip, but chip \"small\" has 10 NeuronLink ports";
        assert!(e.contains(&format!("x.ron:{line}:5: {want}")), "{e}");
    }
}

#[test]
fn the_address_map_is_the_default_unless_the_file_names_one() {
    use trnsim_mem::hbm::AddressMap;
    let c = trn3().unwrap();
    assert_eq!(c.spec.hbm.address_map, AddressMap::BURST_INTERLEAVED);
    assert_eq!(c.stack_config().controller.address_map, AddressMap::BURST_INTERLEAVED);
    let named = "        address_map: \"ro-sid-ba-co-bg-pc-ch\",\n";
    assert!(TRN3_CHIP_RON.contains(named));
    let c = parse("chip.ron", &TRN3_CHIP_RON.replace(named, "")).unwrap();
    assert_eq!(c.stack_config().controller.address_map, AddressMap::DEFAULT);
    let with = |m: &str| TRN3_CHIP_RON.replace(named, &format!("        address_map: \"{m}\",\n"));
    let c = parse("chip.ron", &with("RoBaRaCoCh")).unwrap();
    assert_eq!(c.stack_config().controller.address_map, "RoBaRaCoCh");
    let text = with("ro-ba-bg-sid-pc-ch-cq");
    let line = text.lines().position(|l| l.contains("address_map:")).unwrap() + 1;
    let e = err(&text);
    assert!(e.starts_with(&format!("chip.ron:{line}:")) && e.contains(": hbm.address_map: unknown level `cq`"), "{e}");
    let e = err(&with("st-ro-sid-ba-co-bg-pc-ch"));
    assert!(e.contains(": hbm.address_map: ") && e.contains("stack level"), "{e}");
}
