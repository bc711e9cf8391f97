//! The rounding core shared by the narrow binary formats (fp16, FP8 E4M3, FP8 E5M2): an f32
//! magnitude rounded to the nearest code of a smaller format, ties to even, and back.
//!
//! A "code" is the format's bit pattern without its sign bit: the biased exponent field above
//! `mbits` mantissa bits. Codes are monotone in the value they encode, so rounding up to the next
//! code carries from the mantissa into the exponent naturally. Overflow, infinities and NaN are
//! left to the callers, because each format treats them differently.

/// The shape of a narrow binary floating-point format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    /// Exponent bias (15 for fp16 and E5M2, 7 for E4M3).
    pub bias: i32,
    /// Explicit mantissa bits (10, 2, 3).
    pub mbits: u32,
}

/// Shifts `v` right by `s` bits, rounding to nearest with ties to even.
fn shift_rne(v: u32, s: u32) -> u32 {
    if s == 0 {
        return v;
    }
    if s > 40 {
        return 0;
    }
    let v = v as u64;
    let q = v >> s;
    let rem = v & ((1u64 << s) - 1);
    let half = 1u64 << (s - 1);
    let up = rem > half || (rem == half && q & 1 == 1);
    (q + up as u64) as u32
}

/// Rounds the magnitude of a finite f32, given as its bits with the sign cleared, to the nearest
/// code of `shape` (ties to even), subnormals included. The result may exceed the format's
/// largest finite code; the caller decides what overflow means.
pub(crate) fn round_magnitude(abs_bits: u32, shape: Shape) -> u32 {
    let bexp = (abs_bits >> 23) as i32;
    let frac = abs_bits & 0x7F_FFFF;
    let (exp, sig) = if bexp == 0 { (-126, frac) } else { (bexp - 127, frac | 0x80_0000) };
    let emin = 1 - shape.bias;
    let drop = 23 - shape.mbits;
    if exp >= emin {
        let full = (((exp + shape.bias) as u32) << 23) | frac;
        shift_rne(full, drop)
    } else {
        shift_rne(sig, drop + (emin - exp) as u32)
    }
}

/// The value of a finite code of `shape` (no sign), exactly.
pub(crate) fn decode_magnitude(code: u32, shape: Shape) -> f32 {
    let e = (code >> shape.mbits) as i32;
    let m = code & ((1 << shape.mbits) - 1);
    if e == 0 {
        let ulp = f32::from_bits(((127 + 1 - shape.bias - shape.mbits as i32) as u32) << 23);
        m as f32 * ulp
    } else {
        f32::from_bits((((e - shape.bias + 127) as u32) << 23) | (m << (23 - shape.mbits)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_rne_ties_to_even() {
        assert_eq!(shift_rne(0b1010, 2), 0b10); // 2.5 -> 2
        assert_eq!(shift_rne(0b1110, 2), 0b100); // 3.5 -> 4
        assert_eq!(shift_rne(0b1011, 2), 0b11); // 2.75 -> 3
        assert_eq!(shift_rne(0b1001, 2), 0b10); // 2.25 -> 2
        assert_eq!(shift_rne(u32::MAX, 33), 0); // just under one half
        assert_eq!(shift_rne(1 << 31, 32), 0); // one half, tie to even 0
        assert_eq!(shift_rne(3 << 30, 32), 1); // three quarters
        assert_eq!(shift_rne(u32::MAX, 41), 0);
    }
}
