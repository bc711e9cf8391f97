//! One pseudo-channel's controller: read and write queues, bank state, refresh, and the choice
//! of the next row and column command (the channel arbitrates the shared command buses).
//!
//! The controller is event-driven but cycle-exact: `plan(now)` returns the commands legal at
//! `now` and the next cycle anything could change; stepping only at those cycles gives the same
//! commands as asking every cycle, because every timing rule is a "not before" bound and all
//! other inputs (arrivals, issues, refresh due) trigger a new plan.
//!
//! The queues are also indexed by bank (`bankq`), so a plan looks at each bank with requests
//! once, not at each request; the timing table (via `TimingState`) stays the only timing input.

use crate::hbm::bankq::{BankQueue, Queued};
use crate::hbm::command::Command;
use crate::hbm::config::{ControllerConfig, PagePolicy};
use crate::hbm::org::Organization;
use crate::hbm::refresh::{RefreshDue, RefreshPolicy};
use crate::hbm::sched::{Candidate, Scheduler};
use crate::hbm::state::{BankRef, CompiledTable, TimingState};
use crate::hbm::stats::PcStats;
use crate::hbm::timing::TimingParams;
use std::collections::VecDeque;
use trnsim_kernel::Histogram;

const CLOSED: u32 = u32::MAX;

/// The kinds of command a bank's queued requests may need next, as `PcController::part`
/// indexes them: 0 a column command (row hits), 1 a PRE (another row open), 2 an ACT
/// (closed). `COL` names the first.
const COL: usize = 0;

/// One queued request (a single burst).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The requester's tag, returned on completion.
    pub tag: u64,
    /// Which stack port the request came in on.
    pub port: u16,
    /// Arrival order.
    pub seq: u64,
    /// Arrival cycle.
    pub arrive: u64,
    /// Bank.
    pub b: BankRef,
    /// Row.
    pub row: u32,
    /// Burst within the row.
    pub col: u32,
    /// Write (else read).
    pub write: bool,
}

/// A finished request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The requester's tag.
    pub tag: u64,
    /// Port the request came in on.
    pub port: u16,
    /// Write (else read).
    pub write: bool,
    /// Cycle the last data beat moves.
    pub done: u64,
}

/// A command the controller would issue now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The command.
    pub cmd: Command,
    /// Its bank (ignored for PREA/REF).
    pub b: BankRef,
    /// Row (ACT, column commands).
    pub row: u32,
    /// Burst index (column commands).
    pub col: u32,
    /// The served request's arrival number (`Entry::seq`), for column commands.
    pub seq: Option<u64>,
    /// True if the command serves a refresh.
    pub refresh: bool,
}

/// What a pseudo-channel could do at a cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plan {
    /// The best row command legal now (row bus permitting).
    pub row: Option<Choice>,
    /// The best column command legal now (column bus permitting).
    pub col: Option<Choice>,
    /// The next cycle something not legal now may become legal (u64::MAX: nothing pending).
    pub next: u64,
}

/// When a bank's next command may issue: see `PcController::bank_candidate`.
struct BankCandidate {
    /// The command every request it serves needs next.
    cmd: Command,
    /// The earliest cycle timing allows it.
    at: u64,
    /// The oldest request it serves.
    first: Queued,
}

/// Timing data shared by every controller of a stack.
pub struct Shared {
    /// The stack's organization.
    pub org: Organization,
    /// The compiled constraint table.
    pub table: CompiledTable,
    /// The speed grade.
    pub timing: TimingParams,
    /// Controller parameters.
    pub cfg: ControllerConfig,
    /// The scheduler.
    pub sched: Box<dyn Scheduler>,
    /// `sched.window()`, read once (every plan asks); private, so a `Shared` is made by
    /// [`Shared::new`] and its window always agrees with its scheduler.
    pub(crate) window: usize,
}

impl Shared {
    /// The shared data of a stack of `org` with timing `timing`, controllers `cfg` and
    /// scheduler `sched` (the constraint table compiled from `timing`).
    pub fn new(org: Organization, timing: TimingParams, cfg: ControllerConfig, sched: Box<dyn Scheduler>) -> Shared {
        let table = CompiledTable::new(&crate::hbm::timing::constraints(&timing));
        Shared { org, table, timing, cfg, window: sched.window(), sched }
    }
}

/// Something outside the model that sees one bank's commands as the controller issues them:
/// the swap-in of an RTL bank timing FSM (trnsim-rtl's `swap_in`), which clocks the FSM up to
/// each command's cycle, presents the command and checks the FSM finds it legal. Attached with
/// [`crate::hbm::HbmStack::attach_bank_hook`]; without one, issuing costs one branch on an
/// `Option`.
pub trait BankHook {
    /// The bank of the pseudo-channel this hook watches.
    fn bank(&self) -> u32;
    /// `cmd` issued at controller cycle `now` (non-decreasing from call to call) to `row`
    /// (ACT and column commands; 0 otherwise). PREA and all-bank REF are passed to every
    /// pseudo-channel hook, whichever bank it watches.
    fn command(&mut self, now: u64, cmd: Command, row: u32);
}

