//! Errors of the SRAM model: a field that breaks a rule, and the refusals of the memory itself.

use trnsim_kernel::Cycles;

/// One field of a geometry or an access pattern that breaks a rule: the field's name (as spelled
/// in the struct, e.g. `partition_start`, `dims[2].size`) and what is wrong with its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The offending field.
    pub field: &'static str,
    /// What the rule is and what was given.
    pub detail: String,
}

impl FieldError {
    /// An error on `field`.
    pub fn new(field: &'static str, detail: impl Into<String>) -> FieldError {
        FieldError { field, detail: detail.into() }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.detail)
    }
}

impl std::error::Error for FieldError {}

/// A request the SRAM refuses. Every variant names the memory instance (`memory`, e.g.
/// `nc0.sbuf`); none changes the memory's state, so the caller may correct the request and
/// retry. They are fatal for the instruction that made the request (a bad program or config),
/// never for the simulator.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SramError {
    /// The geometry breaks a rule (found when the memory is built).
    Geometry {
        /// Memory instance.
        memory: String,
        /// The bad parameter.
        error: FieldError,
    },
    /// An access pattern breaks a rule of spec §3 or leaves the partition.
    Pattern {
        /// Memory instance.
        memory: String,
        /// The interface that made the access (empty for functional reads and writes).
        client: String,
        /// The bad field.
        error: FieldError,
    },
    /// A client list or client id the memory does not accept.
    Client {
        /// Memory instance.
        memory: String,
        /// What is wrong.
        detail: String,
    },
    /// An access started before the memory's current cycle.
    TimeWentBack {
        /// Memory instance.
        memory: String,
        /// The memory's current cycle (all earlier cycles are already simulated).
        now: Cycles,
        /// The cycle the caller asked for.
        requested: Cycles,
    },
    /// A data buffer whose length does not match the pattern.
    Length {
        /// Memory instance.
        memory: String,
        /// The buffer argument (`out`, `data`, `values`).
        field: &'static str,
        /// Length the pattern needs (bytes, or f32 values for `values`).
        expected: u64,
        /// Length given.
        got: u64,
    },
}

impl std::fmt::Display for SramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SramError::Geometry { memory, error } => write!(f, "sram {memory:?}: geometry {error}"),
            SramError::Pattern { memory, client, error } if client.is_empty() => {
                write!(f, "sram {memory:?}: access pattern {error}")
            }
            SramError::Pattern { memory, client, error } => {
                write!(f, "sram {memory:?}: access pattern from {client:?}: {error}")
            }
            SramError::Client { memory, detail } => write!(f, "sram {memory:?}: {detail}"),
            SramError::TimeWentBack { memory, now, requested } => {
                write!(
                    f,
                    "sram {memory:?}: access starts at cycle {} but cycles before {} are already simulated",
                    requested.0, now.0
                )
            }
            SramError::Length { memory, field, expected, got } => {
                write!(f, "sram {memory:?}: {field} has length {got}, the pattern needs {expected}")
            }
        }
    }
}

impl std::error::Error for SramError {}
