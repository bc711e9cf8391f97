//! `trnsim describe`: every model's presets with their parameters (printed from the same
//! declarations the models run on), sources and estimates.

use clap::Args;

/// Arguments of `trnsim describe`.
#[derive(Args, Debug)]
pub struct DescribeArgs {
    /// What to describe: core, hbm, sram, dma, link, switch, topology, chip, ultraserver,
    /// ultracluster, scaleout (none: list them).
    what: Option<String>,
    /// One preset by name (none: all presets of that kind, briefly); for core, hbm, link,
    /// switch, ultraserver and ultracluster, also a file (FILE.ron; a core, hbm stack or link
    /// also FILE.json).
    name: Option<String>,
}

const KINDS: &[(&str, &str)] = &[
    ("core", "NeuronCores: clocks, tensor engine and per-format rates, SBUF/PSUM, DMA, semaphores, instruction costs (models/configs/core/*.ron; or a FILE.ron/.json)"),
    ("hbm", "HBM stacks: organization, timing table, controller (models/configs/mem/hbm/*.ron; or a FILE.ron/.json)"),
    ("sram", "on-chip SRAM: SBUF per NeuronCore generation, PSUM (models/mem/src/sram/geometry.rs)"),
    ("dma", "NeuronCore DMA blocks (models/core/src/dma/params.rs)"),
    ("link", "link encodings: PCIe Gen5/Gen6, UALink (models/configs/fabric/link/*.ron; or a FILE.ron/.json)"),
    ("switch", "switches (models/configs/fabric/switch/*.ron; or a FILE.ron)"),
    ("topology", "fabric topologies (models/configs/fabric/*.ron)"),
    ("chip", "chips: cores, HBM, DMA, CC cores, NeuronLink, host, EFA (models/configs/system/*-chip.ron)"),
    ("ultraserver", "UltraServers: a chip on a fabric, links per chip, documented figures (models/configs/system/*-ultraserver.ron; or a FILE.ron)"),
    ("ultracluster", "UltraClusters: UltraServers joined by EFA through a leaf/spine network (models/configs/system/*-ultracluster-*.ron; or a FILE.ron)"),
    ("scaleout", "scale-out (EFA) switches: capacity, ports, latency, buffer (models/configs/scaleout/*.ron)"),
];

fn ron<T: serde::Serialize>(v: &T) -> String {
    let cfg = ron::ser::PrettyConfig::new().depth_limit(3);
    ron::ser::to_string_pretty(v, cfg).unwrap_or_else(|e| format!("(cannot print: {e})"))
}

fn header(name: &str, description: &str, source: &str, estimated: &[&str]) {
    println!("{name}: {description}");
    println!("  source: {source}");
    for e in estimated {
        println!("  estimate: {e}");
    }
}

