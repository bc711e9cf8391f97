//! A fixed-size set of port indices (a bitset), the currency of the crossbar arbiters: the
//! outputs an input requests, the inputs an output may grant, the ports still unmatched.

/// A set of port indices in `0..len`, one bit per port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSet {
    words: Vec<u64>,
    len: usize,
}

impl PortSet {
    /// The empty set over `len` ports.
    pub fn new(len: usize) -> PortSet {
        PortSet { words: vec![0; len.div_ceil(64)], len }
    }
    /// The set of all `len` ports.
    pub fn full(len: usize) -> PortSet {
        let mut s = PortSet::new(len);
        for p in 0..len {
            s.insert(p);
        }
        s
    }
    /// Number of ports the set ranges over (not the number of members).
    pub fn capacity(&self) -> usize {
        self.len
    }
    /// Adds port `p` (< capacity).
    #[inline]
    pub fn insert(&mut self, p: usize) {
        debug_assert!(p < self.len, "port {p} outside a set of {}", self.len);
        self.words[p / 64] |= 1 << (p % 64);
    }
    /// Removes port `p`.
    #[inline]
    pub fn remove(&mut self, p: usize) {
        self.words[p / 64] &= !(1 << (p % 64));
    }
    /// Whether port `p` is a member.
    #[inline]
    pub fn contains(&self, p: usize) -> bool {
        self.words[p / 64] >> (p % 64) & 1 == 1
    }
    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
    /// Number of members.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
    /// Members, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }
    /// The first member of `self ∩ mask` at or after `start`, wrapping around: the round-robin
    /// choice of a pointer at `start`.
    pub fn first_from(&self, mask: &PortSet, start: usize) -> Option<usize> {
        let n = self.words.len();
        let (w0, b0) = (start / 64, start % 64);
        for k in 0..=n {
            let i = (w0 + k) % n;
            let mut w = self.words[i] & mask.words[i];
            if k == 0 {
                w &= u64::MAX << b0;
            } else if k == n {
                w &= !(u64::MAX << b0); // the bits of the first word below start
            }
            if w != 0 {
                return Some(i * 64 + w.trailing_zeros() as usize);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_choice_wraps() {
        for len in [5, 64, 70, 130] {
            let mut s = PortSet::new(len);
            let all = PortSet::full(len);
            assert_eq!(s.first_from(&all, 0), None);
            s.insert(2);
            s.insert(len - 1);
            assert_eq!(s.first_from(&all, 0), Some(2));
            assert_eq!(s.first_from(&all, 2), Some(2));
            assert_eq!(s.first_from(&all, 3), Some(len - 1));
            assert_eq!(s.first_from(&all, len - 1), Some(len - 1));
            let mut m = all.clone();
            m.remove(len - 1);
            assert_eq!(s.first_from(&m, 3), Some(2), "wraps past the masked port");
            assert_eq!(s.iter().collect::<Vec<_>>(), vec![2, len - 1]);
            assert_eq!(s.count(), 2);
            s.clear();
            assert!(s.is_empty());
        }
    }

    #[test]
    fn first_from_matches_a_linear_scan() {
        let len = 100;
        let mut s = PortSet::new(len);
        for p in [0, 7, 63, 64, 65, 99] {
            s.insert(p);
        }
        let all = PortSet::full(len);
        for start in 0..len {
            let want = (0..len).map(|k| (start + k) % len).find(|&p| s.contains(p));
            assert_eq!(s.first_from(&all, start), want, "start {start}");
        }
    }
}
