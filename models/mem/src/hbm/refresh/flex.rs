//! All-bank refresh that postpones REFs while requests wait and pulls them in while the
//! pseudo-channel is idle, within JEDEC's bounds.
//!
//! JESD235 (HBM2) and JESD238 (HBM3), like the DDR4 standard JESD79-4 they follow here, let a
//! controller postpone up to 8 all-bank REF commands and pull in up to 8 ahead of their
//! schedule, as long as the interval between two surrounding REFs stays within 9 x tREFI.
//! This policy keeps a schedule of one REF per tREFI and:
//! - while requests are queued, holds a REF back until 8 are owed (then one is due) or until
//!   8 x tREFI have passed since the last REF (one tREFI of margin for closing the banks, so
//!   the 9 x tREFI bound holds whatever was pulled in before);
//! - while no request is queued, lets REFs go until 8 have been issued ahead of the schedule.

use super::{RefreshDue, RefreshPolicy};
use crate::hbm::command::Command;

/// REFs the schedule may be ahead or behind by.
pub const MAX_FLEX: u64 = 8;

/// The flexible all-bank policy of one pseudo-channel.
#[derive(Clone, Debug)]
pub struct AllBankFlex {
    /// The first scheduled REF; REF k is scheduled at `first + k x refi`.
    first: u64,
    refi: u64,
    /// REFs issued.
    issued: u64,
    /// Cycle of the last REF issued (0 before the first: the bound counts from cycle 0).
    last: u64,
}

impl AllBankFlex {
    /// A policy with interval `refi` cycles, offset by `phase` (< refi).
    pub fn new(refi: u32, phase: u64) -> AllBankFlex {
        let refi = u64::from(refi);
        AllBankFlex { first: refi + phase % refi, refi, issued: 0, last: 0 }
    }

    /// The cycle REF `k` is scheduled at.
    fn slot(&self, k: u64) -> u64 {
        self.first.saturating_add(k.saturating_mul(self.refi))
    }

    /// From this cycle on a REF is due even with requests waiting: 8 owed, or 8 x tREFI since
    /// the last one.
    fn forced_at(&self) -> u64 {
        let owed8 = self.slot(self.issued + MAX_FLEX - 1);
        owed8.min(self.last.saturating_add(MAX_FLEX * self.refi))
    }

    /// From this cycle on a REF may go while idle: fewer than 8 issued ahead of the schedule.
    fn pull_at(&self) -> u64 {
        match self.issued.checked_sub(MAX_FLEX) {
            Some(k) => self.slot(k),
            None => 0,
        }
    }
}

impl RefreshPolicy for AllBankFlex {
    fn name(&self) -> &'static str {
        "all-bank-flex"
    }
    fn due(&self, now: u64, busy: bool) -> Option<RefreshDue> {
        let at = if busy { self.forced_at() } else { self.pull_at() };
        (now >= at).then_some(RefreshDue { cmd: Command::Ref, bank: None })
    }
    fn next_due(&self, busy: bool) -> u64 {
        if busy {
            self.forced_at()
        } else {
            self.pull_at()
        }
    }
    fn issued(&mut self, now: u64) {
        self.issued += 1;
        self.last = now;
    }
    fn depends_on_load(&self) -> bool {
        true
    }
    fn period(&self) -> u64 {
        self.refi
    }
    fn position(&self) -> (u64, u32) {
        (self.pull_at(), 0)
    }
    fn view(&self, now: u64) -> [u64; 2] {
        [self.forced_at().saturating_sub(now), now.saturating_sub(self.last)]
    }
    fn shift(&mut self, d: u64) {
        self.first = self.first.saturating_add(d);
        self.last = self.last.saturating_add(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postpones_eight_then_refreshes_and_pulls_in_eight_when_idle() {
        let mut p = AllBankFlex::new(100, 0);
        // Busy: nothing due until 8 are owed (REFs 0..7 scheduled at 100..800).
        assert_eq!(p.next_due(true), 800);
        assert!(p.due(799, true).is_none() && p.due(800, true).is_some());
        // Issued at 800: 7 owed, and 8 x tREFI from 800 is 1600 (the 8-owed bound is 900).
        p.issued(800);
        assert_eq!(p.next_due(true), 900);
        // Idle: everything owed, then 8 ahead of the schedule, may go at once.
        assert_eq!(p.next_due(false), 0);
        for k in 0..15 {
            assert!(p.due(800, false).is_some(), "REF {k}");
            p.issued(800);
        }
        // 16 issued at 800; the schedule has had 8 due: 8 ahead, so the next waits for slot 8.
        assert!(p.due(800, false).is_none());
        assert_eq!(p.next_due(false), 900);
        // Busy after pulling in: the 9 x tREFI bound decides (800 + 8 x 100), not the debt.
        assert_eq!(p.next_due(true), 1600);
    }
}
