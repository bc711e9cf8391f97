//! One HBM channel: its pseudo-channel controllers and the row and column command buses they
//! share.
//!
//! HBM3 (JESD238) gives each channel a row command bus and a column command bus that work in
//! parallel; the pseudo-channels of a channel take turns on both. On the row bus an ACT takes
//! 1.5 CK and PRE/PREA/REF/REFPB 0.5 CK, so the bus is tracked in half cycles; a column command
//! takes one CK. When both pseudo-channels want a bus in the same cycle they alternate
//! (round robin), deterministically.

use crate::hbm::command::{Command, CommandRecord};
use crate::hbm::controller::{Choice, Completion, PcController, Plan, Shared};
use trnsim_kernel::Histogram;

/// A channel's controllers and command buses.
pub struct Channel {
    /// The pseudo-channel controllers.
    pub pcs: Vec<PcController>,
    /// First free half-cycle of the row bus.
    row_bus_half: u64,
    /// First free cycle of the column bus.
    col_bus_free: u64,
    rr_row: usize,
    rr_col: usize,
    /// Per pseudo-channel: the next cycle its plan may change (u64::MAX = nothing pending).
    pc_next: [u64; 4],
    /// Next cycle this channel must be stepped: the minimum of `pc_next` (u64::MAX = idle).
    pub next: u64,
    /// Requests queued in this channel's controllers (kept here so the stack need not visit
    /// every controller to know whether the channel has work).
    pub queued: u32,
    /// Plan every pseudo-channel every cycle (the reference the event-driven stepping must
    /// match; for tests, slow).
    pub exhaustive: bool,
}

/// Where a channel's step reports what happened.
pub struct StepOut<'a> {
    /// Issued commands, appended (stack and channel filled in) when `record` is set.
    pub commands: &'a mut Vec<CommandRecord>,
    /// Whether anyone reads `commands` (a command sink or trace tracks): without, the records
    /// are not built.
    pub record: bool,
    /// Completions, appended in issue order.
    pub completions: &'a mut Vec<Completion>,
    /// Latencies of the completions (reads, writes), recorded as they issue.
    pub latency: &'a mut [Histogram; 2],
}

impl Channel {
    /// A channel of `pcs` controllers.
    pub fn new(pcs: Vec<PcController>) -> Channel {
        let mut pc_next = [u64::MAX; 4];
        // Refresh falls due without any request: every controller starts with a plan at 0.
        pc_next[..pcs.len()].fill(0);
        Channel {
            pcs,
            row_bus_half: 0,
            col_bus_free: 0,
            rr_row: 0,
            rr_col: 0,
            pc_next,
            next: 0,
            queued: 0,
            exhaustive: false,
        }
    }

    /// The period with which this channel's background work (refresh) repeats while it has
    /// no requests, or 0 (busy, in write mode, no refresh, or pseudo-channels that differ).
    pub fn idle_period(&self) -> u64 {
        if self.queued > 0 || self.exhaustive {
            return 0;
        }
        let p = self.pcs.first().map_or(0, PcController::idle_period);
        if self.pcs.iter().any(|pc| pc.idle_period() != p) {
            return 0;
        }
        p
    }

    /// Everything that decides the channel's future, seen from cycle `now` (every step before
    /// `now` done): equal views at `now` and `now + P` mean the channel repeats with period P.
    pub fn view(&self, sh: &Shared, now: u64) -> Vec<u64> {
        let rel = |t: u64| if t == u64::MAX { u64::MAX } else { t.saturating_sub(now) };
        let mut v = vec![self.row_bus_half.saturating_sub(2 * now), rel(self.col_bus_free)];
        v.extend([self.rr_row as u64, self.rr_col as u64, rel(self.next), self.queued.into()]);
        v.extend(self.pc_next.iter().map(|&t| rel(t)));
        for pc in &self.pcs {
            v.extend(pc.view(sh, now));
        }
        v
    }

