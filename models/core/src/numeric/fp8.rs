//! The two OCP 8-bit floating-point formats (OCP OFP8 v1.0) and their conversions:
//! - **E4M3** (bias 7): no infinities, one NaN pattern per sign (S.1111.111), largest finite
//!   value 448 (S.1111.110), smallest subnormal 2^-9;
//! - **E5M2** (bias 15): IEEE-like, infinities S.11111.00 and NaNs S.11111.{01,10,11}, largest
//!   finite value 57344, smallest subnormal 2^-16.
//!
//! Values are carried as raw `u8` bit patterns. f32 -> FP8 rounds to nearest with ties to even
//! (as if the exponent range were unbounded) and then applies the [`Overflow`] policy. Leaves out
//! stochastic rounding to FP8 and the FNUZ variants (single NaN at 0x80, bias 8/16).

use super::round::{decode_magnitude, round_magnitude, Shape};

const E4M3: Shape = Shape { bias: 7, mbits: 3 };
const E5M2: Shape = Shape { bias: 15, mbits: 2 };

/// The largest finite E4M3 value, as a code (0x7E = 448).
pub const E4M3_MAX: u8 = 0x7E;
/// The positive E4M3 NaN (0x7F; 0xFF is the negative one).
pub const E4M3_NAN: u8 = 0x7F;
/// The largest finite E5M2 value, as a code (0x7B = 57344).
pub const E5M2_MAX: u8 = 0x7B;
/// Positive E5M2 infinity.
pub const E5M2_INF: u8 = 0x7C;
/// The canonical quiet E5M2 NaN produced for an f32 NaN whose top payload bits are zero.
pub const E5M2_NAN: u8 = 0x7E;

/// What an FP8 conversion does with a value whose rounded magnitude exceeds the largest finite
/// value (and with an infinite input), following the two modes of OCP OFP8 §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// Clamp to ± the largest finite value; infinities clamp too. The default for E4M3.
    Saturate,
    /// Produce the format's non-finite value: NaN for E4M3 (which has no infinity), infinity for
    /// E5M2. The default for E5M2 (IEEE behaviour).
    NonFinite,
}

/// Decodes an E4M3 byte to f32, exactly. 0x7F and 0xFF decode to NaN (with that sign).
pub fn e4m3_to_f32(b: u8) -> f32 {
    let sign = ((b & 0x80) as u32) << 24;
    let code = (b & 0x7F) as u32;
    if code == E4M3_NAN as u32 {
        return f32::from_bits(sign | 0x7FC0_0000);
    }
    f32::from_bits(sign | decode_magnitude(code, E4M3).to_bits())
}

/// Encodes an f32 as E4M3 with the default [`Overflow::Saturate`]: magnitudes that round above
/// 448 (anything above 464, the tie with the would-be next value 480, which goes to even 448) and
/// infinities become ±448; NaN becomes NaN with the input's sign.
pub fn f32_to_e4m3(x: f32) -> u8 {
    f32_to_e4m3_with(x, Overflow::Saturate)
}

/// Encodes an f32 as E4M3 (round to nearest even) with an explicit overflow policy.
pub fn f32_to_e4m3_with(x: f32, overflow: Overflow) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 24) & 0x80) as u8;
    let max_or_nan = match overflow {
        Overflow::Saturate => E4M3_MAX,
        Overflow::NonFinite => E4M3_NAN,
    };
    if x.is_nan() {
        return sign | E4M3_NAN;
    }
    if x.is_infinite() {
        return sign | max_or_nan;
    }
    let code = round_magnitude(bits & 0x7FFF_FFFF, E4M3);
    sign | if code > E4M3_MAX as u32 { max_or_nan } else { code as u8 }
}

/// Decodes an E5M2 byte to f32, exactly: S.11111.00 is infinity, S.11111.xx (xx != 0) NaN with
/// its payload kept.
pub fn e5m2_to_f32(b: u8) -> f32 {
    let sign = ((b & 0x80) as u32) << 24;
    let code = (b & 0x7F) as u32;
    if code >= E5M2_INF as u32 {
        return f32::from_bits(sign | 0x7F80_0000 | ((code & 0x3) << 21));
    }
    f32::from_bits(sign | decode_magnitude(code, E5M2).to_bits())
}

