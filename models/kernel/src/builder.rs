//! Assembly: declare clocks, reserve components, connect typed links, install components,
//! then `build` a [`Simulation`]. Wiring mistakes are reported here, naming both endpoints,
//! never during the run.

use crate::component::{Component, ComponentId};
use crate::ctx::{Core, Links};
use crate::error::BuildError;
use crate::link::{
    Arena, Bandwidth, Cut, InPort, LinkRef, LinkSpec, LinkState, OutPort, Pace, Payload, Returns, Timing,
};
use crate::partition::{self, LinkEdge, PartitionError, PartitionPlan, PartitionRule};
use crate::sched::{Domain, Meta, Sched, State};
use crate::sim::{LinkInfo, LinkInfos, PartInfo, SimOptions, Simulation};
use crate::time::{Clock, ClockId, Dur, Frequency, Time};
use crate::trace::{TrackDecl, TrackId, TrackKind};
use crate::trace_state::declare_path;
use fxhash::FxHashMap;
use std::any::TypeId;
use std::cell::RefCell;
use std::sync::Arc;

/// What a builder is for, and so which components it makes. A partitioned runner declares the
/// system twice per partition: once to plan (only names, clocks, links: [`BuildScope::Declare`])
/// and once to build its partition ([`BuildScope::Part`]). Ids, names, links and trace tracks
/// are declared in the same order every time, so they agree in every partition by
/// construction; what differs is what is *made*: a constructor installed with
/// [`SimBuilder::install_with`] for a component the builder does not make is dropped uncalled,
/// and a system's build function asks [`SimBuilder::builds`] to skip preparing what only such a
/// component would use (its routing rows, its programs, its queues). So a partition's memory is
/// its declaration of the whole system (names and links, small) plus its own components.
#[derive(Clone, Debug, Default)]
pub enum BuildScope {
    /// A serial run: every component is made.
    #[default]
    All,
    /// Planning: nothing is made; the builder can plan ([`SimBuilder::plan`]) but not build.
    /// Names, ports and links are checked for duplicates; links keep no timing record and no
    /// trace tracks are declared (a plan reads neither).
    Declare,
    /// Partition `me` of a plan: component `i` is made when `part_of[i] == me`. Names, ports
    /// and links are not checked for duplicates again (the declaration that planned the run
    /// checked them).
    Part {
        /// The partition of each component, by id.
        part_of: Arc<[u32]>,
        /// Links the system declares (a capacity hint: the builder's per-link tables are sized
        /// to it once instead of growing).
        links: usize,
        /// This partition.
        me: u32,
        /// Whether the run is traced: without, no trace tracks are declared (every track id
        /// the builder hands out is a placeholder no event reaches).
        tracks: bool,
    },
}

thread_local! {
    static SCOPE: RefCell<BuildScope> = const { RefCell::new(BuildScope::All) };
}

impl BuildScope {
    /// Calls `f` with this scope in force: every [`SimBuilder`] made in it on this thread
    /// ([`SimBuilder::new`], [`SimBuilder::with_options`]) takes it. The previous scope is back
    /// when `f` returns or panics.
    pub fn enter<R>(self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<BuildScope>);
        impl Drop for Restore {
            fn drop(&mut self) {
                if let Some(s) = self.0.take() {
                    SCOPE.with(|c| *c.borrow_mut() = s);
                }
            }
        }
        let before = SCOPE.with(|c| std::mem::replace(&mut *c.borrow_mut(), self));
        let _restore = Restore(Some(before));
        f()
    }

    /// The scope in force on this thread.
    pub fn current() -> BuildScope {
        SCOPE.with(|c| c.borrow().clone())
    }
}

/// Builds a [`Simulation`]. See the crate docs for a walk-through.
#[derive(Default)]
pub struct SimBuilder {
    opts: SimOptions,
    clocks: Vec<Clock>,
    comps: Vec<Slot>,
    names: Vec<String>,
    domain_of: Vec<u32>,
    by_name: FxHashMap<String, u32>,
    arenas: Vec<Box<dyn crate::link::ErasedArena>>,
    arena_of: FxHashMap<TypeId, u32>,
    arena_types: Vec<TypeId>,
    refs: Vec<LinkRef>,
    /// Each link's (sender, receiver) component index, by link id (every builder keeps them:
    /// a block's shape is checked with them, [`SimBuilder::block_end`]).
    ends: Vec<(u32, u32)>,
    links: LinkInfos,
    /// The longest round trip (latency and credit return) of any link declared, for the
    /// deadlock window (every partition counts every link, so all agree).
    longest: Dur,
    /// The longest round trip of the links declared since the last [`SimBuilder::block_start`].
    block_longest: Dur,
    ports: FxHashMap<(u32, String), ()>,
    decls: Vec<TrackDecl>,
    groups: FxHashMap<(Option<TrackId>, String), TrackId>,
    comp_tracks: Vec<TrackId>,
    scope: BuildScope,
}

impl SimBuilder {
    /// An empty simulation with default options, in the scope in force ([`BuildScope::enter`]).
    pub fn new() -> SimBuilder {
        SimBuilder::with_options(SimOptions::default())
    }

    /// An empty simulation with `opts`, in the scope in force ([`BuildScope::enter`]).
    pub fn with_options(opts: SimOptions) -> SimBuilder {
        let scope = BuildScope::current();
        // A partition's builder knows how many components and links the system declares (its
        // plan does): its per-component and per-link tables are sized once instead of growing.
        let (n, links) = match &scope {
            BuildScope::Part { part_of, links, .. } => (part_of.len(), *links),
            _ => (0, 0),
        };
        SimBuilder {
            opts,
            scope,
            comps: Vec::with_capacity(n),
            names: Vec::with_capacity(n),
            domain_of: Vec::with_capacity(n),
            comp_tracks: Vec::with_capacity(n),
            refs: Vec::with_capacity(links),
            ends: Vec::with_capacity(links),
            links: LinkInfos::with_capacity(links),
            ..SimBuilder::default()
        }
    }