    /// Refresh statistics of each pseudo-channel at cycle `at` (commands by kind, refresh
    /// bank-cycles, banks closed, active cycles).
    pub fn refresh_counts(&self, at: u64) -> Vec<crate::hbm::stats::PcStats> {
        self.pcs
            .iter()
            .map(|pc| crate::hbm::stats::PcStats {
                commands: pc.stats.commands,
                refresh_bank_cycles: pc.stats.refresh_bank_cycles,
                bank_closes: pc.stats.bank_closes,
                active_cycles: pc.active_cycles(at),
                ..Default::default()
            })
            .collect()
    }

    /// Moves the channel, stepped to cycle `at`, `d` cycles later, adding `periods` x each
    /// pseudo-channel's refresh statistics of one period (`per_period`).
    pub fn shift(&mut self, at: u64, d: u64, periods: u64, per_period: &[crate::hbm::stats::PcStats]) {
        let later = |t: &mut u64| {
            if *t != u64::MAX {
                *t += d;
            }
        };
        self.row_bus_half += 2 * d;
        self.col_bus_free += d;
        later(&mut self.next);
        self.pc_next.iter_mut().for_each(later);
        for (pc, p) in self.pcs.iter_mut().zip(per_period) {
            pc.shift(at, d, periods, p);
        }
    }

    fn row_bus_free_at(&self, now: u64) -> bool {
        self.row_bus_half <= 2 * now + 1
    }

    /// Decides and issues this cycle's commands; sets `next`. Only pseudo-channels whose own
    /// next event is due are re-planned: a command issued by the other one can only delay them
    /// (by occupying a bus), never make something legal earlier.
    pub fn step(&mut self, sh: &Shared, now: u64, ids: (u32, u32), out: &mut StepOut<'_>) {
        let row_free = self.row_bus_free_at(now);
        let col_free = self.col_bus_free <= now;
        let n = self.pcs.len();
        let mut plans = [Plan::default(); 4];
        let hold = self.pcs.first().is_some_and(PcController::holds);
        if hold {
            // A holding refresh policy (Ramulator 2.1's rule) holds the whole channel while
            // any of its pseudo-channels' refreshes is due, and issues them in order.
            let first = self.pcs.iter().position(|pc| pc.refresh_due(now));
            for (i, pc) in self.pcs.iter_mut().enumerate() {
                if pc.set_channel_refresh(first.is_some(), first.is_none_or(|f| f == i)) {
                    self.pc_next[i] = self.pc_next[i].min(now);
                }
            }
        }
        for (i, pc) in self.pcs.iter_mut().enumerate() {
            if self.pc_next[i] <= now {
                pc.plan(sh, now, row_free, col_free, &mut plans[i]);
                self.pc_next[i] = plans[i].next;
            }
        }
        let mut lost = [false; 4];
        // The pseudo-channel whose column command issued this step: only its own row choice
        // can have become illegal since it was planned (each timing state is its own).
        let mut col_by = usize::MAX;
        if let Some(i) = pick(&plans[..n], self.rr_col, |p| p.col.is_some()) {
            col_by = i;
            let c = plans[i].col.expect("picked a column choice");
            self.issue(sh, i, &c, now, ids, out);
            self.col_bus_free = now + 1;
            self.rr_col = next_in_turn(i, n);
            self.pc_next[i] = self.pcs[i].next_after_issue(sh, &c, now, self.pc_next[i]);
            for j in (0..n).filter(|&j| j != i) {
                lost[j] |= plans[j].col.is_some();
            }
        }
        if let Some(i) = pick(&plans[..n], self.rr_row, |p| p.row.is_some()) {
            let c = plans[i].row.expect("picked a row choice");
            debug_assert!(
                col_by == i || self.pcs[i].still_legal(sh, &c, now),
                "a row choice stays legal while its pseudo-channel issues nothing else"
            );
            if col_by != i || self.pcs[i].still_legal(sh, &c, now) {
                let start = self.row_bus_half.max(2 * now);
                self.row_bus_half = start + c.cmd.bus_half_cycles();
                self.issue(sh, i, &c, now, ids, out);
                self.rr_row = next_in_turn(i, n);
                self.pc_next[i] = self.pcs[i].next_after_issue(sh, &c, now, self.pc_next[i]);
            } else {
                lost[i] = true;
            }
            for j in (0..n).filter(|&j| j != i) {
                lost[j] |= plans[j].row.is_some();
            }
        }
        // Under a holding refresh policy a refresh issued may end the channel's hold or give
        // the next pseudo-channel its turn: every one plans again.
        if hold && plans[..n].iter().any(|p| p.row.is_some_and(|c| c.refresh)) {
            self.pc_next[..n].fill(now + 1);
        }
        // A pseudo-channel whose legal command lost its bus tries again next cycle.
        for (next, _) in self.pc_next.iter_mut().zip(lost).take(n).filter(|(_, l)| *l) {
            *next = now + 1;
        }
        if self.exhaustive {
            self.pc_next[..n].fill(now + 1);
        }
        self.next = self.pc_next[..n].iter().copied().min().unwrap_or(u64::MAX);
    }

