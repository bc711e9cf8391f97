//! Per-pseudo-channel timing state: when each command may next issue at each bank, derived from
//! the constraint table alone.

use crate::hbm::command::Command;
use crate::hbm::org::Organization;
use crate::hbm::timing::{Constraint, Scope};

const N: usize = Command::COUNT;
const SCOPES: usize = 4;
/// Following-command classes: RD and RDA (and WR and WRA) are always constrained alike, so
/// ready times are kept per class, 8 slots of u32 (one 32-byte row per bank).
const CLASSES: usize = 8;

fn class(c: Command) -> usize {
    match c {
        Command::Act => 0,
        Command::Pre => 1,
        Command::PreAll => 2,
        Command::Rd | Command::RdA => 3,
        Command::Wr | Command::WrA => 4,
        Command::Ref => 5,
        Command::RefPb => 6,
    }
}

fn scope_index(s: Scope) -> usize {
    match s {
        Scope::Bank => 0,
        Scope::Group => 1,
        Scope::OtherSid => 2,
        Scope::Pc => 3,
    }
}

/// The table compiled for fast lookup: for each preceding command and scope, the minimum
/// distance to each following-command class (0 = no rule). Shared by all pseudo-channels.
#[derive(Clone, Debug)]
pub struct CompiledTable {
    delta: [[[u32; CLASSES]; SCOPES]; N],
    /// All ones where `delta` has a rule (non-zero), else zero.
    mask: [[[u32; CLASSES]; SCOPES]; N],
    /// Does `delta[prev][scope]` have any non-zero entry?
    any: [[bool; SCOPES]; N],
    faw: u32,
}

impl CompiledTable {
    /// Compiles `rows` (see [`crate::hbm::timing::constraints`]).
    ///
    /// Panics if a row constrains RD differently from RDA (or WR from WRA) as the following
    /// command: the compact state keeps one ready time for each pair.
    pub fn new(rows: &[Constraint]) -> CompiledTable {
        let mut delta = [[[0u32; CLASSES]; SCOPES]; N];
        let mut any = [[false; SCOPES]; N];
        let mut faw = 0;
        for r in rows {
            if r.window > 1 {
                faw = faw.max(r.cycles);
                continue;
            }
            for (a, b) in [(Command::Rd, Command::RdA), (Command::Wr, Command::WrA)] {
                assert_eq!(r.following.contains(a), r.following.contains(b), "{}: {a:?} and {b:?} differ", r.name);
            }
            for p in r.preceding.iter() {
                for f in r.following.iter() {
                    let d = &mut delta[p as usize][scope_index(r.scope)][class(f)];
                    *d = (*d).max(r.cycles);
                    any[p as usize][scope_index(r.scope)] = true;
                }
            }
        }
        let mask = delta.map(|scopes| scopes.map(|classes| classes.map(|d| if d > 0 { u32::MAX } else { 0 })));
        CompiledTable { delta, mask, any, faw }
    }
}

type Ready = [u32; CLASSES];

/// Ready times are stored as u32 offsets from `base`; when a time would not fit, every entry
/// is shifted down (times already in the past clamp to 0, which changes nothing).
const REBASE_AT: u64 = 1 << 31;

/// The earliest-issue cycles of one pseudo-channel's banks, groups, SIDs and the whole
/// pseudo-channel, plus its last four activates (tFAW). All cycles are CK cycles.
///
/// Invariant: `earliest(cmd, ..)` is the maximum over every table row that a past command
/// triggers for this bank; nothing else delays a command here (buses and bank state are the
/// controller's business).
#[derive(Clone, Debug)]
pub struct TimingState {
    base: u64,
    bank: Vec<Ready>,
    group: Vec<Ready>,
    sid: Vec<Ready>,
    pc: Ready,
    acts: [u64; 4],
    act_count: u64,
    /// Every flat bank's reference (precomputed: looked up per candidate).
    refs: Vec<BankRef>,
    /// Per flat group, and per SID: its banks as a bit set.
    group_banks: Vec<u64>,
    sid_banks: Vec<u64>,
    /// Banks whose bank, group or SID rows changed since [`TimingState::clean`] last named
    /// them (callers that cache [`TimingState::bank_part`] recompute these).
    dirty: u64,
}

/// The bank a command addresses, as flat indices within the pseudo-channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BankRef {
    /// Flat bank index (SID-major).
    pub bank: u16,
    /// Flat bank-group index (SID-major).
    pub group: u16,
    /// Stack ID.
    pub sid: u16,
}

impl TimingState {
    /// All-zero state (every command legal at cycle 0) for one pseudo-channel of `org`.
    pub fn new(org: &Organization) -> TimingState {
        let refs: Vec<BankRef> = (0..org.banks_per_pc())
            .map(|bank| {
                let group = bank / org.banks_per_group;
                BankRef { bank: bank as u16, group: group as u16, sid: (group / org.bank_groups) as u16 }
            })
            .collect();
        let mut group_banks = vec![0u64; org.groups_per_pc() as usize];
        let mut sid_banks = vec![0u64; org.sids as usize];
        for r in &refs {
            group_banks[r.group as usize] |= 1 << r.bank;
            sid_banks[r.sid as usize] |= 1 << r.bank;
        }
        TimingState {
            base: 0,
            bank: vec![[0; CLASSES]; org.banks_per_pc() as usize],
            group: vec![[0; CLASSES]; org.groups_per_pc() as usize],
            sid: vec![[0; CLASSES]; org.sids as usize],
            pc: [0; CLASSES],
            acts: [0; 4],
            act_count: 0,
            refs,
            group_banks,
            sid_banks,
            dirty: u64::MAX,
        }
    }

