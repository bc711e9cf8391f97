//! All-bank refresh: one REF per tREFI.

use super::{RefreshDue, RefreshPolicy};
use crate::hbm::command::Command;

/// REF every `refi` cycles, the first at `refi + phase`.
#[derive(Clone, Debug)]
pub struct AllBank {
    next: u64,
    refi: u64,
}

impl AllBank {
    /// A policy with interval `refi` cycles, offset by `phase` (< refi).
    pub fn new(refi: u32, phase: u64) -> AllBank {
        AllBank { next: refi as u64 + phase % refi as u64, refi: refi as u64 }
    }
}

impl RefreshPolicy for AllBank {
    fn name(&self) -> &'static str {
        "all-bank"
    }
    fn due(&self, now: u64, _busy: bool) -> Option<RefreshDue> {
        (now >= self.next).then_some(RefreshDue { cmd: Command::Ref, bank: None })
    }
    fn next_due(&self, _busy: bool) -> u64 {
        self.next
    }
    fn issued(&mut self, _now: u64) {
        self.next += self.refi;
    }
    fn period(&self) -> u64 {
        self.refi
    }
    fn shift(&mut self, d: u64) {
        self.next = self.next.saturating_add(d);
    }
}
