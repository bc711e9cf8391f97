//! What a diff reports: a clean run's figures ([`DiffReport`]) and why one stopped
//! ([`DiffError`]: a divergence, a transaction failure, a protocol violation, an assertion),
//! each with the last cycles of port values of the side concerned and the waveforms written.

use crate::block::{PortInfo, VltError};
use crate::coverage::CoverageReport;
use crate::scoreboard::{ScoreError, ScoreStats};
use std::fmt;
use std::path::PathBuf;

/// One cycle's port values on the reference side, after settle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleRecord {
    /// Cycle number (0-based).
    pub cycle: u64,
    /// One value per reference port.
    pub values: Vec<u128>,
}

/// The first cycle at which the two sides disagreed.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// Cycle number (0-based).
    pub cycle: u64,
    /// The output port that differed (the first in port order).
    pub port: &'static str,
    /// The reference's value.
    pub expected: u128,
    /// The DUT's value.
    pub actual: u128,
    /// Every output port that differed in that cycle: (port, expected, actual), in port order.
    pub differing: Vec<(&'static str, u128, u128)>,
    /// The reference's ports, naming the columns of `history`.
    pub ports: Vec<PortInfo>,
    /// The last cycles up to and including the divergence, oldest first (reference side).
    pub history: Vec<CycleRecord>,
    /// The same cycles on the DUT side, in the reference's port order.
    pub dut_history: Vec<CycleRecord>,
    /// `(model, rtl)` VCD paths, when written.
    pub vcds: Option<(PathBuf, PathBuf)>,
    /// One VCD of both sides' ports and a mismatch signal per output port, when written.
    pub merged_vcd: Option<PathBuf>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "divergence at cycle {} on port {}: expected {:#x}, actual {:#x}",
            self.cycle, self.port, self.expected, self.actual
        )?;
        if self.differing.len() > 1 {
            let all: Vec<String> =
                self.differing.iter().map(|(p, e, a)| format!("{p} (expected {e:#x}, actual {a:#x})")).collect();
            writeln!(f, "  every port differing in that cycle: {}", all.join(", "))?;
        }
        write_history(f, "reference side", &self.ports, &self.history)?;
        write_dut_differences(f, &self.ports, &self.history, &self.dut_history)?;
        if let Some((m, r)) = &self.vcds {
            writeln!(f, "  vcds: model {} rtl {}", m.display(), r.display())?;
        }
        if let Some(m) = &self.merged_vcd {
            writeln!(f, "  both sides and a mismatch signal per port: {}", m.display())?;
        }
        Ok(())
    }
}

/// The first scoreboard failure (scoreboard mode).
#[derive(Clone, Debug)]
pub struct TxnDivergence {
    /// What failed, with the transactions involved and the last matched ones.
    pub error: ScoreError,
    /// The reference's ports, naming the columns of `history`.
    pub ports: Vec<PortInfo>,
    /// The last cycles up to and including the failure, oldest first.
    pub history: Vec<CycleRecord>,
    /// `(model, rtl)` VCD paths, when written.
    pub vcds: Option<(PathBuf, PathBuf)>,
    /// One VCD of both sides' ports and a mismatch signal per output port, when written.
    pub merged_vcd: Option<PathBuf>,
}

impl fmt::Display for TxnDivergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.error)?;
        write_tail(f, "reference side", &self.ports, &self.history, &self.vcds, &self.merged_vcd)
    }
}

/// The end of a report that stopped a diff: the last cycles of port values of `side` and the
/// VCDs.
fn write_tail(
    f: &mut fmt::Formatter<'_>,
    side: &str,
    ports: &[PortInfo],
    history: &[CycleRecord],
    vcds: &Option<(PathBuf, PathBuf)>,
    merged: &Option<PathBuf>,
) -> fmt::Result {
    write_history(f, side, ports, history)?;
    if let Some((m, r)) = vcds {
        writeln!(f, "  vcds: model {} rtl {}", m.display(), r.display())?;
    }
    if let Some(m) = merged {
        writeln!(f, "  both sides and a mismatch signal per port: {}", m.display())?;
    }
    Ok(())
}

/// The last cycles of port values of one side (`side`: "reference side", "RTL side", ...).
fn write_history(f: &mut fmt::Formatter<'_>, side: &str, ports: &[PortInfo], history: &[CycleRecord]) -> fmt::Result {
    let names: Vec<&str> = ports.iter().map(|p| p.name).filter(|n| *n != "clk").collect();
    writeln!(f, "  last {} cycles ({side}): cycle {}", history.len(), names.join(" "))?;
    for r in history {
        let vals: Vec<String> =
            ports.iter().zip(&r.values).filter(|(p, _)| p.name != "clk").map(|(_, v)| format!("{v:x}")).collect();
        writeln!(f, "    {:>10} {}", r.cycle, vals.join(" "))?;
    }
    Ok(())
}

