//! Refresh policies: when a pseudo-channel must refresh, and which banks that blocks.
//!
//! **Contract.** A policy only says what is due; the controller closes the affected banks
//! (PRE/PREA) and issues the refresh command when timing allows, then calls `issued`. Refresh
//! is never postponed beyond its due cycle by requests: once due, no new ACT goes to a blocked
//! bank. Leaves out: JEDEC's postponing of up to 8 refreshes and pulling refreshes in when idle.

mod all_bank;
mod per_bank;

pub use all_bank::AllBank;
pub use per_bank::PerBank;

use crate::hbm::command::Command;

/// Refresh work that is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefreshDue {
    /// REF (all banks) or REFPB.
    pub cmd: Command,
    /// The bank for REFPB (flat index in the pseudo-channel); None for REF.
    pub bank: Option<u32>,
}

/// A refresh policy for one pseudo-channel.
pub trait RefreshPolicy: Send {
    /// Name used in configs.
    fn name(&self) -> &'static str;
    /// The refresh due at or before `now`, if any.
    fn due(&self, now: u64) -> Option<RefreshDue>;
    /// The cycle the next refresh falls due (u64::MAX if never).
    fn next_due(&self) -> u64;
    /// The due refresh was issued.
    fn issued(&mut self);
    /// Cycles after which the schedule repeats itself (same command, same bank), or 0 if it
    /// does not: an idle pseudo-channel's refresh pattern repeats with this period, which lets
    /// an idle gap be skipped in O(1) (see `HbmStack`).
    fn period(&self) -> u64 {
        0
    }
    /// (next due cycle, next bank) for comparing two points of the schedule.
    fn position(&self) -> (u64, u32) {
        (self.next_due(), 0)
    }
    /// Moves the schedule `d` cycles later (`d` a multiple of [`RefreshPolicy::period`]).
    fn shift(&mut self, _d: u64) {}
}

/// Every refresh policy by name: the registry.
pub const POLICIES: &[(&str, &str)] = &[
    ("per-bank", "REFPB to one bank every tREFIpb, round robin; other banks keep working"),
    ("all-bank", "REF to the whole pseudo-channel every tREFI, after closing every bank"),
    ("none", "no refresh (for isolating timing effects; not JEDEC-legal beyond 9 x tREFI)"),
];

/// Builds the policy `name` for a pseudo-channel with `banks` banks; `phase` staggers
/// pseudo-channels so they do not all refresh in the same cycle.
pub fn by_name(name: &str, refi: u32, refi_pb: u32, banks: u32, phase: u64) -> Option<Option<Box<dyn RefreshPolicy>>> {
    match name {
        "per-bank" => Some(Some(Box::new(PerBank::new(refi_pb, banks, phase)))),
        "all-bank" => Some(Some(Box::new(AllBank::new(refi, phase)))),
        "none" => Some(None),
        _ => None,
    }
}