/// The controller of one pseudo-channel.
pub struct PcController {
    state: TimingState,
    open: Vec<u32>,
    /// Windowed schedulers only (empty otherwise): the read and write queues in arrival
    /// order, which such a scheduler scans (the record of what is queued is `by_bank`).
    reads: VecDeque<Entry>,
    writes: VecDeque<Entry>,
    /// The scheduler sees a window of the queue (`reads` and `writes` are kept).
    windowed: bool,
    write_mode: bool,
    refresh: Option<Box<dyn RefreshPolicy>>,
    /// The policy's `next_due(false)` and `next_due(true)` (u64::MAX without a policy), kept
    /// here so that asking whether a refresh is due, which every plan does, reads no policy
    /// (a separate allocation per controller: a cache miss each) until one is.
    refresh_at: [u64; 2],
    /// The policy's due refresh depends on whether requests are queued (its
    /// `depends_on_load`, fixed).
    load_dependent: bool,
    /// The refresh policy holds up the whole pseudo-channel while a refresh is due.
    hold: bool,
    /// Set by the channel under a holding policy: a refresh of the channel is due (so this
    /// pseudo-channel is held even if its own is not), and whether this pseudo-channel's own
    /// due refresh may go now (the channel issues them in pseudo-channel order).
    channel_held: bool,
    refresh_turn: bool,
    seq: u64,
    /// The read and write queues, indexed by bank.
    by_bank: [BankQueue; 2],
    /// Per bank: row hits within a windowed scheduler's window (the scan path's scratch).
    hits: Vec<u16>,
    /// Banks with a row open, as a bit set (bit b: `open[b]` is not CLOSED).
    open_banks: u64,
    /// Cycles a bank was open or refreshing (for the background energy).
    active: crate::hbm::energy::ActiveSpan,
    /// Each bank's last ACT cycle (an auto-precharge's bank stays active to tRAS after it).
    act_at: Vec<u64>,
    /// Per kind of command a bank's requests may need (column, PRE, ACT; see [`COL`]), per
    /// bank: its `TimingState::bank_part` for that command (the column kind's
    /// for `col_class`), valid unless the bank is in the kind's `stale` set.
    part: Box<[[u64; 64]; 3]>,
    /// Per kind: banks whose `part` must be read again (their timing rows changed since).
    stale: [u64; 3],
    /// The column class (RD or WR) `part[COL]` holds.
    col_class: Command,
    /// The banks whose command was ready in the last plan, column commands first, then row
    /// commands (scheduler seeing the whole queue only): after the plan's choice of one side
    /// issues, the others of that side are bounded afresh (`next_after_issue`) instead of
    /// being planned again next cycle.
    ready: [u64; 2],
    /// Per bank: how the open row was opened (0 = no request has used it yet after a plain
    /// ACT, 1 = after a PRE of another row for a request, 2 = already used).
    opened: Vec<u8>,
    last_account: u64,
    /// Statistics.
    pub stats: PcStats,
    /// A bank's commands go to this hook too (swap-in of an RTL bank FSM).
    hook: Option<Box<dyn BankHook>>,
}

impl PcController {
    /// An idle controller with every bank closed.
    pub fn new(sh: &Shared, refresh: Option<Box<dyn RefreshPolicy>>) -> PcController {
        let (org, cfg) = (&sh.org, &sh.cfg);
        let banks = org.banks_per_pc() as usize;
        let windowed = sh.window != usize::MAX;
        let order = |n: u32| if windowed { VecDeque::with_capacity(n as usize) } else { VecDeque::new() };
        PcController {
            state: TimingState::new(org),
            open: vec![CLOSED; banks],
            reads: order(cfg.read_queue),
            writes: order(cfg.write_queue),
            windowed,
            refresh_at: refresh_at(refresh.as_deref()),
            load_dependent: refresh.as_ref().is_some_and(|r| r.depends_on_load()),
            write_mode: false,
            hold: refresh.as_ref().is_some_and(|r| r.holds_pseudo_channel()),
            channel_held: false,
            refresh_turn: true,
            refresh,
            seq: 0,
            by_bank: [BankQueue::new(banks, cfg.read_queue as usize), BankQueue::new(banks, cfg.write_queue as usize)],
            hits: vec![0; banks],
            open_banks: 0,
            active: Default::default(),
            act_at: vec![0; banks],
            part: Box::new([[0; 64]; 3]),
            stale: [u64::MAX; 3],
            col_class: Command::Rd,
            ready: [0; 2],
            opened: vec![2; banks],
            last_account: 0,
            stats: PcStats::default(),
            hook: None,
        }
    }

    /// Sends every command to `hook.bank()` (and every PREA and REF) to `hook` from now on.
    pub fn set_bank_hook(&mut self, hook: Box<dyn BankHook>) {
        self.hook = Some(hook);
    }

    /// True while the controller drains writes: in write mode with writes queued (what its
    /// write-mode time counts; a controller left in write mode with no write to issue, until
    /// it next plans, drains nothing).
    pub fn draining_writes(&self) -> bool {
        self.write_mode && self.by_bank[1].total() > 0
    }

    /// True if a request of this kind fits in its queue.
    pub fn can_accept(&self, write: bool, cfg: &ControllerConfig) -> bool {
        if write {
            self.by_bank[1].total() < cfg.write_queue as usize
        } else {
            self.by_bank[0].total() < cfg.read_queue as usize
        }
    }

