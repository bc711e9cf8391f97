//! Lock-step differential testing: a reference (the Rust model) and a device under test (the
//! RTL) get the same inputs every cycle; every output port is compared every cycle.
//!
//! At the first divergence the report names the cycle, port, expected and actual values and
//! the last N cycles of port values; with `vcd_dir` set, the run is replayed from cycle 0 (the
//! stimulus is seeded, so it is the same run) and both sides write a VCD of the last
//! `vcd_window` cycles: the RTL through Verilator's tracer, the model through the `vcd` crate.
//!
//! [`diff_transactions`] is the scoreboard mode for cycle-approximate blocks: the same
//! lock-step run, but the outputs are compared as transactions ([`crate::scoreboard`]).
//! A stimulus with a length (a recorded trace) ends the run early.

use crate::block::{Block, PortInfo, VltError};
use crate::coverage::Coverage;
use crate::scoreboard::{Extractor, ScoreError, Scoreboard, ScoreboardConfig};
use crate::stimulus::Stimulus;
use std::path::PathBuf;

/// How to run a diff.
#[derive(Clone, Debug)]
pub struct DiffConfig {
    /// Cycles to run.
    pub cycles: u64,
    /// Cycles of port values kept for the report.
    pub history: usize,
    /// `(port, qualifier)`: `port` is compared only in cycles where output `qualifier` is 1
    /// on the reference (e.g. data only while valid). Per lane when `qualifier` is wider than
    /// one bit: `port` splits into that many equal lanes (LSB first) and lane `k` is compared
    /// only while bit `k` of `qualifier` is 1 (e.g. `("rdata", "rvalid")` per requester).
    pub dont_care: Vec<(&'static str, &'static str)>,
    /// Where to write `<name>.model.vcd` and `<name>.rtl.vcd` on divergence (none: no VCDs).
    pub vcd_dir: Option<PathBuf>,
    /// File stem for the VCDs.
    pub name: String,
    /// Cycles before the divergence that the VCDs cover (`Waves::Fail`).
    pub vcd_window: u64,
    /// Which cycles the waveforms in `vcd_dir` cover.
    pub waves: Waves,
    /// The block's cover points, sampled every cycle on both sides (none: no coverage).
    pub coverage: Vec<crate::coverage::Cover>,
    /// Stop once both sides have this percentage of the bins (or at `cycles`).
    pub until_coverage: Option<f64>,
    /// Protocol monitors checked every cycle on both sides.
    pub monitors: Vec<crate::monitor::Protocol>,
}

impl DiffConfig {
    /// Every output compared every cycle (no don't-care ports), no coverage or monitors:
    /// the start for a block of its own (the registry fills in name, coverage, monitors).
    pub fn every_cycle(cycles: u64) -> DiffConfig {
        DiffConfig { dont_care: Vec::new(), name: "block".into(), ..DiffConfig::link_fifo(cycles) }
    }

    /// The link FIFO: `out_data` matters only while `out_valid`.
    pub fn link_fifo(cycles: u64) -> DiffConfig {
        DiffConfig {
            cycles,
            history: 8,
            dont_care: vec![("out_data", "out_valid")],
            vcd_dir: None,
            name: "link_fifo".into(),
            vcd_window: 2000,
            waves: Waves::Fail,
            coverage: Vec::new(),
            until_coverage: None,
            monitors: Vec::new(),
        }
    }
}

mod report;
pub use report::*;

/// Which cycles the waveforms cover (with a `vcd_dir`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Waves {
    /// Only after a failure: the run is replayed and the `vcd_window` cycles before the
    /// failure written (a clean run writes none, and costs nothing).
    #[default]
    Fail,
    /// The whole run, written as it runs, clean or not.
    All,
    /// Cycles `from..=to` of the run, written as it runs, clean or not.
    Window(u64, u64),
}

/// The waveform files of a run: model, RTL, and the merged one with mismatch signals.
pub type WavePaths = (PathBuf, PathBuf, PathBuf);

