//! What a component sees during its tick: the time, its ports, its timers, and the tracer.

use crate::link::{
    Arena, Blocked, Cut, ErasedArena, InPort, InputIndex, InputKey, LinkRef, LinkState, OutPort, Payload,
};
use crate::sched::{ActiveLink, Sched, State};
use crate::time::{Clock, Cycles, Time};
use crate::trace::{Arg, Flow, RecordKind, TraceRecord, TrackId};
use crate::trace_state::TraceState;
use crate::ComponentId;

/// All links of a simulation, one arena per payload type.
pub(crate) struct Links {
    pub arenas: Vec<Box<dyn ErasedArena>>,
    /// The payload type of each arena, checked on every typed access (a constant compare
    /// instead of two virtual calls).
    pub types: Vec<std::any::TypeId>,
    /// By link id.
    pub refs: Vec<LinkRef>,
}

impl Links {
    #[inline]
    pub fn state<T: Payload>(&mut self, r: LinkRef) -> &mut LinkState<T> {
        let a = r.arena as usize;
        assert!(
            self.types[a] == std::any::TypeId::of::<Arena<T>>(),
            "a port's payload type always matches its arena (ports are made by the builder)"
        );
        let erased: &mut dyn ErasedArena = self.arenas[a].as_mut();
        // SAFETY: the arena at index `a` was created as an `Arena<T>` for exactly the type whose
        // TypeId we just compared (see `SimBuilder::arena_for`), so the data pointer of this
        // trait object points to a live `Arena<T>`, borrowed mutably for the returned lifetime.
        let arena = unsafe { &mut *(erased as *mut dyn ErasedArena as *mut Arena<T>) };
        &mut arena.links[r.slot as usize]
    }

    /// Two distinct links at once (`None` when `a` and `b` are the same link).
    #[inline]
    pub fn pair<T: Payload, U: Payload>(
        &mut self,
        a: LinkRef,
        b: LinkRef,
    ) -> Option<(&mut LinkState<T>, &mut LinkState<U>)> {
        let (x, y) = (a.arena as usize, b.arena as usize);
        assert!(
            self.types[x] == std::any::TypeId::of::<Arena<T>>() && self.types[y] == std::any::TypeId::of::<Arena<U>>(),
            "a port's payload type always matches its arena (ports are made by the builder)"
        );
        if x == y {
            let erased: &mut dyn ErasedArena = self.arenas[x].as_mut();
            // SAFETY: as in `state`: the arena at `x` is an `Arena<T>` (its TypeId was compared).
            let arena = unsafe { &mut *(erased as *mut dyn ErasedArena as *mut Arena<T>) };
            let [p, q] = arena.links.get_disjoint_mut([a.slot as usize, b.slot as usize]).ok()?;
            // SAFETY: one arena holds one payload type, so `Arena<T>` and `Arena<U>` have the
            // same TypeId (both were compared with the arena's): `T` and `U` are the same type.
            let q = unsafe { &mut *(q as *mut LinkState<T> as *mut LinkState<U>) };
            return Some((p, q));
        }
        let [ea, eb] = self.arenas.get_disjoint_mut([x, y]).ok()?;
        // SAFETY: as in `state`, for each of two distinct arenas whose TypeIds were compared.
        let (ta, tb) = unsafe {
            (
                &mut *(ea.as_mut() as *mut dyn ErasedArena as *mut Arena<T>),
                &mut *(eb.as_mut() as *mut dyn ErasedArena as *mut Arena<U>),
            )
        };
        Some((&mut ta.links[a.slot as usize], &mut tb.links[b.slot as usize]))
    }
}

/// Kernel state shared by all components during a step.
pub(crate) struct Core {
    pub now: Time,
    pub sched: Sched,
    pub links: Links,
    pub trace: Option<Box<TraceState>>,
    /// Messages sent plus received plus explicit progress marks: the deadlock detector's pulse.
    pub progress: u64,
    /// Messages currently in links.
    pub in_links: u64,
    /// Per-component track ids (when tracing is on, else empty).
    pub comp_tracks: Vec<TrackId>,
    /// Per component: flow ids handed out so far. Per component, not global, so ids never
    /// depend on the order components tick in within a step.
    pub flow_next: Vec<u64>,
    /// Partitioned runs: credits returned on cut links this window, per sender partition, as
    /// (link id, time the credit is back). Empty in a serial run.
    pub credits_out: Vec<Vec<(u32, Time)>>,
}

