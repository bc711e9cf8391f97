//! OCP Microscaling (MX v1.0) MXFP8 E4M3: blocks of [`MX_BLOCK`] E4M3 elements sharing one
//! E8M0 scale byte, as the NC-v4 tensor engine consumes them (`nc_matmul_mx`, spec §2) and the
//! v4 vector engine's QuantizeMX produces them.
//!
//! Quantization follows the OCP MX v1.0 §6.3 algorithm: shared exponent =
//! floor(log2(max |v|)) - [`E4M3_EMAX`], clamped to the E8M0 range [-127, 127]; each element is
//! v / 2^shared rounded to nearest even and saturated to ±448. Decisions the spec leaves open:
//! - an all-zero block (max |v| = 0) gets the smallest scale, 2^-127 (byte 0x00), as the clamp
//!   gives for any tiny maximum (the choice of the reference `microxcaling` library);
//! - a block holding an infinity or NaN gets the NaN scale 0xFF and NaN elements.
//!
//! Leaves out MXFP4/MXFP6 elements, the hardware's exact QuantizeMX rounding, and stochastic
//! rounding of elements.

use super::fp8::{e4m3_to_f32, f32_to_e4m3, E4M3_NAN};

/// Elements per scale group (OCP MX k = 32).
pub const MX_BLOCK: usize = 32;
/// The exponent of the largest power of two in E4M3 (448 = 1.75 x 2^8): emax_elem of OCP MX.
pub const E4M3_EMAX: i32 = 8;
/// The E8M0 NaN scale byte.
pub const E8M0_NAN: u8 = 0xFF;

/// Decodes an E8M0 scale byte: 2^(b - 127) for b in 0..=254 (b = 0 is 2^-127, an f32
/// subnormal but exact), NaN for 0xFF.
pub fn e8m0_to_f32(b: u8) -> f32 {
    match b {
        E8M0_NAN => f32::NAN,
        0 => f32::from_bits(0x0040_0000),
        _ => f32::from_bits((b as u32) << 23),
    }
}

/// floor(log2(x)) for a finite positive f32, subnormals included.
fn floor_log2(x: f32) -> i32 {
    let bits = x.to_bits();
    match bits >> 23 {
        0 => (31 - bits.leading_zeros()) as i32 - 149,
        bexp => bexp as i32 - 127,
    }
}

/// The E8M0 scale byte OCP MX assigns to a block (any length): see the module doc for the
/// all-zero and non-finite cases.
pub fn mx_scale(block: &[f32]) -> u8 {
    if block.iter().any(|v| !v.is_finite()) {
        return E8M0_NAN;
    }
    let amax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
    if amax == 0.0 {
        return 0;
    }
    let shared = (floor_log2(amax) - E4M3_EMAX).clamp(-127, 127);
    (shared + 127) as u8
}

/// Quantizes one block into `elements` (same length) and returns its scale byte.
fn quantize_block(block: &[f32], elements: &mut [u8]) -> u8 {
    let scale = mx_scale(block);
    if scale == E8M0_NAN {
        elements.fill(E4M3_NAN);
        return scale;
    }
    let x = e8m0_to_f32(scale);
    for (e, &v) in elements.iter_mut().zip(block) {
        *e = f32_to_e4m3(v / x);
    }
    scale
}

/// Quantizes `values` to MXFP8 E4M3 in consecutive blocks of [`MX_BLOCK`] (the last block may be
/// shorter). Returns (elements, one per value; scales, one per block).
pub fn quantize_mx(values: &[f32]) -> (Vec<u8>, Vec<u8>) {
    let mut elements = vec![0; values.len()];
    let mut scales = vec![0; values.len().div_ceil(MX_BLOCK)];
    quantize_mx_into(values, &mut elements, &mut scales);
    (elements, scales)
}

/// [`quantize_mx`] into caller-provided buffers.
///
/// # Panics
/// If `elements.len() != values.len()` or `scales.len() != values.len().div_ceil(MX_BLOCK)`.
pub fn quantize_mx_into(values: &[f32], elements: &mut [u8], scales: &mut [u8]) {
    assert_eq!(elements.len(), values.len(), "quantize_mx: element buffer length");
    assert_eq!(scales.len(), values.len().div_ceil(MX_BLOCK), "quantize_mx: scale buffer length");
    let blocks = values.chunks(MX_BLOCK).zip(elements.chunks_mut(MX_BLOCK));
    for ((block, out), scale) in blocks.zip(scales.iter_mut()) {
        *scale = quantize_block(block, out);
    }
}

/// Dequantizes MXFP8 E4M3 in consecutive blocks of [`MX_BLOCK`]: element x 2^(scale - 127),
/// rounded once to f32 (so it can overflow to infinity or round as a subnormal only when the
/// exact value is outside f32's normal range). A NaN scale makes the whole block NaN.
///
/// # Panics
/// If `scales.len() != elements.len().div_ceil(MX_BLOCK)`.
pub fn dequantize_mx(elements: &[u8], scales: &[u8]) -> Vec<f32> {
    let mut out = vec![0.0; elements.len()];
    dequantize_mx_into(elements, scales, &mut out);
    out
}

