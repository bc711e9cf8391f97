//! Power over time in a traced cycle-level run (`trnsim run e2e-llm-layer --trace t.pftrace`,
//! `tp-matmul-N`, `moe-alltoall-144`): the run advances in steps of [`SAMPLE`] of simulated
//! time; after each step the action counters energy is priced from
//! ([`trnsim_system::energy_stats::Counts`]) are read once per chip, and the energy of the
//! step, priced by the chip's table, over the step's length is each component's power. Under a
//! root group `power`, each chip (`chip000`, ...) and the switches get a counter `power, chip
//! total (W)` (static power included; `power, switches total (W)`) and one per component that
//! draws, `power, tensor (W)`, ..., each sample placed at its step's start, so a counter's step
//! function integrates to the run's energy exactly (up to the trace's nanosecond timestamps).
//!
//! Cost: nothing per simulated cycle; one read of the counting components' and links' action
//! counters per step ([`trnsim_kernel::Component::counters`]: plain fields, no names built,
//! nothing allocated; which components and links count is found once from their names), so
//! a run of `T` simulated time pays `T / SAMPLE` reads however busy or idle its components
//! are. Left out: bursts shorter
//! than a step (a sample is the step's mean power); power is priced at the end of each step,
//! so the first step of a command that ends in the next one is counted in the next.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use trnsim_fabric::topo::Topology;
use trnsim_kernel::{
    ComponentId, Dur, RecordKind, RunError, Simulation, Stop, Time, TraceError, TraceRecord, TraceSink, TrackDecl,
    TrackId, TrackKind,
};
use trnsim_system::chip::Chip;
use trnsim_system::energy::{chip_static_w, EnergyTable};
use trnsim_system::energy_stats::{price, wired_ports, Counts, Role, PARTS};

/// Simulated time between two power samples.
pub const SAMPLE: Dur = Dur::from_ns(100);

/// The index of the static part in [`PARTS`] (a track of it is the group's total).
const TOTAL: usize = PARTS.len() - 1;

/// The trace sink a run writes to, shared with the sampler that adds the power tracks.
struct Inner {
    sink: Box<dyn TraceSink>,
    /// The first track id no declaration has used.
    next_id: u32,
}

struct Shared(Rc<RefCell<Inner>>);

impl TraceSink for Shared {
    fn declare(&mut self, track: &TrackDecl) -> Result<(), TraceError> {
        let mut i = self.0.borrow_mut();
        i.next_id = i.next_id.max(track.id.0.saturating_add(1));
        i.sink.declare(track)
    }
    fn record(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        self.0.borrow_mut().sink.record(rec)
    }
    fn finish(&mut self, end: Time) -> Result<(), TraceError> {
        self.0.borrow_mut().sink.finish(end)
    }
}

/// The power tracks of one traced run.
pub struct Sampler {
    inner: Rc<RefCell<Inner>>,
    table: Arc<EnergyTable>,
    chip: Chip,
    chips: usize,
    /// Static power of each chip, then of the switches, W.
    static_w: Vec<f64>,
    /// Counts at the last sample, per group (the chips, then the switches).
    prev: Vec<Counts>,
    /// Counts now, per group (read into at each sample; the buffer is reused).
    cur: Vec<Counts>,
    /// What a sample reads (found at the first sample).
    plan: Option<Plan>,
    /// Each group's track and its counters ([`PARTS`] order; the total at [`TOTAL`]).
    tracks: Vec<(Option<TrackId>, [Option<TrackId>; PARTS.len()])>,
    /// The value each counter last took.
    last: Vec<[f64; PARTS.len()]>,
    root: Option<TrackId>,
    at: Time,
}

/// A run's trace sink with what to trace on links.
pub type Trace = Option<(Box<dyn TraceSink>, trnsim_kernel::TraceOptions)>;

