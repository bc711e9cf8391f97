//! Number formats and element-wise math for the functional mode: the engines compute in FP32
//! (spec §2: "arithmetic is in FP32 with free casts") and convert on every SBUF/PSUM read and
//! write, so this module supplies bit-exact conversions between f32 and each [`Dtype`], the
//! FP32 activation and ALU functions, and reference matmuls to check kernels against.
//!
//! - [`bf16`], [`fp16`], [`fp8`]: conversions (round to nearest even; BF16 stochastic rounding);
//! - [`mx`]: E8M0 scales and MXFP8 E4M3 blocks of 32 (OCP MX v1.0);
//! - [`codec`]: [`Dtype`]-generic little-endian encode/decode of slices;
//! - [`math`]: activations, binary ALU operations, left-to-right reductions;
//! - [`reference`](mod@reference): FP32-accumulating matmul references (plain and MXFP8).
//!
//! Leaves out: timing (the cost model lives elsewhere), the hardware's transcendental
//! approximations, exception flags, and MXFP4/MXFP6.
//!
//! [`Dtype`]: crate::isa::Dtype

pub mod bf16;
pub mod codec;
pub mod fp16;
pub mod fp8;
pub mod math;
pub mod mx;
pub mod reference;
mod round;

pub use bf16::{bf16_to_f32, f32_to_bf16, f32_to_bf16_sr};
pub use codec::{decode, decode_into, encode, encode_into, round_to};
pub use fp16::{f32_to_fp16, fp16_to_f32};
pub use fp8::{e4m3_to_f32, e5m2_to_f32, f32_to_e4m3, f32_to_e4m3_with, f32_to_e5m2, f32_to_e5m2_with, Overflow};
pub use math::{act, alu, reduce};
pub use mx::{dequantize_mx, e8m0_to_f32, quantize_mx, MX_BLOCK};
pub use reference::{matmul_mx_ref, matmul_ref, MxOperand};

/// Deterministic test data shared by the unit tests of this module.
#[cfg(test)]
pub(crate) mod testing {
    /// xorshift32: a tiny deterministic generator, so tests need no dependency.
    pub(crate) fn xorshift(state: &mut u32) -> u32 {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        *state
    }

    /// `n` values spread over 2^-20..2^20 with both signs, from `seed` (non-zero).
    pub(crate) fn random_values(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                let r = xorshift(&mut s);
                let mant = 1.0 + (r & 0xFFFF) as f32 / 65536.0;
                let exp = ((r >> 16) % 40) as i32 - 20;
                let sign = if r >> 31 == 1 { -1.0 } else { 1.0 };
                sign * mant * 2f32.powi(exp)
            })
            .collect()
    }
}