    /// Whether this builder makes component `id` (see [`BuildScope`]): a system's build
    /// function skips preparing state that only a component it does not make would use.
    pub fn builds(&self, id: ComponentId) -> bool {
        match &self.scope {
            BuildScope::All => true,
            BuildScope::Declare => false,
            BuildScope::Part { part_of, me, .. } => part_of.get(id.index()).is_some_and(|p| p == me),
        }
    }

    /// Whether this builder is a partition's ([`BuildScope::Part`]).
    pub fn in_partition(&self) -> bool {
        matches!(self.scope, BuildScope::Part { .. })
    }

    /// Whether this builder makes every component (a serial run's).
    pub fn builds_all(&self) -> bool {
        matches!(self.scope, BuildScope::All)
    }

    /// Declares a clock domain.
    pub fn clock(&mut self, name: &str, freq: Frequency) -> Result<ClockId, BuildError> {
        if self.clocks.iter().any(|c| c.name() == name) {
            return Err(BuildError::DuplicateName { what: "clock", name: name.to_string() });
        }
        let clock = Clock::new(name, freq)
            .map_err(|e| BuildError::BadClock { name: name.to_string(), reason: e.to_string() })?;
        self.clocks.push(clock);
        Ok(ClockId(self.clocks.len() as u32 - 1))
    }

    /// The clock named `name` if one exists (it must run at `freq`), else a new one: blocks of
    /// many instances (a chip's cores, many chips) share one clock domain per frequency, which
    /// keeps the scheduler's per-step scan over domains short.
    pub fn shared_clock(&mut self, name: &str, freq: Frequency) -> Result<ClockId, BuildError> {
        match self.clocks.iter().position(|c| c.name() == name) {
            Some(i) if self.clocks[i].frequency() == freq => Ok(ClockId(i as u32)),
            Some(i) => Err(BuildError::BadClock {
                name: name.to_string(),
                reason: format!("already declared at {}, asked again at {freq}", self.clocks[i].frequency()),
            }),
            None => self.clock(name, freq),
        }
    }

    /// The clock `id`.
    pub fn clock_of(&self, id: ClockId) -> &Clock {
        &self.clocks[id.index()]
    }

    /// Reserves a component slot named `name` (dotted paths nest in traces: "chip0.core1.pe")
    /// on `clock`, so links can be made before the component itself exists.
    pub fn reserve(&mut self, name: &str, clock: ClockId) -> Result<ComponentId, BuildError> {
        // A partition's declaration repeats the one that planned the run, which checked names.
        let (checked, tracks) = match &self.scope {
            BuildScope::Part { tracks, .. } => (true, *tracks),
            BuildScope::Declare => (false, false),
            BuildScope::All => (false, true),
        };
        if !checked && self.by_name.contains_key(name) {
            return Err(BuildError::DuplicateName { what: "component", name: name.to_string() });
        }
        let id = self.comps.len() as u32;
        self.comps.push(Slot::Empty);
        self.names.push(name.to_string());
        self.domain_of.push(clock.0);
        if !checked {
            self.by_name.insert(name.to_string(), id);
        }
        let track = if tracks {
            declare_path(&mut self.decls, &mut self.groups, None, name, TrackKind::Slice)
        } else {
            TrackId(0)
        };
        self.comp_tracks.push(track);
        Ok(ComponentId(id))
    }

    /// Marks the start of a block of declarations (a chip, say) whose shape
    /// [`SimBuilder::block_end`] then measures, so that an identical block can be skipped in a
    /// partition that makes none of it ([`SimBuilder::skip_block`]).
    pub fn block_start(&mut self) -> BlockMark {
        self.block_longest = Dur::ZERO;
        BlockMark { comps: self.comps.len(), links: self.refs.len(), clocks: self.clocks.len() }
    }

    /// The shape of the block declared since `mark`: how many components and links, their
    /// longest round trip, and the clock of its first component. None (no block of this shape
    /// may be skipped) if the block declared a clock (a skipped one would not) or has a link
    /// with an end outside it other than `touches`, the components the block is known to
    /// reach (a skipped block's are checked to be another partition's too).
    pub fn block_end(&self, mark: BlockMark, touches: &[ComponentId]) -> Option<BlockShape> {
        let inside = mark.comps as u32..self.comps.len() as u32;
        let known = |c: u32| inside.contains(&c) || touches.iter().any(|t| t.0 == c);
        let closed = self.ends[mark.links..].iter().all(|&(s, d)| known(s) && known(d));
        (closed && self.clocks.len() == mark.clocks).then(|| BlockShape {
            comps: self.comps.len() - mark.comps,
            links: self.refs.len() - mark.links,
            longest: self.block_longest,
            clock: self.domain_of.get(mark.comps).copied().unwrap_or(0),
            touches: touches.len(),
        })
    }

