//! Named switch configurations as data: the files models/configs/fabric/switch/*.ron, compiled
//! in, each citing its source.
//!
//! Source keys are those of docs/sources.md §0: R1 = SemiAnalysis Trainium3 deep
//! dive (switch roadmap: a 160-lane 20-port PCIe switch, then 320-lane PCIe, then UALink);
//! R5 = UALink Consortium 200G 1.0 webinar Q&A (switch port-to-port latency); R7 = PCIe 6.2
//! flit mode (64 GT/s, 256 B flits, x8 = 64 GB/s raw per direction); R8 = Broadcom PEX88000
//! (105 ns cut-through, Gen4); R9 = Microchip Switchtec Gen6 (up to 160 lanes). Values marked
//! (E) are estimates, listed in each file's `estimated`.
//!
//! A file must write every field of its `config` ([`SwitchPreset::from_ron`]): nothing is
//! filled in from defaults.

use super::config::SwitchConfig;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// A named switch configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchPreset {
    /// Name used in configs and on the command line.
    pub name: String,
    /// One line: what it is.
    pub description: String,
    /// Where the numbers come from.
    pub source: String,
    /// Parameters that are estimates, with the reasoning.
    pub estimated: Vec<String>,
    /// The configuration.
    pub config: SwitchConfig,
}

/// The name the switch code has always used for a named configuration.
pub type Preset = SwitchPreset;

impl SwitchPreset {
    /// Parses RON text and checks it: every field of `config` written (serde names the first
    /// missing one), the configuration valid. Errors are `(field, message)`; the loaders in
    /// `trnsim-system` locate them.
    pub fn from_ron(text: &str) -> Result<SwitchPreset, (String, String)> {
        let p: SwitchPreset = ron::from_str(text).map_err(|e| (String::new(), e.to_string()))?;
        p.config.validate().map_err(|e| match e {
            super::config::ConfigError::BadField { field, value, allowed } => {
                (format!("config.{field}"), format!("{value} is out of range (allowed: {allowed})"))
            }
            other => ("config".to_string(), other.to_string()),
        })?;
        Ok(p)
    }
}

/// The built-in presets: (name, RON text of models/configs/fabric/switch/NAME.ron).
pub const BUILTIN: &[(&str, &str)] = &[
    ("pcie6-160l-20p", include_str!("../../../configs/fabric/switch/pcie6-160l-20p.ron")),
    ("pcie6-320l-40p", include_str!("../../../configs/fabric/switch/pcie6-320l-40p.ron")),
    ("ualink-400g-64p", include_str!("../../../configs/fabric/switch/ualink-400g-64p.ron")),
];

/// Every preset, parsed, in [`BUILTIN`]'s order.
pub static ALL: LazyLock<Vec<SwitchPreset>> = LazyLock::new(|| {
    BUILTIN
        .iter()
        .map(|(n, text)| {
            // The built-in files are part of the program: `presets_are_valid_and_match_their_sources` holds them.
            let p = SwitchPreset::from_ron(text).unwrap_or_else(|e| panic!("built-in switch {n}: {}: {}", e.0, e.1));
            assert_eq!(p.name, *n, "built-in switch file {n} names itself {}", p.name);
            p
        })
        .collect()
});

/// Looks a preset up by name.
pub fn find(name: &str) -> Option<&'static SwitchPreset> {
    ALL.iter().find(|p| p.name == name)
}

/// The names of all presets, comma-separated (for error messages).
pub fn names() -> String {
    BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

fn builtin(name: &str) -> SwitchPreset {
    find(name).unwrap_or_else(|| panic!("{name} is built in")).clone()
}

/// The first Trn3 NeuronSwitch generation: a 160-lane PCIe Gen6 switch of 20 x8 ports.
pub static PCIE6_160L_20P: LazyLock<SwitchPreset> = LazyLock::new(|| builtin("pcie6-160l-20p"));
/// The second generation: a 320-lane PCIe Gen6 switch of 40 x8 ports.
pub static PCIE6_320L_40P: LazyLock<SwitchPreset> = LazyLock::new(|| builtin("pcie6-320l-40p"));
/// A UALink 1.0 switch of 64 400 Gb/s ports (25.6 Tb/s).
pub static UALINK_400G_64P: LazyLock<SwitchPreset> = LazyLock::new(|| builtin("ualink-400g-64p"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_match_their_sources() {
        for p in ALL.iter() {
            p.config.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(find(&p.name).map(|q| &q.name), Some(&p.name));
        }
        let a = PCIE6_160L_20P.config.clone();
        assert_eq!(u32::from(a.ports) * 8, 160);
        assert_eq!(a.cell_clock().as_hz(), 250_000_000);
        let b = PCIE6_320L_40P.config.clone();
        assert_eq!(u32::from(b.ports) * 8, 320);
        let u = UALINK_400G_64P.config.clone();
        assert_eq!(u.cell_clock().as_hz(), 781_250_000);
        assert_eq!(u.latency_cycles(), 118);
        assert_eq!(u64::from(u.ports) * u.port_bytes_per_s * 8, 25_600_000_000_000);
    }

    #[test]
    fn default_is_the_first_preset() {
        assert_eq!(SwitchConfig::default(), PCIE6_160L_20P.config);
    }

    #[test]
    fn a_file_writes_every_field() {
        let text = BUILTIN[0].1.replace("        speedup: 1, // crossbar cycles per port cycle\n", "");
        let e = SwitchPreset::from_ron(&text).unwrap_err();
        assert!(e.1.contains("missing field `speedup`"), "{e:?}");
        let text = BUILTIN[0].1.replace("ports: 20,", "ports: 1,");
        assert_eq!(SwitchPreset::from_ron(&text).unwrap_err().0, "config.ports");
    }
}
