//! A whole chip: its description in RON ([`spec`], models/configs/system/*.ron) and its
//! assembly into one simulation ([`build`]): every NeuronCore and every HBM stack, core `i`'s
//! DMA engines on stack `i / cores_per_stack`.

pub mod build;
pub mod spec;

#[cfg(test)]
mod tests;

pub use build::{build, ChipIds};
pub use spec::{load, parse, Chip, ChipError, ChipSpec};

/// models/configs/system/trn3-chip.ron, built in (the binary runs from any directory).
pub const TRN3_CHIP_RON: &str = include_str!("../../../models/configs/system/trn3-chip.ron");

/// models/configs/system/trn2-chip.ron, built in.
pub const TRN2_CHIP_RON: &str = include_str!("../../../models/configs/system/trn2-chip.ron");

/// The built-in Trn3 chip.
pub fn trn3() -> Result<Chip, String> {
    parse("models/configs/system/trn3-chip.ron (built in)", TRN3_CHIP_RON).map_err(|e| e.to_string())
}

/// The built-in Trn2 chip.
pub fn trn2() -> Result<Chip, String> {
    parse("models/configs/system/trn2-chip.ron (built in)", TRN2_CHIP_RON).map_err(|e| e.to_string())
}