    /// Declares a block shaped as `shape` (measured by [`SimBuilder::block_end`] on a block
    /// declared the same way: the same components and links in the same order, reaching the
    /// same number of outside components, here `touches`) without declaring it, and returns
    /// true, if this builder is an untraced partition that makes none of its components and
    /// none of `touches`: each component and link then takes its id and nothing else (no
    /// name, no state, no constructor), which is all such a partition needs of it (the merged
    /// statistics name each link as its sender's partition reports it). Otherwise declares
    /// nothing and returns false: the caller declares the block.
    pub fn skip_block(&mut self, shape: &BlockShape, touches: &[ComponentId]) -> bool {
        let BuildScope::Part { part_of, me, tracks: false, .. } = &self.scope else { return false };
        let (me, from) = (*me, self.comps.len());
        let theirs = |c: usize| part_of.get(c).is_some_and(|&p| p != me);
        if touches.len() != shape.touches
            || !(from..from + shape.comps).all(theirs)
            || !touches.iter().all(|t| theirs(t.index()))
        {
            return false;
        }
        let (comps, links) = (from + shape.comps, self.refs.len() + shape.links);
        self.comps.resize_with(comps, || Slot::Elsewhere);
        self.names.resize(comps, String::new());
        self.domain_of.resize(comps, shape.clock);
        self.comp_tracks.resize(comps, TrackId(0));
        let ids = (self.refs.len()..links).map(|i| crate::link::LinkId(i as u32));
        self.refs.extend(ids.map(|id| LinkRef { arena: u32::MAX, slot: crate::link::NO_SLOT, id }));
        self.ends.resize(links, (u32::MAX, u32::MAX));
        self.links.push_none(shape.links);
        self.longest = self.longest.max(shape.longest);
        true
    }

    /// Declares a trace track at `path` (dot-separated: `"nc0.Tensor Engine - Row 0"` is the
    /// track "Tensor Engine - Row 0" in group "nc0", the group made if new), for tracks laid
    /// out by a block rather than by component (a profiler's row order). Siblings keep their
    /// declaration order. Any component may write to it. `TrackId(0)` where this builder
    /// declares no tracks ([`SimBuilder::declares_tracks`]).
    pub fn group_track(&mut self, path: &str, kind: TrackKind) -> TrackId {
        if !self.declares_tracks() {
            return TrackId(0);
        }
        declare_path(&mut self.decls, &mut self.groups, None, path, kind)
    }

    /// Whether this builder declares trace tracks (all but the planning declaration and an
    /// untraced run's partitions): a block need not name tracks otherwise.
    pub fn declares_tracks(&self) -> bool {
        !matches!(self.scope, BuildScope::Declare | BuildScope::Part { tracks: false, .. })
    }

    /// Installs the component for a reserved slot.
    pub fn install(&mut self, id: ComponentId, comp: impl Component) -> Result<(), BuildError> {
        self.fill(id, Slot::Built(Box::new(comp)))
    }

    /// Installs a constructor for a reserved slot, called when the simulation is built, in id
    /// order: a partitioned run's partition constructs only its own components (the others'
    /// constructors are dropped uncalled), so each partition's memory and build time are its
    /// share of the system's, while ids, names, links and trace tracks, declared as before,
    /// agree in every partition by construction. Heavy components (memories, engines, whole
    /// chips' parts) use this; the constructor must not depend on anything but what it
    /// captures. A constructor's error fails the build, naming the component.
    pub fn install_with<C, F>(&mut self, id: ComponentId, make: F) -> Result<(), BuildError>
    where
        C: Component,
        F: FnOnce() -> Result<C, String> + 'static,
    {
        if !self.builds(id) {
            return self.fill(id, Slot::Elsewhere);
        }
        self.fill(id, Slot::Deferred(Box::new(move || make().map(|c| Box::new(c) as Box<dyn Component>))))
    }

    /// Marks a reserved slot whose component another partition makes (`builds(id)` is false
    /// here): nothing is constructed for it in this one. Refused for a component this
    /// partition makes.
    pub fn elsewhere(&mut self, id: ComponentId) -> Result<(), BuildError> {
        if self.builds(id) {
            return Err(BuildError::PartitionMismatch {
                why: format!(
                    "component {:?} belongs to this partition: it cannot be made elsewhere",
                    self.names[id.index()]
                ),
            });
        }
        self.fill(id, Slot::Elsewhere)
    }

    fn fill(&mut self, id: ComponentId, with: Slot) -> Result<(), BuildError> {
        let slot = &mut self.comps[id.index()];
        if !matches!(slot, Slot::Empty) {
            return Err(BuildError::AlreadyInstalled { name: self.names[id.index()].clone() });
        }
        *slot = with;
        Ok(())
    }

    /// Reserves and installs in one call (for components whose ports exist already).
    pub fn add(&mut self, name: &str, clock: ClockId, comp: impl Component) -> Result<ComponentId, BuildError> {
        let id = self.reserve(name, clock)?;
        self.install(id, comp)?;
        Ok(id)
    }

    /// Reserves and installs a constructor in one call (see [`SimBuilder::install_with`]).
    pub fn add_with<C, F>(&mut self, name: &str, clock: ClockId, make: F) -> Result<ComponentId, BuildError>
    where
        C: Component,
        F: FnOnce() -> Result<C, String> + 'static,
    {
        let id = self.reserve(name, clock)?;
        self.install_with(id, make)?;
        Ok(id)
    }

    /// The name of component `id`.
    pub fn name(&self, id: ComponentId) -> &str {
        &self.names[id.index()]
    }

    /// The slice track of component `id` (its own row in trace viewers).
    pub fn component_track(&self, id: ComponentId) -> TrackId {
        self.comp_tracks[id.index()]
    }

    /// Declares an extra trace track owned by component `id` (e.g. one per queue), shown nested
    /// under the component's own track.
    pub fn track(&mut self, owner: ComponentId, name: &str, kind: TrackKind) -> TrackId {
        if !self.declares_tracks() {
            return TrackId(0);
        }
        let parent = Some(self.comp_tracks[owner.index()]);
        let id = TrackId(self.decls.len() as u32);
        self.decls.push(TrackDecl { id, parent, name: name.to_string(), kind });
        id
    }