    /// Requests queued (both queues).
    pub fn queued(&self) -> usize {
        self.by_bank[0].total() + self.by_bank[1].total()
    }

    /// True if requests are queued (what a load-dependent refresh policy looks at).
    fn busy(&self) -> bool {
        self.queued() > 0
    }

    /// The row open in flat bank `bank`, if any.
    pub fn open_row(&self, bank: u32) -> Option<u32> {
        let r = self.open[bank as usize];
        (r != CLOSED).then_some(r)
    }

    /// True if the refresh policy holds up the pseudo-channel (and its channel) while a
    /// refresh is due (see [`RefreshPolicy::holds_pseudo_channel`]).
    pub(crate) fn holds(&self) -> bool {
        self.hold
    }

    /// True if this pseudo-channel's own refresh is due at `now`.
    pub(crate) fn refresh_due(&self, now: u64) -> bool {
        self.own_due(now).is_some()
    }

    /// The own refresh policy's due refresh at `now`.
    #[inline]
    fn own_due(&self, now: u64) -> Option<RefreshDue> {
        let busy = self.busy();
        if now < self.refresh_at[usize::from(busy)] {
            return None; // (the policy contract: due exactly from `next_due`)
        }
        self.refresh.as_ref().and_then(|r| r.due(now, busy))
    }

    /// The channel's refresh state under a holding policy: `held`, some refresh of the
    /// channel is due; `turn`, this pseudo-channel's own may go. True if it changed.
    pub(crate) fn set_channel_refresh(&mut self, held: bool, turn: bool) -> bool {
        let changed = (held, turn) != (self.channel_held, self.refresh_turn);
        (self.channel_held, self.refresh_turn) = (held, turn);
        changed
    }

    /// The refresh that holds requests at `now`: the own due one, or under a holding policy
    /// a stand-in for another pseudo-channel's (a bank no request has).
    fn holding_due(&self, now: u64) -> Option<RefreshDue> {
        self.held_or(self.own_due(now))
    }

    /// [`PcController::holding_due`] given `own`, the own due refresh.
    #[inline]
    fn held_or(&self, own: Option<RefreshDue>) -> Option<RefreshDue> {
        if own.is_none() && self.channel_held {
            return Some(RefreshDue { cmd: Command::RefPb, bank: Some(u32::MAX) });
        }
        own
    }

    /// Read access to the timing state (for tests that probe gates).
    pub fn timing_state(&self) -> &TimingState {
        &self.state
    }

    /// The refresh period of an idle controller (0 when there is none to skip by).
    pub(crate) fn idle_period(&self) -> u64 {
        if self.queued() > 0 || self.write_mode {
            return 0;
        }
        self.refresh.as_ref().map_or(0, |r| r.period())
    }

    /// Everything that decides this controller's future, as seen from cycle `now` (see
    /// [`TimingState::view`]), with the statistics an idle period may not change.
    pub(crate) fn view(&self, sh: &Shared, now: u64) -> Vec<u64> {
        let mut v = self.state.view(&sh.table, now);
        v.extend(self.open.iter().map(|&r| u64::from(r)));
        v.extend(self.opened.iter().map(|&o| u64::from(o)));
        v.push(u64::from(self.write_mode));
        v.extend([u64::from(self.channel_held), u64::from(self.refresh_turn)]);
        v.push(self.queued() as u64);
        v.push(self.seq);
        if let Some(r) = &self.refresh {
            let (next, bank) = r.position();
            v.push(next.saturating_sub(now));
            v.push(u64::from(bank));
            v.extend(r.view(now));
        }
        let st = &self.stats;
        v.extend([st.reads, st.writes, st.row_hits, st.row_misses, st.row_conflicts, st.write_mode_cycles]);
        v.extend([st.queue_area as u64, (st.queue_area >> 64) as u64]);
        v
    }

    /// Moves the controller, stepped to cycle `at`, `d` cycles later, adding `periods` x
    /// `per_period` of refresh statistics (an idle gap skipped whole periods at a time).
    pub(crate) fn shift(&mut self, at: u64, d: u64, periods: u64, per_period: &PcStats) {
        self.active.shift(at, d, periods * per_period.active_cycles);
        self.stats.bank_closes += per_period.bank_closes * periods;
        self.state.shift(d);
        if let Some(r) = self.refresh.as_mut() {
            r.shift(d);
        }
        self.refresh_at = refresh_at(self.refresh.as_deref());
        self.last_account += d;
        for (c, p) in self.stats.commands.iter_mut().zip(per_period.commands) {
            *c += p * periods;
        }
        self.stats.refresh_bank_cycles += per_period.refresh_bank_cycles * periods;
    }

    fn account(&mut self, now: u64) {
        if now > self.last_account {
            let dt = now - self.last_account;
            self.stats.queue_area += self.queued() as u128 * dt as u128;
            if self.draining_writes() {
                self.stats.write_mode_cycles += dt;
            }
            self.last_account = now;
        }
    }

