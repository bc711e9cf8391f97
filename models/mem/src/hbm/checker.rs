//! An independent JEDEC timing checker that replays HBM command records.
//!
//! The controller enforces timing through the data table [`crate::hbm::constraints`]. This module
//! deliberately does not read that table: every rule is written out by hand below, as plain code
//! over per-bank, per-bank-group, per-pseudo-channel and per-channel history, so that a wrong or
//! missing row in the table shows up here as a violation. Each command costs O(1) work (O(banks)
//! only for PREA, REF and REFPB), so ten million commands replay in well under a second.
//!
//! ```text
//!  CommandRecord ─► address ─► order ─► command buses ─► refresh deadline ─► bank state and
//!                   (bounds)   (per      (row bus in     (9 x tREFI)          timing rules,
//!                              channel)   half-cycles)                         then history update
//! ```
//!
//! Rules, in CK cycles ("PC" = one pseudo-channel; RD = RD or RDA, WR = WR or WRA unless "plain"):
//!
//! - Bank state: ACT only to a closed bank; RD/WR only to an open bank at the open row; RDA, WRA
//!   and PRE close the bank, PREA closes every bank of the PC; REF only with every bank of the PC
//!   closed; REFPB only to a closed bank, and not again within tRFCpb.
//! - Same bank: ACT→ACT tRC; ACT→RD tRCDRD; ACT→WR tRCDWR; ACT→PRE tRAS; PRE→ACT tRP; plain
//!   RD→PRE tRTP; plain WR→PRE CWL+BL+WR ("tWR"); RDA→ACT RTP+RP; WRA→ACT CWL+BL+WR+RP;
//!   REFPB→ACT tRFCpb; ACT→REFPB tRC; PRE→REFPB tRP; RDA→REFPB RTP+RP; WRA→REFPB CWL+BL+WR+RP.
//! - Same bank group (same SID): RD→RD and WR→WR tCCDL; WR→RD CWL+BL+WTRL; ACT→ACT tRRDL.
//! - Same PC: RD→RD and WR→WR max(tCCDS, BL); RD→WR tRTW; WR→RD CWL+BL+WTRS; ACT→ACT tRRDS;
//!   at most four ACTs per tFAW; PRE→PRE to different banks tPPD; ACT→PREA tRAS; plain RD→PREA
//!   tRTP; plain WR→PREA CWL+BL+WR; PREA→ACT and PREA→REFPB tRP; ACT→REF tRC; PRE/PREA→REF tRP;
//!   RDA→REF RTP+RP; WRA→REF CWL+BL+WR+RP; REF→ACT/REF/REFPB/PREA tRFC; REFPB→REF tRFCpb;
//!   REFPB→ACT/REFPB tRREFD; ACT→REFPB tRRDS; every bank refreshed (REF or REFPB) at least once
//!   every 9 x tREFI, counted from cycle 0 ("tREFI").
//! - Other SID, same PC: RD→RD tCCDR.
//! - Channel: cycles never decrease ("order"); one column command per cycle ("column bus"); row
//!   commands share a row bus counted in half-cycles, ACT taking 3 and the others 1, and must
//!   start within their own cycle ("row bus").
//! - Every index within the organization ("address").
//!
//! A rule whose total distance is 0 is disabled (HBM2 has no tPPD or tCCDR).
//!
//! Leaves out: power-down and self-refresh states, mode registers, data-bus contents, tRFC
//! variations with temperature, and the precise JEDEC refresh-postponement bookkeeping (only the
//! 9 x tREFI deadline is checked). A PRE to a closed bank is a no-op for bank state but still
//! starts tRP and tPPD, as the controller's table treats it.

use crate::hbm::command::{Command, CommandRecord, CommandSink};
use crate::hbm::org::Organization;
use crate::hbm::timing::TimingParams;
use std::fmt;

/// How many violations [`Checker::violations`] keeps; all are counted.
pub const MAX_STORED: usize = 10_000;
/// The stack bound of a checker built with [`Checker::new`].
pub const MAX_STACKS: u32 = 64;
/// Refresh intervals a bank may go without refresh: one plus the eight JEDEC lets be postponed.
pub const REFRESH_WINDOW_INTERVALS: u64 = 9;

/// One broken rule, found at one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The command's number in the trace, 0-based (for end-of-trace checks: the number of
    /// commands checked).
    pub index: u64,
    /// The offending command. For a missed refresh found by [`Checker::finish`] this is a
    /// synthesized REF at the end cycle, addressed to the stalest bank.
    pub record: CommandRecord,
    /// The rule's name: a JEDEC parameter ("tRCDRD", "tRTP+tRP"), or "bank state", "address",
    /// "order", "row bus", "column bus".
    pub rule: &'static str,
    /// For timing rules, the earliest cycle at which the command would have been legal.
    pub earliest: Option<u64>,
    /// What the rule was measured from, e.g. "ACT to same bank at cycle 101".
    pub detail: String,
}

impl fmt::Display for Violation {
    /// One line: `cycle 131 ch 3 pc 1 sid 0 bg 2 ba 1: RD violates tRCDRD (earliest 132; ACT to
    /// same bank at cycle 101)`. `st N` appears for stacks other than 0; bank fields are left out
    /// for pseudo-channel-wide commands (PREA, REF).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.record;
        write!(f, "cycle {} ", r.cycle)?;
        if r.stack != 0 {
            write!(f, "st {} ", r.stack)?;
        }
        write!(f, "ch {} pc {}", r.channel, r.pc)?;
        if !matches!(r.cmd, Command::PreAll | Command::Ref) {
            write!(f, " sid {} bg {} ba {}", r.sid, r.bank_group, r.bank)?;
        }
        write!(f, ": {} violates {} (", r.cmd.name(), self.rule)?;
        if let Some(e) = self.earliest {
            write!(f, "earliest {e}; ")?;
        }
        write!(f, "{})", self.detail)
    }
}

/// Minimum distances in CK cycles, derived by hand from [`TimingParams`]; 0 disables a rule.
#[derive(Clone, Debug)]
struct Gaps {
    rcd_rd: u64,
    rcd_wr: u64,
    rp: u64,
    ras: u64,
    rc: u64,
    rtp: u64,
    /// Plain WR to PRE: write latency, burst, then write recovery.
    wr_to_pre: u64,
    /// RDA to ACT/REF: the internal precharge waits tRTP, then tRP.
    rda_to_act: u64,
    /// WRA to ACT/REF: write latency, burst, write recovery, then tRP.
    wra_to_act: u64,
    /// Column to column in the PC: tCCDS, and never closer than one burst.
    ccd_s: u64,
    ccd_l: u64,
    ccd_r: u64,
    rrd_s: u64,
    rrd_l: u64,
    faw: u64,
    /// WR to RD, other bank group: write latency, burst, tWTRS.
    wtr_s: u64,
    /// WR to RD, same bank group: write latency, burst, tWTRL.
    wtr_l: u64,
    rtw: u64,
    ppd: u64,
    rfc: u64,
    rfc_pb: u64,
    rrefd: u64,
    /// Longest a bank may go without refresh.
    refresh_window: u64,
}

