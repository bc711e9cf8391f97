//! Energy as data, in the manner of Accelergy's energy reference tables: the energy of one
//! action of each component (pJ) and each component's static power (W), read from
//! `models/configs/energy/*.ron`. A chip names its table (`energy: "trn3-energy"`); a system's
//! tree holds the table under `energy`, so `--set energy.tensor_pj_per_mac.bf16=0.3` reaches
//! any figure, and the HBM figures (the chip's stack preset's row of
//! `models/configs/mem/hbm-energy.ron`, the table `trnsim hbm` reports with) sit under
//! `energy.hbm_energy`.
//!
//! Every figure names its source in `sources` (a key of docs/sources.md, or `estimated:` with
//! the process node and the scaling). Checks: every figure finite and >= 0 (a figure RON
//! cannot read as a number, `NaN`, is refused where it is read), widths and flit sizes
//! 1..=65536 bytes, pJ figures at most 1e6 and watts at most 1e5, every figure with a source;
//! each error located at the figure (`file:line:col: energy.FIELD: message`).
//!
//! Left out: energy that depends on data values (toggle rates), voltage and frequency scaling
//! (one operating point per table), temperature-dependent leakage, and power delivery losses
//! on the board (the cost model's PUE covers the facility).

use crate::located::{line_col, ConfigError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use trnsim_mem::hbm::energy::EnergySpec as HbmEnergySpec;

/// The built-in energy tables: (name, text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("trn2-energy", include_str!("../../configs/energy/trn2-energy.ron")),
    ("trn3-energy", include_str!("../../configs/energy/trn3-energy.ron")),
];

/// An SRAM's energy per access of a given width.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sram {
    /// Energy of one read or write of `access_bytes`, pJ.
    pub pj_per_access: f64,
    /// Bytes one access moves (the width the figure is for; an access of `b` bytes costs
    /// `b / access_bytes` accesses).
    pub access_bytes: u32,
}

/// Energy of one multiply-accumulate on the tensor engine, per number format, pJ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MacFormats {
    /// BF16 inputs, FP32 accumulation.
    pub bf16: f64,
    /// FP16 inputs, FP32 accumulation.
    pub fp16: f64,
    /// FP8 (E4M3/E5M2) inputs.
    pub fp8: f64,
    /// MXFP8 (OCP MX: FP8 elements, an E8M0 scale per 32).
    pub mxfp8: f64,
    /// MXFP4 (OCP MX: FP4 elements, an E8M0 scale per 32).
    pub mxfp4: f64,
    /// FP32 inputs.
    pub fp32: f64,
}

impl MacFormats {
    /// The figure of workload dtype `d` (None: not a tensor format).
    pub fn of(&self, d: &str) -> Option<f64> {
        Some(match d {
            "bf16" => self.bf16,
            "fp16" => self.fp16,
            "fp8" | "fp8e4m3" | "fp8e5m2" => self.fp8,
            "mxfp8" => self.mxfp8,
            "mxfp4" => self.mxfp4,
            "fp32" => self.fp32,
            _ => return None,
        })
    }
}

/// A SerDes port (NeuronLink): energy per bit sent and the power of a wired port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serdes {
    /// Energy per bit sent on one link, pJ.
    pub pj_per_bit: f64,
    /// Power of one wired port while the link is up (PLLs, clock recovery, idle symbols), W.
    pub static_w_per_port: f64,
}

/// A fabric switch: energy per flit through it and the power of each wired port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchEnergy {
    /// Energy of one flit through the switch (buffer write and read, arbitration, crossbar),
    /// pJ.
    pub pj_per_flit: f64,
    /// Bytes per flit.
    pub flit_bytes: u32,
    /// Power of one wired port (its SerDes and the core share), W.
    pub static_w_per_port: f64,
}

/// A scale-out NIC (EFA).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nic {
    /// Energy per byte sent, pJ.
    pub pj_per_byte: f64,
    /// Power of one NIC, W.
    pub static_w: f64,
}

/// Static power: drawn whenever the chip is on, busy or idle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Static {
    /// One NeuronCore's leakage and clock tree, W.
    pub per_core: f64,
    /// The chip outside its cores (on-die network, collective cores, PCIe, control), W.
    pub uncore: f64,
    /// One HBM stack's PHY and controller on the chip, W (the stack's own background power
    /// comes from `hbm`).
    pub hbm_phy_per_stack: f64,
    /// The host's share per chip (CPUs, host memory, fans, board conversion), W.
    pub host_per_chip: f64,
}

