//! Lock-step differential testing: a reference (the Rust model) and a device under test (the
//! RTL) get the same inputs every cycle; every output port is compared every cycle.
//!
//! At the first divergence the report names the cycle, port, expected and actual values and
//! the last N cycles of port values; with `vcd_dir` set, the run is replayed from cycle 0 (the
//! stimulus is seeded, so it is the same run) and both sides write a VCD of the last
//! `vcd_window` cycles: the RTL through Verilator's tracer, the model through the `vcd` crate.

use crate::block::{Block, PortInfo, VltError};
use crate::stimulus::Stimulus;
use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;

/// How to run a diff.
#[derive(Clone, Debug)]
pub struct DiffConfig {
    /// Cycles to run.
    pub cycles: u64,
    /// Cycles of port values kept for the report.
    pub history: usize,
    /// `(port, qualifier)`: `port` is compared only in cycles where output `qualifier` is 1
    /// on the reference (e.g. data only while valid).
    pub dont_care: Vec<(&'static str, &'static str)>,
    /// Where to write `<name>.model.vcd` and `<name>.rtl.vcd` on divergence (none: no VCDs).
    pub vcd_dir: Option<PathBuf>,
    /// File stem for the VCDs.
    pub name: String,
    /// Cycles before the divergence that the VCDs cover.
    pub vcd_window: u64,
}

impl DiffConfig {
    /// The link FIFO: `out_data` matters only while `out_valid`.
    pub fn link_fifo(cycles: u64) -> DiffConfig {
        DiffConfig {
            cycles,
            history: 8,
            dont_care: vec![("out_data", "out_valid")],
            vcd_dir: None,
            name: "link_fifo".into(),
            vcd_window: 2000,
        }
    }
}

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
    /// The reference's ports, naming the columns of `history`.
    pub ports: Vec<PortInfo>,
    /// The last cycles up to and including the divergence, oldest first.
    pub history: Vec<CycleRecord>,
    /// `(model, rtl)` VCD paths, when written.
    pub vcds: Option<(PathBuf, PathBuf)>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "divergence at cycle {} on port {}: expected {:#x}, actual {:#x}",
            self.cycle, self.port, self.expected, self.actual
        )?;
        let names: Vec<&str> = self.ports.iter().map(|p| p.name).filter(|n| *n != "clk").collect();
        writeln!(f, "  last {} cycles (reference side): cycle {}", self.history.len(), names.join(" "))?;
        for r in &self.history {
            let vals: Vec<String> = self
                .ports
                .iter()
                .zip(&r.values)
                .filter(|(p, _)| p.name != "clk")
                .map(|(_, v)| format!("{v:x}"))
                .collect();
            writeln!(f, "    {:>10} {}", r.cycle, vals.join(" "))?;
        }
        if let Some((m, r)) = &self.vcds {
            writeln!(f, "  vcds: model {} rtl {}", m.display(), r.display())?;
        }
        Ok(())
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
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiffError::Ports(m) => write!(f, "port mismatch: {m}"),
            DiffError::Sim(c, e) => write!(f, "simulation failed at cycle {c}: {e}"),
            DiffError::Diverged(d) => write!(f, "{d}"),
        }
    }
}

impl std::error::Error for DiffError {}

