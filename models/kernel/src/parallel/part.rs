//! What one partition's simulation does at a window boundary: run its window, hand out the
//! cut-link traffic it produced, take in what the others sent it, and summarise itself.

use super::Summary;
use crate::error::RunError;
use crate::link::LinkStats;
use crate::sched::State;
use crate::sim::Simulation;
use crate::stats::{StatsReport, StatsWriter};
use crate::time::Time;
use crate::trace_state::Captured;
use std::any::Any;

/// Cut-link traffic from one partition to another in one window: per arena (payload type) a
/// typed batch, plus returned credits as (link id, time back). Reused window after window.
#[derive(Default)]
pub(crate) struct Mail {
    pub batches: Vec<Option<Box<dyn Any + Send>>>,
    pub credits: Vec<(u32, Time)>,
}

/// A link's sender is in the partition ([`PartReport::links`]).
pub(crate) const SIDE_SRC: u8 = 1;
/// A link's receiver is in the partition.
pub(crate) const SIDE_DST: u8 = 2;
/// The link keeps no statistics ([`crate::SimBuilder::keep_link_stats_where`] left it out):
/// both its ends say so, and the merged report leaves it out as a serial report does.
pub(crate) const UNRECORDED: u8 = 4;

/// A partition's share of the final statistics.
pub(crate) struct PartReport {
    /// Its own components' statistics.
    pub comps: StatsReport,
    /// Statistics of every link with an end here.
    pub links: Vec<PartLink>,
    pub ticks: u64,
    /// Components the report filter left out that would have written something.
    pub left_out: u64,
}

/// One link's statistics as a partition with an end of it reports them.
pub(crate) struct PartLink {
    /// The link.
    pub id: u32,
    /// Its statistics here (empty if it keeps none).
    pub stats: LinkStats,
    /// [`SIDE_SRC`] | [`SIDE_DST`] for the ends here | [`UNRECORDED`] if it keeps none.
    pub sides: u8,
    /// Its name, from the sender's partition of a link that keeps statistics (empty
    /// otherwise): the merged report names each link by what its sender's partition
    /// declared, so no partition needs every link's name.
    pub name: String,
}

impl Simulation {
    /// Runs every time step before `end`, then stands at `end`. Returns the time of the last
    /// step run, if any.
    pub(crate) fn run_window(&mut self, end: Time) -> Option<Time> {
        let mut last = None;
        loop {
            let t = self.core.sched.next_time();
            if t >= end {
                break;
            }
            self.step(t);
            self.note_progress(t);
            last = Some(t);
        }
        self.core.now = self.core.now.max(end);
        last
    }

    /// Moves this window's messages and credits for partition `dst` into `mail`. Returns the
    /// earliest time among them (a lower bound of the next event they cause), or NEVER.
    pub(crate) fn export_to(&mut self, dst: u32, mail: &mut Mail) -> (Time, u64) {
        let arenas = &mut self.core.links.arenas;
        if mail.batches.len() < arenas.len() {
            mail.batches.resize_with(arenas.len(), || None);
        }
        let (mut first, mut msgs) = (Time::NEVER, 0);
        for (a, arena) in arenas.iter_mut().enumerate() {
            let (t, n) = arena.export(dst, &mut mail.batches[a]);
            first = first.min(t);
            msgs += n;
        }
        let credits = &mut self.core.credits_out[dst as usize];
        for &(_, t) in credits.iter() {
            first = first.min(t);
        }
        mail.credits.append(credits);
        (first, msgs)
    }

    /// [`Simulation::export_to`] as bytes for a partition in another process: per arena with
    /// traffic `arena, messages...`, then `u32::MAX`, then the credits.
    pub(crate) fn export_bytes_to(&mut self, dst: u32, out: &mut Vec<u8>) -> Result<(Time, u64), String> {
        use super::wire::{put_u32, put_u64};
        let (mut first, mut msgs) = (Time::NEVER, 0);
        for (a, arena) in self.core.links.arenas.iter_mut().enumerate() {
            let at = out.len();
            put_u32(out, a as u32);
            let (t, n) = arena.export_bytes(dst, out)?;
            if n == 0 {
                out.truncate(at);
            }
            first = first.min(t);
            msgs += n;
        }
        put_u32(out, u32::MAX);
        let credits = &mut self.core.credits_out[dst as usize];
        put_u32(out, credits.len() as u32);
        for (link, t) in credits.drain(..) {
            first = first.min(t);
            put_u32(out, link);
            put_u64(out, t.as_ps());
        }
        Ok((first, msgs))
    }

    /// [`Simulation::import_from`] from bytes written by [`Simulation::export_bytes_to`];
    /// leaves the reader after them.
    pub(crate) fn import_bytes_from(
        &mut self,
        r: &mut super::wire::Reader<'_>,
        touched: &mut Vec<u32>,
    ) -> Result<(), String> {
        let now = self.core.now;
        let core = &mut self.core;
        core.sched.floor = now;
        loop {
            let a = r.u32()?;
            if a == u32::MAX {
                break;
            }
            let arena = core.links.arenas.get_mut(a as usize).ok_or_else(|| format!("arena {a} out of range"))?;
            let sched = &mut core.sched;
            let n = arena.import_bytes(r, &mut |dst, at, newly| sched.import_arrival(dst.0, at, a, newly))?;
            core.in_links += n;
        }
        for _ in 0..r.u32()? {
            let link = r.u32()?;
            let back = Time::from_ps(r.u64()?);
            let rf = *core.links.refs.get(link as usize).ok_or_else(|| format!("link {link} out of range"))?;
            core.import_credit(rf, back);
            touched.push(link);
        }
        Ok(())
    }