    /// Connects `src.src_port` to `dst.dst_port` with a link carrying `T`.
    pub fn link<T: Payload>(
        &mut self,
        src: ComponentId,
        src_port: impl PortName,
        dst: ComponentId,
        dst_port: impl PortName,
        spec: LinkSpec,
    ) -> Result<(OutPort<T>, InPort<T>), BuildError> {
        // A partition keeps no name for a link with no end among its components (nothing here
        // ever names it: the merged statistics take each link's name from its sender's
        // partition), so its port names are never joined; and no partition checks ports
        // again: the declaration that planned the run checked every one.
        let (nameless, checked) = match &self.scope {
            BuildScope::Part { .. } => (!self.builds(src) && !self.builds(dst), true),
            _ => (false, false),
        };
        let full = || {
            let (s, d) = (&self.names[src.index()], &self.names[dst.index()]);
            let mut n = String::with_capacity(s.len() + d.len() + src_port.len() + dst_port.len() + 6);
            n.push_str(s);
            n.push('.');
            src_port.push_to(&mut n);
            n.push_str(" -> ");
            n.push_str(d);
            n.push('.');
            dst_port.push_to(&mut n);
            n
        };
        let name = if nameless { String::new() } else { full() };
        if validate(&name, &spec).is_err() {
            validate(&full(), &spec)?;
        }
        if !checked {
            for (c, p) in [(src, port_string(&src_port)), (dst, port_string(&dst_port))] {
                match self.ports.entry((c.0, p)) {
                    std::collections::hash_map::Entry::Occupied(o) => {
                        let port = o.key().1.clone();
                        return Err(BuildError::DuplicatePort { component: self.names[c.index()].clone(), port });
                    }
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(());
                    }
                }
            }
        }
        let arena = self.arena_for::<T>();
        let id = crate::link::LinkId(self.refs.len() as u32);
        // A partition keeps no state for a link with no end among its components, nor the
        // planning declaration for any: only its id (nothing here sends on it, receives from
        // it or reports it).
        let stateless = match &self.scope {
            BuildScope::All => false,
            BuildScope::Declare => true,
            BuildScope::Part { .. } => !self.builds(src) && !self.builds(dst),
        };
        let r = if stateless {
            LinkRef { arena, slot: crate::link::NO_SLOT, id }
        } else {
            let src_clock = &self.clocks[self.domain_of[src.index()] as usize];
            let dst_clock = &self.clocks[self.domain_of[dst.index()] as usize];
            let timing = Timing {
                src,
                dst,
                latency: src_clock.cycles_to_dur(spec.latency),
                credit_latency: dst_clock.cycles_to_dur(spec.credit_latency),
                bandwidth: spec.bandwidth,
                credits: spec.depth,
                // Room for credits in flight only where this builder makes an end of the link.
                returns: Returns::with_capacity(if self.builds(src) || self.builds(dst) {
                    spec.depth.min(crate::link::PREALLOCATED_SLOTS)
                } else {
                    0
                }),
                busy_until: Time::ZERO,
                in_active: false,
                out_active: false,
                wants: false,
                flags: Timing::RECORD,
                cut: Cut::Local,
            };
            let pace = Pace {
                src_period: src_clock.cycles_to_dur(crate::time::Cycles(1)),
                window_start: Time::NEVER,
                window_sends: 0,
            };
            let state = LinkState::<T>::new(timing, pace);
            let any = self.arenas[arena as usize].as_any_mut();
            let typed = any.downcast_mut::<Arena<T>>().expect("arena registered for this payload type");
            typed.links.push(state);
            LinkRef { arena, slot: typed.links.len() as u32 - 1, id }
        };
        self.refs.push(r);
        self.ends.push((src.0, dst.0));
        let (src_clock, dst_clock) =
            (&self.clocks[self.domain_of[src.index()] as usize], &self.clocks[self.domain_of[dst.index()] as usize]);
        let round_trip = src_clock.cycles_to_dur(spec.latency) + dst_clock.cycles_to_dur(spec.credit_latency);
        self.longest = self.longest.max(round_trip);
        self.block_longest = self.block_longest.max(round_trip);
        // A partition that keeps no name for the link keeps none of its facts either.
        self.links.push((!nameless).then_some(LinkInfo { name, src, dst, spec }));
        Ok((OutPort::new(r), InPort::new(r)))
    }

    /// Declares that a component of this system may make no progress for up to `d` while it
    /// has work outstanding (a DMA command waiting out its start latency, a timeline
    /// computing): the deadlock window becomes at least twice that, as for a link's round
    /// trip, so such a wait is never reported as a deadlock. Counted in a block's shape, so a
    /// partition that skips the block agrees.
    pub fn expect_silence(&mut self, d: Dur) {
        self.longest = self.longest.max(d);
        self.block_longest = self.block_longest.max(d);
    }

    fn arena_for<T: Payload>(&mut self) -> u32 {
        let key = TypeId::of::<T>();
        if let Some(&a) = self.arena_of.get(&key) {
            return a;
        }
        self.arenas.push(Box::new(Arena::<T> { links: Vec::new(), cut_out: Vec::new(), cut_in: Vec::new() }));
        self.arena_types.push(TypeId::of::<Arena<T>>());
        let a = self.arenas.len() as u32 - 1;
        self.arena_of.insert(key, a);
        a
    }

    /// Attaches a swap-in hook to the link called `name` (`"src.port -> dst.port"`, as
    /// [`crate::LinkInfo`] names it): `make` gets the link's spec and its receiver's clock.
    /// The error names a link that does not exist.
    pub fn hook_link(&mut self, name: &str, make: &mut crate::link::MakeLinkHook<'_>) -> Result<(), String> {
        let i = self.find_link(name)?;
        let info = &self.links[i];
        let clock = &self.clocks[self.domain_of[info.dst.index()] as usize];
        let r = self.refs[i];
        if matches!(self.scope, BuildScope::Declare) {
            return Ok(()); // (the planning declaration makes no link to hook)
        }
        if r.slot == crate::link::NO_SLOT {
            return Err(format!("link {name:?} has no end in this partition"));
        }
        let hook = make(&info.spec, clock)?;
        self.arenas[r.arena as usize].set_hook(r.slot, hook);
        Ok(())
    }

    /// The index of the link called `name` (`"src.port -> dst.port"`) among those declared so
    /// far; the error names it and up to three links into (or out of) the port asked for.
    pub fn find_link(&self, name: &str) -> Result<usize, String> {
        self.links.iter().find(|(_, l)| l.name == name).map(|(i, _)| i).ok_or_else(|| {
            let (src, dst) = name.split_once(" -> ").unwrap_or((name, name));
            let near = |keep: &dyn Fn(&str) -> bool| -> Vec<&str> {
                self.links.iter().map(|(_, l)| l.name.as_str()).filter(|n| keep(n)).take(3).collect()
            };
            let (into, from) =
                (near(&|n| n.ends_with(&format!(" -> {dst}"))), near(&|n| n.starts_with(&format!("{src} -> "))));
            let (what, near) = if into.is_empty() { ("out of that port", from) } else { ("into that port", into) };
            format!(
                "no link called {name:?}{}",
                if near.is_empty() { String::new() } else { format!(" (links {what}: {})", near.join(", ")) }
            )
        })
    }

    /// Statistics of only some links: every link declared so far whose name
    /// (`"src.port -> dst.port"`, as [`crate::LinkInfo`] names it) `keep` refuses keeps no
    /// statistics (messages, bytes, refused sends, occupancy, waits) and is left out of every
    /// report ([`crate::Simulation::report_where`] counts it as left out). A large system whose
    /// report keeps a few links' figures then spends nothing on the others'. Returns how many
    /// links were left out of those this builder holds (a partition's builder holds the links
    /// with an end among its components, and names each of them: both ends of a cut link
    /// decide alike; the merged report of a partitioned run leaves the same links out and
    /// counts them, [`crate::ParallelRun::left_out`]).
    pub fn keep_link_stats_where(&mut self, keep: &dyn Fn(&str) -> bool) -> Result<u64, BuildError> {
        let mut dropped = 0u64;
        for (i, info) in self.links.iter() {
            let r = self.refs[i];
            if r.slot != crate::link::NO_SLOT && !keep(&info.name) {
                self.arenas[r.arena as usize].unrecord(r.slot);
                dropped += 1;
            }
        }
        Ok(dropped)
    }

    /// Puts `msg` in the receive buffer of `port`'s link before the run (visible at the first
    /// edge), spending one credit.
    pub fn preload<T: Payload>(&mut self, port: InPort<T>, msg: T) -> Result<(), BuildError> {
        let r = port.r;
        if r.slot == crate::link::NO_SLOT {
            // Received in another partition (preloaded there), or the planning declaration.
            return Ok(());
        }
        let any = self.arenas[r.arena as usize].as_any_mut();
        let link = &mut any.downcast_mut::<Arena<T>>().expect("port type matches arena").links[r.slot as usize];
        if link.timing.credits == 0 {
            let info = &self.links[r.id.index()];
            return Err(BuildError::PreloadOverflow { link: info.name.clone(), depth: info.spec.depth });
        }
        link.timing.credits -= 1;
        link.buf.push_back((Time::ZERO, msg));
        link.stats.occupancy.set(Time::ZERO, link.buf.len() as u64);
        Ok(())
    }

    /// Checks that every reserved component was installed and builds the simulation. Every
    /// component ticks on its clock's first edge (time 0) and then sleeps if it is idle.
    pub fn build(self) -> Result<Simulation, BuildError> {
        if !self.builds_all() {
            return Err(BuildError::PartitionMismatch {
                why: format!("this builder was declared for {:?}, not for a serial run", self.scope_name()),
            });
        }
        self.build_inner(None)
    }

    fn scope_name(&self) -> String {
        match &self.scope {
            BuildScope::All => "a serial run".into(),
            BuildScope::Declare => "planning only".into(),
            BuildScope::Part { me, .. } => format!("partition {me}"),
        }
    }

    /// Plans a partitioning of this system into `parts` partitions under `rule` (see
    /// [`crate::partition`]); with `min_lookahead`, every cut link must be at least that long.
    /// A partition's builder cannot plan (it keeps only its own links' facts).
    pub fn plan(
        &self,
        rule: &PartitionRule,
        parts: u32,
        min_lookahead: Option<Dur>,
    ) -> Result<PartitionPlan, PartitionError> {
        if matches!(self.scope, BuildScope::Part { .. }) {
            return Err(PartitionError::PartitionBuilder);
        }
        let edges: Vec<LinkEdge> = self
            .links
            .iter()
            .map(|(_, l)| {
                let src = &self.clocks[self.domain_of[l.src.index()] as usize];
                let dst = &self.clocks[self.domain_of[l.dst.index()] as usize];
                let latency = src.cycles_to_dur(l.spec.latency).min(dst.cycles_to_dur(l.spec.credit_latency));
                LinkEdge { src: l.src, dst: l.dst, latency, name: &l.name }
            })
            .collect();
        partition::plan(&self.names, &edges, rule, parts, min_lookahead)
    }

    /// Builds partition `me` of `plan`: the same system, but only the components of partition
    /// `me` are kept and ticked (the others are dropped); links cut by the plan send their
    /// messages and credits through the parallel runner. Every partition of a run builds the
    /// same system, so ids, names and trace tracks agree everywhere.
    pub fn build_partition(self, plan: &PartitionPlan, me: u32) -> Result<Simulation, BuildError> {
        if plan.part_of.len() != self.comps.len() || me >= plan.parts {
            return Err(BuildError::PartitionMismatch {
                why: format!(
                    "the plan covers {} components in {} partitions; this system has {} (partition {me} asked for)",
                    plan.part_of.len(),
                    plan.parts,
                    self.comps.len()
                ),
            });
        }
        if let BuildScope::Part { part_of, me: m, .. } = &self.scope {
            if *m != me || **part_of != *plan.part_of {
                return Err(BuildError::PartitionMismatch {
                    why: format!(
                        "this builder was declared for {}, with another plan, not for partition {me}",
                        self.scope_name()
                    ),
                });
            }
        } else if !self.builds_all() {
            return Err(BuildError::PartitionMismatch {
                why: format!("this builder was declared for {}", self.scope_name()),
            });
        }
        self.build_inner(Some((plan, me)))
    }

    fn build_inner(mut self, part: Option<(&PartitionPlan, u32)>) -> Result<Simulation, BuildError> {
        let missing: Vec<String> = self
            .comps
            .iter()
            .zip(&self.names)
            .filter(|(c, _)| matches!(c, Slot::Empty))
            .map(|(_, n)| n.clone())
            .collect();
        if !missing.is_empty() {
            return Err(BuildError::NotInstalled { names: missing });
        }
        let local = |c: usize| part.is_none_or(|(p, me)| p.part_of[c] == me);
        let mut domains: Vec<Domain> = self
            .clocks
            .iter()
            .map(|c| Domain {
                clock: c.clone(),
                cursor: c.cursor_at(0),
                pending: Vec::new(),
                period_ps: c.cycles_to_dur(crate::time::Cycles(1)).as_ps(),
            })
            .collect();
        let mut meta = Vec::with_capacity(self.comps.len());
        for i in 0..self.comps.len() {
            let domain = self.domain_of[i];
            let state = if local(i) {
                domains[domain as usize].pending.push(i as u32);
                State::Queued
            } else {
                State::Asleep
            };
            meta.push(Meta {
                domain,
                state,
                wake: Time::NEVER,
                timer: Time::NEVER,
                active_in: Vec::new(),
                active_out: Vec::new(),
            });
        }
        let mut credits_out = Vec::new();
        if let Some((plan, me)) = part {
            credits_out = vec![Vec::new(); plan.parts as usize];
            for (i, l) in self.links.iter() {
                let (ps, pd) = (plan.part_of[l.src.index()], plan.part_of[l.dst.index()]);
                let r = self.refs[i];
                if ps == me && pd != me {
                    self.arenas[r.arena as usize].set_cut(r.slot, r.id.0, Cut::Out { part: pd });
                } else if pd == me && ps != me {
                    self.arenas[r.arena as usize].set_cut(r.slot, r.id.0, Cut::In { part: ps });
                }
            }
            for (i, c) in self.comps.iter_mut().enumerate() {
                if !local(i) {
                    *c = Slot::Built(Box::new(Remote));
                }
            }
        }
        // Deferred constructors run here, in id order, only for this partition's components.
        let mut comps: Vec<Box<dyn Component>> = Vec::with_capacity(self.comps.len());
        for (slot, name) in self.comps.into_iter().zip(&self.names) {
            comps.push(match slot {
                Slot::Built(c) => c,
                Slot::Deferred(make) => make().map_err(|why| BuildError::Construct { name: name.clone(), why })?,
                Slot::Elsewhere => {
                    return Err(BuildError::PartitionMismatch {
                        why: format!("component {name:?} was declared as made elsewhere but belongs to this partition"),
                    })
                }
                Slot::Empty => unreachable!("checked above: every slot is installed"),
            });
        }
        // Buffers only for links with an end here: a partition holds no room for the traffic
        // between other partitions' components.
        for (i, l) in self.links.iter() {
            let r = self.refs[i];
            if local(l.src.index()) || local(l.dst.index()) {
                self.arenas[r.arena as usize].reserve(r.slot, l.spec.depth);
            }
        }
        // Preloaded messages count where they are received.
        let in_links = self
            .links
            .iter()
            .filter(|(_, l)| local(l.dst.index()))
            .map(|(i, _)| self.arenas[self.refs[i].arena as usize].len(self.refs[i].slot) as u64)
            .sum();
        let n_comps = comps.len();
        let core = Core {
            now: Time::ZERO,
            sched: Sched {
                edge_at: domains.iter().map(Sched::edge_of).collect(),
                domains,
                meta,
                wakes: Default::default(),
                due: Vec::new(),
                floor: Time::ZERO,
            },
            links: Links { arenas: self.arenas, types: self.arena_types, refs: self.refs },
            trace: None,
            progress: 0,
            in_links,
            comp_tracks: Vec::new(),
            flow_next: vec![0; n_comps],
            credits_out,
        };
        // The deadlock window is at least twice the slowest link's round trip: a silence that
        // long is legal (one message in flight and its credit coming back).
        let mut opts = self.opts.clone();
        opts.deadlock_window = opts.deadlock_window.max(self.longest + self.longest);
        let mut sim = Simulation::new(core, comps, self.names, self.links, self.decls, self.comp_tracks, opts);
        sim.part = part.map(|(p, me)| PartInfo { me, plan: p.clone() });
        Ok(sim)
    }
}

