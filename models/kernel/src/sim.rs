//! A built simulation: the run loop (wake-ups, evaluate, update), run control, statistics and
//! the deadlock detector.

use crate::component::{Activity, Component, ComponentId};
use crate::ctx::{Core, Ctx};
use crate::error::{BlockedComponent, DeadlockReport, RunError};
use crate::link::{LinkId, LinkSpec};
use crate::rng::SimRng;
use crate::sched::{Sched, State};
use crate::stats::{StatsReport, StatsWriter};
use crate::time::{ClockId, Cycles, Dur, Time};
use crate::trace::{TraceError, TraceSink, TrackDecl, TrackId, TrackKind};
use crate::trace_state::{LinkTracks, TraceState};
use std::any::Any;

/// Run-wide options.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// The run's seed (components derive their streams from it with [`SimRng::new`]).
    pub seed: u64,
    /// Order of ticks within a time step. Results never depend on it; the other orders exist
    /// to prove that in tests.
    pub tick_order: TickOrder,
    /// Stop with a deadlock report when work is outstanding and nothing has moved for this
    /// long (simulated time).
    pub deadlock_window: Dur,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { seed: 1, tick_order: TickOrder::Structural, deadlock_window: Dur::from_us(100) }
    }
}

/// Order in which the components due at one time step are ticked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TickOrder {
    /// By clock domain, then in the order they became due (deterministic).
    Structural,
    /// Reversed structural order (for order-independence tests).
    Reversed,
    /// A seeded random permutation per step (for order-independence tests).
    Shuffled(u64),
}

/// What to trace on links when a sink is attached.
#[derive(Clone, Debug, Default)]
pub struct TraceOptions {
    /// A counter track of messages in each link.
    pub link_occupancy: bool,
    /// Links whose `valid`, `data` and `credits` are traced as waveform signals (for VCD).
    pub signal_links: LinkSelection,
}

/// A choice of links.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LinkSelection {
    /// No link.
    #[default]
    None,
    /// Every link of the simulation.
    All,
    /// Just these.
    Only(Vec<LinkId>),
}

impl LinkSelection {
    /// Whether link `id` is selected.
    pub fn contains(&self, id: LinkId) -> bool {
        match self {
            LinkSelection::None => false,
            LinkSelection::All => true,
            LinkSelection::Only(v) => v.contains(&id),
        }
    }
}

/// Static facts about one link.
#[derive(Clone, Debug)]
pub struct LinkInfo {
    /// "src.port -> dst.port".
    pub name: String,
    /// Sending component.
    pub src: ComponentId,
    /// Receiving component.
    pub dst: ComponentId,
    /// Its parameters.
    pub spec: LinkSpec,
}

/// Every link's static facts, by link id. A partition keeps none for a link with no end among
/// its components (nothing there reads them; the merged statistics name each link as its
/// sender's partition reports it): a large system's partitions then hold a few bytes per such
/// link instead of its whole record.
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkInfos {
    infos: Vec<LinkInfo>,
    /// Empty while every link has its facts (`infos[id]`); otherwise, by id, the index of its
    /// facts in `infos` or [`LinkInfos::NONE`].
    at: Vec<u32>,
}

impl LinkInfos {
    const NONE: u32 = u32::MAX;

    /// Room for `n` links without growing (a partition's: most links' facts are kept
    /// elsewhere, so the by-id table gets the room).
    pub(crate) fn with_capacity(n: usize) -> LinkInfos {
        LinkInfos { infos: Vec::new(), at: Vec::with_capacity(n) }
    }

    /// Adds the next link's facts (`None`: not kept here).
    /// `n` links with no facts kept ([`LinkInfos::push`] of `None`, `n` times).
    pub(crate) fn push_none(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.push(None);
        let len = self.at.len() + n - 1;
        self.at.resize(len, Self::NONE);
    }