impl Gaps {
    fn new(t: &TimingParams) -> Gaps {
        let n = |v: u32| v as u64;
        let write_end = n(t.cwl) + n(t.bl);
        Gaps {
            rcd_rd: n(t.rcd_rd),
            rcd_wr: n(t.rcd_wr),
            rp: n(t.rp),
            ras: n(t.ras),
            rc: n(t.rc),
            rtp: n(t.rtp),
            wr_to_pre: write_end + n(t.wr),
            rda_to_act: n(t.rtp) + n(t.rp),
            wra_to_act: write_end + n(t.wr) + n(t.rp),
            ccd_s: n(t.ccd_s.max(t.bl)),
            ccd_l: n(t.ccd_l),
            ccd_r: n(t.ccd_r),
            rrd_s: n(t.rrd_s),
            rrd_l: n(t.rrd_l),
            faw: n(t.faw),
            wtr_s: write_end + n(t.wtr_s),
            wtr_l: write_end + n(t.wtr_l),
            rtw: n(t.rtw),
            ppd: n(t.ppd),
            rfc: n(t.rfc),
            rfc_pb: n(t.rfc_pb),
            rrefd: n(t.rrefd),
            refresh_window: REFRESH_WINDOW_INTERVALS * n(t.refi),
        }
    }
}

/// History of one bank: its open row and the last cycle of each command that constrains it.
#[derive(Clone, Copy, Debug, Default)]
struct Bank {
    open_row: Option<u32>,
    act: Option<u64>,
    pre: Option<u64>,
    /// Last plain RD (not RDA).
    rd: Option<u64>,
    /// Last plain WR (not WRA).
    wr: Option<u64>,
    rda: Option<u64>,
    wra: Option<u64>,
    refpb: Option<u64>,
    /// Last REF or REFPB that covered this bank (0: time zero counts as refreshed).
    refreshed: u64,
}

/// History of one bank group (of one SID).
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    /// Last RD or RDA.
    rd: Option<u64>,
    /// Last WR or WRA.
    wr: Option<u64>,
    act: Option<u64>,
}

/// History of one pseudo-channel.
#[derive(Clone, Debug)]
struct Pc {
    banks: Vec<Bank>,
    groups: Vec<Group>,
    /// Last RD or RDA per SID (tCCDR).
    sid_rd: Vec<Option<u64>>,
    /// Last RD or RDA, WR or WRA, ACT in the PC.
    rd: Option<u64>,
    wr: Option<u64>,
    act: Option<u64>,
    /// Last plain RD and plain WR (for PREA), last RDA and WRA (for REF).
    rd_plain: Option<u64>,
    wr_plain: Option<u64>,
    rda: Option<u64>,
    wra: Option<u64>,
    /// The last four ACTs, as a ring: slot `acts_seen % 4` holds the oldest once four are seen.
    acts: [u64; 4],
    acts_seen: u64,
    /// Last PRE (cycle, flat bank), and the last PRE to a bank other than that one (tPPD).
    pre: Option<(u64, usize)>,
    pre_other_bank: Option<u64>,
    prea: Option<u64>,
    refab: Option<u64>,
    refpb: Option<u64>,
    /// Banks with an open row.
    open_banks: u32,
    /// Oldest `refreshed` over the banks, and the value a tREFI violation was last reported for.
    oldest_refresh: u64,
    refresh_reported: Option<u64>,
}

impl Pc {
    fn new(org: &Organization) -> Pc {
        Pc {
            banks: vec![Bank::default(); org.banks_per_pc() as usize],
            groups: vec![Group::default(); org.groups_per_pc() as usize],
            sid_rd: vec![None; org.sids as usize],
            rd: None,
            wr: None,
            act: None,
            rd_plain: None,
            wr_plain: None,
            rda: None,
            wra: None,
            acts: [0; 4],
            acts_seen: 0,
            pre: None,
            pre_other_bank: None,
            prea: None,
            refab: None,
            refpb: None,
            open_banks: 0,
            oldest_refresh: 0,
            refresh_reported: None,
        }
    }

    /// The first of the last four ACTs, once four have been seen.
    fn faw_first(&self) -> Option<u64> {
        (self.acts_seen >= 4).then(|| self.acts[(self.acts_seen % 4) as usize])
    }

    /// The last PRE to a bank other than `bank`.
    fn pre_to_other_bank(&self, bank: usize) -> Option<u64> {
        match self.pre {
            Some((cycle, b)) if b != bank => Some(cycle),
            Some(_) => self.pre_other_bank,
            None => None,
        }
    }

    /// The bank refreshed longest ago.
    fn stalest_bank(&self) -> usize {
        (0..self.banks.len()).min_by_key(|&b| self.banks[b].refreshed).unwrap_or(0)
    }

    fn close(&mut self, b: usize) {
        if self.banks[b].open_row.take().is_some() {
            self.open_banks -= 1;
        }
    }
}

/// The command buses and ordering state of one channel (shared by its pseudo-channels).
#[derive(Clone, Copy, Debug, Default)]
struct Channel {
    last_cycle: Option<u64>,
    /// First free half-cycle of the row command bus.
    row_busy: u64,
    last_column: Option<u64>,
}

/// Where one record's violations go: its index and the record, plus the shared log.
struct Judge<'a> {
    log: &'a mut Log,
    index: u64,
    rec: &'a CommandRecord,
}

impl Judge<'_> {
    fn flag(&mut self, rule: &'static str, earliest: Option<u64>, detail: String) {
        self.log.add(Violation { index: self.index, record: *self.rec, rule, earliest, detail });
    }

    /// Flags `rule` if this command comes less than `gap` cycles after `prev` (`what` names the
    /// earlier command). A gap of 0 disables the rule.
    fn after(&mut self, rule: &'static str, prev: Option<u64>, gap: u64, what: impl fmt::Display) {
        let Some(p) = prev else { return };
        let earliest = p.saturating_add(gap);
        if gap > 0 && self.rec.cycle < earliest {
            self.flag(rule, Some(earliest), format!("{what} at cycle {p}"));
        }
    }
}

/// Violations found so far: the first [`MAX_STORED`] kept, all counted.
#[derive(Clone, Debug, Default)]
struct Log {
    stored: Vec<Violation>,
    count: u64,
}

impl Log {
    fn add(&mut self, v: Violation) {
        self.count += 1;
        if self.stored.len() < MAX_STORED {
            self.stored.push(v);
        }
    }
}

