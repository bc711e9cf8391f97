//! The SRAM timing model: engine interfaces (clients) stream tensor accesses through a
//! round-robin bank-port arbiter, in cycles of the memory's own clock.
//!
//! An access started at cycle `s` waits `static_overhead_cycles` (spec §3's ~60 cycles), then
//! streams: each cycle it is granted, every partition of its range moves its next element
//! through one port of the bank that element's address selects (an element costs
//! `strided_port_cycles` grants when the innermost stride exceeds 16 B). Its data is usable
//! `access_latency_cycles` after its last grant. Alone on its banks it finishes at
//! `s + overhead + elements * port_cycles + latency`.
//!
//! Arbitration per cycle: clients are visited in priority order, each granted if every
//! (partition quarter, bank) it needs has a port left in its direction; the rest stall. After a
//! cycle with requests, the first requester in that cycle's order becomes the lowest priority
//! (rotating priority, deterministic). A client's accesses stream one after another, in order.
//!
//! Runs of cycles in which no request can be refused are skipped arithmetically: when the
//! requesting clients' whole bank footprints fit the ports, or their current banks fit and none
//! leaves its bank before the run ends. Contended cycles are stepped one by one. Both give the
//! same result ([`Sram::set_fast_forward`] turns skipping off for checking).

use crate::sram::arbiter::{bank_run_elements, footprint, quarters, PortUse};
use crate::sram::error::SramError;
use crate::sram::geometry::SramGeometry;
use crate::sram::pattern::AccessPattern;
use crate::sram::stats::{ClientStats, SramStats};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use trnsim_kernel::{Cycles, StatsWriter};

/// Most clients one memory arbitrates between.
pub const MAX_CLIENTS: usize = 64;

/// Longest access accepted, in port cycles (2^48: far beyond any real tensor access, and small
/// enough that cycle arithmetic cannot overflow).
pub const MAX_ACCESS_PORT_CYCLES: u64 = 1 << 48;

/// An engine interface of one memory (index in the client list given to [`Sram::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u32);

/// One access, numbered from 0 in start order per memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AccessId(pub u64);

/// A finished access: its data is usable from cycle `finish` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Which access.
    pub id: AccessId,
    /// The interface that made it.
    pub client: ClientId,
    /// The cycle it started (as passed to [`Sram::start`]).
    pub start: Cycles,
    /// First cycle at which its data is usable (last grant + 1 + access latency).
    pub finish: Cycles,
}

#[derive(Clone, Debug)]
struct Access {
    id: u64,
    pattern: AccessPattern,
    write: bool,
    start: u64,
    ready: u64,
    units_total: u64,
    units_done: u64,
    cost: u64,
    quarters: u16,
    footprint: u64,
    elem_bytes_all: u64,
}

#[derive(Clone, Debug)]
struct Client {
    name: String,
    queue: VecDeque<Access>,
}

/// The set bits of a mask, lowest first.
struct Bits(u64);

impl Iterator for Bits {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }
}

/// What the next run of cycles does: `k` cycles starting at `now`, in which the requesting
/// clients `reqs[..m]` (priority order) are granted per bit of `grants` (all of them when k > 1).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Plan {
    k: u64,
    reqs: [u8; MAX_CLIENTS],
    m: usize,
    grants: u64,
    banks: [u8; MAX_CLIENTS],
}

/// One requester of an arbitrated cycle on one bank, as a [`BankPortHook`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRequest {
    /// The requesting interface.
    pub client: ClientId,
    /// A write (else a read).
    pub write: bool,
    /// The partition groups its access covers (bit g = group g of 16; never 0).
    pub groups: u16,
    /// The arbiter granted it a port in every group.
    pub granted: bool,
}

/// Something outside the model that sees one bank's arbitration as it happens: the swap-in of
/// an RTL bank (trnsim-rtl's `swap_in`), which presents the same requests to the block and
/// checks its grants and stall count. Attached with [`Sram::attach_bank_hook`]; without one,
/// a cycle costs one branch on an `Option`.
pub trait BankPortHook {
    /// The bank this hook watches.
    fn bank(&self) -> u32;
    /// Cycle `now` (increasing from call to call) had requests on the bank: `reqs` in the
    /// arbiter's visiting order, with its decisions; `stalls` is the bank's stall count
    /// ([`SramStats::bank_stall_cycles`]) after the cycle.
    fn cycle(&mut self, now: u64, reqs: &[PortRequest], stalls: u64);
}