    pub(crate) fn push(&mut self, info: Option<LinkInfo>) {
        match info {
            Some(i) if self.at.is_empty() => self.infos.push(i),
            Some(i) => {
                self.at.push(u32::try_from(self.infos.len()).unwrap_or(Self::NONE));
                self.infos.push(i);
            }
            None => {
                if self.at.is_empty() {
                    self.at = (0..self.infos.len()).map(|i| u32::try_from(i).unwrap_or(Self::NONE)).collect();
                }
                self.at.push(Self::NONE);
            }
        }
    }

    /// Links declared (kept here or not).
    pub(crate) fn len(&self) -> usize {
        if self.at.is_empty() {
            self.infos.len()
        } else {
            self.at.len()
        }
    }

    /// Link `id`'s facts, if kept here.
    pub(crate) fn get(&self, id: usize) -> Option<&LinkInfo> {
        if self.at.is_empty() {
            self.infos.get(id)
        } else {
            self.at.get(id).filter(|&&i| i != Self::NONE).map(|&i| &self.infos[i as usize])
        }
    }

    /// (id, facts) of every link kept here, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &LinkInfo)> {
        (0..self.len()).filter_map(move |id| self.get(id).map(|l| (id, l)))
    }

    /// Every link's facts, by id, if all are kept here.
    pub(crate) fn all(&self) -> Option<&[LinkInfo]> {
        self.at.is_empty().then_some(self.infos.as_slice())
    }
}

impl std::ops::Index<usize> for LinkInfos {
    type Output = LinkInfo;
    /// Link `id`'s facts (kept wherever the link has an end).
    fn index(&self, id: usize) -> &LinkInfo {
        self.get(id).expect("a link's facts are kept where it has an end")
    }
}

/// Why a run call returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The time limit was reached.
    Limit,
    /// Nothing is scheduled any more and no work is outstanding.
    Idle,
    /// The caller's condition became true.
    Condition,
}

/// Counters about the kernel's own work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelCounters {
    /// Time steps evaluated.
    pub steps: u64,
    /// Component ticks.
    pub ticks: u64,
}

/// A built simulation. Components and links are fixed; run it in one or more `run_*` calls.
pub struct Simulation {
    pub(crate) core: Core,
    pub(crate) comps: Vec<Box<dyn Component>>,
    names: Vec<String>,
    pub(crate) links: LinkInfos,
    pub(crate) decls: Vec<TrackDecl>,
    pub(crate) comp_tracks: Vec<TrackId>,
    pub(crate) opts: SimOptions,
    /// The components ticking in the current step (their domains' pending lists, moved here
    /// whole), and the edge index each domain ticks at (read through the component's domain).
    ticking: Vec<u32>,
    edge_of: Vec<u64>,
    acts: Vec<Activity>,
    order_rng: SimRng,
    pub(crate) counters: KernelCounters,
    last_progress: (u64, Time),
    /// Set when this simulation is one partition of a parallel run.
    pub(crate) part: Option<PartInfo>,
}

/// Which partition of which plan a simulation is.
#[derive(Clone, Debug)]
pub(crate) struct PartInfo {
    pub me: u32,
    pub plan: crate::partition::PartitionPlan,
}

impl Simulation {
    pub(crate) fn new(
        core: Core,
        comps: Vec<Box<dyn Component>>,
        names: Vec<String>,
        links: LinkInfos,
        decls: Vec<TrackDecl>,
        comp_tracks: Vec<TrackId>,
        opts: SimOptions,
    ) -> Simulation {
        let seed = match opts.tick_order {
            TickOrder::Shuffled(s) => s,
            _ => 0,
        };
        // (Clock domains are fixed when the simulation is built.)
        let edge_of = vec![0; core.sched.domains.len()];
        Simulation {
            core,
            comps,
            names,
            links,
            decls,
            comp_tracks,
            opts,
            ticking: Vec::new(),
            edge_of,
            acts: Vec::new(),
            order_rng: SimRng::new(seed, u64::MAX),
            counters: KernelCounters::default(),
            last_progress: (0, Time::ZERO),
            part: None,
        }
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.core.now
    }

