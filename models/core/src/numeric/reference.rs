//! Reference matrix multiplies for checking the tensor engine's functional output: the
//! `nc_matmul` contract stationary.T @ moving (spec §2), with stationary K x M and moving K x N,
//! both row-major with K (the SBUF partition axis) outermost, and an M x N row-major result
//! (the PSUM partition axis M outermost).
//!
//! Accumulation is in FP32 (spec §2: "Accumulation is FP32 inside the array"). The order in
//! which the systolic array adds the K products is modelled as sequential, k = 0, 1, ..., K-1,
//! each product rounded to f32 and then added with one rounding (no fused multiply-add). The
//! real array's adder order and any internal extra precision are not modelled, so results can
//! differ from hardware in the last bits for long K. PSUM accumulation across instructions is
//! the caller's: add this result to the bank's contents.

use super::fp8::e4m3_to_f32;
use super::mx::{E8M0_NAN, MX_BLOCK};

/// An MXFP8 E4M3 matmul operand in the layout of [`super::mx::quantize_mx_along_k`]: K x C
/// element bytes row-major, and (K / 32) x C scale bytes row-major (one per 32 rows of K per
/// column).
#[derive(Clone, Copy, Debug)]
pub struct MxOperand<'a> {
    /// E4M3 element bytes, K x C row-major.
    pub elements: &'a [u8],
    /// E8M0 scale bytes, ceil(K / 32) x C row-major.
    pub scales: &'a [u8],
}

/// stationary.T @ moving for `stationary` K x M and `moving` K x N (row-major f32), giving
/// M x N row-major: `out[i][j]` = sum over k, in order, of `stationary[k][i] * moving[k][j]`, in f32.
/// Inputs already rounded to BF16/FP16/FP8 give exact products; FP32 inputs round each product.
///
/// # Panics
/// If `stationary.len() != k * m` or `moving.len() != k * n`.
pub fn matmul_ref(stationary: &[f32], moving: &[f32], k: usize, m: usize, n: usize) -> Vec<f32> {
    assert_eq!(stationary.len(), k * m, "matmul_ref: stationary must be k x m");
    assert_eq!(moving.len(), k * n, "matmul_ref: moving must be k x n");
    let mut out = vec![0f32; m * n];
    for kk in 0..k {
        let (s_row, m_row) = (&stationary[kk * m..][..m], &moving[kk * n..][..n]);
        for (i, &s) in s_row.iter().enumerate() {
            for (o, &v) in out[i * n..][..n].iter_mut().zip(m_row) {
                *o += s * v;
            }
        }
    }
    out
}

/// The exact value of element `idx` of an MX operand with `cols` columns, in f64 (E4M3 times
/// 2^(scale - 127) always fits; a NaN scale gives NaN).
fn mx_value(op: &MxOperand<'_>, idx: usize, cols: usize) -> f64 {
    let scale = op.scales[(idx / cols / MX_BLOCK) * cols + idx % cols];
    if scale == E8M0_NAN {
        return f64::NAN;
    }
    e4m3_to_f32(op.elements[idx]) as f64 * 2f64.powi(scale as i32 - 127)
}