struct Pairing {
    /// Reference port index -> DUT port index.
    to_dut: Vec<usize>,
    /// Whether `to_dut` is the identity (the usual case: same port order on both sides).
    same_order: bool,
    /// Reference input ports but `clk`.
    inputs: Vec<usize>,
    /// The same inputs as DUT port indices.
    dut_inputs: Vec<usize>,
    /// (reference output index, qualifier index or usize::MAX, lane width when per lane).
    outputs: Vec<(usize, usize, u32)>,
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
    let inputs: Vec<usize> = (0..r.len()).filter(|&i| r[i].input && r[i].name != "clk").collect();
    let mut outputs = Vec::new();
    for (i, p) in r.iter().enumerate().filter(|(_, p)| !p.input) {
        let q = match cfg.dont_care.iter().find(|(n, _)| *n == p.name) {
            Some((_, q)) => find(r, q).ok_or_else(|| DiffError::Ports(format!("no qualifier port {q}")))?,
            None => usize::MAX,
        };
        let lanes = if q == usize::MAX { 1 } else { r[q].width };
        if lanes > 1 && !p.width.is_multiple_of(lanes) {
            return Err(DiffError::Ports(format!("{} ({} bits) is not {lanes} equal lanes", p.name, p.width)));
        }
        outputs.push((i, q, if lanes > 1 { p.width / lanes } else { 0 }));
    }
    let same_order = to_dut.iter().enumerate().all(|(i, &j)| i == j);
    let dut_inputs = inputs.iter().map(|&i| to_dut[i]).collect();
    Ok(Pairing { to_dut, same_order, inputs, dut_inputs, outputs })
}

/// Runs `reference` and `dut` in lock-step on `stimulus` for `cfg.cycles` cycles (fewer if
/// the stimulus is shorter), comparing every output port every cycle.
///
/// The constructors are called again (with a fresh stimulus) to replay the run with VCDs on
/// divergence, so they must build identical initial states.
pub fn diff<R, D, S>(
    reference: impl FnMut() -> R,
    dut: impl FnMut() -> Result<D, VltError>,
    stimulus: impl FnMut() -> S,
    cfg: &DiffConfig,
) -> Result<DiffReport, DiffError>
where
    R: Block,
    D: Block,
    S: Stimulus,
{
    run(reference, dut, stimulus, cfg, None)
}

/// Scoreboard mode: as [`diff`], but the outputs are compared as transactions (`sb`: which,
/// in order or by ID, within a cycle tolerance) instead of port by port; `cfg.dont_care` is
/// not used. On failure the report holds the transactions, the last matched ones, the last
/// cycles of port values and (with `vcd_dir`) both sides' VCDs.
pub fn diff_transactions<R, D, S>(
    reference: impl FnMut() -> R,
    dut: impl FnMut() -> Result<D, VltError>,
    stimulus: impl FnMut() -> S,
    cfg: &DiffConfig,
    sb: &ScoreboardConfig,
) -> Result<DiffReport, DiffError>
where
    R: Block,
    D: Block,
    S: Stimulus,
{
    run(reference, dut, stimulus, cfg, Some(sb))
}

fn run<R, D, S>(
    mut reference: impl FnMut() -> R,
    mut dut: impl FnMut() -> Result<D, VltError>,
    mut stimulus: impl FnMut() -> S,
    cfg: &DiffConfig,
    sb: Option<&ScoreboardConfig>,
) -> Result<DiffReport, DiffError>
where
    R: Block,
    D: Block,
    S: Stimulus,
{
    let (mut r, mut d) = (reference(), dut().map_err(|e| DiffError::Sim(0, e))?);
    let pairing = pair(r.ports(), d.ports(), cfg)?;
    if r.reset() != d.reset() {
        let msg = format!("reset: reference {:?}, dut {:?}", r.reset(), d.reset());
        return Err(DiffError::Ports(msg));
    }
    let extractors = match sb {
        Some(sb) => {
            let xr = Extractor::new(sb, r.ports()).map_err(DiffError::Ports)?;
            Some((xr, Extractor::new(sb, d.ports()).map_err(DiffError::Ports)?, sb))
        }
        None => None,
    };
    let extract = extractors.as_ref().map(|(a, b, c)| (a, b, *c));
    let window = match cfg.waves {
        Waves::Fail => None,
        Waves::All => Some((0, u64::MAX)),
        Waves::Window(from, to) => Some((from, to)),
    };
    if let (Some(dir), Some((from, to))) = (&cfg.vcd_dir, window) {
        // Waveforms written as the run goes: no replay.
        let (mp, rp, merged) = wave_paths(dir, &cfg.name);
        let paths = (mp, rp);
        let run = lockstep(&mut r, &mut d, &mut stimulus(), &pairing, cfg, extract, Some((from, to, &paths, &merged)));
        r.close_vcd();
        d.close_vcd();
        let (mp, rp) = paths;
        return match run {
            Ok(mut rep) => {
                rep.waves = (from < rep.cycles).then_some((mp, rp, merged));
                Ok(rep)
            }
            Err(mut e) => {
                if e.divergence_cycle().is_some_and(|c| c >= from) {
                    e.set_vcds((mp, rp), merged);
                }
                Err(e)
            }
        };
    }
    let mut first = match lockstep(&mut r, &mut d, &mut stimulus(), &pairing, cfg, extract, None) {
        Err(e) if e.divergence_cycle().is_some() => e,
        other => return other,
    };
    drop((r, d));
    if let (Some(dir), Some(cycle)) = (&cfg.vcd_dir, first.divergence_cycle()) {
        let (mp, rp, merged) = wave_paths(dir, &cfg.name);
        let paths = (mp, rp);
        let (mut r, mut d) = (reference(), dut().map_err(|e| DiffError::Sim(0, e))?);
        let from = cycle.saturating_sub(cfg.vcd_window);
        let replay =
            lockstep(&mut r, &mut d, &mut stimulus(), &pairing, cfg, extract, Some((from, u64::MAX, &paths, &merged)));
        r.close_vcd();
        d.close_vcd();
        match replay {
            Err(again) if again.divergence_cycle() == Some(cycle) => first.set_vcds(paths, merged),
            Err(DiffError::Sim(c, e)) => return Err(DiffError::Sim(c, e)),
            _ => {} // not reproducible: report without VCDs rather than misleading ones
        }
    }
    Err(first)
}