/// Replays command records against the JEDEC rules of the module docs and records violations.
///
/// One checker covers a whole memory: any number of stacks (up to [`MAX_STACKS`] with
/// [`Checker::new`], exactly `n` with [`Checker::with_stacks`]), each shaped by one
/// [`Organization`]. Records must arrive in non-decreasing cycle order per channel; channels may
/// interleave freely. A record that breaks addressing or ordering is reported and otherwise
/// ignored; any other record is checked and then applied, so later commands are judged against
/// what really happened.
///
/// Leaves out what the module docs list. Never panics on any record, given an `org` that passes
/// [`Organization::validate`] (as every preset does).
#[derive(Clone, Debug)]
pub struct Checker {
    org: Organization,
    gaps: Gaps,
    max_stacks: u32,
    channels: Vec<Channel>,
    pcs: Vec<Pc>,
    /// Per stack: whether [`Checker::finish`] checks it (named by a record, or fixed by
    /// [`Checker::with_stacks`]).
    stack_used: Vec<bool>,
    log: Log,
    checked: u64,
}

impl Checker {
    /// A checker for stacks of `org` at timing `t`; stacks are added as records name them, up to
    /// [`MAX_STACKS`], so one checker per stack works as well as one per memory. Only stacks
    /// that records have named are checked by [`Checker::finish`].
    pub fn new(org: &Organization, t: &TimingParams) -> Checker {
        Checker::build(org, t, MAX_STACKS, 0)
    }

    /// A checker for exactly `stacks` stacks, all checked by [`Checker::finish`]; records naming
    /// another stack are "address" violations.
    pub fn with_stacks(org: &Organization, t: &TimingParams, stacks: u32) -> Checker {
        Checker::build(org, t, stacks, stacks)
    }

    fn build(org: &Organization, t: &TimingParams, max_stacks: u32, stacks: u32) -> Checker {
        let mut c = Checker {
            org: org.clone(),
            gaps: Gaps::new(t),
            max_stacks,
            channels: Vec::new(),
            pcs: Vec::new(),
            stack_used: vec![true; stacks as usize],
            log: Log::default(),
            checked: 0,
        };
        c.grow(stacks);
        c
    }

    /// Makes room for stacks `0..stacks`.
    fn grow(&mut self, stacks: u32) {
        let channels = stacks as usize * self.org.channels as usize;
        if self.stack_used.len() < stacks as usize {
            self.stack_used.resize(stacks as usize, false);
        }
        if self.channels.len() < channels {
            self.channels.resize(channels, Channel::default());
            self.pcs.resize(channels * self.org.pseudo_channels as usize, Pc::new(&self.org));
        }
    }

    /// Checks one command against every rule and records what it breaks.
    pub fn check(&mut self, rec: &CommandRecord) {
        let index = self.checked;
        self.checked += 1;
        if let Err(detail) = address_ok(&self.org, self.max_stacks, rec) {
            self.log.add(Violation { index, record: *rec, rule: "address", earliest: None, detail });
            return;
        }
        self.grow(rec.stack + 1);
        self.stack_used[rec.stack as usize] = true;
        let ci = rec.stack as usize * self.org.channels as usize + rec.channel as usize;
        let mut j = Judge { log: &mut self.log, index, rec };
        if !in_order(&mut self.channels[ci], &mut j) {
            return;
        }
        buses(&mut self.channels[ci], &mut j);
        let pc = &mut self.pcs[ci * self.org.pseudo_channels as usize + rec.pc as usize];
        refresh_deadline(pc, &self.org, &self.gaps, &mut j);
        let (b, g) = bank_and_group(&self.org, rec);
        rules(pc, b, g, &self.gaps, &self.org, &mut j);
        apply(pc, b, g, rec);
    }

    /// End-of-trace checks at `end_cycle`: every pseudo-channel of every stack checked (see
    /// [`Checker::new`]) must have refreshed each bank within the last 9 x tREFI. Calling it
    /// again reports nothing new.
    pub fn finish(&mut self, end_cycle: u64) {
        let per_stack = self.org.channels as usize * self.org.pseudo_channels as usize;
        for (i, pc) in self.pcs.iter_mut().enumerate().filter(|(i, _)| self.stack_used[i / per_stack]) {
            let rec = end_record(&self.org, pc, i, per_stack, end_cycle);
            let mut j = Judge { log: &mut self.log, index: self.checked, rec: &rec };
            refresh_deadline(pc, &self.org, &self.gaps, &mut j);
        }
    }

    /// The violations found, in the order found; at most [`MAX_STORED`].
    pub fn violations(&self) -> &[Violation] {
        &self.log.stored
    }

    /// How many violations were found, including those not stored.
    pub fn violation_count(&self) -> u64 {
        self.log.count
    }

    /// How many records [`Checker::check`] has seen.
    pub fn commands_checked(&self) -> u64 {
        self.checked
    }
}

impl CommandSink for Checker {
    /// Checks the command as it is issued.
    fn command(&mut self, rec: &CommandRecord) {
        self.check(rec);
    }
}

/// The refresh command [`Checker::finish`] reports a missed deadline against: REF at the end
/// cycle, addressed to the pseudo-channel's stalest bank.
fn end_record(org: &Organization, pc: &Pc, i: usize, per_stack: usize, cycle: u64) -> CommandRecord {
    let (sid, bank_group, bank) = bank_fields(org, pc.stalest_bank());
    let in_stack = (i % per_stack) as u32;
    CommandRecord {
        cycle,
        stack: (i / per_stack) as u32,
        channel: in_stack / org.pseudo_channels,
        pc: in_stack % org.pseudo_channels,
        cmd: Command::Ref,
        sid,
        bank_group,
        bank,
        row: 0,
        column: 0,
    }
}

/// Checks every index the command uses against the organization.
fn address_ok(org: &Organization, max_stacks: u32, rec: &CommandRecord) -> Result<(), String> {
    let bank_level = !matches!(rec.cmd, Command::PreAll | Command::Ref);
    let uses_row = rec.cmd == Command::Act || rec.cmd.is_column();
    let checks = [
        (true, "stack", rec.stack, max_stacks),
        (true, "channel", rec.channel, org.channels),
        (true, "pc", rec.pc, org.pseudo_channels),
        (bank_level, "sid", rec.sid, org.sids),
        (bank_level, "bank_group", rec.bank_group, org.bank_groups),
        (bank_level, "bank", rec.bank, org.banks_per_group),
        (uses_row, "row", rec.row, org.rows),
        (rec.cmd.is_column(), "column", rec.column, org.bursts_per_row()),
    ];
    for (used, field, value, count) in checks {
        if used && value >= count {
            return Err(format!("{field} {value} out of range (0..{count})"));
        }
    }
    Ok(())
}

/// Flat bank and bank-group indices within the pseudo-channel (0 for PREA and REF, which ignore
/// their bank fields).
fn bank_and_group(org: &Organization, rec: &CommandRecord) -> (usize, usize) {
    if matches!(rec.cmd, Command::PreAll | Command::Ref) {
        return (0, 0);
    }
    let g = rec.sid * org.bank_groups + rec.bank_group;
    ((g * org.banks_per_group + rec.bank) as usize, g as usize)
}

