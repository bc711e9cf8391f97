//! Refresh policies: when a pseudo-channel must refresh, and which banks that blocks.
//!
//! **Contract.** A policy only says what is due; the controller closes the affected banks
//! (PRE/PREA) and issues the refresh command when timing allows, then calls `issued`. Refresh
//! is never postponed beyond its due cycle by requests: once due, no new ACT goes to a blocked
//! bank. A policy may make what is due depend on whether requests are queued (`busy`):
//! `all-bank-flex` postpones up to 8 REFs while busy and pulls up to 8 in while idle, as
//! JEDEC allows.
//!
//! A policy may also hold up more than its own bank while a refresh is due
//! ([`RefreshPolicy::holds_pseudo_channel`]): `per-bank-hold` reproduces Ramulator 2.1's HBM
//! controller, which takes no new request from its read and write buffers while a refresh
//! waits in its priority buffer (see docs/validation.md, "Against DRAMsim3 and Ramulator 2").

mod all_bank;
mod flex;
mod per_bank;

pub use all_bank::AllBank;
pub use flex::{AllBankFlex, MAX_FLEX};
pub use per_bank::PerBank;

use crate::hbm::command::Command;
use serde::{Deserialize, Serialize};

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
    /// The refresh due at or before `now`, if any, given whether requests are queued (`busy`;
    /// only a policy that [`RefreshPolicy::depends_on_load`] looks at it). Contract: it is
    /// `Some` exactly when `now >= next_due(busy)` (the controller keeps `next_due` and asks
    /// `due` only from then on), and only [`RefreshPolicy::issued`] and
    /// [`RefreshPolicy::shift`] change either.
    fn due(&self, now: u64, busy: bool) -> Option<RefreshDue>;
    /// The cycle the next refresh falls due while `busy` stays as it is (u64::MAX if never).
    fn next_due(&self, busy: bool) -> u64;
    /// The due refresh was issued at `now`.
    fn issued(&mut self, now: u64);
    /// True if what is due depends on `busy`: the controller then plans again whenever its
    /// queues become empty or stop being empty.
    fn depends_on_load(&self) -> bool {
        false
    }
    /// State beyond [`RefreshPolicy::position`] that decides the future, relative to `now`
    /// (for comparing two points of an idle schedule).
    fn view(&self, _now: u64) -> [u64; 2] {
        [0, 0]
    }
    /// Cycles after which the schedule repeats itself (same command, same bank), or 0 if it
    /// does not: an idle pseudo-channel's refresh pattern repeats with this period, which lets
    /// an idle gap be skipped in O(1) (see `HbmStack`).
    fn period(&self) -> u64 {
        0
    }
    /// (next due cycle, next bank) for comparing two points of the schedule.
    fn position(&self) -> (u64, u32) {
        (self.next_due(false), 0)
    }
    /// Moves the schedule `d` cycles later (`d` a multiple of [`RefreshPolicy::period`]).
    fn shift(&mut self, _d: u64) {}
    /// True if, while a refresh of any pseudo-channel of the channel is due, the controllers
    /// start no row command (ACT, PRE) for a request and let only the first access of a row
    /// already opened go on (other row hits wait too), and the channel issues its due
    /// refreshes in pseudo-channel order; false if only the refreshed bank waits.
    fn holds_pseudo_channel(&self) -> bool {
        false
    }
}

/// Every refresh policy by name: the registry.
pub const POLICIES: &[(&str, &str)] = &[
    ("per-bank", "REFPB to one bank every tREFIpb, round robin; other banks keep working"),
    (
        "per-bank-hold",
        "REFPB as per-bank, due in every pseudo-channel of a channel at once; while one is due the channel starts no request's ACT or PRE, serves only rows just opened, and issues the REFPBs in pseudo-channel order (Ramulator 2.1's HBM controller)",
    ),
    ("all-bank", "REF to the whole pseudo-channel every tREFI, after closing every bank"),
    (
        "all-bank-flex",
        "all-bank, but while requests wait a REF is postponed until 8 are owed or 8 x tREFI have passed since the last, and while none wait up to 8 are pulled in (JESD235/JESD238)",
    ),
    ("none", "no refresh (for isolating timing effects; not JEDEC-legal beyond 9 x tREFI)"),
];