/// The DUT's side of `history`: for each cycle, the output ports whose DUT value differs from
/// the reference's (don't-care differences included, marked as such by the reader's eye: the
/// divergence line says which one counted).
fn write_dut_differences(
    f: &mut fmt::Formatter<'_>,
    ports: &[PortInfo],
    history: &[CycleRecord],
    dut: &[CycleRecord],
) -> fmt::Result {
    if dut.is_empty() {
        return Ok(());
    }
    writeln!(f, "  the same cycles on the DUT side (outputs that differ from the reference):")?;
    for (r, d) in history.iter().zip(dut) {
        let diffs: Vec<String> = ports
            .iter()
            .zip(r.values.iter().zip(&d.values))
            .filter(|(p, (a, b))| !p.input && a != b)
            .map(|(p, (_, b))| format!("{}={b:x}", p.name))
            .collect();
        let text = if diffs.is_empty() { "same".to_string() } else { diffs.join(" ") };
        writeln!(f, "    {:>10} {text}", d.cycle)?;
    }
    Ok(())
}

/// A SystemVerilog assertion of the RTL failed.
#[derive(Clone, Debug)]
pub struct AssertionFailure {
    /// Cycle number (0-based).
    pub cycle: u64,
    /// The assertion's label.
    pub label: &'static str,
    /// Where it is written (`file.sv:line`).
    pub location: String,
    /// The RTL's ports, naming the columns of `history`.
    pub ports: Vec<PortInfo>,
    /// The RTL's last cycles up to and including the failure, oldest first.
    pub history: Vec<CycleRecord>,
    /// `(model, rtl)` VCD paths, when written.
    pub vcds: Option<(PathBuf, PathBuf)>,
    /// One VCD of both sides' ports and a mismatch signal per output port, when written.
    pub merged_vcd: Option<PathBuf>,
}

impl fmt::Display for AssertionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "assertion {} ({}) failed at cycle {}", self.label, self.location, self.cycle)?;
        write_tail(f, "RTL side", &self.ports, &self.history, &self.vcds, &self.merged_vcd)
    }
}

/// A protocol monitor's rule broken by one side.
#[derive(Clone, Debug)]
pub struct ProtocolViolation {
    /// Cycle number (0-based).
    pub cycle: u64,
    /// "model" or "RTL".
    pub side: &'static str,
    /// The monitor and the rule.
    pub violation: crate::monitor::Violation,
    /// That side's ports, naming the columns of `history`.
    pub ports: Vec<PortInfo>,
    /// That side's last cycles up to and including the violation, oldest first.
    pub history: Vec<CycleRecord>,
    /// `(model, rtl)` VCD paths, when written.
    pub vcds: Option<(PathBuf, PathBuf)>,
    /// One VCD of both sides' ports and a mismatch signal per output port, when written.
    pub merged_vcd: Option<PathBuf>,
}

impl fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "protocol violation at cycle {} by the {}: {}", self.cycle, self.side, self.violation)?;
        let side = format!("{} side", self.side);
        write_tail(f, &side, &self.ports, &self.history, &self.vcds, &self.merged_vcd)
    }
}

/// Why a diff stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum DiffError {
    /// The two blocks' ports don't match (missing name or different width).
    Ports(String),
    /// A side failed (e.g. the RTL hit `$fatal`), at the given cycle.
    Sim(u64, VltError),
    /// The outputs disagreed.
    Diverged(Box<Divergence>),
    /// Scoreboard mode: the transactions disagreed.
    Transactions(Box<TxnDivergence>),
    /// A side broke an interface rule.
    Protocol(Box<ProtocolViolation>),
    /// An assertion of the RTL failed.
    Assertion(Box<AssertionFailure>),
}