/// The view of the simulation a component gets while it ticks.
pub struct Ctx<'a> {
    pub(crate) core: &'a mut Core,
    pub(crate) comp: u32,
    pub(crate) cycle: u64,
}

impl Core {
    /// A credit coming back from another partition on cut link `r`, sent from here.
    pub(crate) fn import_credit(&mut self, r: LinkRef, back: Time) {
        let t = self.links.arenas[r.arena as usize].timing_mut(r.slot);
        t.returns.push_back(back);
        if t.activates_out() {
            let src = t.src.0;
            self.sched.meta[src as usize].active_out.push(ActiveLink { arena: r.arena, slot: r.slot });
        }
    }
}

/// What [`Ctx::forward`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// No message has arrived on the input.
    Empty,
    /// A message has arrived but the output cannot take it now (counted as a refusal).
    Blocked,
    /// One message moved; `more`: the next one has arrived and the output would take it now.
    Moved {
        /// Whether another move would succeed at this edge.
        more: bool,
    },
}

/// What a receive or a send changes besides its link: the kernel state but the links, so a
/// component's tick can hold two links and this at once.
pub(crate) struct Rest<'c> {
    now: Time,
    comp: u32,
    sched: &'c mut Sched,
    trace: &'c mut Option<Box<TraceState>>,
    progress: &'c mut u64,
    in_links: &'c mut u64,
    credits_out: &'c mut Vec<Vec<(u32, Time)>>,
}

impl Core {
    /// The links, and the rest of the kernel state as component `comp`'s sends and receives
    /// change it.
    #[inline(always)]
    pub(crate) fn split(&mut self, comp: u32) -> (&mut Links, Rest<'_>) {
        let rest = Rest {
            now: self.now,
            comp,
            sched: &mut self.sched,
            trace: &mut self.trace,
            progress: &mut self.progress,
            in_links: &mut self.in_links,
            credits_out: &mut self.credits_out,
        };
        (&mut self.links, rest)
    }
}

impl Rest<'_> {
    /// [`Ctx::recv`] on `link` (at `r`).
    #[inline(always)]
    fn recv_on<T: Payload>(&mut self, link: &mut LinkState<T>, r: LinkRef) -> Option<T> {
        let now = self.now;
        debug_assert_eq!(link.timing.dst.0, self.comp, "port used by a component that does not own it");
        if link.buf.head_at() > now {
            return None; // empty, or the first message is still in flight
        }
        let (at, msg) = link.buf.pop_front()?;
        let back = now + link.timing.credit_latency;
        let record = link.timing.record();
        if record {
            link.stats.wait_ps.record(now.since(at).as_ps());
        }
        if let Cut::In { part } = link.timing.cut {
            // The sender is in another partition: the credit travels there at the window's end.
            link.recv_log.push(now);
            self.credits_out[part as usize].push((r.id.0, back));
            *self.progress += 1;
            *self.in_links -= 1;
            return Some(msg);
        }
        link.timing.returns.push_back(back);
        // Credits already back are folded first: a sender with credits is neither listed as
        // possibly blocked nor looked up (its scheduling state is elsewhere in memory).
        link.timing.refresh(now);
        let src_active = link.timing.activates_out();
        if link.timing.hooked() {
            if let Some(h) = link.hook.as_mut() {
                h.received(now, msg.trace_bits());
            }
        }
        if record {
            link.stats.occupancy.set(now, link.buf.len() as u64);
        }
        let src = link.timing.src.0;
        let blocked =
            link.timing.wants && link.timing.credits == 0 && self.sched.meta[src as usize].state == State::Asleep;
        *self.progress += 1;
        *self.in_links -= 1;
        if src_active {
            self.sched.meta[src as usize].active_out.push(ActiveLink { arena: r.arena, slot: r.slot });
        }
        if blocked {
            self.sched.arm(src, back);
        }
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.link_received(r.id.index());
            tr.credit_returned(self.comp, r.id.index(), back);
        }
        Some(msg)
    }

    /// [`Ctx::can_send`] on `link` (at `r`).
    #[inline(always)]
    fn can_send_on<T: Payload>(&mut self, link: &mut LinkState<T>, r: LinkRef) -> bool {
        if link.timing.can_send(&link.pace, self.now) {
            return true;
        }
        if link.timing.refused() {
            self.sched.meta[self.comp as usize].active_out.push(ActiveLink { arena: r.arena, slot: r.slot });
        }
        false
    }

    /// [`Ctx::send`] on `link` (at `r`), which [`Rest::can_send_on`] allowed at this edge.
    #[inline(always)]
    fn send_on<T: Payload>(&mut self, link: &mut LinkState<T>, r: LinkRef, msg: T) {
        let now = self.now;
        debug_assert_eq!(link.timing.src.0, self.comp, "port used by a component that does not own it");
        let bytes = msg.size_bytes();
        let bits = if self.trace.is_some() { msg.trace_bits() } else { 0 };
        let arrival = link.timing.spend(&mut link.pace, now, bytes);
        link.timing.wants = false;
        let record = link.timing.record();
        if record {
            link.stats.msgs += 1;
            link.stats.bytes += u64::from(bytes);
        }
        if let Cut::Out { .. } = link.timing.cut {
            // The receiver is in another partition: the message travels there at the window's
            // end (its arrival is at least one lookahead away, so it cannot be late).
            link.out.push((now, arrival, msg));
            *self.progress += 1;
            return;
        }
        debug_assert!(link.buf.back().is_none_or(|(a, _)| *a <= arrival), "arrivals on a link never decrease");
        if link.timing.hooked() {
            if let Some(h) = link.hook.as_mut() {
                h.sent(arrival, msg.trace_bits());
            }
        }
        link.buf.push_back((arrival, msg));
        if record {
            link.stats.occupancy.set(now, link.buf.len() as u64);
        }
        let dst = link.timing.dst.0;
        let credits = link.timing.credits;
        let newly = !std::mem::replace(&mut link.timing.in_active, true);
        *self.progress += 1;
        *self.in_links += 1;
        if newly {
            self.sched.meta[dst as usize].active_in.push(ActiveLink { arena: r.arena, slot: r.slot });
        }
        self.sched.arm(dst, arrival);
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.link_sent(self.comp, r.id.index(), now, credits, bits);
        }
    }
}