/// A hook in its slot (not cloned: a clone of the memory runs without it).
struct HookSlot(Box<dyn BankPortHook>);

impl std::fmt::Debug for HookSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BankPortHook(bank {})", self.0.bank())
    }
}

/// One banked SRAM's timing: clients, in-flight accesses, the arbiter and statistics. A plain
/// library model (no kernel component): the owner drives it with [`Sram::start`],
/// [`Sram::advance`], [`Sram::next_event`] and [`Sram::pop_completed`], all in cycles of the
/// memory's clock. No allocation per cycle.
///
/// Leaves out: data (see [`crate::sram::SramData`]), refresh and power, which engine may reach
/// which memory, and any pipelining of the static overhead beyond overlapping it with the same
/// client's previous access.
#[derive(Debug)]
pub struct Sram {
    name: String,
    geom: SramGeometry,
    clients: Vec<Client>,
    stats: SramStats,
    now: u64,
    next_id: u64,
    priority: usize,
    /// Bit `i` set: client `i`'s queue holds an access (planning visits only those).
    busy: u64,
    done: BinaryHeap<Reverse<(u64, u64, u32, u64)>>,
    fast: bool,
    hook: Option<HookSlot>,
    /// Planning's port counts, cleared before each use (a plan reads `&self`).
    ports_taken: std::cell::RefCell<PortUse>,
    /// The plan of the next run with no limit on its length, as the state now stands (`None`:
    /// not made since the state last changed). A run limited to `l` cycles is the same plan
    /// with `k` at most `l` (see [`Sram::plan`]), so the owner's `next_event` at the end of a
    /// tick and its `advance` at the start of the next one make it once.
    planned: std::cell::Cell<Option<Option<Plan>>>,
}

impl Sram {
    /// A memory named `name` (its path in errors and reports, e.g. `nc0.sbuf`) with the given
    /// interfaces (e.g. `["pe", "act", "dve", "pool", "dma0"]`; distinct, 1 to 64 of them).
    pub fn new(name: &str, geom: SramGeometry, clients: &[&str]) -> Result<Sram, SramError> {
        let memory = name.to_string();
        geom.validate().map_err(|error| SramError::Geometry { memory: memory.clone(), error })?;
        if clients.is_empty() || clients.len() > MAX_CLIENTS {
            let detail = format!("{} clients (1 to {MAX_CLIENTS} allowed)", clients.len());
            return Err(SramError::Client { memory, detail });
        }
        if let Some(dup) = clients.iter().enumerate().find(|(i, c)| clients[..*i].contains(c)) {
            return Err(SramError::Client { memory, detail: format!("client {:?} listed twice", dup.1) });
        }
        let stats = SramStats {
            bank_stall_cycles: vec![0; geom.banks as usize],
            clients: vec![ClientStats::default(); clients.len()],
            ..SramStats::default()
        };
        let clients = clients.iter().map(|c| Client { name: c.to_string(), queue: VecDeque::new() }).collect();
        let done = BinaryHeap::new();
        Ok(Sram {
            name: memory,
            geom,
            clients,
            stats,
            now: 0,
            next_id: 0,
            priority: 0,
            busy: 0,
            done,
            fast: true,
            hook: None,
            ports_taken: std::cell::RefCell::new(PortUse::new()),
            planned: std::cell::Cell::new(None),
        })
    }

    /// The memory's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The geometry it was built with.
    pub fn geometry(&self) -> &SramGeometry {
        &self.geom
    }
    /// The id of the client called `name`.
    pub fn client(&self, name: &str) -> Option<ClientId> {
        self.clients.iter().position(|c| c.name == name).map(|i| ClientId(i as u32))
    }
    /// Client names in id order.
    pub fn client_names(&self) -> impl Iterator<Item = &str> {
        self.clients.iter().map(|c| c.name.as_str())
    }
    /// The first cycle not yet simulated.
    pub fn now(&self) -> Cycles {
        Cycles(self.now)
    }
    /// Statistics so far.
    pub fn stats(&self) -> &SramStats {
        &self.stats
    }
    /// Accesses started and not yet popped by [`Sram::pop_completed`].
    pub fn outstanding(&self) -> usize {
        self.clients.iter().map(|c| c.queue.len()).sum::<usize>() + self.done.len()
    }
    /// Turns the arithmetic skipping of uncontended runs on (the default) or off (every cycle in
    /// which a client streams is stepped; for checking that both agree).
    pub fn set_fast_forward(&mut self, on: bool) {
        self.fast = on;
        self.planned.set(None);
    }