/// Runs `trnsim describe`; Err(message) is a usage error.
pub fn run(a: DescribeArgs) -> Result<(), String> {
    let Some(what) = a.what.as_deref() else {
        for (k, d) in KINDS {
            println!("{k:<12} {d}");
        }
        return Ok(());
    };
    let want = |n: &str| a.name.as_deref().is_none_or(|w| w == n);
    let full = a.name.is_some();
    let mut found = false;
    match what {
        "core" => {
            use trnsim_system::chip::core_file;
            if let Some(path) = a.name.as_deref().filter(|n| core_file::is_path(n)) {
                let (file, text) = core_file::find(path, "")?;
                describe_core(&core_file::parse(&file, &text).map_err(|e| e.to_string())?, true);
                return Ok(());
            }
            for (n, _) in trnsim_core::spec::BUILTIN.iter().filter(|(n, _)| want(n)) {
                found = true;
                let c = trnsim_core::spec::preset(n).ok_or_else(|| format!("core {n} is not built in"))?;
                describe_core(&c, full);
            }
        }
        "hbm" => {
            use trnsim_system::chip::stack_file;
            if let Some(path) = a.name.as_deref().filter(|n| stack_file::is_path(n)) {
                describe_stack(&stack_file::load(path, "")?, path, true);
                return Ok(());
            }
            for p in trnsim_mem::hbm::presets::ALL.iter().filter(|p| want(&p.name)) {
                found = true;
                describe_stack(p, &p.name, full);
            }
        }
        "sram" => {
            for p in trnsim_mem::sram::geometry::PRESETS.iter().filter(|p| want(p.name)) {
                found = true;
                header(p.name, p.description, p.source, p.estimated);
                if full {
                    println!("geometry: {}", ron(&p.geometry));
                }
            }
        }
        "dma" => {
            use trnsim_core::dma::DmaParams;
            for p in [DmaParams::v2(), DmaParams::v3(), DmaParams::v4()] {
                if want(&p.name) {
                    found = true;
                    println!("{}: {}", p.name, ron(&p));
                }
            }
        }
        "link" => {
            if let Some(path) = a.name.as_deref().filter(|n| trnsim_system::located::is_path(n)) {
                let f = trnsim_system::link_file::load(path)?;
                let est: Vec<&str> = f.estimated.iter().map(String::as_str).collect();
                header(&f.name, &f.description, &f.source, &est);
                println!("encoding: {}", ron(&f));
                return Ok(());
            }
            for e in trnsim_fabric::link::encoding::ALL.iter().filter(|e| want(e.name)) {
                found = true;
                header(e.name, e.description, e.source, e.estimated);
                if full {
                    println!(
                        "  lane rate {} Mb/s, line code {}/{}, header {} B, widths {:?}",
                        e.lane_mbit_per_s, e.code_num, e.code_den, e.header_bytes, e.widths
                    );
                    println!("link defaults: {}", ron(&trnsim_fabric::link::LinkParams::with(e.name, 8)));
                }
            }
        }
        "switch" => {
            let file = a.name.as_deref().filter(|n| n.ends_with(".ron") || n.contains('/'));
            let loaded = file.map(trnsim_system::switch_file::load).transpose()?;
            let all = &trnsim_fabric::switch::presets::ALL;
            for p in loaded.iter().chain(all.iter().filter(|p| file.is_none() && want(&p.name))) {
                found = true;
                let est: Vec<&str> = p.estimated.iter().map(String::as_str).collect();
                header(&p.name, &p.description, &p.source, &est);
                if full {
                    println!("config: {}", ron(&p.config));
                }
            }
        }
        "topology" => {
            let dir = trnsim_fabric::topo::presets_dir();
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".ron").map(str::to_string))
                .collect();
            names.sort();
            for n in names.iter().filter(|n| want(n)) {
                found = true;
                let path = dir.join(format!("{n}.ron"));
                if full {
                    println!(
                        "{}",
                        trnsim_kernel::input::read_text(&path).map_err(|e| format!("{}: {e}", path.display()))?
                    );
                } else {
                    println!("{n:<28} {}", path.display());
                }
            }
        }
        "chip" => {
            for (n, text) in trnsim_system::chip::ultraserver::BUILTIN_CHIPS.iter().filter(|(n, _)| want(n)) {
                found = true;
                let c = trnsim_system::chip::parse(&format!("{n}.ron (built in)"), text).map_err(|e| e.to_string())?;
                describe_chip(&c, full);
            }
        }
        "ultraserver" => {
            use trnsim_system::chip::ultraserver as us;
            if let Some(path) = a.name.as_deref().filter(|n| n.ends_with(".ron")) {
                describe_ultraserver(&us::load(std::path::Path::new(path))?, true);
                return Ok(());
            }
            for (n, f) in [
                ("trn3-gen1-ultraserver", us::trn3_gen1 as fn() -> Result<us::UltraServer, String>),
                ("trn3-gen2-ultraserver", us::trn3_gen2),
                ("trn2-ultraserver", us::trn2_ultraserver),
            ] {
                if want(n) {
                    found = true;
                    describe_ultraserver(&f()?, full);
                }
            }
        }
        "ultracluster" => {
            if let Some(path) = a.name.as_deref().filter(|n| n.ends_with(".ron")) {
                describe_cluster(path, true)?;
                return Ok(());
            }
            for (n, _) in trnsim_system::cluster::BUILTIN_CLUSTERS.iter().filter(|(n, _)| want(n)) {
                found = true;
                describe_cluster(n, full)?;
            }
        }
        "scaleout" => {
            for (n, text) in trnsim_system::cluster::BUILTIN_SWITCHES.iter().filter(|(n, _)| want(n)) {
                found = true;
                let file = format!("{n}.ron (built in)");
                let spec = trnsim_system::located::from_ron(&file, text).map_err(|e| e.to_string())?;
                let sw = trnsim_system::cluster::check_switch(&file, text, spec).map_err(|e| e.to_string())?;
                let s = &sw.spec;
                let est: Vec<&str> = s.estimated.iter().map(String::as_str).collect();
                let what = format!(
                    "{} Tb/s, {} ports of {} Gb/s, {} port to port, {} MiB buffer (documented only)",
                    s.capacity_Tbps, s.radix, s.port_Gbps, s.latency, s.buffer_MiB
                );
                header(&s.name, &what, &s.source, if full { &est } else { &[] });
            }
        }
        other => {
            let kinds: Vec<&str> = KINDS.iter().map(|k| k.0).collect();
            return Err(format!("describe: unknown kind `{other}` (known: {})", kinds.join(", ")));
        }
    }
    if !found {
        return Err(format!(
            "describe {what}: no preset named `{}` (run `trnsim describe {what}` for the list)",
            a.name.unwrap_or_default()
        ));
    }
    Ok(())
}