    /// Kernel work counters (steps, ticks).
    pub fn counters(&self) -> KernelCounters {
        self.counters
    }

    /// Number of components.
    pub fn component_count(&self) -> usize {
        self.comps.len()
    }

    /// Component names, by id.
    pub fn component_names(&self) -> &[String] {
        &self.names
    }

    /// The id of the component called `name`.
    pub fn component_id(&self, name: &str) -> Option<ComponentId> {
        self.names.iter().position(|n| n == name).map(|i| ComponentId(i as u32))
    }

    /// The component `id`, if it is a `C`.
    pub fn component<C: Component>(&self, id: ComponentId) -> Option<&C> {
        let c: &dyn Any = self.comps.get(id.index())?.as_ref();
        c.downcast_ref::<C>()
    }

    /// The component `id` for mutation between runs (e.g. to take a recorder out), if it is a `C`.
    pub fn component_mut<C: Component>(&mut self, id: ComponentId) -> Option<&mut C> {
        let c: &mut dyn Any = self.comps.get_mut(id.index())?.as_mut();
        c.downcast_mut::<C>()
    }

    /// Static facts about every link, by id (empty in a partition of a partitioned run that
    /// keeps only the facts of its own links).
    pub fn links(&self) -> &[LinkInfo] {
        self.links.all().unwrap_or(&[])
    }

    /// The clock `id`.
    pub fn clock(&self, id: ClockId) -> &crate::time::Clock {
        &self.core.sched.domains[id.index()].clock
    }

    /// Attaches a trace sink: declares every track (components, then the link tracks that
    /// `opts` asks for) and records from now on.
    pub fn attach_trace(&mut self, sink: Box<dyn TraceSink>, opts: &TraceOptions) {
        let mut decls = self.decls.clone();
        let mut link_tracks = vec![LinkTracks::default(); self.links.len()];
        let wants_links = opts.link_occupancy || opts.signal_links != LinkSelection::None;
        let root = if wants_links {
            let id = TrackId(decls.len() as u32);
            decls.push(TrackDecl { id, parent: None, name: "links".into(), kind: TrackKind::Group });
            Some(id)
        } else {
            None
        };
        let credits: Vec<u32> = (0..self.links.len()).map(|i| self.credits_now(i)).collect();
        for (i, l) in self.links.iter() {
            let signals = opts.signal_links.contains(LinkId(i as u32));
            if !(opts.link_occupancy || signals) {
                continue;
            }
            let group = push_decl(&mut decls, root, &l.name, TrackKind::Group);
            let lt = &mut link_tracks[i];
            let d = self.core.sched.meta[l.src.index()].domain as usize;
            lt.src_period = self.core.sched.domains[d].clock.cycles_to_dur(Cycles(1));
            lt.credit_level = credits[i];
            if opts.link_occupancy {
                lt.occupancy =
                    Some(push_decl(&mut decls, Some(group), "occupancy", TrackKind::Counter { unit: "msgs" }));
            }
            if signals {
                lt.valid = Some(push_decl(&mut decls, Some(group), "valid", TrackKind::Signal { width: 1 }));
                lt.data = Some(push_decl(&mut decls, Some(group), "data", TrackKind::Signal { width: 64 }));
                lt.credits = Some(push_decl(&mut decls, Some(group), "credits", TrackKind::Signal { width: 32 }));
            }
        }
        self.core.comp_tracks = self.comp_tracks.clone();
        self.core.trace = Some(Box::new(TraceState::new(sink, &decls, link_tracks)));
    }

    fn credits_now(&mut self, link: usize) -> u32 {
        let r = self.core.links.refs[link];
        let now = self.core.now;
        let t = self.core.links.arenas[r.arena as usize].timing_mut(r.slot);
        t.refresh(now);
        t.credits
    }