/// Which inputs of an [`InputIndex`] may hold a message (see [`Ctx::pending_in`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingInputs(u64);

impl PendingInputs {
    /// True if input number `i` may hold a message (false: it holds none, in flight or
    /// arrived). Numbers from 64 on always may.
    #[inline]
    pub fn may_hold(self, i: usize) -> bool {
        i >= 64 || self.0 & (1 << i) != 0
    }

    /// Inputs 0 to 63 as a bit set (bit `i`: [`PendingInputs::may_hold`] of `i`).
    #[inline]
    pub fn low_bits(self) -> u64 {
        self.0
    }
}

impl<'a> Ctx<'a> {
    /// Current simulated time (this component's clock edge).
    #[inline]
    pub fn now(&self) -> Time {
        self.core.now
    }
    /// Index of the current edge of this component's clock.
    #[inline]
    pub fn cycle(&self) -> Cycles {
        Cycles(self.cycle)
    }
    /// This component's id.
    pub fn id(&self) -> ComponentId {
        ComponentId(self.comp)
    }
    /// This component's clock.
    pub fn clock(&self) -> &Clock {
        let d = self.core.sched.meta[self.comp as usize].domain;
        &self.core.sched.domains[d as usize].clock
    }

    /// Takes the oldest message that has arrived on `port`, returning its credit to the sender
    /// after the link's credit latency.
    #[inline]
    pub fn recv<T: Payload>(&mut self, port: InPort<T>) -> Option<T> {
        let (links, mut rest) = self.core.split(self.comp);
        rest.recv_on(links.state::<T>(port.r), port.r)
    }