/// `NAME.model.vcd`, `NAME.rtl.vcd` and `NAME.diff.vcd` in `dir`.
fn wave_paths(dir: &std::path::Path, name: &str) -> WavePaths {
    let f = |side: &str| dir.join(format!("{name}.{side}.vcd"));
    (f("model"), f("rtl"), f("diff"))
}

type Extract<'a> = (&'a Extractor, &'a Extractor, &'a ScoreboardConfig);

/// Waveforms from cycle `.0` to `.1` (inclusive) into the model and RTL VCDs and the merged one.
type WaveOut<'a> = (u64, u64, &'a (PathBuf, PathBuf), &'a PathBuf);

/// The last `len` cycles of reference port values, flat (`n` values per cycle): the slot for
/// this cycle is written in place by [`Block::read_all`], so recording costs no copies and
/// no allocation.
struct History {
    n: usize,
    len: usize,
    values: Vec<u128>,
    /// Slot of the current cycle.
    head: usize,
    /// Cycles recorded so far (at most `len`).
    filled: usize,
    /// The first recorded cycle still in the ring.
    first_cycle: u64,
}

impl History {
    /// A ring of `len` cycles (`len` 0: one scratch slot, nothing reported).
    fn new(n: usize, len: usize) -> History {
        History { n, len, values: vec![0; n * len.max(1)], head: 0, filled: 0, first_cycle: 0 }
    }
    /// Starts cycle `cycle` (cycles are consecutive): its slot, to fill.
    #[inline]
    fn start(&mut self, cycle: u64) -> &mut [u128] {
        if self.len > 0 {
            if self.filled == self.len {
                self.head = if self.head + 1 == self.len { 0 } else { self.head + 1 };
                self.first_cycle += 1;
            } else {
                if self.filled == 0 {
                    self.first_cycle = cycle;
                }
                self.head = self.filled;
                self.filled += 1;
            }
        }
        let at = self.head * self.n;
        &mut self.values[at..at + self.n]
    }
    /// The current cycle's values.
    #[inline]
    fn current(&self) -> &[u128] {
        let at = self.head * self.n;
        &self.values[at..at + self.n]
    }
    /// The recorded cycles, oldest first.
    fn records(&self) -> Vec<CycleRecord> {
        let oldest = if self.filled == self.len { (self.head + 1) % self.len.max(1) } else { 0 };
        (0..self.filled)
            .map(|k| {
                let at = (oldest + k) % self.len * self.n;
                CycleRecord { cycle: self.first_cycle + k as u64, values: self.values[at..at + self.n].to_vec() }
            })
            .collect()
    }
}