/// The cost of owning the system (TCO): capital costs amortized over the hardware's life, and
/// the energy bill at the facility's PUE.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tco {
    /// One chip with its HBM, USD.
    pub chip_usd: f64,
    /// The server around each chip (board, host CPUs and memory, chassis, power supplies, its
    /// share of the rack), per chip, USD.
    pub server_usd_per_chip: f64,
    /// One EFA NIC (one per chip), USD.
    pub nic_usd: f64,
    /// One fabric switch, USD.
    pub switch_usd: f64,
    /// Optics or cables per wired port (chip and switch ends alike), USD.
    pub cable_usd_per_port: f64,
    /// Years the capital cost is spread over (straight line).
    pub amortization_years: f64,
    /// Power usage effectiveness: facility power (cooling, conversion) over IT power.
    pub pue: f64,
    /// Electricity price, USD per kWh.
    pub usd_per_kwh: f64,
}

/// One chip generation's energy table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyTable {
    /// Name used in reports ("trn3-energy").
    pub name: String,
    /// The process node the figures are for ("TSMC N3").
    pub process: String,
    /// SBUF per access.
    pub sbuf_access: Sram,
    /// PSUM per access.
    pub psum_access: Sram,
    /// Tensor engine per MAC, by format.
    pub tensor_pj_per_mac: MacFormats,
    /// Vector engine per element operation, pJ.
    pub vector_pj_per_op: f64,
    /// Scalar (activation) engine per element operation, pJ.
    pub scalar_pj_per_op: f64,
    /// GpSimd engine per element operation, pJ.
    pub gpsimd_pj_per_op: f64,
    /// DMA per byte moved (descriptor processing, staging buffers, on-die wires), pJ.
    pub dma_pj_per_byte: f64,
    /// NeuronLink ports.
    pub neuronlink_serdes: Serdes,
    /// The fabric's switches.
    pub fabric_switch: SwitchEnergy,
    /// The EFA NIC.
    pub efa_nic: Nic,
    /// Static power.
    pub static_w: Static,
    /// The cost of ownership.
    pub tco: Tco,
    /// The HBM stack's figures (filled from `models/configs/mem/hbm-energy.ron` for the
    /// chip's stack preset when the file gives none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_energy: Option<HbmEnergySpec>,
    /// Where each figure comes from, by its path (`"tensor_pj_per_mac.bf16"`): a source key
    /// of docs/sources.md with the derivation, or `estimated: ...` with node and scaling.
    pub sources: BTreeMap<String, String>,
}

impl EnergyTable {
    /// Every figure by path, with its unit's bound (pJ or W) for checking.
    pub fn figures(&self) -> Vec<(&'static str, f64)> {
        let t = &self.tensor_pj_per_mac;
        vec![
            ("sbuf_access.pj_per_access", self.sbuf_access.pj_per_access),
            ("psum_access.pj_per_access", self.psum_access.pj_per_access),
            ("tensor_pj_per_mac.bf16", t.bf16),
            ("tensor_pj_per_mac.fp16", t.fp16),
            ("tensor_pj_per_mac.fp8", t.fp8),
            ("tensor_pj_per_mac.mxfp8", t.mxfp8),
            ("tensor_pj_per_mac.mxfp4", t.mxfp4),
            ("tensor_pj_per_mac.fp32", t.fp32),
            ("vector_pj_per_op", self.vector_pj_per_op),
            ("scalar_pj_per_op", self.scalar_pj_per_op),
            ("gpsimd_pj_per_op", self.gpsimd_pj_per_op),
            ("dma_pj_per_byte", self.dma_pj_per_byte),
            ("neuronlink_serdes.pj_per_bit", self.neuronlink_serdes.pj_per_bit),
            ("neuronlink_serdes.static_w_per_port", self.neuronlink_serdes.static_w_per_port),
            ("fabric_switch.pj_per_flit", self.fabric_switch.pj_per_flit),
            ("fabric_switch.static_w_per_port", self.fabric_switch.static_w_per_port),
            ("efa_nic.pj_per_byte", self.efa_nic.pj_per_byte),
            ("efa_nic.static_w", self.efa_nic.static_w),
            ("static_w.per_core", self.static_w.per_core),
            ("static_w.uncore", self.static_w.uncore),
            ("static_w.hbm_phy_per_stack", self.static_w.hbm_phy_per_stack),
            ("static_w.host_per_chip", self.static_w.host_per_chip),
            ("tco.chip_usd", self.tco.chip_usd),
            ("tco.server_usd_per_chip", self.tco.server_usd_per_chip),
            ("tco.nic_usd", self.tco.nic_usd),
            ("tco.switch_usd", self.tco.switch_usd),
            ("tco.cable_usd_per_port", self.tco.cable_usd_per_port),
            ("tco.amortization_years", self.tco.amortization_years),
            ("tco.pue", self.tco.pue),
            ("tco.usd_per_kwh", self.tco.usd_per_kwh),
        ]
    }