/// A component slot: reserved, installed, or installed as a constructor to call at build.
#[derive(Default)]
enum Slot {
    #[default]
    Empty,
    Built(Box<dyn Component>),
    Deferred(Box<dyn FnOnce() -> Result<Box<dyn Component>, String>>),
    /// A constructor dropped uncalled: this builder does not make the component.
    Elsewhere,
}

/// Stands in for a component that lives in another partition; never ticked.
struct Remote;

impl Component for Remote {
    fn tick(&mut self, _cx: &mut crate::Ctx<'_>) -> crate::Activity {
        crate::Activity::Idle
    }
}

/// Where a block of declarations started ([`SimBuilder::block_start`]).
#[derive(Clone, Copy, Debug)]
pub struct BlockMark {
    comps: usize,
    links: usize,
    clocks: usize,
}

/// What a block of declarations added ([`SimBuilder::block_end`]), for
/// [`SimBuilder::skip_block`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockShape {
    comps: usize,
    links: usize,
    longest: Dur,
    clock: u32,
    touches: usize,
}

/// A port's name as [`SimBuilder::link`] takes it: a string, or its parts (`["dma", k, ".req"]`),
/// joined only where the builder needs the name, so a partition's declaration of the many links
/// with no end among its components builds no strings for them.
pub trait PortName {
    /// Appends the name to `out`.
    fn push_to(&self, out: &mut String);
    /// The name's length in bytes.
    fn len(&self) -> usize;
    /// True for an empty name.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PortName for &str {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
    fn len(&self) -> usize {
        str::len(self)
    }
}

