//! bfloat16 (1 sign, 8 exponent, 7 mantissa bits: the top half of an f32) and its conversions,
//! including the stochastic rounding that NC-v4 offers when it writes BF16 into PSUM (spec §2).
//!
//! Values are carried as raw `u16` bit patterns. Leaves out: denormal flushing (subnormals are
//! kept, as in f32) and any hardware NaN canonicalisation beyond setting the quiet bit.

/// Positive infinity.
pub const BF16_INF: u16 = 0x7F80;
/// The canonical quiet NaN produced for an f32 NaN whose top payload bits are zero.
pub const BF16_NAN: u16 = 0x7FC0;
/// The largest finite value, (2 - 2^-7) x 2^127 ≈ 3.39e38.
pub const BF16_MAX: u16 = 0x7F7F;

/// Widens a bfloat16 to f32. Exact: the bits become the top half of the f32 (NaN payloads and
/// signalling NaNs are kept as they are).
pub fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// Narrows an f32 to bfloat16, rounding to nearest with ties to even. Values at or beyond the
/// halfway point above [`BF16_MAX`] become infinity; infinities stay infinities; a NaN stays a
/// NaN with its sign and top payload bits, quieted (bit 6 set).
pub fn f32_to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return quiet_nan(bits);
    }
    let lsb = (bits >> 16) & 1;
    ((bits + 0x7FFF + lsb) >> 16) as u16
}

/// Narrows an f32 to bfloat16 with stochastic rounding: `rand_bits` is added to the 16 bits that
/// are dropped and the sum is truncated, so the magnitude rounds up with probability
/// (dropped bits) / 65536 when `rand_bits` is uniform. Deterministic given `rand_bits`; exactly
/// representable values are unchanged for every `rand_bits`. Models the v4 PSUM SR option; the
/// hardware's random source (XORWOW per lane) is the caller's concern. Finite values above
/// [`BF16_MAX`] may carry into infinity; infinities and NaNs convert as in [`f32_to_bf16`].
pub fn f32_to_bf16_sr(x: f32, rand_bits: u16) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return quiet_nan(bits);
    }
    if x.is_infinite() {
        return (bits >> 16) as u16;
    }
    ((bits + rand_bits as u32) >> 16) as u16
}

