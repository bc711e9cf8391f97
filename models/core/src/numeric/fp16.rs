//! IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits, bias 15) and its conversions.
//!
//! Values are carried as raw `u16` bit patterns. Subnormals are kept (no flush-to-zero);
//! leaves out exception flags and any hardware NaN canonicalisation beyond setting the quiet bit.

use super::round::{decode_magnitude, round_magnitude, Shape};

const SHAPE: Shape = Shape { bias: 15, mbits: 10 };

/// Positive infinity.
pub const FP16_INF: u16 = 0x7C00;
/// The canonical quiet NaN produced for an f32 NaN whose top payload bits are zero.
pub const FP16_NAN: u16 = 0x7E00;
/// The largest finite value, 65504.
pub const FP16_MAX: u16 = 0x7BFF;

/// Widens a binary16 value to f32. Exact, subnormals included; a NaN keeps its sign and payload
/// (shifted into the top of the f32 payload, not re-quieted).
pub fn fp16_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let code = (h & 0x7FFF) as u32;
    if code >= FP16_INF as u32 {
        return f32::from_bits(sign | 0x7F80_0000 | ((code & 0x3FF) << 13));
    }
    f32::from_bits(sign | decode_magnitude(code, SHAPE).to_bits())
}

/// Narrows an f32 to binary16, rounding to nearest with ties to even, subnormals included.
/// Values at or beyond 65520 (halfway above [`FP16_MAX`]) become infinity; infinities stay
/// infinities; a NaN stays a NaN with its sign and top payload bits, quieted (bit 9 set).
pub fn f32_to_fp16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    if x.is_nan() {
        return sign | FP16_NAN | ((bits >> 13) & 0x3FF) as u16;
    }
    if x.is_infinite() {
        return sign | FP16_INF;
    }
    let code = round_magnitude(bits & 0x7FFF_FFFF, SHAPE);
    sign | code.min(FP16_INF as u32) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp16_known_values() {
        assert_eq!(f32_to_fp16(1.0), 0x3C00);
        assert_eq!(f32_to_fp16(-2.5), 0xC100);
        assert_eq!(f32_to_fp16(1.0 / 3.0), 0x3555);
        assert_eq!(fp16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(fp16_to_f32(FP16_MAX), 65504.0);
        assert_eq!(f32_to_fp16(65504.0), FP16_MAX);
        assert_eq!(f32_to_fp16(65519.996), FP16_MAX);
        assert_eq!(f32_to_fp16(65520.0), FP16_INF); // tie between 0x7BFF (odd) and infinity
        assert_eq!(f32_to_fp16(1e6), FP16_INF);
        assert_eq!(f32_to_fp16(-1e6), 0xFC00);
        assert_eq!(f32_to_fp16(2f32.powi(-14)), 0x0400); // min normal
        assert_eq!(fp16_to_f32(0x0400), 2f32.powi(-14));
        assert_eq!(fp16_to_f32(0x0001), 2f32.powi(-24)); // min subnormal
        assert_eq!(fp16_to_f32(0x03FF), 1023.0 * 2f32.powi(-24)); // max subnormal
        assert_eq!(f32_to_fp16(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_fp16(f32::INFINITY), FP16_INF);
        assert_eq!(f32_to_fp16(f32::NEG_INFINITY), 0xFC00);
        assert_eq!(fp16_to_f32(FP16_INF), f32::INFINITY);
        assert_eq!(f32_to_fp16(-0.0), 0x8000);
        assert_eq!(fp16_to_f32(0x8000).to_bits(), 0x8000_0000);
        assert_eq!(f32_to_fp16(f32::NAN), FP16_NAN);
        assert_eq!(f32_to_fp16(f32::MIN_POSITIVE), 0x0000); // far below 2^-25
    }

    #[test]
    fn fp16_subnormal_rne_ties() {
        assert_eq!(f32_to_fp16(2f32.powi(-25)), 0x0000); // halfway to 0x0001: even 0
        assert_eq!(f32_to_fp16(f32::from_bits(2f32.powi(-25).to_bits() + 1)), 0x0001);
        assert_eq!(f32_to_fp16(3.0 * 2f32.powi(-25)), 0x0002); // halfway 1..2: even 2
        assert_eq!(f32_to_fp16(5.0 * 2f32.powi(-25)), 0x0002); // halfway 2..3: even 2
        assert_eq!(f32_to_fp16(-3.0 * 2f32.powi(-25)), 0x8002);
        // Halfway between the largest subnormal (odd) and the smallest normal.
        assert_eq!(f32_to_fp16(1023.5 * 2f32.powi(-24)), 0x0400);
        // Normal range: 1 + 2^-11 is halfway between 0x3C00 and 0x3C01.
        assert_eq!(f32_to_fp16(1.0 + 2f32.powi(-11)), 0x3C00);
        assert_eq!(f32_to_fp16(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02);
    }

    #[test]
    fn fp16_nan_stays_quiet_nan() {
        for bits in [0x7F80_0001u32, 0x7FC0_0000, 0xFF80_0001, 0x7FFF_FFFF, 0x7FA0_0000] {
            let h = f32_to_fp16(f32::from_bits(bits));
            assert!(fp16_to_f32(h).is_nan(), "{bits:#x}");
            assert_eq!(h & 0x0200, 0x0200, "quiet bit for {bits:#x}");
            assert_eq!(h & 0x8000, (bits >> 16) as u16 & 0x8000);
        }
    }

    #[test]
    fn fp16_exhaustive_round_trip() {
        for h in 0..=u16::MAX {
            let x = fp16_to_f32(h);
            if x.is_nan() {
                assert!(fp16_to_f32(f32_to_fp16(x)).is_nan(), "{h:#06x}");
            } else {
                assert_eq!(f32_to_fp16(x), h, "{h:#06x}");
            }
        }
    }

    #[test]
    fn fp16_rne_is_nearest_on_sampled_f32() {
        for bits in (0..=u32::MAX).step_by(4093) {
            let x = f32::from_bits(bits);
            if !x.is_finite() || x.abs() >= 65504.0 {
                continue;
            }
            let h = f32_to_fp16(x);
            let y = fp16_to_f32(h) as f64;
            let e = (x as f64 - y).abs();
            // Neighbours one code either side in magnitude (same sign).
            for n in [h.wrapping_sub(1), h.wrapping_add(1)] {
                if n & 0x7FFF == 0x7FFF || (n ^ h) & 0x8000 != 0 || n & 0x7FFF >= FP16_INF {
                    continue;
                }
                let en = (x as f64 - fp16_to_f32(n) as f64).abs();
                assert!(e < en || (e == en && h & 1 == 0), "{bits:#x} -> {h:#06x}, {n:#06x} closer");
            }
        }
    }
}
