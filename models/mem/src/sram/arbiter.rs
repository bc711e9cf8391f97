//! The port rules of the arbiter: which banks and partition groups an access touches, how many
//! ports each (direction, group, bank) has left in a cycle, and how long an access stays on one
//! bank.
//!
//! Why groups suffice: partitions are counted in 16 groups (8 partitions each of 128). Every
//! legal access covers a contiguous partition range starting at a multiple of a group: compute
//! engines start at a multiple of a quarter (spec §3 start rules), DMA engines at a multiple of
//! their 8 partitions. So every access that touches group `g` includes that group's first
//! partition, the accesses competing for a bank in any partition of `g` are exactly those
//! touching `g`, and counting ports per (group, bank) is exact.

use crate::sram::geometry::{SramGeometry, MAX_BANKS};
use crate::sram::pattern::AccessPattern;

/// Partition groups the arbiter counts ports in.
pub(crate) const GROUPS: u32 = 16;

/// Ports taken in one cycle, per (direction, bank), one byte per partition group (16 bytes:
/// a `u128`), so a claim on every group of a mask is one addition. A memory keeps one and
/// clears only the (direction, bank) cells a plan claimed (`used`), not all 2 KB.
#[derive(Debug)]
pub(crate) struct PortUse {
    taken: [u128; 2 * MAX_BANKS as usize],
    /// Per direction: the banks whose cell may be non-zero.
    used: [u64; 2],
}

/// `SPREAD[m]`: one in the lowest bit of byte `k` of a `u64` for every bit `k` of `m`.
const SPREAD: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut m = 0;
    while m < 256 {
        let mut k = 0;
        while k < 8 {
            if m & (1 << k) != 0 {
                t[m] |= 1 << (8 * k);
            }
            k += 1;
        }
        m += 1;
    }
    t
};

/// A one in each byte of a group mask's groups.
fn spread(groups: u16) -> u128 {
    u128::from(SPREAD[usize::from(groups & 0xff)]) | u128::from(SPREAD[usize::from(groups >> 8)]) << 64
}

/// Whether a byte of `x` among those `lanes` marks (a one in each, as [`spread`] gives)
/// exceeds `ports`. Every byte is at most the number of clients (64: each claims a (group,
/// bank) at most once per cycle), so with fewer ports adding `127 - ports` to each byte
/// carries into no other byte and sets its top bit exactly when the byte exceeds `ports`.
fn over(x: u128, lanes: u128, ports: u32) -> bool {
    const ONES: u128 = u128::MAX / 255; // 0x0101...01
    if ports >= 64 {
        return false;
    }
    (x + ONES * u128::from(127 - ports)) & (lanes << 7) != 0
}

impl PortUse {
    pub(crate) fn new() -> PortUse {
        PortUse { taken: [0; 2 * MAX_BANKS as usize], used: [0; 2] }
    }

    /// Frees every port (as [`PortUse::new`] leaves them).
    pub(crate) fn clear(&mut self) {
        for w in [false, true] {
            let mut m = std::mem::take(&mut self.used[usize::from(w)]);
            while m != 0 {
                self.taken[Self::slot(w, m.trailing_zeros())] = 0;
                m &= m - 1;
            }
        }
    }

    fn slot(write: bool, bank: u32) -> usize {
        usize::from(write) * MAX_BANKS as usize + bank as usize
    }

    /// Takes one port of `bank` in every group of `groups` if all have one free.
    pub(crate) fn try_take(&mut self, write: bool, groups: u16, bank: u32, ports: u32) -> bool {
        let t = &mut self.taken[Self::slot(write, bank)];
        let s = spread(groups);
        let after = *t + s;
        if over(after, s, ports) {
            return false;
        }
        *t = after;
        self.used[usize::from(write)] |= 1 << bank;
        true
    }

    /// Claims a port on every bank of `banks` in every group of `groups` for the whole of a run
    /// of cycles; false if some (group, bank) would then hold more claims than `ports`.
    pub(crate) fn claim_all(&mut self, write: bool, groups: u16, banks: u64, ports: u32) -> bool {
        let s = spread(groups);
        let mut fits = true;
        self.used[usize::from(write)] |= banks;
        let mut rest = banks;
        while rest != 0 {
            let b = rest.trailing_zeros();
            rest &= rest - 1;
            let t = &mut self.taken[Self::slot(write, b)];
            *t += s;
            fits &= !over(*t, s, ports);
        }
        fits
    }
}

/// The partition groups (bit g = partitions `g*G .. (g+1)*G`, G = partitions / 16) an access
/// covers.
pub(crate) fn quarters(p: &AccessPattern, geom: &SramGeometry) -> u16 {
    let (q, start, end) = (geom.group(), p.partition_start, p.partition_start + p.partitions);
    (0..GROUPS).filter(|k| start < (k + 1) * q && end > k * q).fold(0, |m, k| m | 1 << k)
}

/// Every bank any element of a (valid) access may touch, as a mask.
pub(crate) fn footprint(p: &AccessPattern, geom: &SramGeometry) -> u64 {
    let (lo, hi) = p.byte_range();
    let g = i64::from(geom.bank_interleave_bytes);
    let (first, last) = (lo / g, (hi - 1) / g);
    if last - first + 1 >= i64::from(geom.banks) {
        return u64::MAX >> (64 - geom.banks);
    }
    (first..=last).fold(0, |m, k| m | 1 << (k % i64::from(geom.banks)))
}