impl PortName for &String {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
    fn len(&self) -> usize {
        String::len(self)
    }
}

impl PortName for String {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
    fn len(&self) -> usize {
        String::len(self)
    }
}

impl<const N: usize> PortName for [&str; N] {
    fn push_to(&self, out: &mut String) {
        self.iter().for_each(|p| out.push_str(p));
    }
    fn len(&self) -> usize {
        self.iter().map(|p| p.len()).sum()
    }
}

fn port_string(p: &impl PortName) -> String {
    let mut s = String::with_capacity(p.len());
    p.push_to(&mut s);
    s
}

fn validate(name: &str, spec: &LinkSpec) -> Result<(), BuildError> {
    let bad =
        |field, value: String, allowed| Err(BuildError::BadLink { link: name.to_string(), field, value, allowed });
    use crate::link::{MAX_LINK_CYCLES, MAX_LINK_DEPTH};
    if !(1..=MAX_LINK_CYCLES).contains(&spec.latency.0) {
        let v = spec.latency.0.to_string();
        return bad("latency", v, "1..=1000000000 sender cycles (no zero-latency paths between components)");
    }
    if !(1..=MAX_LINK_DEPTH).contains(&spec.depth) {
        return bad("depth", spec.depth.to_string(), "1..=1048576 messages");
    }
    if !(1..=MAX_LINK_CYCLES).contains(&spec.credit_latency.0) {
        return bad("credit_latency", spec.credit_latency.0.to_string(), "1..=1000000000 receiver cycles");
    }
    match spec.bandwidth {
        Bandwidth::BytesPerCycle(0) | Bandwidth::MessagesPerCycle(0) => {
            bad("bandwidth", "0".into(), "> 0 bytes or messages per cycle, or unlimited")
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Cycles;
    use std::cell::RefCell;
    use std::rc::Rc;

    struct Idle;
    impl Component for Idle {
        fn tick(&mut self, _cx: &mut crate::Ctx<'_>) -> crate::Activity {
            crate::Activity::Idle
        }
    }

    /// Two chips of two parts each, chained by links; every component installed as a
    /// constructor that records its name when called.
    fn system(made: &Rc<RefCell<Vec<String>>>) -> SimBuilder {
        let mut b = SimBuilder::new();
        let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
        let names = ["chip0.a", "chip0.b", "chip1.a", "chip1.b"];
        let ids: Vec<ComponentId> = names.iter().map(|n| b.reserve(n, clk).unwrap()).collect();
        let spec = LinkSpec { latency: Cycles(4), ..LinkSpec::default() };
        for w in ids.windows(2) {
            b.link::<u64>(w[0], "out", w[1], "in", spec).unwrap();
        }
        for (id, name) in ids.iter().zip(names) {
            let made = made.clone();
            b.install_with(*id, move || {
                made.borrow_mut().push(name.to_string());
                Ok(Idle)
            })
            .unwrap();
        }
        b
    }

    #[test]
    fn a_partition_constructs_only_its_own_components() {
        let made = Rc::new(RefCell::new(Vec::new()));
        let b = system(&made);
        assert!(made.borrow().is_empty(), "constructors run at build, not at install");
        let plan = b.plan(&PartitionRule::ByName { depth: 1 }, 2, None).unwrap();
        let sim = b.build_partition(&plan, 1).unwrap();
        assert_eq!(*made.borrow(), ["chip1.a", "chip1.b"]);
        assert!(sim.component::<Idle>(ComponentId(2)).is_some());
        assert!(sim.component::<Idle>(ComponentId(0)).is_none(), "a remote component is a stand-in");
        made.borrow_mut().clear();
        system(&made).build().unwrap();
        assert_eq!(*made.borrow(), ["chip0.a", "chip0.b", "chip1.a", "chip1.b"], "serial: all, in id order");
    }

    #[test]
    fn only_another_partitions_component_is_made_elsewhere() {
        let scope = BuildScope::Part { part_of: vec![0, 1].into(), links: 0, me: 1, tracks: true };
        scope.enter(|| {
            let mut b = SimBuilder::new();
            let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
            let (a, c) = (b.reserve("chip0", clk).unwrap(), b.reserve("chip1", clk).unwrap());
            b.elsewhere(a).unwrap();
            let err = b.elsewhere(c).unwrap_err().to_string();
            assert!(err.contains("\"chip1\" belongs to this partition"), "{err}");
            b.install(c, Idle).unwrap();
            assert!(b.elsewhere(a).is_err(), "a slot is filled once");
        });
        let mut b = SimBuilder::new();
        let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
        let a = b.reserve("chip0", clk).unwrap();
        assert!(b.elsewhere(a).is_err(), "a serial run makes everything here");
    }

    #[test]
    fn a_partitions_builder_cannot_plan() {
        // Partition 2 keeps no facts of the link between chip0 and chip1: a plan made from it
        // would not see that link, so it refuses; the declared system plans.
        let declare = || {
            let mut b = SimBuilder::new();
            let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
            let ids: Vec<ComponentId> = (0..3).map(|i| b.reserve(&format!("chip{i}"), clk).unwrap()).collect();
            b.link::<u64>(ids[0], "out", ids[1], "in", LinkSpec::default()).unwrap();
            b
        };
        let part = BuildScope::Part { part_of: vec![0, 1, 2].into(), links: 0, me: 2, tracks: true };
        let err = part.enter(|| declare().plan(&PartitionRule::ByName { depth: 1 }, 3, None)).unwrap_err();
        assert_eq!(err, PartitionError::PartitionBuilder);
        assert!(err.to_string().contains("not from a partition's builder"), "{err}");
        let plan = BuildScope::Declare.enter(|| declare().plan(&PartitionRule::ByName { depth: 1 }, 3, None));
        assert_eq!(plan.unwrap().cut.len(), 1);
    }

    /// Four chips: their nodes `chipN` reserved first and chained by links, then each chip's
    /// block, two parts (`chipN.a`, `chipN.b`) linked to each other and to the node. From the
    /// third chip on, a block is skipped where the builder may. Returns the builder and the
    /// chips skipped.
    fn chips_in_blocks() -> (SimBuilder, Vec<usize>) {
        let mut b = SimBuilder::new();
        let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
        let nodes: Vec<ComponentId> = (0..4).map(|c| b.reserve(&format!("chip{c}"), clk).unwrap()).collect();
        let spec = LinkSpec { latency: Cycles(4), ..LinkSpec::default() };
        for w in nodes.windows(2) {
            b.link::<u64>(w[0], "next", w[1], "prev", spec).unwrap();
        }
        for &n in &nodes {
            b.install_with(n, || Ok(Idle)).unwrap();
        }
        let (mut shape, mut skipped) = (None, Vec::new());
        for (c, &node) in nodes.iter().enumerate() {
            if shape.is_some_and(|sh| b.skip_block(&sh, &[node])) {
                skipped.push(c);
                continue;
            }
            let mark = b.block_start();
            let a = b.reserve(&format!("chip{c}.a"), clk).unwrap();
            let z = b.reserve(&format!("chip{c}.b"), clk).unwrap();
            b.link::<u64>(a, "out", z, "in", spec.latency(7)).unwrap();
            b.link::<u32>(z, ["up", ".", "0"], node, ["down.", "b"], spec).unwrap();
            b.install_with(a, || Ok(Idle)).unwrap();
            b.install_with(z, || Ok(Idle)).unwrap();
            if c == 1 {
                shape = b.block_end(mark, &[node]);
                assert!(shape.is_some(), "the block reaches only its node");
            }
        }
        (b, skipped)
    }

    #[test]
    fn an_untraced_partition_skips_blocks_it_makes_none_of_and_builds_the_same_system() {
        let plan = BuildScope::Declare.enter(chips_in_blocks).0.plan(&PartitionRule::ByName { depth: 1 }, 4, None);
        let plan = plan.unwrap();
        let (full, none) = chips_in_blocks();
        assert!(none.is_empty(), "a serial run skips nothing");
        for (me, tracks, want) in
            [(2, false, vec![3]), (1, false, vec![2, 3]), (0, false, vec![2, 3]), (2, true, vec![])]
        {
            let scope = BuildScope::Part { part_of: plan.part_of.clone().into(), links: plan.links, me, tracks };
            let (b, skipped) = scope.enter(chips_in_blocks);
            assert_eq!(skipped, want, "partition {me}, tracks {tracks}");
            assert_eq!((b.comps.len(), b.refs.len()), (full.comps.len(), full.refs.len()), "partition {me}");
            assert_eq!(b.longest, full.longest, "partition {me}: the skipped links' round trips count");
            let sim = b.build_partition(&plan, me).unwrap();
            let own = sim.component_names().iter().position(|n| n == &format!("chip{me}.a")).unwrap();
            assert!(sim.component::<Idle>(ComponentId(own as u32)).is_some(), "partition {me} makes its own");
        }
    }

    #[test]
    fn a_block_that_declares_a_clock_or_reaches_outside_is_not_skippable() {
        let mut b = SimBuilder::new();
        let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
        let (x, y) = (b.reserve("x", clk).unwrap(), b.reserve("y", clk).unwrap());
        let mark = b.block_start();
        let a = b.reserve("a", clk).unwrap();
        b.link::<u64>(a, "out", x, "in", LinkSpec::default()).unwrap();
        assert!(b.block_end(mark, &[]).is_none(), "a link to x, not among the block's touches");
        assert!(b.block_end(mark, &[y]).is_none());
        assert!(b.block_end(mark, &[x]).is_some());
        let mark = b.block_start();
        b.clock("other", Frequency::from_mhz(500)).unwrap();
        b.reserve("c", clk).unwrap();
        assert!(b.block_end(mark, &[]).is_none(), "a skipped block would not declare the clock");
    }

    #[test]
    fn a_failing_constructor_names_its_component() {
        let mut b = SimBuilder::new();
        let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
        b.add_with("chip0.hbm", clk, || -> Result<Idle, String> { Err("no memory".into()) }).unwrap();
        let err = b.build().err().unwrap();
        assert_eq!(err.to_string(), "component \"chip0.hbm\": no memory");
        let mut b = SimBuilder::new();
        let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
        let id = b.add_with("x", clk, || Ok(Idle)).unwrap();
        assert!(matches!(b.install(id, Idle), Err(BuildError::AlreadyInstalled { .. })));
    }
}