/// (sid, bank group, bank) of a flat bank index.
fn bank_fields(org: &Organization, b: usize) -> (u32, u32, u32) {
    let (b, groups, banks) = (b as u32, org.bank_groups.max(1), org.banks_per_group.max(1));
    (b / (groups * banks), b / banks % groups, b % banks)
}

fn bank_name(org: &Organization, b: usize) -> String {
    let (sid, bg, ba) = bank_fields(org, b);
    format!("sid {sid} bg {bg} ba {ba}")
}

/// Cycles must not decrease on a channel; returns false (and flags "order") if this one does.
fn in_order(ch: &mut Channel, j: &mut Judge) -> bool {
    let cycle = j.rec.cycle;
    if let Some(last) = ch.last_cycle.filter(|&last| cycle < last) {
        j.flag("order", None, format!("previous command on this channel at cycle {last}"));
        return false;
    }
    ch.last_cycle = Some(cycle);
    true
}

/// Row-bus occupancy in half-cycles: ACT is 1.5 CK, the other row commands 0.5 CK.
fn row_half_cycles(cmd: Command) -> u64 {
    if cmd == Command::Act {
        3
    } else {
        1
    }
}

/// One column command per cycle; row commands must start within their cycle on the row bus.
fn buses(ch: &mut Channel, j: &mut Judge) {
    let (cmd, cycle) = (j.rec.cmd, j.rec.cycle);
    if cmd.is_column() {
        if ch.last_column == Some(cycle) {
            j.flag("column bus", Some(cycle.saturating_add(1)), format!("column command at cycle {cycle}"));
        }
        ch.last_column = Some(cycle);
        return;
    }
    let slot = cycle.saturating_mul(2);
    if ch.row_busy > slot.saturating_add(1) {
        let busy = ch.row_busy;
        let half = if busy % 2 == 1 { ".5" } else { "" };
        j.flag("row bus", Some(busy / 2), format!("row bus busy until cycle {}{half}", busy / 2));
    }
    ch.row_busy = ch.row_busy.max(slot).saturating_add(row_half_cycles(cmd));
}

/// Every bank must be refreshed (REF or REFPB) at least every 9 x tREFI, counted from cycle 0;
/// reported once per missed deadline.
fn refresh_deadline(pc: &mut Pc, org: &Organization, k: &Gaps, j: &mut Judge) {
    let deadline = pc.oldest_refresh.saturating_add(k.refresh_window);
    if k.refresh_window == 0 || j.rec.cycle <= deadline || pc.refresh_reported == Some(pc.oldest_refresh) {
        return;
    }
    pc.refresh_reported = Some(pc.oldest_refresh);
    let bank = bank_name(org, pc.stalest_bank());
    let since = pc.oldest_refresh;
    j.flag("tREFI", None, format!("bank {bank} not refreshed since cycle {since}; deadline {deadline} (9 x tREFI)"));
}

/// Bank-state and timing rules for the command in `j`, against the history before it.
fn rules(pc: &Pc, b: usize, g: usize, k: &Gaps, org: &Organization, j: &mut Judge) {
    match j.rec.cmd {
        Command::Act => activate(pc, b, g, k, j),
        Command::Pre => precharge(pc, b, k, j),
        Command::PreAll => precharge_all(pc, k, j),
        Command::Rd | Command::RdA => read(pc, b, g, k, j),
        Command::Wr | Command::WrA => write(pc, b, g, k, j),
        Command::Ref => refresh_all(pc, k, org, j),
        Command::RefPb => refresh_bank(pc, b, k, j),
    }
}

fn activate(pc: &Pc, b: usize, g: usize, k: &Gaps, j: &mut Judge) {
    let bank = &pc.banks[b];
    if let Some(row) = bank.open_row {
        j.flag("bank state", None, format!("bank already open (row {row})"));
    }
    j.after("tRC", bank.act, k.rc, "ACT to same bank");
    j.after("tRP", bank.pre, k.rp, "PRE to same bank");
    j.after("tRTP+tRP", bank.rda, k.rda_to_act, "RDA to same bank");
    j.after("tWR+tRP", bank.wra, k.wra_to_act, "WRA to same bank");
    j.after("tRFCpb", bank.refpb, k.rfc_pb, "REFPB to same bank");
    j.after("tRRDL", pc.groups[g].act, k.rrd_l, "ACT in same bank group");
    j.after("tRRDS", pc.act, k.rrd_s, "ACT in same PC");
    j.after("tFAW", pc.faw_first(), k.faw, "first of the last four ACTs in same PC");
    j.after("tRP", pc.prea, k.rp, "PREA");
    j.after("tRFC", pc.refab, k.rfc, "REF");
    j.after("tRREFD", pc.refpb, k.rrefd, "REFPB in same PC");
}

fn precharge(pc: &Pc, b: usize, k: &Gaps, j: &mut Judge) {
    let bank = &pc.banks[b];
    j.after("tRAS", bank.act, k.ras, "ACT to same bank");
    j.after("tRTP", bank.rd, k.rtp, "RD to same bank");
    j.after("tWR", bank.wr, k.wr_to_pre, "WR to same bank");
    j.after("tPPD", pc.pre_to_other_bank(b), k.ppd, "PRE to another bank");
}

fn precharge_all(pc: &Pc, k: &Gaps, j: &mut Judge) {
    j.after("tRAS", pc.act, k.ras, "ACT in same PC");
    j.after("tRTP", pc.rd_plain, k.rtp, "RD in same PC");
    j.after("tWR", pc.wr_plain, k.wr_to_pre, "WR in same PC");
    j.after("tRFC", pc.refab, k.rfc, "REF");
}

/// RD and WR need the bank open at the record's row.
fn open_row(bank: &Bank, j: &mut Judge) {
    match bank.open_row {
        None => j.flag("bank state", None, "bank is closed".into()),
        Some(row) if row != j.rec.row => {
            let want = j.rec.row;
            j.flag("bank state", None, format!("row {row} is open, not row {want}"));
        }
        Some(_) => {}
    }
}

fn read(pc: &Pc, b: usize, g: usize, k: &Gaps, j: &mut Judge) {
    open_row(&pc.banks[b], j);
    j.after("tRCDRD", pc.banks[b].act, k.rcd_rd, "ACT to same bank");
    j.after("tCCDL", pc.groups[g].rd, k.ccd_l, "RD in same bank group");
    j.after("tWTRL", pc.groups[g].wr, k.wtr_l, "WR in same bank group");
    j.after("tCCDS", pc.rd, k.ccd_s, "RD in same PC");
    j.after("tWTRS", pc.wr, k.wtr_s, "WR in same PC");
    let sid = j.rec.sid as usize;
    for (other, &last) in pc.sid_rd.iter().enumerate().filter(|&(s, _)| s != sid) {
        j.after("tCCDR", last, k.ccd_r, format_args!("RD to SID {other}"));
    }
}