    /// This component's inputs that may hold a message, as keys ([`InPort::key`]): every
    /// input with a message in flight, or arrived and not yet received, is among them (some
    /// may hold none), in no particular order. A component with many inputs polls these
    /// instead of all of its inputs.
    #[inline]
    pub fn pending_inputs(&self) -> impl ExactSizeIterator<Item = InputKey> + '_ {
        self.core.sched.meta[self.comp as usize].active_in.iter().map(|a| InputKey::of(a.arena, a.slot))
    }

    /// The inputs of `index` that may hold a message, by their numbers in it: every one
    /// holding a message is among them, some others may be. When at least half of them are
    /// pending, all of them (polling them all is then cheaper than looking each up).
    pub fn pending_in(&self, index: &InputIndex) -> PendingInputs {
        let n = index.len();
        if n > 64 {
            return PendingInputs(u64::MAX); // numbers from 64 on are always pending
        }
        if n == 0 {
            return PendingInputs(0);
        }
        let pending = self.pending_inputs();
        if pending.len() * 2 >= n {
            return PendingInputs(!0u64 >> (64 - n));
        }
        let mut mask = 0u64;
        for key in pending {
            if let Some(i) = index.get(key) {
                mask |= 1 << i;
            }
        }
        PendingInputs(mask)
    }

    /// The oldest arrived message on `port`, without taking it.
    #[inline]
    pub fn peek<T: Payload>(&mut self, port: InPort<T>) -> Option<&T> {
        let now = self.core.now;
        let link = self.core.links.state::<T>(port.r);
        if link.buf.head_at() > now {
            return None;
        }
        link.buf.front().map(|(_, m)| m)
    }

    /// How many messages have arrived on `port` and wait to be received.
    pub fn arrived<T: Payload>(&mut self, port: InPort<T>) -> usize {
        let now = self.core.now;
        let link = self.core.links.state::<T>(port.r);
        link.buf.partition_point(|(at, _)| *at <= now)
    }

    /// Whether a send on `port` would be accepted now (a credit is free and the bandwidth
    /// limit allows it).
    #[inline(always)]
    pub fn can_send<T: Payload>(&mut self, port: OutPort<T>) -> bool {
        let (links, mut rest) = self.core.split(self.comp);
        rest.can_send_on(links.state::<T>(port.r), port.r)
    }

    /// Credits the sender holds on `port` now.
    pub fn credits<T: Payload>(&mut self, port: OutPort<T>) -> u32 {
        let now = self.core.now;
        let t = &mut self.core.links.state::<T>(port.r).timing;
        t.refresh(now);
        let credits = t.credits;
        if credits == 0 && t.refused() {
            self.core.sched.meta[self.comp as usize]
                .active_out
                .push(ActiveLink { arena: port.r.arena, slot: port.r.slot });
        }
        credits
    }

    /// Sends `msg` on `port`. It becomes visible to the receiver after the link latency.
    /// Refused (the message is handed back) when no credit is free or the bandwidth limit is
    /// reached this cycle.
    #[inline]
    pub fn send<T: Payload>(&mut self, port: OutPort<T>, msg: T) -> Result<(), Blocked<T>> {
        let (links, mut rest) = self.core.split(self.comp);
        let link = links.state::<T>(port.r);
        if !rest.can_send_on(link, port.r) {
            if link.timing.record() {
                link.stats.refused += 1;
            }
            return Err(Blocked(msg));
        }
        rest.send_on(link, port.r, msg);
        Ok(())
    }

    /// Moves the oldest message that has arrived on `input` to `output`, as `f` turns it,
    /// when `output` would accept a send now: what [`Ctx::peek`], [`Ctx::can_send`],
    /// [`Ctx::recv`] and [`Ctx::send`] do one after another, with one lookup of each link.
    /// A message that waits while `output` cannot take it counts as a refusal, as
    /// [`Ctx::can_send`] returning false does (the sender is woken when the link frees).
    /// After a move, [`Forward::Moved`] says whether the next message has arrived and
    /// `output` would take it now (if it would not, that too counts as a refusal).
    #[inline]
    pub fn forward<T: Payload, U: Payload>(
        &mut self,
        input: InPort<T>,
        output: OutPort<U>,
        f: impl FnOnce(T) -> U,
    ) -> Forward {
        let (links, mut rest) = self.core.split(self.comp);
        let now = rest.now;
        let Some((li, lo)) = links.pair::<T, U>(input.r, output.r) else {
            return self.forward_one_link(input, output, f);
        };
        if li.buf.head_at() > now {
            return Forward::Empty;
        }
        if !rest.can_send_on(lo, output.r) {
            return Forward::Blocked;
        }
        let Some(msg) = rest.recv_on(li, input.r) else {
            return Forward::Empty;
        };
        rest.send_on(lo, output.r, f(msg));
        let more = li.buf.head_at() <= now && rest.can_send_on(lo, output.r);
        Forward::Moved { more }
    }

    /// [`Ctx::forward`] from a link to itself (a component looped back on itself): the same
    /// steps, each looking the link up again. (One body generic over both cases, through a
    /// trait giving each end, ran the kernel ring 3 % slower: the common case stays apart.)
    #[cold]
    fn forward_one_link<T: Payload, U: Payload>(
        &mut self,
        input: InPort<T>,
        output: OutPort<U>,
        f: impl FnOnce(T) -> U,
    ) -> Forward {
        let (links, mut rest) = self.core.split(self.comp);
        let now = rest.now;
        if links.state::<T>(input.r).buf.head_at() > now {
            return Forward::Empty;
        }
        if !rest.can_send_on(links.state::<U>(output.r), output.r) {
            return Forward::Blocked;
        }
        let Some(msg) = rest.recv_on(links.state::<T>(input.r), input.r) else {
            return Forward::Empty;
        };
        // (The receive returns its credit a credit latency from now: the send stays allowed.)
        rest.send_on(links.state::<U>(output.r), output.r, f(msg));
        let more =
            links.state::<T>(input.r).buf.head_at() <= now && rest.can_send_on(links.state::<U>(output.r), output.r);
        Forward::Moved { more }
    }

    /// Ticks this component again at the first edge at or after `t` even if it goes idle.
    pub fn wake_at(&mut self, t: Time) {
        let m = &mut self.core.sched.meta[self.comp as usize];
        if t < m.timer {
            m.timer = t;
        }
    }

    /// Ticks this component again `n` cycles from now (n >= 1) even if it goes idle.
    pub fn wake_after(&mut self, n: Cycles) {
        let t = self.clock().edge(self.cycle + n.0.max(1));
        self.wake_at(t);
    }

    /// Marks forward progress that sends no message (e.g. internal computation), so the
    /// deadlock detector does not mistake a long computation for a hang.
    pub fn progress(&mut self) {
        self.core.progress += 1;
    }

    /// A fresh flow id for linking trace slices: deterministic, a counter per component mixed
    /// with the component id, so ids never depend on the order components tick in.
    pub fn new_flow_id(&mut self) -> u64 {
        let n = &mut self.core.flow_next[self.comp as usize];
        *n += 1;
        (u64::from(self.comp) << 40) | *n
    }

    /// The tracer, or `None` when no trace sink is attached (one branch).
    #[inline]
    pub fn tracer(&mut self) -> Option<Tracer<'_>> {
        let comp = self.comp;
        let now = self.core.now;
        let track = self.core.comp_tracks.get(comp as usize).copied();
        self.core.trace.as_deref_mut().map(|st| Tracer { st, comp, now, track })
    }
}

