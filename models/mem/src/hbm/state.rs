//! Per-pseudo-channel timing state: when each command may next issue at each bank, derived from
//! the constraint table alone.

use crate::hbm::command::Command;
use crate::hbm::org::Organization;
use crate::hbm::timing::{Constraint, Scope};

const N: usize = Command::COUNT;
const SCOPES: usize = 4;

fn scope_index(s: Scope) -> usize {
    match s {
        Scope::Bank => 0,
        Scope::Group => 1,
        Scope::OtherSid => 2,
        Scope::Pc => 3,
    }
}

/// The table compiled for fast lookup: for each preceding command and scope, the minimum
/// distance to each following command (0 = no rule). Shared by all pseudo-channels.
#[derive(Clone, Debug)]
pub struct CompiledTable {
    delta: [[[u32; N]; SCOPES]; N],
    /// Does `delta[prev][scope]` have any non-zero entry?
    any: [[bool; SCOPES]; N],
    faw: u32,
}

impl CompiledTable {
    /// Compiles `rows` (see [`crate::hbm::timing::constraints`]).
    pub fn new(rows: &[Constraint]) -> CompiledTable {
        let mut delta = [[[0u32; N]; SCOPES]; N];
        let mut any = [[false; SCOPES]; N];
        let mut faw = 0;
        for r in rows {
            if r.window > 1 {
                faw = faw.max(r.cycles);
                continue;
            }
            for p in r.preceding.iter() {
                for f in r.following.iter() {
                    let d = &mut delta[p as usize][scope_index(r.scope)][f as usize];
                    *d = (*d).max(r.cycles);
                    any[p as usize][scope_index(r.scope)] = true;
                }
            }
        }
        CompiledTable { delta, any, faw }
    }
}

/// The earliest-issue cycles of one pseudo-channel's banks, groups, SIDs and the whole
/// pseudo-channel, plus its last four activates (tFAW). All cycles are CK cycles.
///
/// Invariant: `earliest(cmd, ..)` is the maximum over every table row that a past command
/// triggers for this bank; nothing else delays a command here (buses and bank state are the
/// controller's business).
#[derive(Clone, Debug)]
pub struct TimingState {
    bank: Vec<[u64; N]>,
    group: Vec<[u64; N]>,
    sid: Vec<[u64; N]>,
    pc: [u64; N],
    acts: [u64; 4],
    act_count: u64,
    banks_per_group: u32,
    groups_per_sid: u32,
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
        TimingState {
            bank: vec![[0; N]; org.banks_per_pc() as usize],
            group: vec![[0; N]; org.groups_per_pc() as usize],
            sid: vec![[0; N]; org.sids as usize],
            pc: [0; N],
            acts: [0; 4],
            act_count: 0,
            banks_per_group: org.banks_per_group,
            groups_per_sid: org.bank_groups,
        }
    }

    /// The bank reference of flat bank `bank`.
    pub fn bank_ref(&self, bank: u32) -> BankRef {
        let group = bank / self.banks_per_group;
        BankRef { bank: bank as u16, group: group as u16, sid: (group / self.groups_per_sid) as u16 }
    }

    /// The earliest cycle `cmd` may issue to bank `b` (for PREA/REF, `b` is ignored except for
    /// its SID, which PC-wide rows do not use).
    #[inline]
    pub fn earliest(&self, t: &CompiledTable, cmd: Command, b: BankRef) -> u64 {
        let c = cmd as usize;
        let mut e = self.pc[c];
        if !matches!(cmd, Command::PreAll | Command::Ref) {
            e = e
                .max(self.bank[b.bank as usize][c])
                .max(self.group[b.group as usize][c])
                .max(self.sid[b.sid as usize][c]);
        }
        if cmd == Command::Act && self.act_count >= 4 && t.faw > 0 {
            e = e.max(self.acts[(self.act_count % 4) as usize] + t.faw as u64);
        }
        e
    }

    /// Records that `cmd` issued to bank `b` at cycle `now`.
    pub fn issue(&mut self, t: &CompiledTable, cmd: Command, b: BankRef, now: u64) {
        let p = cmd as usize;
        let bump = |ready: &mut [u64; N], d: &[u32; N]| {
            for (r, &d) in ready.iter_mut().zip(d) {
                if d > 0 {
                    *r = (*r).max(now + d as u64);
                }
            }
        };
        if t.any[p][0] {
            bump(&mut self.bank[b.bank as usize], &t.delta[p][0]);
        }
        if t.any[p][1] {
            bump(&mut self.group[b.group as usize], &t.delta[p][1]);
        }
        if t.any[p][2] {
            for (s, ready) in self.sid.iter_mut().enumerate() {
                if s != b.sid as usize {
                    bump(ready, &t.delta[p][2]);
                }
            }
        }
        if t.any[p][3] {
            bump(&mut self.pc, &t.delta[p][3]);
        }
        if cmd == Command::Act {
            self.acts[(self.act_count % 4) as usize] = now;
            self.act_count += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbm::{presets, timing};

    #[test]
    fn read_waits_rcd_after_activate_and_faw_limits_the_fifth_act() {
        let p = presets::HBM3_6400;
        let (org, tp) = ((p.org)(), (p.timing)());
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