/// The MXFP8 matmul of `nc_matmul_mx` (v4): stationary.T @ moving with both operands MXFP8
/// E4M3 scaled in groups of 32 along K. Each product of two scaled elements is formed exactly
/// and rounded once to f32, then accumulated in f32 in K order as in [`matmul_ref`]. The
/// hardware's internal dot-product precision for MX groups is not published and not modelled.
///
/// # Panics
/// If the element slices are not K x M and K x N, or the scale slices not ceil(K/32) x M and
/// ceil(K/32) x N.
pub fn matmul_mx_ref(stationary: MxOperand<'_>, moving: MxOperand<'_>, k: usize, m: usize, n: usize) -> Vec<f32> {
    let groups = k.div_ceil(MX_BLOCK);
    assert_eq!(stationary.elements.len(), k * m, "matmul_mx_ref: stationary must be k x m");
    assert_eq!(moving.elements.len(), k * n, "matmul_mx_ref: moving must be k x n");
    assert_eq!(stationary.scales.len(), groups * m, "matmul_mx_ref: stationary scale count");
    assert_eq!(moving.scales.len(), groups * n, "matmul_mx_ref: moving scale count");
    let mut out = vec![0f32; m * n];
    for kk in 0..k {
        for i in 0..m {
            let s = mx_value(&stationary, kk * m + i, m);
            for (j, o) in out[i * n..][..n].iter_mut().enumerate() {
                *o += (s * mx_value(&moving, kk * n + j, n)) as f32;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Dtype;
    use crate::numeric::codec::round_to;
    use crate::numeric::mx::{dequantize_mx_along_k, quantize_mx_along_k};
    use crate::numeric::testing::random_values;

    #[test]
    fn matmul_ref_small_hand_example() {
        // stationary (K=2, M=2) = [[1, 2], [3, 4]]; moving (K=2, N=3) = [[1, 0, 2], [0, 1, 1]].
        // stationary.T = [[1, 3], [2, 4]]; result = [[1, 3, 5], [2, 4, 8]].
        let out = matmul_ref(&[1.0, 2.0, 3.0, 4.0], &[1.0, 0.0, 2.0, 0.0, 1.0, 1.0], 2, 2, 3);
        assert_eq!(out, vec![1.0, 3.0, 5.0, 2.0, 4.0, 8.0]);
    }

    #[test]
    fn matmul_ref_accumulates_in_k_order_in_f32() {
        // Products 1e8, 1, -1e8 in K order: f32 sequential accumulation gives 0, not 1.
        let out = matmul_ref(&[1e8, 1.0, -1e8], &[1.0, 1.0, 1.0], 3, 1, 1);
        assert_eq!(out, vec![0.0]);
        let out = matmul_ref(&[1e8, -1e8, 1.0], &[1.0, 1.0, 1.0], 3, 1, 1);
        assert_eq!(out, vec![1.0]);
    }

    #[test]
    fn matmul_ref_matches_f64_within_accumulation_bound() {
        let (k, m, n) = (128, 8, 16);
        let s: Vec<f32> = random_values(k * m, 3).iter().map(|&x| round_to(Dtype::Bf16, x)).collect();
        let v: Vec<f32> = random_values(k * n, 4).iter().map(|&x| round_to(Dtype::Bf16, x)).collect();
        let out = matmul_ref(&s, &v, k, m, n);
        for i in 0..m {
            for j in 0..n {
                let exact: f64 = (0..k).map(|kk| s[kk * m + i] as f64 * v[kk * n + j] as f64).sum();
                let mag: f64 = (0..k).map(|kk| (s[kk * m + i] as f64 * v[kk * n + j] as f64).abs()).sum();
                // Sequential summation: |error| <= (K - 1) u sum|p|, u = 2^-24.
                let bound = (k as f64 - 1.0) * 2f64.powi(-24) * mag;
                assert!((out[i * n + j] as f64 - exact).abs() <= bound, "({i},{j})");
            }
        }
    }

    #[test]
    fn matmul_mx_ref_equals_matmul_of_dequantized() {
        let (k, m, n) = (96, 4, 5);
        let s = random_values(k * m, 11);
        let v = random_values(k * n, 12);
        let (se, ss) = quantize_mx_along_k(&s, k, m);
        let (ve, vs) = quantize_mx_along_k(&v, k, n);
        let mx =
            matmul_mx_ref(MxOperand { elements: &se, scales: &ss }, MxOperand { elements: &ve, scales: &vs }, k, m, n);
        let plain = matmul_ref(&dequantize_mx_along_k(&se, &ss, k, m), &dequantize_mx_along_k(&ve, &vs, k, n), k, m, n);
        assert_eq!(mx, plain);
        // And close to the unquantized product (loose: per-element error up to 2^-3).
        let exact = matmul_ref(&s, &v, k, m, n);
        let mag = matmul_ref(
            &s.iter().map(|x| x.abs()).collect::<Vec<_>>(),
            &v.iter().map(|x| x.abs()).collect::<Vec<_>>(),
            k,
            m,
            n,
        );
        for ((a, b), g) in mx.iter().zip(&exact).zip(&mag) {
            assert!((a - b).abs() <= 0.27 * g, "{a} vs {b}");
        }
    }

    #[test]
    fn matmul_mx_ref_products_do_not_overflow_through_dequantization() {
        // 448 x 2^127 overflows f32, but times 448 x 2^-127 the product is 200704, exact.
        let big = MxOperand { elements: &[0x7E], scales: &[254] };
        let small = MxOperand { elements: &[0x7E], scales: &[0] };
        assert_eq!(matmul_mx_ref(big, small, 1, 1, 1), vec![448.0 * 448.0]);
        let nan = MxOperand { elements: &[0x38], scales: &[E8M0_NAN] };
        assert!(matmul_mx_ref(nan, small, 1, 1, 1)[0].is_nan());
    }
}