/// How many elements from element `e` on (at least 1) stay on `e`'s bank, conservatively: only
/// along the rest of the innermost row.
pub(crate) fn bank_run_elements(p: &AccessPattern, geom: &SramGeometry, e: u64) -> u64 {
    let inner = p.dims()[p.dims().len() - 1];
    let row_left = u64::from(inner.size) - e % u64::from(inner.size);
    let step = i64::from(inner.stride) * i64::from(p.elem_bytes);
    let (o, g) = (p.offset_of(e) as i64, i64::from(geom.bank_interleave_bytes));
    let in_granule = match step {
        0 => return row_left,
        s if s > 0 => (g - o % g + s - 1) / s,
        s => o % g / -s + 1,
    };
    row_left.min(in_granule as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sram::geometry::{PSUM, SBUF_NC_V4};
    use crate::sram::pattern::Dim;
    use crate::sram::test_rng::{random_pattern, XorShift};

    #[test]
    fn groups_follow_the_partition_range() {
        let g = PSUM.geometry;
        let q = |s, n| quarters(&AccessPattern::contiguous(s, n, 0, 4, 1), &g);
        // Groups of 8 partitions: 0..128 all 16; 0..100 groups 0..=12; 64..97 groups 8..=12;
        // 96..97 group 12; 32..64 groups 4..=7; a DMA engine's 8..16 group 1.
        assert_eq!(
            [q(0, 128), q(0, 100), q(64, 33), q(96, 1), q(32, 32), q(8, 8)],
            [0xffff, 0x1fff, 0x1f00, 0x1000, 0x00f0, 0x0002]
        );
    }

    #[test]
    fn runs_and_footprints_agree_with_element_banks() {
        for seed in 0..300 {
            let mut rng = XorShift::new(seed);
            let g = if seed % 2 == 0 { PSUM.geometry } else { SBUF_NC_V4.geometry };
            let g = SramGeometry { bank_interleave_bytes: g.bank_interleave_bytes >> (seed % 5), ..g };
            let p = random_pattern(&mut rng, &g, 12, 900);
            let banks: Vec<u32> = p.offsets().map(|o| g.bank_of(u64::from(o))).collect();
            let fp = footprint(&p, &g);
            assert!(banks.iter().all(|&b| fp & (1 << b) != 0), "seed {seed}");
            for e in 0..banks.len() {
                let run = bank_run_elements(&p, &g, e as u64) as usize;
                assert!(run >= 1 && e + run <= banks.len(), "seed {seed} e {e} run {run}");
                assert!(banks[e..e + run].iter().all(|&b| b == banks[e]), "seed {seed} e {e} run {run}");
            }
        }
    }

    /// Port use as first written: one counter per (direction, group, bank).
    struct Counts([[u8; GROUPS as usize]; 2 * MAX_BANKS as usize]);

    impl Counts {
        fn cells(groups: u16, bank: u32, write: bool) -> impl Iterator<Item = (usize, usize)> {
            let row = usize::from(write) * MAX_BANKS as usize + bank as usize;
            (0..GROUPS as usize).filter(move |q| groups & (1 << q) != 0).map(move |q| (row, q))
        }
        fn try_take(&mut self, write: bool, groups: u16, bank: u32, ports: u32) -> bool {
            if Self::cells(groups, bank, write).any(|(r, q)| u32::from(self.0[r][q]) >= ports) {
                return false;
            }
            Self::cells(groups, bank, write).for_each(|(r, q)| self.0[r][q] += 1);
            true
        }
        fn claim_all(&mut self, write: bool, groups: u16, banks: u64, ports: u32) -> bool {
            let mut fits = true;
            for b in (0..64).filter(|b| banks & (1 << b) != 0) {
                for (r, q) in Self::cells(groups, b, write) {
                    self.0[r][q] += 1;
                    fits &= u32::from(self.0[r][q]) <= ports;
                }
            }
            fits
        }
    }

    #[test]
    fn packed_port_use_answers_as_one_counter_per_group_and_bank() {
        for seed in 0..400 {
            let mut rng = XorShift::new(seed);
            let ports = 1 + (rng.next() % 4) as u32;
            let (mut packed, mut counts) = (PortUse::new(), Counts([[0; 16]; 128]));
            let claims = seed % 2 == 0;
            for _ in 0..64 {
                let write = rng.next().is_multiple_of(2);
                let groups = (rng.next() & 0xffff) as u16 & [0xffff, 0x00ff, 0x0f00, 0x0003][(rng.next() % 4) as usize];
                if claims {
                    let banks = rng.next() & [u64::MAX, 0xff, 0x3, 0x1_0000][(rng.next() % 4) as usize];
                    let want = counts.claim_all(write, groups, banks, ports);
                    assert_eq!(packed.claim_all(write, groups, banks, ports), want, "seed {seed}");
                } else {
                    let bank = (rng.next() % 64) as u32;
                    let want = counts.try_take(write, groups, bank, ports);
                    assert_eq!(packed.try_take(write, groups, bank, ports), want, "seed {seed}");
                }
            }
        }
    }

    #[test]
    fn port_use_counts_per_quarter_and_bank() {
        let mut u = PortUse::new();
        assert!(u.try_take(false, 0b0011, 5, 1));
        assert!(!u.try_take(false, 0b0010, 5, 1)); // quarter 1 bank 5 read port taken
        assert!(u.try_take(false, 0b0100, 5, 1)); // other quarter
        assert!(u.try_take(true, 0b0011, 5, 1)); // write ports are separate
        let mut c = PortUse::new();
        let p = AccessPattern::new(0, 128, 0, 4, &[Dim::new(4, 1)]).expect("dims");
        assert!(c.claim_all(false, quarters(&p, &PSUM.geometry), 0b11, 2));
        assert!(c.claim_all(false, 0b1, 0b10, 2));
        assert!(!c.claim_all(false, 0b1, 0b10, 2));
    }
}