    /// Queues a request that arrived at cycle `now` (the caller checked `can_accept`). It may
    /// issue its first command at `now + 1`: one cycle of controller pipeline.
    pub fn enqueue(&mut self, mut e: Entry, now: u64) {
        self.account(now);
        e.seq = self.seq;
        e.arrive = now;
        self.seq += 1;
        self.by_bank[usize::from(e.write)].push(e, self.open[e.b.bank as usize]);
        if self.windowed {
            if e.write { &mut self.writes } else { &mut self.reads }.push_back(e);
        }
    }

    /// Switches between reading and writing at `now` if the queues say so, bringing the
    /// time-weighted statistics up to `now` first (they change only with the queue lengths,
    /// which `enqueue` and `issue` account for, and with the mode).
    fn update_mode(&mut self, cfg: &ControllerConfig, now: u64) {
        if self.mode_would_flip(cfg) {
            self.account(now);
            self.write_mode = !self.write_mode;
        }
    }

    /// True if the due refresh keeps a request's `cmd` to `bank` from issuing: an all-bank
    /// refresh holds every bank, a per-bank one its own bank, and a holding policy also every
    /// other bank's row commands and its row hits but the first access of a row just opened.
    fn blocked(&self, due: Option<RefreshDue>, bank: u16, cmd: Command) -> bool {
        match due {
            Some(RefreshDue { bank: None, .. }) => true,
            Some(RefreshDue { bank: Some(b), .. }) => {
                b == u32::from(bank) || (self.hold && !(cmd.is_column() && self.opened[usize::from(bank)] != 2))
            }
            None => false,
        }
    }

    /// The refresh command to work on now, and its earliest cycle.
    fn refresh_choice(&self, sh: &Shared, due: RefreshDue) -> (Choice, u64) {
        let mk = |cmd, b| Choice { cmd, b, row: 0, col: 0, seq: None, refresh: true };
        match due.bank {
            Some(bank) => {
                let b = self.state.bank_ref(bank);
                let cmd = if self.open[bank as usize] != CLOSED { Command::Pre } else { Command::RefPb };
                (mk(cmd, b), self.state.earliest(&sh.table, cmd, b))
            }
            None => {
                let b = BankRef::default();
                let cmd = if self.open.iter().any(|&r| r != CLOSED) { Command::PreAll } else { Command::Ref };
                (mk(cmd, b), self.state.earliest(&sh.table, cmd, b))
            }
        }
    }

    /// Writes to `plan` (overwriting it) the commands legal at `now` given which buses are
    /// free, and the next cycle to ask again. (Filled in place: the channel keeps its
    /// pseudo-channels' plans side by side and reads them there, with no copy.)
    pub fn plan(&mut self, sh: &Shared, now: u64, row_bus: bool, col_bus: bool, plan: &mut Plan) {
        self.update_mode(&sh.cfg, now);
        *plan = Plan { row: None, col: None, next: u64::MAX };
        self.ready = [0; 2];
        let due = self.own_due(now);
        if let Some(d) = due {
            // Under a holding policy a pseudo-channel waits for its turn; the channel plans
            // it again when an earlier one's refresh goes.
            if self.refresh_turn {
                let (c, at) = self.refresh_choice(sh, d);
                if at <= now && row_bus {
                    plan.row = Some(c);
                } else {
                    plan.next = plan.next.min(at.max(now + 1));
                }
            }
        } else {
            plan.next = plan.next.min(self.refresh_at[usize::from(self.busy())]);
        }
        let due = self.held_or(due);
        if sh.window == usize::MAX {
            self.plan_by_bank(sh, now, due, (row_bus, col_bus), plan);
        } else {
            self.plan_scan(sh, now, due, (row_bus, col_bus), plan);
        }
    }