/// One NeuronCore: its peaks per format, then every field the core's models run on.
fn describe_core(c: &trnsim_core::spec::CoreSpec, full: bool) {
    let est: Vec<&str> = c.estimated.iter().map(String::as_str).collect();
    header(&c.name, &c.description, &c.source, if full { &est } else { &[] });
    if !full {
        return;
    }
    let t = &c.tensor;
    let peaks: Vec<String> =
        t.formats.entries().filter_map(|(f, r)| r.map(|r| format!("{f} {:.1}", c.peak_flops(r) / 1e12))).collect();
    println!("  tensor {} x {} at {}: TFLOPS per core {}", t.rows, t.columns, c.clocks.tensor, peaks.join(", "));
    println!("spec: {}", ron(c));
    println!("(every field can be set: trnsim config paths trn3-chip | grep chip.core)");
}

/// One HBM stack (`arg`: how `trnsim hbm --preset` names it): its description, source and
/// estimates, and with `full` every field.
fn describe_stack(p: &trnsim_mem::hbm::presets::StackSpec, arg: &str, full: bool) {
    let est: Vec<&str> = p.estimated.iter().map(String::as_str).collect();
    header(&p.name, &p.description, &p.source, &est);
    if full {
        println!("organization: {}", ron(&p.org));
        println!("timing (CK cycles): {}", ron(&p.timing));
        println!("controller defaults: {}", ron(&trnsim_mem::hbm::ControllerConfig::default()));
        println!("(the constraint table: trnsim hbm --preset {arg} --describe)");
    }
}

/// One chip preset: its parts, the model's peaks beside the documented figures, estimates.
fn describe_chip(c: &trnsim_system::chip::Chip, full: bool) {
    let s = &c.spec;
    let est: Vec<&str> = s.estimated.iter().map(String::as_str).collect();
    let what =
        format!("{} x {} on {} dies, {} x {}", s.cores, s.core.name(), s.dies, s.hbm.stacks, s.hbm.preset.name());
    header(&s.name, &what, &s.source, if full { &est } else { &[] });
    if !full {
        return;
    }
    let nl = &s.neuronlink;
    let d = &s.documented;
    println!(
        "  model / documented: BF16 {:.1} / {} TFLOPS, HBM {:.1} / {} GB/s, DMA {:.1} / {} GB/s ({} engines)",
        c.peak_bf16_tflops(),
        d.bf16_tflops,
        c.peak_hbm_gbps(),
        d.hbm_GBps,
        c.peak_dma_gbps(),
        d.dma_GBps,
        d.dma_engines
    );
    println!(
        "  CC cores {}; NeuronLink {} {} x {} x{} = {:.1} GB/s raw both ways (documented {}); host {} x{}; EFA {} Gb/s",
        s.cc_cores,
        nl.version,
        nl.ports,
        nl.encoding,
        nl.lanes_per_port,
        c.neuronlink_raw_gbps(),
        nl.documented_GBps,
        s.host.encoding,
        s.host.lanes,
        s.efa.Gbps
    );
    println!("spec: {}", ron(s));
}