    /// Checks every figure; Err((path, message)).
    pub fn validate(&self) -> Result<(), (String, String)> {
        for (path, v) in self.figures() {
            let limit = if path.contains("_w") {
                1e5
            } else if path.starts_with("tco.") {
                1e9
            } else {
                1e6
            };
            if !v.is_finite() || v < 0.0 {
                return Err((path.into(), format!("{v} is not allowed (a finite figure >= 0)")));
            }
            if v > limit {
                return Err((path.into(), format!("{v} is outside 0..={limit}")));
            }
            if self.sources.get(path).is_none_or(|s| s.trim().is_empty()) {
                return Err((
                    "sources".into(),
                    format!("no source for {path:?} (every figure names a source key or `estimated: ...`)"),
                ));
            }
        }
        for (path, v) in [
            ("sbuf_access.access_bytes", self.sbuf_access.access_bytes),
            ("psum_access.access_bytes", self.psum_access.access_bytes),
            ("fabric_switch.flit_bytes", self.fabric_switch.flit_bytes),
        ] {
            if !(1..=65536).contains(&v) {
                return Err((path.into(), format!("{v} is outside 1..=65536 bytes")));
            }
        }
        let t = &self.tco;
        if !(0.1..=50.0).contains(&t.amortization_years) {
            return Err((
                "tco.amortization_years".into(),
                format!("{} is outside 0.1..=50 years", t.amortization_years),
            ));
        }
        if !(1.0..=5.0).contains(&t.pue) {
            return Err(("tco.pue".into(), format!("{} is outside 1..=5 (facility over IT power)", t.pue)));
        }
        if let Some(h) = &self.hbm_energy {
            h.validate().map_err(|(f, m)| (format!("hbm_energy.{f}"), m))?;
        }
        Ok(())
    }
}

/// Static power of one chip by static part (cores, uncore, HBM, NeuronLink ports, EFA, host),
/// W, with `ports` wired NeuronLink ports.
pub fn chip_static_w(t: &EnergyTable, chip: &crate::chip::Chip, ports: u32) -> [f64; 6] {
    let s = &t.static_w;
    let stacks = f64::from(chip.spec.hbm.stacks);
    let background = t.hbm_energy.as_ref().map_or(0.0, |h| {
        let pcs = f64::from(chip.hbm.org.pcs());
        // mA x V = mW per pseudo-channel.
        h.vdd * h.idd2n * pcs / 1e3
    });
    [
        f64::from(chip.spec.cores) * s.per_core,
        s.uncore,
        stacks * (s.hbm_phy_per_stack + background),
        f64::from(ports) * t.neuronlink_serdes.static_w_per_port,
        t.efa_nic.static_w,
        s.host_per_chip,
    ]
}