    /// The bank reference of flat bank `bank`.
    #[inline]
    pub fn bank_ref(&self, bank: u32) -> BankRef {
        self.refs[bank as usize]
    }

    /// The earliest cycle `cmd` may issue to bank `b` (for PREA/REF, `b` is ignored except for
    /// its SID, which PC-wide rows do not use).
    #[inline(always)]
    pub fn earliest(&self, t: &CompiledTable, cmd: Command, b: BankRef) -> u64 {
        let c = class(cmd);
        let mut e = self.pc[c];
        if !matches!(cmd, Command::PreAll | Command::Ref) {
            e = e
                .max(self.bank[b.bank as usize][c])
                .max(self.group[b.group as usize][c])
                .max(self.sid[b.sid as usize][c]);
        }
        let mut e = self.base + e as u64;
        if cmd == Command::Act && self.act_count >= 4 && t.faw > 0 {
            e = e.max(self.acts[(self.act_count % 4) as usize] + t.faw as u64);
        }
        e
    }

    /// The part of [`TimingState::earliest`] that is the same for every bank: the
    /// pseudo-channel row of `cmd`'s class and, for ACT, the activate window. For a bank
    /// command (not PREA/REF), `earliest(cmd, b) == max(pc_floor(cmd), bank_part(cmd, b))`.
    #[inline(always)]
    pub fn pc_floor(&self, t: &CompiledTable, cmd: Command) -> u64 {
        let mut e = self.base + u64::from(self.pc[class(cmd)]);
        if cmd == Command::Act && self.act_count >= 4 && t.faw > 0 {
            e = e.max(self.acts[(self.act_count % 4) as usize] + t.faw as u64);
        }
        e
    }

    /// The bank, group and SID part of [`TimingState::earliest`] for a bank command (not
    /// PREA/REF), as a cycle.
    #[inline(always)]
    pub fn bank_part(&self, cmd: Command, b: BankRef) -> u64 {
        let c = class(cmd);
        let e = self.bank[b.bank as usize][c].max(self.group[b.group as usize][c]).max(self.sid[b.sid as usize][c]);
        self.base + u64::from(e)
    }

    /// Banks whose [`TimingState::bank_part`] may have changed since `clean` last named them.
    #[inline]
    pub fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Marks `banks` as seen (their `bank_part` re-read by the caller).
    #[inline]
    pub fn clean(&mut self, banks: u64) {
        self.dirty &= !banks;
    }

    /// Records that `cmd` issued to bank `b` at cycle `now`.
    pub fn issue(&mut self, t: &CompiledTable, cmd: Command, b: BankRef, now: u64) {
        if now - self.base.min(now) >= REBASE_AT {
            self.rebase(now);
        }
        let rel = (now - self.base) as u32;
        let p = cmd as usize;
        // Branch-free (so it vectorizes): a class without a rule (distance 0, mask 0) adds a
        // bound of 0, which leaves its ready time as it was.
        let bump = |ready: &mut Ready, d: &Ready, m: &Ready| {
            for i in 0..CLASSES {
                ready[i] = ready[i].max(rel.wrapping_add(d[i]) & m[i]);
            }
        };
        if t.any[p][0] {
            bump(&mut self.bank[b.bank as usize], &t.delta[p][0], &t.mask[p][0]);
            self.dirty |= 1 << b.bank;
        }
        if t.any[p][1] {
            bump(&mut self.group[b.group as usize], &t.delta[p][1], &t.mask[p][1]);
            self.dirty |= self.group_banks[b.group as usize];
        }
        if t.any[p][2] {
            for (s, ready) in self.sid.iter_mut().enumerate() {
                if s != b.sid as usize {
                    bump(ready, &t.delta[p][2], &t.mask[p][2]);
                    self.dirty |= self.sid_banks[s];
                }
            }
        }
        if t.any[p][3] {
            bump(&mut self.pc, &t.delta[p][3], &t.mask[p][3]);
        }
        if cmd == Command::Act {
            self.acts[(self.act_count % 4) as usize] = now;
            self.act_count += 1;
        }
    }

    /// The state as seen from cycle `now`: every ready time as cycles after `now` (0 when
    /// already past), the activate window likewise, and the activate count modulo 4. Two
    /// states with equal views behave the same from their `now`s on.
    pub fn view(&self, t: &CompiledTable, now: u64) -> Vec<u64> {
        let all = self.bank.iter().chain(&self.group).chain(&self.sid).chain(std::iter::once(&self.pc));
        let mut v: Vec<u64> =
            all.flat_map(|r| r.iter().map(|&x| (self.base + u64::from(x)).saturating_sub(now))).collect();
        v.extend(self.acts.iter().map(|&a| (a + u64::from(t.faw)).saturating_sub(now)));
        v.push(self.act_count % 4);
        v
    }