    /// Flushes and closes the trace sink, if any. Call once after the last run.
    pub fn finish_trace(&mut self) -> Result<u64, TraceError> {
        match self.core.trace.take() {
            Some(mut st) => {
                let n = st.records;
                st.finish(self.core.now)?;
                Ok(n)
            }
            None => Ok(0),
        }
    }

    /// Runs `n` cycles of `clock` from its current edge: every event before edge `k + n`,
    /// where `k` is the first edge at or after now.
    pub fn run_cycles(&mut self, clock: ClockId, n: u64) -> Result<Stop, RunError> {
        let c = &self.core.sched.domains[clock.index()].clock;
        let k = c.edge_index_at_or_after(self.core.now);
        let end = c.edge(k + n);
        self.run_loop(end, &mut |_| false)
    }

    /// Runs for `d` of simulated time: every event before `now + d`.
    pub fn run_for(&mut self, d: Dur) -> Result<Stop, RunError> {
        let end = self.core.now + d;
        self.run_loop(end, &mut |_| false)
    }

    /// Runs until nothing is scheduled, or until `limit` of simulated time has passed.
    pub fn run_until_idle(&mut self, limit: Dur) -> Result<Stop, RunError> {
        self.run_for(limit)
    }

    /// Runs until `cond` holds (checked after every time step), or `limit` has passed.
    pub fn run_until(&mut self, limit: Dur, mut cond: impl FnMut(&Simulation) -> bool) -> Result<Stop, RunError> {
        let end = self.core.now + limit;
        self.run_loop(end, &mut cond)
    }

    fn run_loop(&mut self, end: Time, cond: &mut dyn FnMut(&Simulation) -> bool) -> Result<Stop, RunError> {
        let r = self.run_steps(end, cond);
        if let Some(e) = self.core.trace.as_mut().and_then(|t| t.error.take()) {
            return Err(RunError::Trace(e));
        }
        if r.is_ok() {
            self.settle(|_| true);
        }
        r
    }

    /// Calls [`Component::settle`] at now on every component `mine` accepts (by dense index).
    pub(crate) fn settle(&mut self, mine: impl Fn(usize) -> bool) {
        let Core { now, sched, .. } = &self.core;
        for (i, c) in self.comps.iter_mut().enumerate() {
            if mine(i) {
                let d = sched.meta[i].domain;
                c.settle(*now, &sched.domains[d as usize].clock);
            }
        }
    }

    fn run_steps(&mut self, end: Time, cond: &mut dyn FnMut(&Simulation) -> bool) -> Result<Stop, RunError> {
        loop {
            let t = self.core.sched.next_time();
            if t.is_never() {
                if self.core.in_links > 0 || self.comps.iter().any(|c| c.has_outstanding_work()) {
                    return Err(RunError::Deadlock(Box::new(self.deadlock_report(Dur::ZERO))));
                }
                return Ok(Stop::Idle);
            }
            if t >= end {
                self.core.now = self.core.now.max(end);
                return Ok(Stop::Limit);
            }
            // Deadlock: work outstanding and no progress for longer than the window since the
            // last step that made progress. (Partitioned runs apply the same rule exactly.)
            if t.since(self.last_progress.1) > self.opts.deadlock_window && self.work_outstanding() {
                let stalled = t.since(self.last_progress.1);
                return Err(RunError::Deadlock(Box::new(self.deadlock_report(stalled))));
            }
            self.step(t);
            self.note_progress(t);
            if cond(self) {
                return Ok(Stop::Condition);
            }
        }
    }

    /// Remembers `t` as the last step that made progress, if it did.
    #[inline]
    pub(crate) fn note_progress(&mut self, t: Time) {
        if self.core.progress != self.last_progress.0 {
            self.last_progress = (self.core.progress, t);
        }
    }