/// [`dequantize_mx`] into a caller-provided buffer.
///
/// # Panics
/// If `out.len() != elements.len()` or `scales.len() != elements.len().div_ceil(MX_BLOCK)`.
pub fn dequantize_mx_into(elements: &[u8], scales: &[u8], out: &mut [f32]) {
    assert_eq!(out.len(), elements.len(), "dequantize_mx: output length");
    assert_eq!(scales.len(), elements.len().div_ceil(MX_BLOCK), "dequantize_mx: scale count");
    let blocks = elements.chunks(MX_BLOCK).zip(out.chunks_mut(MX_BLOCK));
    for ((block, out), &scale) in blocks.zip(scales) {
        let x = e8m0_to_f32(scale);
        for (o, &e) in out.iter_mut().zip(block) {
            *o = e4m3_to_f32(e) * x;
        }
    }
}

/// Quantizes a K x `cols` row-major matrix with scale groups of [`MX_BLOCK`] along K (the
/// contraction axis, as `nc_matmul_mx` groups them): element (k, c) stays at `k * cols + c`,
/// and the scale of group g of column c is at `g * cols + c` ((K / 32) x `cols` row-major; a
/// last partial group when K is not a multiple of 32).
///
/// # Panics
/// If `values.len() != k * cols`.
pub fn quantize_mx_along_k(values: &[f32], k: usize, cols: usize) -> (Vec<u8>, Vec<u8>) {
    assert_eq!(values.len(), k * cols, "quantize_mx_along_k: values must be k x cols");
    let mut elements = vec![0; values.len()];
    let mut scales = vec![0; k.div_ceil(MX_BLOCK) * cols];
    let (mut block, mut codes) = ([0f32; MX_BLOCK], [0u8; MX_BLOCK]);
    for g in 0..k.div_ceil(MX_BLOCK) {
        let rows = g * MX_BLOCK..k.min((g + 1) * MX_BLOCK);
        let len = rows.len();
        for c in 0..cols {
            for (i, r) in rows.clone().enumerate() {
                block[i] = values[r * cols + c];
            }
            scales[g * cols + c] = quantize_block(&block[..len], &mut codes[..len]);
            for (i, r) in rows.clone().enumerate() {
                elements[r * cols + c] = codes[i];
            }
        }
    }
    (elements, scales)
}