/// One UltraServer: chips, servers, per-chip links against the chip's ports, documented
/// figures, estimates.
fn describe_ultraserver(u: &trnsim_system::chip::UltraServer, full: bool) {
    let s = &u.spec;
    let what = format!("{} x {} on fabric {}", s.chips, s.chip, s.fabric);
    let est: Vec<&str> = s.estimated.iter().map(String::as_str).collect();
    header(&s.name, &what, &s.source, if full { &est } else { &[] });
    if !full {
        return;
    }
    let nl = &u.chip.spec.neuronlink;
    let d = &s.documented;
    println!(
        "  chips {} = {} servers x {}; fabric {} nodes ({} switches), {} link directions",
        s.chips,
        d.servers,
        u.chips_per_server(),
        u.topology.nodes.len(),
        u.topology.nodes.len() - u.topology.chips,
        u.topology.edges.len()
    );
    println!("  per chip: {} of {} NeuronLink ports wired ({} x{}): {:.1} GB/s raw both ways ({:.0} % of the documented {} GB/s); {:.1} GB/s payload injection one way",
        u.links_per_chip(), nl.ports, nl.encoding, nl.lanes_per_port, u.wired_raw_gbps_per_chip(),
        100.0 * u.wired_raw_gbps_per_chip() / d.scale_up_GBps_per_chip, d.scale_up_GBps_per_chip, u.injection_gbps_per_chip());
    println!(
        "  EFA {:.1} Tb/s = {} x {} Gb/s (documented {} Tb/s); HBM {} GiB, BF16 {:.1} PFLOPS (documented {:.1})",
        u.efa_tbps(),
        s.chips,
        u.chip.spec.efa.Gbps,
        d.efa_Tbps,
        u64::from(s.chips) * u64::from(u.chip.spec.documented.hbm_GiB),
        f64::from(s.chips) * u.chip.peak_bf16_tflops() / 1e3,
        f64::from(s.chips) * u.chip.spec.documented.bf16_tflops / 1e3
    );
    println!("  chip: {} (trnsim describe chip {})", u.chip.spec.name, u.chip.spec.name);
}

/// One UltraCluster (a preset name or a FILE.ron): UltraServers, the scale-out network's shape,
/// the NIC, estimates.
fn describe_cluster(name: &str, full: bool) -> Result<(), String> {
    let doc = trnsim_system::doc::SystemDoc::open(name)?;
    let level = trnsim_system::cluster::Level::Flow;
    let trnsim_system::doc::Resolved::UltraCluster(c) = doc.resolve_for(level)? else {
        return Err(format!("{name} is a {}, not an UltraCluster", doc.kind().name()));
    };
    let s = &c.spec;
    let t = &c.topology;
    let what =
        format!("{} x {} = {} chips, EFA through {}", s.ultraservers, s.ultraserver, t.chips, c.switch.spec.name);
    let est: Vec<&str> = s.estimated.iter().map(String::as_str).collect();
    header(&s.name, &what, &s.source, if full { &est } else { &[] });
    if !full {
        return Ok(());
    }
    let so = &c.scale_out;
    let shape = so.shape(c.ultraserver.topology.chips).map_err(|(f, m)| format!("{f}: {m}"))?;
    let efa = &c.chip().spec.efa;
    println!(
        "  NIC per chip: {} x {} Gb/s, latency {} (both ends); link payload {:.2} GB/s per port",
        efa.ports,
        efa.port_gbps(),
        efa.latency,
        so.port_bytes_per_s / 1e9
    );
    println!(
        "  scale-out: {} leaves ({} chips each, {:?} placement), {} spines, {} links per leaf-spine pair; switch {} ps",
        shape.leaves, so.chips_per_leaf, so.placement, so.spines, shape.links_per_spine, so.switch_latency_ps
    );
    println!(
        "  topology: {} nodes ({} switches), {} link directions; EFA {:.1} Tb/s in all",
        t.nodes.len(),
        t.nodes.len() - t.chips,
        t.edges.len(),
        t.chips as f64 * efa.Gbps / 1e3
    );
    println!("  ultraserver: {} (trnsim describe ultraserver {})", s.ultraserver, s.ultraserver);
    Ok(())
}