/// Encodes an f32 as E5M2 with the default [`Overflow::NonFinite`]: magnitudes from 61440 up
/// (the tie above 57344) become infinity, infinities stay infinities, and NaN stays a quiet NaN
/// with the input's sign and top payload bit.
pub fn f32_to_e5m2(x: f32) -> u8 {
    f32_to_e5m2_with(x, Overflow::NonFinite)
}

/// Encodes an f32 as E5M2 (round to nearest even) with an explicit overflow policy.
pub fn f32_to_e5m2_with(x: f32, overflow: Overflow) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 24) & 0x80) as u8;
    let max_or_inf = match overflow {
        Overflow::Saturate => E5M2_MAX,
        Overflow::NonFinite => E5M2_INF,
    };
    if x.is_nan() {
        return sign | E5M2_NAN | ((bits >> 21) & 0x1) as u8;
    }
    if x.is_infinite() {
        return sign | max_or_inf;
    }
    let code = round_magnitude(bits & 0x7FFF_FFFF, E5M2);
    sign | if code > E5M2_MAX as u32 { max_or_inf } else { code as u8 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3_known_values() {
        assert_eq!(f32_to_e4m3(1.0), 0x38);
        assert_eq!(f32_to_e4m3(-2.5), 0xC2);
        assert_eq!(f32_to_e4m3(1.0 / 3.0), 0x2B); // 0.34375 is nearer than 0.3125
        assert_eq!(e4m3_to_f32(0x2B), 0.34375);
        assert_eq!(e4m3_to_f32(E4M3_MAX), 448.0);
        assert_eq!(e4m3_to_f32(0xFE), -448.0);
        assert_eq!(f32_to_e4m3(448.0), E4M3_MAX);
        assert_eq!(e4m3_to_f32(0x08), 2f32.powi(-6)); // min normal
        assert_eq!(f32_to_e4m3(2f32.powi(-6)), 0x08);
        assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9)); // min subnormal
        assert_eq!(e4m3_to_f32(0x07), 7.0 * 2f32.powi(-9)); // max subnormal
        assert_eq!(f32_to_e4m3(2f32.powi(-9)), 0x01);
        assert_eq!(f32_to_e4m3(2f32.powi(-10)), 0x00); // tie with 0: even
        assert_eq!(f32_to_e4m3(3.0 * 2f32.powi(-10)), 0x02); // tie 1..2: even
        assert_eq!(f32_to_e4m3(-0.0), 0x80);
        assert_eq!(e4m3_to_f32(0x80).to_bits(), 0x8000_0000);
        assert!(e4m3_to_f32(0x7F).is_nan());
        assert!(e4m3_to_f32(0xFF).is_nan());
        assert_eq!(f32_to_e4m3(f32::NAN), 0x7F);
        assert_eq!(f32_to_e4m3(-f32::NAN), 0xFF);
        assert_eq!(e4m3_to_f32(0x77), 240.0); // S.1110.111: 1.875 x 2^7
    }

    #[test]
    fn e4m3_saturation_and_nan_on_overflow() {
        assert_eq!(f32_to_e4m3(464.0), E4M3_MAX); // tie 448 (even) / 480: 448
        assert_eq!(f32_to_e4m3_with(464.0, Overflow::NonFinite), E4M3_MAX);
        assert_eq!(f32_to_e4m3(464.1), E4M3_MAX);
        assert_eq!(f32_to_e4m3_with(464.1, Overflow::NonFinite), E4M3_NAN);
        assert_eq!(f32_to_e4m3(1e9), E4M3_MAX);
        assert_eq!(f32_to_e4m3(-1e9), 0xFE);
        assert_eq!(f32_to_e4m3(f32::MAX), E4M3_MAX);
        assert_eq!(f32_to_e4m3(f32::INFINITY), E4M3_MAX);
        assert_eq!(f32_to_e4m3(f32::NEG_INFINITY), 0xFE);
        assert_eq!(f32_to_e4m3_with(f32::INFINITY, Overflow::NonFinite), 0x7F);
        assert_eq!(f32_to_e4m3_with(-1e9, Overflow::NonFinite), 0xFF);
    }

    #[test]
    fn e5m2_known_values() {
        assert_eq!(f32_to_e5m2(1.0), 0x3C);
        assert_eq!(f32_to_e5m2(-2.5), 0xC1);
        assert_eq!(f32_to_e5m2(1.0 / 3.0), 0x35); // 0.3125 is nearer than 0.375
        assert_eq!(e5m2_to_f32(0x35), 0.3125);
        assert_eq!(e5m2_to_f32(E5M2_MAX), 57344.0);
        assert_eq!(e5m2_to_f32(0x04), 2f32.powi(-14)); // min normal
        assert_eq!(e5m2_to_f32(0x01), 2f32.powi(-16)); // min subnormal
        assert_eq!(e5m2_to_f32(0x03), 3.0 * 2f32.powi(-16)); // max subnormal
        assert_eq!(f32_to_e5m2(2f32.powi(-16)), 0x01);
        assert_eq!(f32_to_e5m2(2f32.powi(-17)), 0x00); // tie with 0: even
        assert_eq!(e5m2_to_f32(E5M2_INF), f32::INFINITY);
        assert_eq!(e5m2_to_f32(0xFC), f32::NEG_INFINITY);
        for b in [0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF] {
            assert!(e5m2_to_f32(b).is_nan(), "{b:#x}");
        }
        assert_eq!(f32_to_e5m2(f32::NAN), E5M2_NAN);
        assert_eq!(f32_to_e5m2(f32::INFINITY), E5M2_INF);
        assert_eq!(f32_to_e5m2(-0.0), 0x80);
        // E5M2 is the top byte of fp16: same values.
        assert_eq!(e5m2_to_f32(0x3D), 1.25);
    }

    #[test]
    fn e5m2_overflow_policies() {
        assert_eq!(f32_to_e5m2(57344.0), E5M2_MAX);
        assert_eq!(f32_to_e5m2(61439.0), E5M2_MAX);
        assert_eq!(f32_to_e5m2(61440.0), E5M2_INF); // tie 57344 (odd) / 65536: infinity
        assert_eq!(f32_to_e5m2_with(61440.0, Overflow::Saturate), E5M2_MAX);
        assert_eq!(f32_to_e5m2_with(f32::NEG_INFINITY, Overflow::Saturate), 0xFB);
        assert_eq!(f32_to_e5m2(-1e9), 0xFC);
        assert_eq!(f32_to_e5m2_with(f32::NAN, Overflow::Saturate), E5M2_NAN);
    }

    #[test]
    fn fp8_all_codes_round_trip() {
        for b in 0..=u8::MAX {
            let x = e4m3_to_f32(b);
            if b & 0x7F == 0x7F {
                assert!(x.is_nan());
                assert_eq!(f32_to_e4m3(x), b);
            } else {
                assert_eq!(f32_to_e4m3(x), b, "e4m3 {b:#04x}");
                assert_eq!(f32_to_e4m3_with(x, Overflow::NonFinite), b);
            }
            let y = e5m2_to_f32(b);
            if y.is_nan() {
                assert!(e5m2_to_f32(f32_to_e5m2(y)).is_nan(), "e5m2 {b:#04x}");
            } else {
                assert_eq!(f32_to_e5m2(y), b, "e5m2 {b:#04x}");
            }
        }
    }

    #[test]
    fn fp8_values_are_monotone_in_code() {
        for b in 1..0x7Fu8 {
            assert!(e4m3_to_f32(b) > e4m3_to_f32(b - 1), "e4m3 {b:#x}");
        }
        for b in 1..0x7Cu8 {
            assert!(e5m2_to_f32(b) > e5m2_to_f32(b - 1), "e5m2 {b:#x}");
        }
    }

    /// Every sampled finite f32 goes to the nearest code, ties to the even code.
    fn check_nearest(enc: fn(f32) -> u8, dec: fn(u8) -> f32, max_code: u8) {
        let max = dec(max_code) as f64;
        for bits in (0..=u32::MAX).step_by(65_521) {
            let x = f32::from_bits(bits);
            if !x.is_finite() || (x.abs() as f64) > max {
                continue;
            }
            let c = enc(x);
            let e = (x as f64 - dec(c) as f64).abs();
            for n in 0..=u8::MAX {
                let v = dec(n);
                if n & 0x7F > max_code || (n ^ c) & 0x80 != 0 {
                    continue;
                }
                let en = (x as f64 - v as f64).abs();
                assert!(e < en || (e == en && (c & 1 == 0 || n == c)), "{bits:#x}: {c:#x} vs {n:#x}");
            }
        }
    }

    #[test]
    fn fp8_rne_is_nearest_on_sampled_f32() {
        check_nearest(f32_to_e4m3, e4m3_to_f32, E4M3_MAX);
        check_nearest(f32_to_e5m2, e5m2_to_f32, E5M2_MAX);
    }
}