fn write(pc: &Pc, b: usize, g: usize, k: &Gaps, j: &mut Judge) {
    open_row(&pc.banks[b], j);
    j.after("tRCDWR", pc.banks[b].act, k.rcd_wr, "ACT to same bank");
    j.after("tCCDL", pc.groups[g].wr, k.ccd_l, "WR in same bank group");
    j.after("tCCDS", pc.wr, k.ccd_s, "WR in same PC");
    j.after("tRTW", pc.rd, k.rtw, "RD in same PC");
}

fn refresh_all(pc: &Pc, k: &Gaps, org: &Organization, j: &mut Judge) {
    if let Some(b) = pc.banks.iter().position(|bank| bank.open_row.is_some()) {
        j.flag("bank state", None, format!("bank {} is open", bank_name(org, b)));
    }
    j.after("tRC", pc.act, k.rc, "ACT in same PC");
    j.after("tRP", pc.pre.map(|(cycle, _)| cycle), k.rp, "PRE in same PC");
    j.after("tRP", pc.prea, k.rp, "PREA");
    j.after("tRTP+tRP", pc.rda, k.rda_to_act, "RDA in same PC");
    j.after("tWR+tRP", pc.wra, k.wra_to_act, "WRA in same PC");
    j.after("tRFC", pc.refab, k.rfc, "REF");
    j.after("tRFCpb", pc.refpb, k.rfc_pb, "REFPB in same PC");
}

fn refresh_bank(pc: &Pc, b: usize, k: &Gaps, j: &mut Judge) {
    let bank = &pc.banks[b];
    if let Some(row) = bank.open_row {
        j.flag("bank state", None, format!("bank is open (row {row})"));
    }
    j.after("tRFCpb", bank.refpb, k.rfc_pb, "REFPB to same bank (still refreshing)");
    j.after("tRC", bank.act, k.rc, "ACT to same bank");
    j.after("tRP", bank.pre, k.rp, "PRE to same bank");
    j.after("tRP", pc.prea, k.rp, "PREA");
    j.after("tRTP+tRP", bank.rda, k.rda_to_act, "RDA to same bank");
    j.after("tWR+tRP", bank.wra, k.wra_to_act, "WRA to same bank");
    j.after("tRFC", pc.refab, k.rfc, "REF");
    j.after("tRREFD", pc.refpb, k.rrefd, "REFPB in same PC");
    j.after("tRRDS", pc.act, k.rrd_s, "ACT in same PC");
}

/// Records the command in the history (after it was checked).
fn apply(pc: &mut Pc, b: usize, g: usize, rec: &CommandRecord) {
    let c = Some(rec.cycle);
    match rec.cmd {
        Command::Act => {
            if pc.banks[b].open_row.replace(rec.row).is_none() {
                pc.open_banks += 1;
            }
            pc.banks[b].act = c;
            pc.groups[g].act = c;
            pc.act = c;
            pc.acts[(pc.acts_seen % 4) as usize] = rec.cycle;
            pc.acts_seen += 1;
        }
        Command::Pre => apply_pre(pc, b, rec.cycle),
        Command::PreAll => {
            (0..pc.banks.len()).for_each(|b| pc.close(b));
            pc.prea = c;
        }
        Command::Rd | Command::RdA => apply_read(pc, b, g, rec),
        Command::Wr | Command::WrA => apply_write(pc, b, g, rec),
        Command::Ref => {
            pc.banks.iter_mut().for_each(|bank| bank.refreshed = rec.cycle);
            pc.oldest_refresh = rec.cycle;
            pc.refab = c;
        }
        Command::RefPb => {
            pc.banks[b].refpb = c;
            pc.banks[b].refreshed = rec.cycle;
            pc.oldest_refresh = pc.banks.iter().map(|bank| bank.refreshed).min().unwrap_or(rec.cycle);
            pc.refpb = c;
        }
    }
}

fn apply_pre(pc: &mut Pc, b: usize, cycle: u64) {
    pc.close(b);
    pc.banks[b].pre = Some(cycle);
    if let Some((last, last_bank)) = pc.pre {
        if last_bank != b {
            pc.pre_other_bank = Some(last);
        }
    }
    pc.pre = Some((cycle, b));
}

fn apply_read(pc: &mut Pc, b: usize, g: usize, rec: &CommandRecord) {
    let c = Some(rec.cycle);
    if rec.cmd == Command::RdA {
        pc.close(b);
        pc.banks[b].rda = c;
        pc.rda = c;
    } else {
        pc.banks[b].rd = c;
        pc.rd_plain = c;
    }
    pc.groups[g].rd = c;
    pc.rd = c;
    pc.sid_rd[rec.sid as usize] = c;
}

