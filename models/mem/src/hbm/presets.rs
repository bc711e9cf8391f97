//! HBM stacks as data: a stack's organization and speed grade ([`StackSpec`]), read from RON
//! (or JSON) files such as `models/configs/mem/hbm/hbm3e-9600.ron`, with named presets built in.
//!
//! Every figure names its source in the file's `source` line (keys of docs/sources.md: M1 =
//! Ramulator 2 `python/ramulator/dram/{hbm2,hbm3,hbm4}.py` @c5b1c3a; M2 = DRAMsim3
//! `configs/HBM2_8Gb_x128.ini` @2981759; JESD238 Table 4 for HBM3 organizations) or is listed
//! in `estimated` with the reasoning. [`StackSpec::validate`] checks every field and names it
//! (`timing.cl`); loaders with located errors (`file:line:col: field: message`) live in
//! `trnsim-system` (`chip::stack_file`).
//!
//! Leaves out: the controller's parameters (queues, page policy, scheduler, refresh policy,
//! address map: [`crate::hbm::ControllerConfig`], the same defaults for every stack), and the
//! energy figures (`models/configs/mem/hbm-energy.ron`, keyed by the stack's `name`).

use crate::hbm::org::Organization;
use crate::hbm::timing::TimingParams;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// One HBM stack: organization plus speed grade, each figure with its source. Unknown keys are
/// rejected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackSpec {
    /// Name used on the command line, in chip files and in reports ("hbm3-6400"); the energy
    /// table is keyed by it.
    pub name: String,
    /// One line: what it is.
    pub description: String,
    /// Where the numbers come from (source keys of docs/sources.md).
    pub source: String,
    /// Parameters that are estimates, with the reasoning.
    pub estimated: Vec<String>,
    /// The stack's organization (counts and widths).
    pub org: Organization,
    /// The speed grade's timing (CK cycles of `timing.ck_mhz`).
    pub timing: TimingParams,
}

/// The name the stack model's code has always used for a stack description.
pub type Preset = StackSpec;

/// A field that failed validation: its path in the file (`timing.cl`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Dotted path of the field.
    pub field: String,
    /// What is wrong, with the allowed range.
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The largest CK clock a stack file may give (10 GHz, in MHz).
pub const MAX_CK_MHZ: u64 = 10_000;
/// The largest value of each organization field: (field, most). Each pseudo-channel is built
/// as its own controller, so channels are capped where a stack's build stays small.
pub const ORG_MAX: [(&str, u32); 9] = [
    ("channels", 256),
    ("pseudo_channels", 4),
    ("sids", 16),
    ("bank_groups", 64),
    ("banks_per_group", 64),
    ("rows", 1 << 24),
    ("columns", 1 << 16),
    ("burst_length", 64),
    ("dq_bits", 1024),
];
/// The largest timing value in CK cycles.
pub const MAX_CYCLES: u32 = 1 << 24;
/// The largest stack a file may describe (1 TiB).
pub const MAX_STACK_BYTES: u64 = 1 << 40;

impl StackSpec {
    /// Peak data bandwidth of one pseudo-channel in bytes per second.
    pub fn pc_peak_bytes_per_s(&self) -> f64 {
        let (o, t) = (&self.org, &self.timing);
        o.access_bytes() as f64 / t.bl as f64 * t.ck_mhz as f64 * 1e6
    }
    /// Peak data bandwidth of the whole stack in bytes per second.
    pub fn stack_peak_bytes_per_s(&self) -> f64 {
        self.pc_peak_bytes_per_s() * self.org.pcs() as f64
    }