    /// `plan`'s choice for a scheduler that sees the whole queue, one bank at a time. All the
    /// requests of a bank that can issue need the same command (see `bank_candidate`), so the
    /// bank's oldest such request stands for them: it is the best-ranked (the scheduler
    /// contract: rank grows with age among equal kinds) and the first to have arrived. Its
    /// choice is `plan_scan`'s; its `next` may be later: a bank's other requests, and ready
    /// commands besides the choice, add nothing (`plan_scan` adds `now + 1` for each as a
    /// second ready command). They cannot issue before the channel looks again: a choice
    /// that does not issue is planned next cycle (`Channel::step`), and after one that issues
    /// its bank's next command and the other ready commands of its side are bounded afresh
    /// (`next_after_issue`, from `ready`).
    fn plan_by_bank(&mut self, sh: &Shared, now: u64, due: Option<RefreshDue>, buses: (bool, bool), plan: &mut Plan) {
        if matches!(due, Some(RefreshDue { bank: None, .. })) {
            return; // an all-bank refresh blocks every request
        }
        // The bank being refreshed (and, under a holding policy, row commands of the others)
        // is skipped by `blocked` below.
        let mode = usize::from(self.write_mode);
        let busy = self.by_bank[mode].busy();
        if busy == 0 {
            return;
        }
        debug_assert_eq!(
            self.open_banks,
            self.open.iter().enumerate().filter(|(_, &r)| r != CLOSED).fold(0u64, |m, (b, _)| m | 1 << b),
            "the open-bank set follows the open rows"
        );
        // The banks by the command their requests need: row hits a column command, other
        // banks with a row open a PRE, closed banks an ACT.
        let hit = self.by_bank[mode].hit_banks();
        let col_class = if self.write_mode { Command::Wr } else { Command::Rd };
        let kinds = [
            (busy & hit, col_class),
            (busy & !hit & self.open_banks, Command::Pre),
            (busy & !hit & !self.open_banks, Command::Act),
        ];
        // Bring the cached parts of the banks of each kind up to date: those whose bank, group
        // or SID rows changed since they were read (the timing state's dirty banks, folded
        // into each kind's stale set) and, for column commands, all after a read/write switch.
        let dirty = self.state.dirty();
        if dirty != 0 {
            self.state.clean(dirty);
            self.stale.iter_mut().for_each(|s| *s |= dirty);
        }
        if self.col_class != col_class {
            self.col_class = col_class;
            self.stale[COL] = u64::MAX;
        }
        for (k, &(set, cmd)) in kinds.iter().enumerate() {
            let mut fresh = set & self.stale[k];
            self.stale[k] &= !fresh;
            while fresh != 0 {
                let bank = fresh.trailing_zeros() & 63;
                fresh &= fresh - 1;
                self.part[k][bank as usize] = self.state.bank_part(cmd, self.state.bank_ref(bank));
            }
        }
        let q = &self.by_bank[mode];
        let row_bus = buses.0 && plan.row.is_none_or(|c| !c.refresh);
        let (mut best_row, mut best_col) = (u64::MAX, u64::MAX);
        let mut ready_banks = [0u64; 2];
        let st = &self.state;
        for (k, &(set, cmd)) in kinds.iter().enumerate() {
            if set == 0 {
                continue;
            }
            // The pseudo-channel-wide part of the command's earliest cycle, the same for every
            // bank: a bank's candidate cycle is the larger of it and the bank's own part (as
            // `bank_candidate` computes it).
            let floor = st.pc_floor(&sh.table, cmd);
            let part = &self.part[k];
            // The banks of this kind that timing lets issue now; the others only bound `next`.
            let can = if due.is_none() {
                if floor > now && plan.next <= floor {
                    continue; // nothing of this kind issues now, nor moves `next`
                }
                // (Without a due refresh no bank is blocked, so `next` takes the smallest part
                // that is still ahead, and at most the floor when that is.)
                let (mut rest, mut can, mut ahead) = (set, 0u64, u64::MAX);
                while rest != 0 {
                    let bank = rest.trailing_zeros() & 63;
                    rest &= rest - 1;
                    let p = part[bank as usize];
                    if p > now {
                        ahead = ahead.min(p);
                    } else {
                        can |= 1 << bank;
                    }
                }
                if floor > now {
                    // (A bank whose part is past already waits for the floor alone.)
                    plan.next = plan.next.min(if can != 0 { floor } else { floor.max(ahead) });
                    continue;
                }
                plan.next = plan.next.min(ahead);
                can
            } else {
                let (mut rest, mut can) = (set, 0u64);
                while rest != 0 {
                    let bank = rest.trailing_zeros() & 63;
                    rest &= rest - 1;
                    if self.blocked(due, bank as u16, cmd) {
                        continue;
                    }
                    let at = floor.max(part[bank as usize]);
                    if at > now {
                        plan.next = plan.next.min(at);
                    } else {
                        can |= 1 << bank;
                    }
                }
                can
            };
            let mut rest = can;
            while rest != 0 {
                let bank = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let hit = k == COL;
                let (cmd, first) = if hit {
                    (Self::column_cmd(sh, self.write_mode, q.hits(bank)), q.hit_head(bank))
                } else {
                    (cmd, q.head(bank))
                };
                let ready = if hit { buses.1 } else { row_bus } && first.arrive < now;
                if !ready {
                    plan.next = plan.next.min(now + 1);
                    continue;
                }
                // A second ready command of the same side adds nothing to `next` either: if
                // the side's choice issues, `next_after_issue` bounds the others (`ready`); if
                // not, the channel plans again next cycle.
                ready_banks[usize::from(!hit)] |= 1 << bank;
                let (mine, best) = if hit { (&mut plan.col, &mut best_col) } else { (&mut plan.row, &mut best_row) };
                // Every candidate of one kind (column: row hits; row: not) ranks by age alone
                // (the scheduler contract): the oldest, lowest `seq`, is the best.
                if first.seq < *best {
                    *best = first.seq;
                    let (seq, b) = (hit.then_some(first.seq), st.bank_ref(bank as u32));
                    *mine = Some(Choice { cmd, b, row: first.row, col: first.col, seq, refresh: false });
                }
            }
        }
        self.ready = ready_banks;
    }

    /// The earliest cycle timing allows the command `bank`'s requests in `q` need next (`q`
    /// has some), and the oldest request it serves. A bank whose open row some request
    /// hits serves only those (FR-FCFS keeps the row open for them); otherwise every request
    /// needs the same PRE or ACT.
    #[inline(always)]
    fn bank_candidate(&self, sh: &Shared, q: &BankQueue, bank: usize) -> BankCandidate {
        let hits = q.hits(bank);
        let (cmd, first) = if hits > 0 {
            (Self::column_cmd(sh, self.write_mode, hits), q.hit_head(bank))
        } else if self.open[bank] != CLOSED {
            (Command::Pre, q.head(bank))
        } else {
            (Command::Act, q.head(bank))
        };
        let at = self.state.earliest(&sh.table, cmd, self.state.bank_ref(bank as u32));
        BankCandidate { cmd, at, first }
    }

