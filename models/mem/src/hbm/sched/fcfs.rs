//! FCFS: strictly the oldest request of the active queue.

use super::{Candidate, Scheduler};

/// Serves requests strictly in arrival order (within the active read or write queue).
#[derive(Clone, Copy, Debug, Default)]
pub struct Fcfs;

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn window(&self) -> usize {
        1
    }
    fn rank(&self, c: &Candidate) -> u64 {
        c.seq
    }
}
