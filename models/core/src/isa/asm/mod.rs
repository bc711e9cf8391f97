//! The text assembly of NeuronCore programs: [`assemble`] turns one core's program text into a
//! [`Program`] (one instruction stream per engine) with located errors, and [`print()`] writes a
//! [`Program`] back as canonical text, so that assembling the printed text gives the same program.
//! The language is specified in `docs/isa.md`; in short:
//!
//! ```text
//! # comment
//! .engine tensor
//!     sem_wait s1 >= 1
//!     ldweights sbuf[0:128] +0x0 [128:1] bf16
//!     matmul sbuf[0:128] +0x100 [512:1] bf16 -> psum[0:128] bank0 +0x0 [512:1] fp32, overwrite
//!     sem_inc s2
//! .engine sync
//!     reg mov r1, 0
//! loop:
//!     dma_start q3 hbm 0x1000 stride 1024 -> sbuf[0:128] +0x0 [512:1] bf16, sem=s1
//!     reg add r1, r1, 1
//!     branch lt r1, 4, loop
//!     halt
//! ```
//!
//! ```
//! use trnsim_core::isa::asm::{assemble, print, AsmOptions};
//! let text = ".engine vector\n    memset 0.0 -> sbuf[0:128] +0x0 [512:1] bf16\n    halt\n";
//! let program = assemble("k.asm", text, &AsmOptions::default()).expect("valid");
//! assert_eq!(assemble("k.asm", &print(&program), &AsmOptions::default()), Ok(program));
//! let err = assemble("k.asm", ".engine vector\n  memset 0.0 -> sbuf[96:64] +0 [1:1] bf16\n", &Default::default());
//! assert_eq!(
//!     err.unwrap_err()[0].to_string(),
//!     "k.asm:2:21: field `dst`: partition range 96..160 exceeds 128 partitions"
//! );
//! ```
//!
//! Leaves out: macros, constants, includes and expressions; instructions the model does not
//! execute (see [`crate::isa::Instr`] for the set).

mod check;
mod driver;
mod lex;
mod operand;
mod parse;
mod print;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_random;

use std::fmt;

use crate::isa::Program;

pub use print::print;

/// Partitions of SBUF and PSUM (spec §3).
pub const PARTITIONS: u32 = 128;
/// PSUM banks per partition (spec §3).
pub const PSUM_BANKS: u32 = 8;
/// Bytes per PSUM bank per partition (spec §3: 2 KiB, 512 FP32).
pub const PSUM_BANK_BYTES: u32 = 2048;
/// Most free-axis dimensions of an access pattern (spec §3).
pub const MAX_DIMS: usize = 4;
/// Scalar registers per sequencer (spec §2).
pub const REGS: u32 = 64;
/// Semaphores per core (spec §10 estimate).
pub const SEMS: u32 = 64;
/// DMA queues an instruction can name (spec §4: 16 per engine).
pub const QUEUES: u32 = 16;

/// What the assembler checks against, and how many errors it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsmOptions {
    /// Bytes of one SBUF partition: 192 KiB (NC-v2), 224 KiB (NC-v3), 256 KiB (NC-v4, the
    /// default). Access patterns must stay inside it.
    pub sbuf_partition_bytes: u32,
    /// SBUF partitions: the tensor engine's rows, the contraction (128, the default).
    pub sbuf_partitions: u32,
    /// PSUM partitions: the tensor engine's columns, the stationary matrix's widest (128).
    pub psum_partitions: u32,
    /// Most errors reported (at least 1; default 20). Assembly stops reading lines once it has
    /// this many.
    pub max_errors: usize,
}

impl AsmOptions {
    /// The options of a core: its SBUF partition size and its SBUF and PSUM partitions.
    pub fn for_core(core: &crate::spec::CoreSpec) -> AsmOptions {
        AsmOptions {
            sbuf_partition_bytes: core.sbuf.partition_bytes,
            sbuf_partitions: core.sbuf.partitions,
            psum_partitions: core.psum.partitions,
            ..AsmOptions::default()
        }
    }
}

impl Default for AsmOptions {
    fn default() -> Self {
        AsmOptions {
            sbuf_partition_bytes: 256 * 1024,
            sbuf_partitions: PARTITIONS,
            psum_partitions: PARTITIONS,
            max_errors: 20,
        }
    }
}

/// One assembly error: where (file, 1-based line and character column), which instruction
/// field, and what is wrong. `Display` gives `file.asm:12:5: field `dst`: message` (without the
/// field part when `field` is empty, as for an unexpected character).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    /// The source name given to [`assemble`].
    pub source: String,
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub column: u32,
    /// The field concerned: an operand name (`src`, `dst`, `a`, `b`, `scales`, `reduce`, `imm`,
    /// `value`, `sem`, `queue`, `bytes`, `target`, ...), or `mnemonic`, `label`, `directive`,
    /// `engine`, `operands`; empty for lexical errors.
    pub field: String,
    /// What is wrong (lower case, no trailing period).
    pub message: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.source, self.line, self.column)?;
        if !self.field.is_empty() {
            write!(f, "field `{}`: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for AsmError {}

/// Assembles one core's program from `text` (named `source_name` in errors and in
/// [`Program::source`]). Streams appear in the order of their `.engine` sections; each
/// instruction's line is kept in [`crate::isa::Stream::lines`].
///
/// On failure returns every error found (at most [`AsmOptions::max_errors`], at least one),
/// sorted by line and column; each line reports at most its first error. Never panics.
pub fn assemble(source_name: &str, text: &str, opts: &AsmOptions) -> Result<Program, Vec<AsmError>> {
    driver::run(source_name, text, opts)
}

/// Joins errors one per line, for display.
pub fn render_errors(errors: &[AsmError]) -> String {
    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}