    /// The column command of a row hit, given how many queued requests hit that row.
    fn column_cmd(sh: &Shared, write: bool, hits: u16) -> Command {
        match (write, sh.cfg.page_policy == PagePolicy::Closed && hits <= 1) {
            (false, false) => Command::Rd,
            (true, false) => Command::Wr,
            (false, true) => Command::RdA,
            (true, true) => Command::WrA,
        }
    }

    /// `plan`'s choice for a windowed scheduler: every request in the window in turn.
    fn plan_scan(&mut self, sh: &Shared, now: u64, due: Option<RefreshDue>, buses: (bool, bool), plan: &mut Plan) {
        let (row_bus, col_bus) = buses;
        let window = sh.window;
        let queue = if self.write_mode { &self.writes } else { &self.reads };
        let n = queue.len().min(window);
        for h in self.hits.iter_mut() {
            *h = 0;
        }
        for e in queue.range(..n) {
            if self.open[e.b.bank as usize] == e.row {
                self.hits[e.b.bank as usize] += 1;
            }
        }
        let (mut best_row, mut best_col) = (u64::MAX, u64::MAX);
        for e in queue.range(..n) {
            let Some((cmd, at)) = self.candidate(sh, e) else { continue };
            if self.blocked(due, e.b.bank, cmd) {
                continue;
            }
            let hit = cmd.is_column();
            let bus = if hit { col_bus } else { row_bus && plan.row.is_none_or(|c| !c.refresh) };
            if at > now || !bus {
                plan.next = plan.next.min(at.max(now + 1));
                continue;
            }
            if (hit && plan.col.is_some()) || (!hit && plan.row.is_some()) {
                plan.next = plan.next.min(now + 1); // a second ready command waits a cycle at least
            }
            let rank = sh.sched.rank(&Candidate { seq: e.seq, row_hit: hit });
            let choice = Choice { cmd, b: e.b, row: e.row, col: e.col, seq: hit.then_some(e.seq), refresh: false };
            if hit && rank < best_col {
                best_col = rank;
                plan.col = Some(choice);
            } else if !hit && rank < best_row {
                best_row = rank;
                plan.row = Some(choice);
            }
        }
    }

    /// The next command request `e` needs and the earliest cycle timing allows it, or None
    /// while it must wait for other requests' row hits (FR-FCFS keeps the row open for them).
    /// Uses `self.hits`, which `plan` and the bounds below fill for `e`'s bank.
    fn candidate(&self, sh: &Shared, e: &Entry) -> Option<(Command, u64)> {
        let bank = e.b.bank as usize;
        let open = self.open[bank];
        let cmd = if open == e.row {
            Self::column_cmd(sh, e.write, self.hits[bank])
        } else if open != CLOSED {
            if self.hits[bank] > 0 {
                return None;
            }
            Command::Pre
        } else {
            Command::Act
        };
        Some((cmd, self.state.earliest(&sh.table, cmd, e.b).max(e.arrive + 1)))
    }

    /// Would the read/write mode flip if planned now?
    fn mode_would_flip(&self, cfg: &ControllerConfig) -> bool {
        let (r, w) = (self.by_bank[0].total(), self.by_bank[1].total());
        if self.write_mode {
            w == 0 || (w <= cfg.write_low as usize && r > 0)
        } else {
            w >= cfg.write_high as usize || (r == 0 && w > 0)
        }
    }

    /// The earliest cycle any request of `bank` in the active queue could issue (u64::MAX if
    /// none), recounting that bank's row hits first.
    fn bank_bound(&mut self, sh: &Shared, bank: u16, now: u64) -> u64 {
        if sh.window != usize::MAX {
            return self.bank_bound_scan(sh, bank, now);
        }
        let due = self.holding_due(now + 1);
        let q = &self.by_bank[usize::from(self.write_mode)];
        if q.is_empty(bank as usize) {
            return u64::MAX;
        }
        let k = self.bank_candidate(sh, q, bank as usize);
        if self.blocked(due, bank, k.cmd) {
            return u64::MAX;
        }
        k.at.max(k.first.arrive + 1).max(now + 1)
    }

    /// `bank_bound` for a windowed scheduler, request by request.
    fn bank_bound_scan(&mut self, sh: &Shared, bank: u16, now: u64) -> u64 {
        let queue = if self.write_mode { &self.writes } else { &self.reads };
        let n = queue.len().min(sh.window);
        let mut hits = 0;
        for e in queue.range(..n).filter(|e| e.b.bank == bank) {
            hits += u16::from(self.open[bank as usize] == e.row);
        }
        self.hits[bank as usize] = hits;
        let due = self.holding_due(now + 1);
        let mut next = u64::MAX;
        for e in queue.range(..n).filter(|e| e.b.bank == bank) {
            if let Some((cmd, at)) = self.candidate(sh, e) {
                if !self.blocked(due, bank, cmd) {
                    next = next.min(at);
                }
            }
        }
        next.max(now + 1)
    }