    /// Checks every field; the error names the first bad one by its path (`org.rows`,
    /// `timing.ck_mhz`). Ranges: each organization field within [`ORG_MAX`], at most 64 banks
    /// per pseudo-channel, the stack at most 1 TiB; `timing.ck_mhz` 1..=10000; every timing
    /// value at most 2^24 cycles, and the relations of [`TimingParams::validate`].
    pub fn validate(&self) -> Result<(), SpecError> {
        let split = |prefix: &str, m: String| match m.split_once(": ") {
            Some((field, rest)) if !field.contains(' ') => {
                SpecError { field: format!("{prefix}.{field}"), message: rest.to_string() }
            }
            _ => SpecError { field: prefix.to_string(), message: m },
        };
        let o = &self.org;
        let values = [
            o.channels,
            o.pseudo_channels,
            o.sids,
            o.bank_groups,
            o.banks_per_group,
            o.rows,
            o.columns,
            o.burst_length,
            o.dq_bits,
        ];
        for ((name, most), v) in ORG_MAX.iter().zip(values) {
            if !(1..=*most).contains(&v) {
                let message = format!("{v} is out of range (allowed: 1..={most})");
                return Err(SpecError { field: format!("org.{name}"), message });
            }
        }
        o.validate().map_err(|m| split("org", m))?;
        // Every field is capped above, so the product fits in u128.
        let bits =
            [o.banks_per_pc(), o.rows, o.columns, o.dq_bits, o.pcs()].iter().map(|&v| u128::from(v)).product::<u128>();
        if bits / 8 > u128::from(MAX_STACK_BYTES) {
            let message = format!("the stack's capacity, {} GiB, exceeds 1024 GiB", (bits / 8) >> 30);
            return Err(SpecError { field: "org.rows".into(), message });
        }
        let t = &self.timing;
        if !(1..=MAX_CK_MHZ).contains(&t.ck_mhz) {
            let message = format!("{} is out of range (allowed: 1..={MAX_CK_MHZ} MHz)", t.ck_mhz);
            return Err(SpecError { field: "timing.ck_mhz".into(), message });
        }
        for (name, v) in t.cycle_fields() {
            if v > MAX_CYCLES {
                let message = format!("{v} is out of range (allowed: 0..={MAX_CYCLES} cycles)");
                return Err(SpecError { field: format!("timing.{name}"), message });
            }
        }
        t.validate().map_err(|m| split("timing", m))?;
        // What the stack model needs beyond the ranges: its default address map decodes this
        // organization (a fuzzed `dq_bits: 7` passed every range and failed here).
        crate::hbm::StackConfig::from_preset(self).validate().map(|_| ()).map_err(|m| SpecError {
            field: "org".into(),
            message: format!("the stack model cannot address this organization: {m}"),
        })
    }

    /// Parses RON text (no location: the loaders in `trnsim-system` locate errors).
    pub fn from_ron(text: &str) -> Result<StackSpec, String> {
        ron::from_str(text).map_err(|e| e.to_string())
    }
}

/// The built-in stack presets: (name, RON text of models/configs/mem/hbm/NAME.ron), in the
/// order `trnsim describe hbm` lists them.
pub const BUILTIN: &[(&str, &str)] = &[
    ("hbm2-2000", include_str!("../../../configs/mem/hbm/hbm2-2000.ron")),
    ("hbm3-5700", include_str!("../../../configs/mem/hbm/hbm3-5700.ron")),
    ("hbm3-6400", include_str!("../../../configs/mem/hbm/hbm3-6400.ron")),
    ("hbm3e-9600", include_str!("../../../configs/mem/hbm/hbm3e-9600.ron")),
    ("hbm4-8000", include_str!("../../../configs/mem/hbm/hbm4-8000.ron")),
    ("hbm4-9600", include_str!("../../../configs/mem/hbm/hbm4-9600.ron")),
];

/// Every built-in preset, parsed, in [`BUILTIN`]'s order.
pub static ALL: LazyLock<Vec<StackSpec>> = LazyLock::new(|| {
    BUILTIN
        .iter()
        .map(|(n, text)| {
            // The built-in files are part of the program: `built_in_presets_are_valid` holds them.
            let spec = StackSpec::from_ron(text).unwrap_or_else(|e| panic!("built-in HBM stack {n}: {e}"));
            assert_eq!(spec.name, *n, "built-in HBM stack file {n} names itself {}", spec.name);
            spec
        })
        .collect()
});

/// Looks a built-in preset up by name.
pub fn find(name: &str) -> Option<&'static StackSpec> {
    ALL.iter().find(|p| p.name == name)
}

