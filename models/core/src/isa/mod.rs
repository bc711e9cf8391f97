//! The instruction set: engines, data types, access patterns, instructions, and the text
//! assembly they are written in (see `docs/isa.md`).

pub mod asm;
mod instr;

pub use instr::*;