/// What a clean run covered.
#[derive(Clone, Debug, Default)]
pub struct DiffReport {
    /// Cycles run.
    pub cycles: u64,
    /// For each 1-bit output of the reference: cycles it was high (coverage, e.g. a FIFO's
    /// full cycles are those with `in_ready` low).
    pub high_cycles: Vec<(&'static str, u64)>,
}

impl DiffReport {
    /// Cycles the 1-bit output `port` was high.
    pub fn high(&self, port: &str) -> Option<u64> {
        self.high_cycles.iter().find(|(n, _)| *n == port).map(|&(_, c)| c)
    }
}

struct Pairing {
    /// Reference port index -> DUT port index.
    to_dut: Vec<usize>,
    inputs: Vec<usize>,
    /// (reference output index, qualifier index or usize::MAX).
    outputs: Vec<(usize, usize)>,
}

fn pair(r: &[PortInfo], d: &[PortInfo], cfg: &DiffConfig) -> Result<Pairing, DiffError> {
    let find = |ports: &[PortInfo], n: &str| ports.iter().position(|p| p.name == n);
    let mut to_dut = Vec::new();
    for p in r {
        let j = find(d, p.name).ok_or_else(|| DiffError::Ports(format!("dut has no port {}", p.name)))?;
        if d[j].width != p.width || d[j].input != p.input {
            return Err(DiffError::Ports(format!("port {}: reference {:?}, dut {:?}", p.name, p, d[j])));
        }
        to_dut.push(j);
    }
    if d.len() != r.len() {
        return Err(DiffError::Ports(format!("dut has {} ports, reference {}", d.len(), r.len())));
    }
    let inputs = (0..r.len()).filter(|&i| r[i].input && r[i].name != "clk").collect();
    let mut outputs = Vec::new();
    for (i, p) in r.iter().enumerate().filter(|(_, p)| !p.input) {
        let q = match cfg.dont_care.iter().find(|(n, _)| *n == p.name) {
            Some((_, q)) => find(r, q).ok_or_else(|| DiffError::Ports(format!("no qualifier port {q}")))?,
            None => usize::MAX,
        };
        outputs.push((i, q));
    }
    Ok(Pairing { to_dut, inputs, outputs })
}

/// Runs `reference` and `dut` in lock-step on `stimulus` for `cfg.cycles` cycles.
///
/// The constructors are called again (with a fresh stimulus) to replay the run with VCDs on
/// divergence, so they must build identical initial states.
pub fn diff<R, D, S>(
    mut reference: impl FnMut() -> R,
    mut dut: impl FnMut() -> Result<D, VltError>,
    mut stimulus: impl FnMut() -> S,
    cfg: &DiffConfig,
) -> Result<DiffReport, DiffError>
where
    R: Block,
    D: Block,
    S: Stimulus,
{
    let (mut r, mut d) = (reference(), dut().map_err(|e| DiffError::Sim(0, e))?);
    let pairing = pair(r.ports(), d.ports(), cfg)?;
    let mut first = match lockstep(&mut r, &mut d, &mut stimulus(), &pairing, cfg, None) {
        Err(DiffError::Diverged(div)) => div,
        other => return other,
    };
    drop((r, d));
    if let Some(dir) = &cfg.vcd_dir {
        let paths = (dir.join(format!("{}.model.vcd", cfg.name)), dir.join(format!("{}.rtl.vcd", cfg.name)));
        let (mut r, mut d) = (reference(), dut().map_err(|e| DiffError::Sim(0, e))?);
        let from = first.cycle.saturating_sub(cfg.vcd_window);
        let replay = lockstep(&mut r, &mut d, &mut stimulus(), &pairing, cfg, Some((from, &paths)));
        r.close_vcd();
        d.close_vcd();
        match replay {
            Err(DiffError::Diverged(again)) if again.cycle == first.cycle => first.vcds = Some(paths),
            Err(DiffError::Sim(c, e)) => return Err(DiffError::Sim(c, e)),
            _ => {} // not reproducible: report without VCDs rather than misleading ones
        }
    }
    Err(DiffError::Diverged(first))
}

fn lockstep<R: Block, D: Block, S: Stimulus>(
    r: &mut R,
    d: &mut D,
    stim: &mut S,
    pairing: &Pairing,
    cfg: &DiffConfig,
    vcd: Option<(u64, &(PathBuf, PathBuf))>,
) -> Result<DiffReport, DiffError> {
    let n = r.ports().len();
    let mut inputs = vec![0u128; n];
    let mut history: VecDeque<CycleRecord> = VecDeque::with_capacity(cfg.history + 1);
    let one_bit: Vec<usize> = pairing.outputs.iter().map(|&(i, _)| i).filter(|&i| r.ports()[i].width == 1).collect();
    let mut high = vec![0u64; one_bit.len()];
    for cycle in 0..cfg.cycles {
        if let Some((from, (mp, rp))) = vcd {
            if cycle == from {
                r.open_vcd(mp).map_err(|e| DiffError::Sim(cycle, e))?;
                d.open_vcd(rp).map_err(|e| DiffError::Sim(cycle, e))?;
            }
        }
        stim.drive(cycle, &mut inputs);
        for &i in &pairing.inputs {
            r.set_input(i, inputs[i]);
            d.set_input(pairing.to_dut[i], inputs[i]);
        }
        r.settle().map_err(|e| DiffError::Sim(cycle, e))?;
        d.settle().map_err(|e| DiffError::Sim(cycle, e))?;
        if cfg.history > 0 {
            // Reuse the oldest record's buffer: no allocation per cycle.
            let mut rec = match history.len() == cfg.history {
                true => history.pop_front().unwrap_or(CycleRecord { cycle, values: vec![0; n] }),
                false => CycleRecord { cycle, values: vec![0; n] },
            };
            rec.cycle = cycle;
            for (i, v) in rec.values.iter_mut().enumerate() {
                *v = r.output(i);
            }
            history.push_back(rec);
        }
        for &(i, q) in &pairing.outputs {
            let (e, a) = (r.output(i), d.output(pairing.to_dut[i]));
            if e != a && (q == usize::MAX || r.output(q) == 1) {
                if vcd.is_some() {
                    // Let both VCDs show the diverging cycle's clock edge too.
                    let _ = (r.posedge(), d.posedge());
                }
                let ports = r.ports().to_vec();
                let history = history.into_iter().collect();
                let div = Divergence { cycle, port: ports[i].name, expected: e, actual: a, ports, history, vcds: None };
                return Err(DiffError::Diverged(Box::new(div)));
            }
        }
        for (h, &i) in high.iter_mut().zip(&one_bit) {
            *h += r.output(i) as u64;
        }
        r.posedge().map_err(|e| DiffError::Sim(cycle, e))?;
        d.posedge().map_err(|e| DiffError::Sim(cycle, e))?;
    }
    let high_cycles = one_bit.iter().zip(high).map(|(&i, h)| (r.ports()[i].name, h)).collect();
    Ok(DiffReport { cycles: cfg.cycles, high_cycles })
}
