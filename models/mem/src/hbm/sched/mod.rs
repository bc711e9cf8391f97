//! Request schedulers: which ready command a pseudo-channel controller issues.
//!
//! **Contract.** A scheduler sees only candidates whose command is legal *this cycle* (timing,
//! bank state and refresh have been checked by the controller) and ranks them; it may not look
//! at or change controller state. `window` limits how deep into the queue (oldest first) the
//! controller looks for candidates; FCFS uses 1. Among candidates of the same kind (`row_hit`),
//! an older one (lower `seq`) must rank lower: with an unlimited window the controller offers
//! the scheduler only the oldest ready request of each bank, and picks among those of one kind
//! by age alone (which this rule makes the same as by rank).

mod fcfs;
mod frfcfs;

pub use fcfs::Fcfs;
pub use frfcfs::FrFcfs;

/// A request whose next command could issue now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Arrival order within the controller (lower = older).
    pub seq: u64,
    /// True if the command is a column command (the request hits the open row).
    pub row_hit: bool,
}

/// Ranks candidates; lower rank issues first.
pub trait Scheduler: Send + Sync {
    /// Name used in configs.
    fn name(&self) -> &'static str;
    /// How many of the oldest queued requests may be considered (usize::MAX = all).
    fn window(&self) -> usize;
    /// The rank of `c`; ties are impossible because `seq` is unique.
    fn rank(&self, c: &Candidate) -> u64;
}

/// Every scheduler by name: the registry.
pub const SCHEDULERS: &[(&str, &str)] =
    &[("frfcfs", "first-ready, first-come first-served: row hits first, then oldest"), ("fcfs", "oldest request only")];

/// Looks a scheduler up by name.
pub fn by_name(name: &str) -> Option<Box<dyn Scheduler>> {
    match name {
        "frfcfs" => Some(Box::new(FrFcfs)),
        "fcfs" => Some(Box::new(Fcfs)),
        _ => None,
    }
}