/// `trace` with power tracks when `chip` has an energy table: the trace to attach and its
/// sampler (None: no trace, or no table).
pub fn attach(trace: Trace, chip: &Chip, topo: Option<&Topology>) -> (Trace, Option<Sampler>) {
    let Some(table) = chip.energy.clone() else { return (trace, None) };
    let Some((sink, opts)) = trace else { return (None, None) };
    let inner = Rc::new(RefCell::new(Inner { sink, next_id: 0 }));
    let chips = topo.map_or(1, |t| t.chips);
    let (ports, switch_ports) = wired_ports(topo, chips);
    let mut static_w: Vec<f64> = ports.iter().map(|&p| chip_static_w(&table, chip, p).iter().sum()).collect();
    static_w.push(f64::from(switch_ports) * table.fabric_switch.static_w_per_port);
    let sampler = Sampler {
        inner: inner.clone(),
        table,
        chip: chip.clone(),
        chips,
        static_w,
        prev: vec![Counts::default(); chips + 1],
        cur: vec![Counts::default(); chips + 1],
        plan: None,
        tracks: vec![(None, [None; PARTS.len()]); chips + 1],
        last: vec![[f64::NAN; PARTS.len()]; chips + 1],
        root: None,
        at: Time::ZERO,
    };
    (Some((Box::new(Shared(inner)) as Box<dyn TraceSink>, opts)), Some(sampler))
}

/// The components and links whose counters a sample reads, each with its group and role.
struct Plan {
    comps: Vec<(ComponentId, usize, Role)>,
    links: Vec<(usize, usize, Role)>,
}

impl Plan {
    /// The counting components and links of `sim`, by their names (as [`Counts::of`] reads a
    /// report's owners), grouped over `chips` chips and the switches.
    fn of(sim: &Simulation, chips: usize) -> Plan {
        let comps = (sim.component_names().iter().enumerate())
            .filter_map(|(i, n)| Some((ComponentId::from_index(i), group_of(n, chips), Role::of(n)?)))
            .collect();
        let links = (sim.links().iter().enumerate())
            .filter_map(|(i, l)| Some((i, group_of(&format!("link:{}", l.name), chips), Role::of_link(&l.name)?)))
            .collect();
        Plan { comps, links }
    }
}

/// The group (chip index, or `chips` for the switches) a report owner's counts belong to:
/// `chip003.nc0.tensor`, `us1.chip0070...`, a link by its sender (an EFA switch's link to a
/// chip by that chip, whose NIC receives it), a single chip's `nc0.tensor` to chip 0.
fn group_of(owner: &str, chips: usize) -> usize {
    let (node, peer) = match owner.strip_prefix("link:") {
        Some(l) => {
            let from = l.split(" -> ").next().unwrap_or("");
            from.split_once(".tx.").unwrap_or((from, ""))
        }
        None => (owner, ""),
    };
    let chip_of = |name: &str| -> Option<usize> {
        let mut parts = name.split('.');
        let first = parts.next()?;
        let c = if first.starts_with("us") { parts.next()? } else { first };
        c.strip_prefix("chip").filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()
    };
    if chips == 1 {
        return 0;
    }
    match chip_of(node) {
        Some(c) if c < chips => c,
        _ if node.starts_with("efa.") => chip_of(peer).filter(|&c| c < chips).unwrap_or(chips),
        _ => chips,
    }
}

impl Sampler {
    /// Runs `sim` as `Simulation::run_until_idle(limit)` does, sampling power every [`SAMPLE`];
    /// writes each group's last values and the idle power at the end.
    pub fn run(&mut self, sim: &mut Simulation, limit: Dur) -> Result<Stop, RunError> {
        let start = sim.now();
        self.at = start;
        let stop = loop {
            let left = limit.as_ps().saturating_sub(sim.now().since(start).as_ps());
            let stop = sim.run_for(Dur::from_ps(left.min(SAMPLE.as_ps())))?;
            self.sample(sim).map_err(RunError::Trace)?;
            if stop != Stop::Limit || sim.now().since(start) >= limit {
                break stop;
            }
        };
        self.close(sim.now()).map_err(RunError::Trace)?;
        Ok(stop)
    }

    /// Reads the counts of `sim` now, per group, into `self.cur` (the counting components'
    /// and links' counters, found once from their names: nothing named, gathered or
    /// allocated per sample).
    fn read(&mut self, sim: &Simulation) {
        let chips = self.chips;
        let plan = self.plan.get_or_insert_with(|| Plan::of(sim, chips));
        self.cur.iter_mut().for_each(|c| *c = Counts::default());
        for &(id, g, role) in &plan.comps {
            let c = &mut self.cur[g];
            sim.read_counters(id, &mut |name, n| c.add_count(role, name, n));
        }
        for &(id, g, role) in &plan.links {
            if let Some(bytes) = sim.link_bytes(id) {
                self.cur[g].add_count(role, "bytes", bytes);
            }
        }
    }

