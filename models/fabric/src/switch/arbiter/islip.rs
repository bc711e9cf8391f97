//! iSLIP (N. McKeown, "The iSLIP scheduling algorithm for input-queued switches", IEEE/ACM
//! Trans. Networking 7(2), 1999).
//!
//! Each iteration: every unmatched input requests every output it has a cell for; every
//! unmatched output grants the requesting input that appears next at or after its grant
//! pointer; every input accepts the granting output next at or after its accept pointer.
//! Pointers move one beyond the accepted partner, and only for accepts in the first
//! iteration, which desynchronizes them: under uniform traffic one iteration reaches 100 %
//! throughput. More iterations fill the matching up towards maximal (log2 N iterations
//! converge on average; N always do).

use super::{Arbiter, Matching, Requests, RoundRobinPointers};

/// The iSLIP arbiter with its grant and accept pointers.
pub struct Islip {
    rr: RoundRobinPointers,
}

impl Islip {
    /// An arbiter for `ports` ports running `iterations` (>= 1) rounds per crossbar cycle.
    pub fn new(ports: usize, iterations: u32) -> Islip {
        Islip { rr: RoundRobinPointers::new(ports, iterations) }
    }
    /// Grant pointers, per output (for tests and traces).
    pub fn grant_pointers(&self) -> &[usize] {
        &self.rr.grant
    }
    /// Accept pointers, per input.
    pub fn accept_pointers(&self) -> &[usize] {
        &self.rr.accept
    }
}

impl Arbiter for Islip {
    fn name(&self) -> &'static str {
        "islip"
    }
    fn arbitrate(&mut self, req: &Requests, m: &mut Matching) {
        self.rr.run(req, m, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(n: usize) -> Requests {
        let mut r = Requests::new(n);
        for i in 0..n {
            for j in 0..n {
                r.add(i, j);
            }
        }
        r
    }

    #[test]
    fn pointers_desynchronize_under_full_load() {
        // McKeown 1999 §III: with every VOQ occupied, after at most N cycles 1-SLIP finds a
        // complete matching every cycle.
        let n = 8;
        let mut a = Islip::new(n, 1);
        let (req, mut m) = (full(n), Matching::new(n));
        for _ in 0..n {
            a.arbitrate(&req, &mut m);
        }
        for _ in 0..100 {
            a.arbitrate(&req, &mut m);
            m.check(&req).unwrap();
            assert_eq!(m.size(), n);
        }
    }

    #[test]
    fn unaccepted_grants_leave_the_grant_pointer() {
        // Inputs 0 and 1 both request outputs 0 and 1; both outputs grant input 0 (pointers at
        // 0); input 0 accepts output 0. Output 1's grant was not accepted: its pointer stays.
        let mut r = Requests::new(2);
        for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            r.add(i, j);
        }
        let mut a = Islip::new(2, 1);
        let mut m = Matching::new(2);
        a.arbitrate(&r, &mut m);
        assert_eq!(m.out_of, vec![Some(0), None]);
        assert_eq!(a.grant_pointers(), &[1, 0]);
        assert_eq!(a.accept_pointers(), &[1, 0]);
    }

    #[test]
    fn later_iterations_fill_the_matching_without_moving_pointers() {
        let mut r = Requests::new(2);
        for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            r.add(i, j);
        }
        let mut a = Islip::new(2, 2);
        let mut m = Matching::new(2);
        a.arbitrate(&r, &mut m);
        assert_eq!(m.out_of, vec![Some(0), Some(1)], "the second iteration matches input 1 to output 1");
        assert_eq!(a.grant_pointers(), &[1, 0], "second-iteration accepts do not move pointers");
        assert_eq!(a.accept_pointers(), &[1, 0]);
    }

    #[test]
    fn n_iterations_give_a_maximal_matching() {
        let n = 16;
        let mut rng = trnsim_kernel::SimRng::new(3, 0);
        let mut a = Islip::new(n, n as u32);
        let mut m = Matching::new(n);
        for _ in 0..200 {
            let mut r = Requests::new(n);
            for i in 0..n {
                for j in 0..n {
                    if rng.chance(0.15) {
                        r.add(i, j);
                    }
                }
            }
            a.arbitrate(&r, &mut m);
            m.check(&r).unwrap();
            let used: Vec<usize> = m.pairs().map(|p| p.1).collect();
            for (i, row) in r.rows.iter().enumerate() {
                if m.out_of[i].is_none() {
                    assert!(row.iter().all(|j| used.contains(&j)), "input {i} could still be matched");
                }
            }
        }
    }
}
