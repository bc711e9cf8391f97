//! `trnsim describe`: every model's presets with their parameters (printed from the same
//! declarations the models run on), sources and estimates.

use clap::Args;

/// Arguments of `trnsim describe`.
#[derive(Args, Debug)]
pub struct DescribeArgs {
    /// What to describe: hbm, sram, dma, link, switch, topology (none: list them with presets).
    what: Option<String>,
    /// One preset by name (none: all presets of that kind, briefly).
    name: Option<String>,
}

const KINDS: &[(&str, &str)] = &[
    ("hbm", "HBM stacks: organization, timing table, controller (models/mem/src/hbm/presets.rs)"),
    ("sram", "on-chip SRAM: SBUF per NeuronCore generation, PSUM (models/mem/src/sram/geometry.rs)"),
    ("dma", "NeuronCore DMA blocks (models/core/src/dma/params.rs)"),
    ("link", "link encodings: PCIe Gen5/Gen6, UALink (models/fabric/src/link/encoding.rs)"),
    ("switch", "switches (models/fabric/src/switch/presets.rs)"),
    ("topology", "fabric topologies (models/configs/fabric/*.ron)"),
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
            println!("{k:<10} {d}");
        }
        return Ok(());
    };
    let want = |n: &str| a.name.as_deref().is_none_or(|w| w == n);
    let full = a.name.is_some();
    let mut found = false;
    match what {
        "hbm" => {
            for p in trnsim_mem::hbm::presets::ALL.iter().filter(|p| want(p.name)) {
                found = true;
                header(p.name, p.description, p.source, p.estimated);
                if full {
                    println!("organization: {}", ron(&(p.org)()));
                    println!("timing (CK cycles): {}", ron(&(p.timing)()));
                    println!("controller defaults: {}", ron(&trnsim_mem::hbm::ControllerConfig::default()));
                    println!("(the constraint table: trnsim hbm --preset {} --describe)", p.name);
                }
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
            for p in trnsim_fabric::switch::presets::ALL.iter().filter(|p| want(p.name)) {
                found = true;
                header(p.name, p.description, p.source, p.estimated);
                if full {
                    println!("config: {}", ron(&(p.config)()));
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
                    println!("{}", std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?);
                } else {
                    println!("{n:<28} {}", path.display());
                }
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