fn lockstep<R: Block, D: Block, S: Stimulus>(
    r: &mut R,
    d: &mut D,
    stim: &mut S,
    pairing: &Pairing,
    cfg: &DiffConfig,
    extract: Option<Extract<'_>>,
    vcd: Option<WaveOut<'_>>,
) -> Result<DiffReport, DiffError> {
    let n = r.ports().len();
    let mut inputs = vec![0u128; n];
    // The DUT's inputs in its own port order, when that differs from the reference's.
    let mut dut_inputs = vec![0u128; if pairing.same_order { 0 } else { d.ports().len() }];
    let mut history = History::new(n, cfg.history);
    // The DUT's port values, cycle by cycle (in its own port order).
    let mut dut_history = History::new(d.ports().len(), cfg.history);
    // One waveform of both sides and a mismatch bit per output port (replay with VCDs only).
    let mut merged: Option<crate::vcd_out::MergedVcd> = None;
    let one_bit: Vec<usize> = pairing.outputs.iter().map(|&(i, _, _)| i).filter(|&i| r.ports()[i].width == 1).collect();
    let mut high = vec![0u64; one_bit.len()];
    let cycles = cfg.cycles.min(stim.cycles().unwrap_or(u64::MAX));
    // Cycles run: fewer than `cycles` when the coverage goal is met first.
    let mut ran = cycles;
    let mut board = extract.map(|(_, _, sb)| Scoreboard::new(sb, cfg.history));
    let mut monitors = if cfg.monitors.is_empty() {
        None
    } else {
        let m = crate::monitor::Monitors::new(&cfg.monitors, r.ports()).map_err(DiffError::Ports)?;
        let m = m.with_reset(r.reset(), r.ports());
        let n = crate::monitor::Monitors::new(&cfg.monitors, d.ports()).map_err(DiffError::Ports)?;
        Some((m, n.with_reset(d.reset(), d.ports())))
    };
    let (rsig, dsig) = (crate::block::signal_ports(r.signals()), crate::block::signal_ports(d.signals()));
    let mut cover = if cfg.coverage.is_empty() {
        None
    } else {
        check_signals(&cfg.coverage, &rsig, &dsig)?;
        let m = Coverage::with_signals(&cfg.coverage, r.ports(), &rsig).map_err(DiffError::Ports)?;
        Some((m, Coverage::with_signals(&cfg.coverage, d.ports(), &dsig).map_err(DiffError::Ports)?))
    };
    // Ports then internal signals, for the cover points on signals (empty when none are read).
    let reads_signals = cfg.coverage.iter().any(|c| !c.signals().is_empty());
    let mut rbuf = vec![0u128; if reads_signals && !rsig.is_empty() { n + rsig.len() } else { 0 }];
    let mut dbuf = vec![0u128; if reads_signals && !dsig.is_empty() { d.ports().len() + dsig.len() } else { 0 }];
    let mut assertions = Vec::new();
    for cycle in 0..cycles {
        if let Some((from, to, (mp, rp), mv)) = vcd {
            if cycle == to.saturating_add(1) {
                // The window is over: flush and close; the run goes on without waveforms.
                r.close_vcd();
                d.close_vcd();
                merged = None;
            }
            if cycle == from {
                r.open_vcd(mp).map_err(|e| DiffError::Sim(cycle, e))?;
                d.open_vcd(rp).map_err(|e| DiffError::Sim(cycle, e))?;
                let outs: Vec<&'static str> = pairing.outputs.iter().map(|&(i, _, _)| r.ports()[i].name).collect();
                let m = crate::vcd_out::MergedVcd::create(mv, cfg.name.as_str(), r.ports(), &outs)
                    .map_err(|e| DiffError::Sim(cycle, VltError::TraceOpen(format!("{}: {e}", mv.display()))))?;
                merged = Some(m);
            }
        }
        stim.drive(cycle, &mut inputs);
        r.set_inputs(&pairing.inputs, &inputs);
        if pairing.same_order {
            d.set_inputs(&pairing.dut_inputs, &inputs);
        } else {
            for (&i, &j) in pairing.inputs.iter().zip(&pairing.dut_inputs) {
                dut_inputs[j] = inputs[i];
            }
            d.set_inputs(&pairing.dut_inputs, &dut_inputs);
        }
        r.settle().map_err(|e| DiffError::Sim(cycle, e))?;
        let settled = d.settle();
        r.read_all(history.start(cycle));
        d.read_all(dut_history.start(cycle));
        // An immediate assertion in combinational logic fails while the inputs settle.
        if let Err(e) = settled {
            return Err(rtl_failure(d, cycle, e, &dut_history));
        }
        let now = history.current();
        let dut_values = dut_history.current();
        if let Some((mr, md)) = monitors.as_mut() {
            let broken = match mr.check(now) {
                Err(v) => Some(("model", v, r.ports().to_vec(), history.records())),
                Ok(()) => md.check(dut_values).err().map(|v| ("RTL", v, d.ports().to_vec(), dut_history.records())),
            };
            if let Some((side, violation, ports, history)) = broken {
                if vcd.is_some() {
                    let _ = (r.posedge(), d.posedge());
                }
                let p = ProtocolViolation { cycle, side, violation, ports, history, vcds: None, merged_vcd: None };
                return Err(DiffError::Protocol(Box::new(p)));
            }
        }
        if let Some(m) = merged.as_mut() {
            let mismatch = pairing.outputs.iter().map(|&(i, q, lw)| {
                let (e, a) = (now[i], dut_values[pairing.to_dut[i]]);
                e != a && cares(e ^ a, q, lw, |q| now[q])
            });
            m.dump(cycle, now, |i| dut_values[pairing.to_dut[i]], mismatch);
        }
        if let (Some((xr, xd, _)), Some(b)) = (extract, board.as_mut()) {
            let mut res: Result<(), Box<ScoreError>> = Ok(());
            xr.extract(
                cycle,
                |i| now[i],
                |t| {
                    if res.is_ok() {
                        res = b.expect(t);
                    }
                },
            );
            xd.extract(
                cycle,
                |i| dut_values[i],
                |t| {
                    if res.is_ok() {
                        res = b.observe(t);
                    }
                },
            );
            if let Err(error) = res.and_then(|_| b.tick(cycle)) {
                if vcd.is_some() {
                    let _ = (r.posedge(), d.posedge());
                }
                let (ports, history) = (r.ports().to_vec(), history.records());
                let div = TxnDivergence { error: *error, ports, history, vcds: None, merged_vcd: None };
                return Err(DiffError::Transactions(Box::new(div)));
            }
        } else {
            let differs = |&&(i, q, lw): &&(usize, usize, u32)| {
                let (e, a) = (now[i], dut_values[pairing.to_dut[i]]);
                e != a && cares(e ^ a, q, lw, |q| now[q])
            };
            if let Some(&(i, _, _)) = pairing.outputs.iter().find(differs) {
                let ports = r.ports().to_vec();
                let differing: Vec<(&'static str, u128, u128)> = pairing
                    .outputs
                    .iter()
                    .filter(differs)
                    .map(|&(j, _, _)| (ports[j].name, now[j], dut_values[pairing.to_dut[j]]))
                    .collect();
                let (expected, actual) = (now[i], dut_values[pairing.to_dut[i]]);
                if vcd.is_some() {
                    // Let both VCDs show the diverging cycle's clock edge too.
                    let _ = (r.posedge(), d.posedge());
                }
                let (history, dut) = (history.records(), dut_history.records());
                // The DUT's records in the reference's port order.
                let dut_history = dut
                    .into_iter()
                    .map(|c| CycleRecord {
                        cycle: c.cycle,
                        values: pairing.to_dut.iter().map(|&j| c.values[j]).collect(),
                    })
                    .collect();
                let div = Divergence {
                    cycle,
                    port: ports[i].name,
                    expected,
                    actual,
                    differing,
                    ports,
                    history,
                    dut_history,
                    vcds: None,
                    merged_vcd: None,
                };
                return Err(DiffError::Diverged(Box::new(div)));
            }
        }
        for (h, &i) in high.iter_mut().zip(&one_bit) {
            *h += now[i] as u64;
        }
        if let Some((m, t)) = cover.as_mut() {
            if rbuf.is_empty() {
                m.sample(now);
            } else {
                rbuf[..n].copy_from_slice(now);
                r.read_signals(&mut rbuf[n..]);
                m.sample(&rbuf);
            }
            if dbuf.is_empty() {
                t.sample(dut_values);
            } else {
                let k = dut_values.len();
                dbuf[..k].copy_from_slice(dut_values);
                d.read_signals(&mut dbuf[k..]);
                t.sample(&dbuf);
            }
            // Every 256 cycles: stop once both sides reached the asked coverage.
            if let Some(p) = cfg.until_coverage {
                if (cycle + 1).is_multiple_of(256) && m.percent() >= p && t.percent() >= p {
                    ran = cycle + 1;
                    r.posedge().map_err(|e| DiffError::Sim(cycle, e))?;
                    d.posedge().map_err(|e| DiffError::Sim(cycle, e))?;
                    break;
                }
            }
        }
        stim.observe(cycle, history.current());
        r.posedge().map_err(|e| DiffError::Sim(cycle, e))?;
        if let Err(e) = d.posedge() {
            return Err(rtl_failure(d, cycle, e, &dut_history));
        }
        // Assertions that failed without stopping the RTL ($warning, $info), this cycle.
        let notes = d.take_assertion_notes();
        if !notes.is_empty() {
            report::count_notes(&mut assertions, notes, cycle);
        }
    }
    let transactions = match board.as_mut() {
        Some(b) => Some(b.finish(ran.saturating_sub(1)).map_err(|error| {
            let (ports, history) = (r.ports().to_vec(), history.records());
            DiffError::Transactions(Box::new(TxnDivergence {
                error: *error,
                ports,
                history,
                vcds: None,
                merged_vcd: None,
            }))
        })?),
        None => None,
    };
    let high_cycles = one_bit.iter().zip(high).map(|(&i, h)| (r.ports()[i].name, h)).collect();
    let coverage = cover.map(|(m, t)| (m.report(), t.report()));
    let (cover_properties, assertion_passes) = (d.cover_properties(), d.assertion_passes());
    Ok(DiffReport {
        cycles: ran,
        high_cycles,
        transactions,
        coverage,
        waves: None,
        cover_properties,
        assertions,
        assertion_passes,
    })
}

/// Every internal signal a cover point reads is on one side at least.
fn check_signals(covers: &[crate::coverage::Cover], r: &[PortInfo], d: &[PortInfo]) -> Result<(), DiffError> {
    for c in covers {
        for s in c.signals() {
            if !r.iter().chain(d).any(|p| p.name == s) {
                let public: Vec<&str> = r.iter().chain(d).map(|p| p.name).collect();
                let public = if public.is_empty() { "none".to_string() } else { public.join(", ") };
                return Err(DiffError::Ports(format!(
                    "cover point {}: no internal signal {s} on either side (public signals: {public})",
                    c.name
                )));
            }
        }
    }
    Ok(())
}

/// The RTL's error `e` in `cycle`: a failed assertion named by its label with the RTL's
/// history, or the bare error.
fn rtl_failure<D: Block>(d: &D, cycle: u64, e: VltError, history: &History) -> DiffError {
    match d.failed_assertion(&e) {
        Some((label, location)) => DiffError::Assertion(Box::new(AssertionFailure {
            cycle,
            label,
            location,
            ports: d.ports().to_vec(),
            history: history.records(),
            vcds: None,
            merged_vcd: None,
        })),
        None => DiffError::Sim(cycle, e),
    }
}

/// Whether a difference `x` (expected XOR actual) on a port matters: always without a
/// qualifier; with a 1-bit qualifier when it is 1; per lane of width `lw` otherwise.
fn cares(x: u128, q: usize, lw: u32, qualifier: impl Fn(usize) -> u128) -> bool {
    if q == usize::MAX {
        return true;
    }
    let qv = qualifier(q);
    if lw == 0 {
        return qv == 1;
    }
    let mask = if lw >= 128 { u128::MAX } else { (1 << lw) - 1 };
    (0..128 / lw.max(1)).any(|k| qv >> k & 1 == 1 && (x >> (k * lw)) & mask != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records cycles `0..cycles` (cycle `c` writes `[c, 10 c]`) into a ring of `len`.
    fn ring(len: usize, cycles: u64) -> Vec<CycleRecord> {
        let mut h = History::new(2, len);
        for c in 0..cycles {
            h.start(c).copy_from_slice(&[c as u128, 10 * c as u128]);
            assert_eq!(h.current(), [c as u128, 10 * c as u128]);
        }
        h.records()
    }

    #[test]
    fn history_keeps_the_last_cycles_oldest_first() {
        let rec = |c: u64| CycleRecord { cycle: c, values: vec![c as u128, 10 * c as u128] };
        assert_eq!(ring(8, 3), (0..3).map(rec).collect::<Vec<_>>());
        assert_eq!(ring(8, 8), (0..8).map(rec).collect::<Vec<_>>());
        assert_eq!(ring(8, 9), (1..9).map(rec).collect::<Vec<_>>());
        assert_eq!(ring(8, 1003), (995..1003).map(rec).collect::<Vec<_>>());
        assert_eq!(ring(1, 5), vec![rec(4)]);
        assert!(ring(0, 5).is_empty());
    }
}
