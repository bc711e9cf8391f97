//! Destination patterns for switch and network studies (as BookSim names them): uniform random,
//! the permutations transpose and bit reverse, hotspot, and all-to-all.

use serde::{Deserialize, Serialize};
use trnsim_kernel::SimRng;

/// How a source picks each packet's destination among `n` endpoints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Uniform over all `n` endpoints (the source's own id included, as in the head-of-line
    /// model where inputs and outputs are different sides of the switch).
    #[default]
    Uniform,
    /// Matrix transpose: with n = k x k endpoints laid out row-major, (r, c) sends to (c, r).
    /// Needs n to be a perfect square.
    Transpose,
    /// Bit reverse: the source id's log2(n) bits reversed. Needs n to be a power of two.
    BitReverse,
    /// With probability `fraction` to endpoint `node`, otherwise uniform.
    Hotspot {
        /// The hot endpoint.
        node: u16,
        /// Share of packets sent to it.
        fraction: f64,
    },
    /// Every other endpoint in turn: the k-th packet goes to (src + 1 + k mod (n - 1)) mod n.
    AllToAll,
}

impl Pattern {
    /// Checks the pattern fits `n` endpoints; the error names what is wrong.
    pub fn validate(&self, n: u16) -> Result<(), String> {
        let side = (n as f64).sqrt().round() as u16;
        match *self {
            Pattern::Transpose if side * side != n => {
                Err(format!("transpose needs a square number of endpoints, not {n}"))
            }
            Pattern::BitReverse if !n.is_power_of_two() => {
                Err(format!("bit-reverse needs a power-of-two number of endpoints, not {n}"))
            }
            Pattern::Hotspot { node, fraction } if node >= n || !(0.0..=1.0).contains(&fraction) => {
                Err(format!("hotspot node {node} must be below {n} and fraction {fraction} in [0, 1]"))
            }
            Pattern::AllToAll if n < 2 => Err("all-to-all needs at least two endpoints".into()),
            _ => Ok(()),
        }
    }

    /// The destination of the `k`-th packet of source `src` among `n` endpoints.
    pub fn destination(&self, src: u16, k: u64, n: u16, rng: &mut SimRng) -> u16 {
        let uniform = |rng: &mut SimRng| rng.below(u64::from(n.max(1))) as u16;
        match *self {
            Pattern::Uniform => uniform(rng),
            Pattern::Transpose => {
                let side = (n as f64).sqrt().round() as u16;
                (src % side) * side + src / side
            }
            Pattern::BitReverse => {
                let bits = n.trailing_zeros();
                if bits == 0 {
                    0
                } else {
                    src.reverse_bits() >> (16 - bits)
                }
            }
            Pattern::Hotspot { node, fraction } => {
                if rng.chance(fraction) {
                    node
                } else {
                    uniform(rng)
                }
            }
            Pattern::AllToAll => ((u64::from(src) + 1 + k % u64::from(n - 1)) % u64::from(n)) as u16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_permutations_and_all_to_all_covers_every_other_endpoint() {
        let mut rng = SimRng::new(1, 1);
        for p in [Pattern::Transpose, Pattern::BitReverse] {
            let mut seen: Vec<u16> = (0..16).map(|s| p.destination(s, 0, 16, &mut rng)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..16).collect::<Vec<_>>(), "{p:?}");
        }
        assert_eq!(Pattern::Transpose.destination(1, 0, 16, &mut rng), 4); // (0, 1) -> (1, 0)
        assert_eq!(Pattern::BitReverse.destination(1, 0, 16, &mut rng), 8); // 0001 -> 1000
        let mut dsts: Vec<u16> = (0..15).map(|k| Pattern::AllToAll.destination(3, k, 16, &mut rng)).collect();
        dsts.sort_unstable();
        assert_eq!(dsts, (0..16).filter(|&d| d != 3).collect::<Vec<_>>());
        assert!(Pattern::Transpose.validate(32).is_err() && Pattern::BitReverse.validate(12).is_err());
    }
}
