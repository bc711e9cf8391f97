//! RRM, basic round-robin matching (McKeown 1999 §II): request, grant and accept as in iSLIP,
//! but each output's grant pointer moves one beyond the input it granted whether or not the
//! grant is accepted. Outputs that granted the same input all move to the same place, so the
//! pointers stay synchronized and one iteration saturates at about 63 % under uniform Bernoulli
//! traffic (McKeown's Fig. 6): the baseline that shows why iSLIP's update rule matters.

use super::{Arbiter, Matching, Requests, RoundRobinPointers};

/// The RRM arbiter with its grant and accept pointers.
pub struct RoundRobin {
    rr: RoundRobinPointers,
}

impl RoundRobin {
    /// An arbiter for `ports` ports running `iterations` (>= 1) rounds per crossbar cycle.
    pub fn new(ports: usize, iterations: u32) -> RoundRobin {
        RoundRobin { rr: RoundRobinPointers::new(ports, iterations) }
    }
    /// Grant pointers, per output.
    pub fn grant_pointers(&self) -> &[usize] {
        &self.rr.grant
    }
}

impl Arbiter for RoundRobin {
    fn name(&self) -> &'static str {
        "round-robin"
    }
    fn arbitrate(&mut self, req: &Requests, m: &mut Matching) {
        self.rr.run(req, m, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_pointers_move_past_unaccepted_grants() {
        let mut r = Requests::new(2);
        for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            r.add(i, j);
        }
        let mut a = RoundRobin::new(2, 1);
        let mut m = Matching::new(2);
        a.arbitrate(&r, &mut m);
        assert_eq!(m.out_of, vec![Some(0), None]);
        assert_eq!(a.grant_pointers(), &[1, 1], "both outputs granted input 0 and both moved");
        // Now both grant input 1: synchronized again, one match per cycle.
        a.arbitrate(&r, &mut m);
        assert_eq!(m.size(), 1);
        m.check(&r).unwrap();
    }
}