    /// Takes in `mail` from another partition: messages go into receive buffers (waking their
    /// receivers at arrival), credits into the senders' pending returns. Call
    /// [`Simulation::finish_import`] after the last mail of the window.
    pub(crate) fn import_from(&mut self, mail: &mut Mail, touched: &mut Vec<u32>) {
        let now = self.core.now;
        let core = &mut self.core;
        core.sched.floor = now;
        for (a, batch) in mail.batches.iter_mut().enumerate() {
            let Some(batch) = batch.as_deref_mut() else { continue };
            let sched = &mut core.sched;
            let n = core.links.arenas[a]
                .import(batch, &mut |dst, at, newly| sched.import_arrival(dst.0, at, a as u32, newly));
            core.in_links += n;
        }
        for (link, back) in mail.credits.drain(..) {
            let r = core.links.refs[link as usize];
            core.import_credit(r, back);
            touched.push(link);
        }
    }

    /// Closes a window's import: settles cut-link occupancy and wakes senders that are asleep
    /// with no credits at the first credit coming back (what a serial run does when the
    /// receiver returns a credit to a blocked sender).
    pub(crate) fn finish_import(&mut self, touched: &mut Vec<u32>) {
        let now = self.core.now;
        for arena in self.core.links.arenas.iter_mut() {
            arena.settle();
        }
        touched.sort_unstable();
        touched.dedup();
        for &link in touched.iter() {
            let r = self.core.links.refs[link as usize];
            let t = self.core.links.arenas[r.arena as usize].timing_mut(r.slot);
            let src = t.src.0;
            // Credits held just before `now` (every imported return is at `now` or later).
            t.refresh(Time::from_ps(now.as_ps().saturating_sub(1)));
            if t.wants && t.credits == 0 {
                let first = t.returns.first();
                if !first.is_never() && self.core.sched.meta[src as usize].state == State::Asleep {
                    self.core.sched.arm(src, first);
                }
            }
        }
        touched.clear();
    }

    /// This partition's summary for the window-end reduction. `in_transit` messages were just
    /// exported (they count as in links, as in a serial run). `outstanding` (a scan of every
    /// component) is only computed when it can matter: when this partition's next event is
    /// past `deadline` (the last progress plus the deadlock window) or there is none.
    pub(crate) fn summary(&self, out_bound: Time, in_transit: u64, deadline: Time, last_step: Time) -> Summary {
        let next = self.core.sched.next_time().min(out_bound);
        let outstanding = next > deadline && self.comps.iter().any(|c| c.has_outstanding_work());
        Summary {
            next,
            in_links: self.core.in_links + in_transit,
            outstanding,
            abort: false,
            last_step,
            last_progress: self.last_progress_time(),
        }
    }

    /// Takes the trace records captured this window.
    pub(crate) fn take_capture(&mut self, into: &mut Captured) {
        if let Some(c) = self.core.trace.as_mut().and_then(|t| t.capture.as_mut()) {
            std::mem::swap(c, into);
        }
    }

    /// This partition's statistics: its components' own, and every link with an end here.
    /// Partition 0 hands over its link records (names included) for the merge: the last use
    /// of the simulation.
    pub(crate) fn part_report(&mut self, end: Time, keep: Option<&dyn Fn(&str) -> bool>) -> PartReport {
        let me = self.part.as_ref().expect("a partition").me;
        let part_of = &self.part.as_ref().expect("a partition").plan.part_of;
        let mut comps = StatsReport::default();
        let mut left_out = 0;
        for (i, c) in self.comps.iter().enumerate() {
            if part_of[i] == me {
                let name = &self.component_names()[i];
                if keep.is_none_or(|k| k(name)) {
                    c.report(&mut StatsWriter::new(name, &mut comps, end));
                } else {
                    // As `Simulation::report_where` counts: an owner exists only if the
                    // component writes something.
                    let mut probe = StatsWriter::probe(name, end);
                    c.report(&mut probe);
                    left_out += u64::from(probe.wrote());
                }
            }
        }
        let mut links = Vec::new();
        for (i, l) in self.links.iter() {
            let (src, dst) = (part_of[l.src.index()] == me, part_of[l.dst.index()] == me);
            if !(src || dst) {
                continue;
            }
            let r = self.core.links.refs[i];
            let arena = &self.core.links.arenas[r.arena as usize];
            let sides = (u8::from(src) * SIDE_SRC) | (u8::from(dst) * SIDE_DST);
            let id = i as u32;
            if arena.records(r.slot) {
                let name = if src { l.name.clone() } else { String::new() };
                links.push(PartLink { id, stats: arena.stats(r.slot).clone(), sides, name });
            } else {
                links.push(PartLink {
                    id,
                    stats: LinkStats::default(),
                    sides: sides | UNRECORDED,
                    name: String::new(),
                });
            }
        }
        PartReport { comps, links, ticks: self.counters.ticks, left_out }
    }

    /// Whether a trace error happened in this partition.
    pub(crate) fn trace_failed(&mut self) -> Option<RunError> {
        self.core.trace.as_mut().and_then(|t| t.error.take()).map(RunError::Trace)
    }
}