/// How a stack's pseudo-channels' refresh schedules line up with each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefreshSchedule {
    /// Every pseudo-channel at a different offset, spread evenly over the refresh interval
    /// (under `per-bank-hold`, every channel), so the stack never refreshes all at once.
    #[default]
    Staggered,
    /// Every pseudo-channel of every channel in the same cycle, the first one interval after
    /// cycle 0: what Ramulator 2.1 (its `AllBank` without `scatter_interval`, its
    /// `HBM34PerBankRefresh`) and DRAMsim3 (each channel's refresh counter from cycle 0) do.
    Simultaneous,
}

/// Every refresh schedule by name.
pub const SCHEDULES: &[(&str, &str)] = &[
    ("staggered", "pseudo-channels' refreshes spread evenly over the refresh interval"),
    ("simultaneous", "every pseudo-channel refreshes in the same cycle (Ramulator 2 and DRAMsim3)"),
];

impl RefreshSchedule {
    /// The schedule named `name` (see [`SCHEDULES`]).
    pub fn parse(name: &str) -> Option<RefreshSchedule> {
        match name {
            "staggered" => Some(RefreshSchedule::Staggered),
            "simultaneous" => Some(RefreshSchedule::Simultaneous),
            _ => None,
        }
    }
}

/// Builds the policy `name` for a pseudo-channel with `banks` banks; `phase` staggers
/// pseudo-channels so they do not all refresh in the same cycle (see [`phase`]).
pub fn by_name(name: &str, refi: u32, refi_pb: u32, banks: u32, phase: u64) -> Option<Option<Box<dyn RefreshPolicy>>> {
    match name {
        "per-bank" => Some(Some(Box::new(PerBank::new(refi_pb, banks, phase)))),
        "per-bank-hold" => Some(Some(Box::new(PerBank::new(refi_pb, banks, phase).holding()))),
        "all-bank" => Some(Some(Box::new(AllBank::new(refi, phase)))),
        "all-bank-flex" => Some(Some(Box::new(AllBankFlex::new(refi, phase)))),
        "none" => Some(None),
        _ => None,
    }
}

/// The interval policy `name`'s schedule repeats with: tREFI for the all-bank policies,
/// tREFIpb for the per-bank ones.
pub fn interval(name: &str, refi: u32, refi_pb: u32) -> u32 {
    if name.starts_with("all-bank") {
        refi
    } else {
        refi_pb
    }
}

/// The offset of pseudo-channel `pc` of channel `channel`'s refresh schedule under policy
/// `name`, for a stack of `channels` x `pcs_per_channel` pseudo-channels whose policy repeats
/// every `interval` cycles (tREFI for all-bank refresh, tREFIpb for per-bank): every
/// pseudo-channel a different offset, spread evenly over the interval, except under
/// `per-bank-hold`, whose pseudo-channels of a channel share the channel's offset (Ramulator
/// 2.1 queues a channel's REFpbs together). Under [`RefreshSchedule::Simultaneous`] every
/// offset is 0 (Ramulator 2.1 and DRAMsim3 stagger neither channels nor pseudo-channels).
pub fn phase(
    name: &str,
    schedule: RefreshSchedule,
    channel: u32,
    pc: u32,
    channels: u32,
    pcs_per_channel: u32,
    interval: u32,
) -> u64 {
    let interval = u64::from(interval);
    if schedule == RefreshSchedule::Simultaneous {
        return 0;
    }
    if name == "per-bank-hold" {
        return u64::from(channel) * interval / u64::from(channels.max(1));
    }
    let k = u64::from(channel) * u64::from(pcs_per_channel) + u64::from(pc);
    k * interval / (u64::from(channels) * u64::from(pcs_per_channel)).max(1)
}