/// The names of all built-in presets, comma-separated (for error messages).
pub fn names() -> String {
    BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

fn builtin(name: &str) -> StackSpec {
    find(name).unwrap_or_else(|| panic!("{name} is built in")).clone()
}

/// HBM2 at 2.0 Gb/s in pseudo-channel mode: 8 channels x 2 PCs x 64 bit, 4 GiB (4-high 8 Gb).
pub static HBM2_2000: LazyLock<StackSpec> = LazyLock::new(|| builtin("hbm2-2000"));
/// HBM3 at 5.7 Gb/s as on Trn2: 12-high 16 Gb dies (3 SIDs), 24 GiB, 729.6 GB/s per stack.
pub static HBM3_5700: LazyLock<StackSpec> = LazyLock::new(|| builtin("hbm3-5700"));
/// HBM3 at 6.4 Gb/s: 16 channels x 2 PCs x 32 bit, 8-high 16 Gb dies (16 GiB), 819.2 GB/s.
pub static HBM3_6400: LazyLock<StackSpec> = LazyLock::new(|| builtin("hbm3-6400"));
/// HBM3E at 9.6 Gb/s as on Trn3: 12-high (3 SIDs), 36 GiB, 1.2288 TB/s per stack (E).
pub static HBM3E_9600: LazyLock<StackSpec> = LazyLock::new(|| builtin("hbm3e-9600"));
/// HBM4 at 8.0 Gb/s: 32 channels x 2 PCs x 32 bit (a 2,048-bit stack), 8-high 32 Gb dies
/// (32 GiB), 2.048 TB/s per stack.
pub static HBM4_8000: LazyLock<StackSpec> = LazyLock::new(|| builtin("hbm4-8000"));
/// HBM4 at 9.6 Gb/s (a what-if grade for Trn4): HBM4-8000's organization and nanosecond
/// timings at a 2.4 GHz CK, 2.4576 TB/s per stack (E).
pub static HBM4_9600: LazyLock<StackSpec> = LazyLock::new(|| builtin("hbm4-9600"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_presets_are_valid() {
        assert_eq!(ALL.len(), BUILTIN.len());
        for p in ALL.iter() {
            p.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
    }

    #[test]
    fn bad_fields_are_named() {
        let mut p = HBM3_6400.clone();
        p.org.sids = 0;
        assert_eq!(p.validate().unwrap_err().field, "org.sids");
        let mut p = HBM3_6400.clone();
        p.timing.ck_mhz = 0;
        assert_eq!(p.validate().unwrap_err().field, "timing.ck_mhz");
        let mut p = HBM3_6400.clone();
        p.org.rows = 1 << 24;
        p.org.channels = 256;
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "org.rows", "{e}");
        assert!(e.message.contains("capacity"), "{e}");
        let mut p = HBM3_6400.clone();
        p.timing.refi = p.timing.rfc;
        assert_eq!(p.validate().unwrap_err().field, "timing.refi");
    }

    #[test]
    fn an_organization_the_stack_cannot_address_is_refused_at_org() {
        // Every field in range, but no address map the stack model has decodes a 7-bit-wide
        // column (found by the fuzz pass on hbm4-8000.ron).
        let mut p = HBM4_8000.clone();
        p.org.dq_bits = 7;
        let e = p.validate().unwrap_err();
        assert_eq!(e.field, "org", "{e}");
        assert!(e.message.contains("cannot address"), "{e}");
    }

    #[test]
    fn capacities_and_peaks_match_the_spec() {
        let gib = 1u64 << 30;
        assert_eq!(HBM2_2000.org.stack_bytes(), 4 * gib);
        assert_eq!(HBM3_6400.org.stack_bytes(), 16 * gib);
        // Trn2: 4 stacks of 24 GiB = 96 GiB at 5.7 Gb/s = 2918.4 GB/s (documented 2.9 TB/s).
        assert_eq!(HBM3_5700.org.stack_bytes(), 24 * gib);
        assert_eq!(HBM3_5700.stack_peak_bytes_per_s(), 729.6e9);
        assert_eq!(HBM3E_9600.org.stack_bytes(), 36 * gib);
        assert_eq!(HBM2_2000.stack_peak_bytes_per_s(), 256e9);
        assert_eq!(HBM3_6400.stack_peak_bytes_per_s(), 819.2e9);
        // Trn3: 4 stacks = 4.915 TB/s (spec §1: 4.9 TB/s).
        assert!((4.0 * HBM3E_9600.stack_peak_bytes_per_s() - 4.9152e12).abs() < 1e6);
        // HBM4: 2,048 data bits per stack; Trn4's 8 stacks at 9.6 Gb/s = 4 x Trn3 (spec §1, R3).
        assert_eq!(HBM4_8000.org.stack_bytes(), 32 * gib);
        assert_eq!(HBM4_8000.stack_peak_bytes_per_s(), 2048e9);
        assert!(
            (8.0 * HBM4_9600.stack_peak_bytes_per_s() / (4.0 * HBM3E_9600.stack_peak_bytes_per_s()) - 4.0).abs() < 1e-9
        );
        for p in ALL.iter() {
            p.org.validate().unwrap();
        }
    }

    #[test]
    fn refresh_cycle_time_follows_channel_density() {
        // JESD238: 350 ns for channels of <= 8 Gb, 550 ns above 16 Gb.
        assert_eq!(HBM3_6400.org.channel_bits(), 8 << 30);
        assert_eq!(HBM3_6400.timing.rfc, 350 * 1600 / 1000);
        assert!(HBM3E_9600.org.channel_bits() > 16 << 30);
        assert_eq!(HBM3E_9600.timing.rfc, 550 * 2400 / 1000);
    }
}