    fn issue(&mut self, sh: &Shared, i: usize, c: &Choice, now: u64, ids: (u32, u32), out: &mut StepOut<'_>) {
        if out.record {
            Self::record(sh, &self.pcs[i], i, c, now, ids, out.commands);
        }
        if let Some(done) = self.pcs[i].issue(sh, c, now, out.latency) {
            self.queued -= 1;
            out.completions.push(done);
        }
    }

    /// Appends the record of `c`, issued by pseudo-channel `i` (`pc`) at `now`, to `commands`.
    fn record(
        sh: &Shared,
        pc: &PcController,
        i: usize,
        c: &Choice,
        now: u64,
        ids: (u32, u32),
        commands: &mut Vec<CommandRecord>,
    ) {
        let b = pc.timing_state().bank_ref(c.b.bank as u32);
        let (bg, ba) = split_bank(sh, b.group as u32, c.b.bank as u32);
        commands.push(CommandRecord {
            cycle: now,
            stack: ids.0,
            channel: ids.1,
            pc: i as u32,
            cmd: c.cmd,
            sid: b.sid as u32,
            bank_group: if whole_pc(c.cmd) { 0 } else { bg },
            bank: if whole_pc(c.cmd) { 0 } else { ba },
            row: if c.cmd == Command::Act || c.cmd.is_column() { c.row } else { 0 },
            column: if c.cmd.is_column() { c.col } else { 0 },
        });
        if whole_pc(c.cmd) {
            let last = commands.len() - 1;
            commands[last].sid = 0;
        }
    }

    /// Counts a new request to flat bank `bank` of pseudo-channel `pc` that arrived at `now`
    /// (the caller enqueued it) and wakes that pseudo-channel for it.
    pub fn poke(&mut self, sh: &Shared, pc: u32, bank: u16, now: u64) {
        self.queued += 1;
        let at = self.pcs[pc as usize].next_after_arrival(sh, bank, now, self.pc_next[pc as usize]);
        let p = &mut self.pc_next[pc as usize];
        *p = (*p).min(at);
        self.next = self.next.min(at);
    }
}

fn whole_pc(c: Command) -> bool {
    matches!(c, Command::PreAll | Command::Ref)
}

/// (bank group within SID, bank within group) of flat indices.
fn split_bank(sh: &Shared, group: u32, bank: u32) -> (u32, u32) {
    (group % sh.org.bank_groups, bank % sh.org.banks_per_group)
}

/// The round-robin winner among the `plans` that `has` a choice, starting at `from` (below
/// the number of plans: the turns are kept so, with no division per step).
fn pick(plans: &[Plan], from: usize, has: impl Fn(&Plan) -> bool) -> Option<usize> {
    let n = plans.len();
    debug_assert!(from < n.max(1));
    let from = from.min(n);
    (from..n).chain(0..from).find(|&i| has(&plans[i]))
}

/// The turn after pseudo-channel `i` of `n`: `(i + 1) % n`.
#[inline]
fn next_in_turn(i: usize, n: usize) -> usize {
    if i + 1 >= n {
        0
    } else {
        i + 1
    }
}