fn apply_write(pc: &mut Pc, b: usize, g: usize, rec: &CommandRecord) {
    let c = Some(rec.cycle);
    if rec.cmd == Command::WrA {
        pc.close(b);
        pc.banks[b].wra = c;
        pc.wra = c;
    } else {
        pc.banks[b].wr = c;
        pc.wr_plain = c;
    }
    pc.groups[g].wr = c;
    pc.wr = c;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbm::presets::{self, Preset};
    use Command::*;

    /// A bank address within stack 0, channel 0.
    #[derive(Clone, Copy)]
    struct B {
        pc: u32,
        sid: u32,
        bg: u32,
        ba: u32,
    }

    const B0: B = B { pc: 0, sid: 0, bg: 0, ba: 0 };

    fn bank(bg: u32, ba: u32) -> B {
        B { pc: 0, sid: 0, bg, ba }
    }

    /// A record at `cycle`; row 7, column 0.
    fn at(cycle: u64, cmd: Command, b: B) -> CommandRecord {
        CommandRecord {
            cycle,
            stack: 0,
            channel: 0,
            pc: b.pc,
            cmd,
            sid: b.sid,
            bank_group: b.bg,
            bank: b.ba,
            row: 7,
            column: 0,
        }
    }

    fn run(p: &Preset, seq: &[CommandRecord]) -> Checker {
        let mut c = Checker::new(&p.org, &p.timing);
        seq.iter().for_each(|r| c.check(r));
        c
    }

    fn summary(c: &Checker) -> Vec<String> {
        c.violations().iter().map(|v| v.to_string()).collect()
    }

    /// Minimal sequences whose last command is issued exactly at the earliest legal cycle of
    /// `rule`, and at which no other rule binds one cycle earlier.
    fn timing_cases(t: &TimingParams) -> Vec<(&'static str, Vec<CommandRecord>)> {
        let n = |v: u32| v as u64;
        let (rcd_rd, rcd_wr, rp, ras, rc, rtp) = (n(t.rcd_rd), n(t.rcd_wr), n(t.rp), n(t.ras), n(t.rc), n(t.rtp));
        let (rrd_s, rrd_l, rfc, rfc_pb, rrefd) = (n(t.rrd_s), n(t.rrd_l), n(t.rfc), n(t.rfc_pb), n(t.rrefd));
        let wr_end = n(t.cwl) + n(t.bl);
        let wr_pre = wr_end + n(t.wr);
        let (bg1, sid1, pc1) = (bank(1, 0), B { sid: 1, ..B0 }, B { pc: 1, ..B0 });
        let rw = rcd_rd.max(rcd_wr);
        let mut cases = vec![
            ("tRCDRD", vec![at(0, Act, B0), at(rcd_rd, Rd, B0)]),
            ("tRCDWR", vec![at(0, Act, B0), at(rcd_wr, Wr, B0)]),
            ("tRAS", vec![at(0, Act, B0), at(ras, Pre, B0)]),
            ("tRP", vec![at(0, Act, B0), at(rc, Pre, B0), at(rc + rp, Act, B0)]),
            ("tRC", vec![at(0, Act, B0), at(rcd_rd, RdA, B0), at(rc, Act, B0)]),
            ("tWR", vec![at(0, Act, B0), at(rcd_wr, Wr, B0), at(rcd_wr + wr_pre, Pre, B0)]),
            ("tRTP", vec![at(0, Act, B0), at(ras, Rd, B0), at(ras + rtp, Pre, B0)]),
            ("tRTP+tRP", vec![at(0, Act, B0), at(rc, RdA, B0), at(rc + rtp + rp, Act, B0)]),
            ("tWR+tRP", vec![at(0, Act, B0), at(rc, WrA, B0), at(rc + wr_pre + rp, Act, B0)]),
            (
                "tCCDS",
                vec![at(0, Act, B0), at(rrd_s, Act, bg1), at(rrd_s + rcd_rd, Rd, B0), at(rrd_s + rcd_rd + 2, Rd, bg1)],
            ),
            ("tCCDS", vec![at(0, Act, B0), at(rrd_s, Act, bg1), at(rrd_s + rw, Wr, B0), at(rrd_s + rw + 2, Wr, bg1)]),
            ("tCCDL", vec![at(0, Act, B0), at(rcd_rd, Rd, B0), at(rcd_rd + n(t.ccd_l), Rd, B0)]),
            ("tCCDL", vec![at(0, Act, B0), at(rcd_wr, Wr, B0), at(rcd_wr + n(t.ccd_l), Wr, B0)]),
            ("tRRDS", vec![at(10, Act, B0), at(10 + rrd_s, Act, bg1)]),
            ("tRRDL", vec![at(10, Act, B0), at(10 + rrd_l, Act, bank(0, 1))]),
            ("tFAW", {
                let mut v: Vec<_> = (0..4).map(|g| at(g * rrd_s, Act, bank(g as u32, 0))).collect();
                v.push(at(n(t.faw), Act, bank(0, 1)));
                v
            }),
            (
                "tWTRS",
                vec![
                    at(0, Act, B0),
                    at(rrd_s, Act, bg1),
                    at(rrd_s + rw, Wr, B0),
                    at(rrd_s + rw + wr_end + n(t.wtr_s), Rd, bg1),
                ],
            ),
            ("tWTRL", vec![at(0, Act, B0), at(rw, Wr, B0), at(rw + wr_end + n(t.wtr_l), Rd, B0)]),
            ("tRTW", vec![at(0, Act, B0), at(rw, Rd, B0), at(rw + n(t.rtw), Wr, B0)]),
            ("tRFC", vec![at(10, Ref, B0), at(10 + rfc, Act, B0)]),
            ("tRFC", vec![at(10, Ref, B0), at(10 + rfc, Ref, B0)]),
            ("tRFC", vec![at(10, Ref, B0), at(10 + rfc, RefPb, B0)]),
            ("tRFC", vec![at(10, Ref, B0), at(10 + rfc, PreAll, B0)]),
            ("tRFCpb", vec![at(10, RefPb, B0), at(10 + rfc_pb, Act, B0)]),
            ("tRFCpb", vec![at(10, RefPb, B0), at(10 + rfc_pb, Ref, B0)]),
            ("tRREFD", vec![at(10, RefPb, B0), at(10 + rrefd, Act, bank(0, 1))]),
            ("tRREFD", vec![at(10, RefPb, B0), at(10 + rrefd, RefPb, bank(0, 1))]),
            ("tRRDS", vec![at(10, Act, B0), at(10 + rrd_s, RefPb, bg1)]),
            ("tRAS", vec![at(0, Act, B0), at(ras, PreAll, B0)]),
            ("tRTP", vec![at(0, Act, B0), at(ras, Rd, B0), at(ras + rtp, PreAll, B0)]),
            ("tWR", vec![at(0, Act, B0), at(rcd_wr, Wr, B0), at(rcd_wr + wr_pre, PreAll, B0)]),
            ("tRP", vec![at(0, Act, B0), at(rc, PreAll, B0), at(rc + rp, Act, B0)]),
            ("tRC", vec![at(0, Act, B0), at(rcd_rd, RdA, B0), at(rc, Ref, B0)]),
            ("tRP", vec![at(0, Act, B0), at(rc, Pre, B0), at(rc + rp, Ref, B0)]),
            ("tRP", vec![at(0, Act, B0), at(rc, PreAll, B0), at(rc + rp, Ref, B0)]),
            ("tRTP+tRP", vec![at(0, Act, B0), at(rc, RdA, B0), at(rc + rtp + rp, Ref, B0)]),
            ("tWR+tRP", vec![at(0, Act, B0), at(rc, WrA, B0), at(rc + wr_pre + rp, Ref, B0)]),
            ("tRC", vec![at(0, Act, B0), at(rcd_rd, RdA, B0), at(rc, RefPb, B0)]),
            ("tRP", vec![at(0, Act, B0), at(rc, Pre, B0), at(rc + rp, RefPb, B0)]),
            ("tRP", vec![at(0, Act, B0), at(rc, PreAll, B0), at(rc + rp, RefPb, B0)]),
            ("tRTP+tRP", vec![at(0, Act, B0), at(rc, RdA, B0), at(rc + rtp + rp, RefPb, B0)]),
            ("tWR+tRP", vec![at(0, Act, B0), at(rc, WrA, B0), at(rc + wr_pre + rp, RefPb, B0)]),
            // ACT pc0 takes half-cycles 20..23, ACT pc1 23..26: a row command fits in cycle 13.
            ("row bus", vec![at(10, Act, B0), at(11, Act, pc1), at(13, Pre, bank(0, 1))]),
            ("column bus", vec![at(10, Act, B0), at(11, Act, pc1), at(11 + rcd_rd, Rd, B0), at(12 + rcd_rd, Rd, pc1)]),
        ];
        if t.ccd_r > 0 {
            let seq = vec![
                at(0, Act, B0),
                at(rrd_s, Act, sid1),
                at(rrd_s + rcd_rd, Rd, B0),
                at(rrd_s + rcd_rd + n(t.ccd_r), Rd, sid1),
            ];
            cases.push(("tCCDR", seq));
        }
        if t.ppd > 0 {
            cases.push(("tPPD", vec![at(10, Pre, B0), at(10 + n(t.ppd), Pre, bank(0, 1))]));
        }
        cases
    }

    /// Issued at its earliest cycle the last command is clean; one cycle earlier it breaks
    /// exactly `rule`, reporting that earliest cycle.
    fn assert_tight(p: &Preset, rule: &str, seq: &[CommandRecord]) {
        let clean = run(p, seq);
        assert_eq!(summary(&clean), Vec::<String>::new(), "{} {rule}: legal sequence flagged", p.name);
        let mut early = seq.to_vec();
        let last = early.last_mut().unwrap();
        let earliest = last.cycle;
        last.cycle -= 1;
        let c = run(p, &early);
        let got: Vec<_> = c.violations().iter().map(|v| (v.index, v.rule, v.earliest)).collect();
        let want = vec![((seq.len() - 1) as u64, rule, Some(earliest))];
        assert_eq!(got, want, "{} {rule}: {:?}", p.name, summary(&c));
    }

    #[test]
    fn every_timing_rule_is_tight_on_every_preset() {
        for p in [&*presets::HBM3_6400, &*presets::HBM3E_9600, &*presets::HBM2_2000] {
            for (rule, seq) in timing_cases(&p.timing) {
                assert_tight(p, rule, &seq);
            }
        }
    }

    #[test]
    fn bank_state_violations_are_flagged() {
        let t = presets::HBM3_6400.timing.clone();
        let (rcd, rc) = (t.rcd_rd as u64, t.rc as u64);
        let wrong_row = CommandRecord { row: 8, ..at(rcd, Rd, B0) };
        let cases = [
            ("RD to a closed bank", vec![at(10, Rd, B0)], "bank is closed"),
            ("WR after RDA", vec![at(0, Act, B0), at(rcd, RdA, B0), at(rc, Wr, B0)], "bank is closed"),
            ("wrong row", vec![at(0, Act, B0), wrong_row], "row 7 is open, not row 8"),
            ("ACT to an open bank", vec![at(0, Act, B0), at(rc, Act, B0)], "bank already open (row 7)"),
            ("REF with an open bank", vec![at(0, Act, B0), at(rc, Ref, B0)], "bank sid 0 bg 0 ba 0 is open"),
            ("REFPB to an open bank", vec![at(0, Act, B0), at(rc, RefPb, B0)], "bank is open (row 7)"),
        ];
        for (name, seq, detail) in cases {
            let c = run(&presets::HBM3_6400, &seq);
            let got: Vec<_> = c.violations().iter().map(|v| (v.rule, v.earliest, v.detail.as_str())).collect();
            assert_eq!(got, vec![("bank state", None, detail)], "{name}");
        }
    }

    #[test]
    fn a_hand_written_legal_sequence_passes_on_every_preset() {
        for p in presets::ALL.iter() {
            let t = p.timing.clone();
            let n = |v: u32| v as u64;
            let (b1, b2) = (bank(1, 0), bank(1, 1)); // bank groups 0 and 1: every preset has them
            let mut seq = vec![at(0, Act, B0), at(n(t.rrd_s), Act, b1)];
            let rd = n(t.rcd_rd) + n(t.rrd_s);
            seq.extend([at(rd, Rd, B0), at(rd + n(t.ccd_s.max(t.bl)), Rd, b1)]);
            let pre = n(t.ras).max(rd + n(t.rtp));
            seq.push(at(pre, Pre, B0));
            let act = (pre + n(t.rp)).max(n(t.rc));
            seq.push(at(act, Act, B0));
            let wr = (act + n(t.rcd_wr)).max(rd + 2 + n(t.rtw));
            seq.push(at(wr, Wr, B0));
            let rd2 = wr + n(t.cwl + t.bl + t.wtr_l);
            seq.push(at(rd2, Rd, B0));
            let prea = (act + n(t.ras)).max(rd2 + n(t.rtp)).max(wr + n(t.cwl + t.bl + t.wr));
            seq.push(at(prea, PreAll, B0));
            let refab = (prea + n(t.rp)).max(act + n(t.rc));
            seq.push(at(refab, Ref, B0));
            let act2 = refab + n(t.rfc);
            seq.extend([at(act2, Act, b2), at(act2 + n(t.rcd_rd), RdA, b2)]);
            let refpb = (act2 + n(t.rc)).max(act2 + n(t.rcd_rd + t.rtp + t.rp));
            seq.push(at(refpb, RefPb, b2));
            seq.push(at(refpb + n(t.rfc_pb), Act, b2));
            let mut c = run(p, &seq);
            c.finish(refpb + n(t.rfc_pb) + 1000);
            assert_eq!(summary(&c), Vec::<String>::new(), "{}", p.name);
            assert_eq!(c.commands_checked(), seq.len() as u64);
        }
    }

    /// A one-channel, one-pseudo-channel HBM3 stack, so refresh checks report one PC.
    fn one_pc() -> Checker {
        let org = Organization { channels: 1, pseudo_channels: 1, ..presets::HBM3_6400.org.clone() };
        Checker::new(&org, &presets::HBM3_6400.timing)
    }

    #[test]
    fn all_bank_refresh_deadline_is_nine_intervals() {
        let w = 9 * presets::HBM3_6400.timing.refi as u64;
        let cases: [(&[u64], &[u64], usize); 5] = [
            (&[], &[w], 0),
            (&[], &[w + 1], 1),
            (&[10], &[10 + w], 0),
            (&[10], &[10 + w + 1], 1),
            (&[], &[w + 1, w + 50, 2 * w], 1),
        ];
        for (refs, pres, late) in cases {
            let mut c = one_pc();
            refs.iter().for_each(|&cy| c.check(&at(cy, Ref, B0)));
            pres.iter().for_each(|&cy| c.check(&at(cy, Pre, B0)));
            let rules: Vec<_> = c.violations().iter().map(|v| (v.rule, v.earliest)).collect();
            assert_eq!(rules, vec![("tREFI", None); late], "REF at {refs:?}, PRE at {pres:?}");
        }
    }

    #[test]
    fn per_bank_refresh_must_reach_every_bank() {
        let t = presets::HBM3_6400.timing.clone();
        let banks = presets::HBM3_6400.org.banks_per_pc() as u64;
        for skip in [None, Some(5)] {
            let mut c = one_pc();
            for k in 0..3 * 9 * banks {
                let flat = (k % banks) as u32;
                if Some(flat) != skip {
                    let b = B { pc: 0, sid: flat / 16, bg: flat / 4 % 4, ba: flat % 4 };
                    c.check(&at(10 + k * t.refi_pb as u64, RefPb, b));
                }
            }
            c.finish(10 + 3 * 9 * banks * t.refi_pb as u64);
            let got: Vec<_> = c.violations().iter().map(|v| (v.rule, v.detail.clone())).collect();
            match skip {
                None => assert_eq!(got, vec![]),
                Some(_) => {
                    assert_eq!(got.len(), 1, "{got:?}");
                    assert_eq!(got[0].0, "tREFI");
                    assert!(got[0].1.starts_with("bank sid 0 bg 1 ba 1 not refreshed since cycle 0"), "{}", got[0].1);
                }
            }
        }
    }

    #[test]
    fn finish_reports_each_unrefreshed_pseudo_channel_once() {
        let p = &*presets::HBM3_6400;
        let mut c = Checker::new(&p.org, &p.timing);
        c.check(&at(5, Ref, B0));
        let end = 9 * p.timing.refi as u64 + 1;
        c.finish(end);
        c.finish(end + 1);
        assert_eq!(c.violation_count(), 31, "every PC of stack 0 but the refreshed one");
        let v = &c.violations()[0];
        assert_eq!((v.rule, v.index, v.record.pc, v.record.cmd), ("tREFI", 1, 1, Ref));
        // A checker fed by one stack only judges that stack.
        let mut c = Checker::new(&p.org, &p.timing);
        c.check(&CommandRecord { stack: 2, ..at(5, Ref, B0) });
        c.finish(end);
        assert_eq!(c.violation_count(), 31);
        assert!(c.violations().iter().all(|v| v.record.stack == 2));
        let mut c = Checker::with_stacks(&p.org, &p.timing, 2);
        c.finish(end);
        assert_eq!(c.violation_count(), 64, "with_stacks judges idle stacks too");
    }

    #[test]
    fn decreasing_cycles_on_a_channel_are_an_order_violation() {
        let other_channel = CommandRecord { channel: 1, ..at(5, Act, B0) };
        let c = run(&presets::HBM3_6400, &[at(10, Act, B0), other_channel, at(9, Pre, bank(1, 0))]);
        let got: Vec<_> = c.violations().iter().map(|v| (v.index, v.rule)).collect();
        assert_eq!(got, vec![(2, "order")]);
    }

    #[test]
    fn out_of_range_indices_are_address_violations() {
        let p = &*presets::HBM3_6400;
        let o = p.org.clone();
        let cases = [
            (CommandRecord { stack: 1, ..at(0, Act, B0) }, Some("stack 1 out of range (0..1)")),
            (CommandRecord { channel: o.channels, ..at(0, Act, B0) }, Some("channel 16 out of range (0..16)")),
            (at(0, Act, B { pc: 2, ..B0 }), Some("pc 2 out of range (0..2)")),
            (at(0, Act, B { sid: 2, ..B0 }), Some("sid 2 out of range (0..2)")),
            (at(0, Act, bank(4, 0)), Some("bank_group 4 out of range (0..4)")),
            (at(0, RefPb, bank(0, 4)), Some("bank 4 out of range (0..4)")),
            (CommandRecord { row: o.rows, ..at(0, Act, B0) }, Some("row 16384 out of range (0..16384)")),
            (CommandRecord { column: 32, ..at(0, Rd, B0) }, Some("column 32 out of range (0..32)")),
            (at(0, PreAll, bank(9, 9)), None),
            (CommandRecord { row: u32::MAX, ..at(0, Ref, B0) }, None),
        ];
        for (rec, want) in cases {
            let mut c = Checker::with_stacks(&o, &p.timing, 1);
            c.check(&rec);
            let got: Vec<_> = c.violations().iter().map(|v| (v.rule, v.detail.as_str())).collect();
            assert_eq!(got, want.into_iter().map(|d| ("address", d)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn new_grows_stacks_and_extreme_cycles_do_not_panic() {
        let p = &*presets::HBM2_2000;
        let far = CommandRecord { stack: 3, ..at(u64::MAX, Act, B0) };
        let c = run(p, &[at(u64::MAX - 1, Act, B0), at(u64::MAX, Rd, B0), far, at(u64::MAX, Ref, B0)]);
        assert_eq!(c.commands_checked(), 4);
        assert!(c.violations().iter().all(|v| v.rule != "address"), "{:?}", summary(&c));
    }

    #[test]
    fn display_is_one_line_naming_the_rule_and_the_earlier_command() {
        let seq = [at(101, Act, bank(2, 1)), at(131, Rd, bank(2, 1))];
        let seq = seq.map(|r| CommandRecord { channel: 3, pc: 1, ..r });
        let c = run(&presets::HBM3_6400, &seq);
        let want =
            "cycle 131 ch 3 pc 1 sid 0 bg 2 ba 1: RD violates tRCDRD (earliest 132; ACT to same bank at cycle 101)";
        assert_eq!(summary(&c), vec![want]);
        let seq = [at(10, Ref, B0), at(20, Ref, bank(3, 3))].map(|r| CommandRecord { stack: 2, ..r });
        let c = run(&presets::HBM3_6400, &seq);
        assert_eq!(summary(&c), vec!["cycle 20 st 2 ch 0 pc 0: REF violates tRFC (earliest 570; REF at cycle 10)"]);
    }

    #[test]
    fn stored_violations_are_capped_but_all_counted() {
        let seq: Vec<_> = (0..MAX_STORED as u64 + 5).map(|k| at(5 * k, Rd, B0)).collect();
        let c = run(&presets::HBM3_6400, &seq);
        assert_eq!((c.violations().len(), c.violation_count()), (MAX_STORED, MAX_STORED as u64 + 5));
    }

    /// A legal stream: each of 16 banks in turn runs ACT, RD, PRE; refresh is disabled.
    fn stream(commands: u64) -> impl Iterator<Item = CommandRecord> {
        (0..commands / 3).flat_map(|k| {
            let b = bank((k % 16 / 4) as u32, (k % 4) as u32);
            let base = 20 * k;
            [at(base, Act, b), at(base + 31, Rd, b), at(base + 45, Pre, b)]
        })
    }

    #[test]
    fn replays_a_long_legal_stream_cleanly() {
        let t = TimingParams { refi: 0, ..presets::HBM3_6400.timing.clone() };
        let mut c = Checker::new(&presets::HBM3_6400.org, &t);
        let mut sorted: Vec<_> = stream(30_000).collect();
        sorted.sort_by_key(|r| r.cycle);
        sorted.iter().for_each(|r| c.command(r));
        assert_eq!(summary(&c), Vec::<String>::new());
    }

    /// Run with `cargo test --release -p trnsim-mem -- --ignored ten_million`.
    #[test]
    #[ignore]
    fn ten_million_commands_replay_quickly() {
        let t = TimingParams { refi: 0, ..presets::HBM3_6400.timing.clone() };
        let mut c = Checker::new(&presets::HBM3_6400.org, &t);
        let mut window = Vec::with_capacity(8);
        let start = std::time::Instant::now();
        for r in stream(10_000_000) {
            window.push(r);
            if window.len() == 6 {
                window.sort_by_key(|r| r.cycle);
                window.drain(..3).for_each(|r| c.check(&r));
            }
        }
        eprintln!("{} commands in {:?}, {} violations", c.commands_checked(), start.elapsed(), c.violation_count());
        assert!(start.elapsed().as_secs() < 60);
    }
}
