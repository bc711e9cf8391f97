//! Element encoding between f32 (the engines' working type, spec §2: "arithmetic is in FP32 with
//! free casts") and the little-endian byte layout of each [`Dtype`] in SBUF and PSUM.
//!
//! Rounding and overflow per type: BF16 and FP16 round to nearest even and overflow to infinity;
//! FP8 E4M3 (and the elements of MXFP8) round to nearest even and saturate to ±448; FP8 E5M2
//! rounds to nearest even and overflows to infinity; FP32 is stored bit for bit; I32 rounds
//! toward zero and saturates (NaN becomes 0). For [`Dtype::MxFp8E4m3`] these functions handle the
//! E4M3 element bytes only, as if every scale were 1: the scales live in a separate access
//! pattern and are applied with [`super::mx`]. Leaves out stochastic rounding (see
//! [`super::bf16::f32_to_bf16_sr`]) and non-default FP8 overflow modes (see [`super::fp8`]).

use super::bf16::{bf16_to_f32, f32_to_bf16};
use super::fp16::{f32_to_fp16, fp16_to_f32};
use super::fp8::{e4m3_to_f32, e5m2_to_f32, f32_to_e4m3, f32_to_e5m2};
use crate::isa::Dtype;

/// Encodes `values` as `dtype`, little-endian, `dtype.bytes()` bytes per element.
pub fn encode(dtype: Dtype, values: &[f32]) -> Vec<u8> {
    let mut out = vec![0; values.len() * dtype.bytes() as usize];
    encode_into(dtype, values, &mut out);
    out
}

/// Decodes little-endian `dtype` elements to f32 (exact for every type except I32 values beyond
/// 2^24, which round to nearest even).
///
/// # Panics
/// If `bytes.len()` is not a multiple of `dtype.bytes()`.
pub fn decode(dtype: Dtype, bytes: &[u8]) -> Vec<f32> {
    let width = dtype.bytes() as usize;
    assert_eq!(bytes.len() % width, 0, "decode: {} bytes is not a whole number of {}", bytes.len(), dtype.name());
    let mut out = vec![0.0; bytes.len() / width];
    decode_into(dtype, bytes, &mut out);
    out
}

/// [`encode`] into a caller-provided buffer, without allocating.
///
/// # Panics
/// If `out.len() != values.len() * dtype.bytes()`.
pub fn encode_into(dtype: Dtype, values: &[f32], out: &mut [u8]) {
    let width = dtype.bytes() as usize;
    assert_eq!(out.len(), values.len() * width, "encode_into: buffer length for {}", dtype.name());
    match dtype {
        Dtype::Bf16 => fill(values, out, |x| f32_to_bf16(x).to_le_bytes()),
        Dtype::Fp16 => fill(values, out, |x| f32_to_fp16(x).to_le_bytes()),
        Dtype::Fp32 => fill(values, out, f32::to_le_bytes),
        Dtype::Fp8E4m3 | Dtype::MxFp8E4m3 => fill(values, out, |x| [f32_to_e4m3(x)]),
        Dtype::Fp8E5m2 => fill(values, out, |x| [f32_to_e5m2(x)]),
        Dtype::I32 => fill(values, out, |x| (x as i32).to_le_bytes()),
    }
}

/// [`decode`] into a caller-provided buffer, without allocating.
///
/// # Panics
/// If `bytes.len() != out.len() * dtype.bytes()`.
pub fn decode_into(dtype: Dtype, bytes: &[u8], out: &mut [f32]) {
    let width = dtype.bytes() as usize;
    assert_eq!(bytes.len(), out.len() * width, "decode_into: buffer length for {}", dtype.name());
    match dtype {
        Dtype::Bf16 => read(bytes, out, |b: [u8; 2]| bf16_to_f32(u16::from_le_bytes(b))),
        Dtype::Fp16 => read(bytes, out, |b: [u8; 2]| fp16_to_f32(u16::from_le_bytes(b))),
        Dtype::Fp32 => read(bytes, out, f32::from_le_bytes),
        Dtype::Fp8E4m3 | Dtype::MxFp8E4m3 => read(bytes, out, |b: [u8; 1]| e4m3_to_f32(b[0])),
        Dtype::Fp8E5m2 => read(bytes, out, |b: [u8; 1]| e5m2_to_f32(b[0])),
        Dtype::I32 => read(bytes, out, |b: [u8; 4]| i32::from_le_bytes(b) as f32),
    }
}

/// Rounds `x` to the nearest value `dtype` can hold (encode then decode one element): the
/// engines' "free cast" on write.
pub fn round_to(dtype: Dtype, x: f32) -> f32 {
    let mut bytes = [0u8; 4];
    let width = dtype.bytes() as usize;
    encode_into(dtype, &[x], &mut bytes[..width]);
    let mut y = [0.0];
    decode_into(dtype, &bytes[..width], &mut y);
    y[0]
}