/// The bfloat16 quiet NaN keeping an f32 NaN's sign and top seven payload bits.
fn quiet_nan(bits: u32) -> u16 {
    ((bits >> 16) as u16) | 0x0040
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_known_values() {
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
        assert_eq!(f32_to_bf16(-2.5), 0xC020);
        assert_eq!(f32_to_bf16(1.0 / 3.0), 0x3EAB); // 0x3EAA_AAAB rounds up
        assert_eq!(bf16_to_f32(0x3EAB), f32::from_bits(0x3EAB_0000));
        assert_eq!(f32_to_bf16(f32::MIN_POSITIVE), 0x0080); // min normal 2^-126
        assert_eq!(bf16_to_f32(0x0001), f32::from_bits(0x0001_0000)); // min subnormal 2^-133
        assert_eq!(bf16_to_f32(0x0001), 2f32.powi(-133));
        assert_eq!(f32_to_bf16(2f32.powi(-133)), 0x0001);
        assert_eq!(bf16_to_f32(BF16_MAX), f32::from_bits(0x7F7F_0000));
        assert_eq!(f32_to_bf16(f32::from_bits(0x7F7F_7FFF)), BF16_MAX);
        assert_eq!(f32_to_bf16(f32::MAX), BF16_INF); // beyond the halfway point to 2^128
        assert_eq!(f32_to_bf16(f32::INFINITY), BF16_INF);
        assert_eq!(f32_to_bf16(f32::NEG_INFINITY), 0xFF80);
        assert_eq!(f32_to_bf16(-0.0), 0x8000);
        assert_eq!(f32_to_bf16(0.0), 0x0000);
        assert_eq!(bf16_to_f32(0x8000).to_bits(), 0x8000_0000);
        assert_eq!(f32_to_bf16(f32::NAN), BF16_NAN);
    }

    #[test]
    fn bf16_nan_stays_quiet_nan() {
        for bits in [0x7F80_0001u32, 0x7FC0_0000, 0xFF80_0001, 0x7FFF_FFFF, 0x7FA0_0000] {
            let b = f32_to_bf16(f32::from_bits(bits));
            assert!(bf16_to_f32(b).is_nan(), "{bits:#x}");
            assert_eq!(b & 0x0040, 0x0040, "quiet bit for {bits:#x}");
            assert_eq!(b & 0x8000, (bits >> 16) as u16 & 0x8000, "sign for {bits:#x}");
            assert!(bf16_to_f32(f32_to_bf16_sr(f32::from_bits(bits), 0xFFFF)).is_nan());
        }
    }

    #[test]
    fn bf16_rne_ties() {
        // Exactly halfway between 0x3F80 and 0x3F81: to the even one.
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8000)), 0x3F80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F81_8000)), 0x3F82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8001)), 0x3F81);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_7FFF)), 0x3F80);
        assert_eq!(f32_to_bf16(f32::from_bits(0xBF80_8000)), 0xBF80);
        // Carry into the exponent: 0x3FFF_8000 is halfway between 0x3FFF (odd) and 0x4000.
        assert_eq!(f32_to_bf16(f32::from_bits(0x3FFF_8000)), 0x4000);
        // Halfway between BF16_MAX (odd) and 2^128: ties to even means infinity.
        assert_eq!(f32_to_bf16(f32::from_bits(0x7F7F_8000)), BF16_INF);
    }

    #[test]
    fn bf16_exhaustive_round_trip() {
        for b in 0..=u16::MAX {
            let x = bf16_to_f32(b);
            if x.is_nan() {
                assert!(bf16_to_f32(f32_to_bf16(x)).is_nan());
            } else {
                assert_eq!(f32_to_bf16(x), b, "{b:#06x}");
                assert_eq!(f32_to_bf16_sr(x, 0xFFFF), b, "sr {b:#06x}");
            }
        }
    }

    #[test]
    fn bf16_rne_is_nearest_on_sampled_f32() {
        for bits in (0..=u32::MAX).step_by(4093) {
            let x = f32::from_bits(bits);
            if !x.is_finite() || x.abs() >= bf16_to_f32(BF16_MAX) {
                continue;
            }
            let lo = (bits >> 16) as u16; // truncation
            let hi = lo + 1; // next code away from zero
            let d_lo = (x as f64 - bf16_to_f32(lo) as f64).abs();
            let d_hi = (x as f64 - bf16_to_f32(hi) as f64).abs();
            let want = if d_lo < d_hi || (d_lo == d_hi && lo & 1 == 0) { lo } else { hi };
            assert_eq!(f32_to_bf16(x), want, "{bits:#x}");
        }
    }

    #[test]
    fn bf16_sr_is_deterministic_and_unbiased() {
        // 1 + 0x1234/65536 ulp above 0x3F80: exactly 0x1234 of the 65536 draws round up.
        let x = f32::from_bits(0x3F80_1234);
        let ups = (0..=u16::MAX).filter(|&r| f32_to_bf16_sr(x, r) == 0x3F81).count();
        assert_eq!(ups, 0x1234);
        assert_eq!(f32_to_bf16_sr(x, 0), 0x3F80);
        assert_eq!(f32_to_bf16_sr(x, 0xFFFF - 0x1234 + 1), 0x3F81);
        assert_eq!(f32_to_bf16_sr(x, 0xFFFF - 0x1234), 0x3F80);
        assert_eq!(f32_to_bf16_sr(x, 777), f32_to_bf16_sr(x, 777));
        // Negative values round in magnitude, with the same probability.
        let ups = (0..=u16::MAX).filter(|&r| f32_to_bf16_sr(-x, r) == 0xBF81).count();
        assert_eq!(ups, 0x1234);
        assert_eq!(f32_to_bf16_sr(f32::INFINITY, 0xFFFF), BF16_INF);
        assert_eq!(f32_to_bf16_sr(f32::MAX, 0), BF16_MAX);
        assert_eq!(f32_to_bf16_sr(f32::MAX, 1), BF16_INF);
    }
}
