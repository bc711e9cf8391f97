//! A whole chip: its description in RON ([`spec`], models/configs/system/*.ron) and its
//! assembly into one simulation ([`build`]): every NeuronCore and every HBM stack, core `i`'s
//! DMA engines on stack `i / cores_per_stack`; and UltraServers ([`ultraserver`]): a chip
//! preset on a fabric topology preset.

pub mod build;
pub mod core_file;
pub mod spec;
pub mod stack_file;
pub mod ultraserver;

#[cfg(test)]
mod tests;

pub use build::{build, build_on_fabric, build_with, run_to_end, run_to_end_by, whole_chip_trace, BuildOpts, ChipIds};
pub use spec::{load, parse, Chip, ChipError, ChipSpec};
pub use ultraserver::{trn2_ultraserver, trn3_gen1, trn3_gen2, UltraServer, UltraServerSpec};

/// models/configs/system/trn3-chip.ron, built in (the binary runs from any directory).
pub const TRN3_CHIP_RON: &str = include_str!("../../../configs/system/trn3-chip.ron");

/// models/configs/system/trn2-chip.ron, built in.
pub const TRN2_CHIP_RON: &str = include_str!("../../../configs/system/trn2-chip.ron");

/// The built-in Trn3 chip.
pub fn trn3() -> Result<Chip, String> {
    parse("models/configs/system/trn3-chip.ron (built in)", TRN3_CHIP_RON).map_err(|e| e.to_string())
}

/// The built-in Trn2 chip.
pub fn trn2() -> Result<Chip, String> {
    parse("models/configs/system/trn2-chip.ron (built in)", TRN2_CHIP_RON).map_err(|e| e.to_string())
}

/// The name of a RON file's top-level struct (`ChipSpec`, `UltraServerSpec`, `TopologySpec`,
/// `SystemConfig`, ...): the first identifier outside comments (`//`, nested `/* */`), a UTF-8
/// byte-order mark and `#![...]` attributes, if an opening parenthesis follows it. None for
/// anonymous structs and non-RON text.
pub fn top_level_name(text: &str) -> Option<String> {
    let mut t = text.strip_prefix('\u{feff}').unwrap_or(text);
    loop {
        t = t.trim_start();
        if let Some(r) = t.strip_prefix("//") {
            t = r.split_once('\n').map_or("", |x| x.1);
        } else if t.starts_with("/*") {
            let mut depth = 0usize;
            let mut i = 0;
            let b = t.as_bytes();
            while i + 1 < b.len() {
                if &b[i..i + 2] == b"/*" {
                    depth += 1;
                    i += 2;
                } else if &b[i..i + 2] == b"*/" {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            if depth != 0 {
                return None;
            }
            t = &t[i..];
        } else if let Some(r) = t.strip_prefix("#![") {
            t = r.split_once(']').map(|x| x.1)?;
        } else {
            break;
        }
    }
    let end = t.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(t.len());
    (end > 0 && t[end..].trim_start().starts_with('(')).then(|| t[..end].to_string())
}

/// `chip` with the energy table of system preset `preset` (as [`crate::doc::SystemDoc`]
/// resolves it): the built-in systems' chips price their traced runs' power with it.
pub fn with_energy(mut chip: Chip, preset: &str) -> Result<Chip, String> {
    chip.energy = crate::doc::SystemDoc::open(preset)?.energy()?.map(std::sync::Arc::new);
    Ok(chip)
}