/// The text of built-in table `name` (None: no such table).
pub fn builtin(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// `table` checked, errors located in `file` (`text`): at the figure's last field name after
/// its section's (`sbuf: (... pj_per_access: ...`), else at the section, else at the top.
pub fn check(file: &str, text: &str, table: EnergyTable) -> Result<EnergyTable, ConfigError> {
    match table.validate() {
        Ok(()) => Ok(table),
        Err((path, message)) => {
            let (line, col) = line_col(text, locate(text, &path));
            Err(ConfigError { file: file.into(), line, col, field: format!("energy.{path}"), message })
        }
    }
}

/// The byte offset of the field `path` (dotted) in RON `text`, as near as its names allow.
pub fn locate(text: &str, path: &str) -> usize {
    let mut at = 0;
    for seg in path.split('.') {
        match text[at..].find(&format!("{seg}:")) {
            Some(p) => at += p,
            None => return at,
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_tables_parse_and_are_valid() {
        for (name, text) in BUILTIN {
            let t: EnergyTable = crate::located::from_ron(name, text).unwrap();
            assert_eq!(&t.name, name);
            check(name, text, t).unwrap();
        }
    }

    #[test]
    fn a_negative_figure_is_located_at_its_field() {
        let text = builtin("trn3-energy").unwrap().replace("dma_pj_per_byte: 4.0", "dma_pj_per_byte: -1.0");
        let t: EnergyTable = crate::located::from_ron("t.ron", &text).unwrap();
        let e = check("t.ron", &text, t).unwrap_err();
        assert_eq!(e.field, "energy.dma_pj_per_byte");
        let line = text.lines().position(|l| l.contains("dma_pj_per_byte: -1.0")).unwrap() + 1;
        assert_eq!(e.line, line, "{e}");
    }

    #[test]
    fn a_figure_without_a_source_is_refused() {
        let text = builtin("trn3-energy").unwrap();
        let mut t: EnergyTable = crate::located::from_ron("t.ron", text).unwrap();
        t.sources.remove("efa_nic.static_w");
        let e = check("t.ron", text, t).unwrap_err();
        assert_eq!(e.field, "energy.sources");
        assert!(e.message.contains("efa_nic.static_w"), "{e}");
    }

    use crate::doc::SystemDoc;

    /// A chip file beside an energy file, in a fresh directory: (chip path).
    fn files(tag: &str, energy: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("trnsim-energy-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chip = crate::chip::ultraserver::BUILTIN_CHIPS.iter().find(|(n, _)| *n == "trn3-chip").unwrap().1;
        std::fs::write(dir.join("chip.ron"), chip.replace("\"trn3-energy\"", "\"mine.ron\"")).unwrap();
        std::fs::write(dir.join("mine.ron"), energy).unwrap();
        dir.join("chip.ron")
    }

    #[test]
    fn a_system_holds_its_chips_table_and_set_reaches_every_figure() {
        let mut doc = SystemDoc::open("trn3-gen2-ultraserver").unwrap();
        let t = doc.energy().unwrap().unwrap();
        assert_eq!(t.name, "trn3-energy");
        assert!(t.hbm_energy.is_some(), "the chip's HBM preset's figures are filled in");
        doc.set("energy.tensor_pj_per_mac.bf16=0.5").unwrap();
        doc.set("energy.hbm_energy.idd0=40").unwrap();
        let t = doc.energy().unwrap().unwrap();
        assert_eq!(t.tensor_pj_per_mac.bf16, 0.5);
        assert_eq!(t.hbm_energy.unwrap().idd0, 40.0);
        doc.resolve().unwrap();
    }

    #[test]
    fn a_negative_override_is_one_located_error_naming_the_flag() {
        let mut doc = SystemDoc::open("trn3-chip").unwrap();
        doc.set("energy.dma_pj_per_byte=-1").unwrap();
        let e = doc.resolve().unwrap_err();
        let text = builtin("trn3-energy").unwrap();
        let line = text.lines().position(|l| l.contains("dma_pj_per_byte:")).unwrap() + 1;
        let want = format!("trn3-energy.ron (built in):{line}:5: energy.dma_pj_per_byte: -1 is not allowed");
        assert!(e.starts_with(&want), "{e}");
        assert!(e.contains("--set energy.dma_pj_per_byte=-1"), "{e}");
    }

    #[test]
    fn nan_and_missing_figures_in_a_file_are_located() {
        let text = builtin("trn3-energy").unwrap();
        let nan = text.replace("vector_pj_per_op: 0.36", "vector_pj_per_op: NaN");
        let e = SystemDoc::load(&files("nan", &nan)).unwrap_err();
        let line = nan.lines().position(|l| l.contains("NaN")).unwrap() + 1;
        assert!(e.contains(&format!("mine.ron:{line}:")) && e.contains("vector_pj_per_op"), "{e}");
        let missing: String = text.lines().filter(|l| !l.contains("efa_nic: (")).map(|l| format!("{l}\n")).collect();
        let e = SystemDoc::load(&files("missing", &missing)).unwrap_err();
        assert!(e.contains("mine.ron:") && e.contains("efa"), "{e}");
        let e = SystemDoc::load(&files("unknown", "EnergyTable(")).unwrap_err();
        assert!(e.contains("mine.ron:1:"), "{e}");
    }
}