    /// Sends the arbitration of bank `hook.bank()` to `hook` from now on (swap-in of an RTL
    /// bank; call before the run), every cycle with requests on it, those of skipped
    /// uncontended runs included (the hook costs them per cycle; the results are unchanged).
    /// The error names a bank that does not exist.
    pub fn attach_bank_hook(&mut self, hook: Box<dyn BankPortHook>) -> Result<(), String> {
        if hook.bank() >= self.geom.banks {
            return Err(format!("{}: bank {} does not exist (banks 0..{})", self.name, hook.bank(), self.geom.banks));
        }
        self.hook = Some(HookSlot(hook));
        Ok(())
    }

    /// Starts an access by `client` at cycle `now` (simulating up to it first). Refused, with
    /// nothing changed, for an unknown client, an invalid pattern, or `now` before
    /// [`Sram::now`].
    pub fn start(
        &mut self,
        client: ClientId,
        pattern: &AccessPattern,
        write: bool,
        now: Cycles,
    ) -> Result<AccessId, SramError> {
        let access = self.check_access(client, pattern, write, now)?;
        self.advance(now);
        let id = AccessId(access.id);
        self.next_id += 1;
        self.clients[client.0 as usize].queue.push_back(access);
        self.busy |= 1 << client.0;
        self.planned.set(None);
        Ok(id)
    }

    fn check_access(&self, client: ClientId, p: &AccessPattern, write: bool, now: Cycles) -> Result<Access, SramError> {
        // (The memory's name is copied only into an error: an access allocates nothing.)
        let memory = || self.name.clone();
        let Some(c) = self.clients.get(client.0 as usize) else {
            return Err(SramError::Client { memory: memory(), detail: format!("no client with id {}", client.0) });
        };
        let bad = |error| SramError::Pattern { memory: self.name.clone(), client: c.name.clone(), error };
        p.validate(&self.geom).map_err(bad)?;
        let cost = p.port_cycles_per_element(&self.geom);
        let units_total = p.elements_per_partition().checked_mul(cost).filter(|&u| u <= MAX_ACCESS_PORT_CYCLES);
        let Some(units_total) = units_total else {
            let d = format!("more than {MAX_ACCESS_PORT_CYCLES} port cycles per partition");
            return Err(bad(crate::sram::FieldError::new("dims", d)));
        };
        if now.0 < self.now {
            return Err(SramError::TimeWentBack { memory: memory(), now: Cycles(self.now), requested: now });
        }
        Ok(Access {
            id: self.next_id,
            pattern: *p,
            write,
            start: now.0,
            ready: now.0.saturating_add(u64::from(self.geom.static_overhead_cycles)),
            units_total,
            units_done: 0,
            cost,
            quarters: quarters(p, &self.geom),
            footprint: footprint(p, &self.geom),
            elem_bytes_all: u64::from(p.partitions) * u64::from(p.elem_bytes),
        })
    }

    /// Simulates every cycle before `to` (nothing if `to` is not after [`Sram::now`]).
    pub fn advance(&mut self, to: Cycles) {
        while self.now < to.0 {
            match self.plan(to.0 - self.now) {
                Some(plan) => self.apply(&plan),
                None => {
                    self.now = to.0;
                    self.planned.set(None);
                }
            }
        }
    }

    /// The next cycle worth advancing to: a completion becoming visible (or [`Sram::now`] if one
    /// is already waiting), the end of an uncontended run, or the next cycle while accesses
    /// contend. A driver that advances to it and pops completions misses nothing; some returned
    /// cycles change nothing visible. `None` when no access is in flight.
    pub fn next_event(&self) -> Option<Cycles> {
        let internal = self.plan(u64::MAX).map(|p| self.now.saturating_add(p.k));
        let visible = self.done.peek().map(|Reverse(d)| d.0.max(self.now));
        internal.into_iter().chain(visible).min().map(Cycles)
    }