    /// Time of the last step that made progress.
    pub(crate) fn last_progress_time(&self) -> Time {
        self.last_progress.1
    }

    fn work_outstanding(&self) -> bool {
        self.core.in_links > 0 || self.comps.iter().any(|c| c.has_outstanding_work())
    }

    /// One time step at `t`: wake-ups, evaluate every due component, update schedules.
    pub(crate) fn step(&mut self, t: Time) {
        self.core.now = t;
        let sched = &mut self.core.sched;
        sched.wake_due(t);
        self.ticking.clear();
        // Each due domain's pending list moves here whole (the first by a swap of buffers, so
        // a step with one domain due copies nothing); its components stay `Queued` while they
        // tick, which `arm` treats as it treats a queued component.
        // (The domains whose pending list ticks now, in index order.)
        let Sched { edge_at, domains, .. } = sched;
        for (i, at) in edge_at.iter_mut().enumerate() {
            if *at != t {
                continue;
            }
            let d = &mut domains[i];
            self.edge_of[i] = d.cursor.index();
            if self.ticking.is_empty() {
                std::mem::swap(&mut self.ticking, &mut d.pending);
            } else {
                self.ticking.append(&mut d.pending);
            }
            d.cursor.advance(&d.clock);
            *at = Time::NEVER;
        }
        if self.ticking.is_empty() {
            return;
        }
        sched.floor = t + Dur::from_ps(1);
        match self.opts.tick_order {
            TickOrder::Structural => {}
            TickOrder::Reversed => self.ticking.reverse(),
            TickOrder::Shuffled(_) => self.order_rng.shuffle(&mut self.ticking),
        }
        self.evaluate(t);
        self.update(t);
        self.counters.steps += 1;
        self.counters.ticks += self.ticking.len() as u64;
        if let Some(tr) = self.core.trace.as_deref_mut() {
            let links = &self.core.links;
            tr.sample_dirty(t, |l| {
                let r = links.refs[l];
                links.arenas[r.arena as usize].len(r.slot)
            });
            tr.flush(t);
        }
    }

    fn evaluate(&mut self, t: Time) {
        self.acts.clear();
        for &c in &self.ticking {
            let m = &mut self.core.sched.meta[c as usize];
            if m.timer <= t {
                m.timer = Time::NEVER;
            }
            let k = self.edge_of[m.domain as usize];
            let mut cx = Ctx { core: &mut self.core, comp: c, cycle: k };
            self.acts.push(self.comps[c as usize].tick(&mut cx));
        }
    }

    fn update(&mut self, t: Time) {
        let Core { sched, links, .. } = &mut self.core;
        for (i, &c) in self.ticking.iter().enumerate() {
            let m = &mut sched.meta[c as usize];
            m.state = State::Asleep;
            m.wake = Time::NEVER;
            let wake = match self.acts[i] {
                Activity::Busy => t + Dur::from_ps(1),
                Activity::Idle => {
                    // Only the links that may have something later: the active lists hold
                    // every input with a message still in flight and every output that may
                    // be blocked (see `Meta`); the scan drops the rest.
                    let mut w = m.timer;
                    let mut i = 0;
                    while let Some(&a) = m.active_in.get(i) {
                        match links.arenas[a.arena as usize].scan_in(a.slot, t) {
                            None => {
                                m.active_in.swap_remove(i);
                            }
                            Some(next) => {
                                w = w.min(next);
                                i += 1;
                            }
                        }
                    }
                    let mut i = 0;
                    while let Some(&a) = m.active_out.get(i) {
                        let until = links.arenas[a.arena as usize].scan_out(a.slot, t);
                        if until.is_never() {
                            m.active_out.swap_remove(i);
                        } else {
                            w = w.min(until);
                            i += 1;
                        }
                    }
                    w
                }
            };
            if !wake.is_never() {
                sched.arm(c, wake);
            }
        }
    }

