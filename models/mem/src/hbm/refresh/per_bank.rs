//! Per-bank refresh: one REFPB per tREFIpb, banks in round-robin order.

use super::{RefreshDue, RefreshPolicy};
use crate::hbm::command::Command;

/// REFPB every `refi_pb` cycles to banks 0, 1, ... in turn, so each bank is refreshed once per
/// `refi_pb * banks` cycles (about tREFI).
#[derive(Clone, Debug)]
pub struct PerBank {
    next: u64,
    refi_pb: u64,
    bank: u32,
    banks: u32,
    hold: bool,
}

impl PerBank {
    /// A policy with interval `refi_pb` over `banks` banks, offset by `phase` (< refi_pb).
    pub fn new(refi_pb: u32, banks: u32, phase: u64) -> PerBank {
        PerBank { next: refi_pb as u64 + phase % refi_pb as u64, refi_pb: refi_pb as u64, bank: 0, banks, hold: false }
    }

    /// The same schedule, holding up the whole pseudo-channel while a REFPB is due (see
    /// [`RefreshPolicy::holds_pseudo_channel`]).
    pub fn holding(self) -> PerBank {
        PerBank { hold: true, ..self }
    }
}

impl RefreshPolicy for PerBank {
    fn name(&self) -> &'static str {
        if self.hold {
            "per-bank-hold"
        } else {
            "per-bank"
        }
    }
    fn due(&self, now: u64, _busy: bool) -> Option<RefreshDue> {
        (now >= self.next).then_some(RefreshDue { cmd: Command::RefPb, bank: Some(self.bank) })
    }
    fn next_due(&self, _busy: bool) -> u64 {
        self.next
    }
    fn issued(&mut self, _now: u64) {
        self.next += self.refi_pb;
        self.bank = (self.bank + 1) % self.banks;
    }
    fn period(&self) -> u64 {
        self.refi_pb * u64::from(self.banks)
    }
    fn position(&self) -> (u64, u32) {
        (self.next, self.bank)
    }
    fn shift(&mut self, d: u64) {
        self.next = self.next.saturating_add(d);
    }
    fn holds_pseudo_channel(&self) -> bool {
        self.hold
    }
}