    /// The earliest finished access whose finish cycle is at or before [`Sram::now`], if any
    /// (ordered by finish cycle, then access id).
    pub fn pop_completed(&mut self) -> Option<Completion> {
        let Reverse((finish, id, client, start)) = *self.done.peek()?;
        if finish > self.now {
            return None;
        }
        self.done.pop();
        Some(Completion { id: AccessId(id), client: ClientId(client), start: Cycles(start), finish: Cycles(finish) })
    }

    /// Writes the statistics (see [`SramStats::report`]) with rates over [`Sram::now`] cycles.
    pub fn report(&self, out: &mut StatsWriter<'_>) {
        self.report_prefixed("", out);
    }

    /// [`Sram::report`] with every statistic's name prefixed (e.g. "sbuf.").
    pub fn report_prefixed(&self, prefix: &str, out: &mut StatsWriter<'_>) {
        if out.is_probe() {
            // The report leaves this owner out: one figure says it has some (the names of a
            // hundred per-client figures are not built).
            out.count("cycles", self.now);
            return;
        }
        let names: Vec<String> = self.clients.iter().map(|c| c.name.clone()).collect();
        self.stats.report_prefixed(prefix, &names, self.now, out);
    }

    /// Decides the next run of at most `limit` (>= 1) cycles from `now`; `None` when nothing
    /// is in flight. The unlimited plan with `k` cut to `limit`: nothing but `k` depends on
    /// the limit, and its `k` is the smaller of the limit and the unlimited one (every bound
    /// on a run is a minimum with it, and a run is at least one cycle either way).
    fn plan(&self, limit: u64) -> Option<Plan> {
        debug_assert!(limit >= 1);
        let full = match self.planned.get() {
            Some(p) => {
                debug_assert_eq!(p, self.plan_unlimited(), "the kept plan is the state's");
                p
            }
            None => {
                let p = self.plan_unlimited();
                self.planned.set(Some(p));
                p
            }
        };
        full.map(|mut p| {
            p.k = p.k.min(limit);
            p
        })
    }

    /// Decides the next run from `now`, as long as nothing bounds it.
    fn plan_unlimited(&self) -> Option<Plan> {
        let (c, n) = (self.now, self.clients.len());
        let mut plan = Plan { k: u64::MAX, reqs: [0; MAX_CLIENTS], m: 0, grants: 0, banks: [0; MAX_CLIENTS] };
        let mut next_ready = u64::MAX;
        // Clients with an access, from `priority` up and then from 0 (the rotating priority
        // order), without visiting idle ones.
        debug_assert!(self.priority < n);
        let from = !0u64 << self.priority;
        for ci in Bits(self.busy & from).chain(Bits(self.busy & !from)) {
            let Some(a) = self.clients[ci].queue.front() else { continue };
            if a.ready <= c {
                plan.reqs[plan.m] = ci as u8;
                plan.m += 1;
                plan.k = plan.k.min(a.units_total - a.units_done);
            } else {
                next_ready = next_ready.min(a.ready);
            }
        }
        plan.k = plan.k.min(next_ready.saturating_sub(c));
        if plan.m == 0 {
            return (next_ready != u64::MAX).then_some(plan);
        }
        if !self.fast {
            plan.k = 1;
        }
        if self.fast && self.footprints_fit(&plan) {
            plan.grants = u64::MAX >> (64 - plan.m);
            return Some(plan);
        }
        self.grant_current_banks(&mut plan);
        Some(plan)
    }

    fn head(&self, ci: u8) -> &Access {
        &self.clients[ci as usize].queue[0]
    }

    fn ports(&self, write: bool) -> u32 {
        if write {
            self.geom.write_ports
        } else {
            self.geom.read_ports
        }
    }

    fn footprints_fit(&self, plan: &Plan) -> bool {
        let mut used = self.ports_taken.borrow_mut();
        used.clear();
        plan.reqs[..plan.m].iter().all(|&ci| {
            let a = self.head(ci);
            used.claim_all(a.write, a.quarters, a.footprint, self.ports(a.write))
        })
    }