    fn sample(&mut self, sim: &Simulation) -> Result<(), TraceError> {
        let now = sim.now();
        let dt_s = now.since(self.at).as_ps() as f64 * 1e-12;
        if dt_s <= 0.0 {
            return Ok(());
        }
        self.read(sim);
        for g in 0..self.cur.len() {
            let e = price(&self.cur[g].since(&self.prev[g]), &self.table, &self.chip, None);
            let mut w = [0.0; PARTS.len()];
            for (k, j) in e.parts_j.iter().enumerate().take(TOTAL) {
                w[k] = j / dt_s;
            }
            w[TOTAL] = self.static_w[g] + w[..TOTAL].iter().sum::<f64>();
            self.put(g, self.at, &w)?;
        }
        std::mem::swap(&mut self.prev, &mut self.cur);
        self.at = now;
        Ok(())
    }

    /// After the run: each group draws its static power only (each total written, so that
    /// every counter ends at the run's end).
    fn close(&mut self, end: Time) -> Result<(), TraceError> {
        for g in 0..=self.chips {
            let mut w = [0.0; PARTS.len()];
            w[TOTAL] = self.static_w[g];
            self.last[g][TOTAL] = f64::NAN;
            self.put(g, end, &w)?;
        }
        Ok(())
    }

    /// Writes group `g`'s counters that changed to `w` at `t`, declaring tracks on first use.
    fn put(&mut self, g: usize, t: Time, w: &[f64; PARTS.len()]) -> Result<(), TraceError> {
        for k in (0..PARTS.len()).rev() {
            if w[k] == self.last[g][k] || (w[k] == 0.0 && self.tracks[g].1[k].is_none()) {
                continue;
            }
            let id = match self.tracks[g].1[k] {
                Some(id) => id,
                None => self.declare(g, k)?,
            };
            self.last[g][k] = w[k];
            let rec = TraceRecord { time: t, track: id, kind: RecordKind::Counter { value: w[k] } };
            self.inner.borrow_mut().sink.record(&rec)?;
        }
        Ok(())
    }

    fn declare(&mut self, g: usize, k: usize) -> Result<TrackId, TraceError> {
        let new = |parent: Option<TrackId>, name: String, kind: TrackKind| -> Result<TrackId, TraceError> {
            let mut i = self.inner.borrow_mut();
            let id = TrackId(i.next_id);
            i.next_id += 1;
            i.sink.declare(&TrackDecl { id, parent, name, kind })?;
            Ok(id)
        };
        let root = match self.root {
            Some(r) => r,
            None => {
                let r = new(None, "power".into(), TrackKind::Group)?;
                self.root = Some(r);
                r
            }
        };
        let group = match self.tracks[g].0 {
            Some(id) => id,
            None => {
                let w = self.chips.to_string().len().max(3);
                let name = if g < self.chips { format!("chip{g:0w$}") } else { "switches".into() };
                let id = new(Some(root), name, TrackKind::Group)?;
                self.tracks[g].0 = Some(id);
                id
            }
        };
        let name = match (k, g < self.chips) {
            (TOTAL, true) => "power, chip total (W)".to_string(),
            (TOTAL, false) => "power, switches total (W)".to_string(),
            _ => format!("power, {} (W)", PARTS[k]),
        };
        let id = new(Some(group), name, TrackKind::Counter { unit: "W" })?;
        self.tracks[g].1[k] = Some(id);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::group_of;

    #[test]
    fn owners_group_by_their_chip_and_links_by_their_sender() {
        assert_eq!(group_of("nc3.tensor", 1), 0);
        assert_eq!(group_of("chip007.nc3.tensor", 64), 7);
        assert_eq!(group_of("chip007.hbm2", 64), 7);
        assert_eq!(group_of("link:chip012.tx.sw003.0 -> sw003.rx.chip012.0", 64), 12);
        assert_eq!(group_of("link:sw003.tx.chip012.0 -> chip012.rx.sw003.0", 64), 64);
        assert_eq!(group_of("us1.chip0070.nc0.tensor", 128), 70);
        assert_eq!(group_of("link:efa.leaf0.tx.us1.chip0070.0 -> us1.chip0070.rx.efa.leaf0.0", 128), 70);
        assert_eq!(group_of("link:efa.leaf0.tx.efa.spine1.0 -> efa.spine1.rx.efa.leaf0.0", 128), 128);
    }
}