    /// All statistics: each component's own, then each link's (under `link:<name>`; links left
    /// without statistics by [`crate::SimBuilder::keep_link_stats_where`] are left out), then
    /// the kernel's (under "kernel").
    pub fn report(&self) -> StatsReport {
        self.report_where(&|_| true).0
    }

    /// The statistics of the components and links whose owner name (`<component>` or
    /// `link:<name>`) `keep` accepts, as [`Simulation::report`] gives them, plus the kernel's;
    /// and how many owners were left out. The left-out ones are never gathered, so a large
    /// system's report costs only what is kept.
    pub fn report_where(&self, keep: &dyn Fn(&str) -> bool) -> (StatsReport, u64) {
        let mut report = StatsReport::default();
        let mut left_out = 0u64;
        let end = self.core.now;
        for (c, name) in self.comps.iter().zip(&self.names) {
            if keep(name) {
                c.report(&mut StatsWriter::new(name, &mut report, end));
            } else {
                // An owner exists only if the component writes something.
                let mut probe = StatsWriter::probe(name, end);
                c.report(&mut probe);
                left_out += u64::from(probe.wrote());
            }
        }
        let mut owner = String::new();
        for (i, l) in self.links.iter() {
            owner.clear();
            owner.push_str("link:");
            owner.push_str(&l.name);
            let r = self.core.links.refs[i];
            if !keep(&owner) || !self.core.links.arenas[r.arena as usize].records(r.slot) {
                left_out += 1; // every link that keeps statistics writes its counts
                continue;
            }
            let st = self.core.links.arenas[r.arena as usize].stats(r.slot);
            write_link_stats(&mut report, &l.name, st, end);
        }
        if keep("kernel") {
            write_kernel_stats(&mut report, self.counters.ticks, end);
        } else {
            left_out += 1;
        }
        (report, left_out)
    }