    /// A lower bound on the next cycle this controller's plan can change after `c` issued at
    /// `now`, given `prior`, the plan's own `next`. Issuing only delays the other candidates
    /// (timing bounds only grow), so `prior` stays a lower bound for them; only requests of the
    /// bank `c` touched change kind and need a fresh look, and so do the plan's other ready
    /// commands of `c`'s side, which `prior` leaves out (`plan_by_bank`). A per-bank refresh's
    /// own PRE and REFPB under a policy that holds no other bank bound the refresh's next
    /// steps; other refresh commands, a read/write mode change and a request leaving a
    /// windowed scheduler's window (FCFS) fall back to planning next cycle.
    pub fn next_after_issue(&mut self, sh: &Shared, c: &Choice, now: u64, prior: u64) -> u64 {
        // (A plan's `next` is always after the cycle it was made at.)
        debug_assert!(prior > now, "a pseudo-channel's next plan {prior} is not after {now}");
        if prior <= now + 1 {
            // Nothing below next cycle: every case below gives `now + 1` or `prior` with
            // something no earlier (a bank's bound is at least `now + 1`).
            return prior;
        }
        let window_moved = c.cmd.is_column() && sh.window != usize::MAX;
        if window_moved || self.mode_would_flip(&sh.cfg) || (self.load_dependent && !self.busy()) {
            return now + 1; // (or the last request left: a load-dependent refresh may be due)
        }
        if c.refresh || matches!(c.cmd, Command::PreAll | Command::Ref | Command::RefPb) {
            // A per-bank refresh's own commands under a policy that holds no other bank: its
            // bank is the only one the refresh blocked, so the others' bounds in `prior`
            // stand. After its PRE, its REFPB comes next; after its REFPB, the bank's requests
            // may go again when timing allows, and the next refresh is due when the policy
            // says. Every other refresh command: plan next cycle.
            let own_per_bank = c.refresh
                && matches!(c.cmd, Command::Pre | Command::RefPb)
                && sh.window == usize::MAX
                && !self.hold
                && !self.channel_held;
            if !own_per_bank {
                return now + 1;
            }
            if c.cmd == Command::Pre {
                return prior.min(self.state.earliest(&sh.table, Command::RefPb, c.b).max(now + 1));
            }
            if self.own_due(now + 1).is_some() {
                return now + 1;
            }
            let due = self.refresh_at[usize::from(self.busy())].max(now + 1);
            return prior.min(due).min(self.bank_bound(sh, c.b.bank, now));
        }
        let mut next = prior.min(self.bank_bound(sh, c.b.bank, now));
        // The plan's other ready commands of `c`'s side (the whole-queue scheduler only):
        // each still needs the command it needed (only `c`'s bank changed, the mode did not),
        // so none comes before the pseudo-channel-wide part of its command's cycle.
        let column = c.cmd.is_column();
        let rest = self.ready[usize::from(!column)] & !(1 << c.b.bank);
        if rest != 0 && next > now + 1 {
            let st = &self.state;
            let floor = if column {
                st.pc_floor(&sh.table, self.col_class)
            } else {
                let pre = if rest & self.open_banks != 0 { st.pc_floor(&sh.table, Command::Pre) } else { u64::MAX };
                let act = if rest & !self.open_banks != 0 { st.pc_floor(&sh.table, Command::Act) } else { u64::MAX };
                pre.min(act)
            };
            next = next.min(floor.max(now + 1));
        }
        next
    }

    /// A lower bound on the next cycle the plan can change after a request to `bank` arrived at
    /// `now` (adding a request adds one candidate and can only delay the others). Arrivals are
    /// taken before the cycle's commands are chosen, so a read/write mode change takes effect at
    /// `now` itself.
    ///
    /// `prior` is the controller's next planned cycle: when it is no later than `now + 1`,
    /// the bank's own bound (at least `now + 1`) cannot come first and is not computed.
    pub fn next_after_arrival(&mut self, sh: &Shared, bank: u16, now: u64, prior: u64) -> u64 {
        if self.mode_would_flip(&sh.cfg) || (self.load_dependent && self.queued() == 1) {
            // The other queue's requests, or (the first request arrived) requests the idle
            // refresh held, may issue this very cycle.
            return now;
        }
        if prior <= now + 1 {
            return prior;
        }
        self.bank_bound(sh, bank, now)
    }

    /// True if `c` (planned at `now`) is still legal after other commands issued this cycle.
    pub fn still_legal(&self, sh: &Shared, c: &Choice, now: u64) -> bool {
        let bank_ok = match c.cmd {
            Command::Act | Command::RefPb => self.open[c.b.bank as usize] == CLOSED,
            Command::Pre => self.open[c.b.bank as usize] != CLOSED,
            Command::PreAll => true,
            Command::Ref => self.open.iter().all(|&r| r == CLOSED),
            _ => self.open[c.b.bank as usize] == c.row,
        };
        bank_ok && self.state.earliest(&sh.table, c.cmd, c.b) <= now
    }