    /// Moves every recorded time `d` cycles later.
    pub fn shift(&mut self, d: u64) {
        self.dirty = u64::MAX;
        self.base += d;
        self.acts.iter_mut().for_each(|a| *a += d);
    }

    fn rebase(&mut self, now: u64) {
        self.dirty = u64::MAX;
        let shift = (now - self.base) as u32;
        let all = self.bank.iter_mut().chain(self.group.iter_mut()).chain(self.sid.iter_mut());
        for r in all.chain(std::iter::once(&mut self.pc)) {
            for v in r.iter_mut() {
                *v = v.saturating_sub(shift);
            }
        }
        self.base = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbm::{presets, timing};

    #[test]
    fn read_waits_rcd_after_activate_and_faw_limits_the_fifth_act() {
        let p = &*presets::HBM3_6400;
        let (org, tp) = (p.org.clone(), p.timing.clone());
        let table = CompiledTable::new(&timing::constraints(&tp));
        let mut s = TimingState::new(&org);
        let b0 = s.bank_ref(0);
        s.issue(&table, Command::Act, b0, 10);
        assert_eq!(s.earliest(&table, Command::Rd, b0), 10 + tp.rcd_rd as u64);
        assert_eq!(s.earliest(&table, Command::Wr, b0), 10 + tp.rcd_wr as u64);
        assert_eq!(s.earliest(&table, Command::Pre, b0), 10 + tp.ras as u64);
        // Four ACTs to banks in different groups, each tRRDS apart; the fifth waits for tFAW.
        let mut t = 10;
        for g in 1..4u32 {
            t += tp.rrd_s as u64;
            s.issue(&table, Command::Act, s.bank_ref(g * org.banks_per_group), t);
        }
        let fifth = s.bank_ref(1);
        assert_eq!(s.earliest(&table, Command::Act, fifth), (10 + tp.faw as u64).max(t + tp.rrd_l as u64));
    }
}

#[cfg(test)]
mod rebase_tests {
    use super::*;
    use crate::hbm::{presets, timing};

    #[test]
    fn ready_times_survive_a_rebase_past_two_to_the_31_cycles() {
        let p = &*presets::HBM3_6400;
        let (org, tp) = (p.org.clone(), p.timing.clone());
        let table = CompiledTable::new(&timing::constraints(&tp));
        let mut s = TimingState::new(&org);
        let b = s.bank_ref(0);
        let far = 5u64 << 31;
        s.issue(&table, Command::Act, b, 10);
        s.issue(&table, Command::Act, s.bank_ref(5), far);
        assert_eq!(s.earliest(&table, Command::Rd, s.bank_ref(5)), far + tp.rcd_rd as u64);
        assert!(s.earliest(&table, Command::Rd, b) <= far, "old bounds stay in the past");
    }

    #[test]
    fn earliest_is_the_floor_and_the_cached_bank_part() {
        // Random command streams on a three-SID stack (so the other-SID rows matter): at every
        // point each bank command's earliest cycle is the larger of the pseudo-channel floor
        // and the bank part, and a bank part cached when its bank was last clean still holds
        // unless the bank was marked dirty since (what the controller's plan relies on).
        let p = &*presets::HBM3E_9600;
        let (org, tp) = (p.org.clone(), p.timing.clone());
        assert!(org.sids > 1, "the test needs SIDs to tell apart");
        let table = CompiledTable::new(&timing::constraints(&tp));
        let mut rng = trnsim_kernel::SimRng::new(3, 0);
        let cmds = [Command::Act, Command::Pre, Command::Rd, Command::RdA, Command::Wr, Command::WrA, Command::RefPb];
        let mut s = TimingState::new(&org);
        let banks = org.banks_per_pc();
        let mut cached: Vec<[u64; 7]> = vec![[0; 7]; banks as usize];
        let mut now = 0u64;
        for step in 0..20_000 {
            let b = s.bank_ref(rng.below(u64::from(banks)) as u32);
            let cmd = cmds[rng.below(cmds.len() as u64) as usize];
            now = now.max(s.earliest(&table, cmd, b)) + rng.below(3);
            s.issue(&table, cmd, b, now);
            let dirty = s.dirty();
            for bank in 0..banks {
                let r = s.bank_ref(bank);
                for (i, &c) in cmds.iter().enumerate() {
                    let parts = s.pc_floor(&table, c).max(s.bank_part(c, r));
                    assert_eq!(s.earliest(&table, c, r), parts, "step {step}, bank {bank}, {c:?}");
                    if dirty & (1 << bank) == 0 {
                        assert_eq!(cached[bank as usize][i], s.bank_part(c, r), "step {step}: bank {bank} not dirty");
                    }
                    cached[bank as usize][i] = s.bank_part(c, r);
                }
            }
            s.clean(dirty);
        }
    }
}