/// Dequantizes the layout of [`quantize_mx_along_k`] back to a K x `cols` row-major matrix.
///
/// # Panics
/// If `elements.len() != k * cols` or `scales.len() != k.div_ceil(MX_BLOCK) * cols`.
pub fn dequantize_mx_along_k(elements: &[u8], scales: &[u8], k: usize, cols: usize) -> Vec<f32> {
    assert_eq!(elements.len(), k * cols, "dequantize_mx_along_k: elements must be k x cols");
    assert_eq!(scales.len(), k.div_ceil(MX_BLOCK) * cols, "dequantize_mx_along_k: scale count");
    let scale_of = |i: usize| scales[(i / cols / MX_BLOCK) * cols + i % cols];
    elements.iter().enumerate().map(|(i, &e)| e4m3_to_f32(e) * e8m0_to_f32(scale_of(i))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::testing::random_values;

    #[test]
    fn e8m0_known_values() {
        assert_eq!(e8m0_to_f32(127), 1.0);
        assert_eq!(e8m0_to_f32(128), 2.0);
        assert_eq!(e8m0_to_f32(126), 0.5);
        assert_eq!(e8m0_to_f32(0), 2f32.powi(-127));
        assert_eq!(e8m0_to_f32(1), 2f32.powi(-126));
        assert_eq!(e8m0_to_f32(254), 2f32.powi(127));
        assert!(e8m0_to_f32(E8M0_NAN).is_nan());
    }

    #[test]
    fn mx_scale_follows_ocp_shared_exponent() {
        assert_eq!(mx_scale(&[1.0, -0.5]), 127 - 8); // floor(log2 1) - 8
        assert_eq!(mx_scale(&[448.0]), 127); // 448 needs no scaling
        assert_eq!(mx_scale(&[511.9]), 127);
        assert_eq!(mx_scale(&[512.0]), 128);
        assert_eq!(mx_scale(&[-3.0, 0.1]), 127 + 1 - 8);
        assert_eq!(mx_scale(&[f32::MAX]), 127 + 127 - 8);
        assert_eq!(mx_scale(&[2f32.powi(-119)]), 0); // exactly -127
        assert_eq!(mx_scale(&[2f32.powi(-130)]), 0); // clamped
        assert_eq!(mx_scale(&[f32::from_bits(1)]), 0); // smallest subnormal, clamped
        assert_eq!(mx_scale(&[1.0, f32::INFINITY]), E8M0_NAN);
        assert_eq!(mx_scale(&[f32::NAN]), E8M0_NAN);
    }

    #[test]
    fn mx_floor_log2_handles_subnormals() {
        assert_eq!(floor_log2(1.0), 0);
        assert_eq!(floor_log2(1.99), 0);
        assert_eq!(floor_log2(0.75), -1);
        assert_eq!(floor_log2(f32::from_bits(1)), -149);
        assert_eq!(floor_log2(f32::from_bits(3)), -148);
        assert_eq!(floor_log2(f32::from_bits(0x0040_0000)), -127);
    }

    #[test]
    fn mx_zero_block_gets_smallest_scale() {
        let (e, s) = quantize_mx(&[0.0; 32]);
        assert_eq!(s, vec![0]);
        assert!(e.iter().all(|&b| b == 0));
        let (e, s) = quantize_mx(&[-0.0; 5]);
        assert_eq!((s, e), (vec![0], vec![0x80; 5]));
        assert!(dequantize_mx(&[0; 32], &[0]).iter().all(|&v| v == 0.0));
    }

    #[test]
    fn mx_block_max_maps_into_top_binade() {
        let mut v = vec![0.25f32; 32];
        v[7] = -300.0; // floor(log2 300) = 8: scale 2^0
        let (e, s) = quantize_mx(&v);
        assert_eq!(s, vec![127]);
        assert_eq!(e4m3_to_f32(e[7]), -288.0); // 300 rounds to 288 (1.125 x 2^8)
        assert_eq!(e4m3_to_f32(e[0]), 0.25);
        // 500 in [448, 512) saturates to 448.
        let (e, s) = quantize_mx(&[500.0, 1.0]);
        assert_eq!((s, e4m3_to_f32(e[0]), e4m3_to_f32(e[1])), (vec![127], 448.0, 1.0));
    }

    #[test]
    fn mx_non_finite_block_is_nan() {
        let mut v = vec![1.0f32; 64];
        v[40] = f32::NEG_INFINITY;
        let (e, s) = quantize_mx(&v);
        assert_eq!(s, vec![119, E8M0_NAN]);
        assert!(e[32..].iter().all(|&b| b == E4M3_NAN));
        let d = dequantize_mx(&e, &s);
        assert!(d[..32].iter().all(|&x| x == 1.0));
        assert!(d[32..].iter().all(|x| x.is_nan()));
    }

    #[test]
    fn mx_round_trip_error_bound_on_random_data() {
        let values = random_values(32 * 64 + 13, 0x1234_5678);
        let (e, s) = quantize_mx(&values);
        assert_eq!(s.len(), 65);
        let back = dequantize_mx(&e, &s);
        for (i, (&v, &q)) in values.iter().zip(&back).enumerate() {
            let x = e8m0_to_f32(s[i / MX_BLOCK]) as f64;
            let scaled = v as f64 / x;
            let err = (q as f64 - v as f64).abs();
            if scaled.abs() >= 2f64.powi(-6) {
                // E4M3 normal range: 3 mantissa bits (<= 2^-4), or saturation 512 -> 448 (< 2^-3).
                assert!(err <= v.abs() as f64 * 0.125, "{i}: {v} -> {q}");
                if scaled.abs() <= 464.0 {
                    assert!(err <= v.abs() as f64 / 16.0, "{i}: {v} -> {q}");
                }
            } else {
                // Subnormal elements: absolute error at most half of 2^-9, times the scale.
                assert!(err <= 2f64.powi(-10) * x, "{i}: {v} -> {q}");
            }
        }
    }

    #[test]
    fn mx_codes_round_trip_exactly() {
        // Dequantized MX values quantize back to the same codes and scale.
        let values = random_values(32 * 8, 99);
        let (e, s) = quantize_mx(&values);
        let back = dequantize_mx(&e, &s);
        let (e2, s2) = quantize_mx(&back);
        assert_eq!(s2, s);
        assert_eq!(e2, e);
    }

    #[test]
    fn mx_along_k_matches_per_column_blocks() {
        let (k, cols) = (70, 3);
        let values = random_values(k * cols, 7);
        let (e, s) = quantize_mx_along_k(&values, k, cols);
        assert_eq!(s.len(), 3 * cols);
        for c in 0..cols {
            let column: Vec<f32> = (0..k).map(|r| values[r * cols + c]).collect();
            let (ce, cs) = quantize_mx(&column);
            for g in 0..3 {
                assert_eq!(s[g * cols + c], cs[g]);
            }
            for r in 0..k {
                assert_eq!(e[r * cols + c], ce[r]);
            }
        }
        let back = dequantize_mx_along_k(&e, &s, k, cols);
        for r in 0..k {
            for c in 0..cols {
                let sc = e8m0_to_f32(s[(r / MX_BLOCK) * cols + c]);
                assert_eq!(back[r * cols + c], e4m3_to_f32(e[r * cols + c]) * sc);
            }
        }
    }
}