    /// Issues `c` at `now`; returns the completion of a column command's request, whose
    /// latency (arrival to last data beat) goes to `latency` (reads, writes: the stack's, for
    /// every pseudo-channel, so recording touches one histogram per stack, not one each).
    pub fn issue(&mut self, sh: &Shared, c: &Choice, now: u64, latency: &mut [Histogram; 2]) -> Option<Completion> {
        self.state.issue(&sh.table, c.cmd, c.b, now);
        if let Some(h) = self.hook.as_mut() {
            let all = matches!(c.cmd, Command::PreAll | Command::Ref);
            if all || h.bank() == u32::from(c.b.bank) {
                let row = if c.cmd == Command::Act || c.cmd.is_column() { c.row } else { 0 };
                h.command(now, c.cmd, row);
            }
        }
        self.stats.commands[c.cmd as usize] += 1;
        let t = &sh.timing;
        let bank = c.b.bank as usize;
        match c.cmd {
            Command::Act => {
                self.open[bank] = c.row;
                self.open_banks |= 1 << bank;
                self.active.busy(now, u64::MAX);
                self.act_at[bank] = now;
                self.opened[bank] = if self.opened[bank] == 1 { 1 } else { 0 };
                self.by_bank.iter_mut().for_each(|q| q.recount(bank, c.row));
            }
            Command::Pre => {
                self.open[bank] = CLOSED;
                self.close_banks(1 << bank, now);
                self.opened[bank] = if c.refresh { 0 } else { 1 };
                self.by_bank.iter_mut().for_each(|q| q.recount(bank, CLOSED));
            }
            Command::PreAll => {
                self.open.iter_mut().for_each(|r| *r = CLOSED);
                self.close_banks(self.open_banks, now);
                self.by_bank.iter_mut().for_each(BankQueue::clear_hits);
            }
            Command::Ref => {
                self.stats.refresh_bank_cycles += t.rfc as u64 * self.open.len() as u64;
                self.active.refresh(now, u64::from(t.rfc));
            }
            Command::RefPb => {
                self.stats.refresh_bank_cycles += t.rfc_pb as u64;
                self.active.refresh(now, u64::from(t.rfc_pb));
            }
            Command::RdA | Command::WrA => {
                self.open[bank] = CLOSED;
                // The bank precharges itself tRTP after an RDA, or the write's data and tWR
                // after a WRA, and not before tRAS from its ACT: active until then.
                let after = if c.cmd == Command::RdA { t.rtp } else { t.cwl + t.bl + t.wr };
                let ras_end = self.act_at[bank] + u64::from(t.ras);
                self.active.busy(now, (now + u64::from(after)).max(ras_end));
                self.close_banks(1 << bank, now);
                self.by_bank.iter_mut().for_each(|q| q.recount(bank, CLOSED));
            }
            Command::Rd | Command::Wr => {}
        }
        if c.refresh && matches!(c.cmd, Command::Ref | Command::RefPb) {
            if let Some(r) = self.refresh.as_mut() {
                r.issued(now);
            }
            self.refresh_at = refresh_at(self.refresh.as_deref());
        }
        let seq = c.seq?;
        // Row-buffer outcome, DRAMsim3-style: the first access after an ACT is a miss (a
        // conflict if a PRE of another row preceded the ACT); later ones are hits.
        match std::mem::replace(&mut self.opened[bank], 2) {
            0 => self.stats.row_misses += 1,
            1 => self.stats.row_conflicts += 1,
            _ => self.stats.row_hits += 1,
        }
        self.account(now);
        let e = self.by_bank[usize::from(self.write_mode)].remove(bank, seq, self.open[bank]);
        if self.windowed {
            let q = if self.write_mode { &mut self.writes } else { &mut self.reads };
            let slot = crate::hbm::bankq::find_seq(q, seq, |e| e.seq).expect("the planned request is queued");
            q.remove(slot);
        }
        let done = now + if e.write { t.write_data_cycles() } else { t.read_data_cycles() } as u64;
        if e.write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
        }
        latency[usize::from(e.write)].record(done - e.arrive);
        Some(Completion { tag: e.tag, port: e.port, write: e.write, done })
    }

    /// Closes the open banks of `banks` at `now`: each counts as a precharge, and the
    /// pseudo-channel's active span ends when the last one closes.
    fn close_banks(&mut self, banks: u64, now: u64) {
        let closing = banks & self.open_banks;
        if closing == 0 {
            return;
        }
        self.stats.bank_closes += u64::from(closing.count_ones());
        self.open_banks &= !closing;
        if self.open_banks == 0 {
            self.active.closed(now);
        }
    }

    /// Cycles up to `end` this pseudo-channel had a bank open or refreshing.
    pub(crate) fn active_cycles(&self, end: u64) -> u64 {
        self.active.cycles_to(end)
    }

    /// What the time-weighted statistics gain from the last change of the queue or the mode
    /// up to cycle `end`, which `account` adds only at the next change: (queue area,
    /// write-mode cycles). A report at `end` adds it, so that requests still queued when a
    /// run stops count until its end.
    pub(crate) fn tail(&self, end: u64) -> (u128, u64) {
        let dt = end.saturating_sub(self.last_account);
        (self.queued() as u128 * u128::from(dt), if self.draining_writes() { dt } else { 0 })
    }
}

/// A refresh policy's next due cycle when idle and when busy (u64::MAX for none).
fn refresh_at(r: Option<&dyn RefreshPolicy>) -> [u64; 2] {
    r.map_or([u64::MAX; 2], |r| [r.next_due(false), r.next_due(true)])
}
