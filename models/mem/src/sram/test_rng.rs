//! A tiny xorshift generator for the randomized unit tests (no dependencies).

/// xorshift64*: deterministic per seed.
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi` (inclusive; slight modulo bias is fine for tests).
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    /// One of the items.
    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// A random pattern that passes validation in `geom`: 1-4 dims of up to `max_size` elements,
/// strides in `-max_stride..=max_stride`, any legal partition range.
pub(crate) fn random_pattern(
    rng: &mut XorShift,
    geom: &crate::sram::SramGeometry,
    max_size: i64,
    max_stride: i64,
) -> crate::sram::AccessPattern {
    use crate::sram::{AccessPattern, Dim};
    let q = geom.quarter();
    loop {
        let elem = rng.pick(&[1u32, 2, 4]).min(geom.port_bytes);
        let (n, start) = match rng.range(0, 2) {
            0 => (rng.range(1, q as i64) as u32, q * rng.range(0, 3) as u32),
            1 => (rng.range(q as i64 + 1, 2 * q as i64) as u32, rng.pick(&[0, 2 * q])),
            _ => (rng.range(2 * q as i64 + 1, geom.partitions as i64) as u32, 0),
        };
        let nd = rng.range(1, 4) as usize;
        let mut dims = [Dim::default(); 4];
        for d in dims.iter_mut().take(nd) {
            *d = Dim::new(rng.range(1, max_size) as u16, rng.range(-max_stride, max_stride) as i16);
        }
        let Ok(mut p) = AccessPattern::new(start, n, 0, elem, &dims[..nd]) else { continue };
        let (lo, hi) = p.byte_range();
        let room = i64::from(geom.partition_bytes) - (hi - lo);
        if room < 0 {
            continue;
        }
        p.offset = (-lo + i64::from(elem) * rng.range(0, room / i64::from(elem))) as u32;
        assert_eq!(p.validate(geom), Ok(()), "{p:?}");
        return p;
    }
}