    /// Grants this cycle's requests on their current banks, in priority order; if all are
    /// granted, extends the run while every one stays on its bank.
    fn grant_current_banks(&self, plan: &mut Plan) {
        let mut used = self.ports_taken.borrow_mut();
        used.clear();
        let mut run = plan.k;
        for pos in 0..plan.m {
            let a = self.head(plan.reqs[pos]);
            let elem = a.units_done / a.cost;
            let bank = self.geom.bank_of(a.pattern.offset_of(elem));
            plan.banks[pos] = bank as u8;
            if used.try_take(a.write, a.quarters, bank, self.ports(a.write)) {
                plan.grants |= 1 << pos;
                let elems = bank_run_elements(&a.pattern, &self.geom, elem);
                run = run.min(elems * a.cost - a.units_done % a.cost);
            }
        }
        plan.k = if plan.grants.count_ones() as usize == plan.m { run.max(1) } else { 1 };
    }

    fn apply(&mut self, plan: &Plan) {
        let (c, k) = (self.now, plan.k);
        if let Some(HookSlot(h)) = self.hook.as_mut() {
            Self::show(h.as_mut(), plan, &self.clients, &self.geom, &self.stats, c);
        }
        for pos in 0..plan.m {
            let ci = plan.reqs[pos] as usize;
            self.stats.clients[ci].stream_cycles += k;
            if plan.grants & (1 << pos) != 0 {
                self.grant(ci, c, k);
            } else {
                self.stats.clients[ci].stall_cycles += k;
                self.stats.bank_stall_cycles[plan.banks[pos] as usize] += k;
            }
        }
        if plan.m > 0 {
            self.stats.busy_cycles += k;
            self.priority = (plan.reqs[((k - 1) % plan.m as u64) as usize] as usize + 1) % self.clients.len();
            if k == 1 {
                self.stats.stepped_cycles += 1;
            }
        }
        self.now = c + k;
        self.planned.set(None);
    }

    /// Shows the hooked bank's part of each cycle of a run, before it is applied (the
    /// requesters' head accesses are still queued). In a run of more than one cycle every
    /// requester is granted and its bank follows its elements.
    fn show(h: &mut dyn BankPortHook, plan: &Plan, clients: &[Client], geom: &SramGeometry, stats: &SramStats, c: u64) {
        let bank = h.bank();
        let mut stalls = stats.bank_stall_cycles[bank as usize];
        let mut reqs = [PortRequest { client: ClientId(0), write: false, groups: 0, granted: false }; MAX_CLIENTS];
        for j in 0..plan.k {
            let (mut n, mut refused) = (0, 0);
            for pos in 0..plan.m {
                let ci = plan.reqs[pos];
                let Some(a) = clients[ci as usize].queue.front() else { continue };
                if geom.bank_of(a.pattern.offset_of((a.units_done + j) / a.cost)) != bank {
                    continue;
                }
                let granted = plan.grants & (1 << pos) != 0;
                refused += u64::from(!granted);
                reqs[n] = PortRequest { client: ClientId(u32::from(ci)), write: a.write, groups: a.quarters, granted };
                n += 1;
            }
            if n > 0 {
                stalls += refused;
                h.cycle(c + j, &reqs[..n], stalls);
            }
        }
    }

    /// Client `ci`'s head access moves `k` port cycles, ending at cycle `c + k`.
    fn grant(&mut self, ci: usize, c: u64, k: u64) {
        let latency = u64::from(self.geom.access_latency_cycles);
        let a = &mut self.clients[ci].queue[0];
        let elems = (a.units_done + k) / a.cost - a.units_done / a.cost;
        a.units_done += k;
        let (bytes, write, finished) = (elems * a.elem_bytes_all, a.write, a.units_done == a.units_total);
        let st = &mut self.stats.clients[ci];
        if write {
            st.write_bytes += bytes;
        } else {
            st.read_bytes += bytes;
        }
        let popped = if finished { self.clients[ci].queue.pop_front() } else { None };
        if self.clients[ci].queue.is_empty() {
            self.busy &= !(1 << ci);
        }
        if let Some(a) = popped {
            let finish = (c + k).saturating_add(latency);
            st.accesses += 1;
            st.latency.record(finish - a.start);
            self.done.push(Reverse((finish, a.id, ci as u32, a.start)));
        }
    }
}

#[cfg(test)]
mod tests;