    /// Gives `out` component `id`'s action counters ([`Component::counters`]); nothing for an
    /// id out of range.
    pub fn read_counters(&self, id: ComponentId, out: &mut dyn FnMut(&'static str, u64)) {
        if let Some(c) = self.comps.get(id.index()) {
            c.counters(out);
        }
    }

    /// The bytes link `id` (an index of [`Simulation::links`]) has carried so far, as its
    /// report's `bytes` says; None for a link that keeps no statistics
    /// ([`crate::SimBuilder::keep_link_stats_where`]), one whose state another partition
    /// holds, or an id out of range.
    pub fn link_bytes(&self, id: usize) -> Option<u64> {
        let r = *self.core.links.refs.get(id)?;
        if r.slot == crate::link::NO_SLOT {
            return None;
        }
        let arena = &self.core.links.arenas[r.arena as usize];
        arena.records(r.slot).then(|| arena.stats(r.slot).bytes)
    }

    pub(crate) fn deadlock_report(&mut self, stalled_for: Dur) -> DeadlockReport {
        let now = self.core.now;
        let mut full = Vec::new();
        let mut waits_on: Vec<Vec<u32>> = vec![Vec::new(); self.comps.len()];
        let mut waiting_msgs = vec![0usize; self.comps.len()];
        let mut full_out = vec![false; self.comps.len()];
        for (i, l) in self.links.iter() {
            let r = self.core.links.refs[i];
            if r.slot == crate::link::NO_SLOT {
                continue; // another partition's link
            }
            let arena = &self.core.links.arenas[r.arena as usize];
            waiting_msgs[l.dst.index()] += arena.arrived(r.slot, now);
            if arena.len(r.slot) as u32 >= l.spec.depth {
                full.push(l.name.clone());
                waits_on[l.src.index()].push(l.dst.0);
                full_out[l.src.index()] = true;
            }
        }
        let mut blocked = Vec::new();
        for (i, c) in self.comps.iter().enumerate() {
            let mut why = Vec::new();
            if waiting_msgs[i] > 0 {
                why.push(format!("{} messages waiting on its inputs", waiting_msgs[i]));
            }
            if full_out[i] {
                why.push("an output link is full".to_string());
            }
            if c.has_outstanding_work() {
                why.push("holds outstanding work".to_string());
            }
            if !why.is_empty() {
                blocked.push(BlockedComponent { name: self.names[i].clone(), why: why.join("; ") });
            }
        }
        let cycle = find_cycle(&waits_on).into_iter().map(|c| self.names[c as usize].clone()).collect();
        DeadlockReport {
            time: now,
            stalled_for,
            messages_in_links: self.core.in_links,
            blocked,
            full_links: full,
            cycle,
        }
    }
}

/// A link's statistics under `link:<name>` (the same in serial and partitioned reports).
pub(crate) fn write_link_stats(report: &mut StatsReport, name: &str, st: &crate::link::LinkStats, end: Time) {
    let owner = format!("link:{name}");
    let mut w = StatsWriter::new(&owner, report, end);
    w.count("msgs", st.msgs);
    w.count("bytes", st.bytes);
    w.count("refused_sends", st.refused);
    w.level("occupancy", "msgs", &st.occupancy);
    w.histogram("wait", "ns", &st.wait_ps, 1e-3);
    if end.as_ps() > 0 {
        w.value("bytes_per_s", st.bytes as f64 / Dur::from_ps(end.as_ps()).as_secs_f64());
    }
}

/// The kernel's own statistics: component ticks and simulated time. (Time steps are not
/// reported: a partitioned run steps each partition separately; see [`KernelCounters`].)
pub(crate) fn write_kernel_stats(report: &mut StatsReport, ticks: u64, end: Time) {
    let mut w = StatsWriter::new("kernel", report, end);
    w.count("ticks", ticks);
    w.count("sim_time_ps", end.as_ps());
}

fn push_decl(decls: &mut Vec<TrackDecl>, parent: Option<TrackId>, name: &str, kind: TrackKind) -> TrackId {
    let id = TrackId(decls.len() as u32);
    decls.push(TrackDecl { id, parent, name: name.to_string(), kind });
    id
}

/// A cycle in the "waits on" graph (iterative DFS, smallest start first), if any.
fn find_cycle(g: &[Vec<u32>]) -> Vec<u32> {
    let n = g.len();
    let mut color = vec![0u8; n];
    let mut parent = vec![u32::MAX; n];
    for s in 0..n {
        if color[s] != 0 {
            continue;
        }
        let mut stack = vec![(s as u32, 0usize)];
        color[s] = 1;
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&w) = g[v as usize].get(*i) {
                *i += 1;
                match color[w as usize] {
                    0 => {
                        color[w as usize] = 1;
                        parent[w as usize] = v;
                        stack.push((w, 0));
                    }
                    1 => {
                        let mut cyc = vec![v];
                        let mut x = v;
                        while x != w {
                            x = parent[x as usize];
                            cyc.push(x);
                        }
                        cyc.reverse();
                        return cyc;
                    }
                    _ => {}
                }
            } else {
                color[v as usize] = 2;
                stack.pop();
            }
        }
    }
    Vec::new()
}

impl Simulation {
    /// The messages in link `id` (in flight and buffered), oldest first, if it carries `T`.
    pub fn link_contents<T: crate::link::Payload>(&mut self, id: LinkId) -> Option<Vec<&T>> {
        let r = *self.core.links.refs.get(id.index())?;
        let arena = self.core.links.arenas[r.arena as usize].as_any_mut();
        let typed = arena.downcast_mut::<crate::link::Arena<T>>()?;
        Some(typed.links.get(r.slot as usize)?.buf.iter().map(|(_, m)| m).collect())
    }

    /// Messages currently in links (in flight or buffered).
    pub fn messages_in_links(&self) -> u64 {
        self.core.in_links
    }
}
