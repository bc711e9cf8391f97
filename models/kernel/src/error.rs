//! Errors, one enum per phase: assembly ([`BuildError`]) and run ([`RunError`]). Each names the
//! component or link it is about. Trace I/O errors are [`crate::TraceError`].

use crate::time::{Dur, Time};
use std::fmt;

/// A mistake found while assembling a simulation. Always fatal for that simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// Two clocks or two components with the same name.
    DuplicateName {
        /// "clock" or "component".
        what: &'static str,
        /// The repeated name.
        name: String,
    },
    /// A clock with an unusable frequency.
    BadClock {
        /// The clock's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// Two links on the same port of one component.
    DuplicatePort {
        /// Component name.
        component: String,
        /// Port name.
        port: String,
    },
    /// A link parameter out of range.
    BadLink {
        /// "src.port -> dst.port".
        link: String,
        /// The parameter, e.g. "latency".
        field: &'static str,
        /// What was given.
        value: String,
        /// What is allowed.
        allowed: &'static str,
    },
    /// More preloaded messages than the link's depth.
    PreloadOverflow {
        /// The link.
        link: String,
        /// Its depth.
        depth: u32,
    },
    /// A reserved component was never installed.
    NotInstalled {
        /// Component names.
        names: Vec<String>,
    },
    /// A component installed twice.
    AlreadyInstalled {
        /// Component name.
        name: String,
    },
    /// A component's constructor (see `SimBuilder::install_with`) failed.
    Construct {
        /// Component name.
        name: String,
        /// The constructor's error.
        why: String,
    },
    /// A partition plan that does not fit the system being built.
    PartitionMismatch {
        /// What does not match.
        why: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::DuplicateName { what, name } => write!(f, "duplicate {what} name {name:?}"),
            BuildError::BadClock { name, reason } => write!(f, "clock {name:?}: {reason}"),
            BuildError::DuplicatePort { component, port } => {
                write!(f, "component {component:?}: port {port:?} is connected twice")
            }
            BuildError::BadLink { link, field, value, allowed } => {
                write!(f, "link {link}: {field} = {value} is invalid (allowed: {allowed})")
            }
            BuildError::PreloadOverflow { link, depth } => {
                write!(f, "link {link}: more preloaded messages than its depth {depth}")
            }
            BuildError::NotInstalled { names } => {
                write!(f, "components reserved but never installed: {}", names.join(", "))
            }
            BuildError::AlreadyInstalled { name } => {
                write!(f, "component {name:?} installed twice")
            }
            BuildError::Construct { name, why } => write!(f, "component {name:?}: {why}"),
            BuildError::PartitionMismatch { why } => write!(f, "partitioned build: {why}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// A blocked component in a deadlock report, and why it is blocked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedComponent {
    /// Component name.
    pub name: String,
    /// Human-readable reason, e.g. "2 messages waiting on in; output out full".
    pub why: String,
}

/// What the deadlock detector saw: work outstanding and no progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadlockReport {
    /// When the run was stopped.
    pub time: Time,
    /// How long nothing had moved (zero when nothing was scheduled at all).
    pub stalled_for: Dur,
    /// Messages sitting in links.
    pub messages_in_links: u64,
    /// Components holding work or blocked on a full link.
    pub blocked: Vec<BlockedComponent>,
    /// Links whose receive buffer is full ("src.port -> dst.port").
    pub full_links: Vec<String>,
    /// A cycle of components each waiting on the next through a full link, if there is one.
    pub cycle: Vec<String>,
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "deadlock at {}: ", self.time)?;
        if self.stalled_for == Dur::ZERO {
            // Nothing was scheduled at all: no component will ever tick again.
            write!(f, "nothing left to run, yet work outstanding")?;
        } else {
            write!(f, "no progress for {}", self.stalled_for)?;
        }
        write!(f, ", {} messages stuck in links", self.messages_in_links)?;
        if !self.cycle.is_empty() {
            write!(f, "; cycle of full links: {} -> {}", self.cycle.join(" -> "), self.cycle[0])?;
        }
        let names: Vec<&str> = self.blocked.iter().map(|b| b.name.as_str()).collect();
        write!(f, "; blocked components: {}", names.join(", "))?;
        if !self.full_links.is_empty() {
            write!(f, "; full links: {}", self.full_links.join(", "))?;
        }
        Ok(())
    }
}

/// Why a run stopped with an error.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RunError {
    /// Work was outstanding but nothing moved for the deadlock window, or nothing was left to
    /// run while messages were still stuck in links. Fatal.
    Deadlock(Box<DeadlockReport>),
    /// A trace sink failed (the simulation itself is intact; tracing stopped).
    Trace(crate::TraceError),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Deadlock(r) => r.fmt(f),
            RunError::Trace(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RunError {}
