//! FR-FCFS (Rixner et al., ISCA 2000): row hits first, then the oldest request.

use super::{Candidate, Scheduler};

/// First-ready FCFS over the whole queue. No starvation cap: a stream of row hits can delay an
/// older conflicting request for as long as hits keep arriving (Ramulator 2's FRFCFS likewise).
#[derive(Clone, Copy, Debug, Default)]
pub struct FrFcfs;

impl Scheduler for FrFcfs {
    fn name(&self) -> &'static str {
        "frfcfs"
    }
    fn window(&self) -> usize {
        usize::MAX
    }
    fn rank(&self, c: &Candidate) -> u64 {
        (u64::from(!c.row_hit) << 63) | c.seq
    }
}