impl DiffError {
    /// The cycle of a divergence (either mode).
    pub fn divergence_cycle(&self) -> Option<u64> {
        match self {
            DiffError::Diverged(d) => Some(d.cycle),
            DiffError::Transactions(t) => Some(t.error.cycle),
            DiffError::Protocol(p) => Some(p.cycle),
            DiffError::Assertion(a) => Some(a.cycle),
            _ => None,
        }
    }
    pub(crate) fn set_vcds(&mut self, paths: (PathBuf, PathBuf), merged: PathBuf) {
        let (vcds, m) = match self {
            DiffError::Diverged(d) => (&mut d.vcds, &mut d.merged_vcd),
            DiffError::Transactions(t) => (&mut t.vcds, &mut t.merged_vcd),
            DiffError::Protocol(p) => (&mut p.vcds, &mut p.merged_vcd),
            DiffError::Assertion(a) => (&mut a.vcds, &mut a.merged_vcd),
            _ => return,
        };
        *vcds = Some(paths);
        *m = Some(merged);
    }
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiffError::Ports(m) => write!(f, "port mismatch: {m}"),
            DiffError::Sim(c, e) => write!(f, "simulation failed at cycle {c}: {e}"),
            DiffError::Diverged(d) => write!(f, "{d}"),
            DiffError::Transactions(t) => write!(f, "{t}"),
            DiffError::Protocol(p) => write!(f, "{p}"),
            DiffError::Assertion(a) => write!(f, "{a}"),
        }
    }
}

impl std::error::Error for DiffError {}

/// What a clean run covered.
#[derive(Clone, Debug, Default)]
pub struct DiffReport {
    /// Cycles run (the stimulus's length if shorter than asked).
    pub cycles: u64,
    /// For each 1-bit output of the reference: cycles it was high (coverage, e.g. a FIFO's
    /// full cycles are those with `in_ready` low).
    pub high_cycles: Vec<(&'static str, u64)>,
    /// Scoreboard mode: transactions matched, and how far apart.
    pub transactions: Option<ScoreStats>,
    /// Functional coverage of the model's and the RTL's ports, when cover points were given.
    pub coverage: Option<(CoverageReport, CoverageReport)>,
    /// The waveforms written (`Waves::All` or a window the run reached): model, RTL, merged.
    pub waves: Option<super::WavePaths>,
    /// The RTL's `cover property` statements and how often each matched.
    pub cover_properties: Vec<(&'static str, u64)>,
    /// The RTL's assertions that failed without stopping it (`$warning`, `$info`), by label.
    pub assertions: Vec<AssertionCount>,
    /// How often each of the RTL's labelled concurrent assertions passed.
    pub assertion_passes: Vec<(&'static str, u64)>,
}

/// How often one assertion failed with one severity, and its first failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertionCount {
    /// The assertion's label.
    pub label: String,
    /// `file:line`.
    pub at: String,
    /// Its action's severity.
    pub severity: crate::block::Severity,
    /// Failures.
    pub count: u64,
    /// The first failure's cycle and message.
    pub first_cycle: u64,
    /// The first failure's message (the action's text).
    pub message: String,
}

/// Adds `notes` (failures seen in `cycle`) to `counts`.
pub(crate) fn count_notes(counts: &mut Vec<AssertionCount>, notes: Vec<crate::block::AssertionNote>, cycle: u64) {
    for n in notes {
        match counts.iter_mut().find(|c| c.label == n.label && c.at == n.at && c.severity == n.severity) {
            Some(c) => c.count += 1,
            None => counts.push(AssertionCount {
                label: n.label,
                at: n.at,
                severity: n.severity,
                count: 1,
                first_cycle: cycle,
                message: n.message,
            }),
        }
    }
}

impl DiffReport {
    /// The RTL's cover properties and non-fatal assertion failures, a line each (empty when
    /// there are none).
    pub fn rtl_checks(&self) -> String {
        let mut s = String::new();
        for (label, n) in &self.cover_properties {
            s.push_str(&format!("  cover property {label}: {n} matches\n"));
        }
        for (label, n) in &self.assertion_passes {
            s.push_str(&format!("  assertion {label}: {n} passes\n"));
        }
        for a in &self.assertions {
            s.push_str(&format!(
                "  assertion {} ({}): {} {}, first at cycle {}{}\n",
                a.label,
                a.at,
                a.count,
                match a.severity {
                    crate::block::Severity::Info => "infos",
                    crate::block::Severity::Warning => "warnings",
                    crate::block::Severity::Error => "errors",
                },
                a.first_cycle,
                if a.message.is_empty() { String::new() } else { format!(": {}", a.message) }
            ));
        }
        s
    }
}

impl DiffReport {
    /// Cycles the 1-bit output `port` was high.
    pub fn high(&self, port: &str) -> Option<u64> {
        self.high_cycles.iter().find(|(n, _)| *n == port).map(|&(_, c)| c)
    }
}