/// Records trace events for the component that is ticking, stamped in simulated time.
pub struct Tracer<'a> {
    st: &'a mut TraceState,
    comp: u32,
    now: Time,
    track: Option<TrackId>,
}

impl Tracer<'_> {
    /// This component's own slice track.
    pub fn own_track(&self) -> TrackId {
        self.track.unwrap_or(TrackId(0))
    }
    /// A complete slice `[start, end)` on `track` (end may be now or earlier).
    pub fn slice(&mut self, track: TrackId, name: &'static str, start: Time, end: Time, flow: Flow, arg: Option<Arg>) {
        let kind = RecordKind::Slice { name, start, end: end.max(start), flow, arg };
        self.st.push(self.comp, TraceRecord { time: self.now, track, kind });
    }
    /// An instant at the current time on `track`.
    pub fn instant(&mut self, track: TrackId, name: &'static str, flow: Flow, arg: Option<Arg>) {
        let kind = RecordKind::Instant { name, flow, arg };
        self.st.push(self.comp, TraceRecord { time: self.now, track, kind });
    }
    /// A counter sample at the current time on a counter `track`.
    pub fn counter(&mut self, track: TrackId, value: f64) {
        self.st.push(self.comp, TraceRecord { time: self.now, track, kind: RecordKind::Counter { value } });
    }
    /// A signal value at the current time on a signal `track`.
    pub fn signal(&mut self, track: TrackId, value: u64) {
        self.st.push(self.comp, TraceRecord { time: self.now, track, kind: RecordKind::Signal { value } });
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        Activity, Component, Ctx, Cycles, Dur, Frequency, InPort, InputKey, LinkSpec, OutPort, SimBuilder, Simulation,
    };
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Sends one message on `a` at cycle 0 and one on `b` at cycle 20.
    struct Sender {
        a: OutPort<u64>,
        b: OutPort<u64>,
    }
    impl Component for Sender {
        fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
            match cx.cycle().0 {
                0 => cx.send(self.a, 1).expect("a credit"),
                20 => cx.send(self.b, 2).expect("a credit"),
                _ => {}
            }
            if cx.cycle().0 < 20 {
                cx.wake_after(Cycles(1));
            }
            Activity::Idle
        }
    }

    /// (cycle, pending inputs) at each of the receiver's ticks.
    type Seen = Rc<RefCell<Vec<(u64, Vec<InputKey>)>>>;

    /// Records its pending inputs at every tick; holds the message on `a` until cycle 30.
    struct Receiver {
        a: InPort<u64>,
        b: InPort<u64>,
        seen: Seen,
    }
    impl Component for Receiver {
        fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
            let mut keys: Vec<InputKey> = cx.pending_inputs().collect();
            keys.sort();
            let now = cx.cycle().0;
            self.seen.borrow_mut().push((now, keys));
            if now >= 30 {
                while cx.recv(self.a).is_some() {}
            }
            while cx.recv(self.b).is_some() {}
            if now < 40 {
                cx.wake_after(Cycles(5));
            }
            Activity::Idle
        }
    }

    /// The sender and the receiver on two 3-cycle links `a` and `b` (only the links `keep`
    /// accepts keeping statistics, when given), run until idle: the simulation, how many links
    /// were left without statistics, and the receiver's two ports.
    fn run_pair(
        keep: Option<&dyn Fn(&str) -> bool>,
        seen: Seen,
    ) -> (Simulation, Option<u64>, InPort<u64>, InPort<u64>) {
        let mut b = SimBuilder::new();
        let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
        let (s, r) = (b.reserve("s", clk).unwrap(), b.reserve("r", clk).unwrap());
        let spec = LinkSpec { latency: Cycles(3), ..LinkSpec::default() };
        let (oa, ia) = b.link::<u64>(s, "a", r, "a", spec).unwrap();
        let (ob, ib) = b.link::<u64>(s, "b", r, "b", spec).unwrap();
        let left = keep.map(|k| b.keep_link_stats_where(k).unwrap());
        b.install(s, Sender { a: oa, b: ob }).unwrap();
        b.install(r, Receiver { a: ia, b: ib, seen }).unwrap();
        let mut sim = b.build().unwrap();
        sim.run_until_idle(Dur::from_ns(1_000)).unwrap();
        (sim, left, ia, ib)
    }

    /// Sends one message on `x` and one on `y` (depth 1 each) at cycle 0; with `ask`, wants
    /// a second on `x` (refused at cycle 0, sent when `can_send` allows). Records its ticks.
    struct Eager {
        x: OutPort<u64>,
        y: OutPort<u64>,
        ask: bool,
        second_sent: bool,
        ticks: Rc<RefCell<Vec<u64>>>,
    }
    impl Component for Eager {
        fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
            self.ticks.borrow_mut().push(cx.cycle().0);
            if cx.cycle().0 == 0 {
                cx.send(self.x, 1).expect("a credit");
                cx.send(self.y, 2).expect("a credit");
                if self.ask {
                    assert!(cx.send(self.x, 3).is_err(), "depth 1: no second credit");
                }
            } else if self.ask && !self.second_sent && cx.can_send(self.x) {
                cx.send(self.x, 3).expect("a credit");
                self.second_sent = true;
            }
            Activity::Idle
        }
    }

    /// Takes everything from cycle 10 on; counts it.
    struct Late {
        x: InPort<u64>,
        y: InPort<u64>,
        got: Rc<RefCell<u64>>,
    }
    impl Component for Late {
        fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
            if cx.cycle().0 < 10 {
                cx.wake_at(cx.clock().edge(10));
                return Activity::Idle;
            }
            while cx.recv(self.x).is_some() || cx.recv(self.y).is_some() {
                *self.got.borrow_mut() += 1;
            }
            Activity::Idle
        }
    }

    /// Sends 0, 1, 2, ... (`u32`) whenever its output takes one, up to `n`.
    struct Source {
        out: OutPort<u32>,
        next: u32,
        n: u32,
    }
    impl Component for Source {
        fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
            while self.next < self.n && cx.send(self.out, self.next).is_ok() {
                self.next += 1;
            }
            if self.next < self.n {
                cx.wake_after(Cycles(1));
            }
            Activity::Idle
        }
    }

    /// Receives on every third cycle only (back-pressure upstream); sums what it gets.
    struct Sink {
        input: InPort<u64>,
        sum: u64,
    }
    impl Component for Sink {
        fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
            if cx.cycle().0.is_multiple_of(3) {
                while let Some(v) = cx.recv(self.input) {
                    self.sum += v;
                }
            } else {
                cx.wake_after(Cycles(1));
            }
            Activity::Idle
        }
        fn report(&self, out: &mut crate::StatsWriter<'_>) {
            out.count("sum", self.sum);
        }
    }

    /// Moves up to two messages per tick from `input` to `output` (adding `add`, widening to
    /// `U`), with [`Ctx::forward`] (`fused`) or with peek, can_send, recv and send.
    struct Stage<T, U> {
        input: InPort<T>,
        output: OutPort<U>,
        add: u64,
        fused: bool,
        moved: u64,
    }
    impl<T: crate::Payload + Into<u64>, U: crate::Payload + TryFrom<u64>> Component for Stage<T, U> {
        fn tick(&mut self, cx: &mut Ctx<'_>) -> Activity {
            let add = self.add;
            let f = move |v: T| U::try_from(v.into() + add).ok().expect("fits");
            let (i, o) = (self.input, self.output);
            let mut again;
            let mut moves = 0;
            if self.fused {
                loop {
                    match cx.forward(i, o, f) {
                        crate::Forward::Moved { more } => {
                            moves += 1;
                            again = more;
                        }
                        crate::Forward::Empty | crate::Forward::Blocked => again = false,
                    }
                    if !again || moves == 2 {
                        break;
                    }
                }
            } else {
                again = cx.peek(i).is_some() && cx.can_send(o);
                while again && moves < 2 {
                    let v = cx.recv(i).expect("peeked");
                    assert!(cx.send(o, f(v)).is_ok(), "can_send said yes");
                    moves += 1;
                    again = cx.peek(i).is_some() && cx.can_send(o);
                }
            }
            self.moved += moves;
            if again {
                Activity::Busy
            } else {
                Activity::Idle
            }
        }
        fn report(&self, out: &mut crate::StatsWriter<'_>) {
            out.count("moved", self.moved);
        }
    }

    #[test]
    fn forwarding_changes_what_peek_can_send_recv_and_send_change() {
        use crate::{Bandwidth, StatsReport};
        let run = |fused: bool| -> StatsReport {
            let mut b = SimBuilder::new();
            let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
            let slow = b.clock("slow", Frequency::from_mhz(700)).unwrap();
            let ids: Vec<_> = ["src", "a", "b", "c", "sink", "loop"]
                .iter()
                .map(|n| b.reserve(n, if *n == "b" { slow } else { clk }).unwrap())
                .collect();
            let spec = LinkSpec::default();
            let (o0, i0) = b.link::<u32>(ids[0], "out", ids[1], "in", spec.depth(3)).unwrap();
            let (o1, i1) = b.link::<u64>(ids[1], "out", ids[2], "in", spec.latency(2).credit_latency(3)).unwrap();
            let bytes = spec.depth(1).bandwidth(Bandwidth::BytesPerCycle(4));
            let (o2, i2) = b.link::<u64>(ids[2], "out", ids[3], "in", bytes).unwrap();
            let flits = spec.depth(4).bandwidth(Bandwidth::MessagesPerCycle(1));
            let (o3, i3) = b.link::<u64>(ids[3], "out", ids[4], "in", flits).unwrap();
            let (o4, i4) = b.link::<u64>(ids[5], "out", ids[5], "in", spec.depth(4).latency(3)).unwrap();
            for v in [5, 6, 7] {
                b.preload(i4, v).unwrap();
            }
            b.install(ids[0], Source { out: o0, next: 0, n: 200 }).unwrap();
            b.install(ids[1], Stage { input: i0, output: o1, add: 1, fused, moved: 0 }).unwrap();
            b.install(ids[2], Stage { input: i1, output: o2, add: 10, fused, moved: 0 }).unwrap();
            b.install(ids[3], Stage { input: i2, output: o3, add: 100, fused, moved: 0 }).unwrap();
            b.install(ids[4], Sink { input: i3, sum: 0 }).unwrap();
            b.install(ids[5], Stage { input: i4, output: o4, add: 1, fused, moved: 0 }).unwrap();
            let mut sim = b.build().unwrap();
            sim.run_for(Dur::from_ns(2_000)).unwrap();
            sim.report()
        };
        let (fused, separate) = (run(true), run(false));
        assert_eq!(fused, separate, "every figure, the kernel's tick counts and each link's statistics");
        let count = |owner: &str, name: &str| match fused.owners[owner].get(name) {
            Some(crate::StatValue::Int(n)) => *n,
            other => panic!("{owner}.{name}: {other:?}"),
        };
        assert_eq!(count("c", "moved"), 200, "every message went through");
        assert_eq!(count("sink", "sum"), (0..200).sum::<u64>() + 200 * 111);
        assert!(count("loop", "moved") > 100, "the looped-back stage moves its three messages round");
    }

    #[test]
    fn a_sender_is_woken_by_a_freed_output_only_if_it_was_refused_there() {
        let run = |ask: bool| {
            let mut b = SimBuilder::new();
            let clk = b.clock("clk", Frequency::from_mhz(1000)).unwrap();
            let (p, c) = (b.reserve("p", clk).unwrap(), b.reserve("c", clk).unwrap());
            let spec = LinkSpec::default().depth(1);
            let (ox, ix) = b.link::<u64>(p, "x", c, "x", spec).unwrap();
            let (oy, iy) = b.link::<u64>(p, "y", c, "y", spec).unwrap();
            let (ticks, got) = (Rc::new(RefCell::new(Vec::new())), Rc::new(RefCell::new(0)));
            b.install(p, Eager { x: ox, y: oy, ask, second_sent: false, ticks: ticks.clone() }).unwrap();
            b.install(c, Late { x: ix, y: iy, got: got.clone() }).unwrap();
            let mut sim = b.build().unwrap();
            sim.run_until_idle(Dur::from_ns(1_000)).unwrap();
            let ticks = ticks.borrow().clone();
            let got = *got.borrow();
            (ticks, got)
        };
        // Credits come back at cycle 11 (received at 10, one cycle of credit latency).
        assert_eq!(run(true), (vec![0, 11], 3), "refused on x: woken when x frees, then sends");
        assert_eq!(run(false), (vec![0], 2), "never refused: the freed outputs wake nobody");
    }

    #[test]
    fn links_left_without_statistics_are_left_out_and_the_rest_unchanged() {
        let run = |keep: Option<&dyn Fn(&str) -> bool>| {
            let (sim, left, _, _) = run_pair(keep, Seen::default());
            (left, sim.report(), sim.report_where(&|_| true).1)
        };
        let (_, all, none_left) = run(None);
        let (left, some, left_out) = run(Some(&|name: &str| name == "s.a -> r.a"));
        assert_eq!((left, none_left, left_out), (Some(1), 0, 1));
        let (a, b) = ("link:s.a -> r.a", "link:s.b -> r.b");
        assert!(all.owners.contains_key(b) && !some.owners.contains_key(b), "b keeps no statistics");
        assert_eq!(all.owners[a], some.owners[a], "a's figures are as in a run that keeps every link's");
        assert_eq!(all.owners["kernel"], some.owners["kernel"]);
    }

    #[test]
    fn an_input_index_numbers_keys_in_push_order_dense_or_sparse() {
        use crate::InputIndex;
        // Dense: slots 10..20 of one arena, pushed out of order.
        let mut ix = InputIndex::new();
        let keys: Vec<InputKey> = [13, 10, 19, 11].iter().map(|&s| InputKey::of(2, s)).collect();
        keys.iter().for_each(|&k| ix.push(k));
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(ix.get(k), Some(i));
        }
        for s in [0, 9, 12, 20, 1 << 20] {
            assert_eq!(ix.get(InputKey::of(2, s)), None, "slot {s}");
        }
        assert_eq!(ix.get(InputKey::of(1, 13)), None, "another arena");
        // Sparse: keys far apart (two arenas) fall back to a search, with the same answers.
        let mut ix = InputIndex::new();
        let keys = [InputKey::of(0, 5), InputKey::of(7, 1), InputKey::of(0, 4_000_000)];
        keys.iter().for_each(|&k| ix.push(k));
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(ix.get(k), Some(i));
        }
        assert_eq!(ix.get(InputKey::of(0, 6)), None);
    }

    #[test]
    fn pending_inputs_list_every_input_holding_a_message_arrived_or_not() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let (_, _, ia, ib) = run_pair(None, seen.clone());
        let (ka, kb) = (ia.key(), ib.key());
        let at = |c: u64| seen.borrow().iter().find(|(n, _)| *n == c).map(|(_, k)| k.clone());
        assert_eq!(at(0), Some(vec![ka]), "a's message in flight (sent this cycle)");
        assert_eq!(at(3), Some(vec![ka]), "a's message arrived");
        assert_eq!(at(15), Some(vec![ka]), "held, not received: still pending after idle scans");
        let mut both = vec![ka, kb];
        both.sort();
        assert_eq!(at(20), Some(both.clone()), "b's message in flight too");
        assert_eq!(at(23), Some(both), "b's arrived (received at this tick)");
        assert_eq!(at(25), Some(vec![ka]), "b left once empty; a still holds its message");
        assert_eq!(at(30), Some(vec![ka]), "a received at this tick");
        assert_eq!(at(35), Some(vec![]), "nothing pending");
    }
}