/// Writes `f(value)` for each value into consecutive `W`-byte chunks of `out`.
fn fill<const W: usize>(values: &[f32], out: &mut [u8], f: impl Fn(f32) -> [u8; W]) {
    for (chunk, &x) in out.chunks_exact_mut(W).zip(values) {
        chunk.copy_from_slice(&f(x));
    }
}

/// Reads consecutive `W`-byte chunks of `bytes` through `f` into `out`.
fn read<const W: usize>(bytes: &[u8], out: &mut [f32], f: impl Fn([u8; W]) -> f32) {
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(W)) {
        let mut b = [0u8; W];
        b.copy_from_slice(chunk);
        *o = f(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_little_endian_layouts() {
        assert_eq!(encode(Dtype::Bf16, &[1.0, -2.5]), vec![0x80, 0x3F, 0x20, 0xC0]);
        assert_eq!(encode(Dtype::Fp16, &[1.0, -2.5]), vec![0x00, 0x3C, 0x00, 0xC1]);
        assert_eq!(encode(Dtype::Fp32, &[1.0]), vec![0x00, 0x00, 0x80, 0x3F]);
        assert_eq!(encode(Dtype::Fp8E4m3, &[1.0, -2.5, 1e6]), vec![0x38, 0xC2, 0x7E]);
        assert_eq!(encode(Dtype::MxFp8E4m3, &[1.0]), vec![0x38]);
        assert_eq!(encode(Dtype::Fp8E5m2, &[1.0, -2.5, 1e6]), vec![0x3C, 0xC1, 0x7C]);
        assert_eq!(encode(Dtype::I32, &[-2.0]), vec![0xFE, 0xFF, 0xFF, 0xFF]);
    }

    #[test]
    fn codec_i32_truncates_and_saturates() {
        let v = [2.7, -2.7, 1e10, -1e10, f32::NAN, f32::INFINITY, -0.0, 16_777_217.0];
        let back = decode(Dtype::I32, &encode(Dtype::I32, &v));
        let ints: Vec<i32> =
            encode(Dtype::I32, &v).chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(ints, vec![2, -2, i32::MAX, i32::MIN, 0, i32::MAX, 0, 16_777_216]);
        assert_eq!(back[0], 2.0);
        assert_eq!(back[2], 2_147_483_648.0); // i32::MAX rounds to 2^31 in f32
    }

    #[test]
    fn codec_round_trips_every_type() {
        let v = [0.0, -0.0, 1.0, -2.5, 0.5, 3.0, 96.0, -0.125];
        for dtype in Dtype::ALL {
            let back = decode(dtype, &encode(dtype, &v));
            for (&a, &b) in v.iter().zip(&back) {
                if dtype == Dtype::I32 {
                    assert_eq!(b, a.trunc(), "{}", dtype.name());
                } else {
                    assert_eq!(a.to_bits(), b.to_bits(), "{}", dtype.name());
                }
            }
        }
    }

    #[test]
    fn codec_fp32_is_bit_exact_including_nan_payloads() {
        let v = [f32::from_bits(0x7F80_0001), f32::from_bits(0xFFC1_2345), f32::MIN_POSITIVE / 3.0];
        let back = decode(Dtype::Fp32, &encode(Dtype::Fp32, &v));
        let bits: Vec<u32> = back.iter().map(|x| x.to_bits()).collect();
        assert_eq!(bits, v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn codec_into_matches_allocating_versions() {
        let v = [1.0 / 3.0, -7.25, 1e-3, 65_000.0];
        for dtype in Dtype::ALL {
            let mut buf = [0u8; 16];
            let n = v.len() * dtype.bytes() as usize;
            encode_into(dtype, &v, &mut buf[..n]);
            assert_eq!(&buf[..n], &encode(dtype, &v)[..]);
            let mut out = [0f32; 4];
            decode_into(dtype, &buf[..n], &mut out);
            assert_eq!(out.to_vec(), decode(dtype, &buf[..n]));
            for (i, &x) in v.iter().enumerate() {
                assert_eq!(round_to(dtype, x).to_bits(), out[i].to_bits());
            }
        }
    }

    #[test]
    fn codec_round_to_known_values() {
        assert_eq!(round_to(Dtype::Bf16, 1.0 / 3.0), f32::from_bits(0x3EAB_0000));
        assert_eq!(round_to(Dtype::Fp16, 1.0 / 3.0), 0.333_251_95);
        assert_eq!(round_to(Dtype::Fp8E4m3, 1e6), 448.0);
        assert_eq!(round_to(Dtype::Fp8E5m2, 1e6), f32::INFINITY);
        assert_eq!(round_to(Dtype::I32, -3.9), -3.0);
    }

    #[test]
    #[should_panic(expected = "buffer length")]
    fn codec_encode_into_rejects_wrong_length() {
        encode_into(Dtype::Bf16, &[1.0, 2.0], &mut [0u8; 3]);
    }

    #[test]
    #[should_panic(expected = "whole number")]
    fn codec_decode_rejects_partial_element() {
        decode(Dtype::Fp32, &[0u8; 6]);
    }
}
