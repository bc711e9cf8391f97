//! Element-wise math as the scalar and vector engines do it in the functional mode: inputs and
//! results are f32 (spec §2: "arithmetic is in FP32").
//!
//! Transcendental activations are evaluated in f64 and rounded once to f32, so each result is
//! within 1 ulp of the exact value (almost always correctly rounded) and does not depend on the
//! platform's f32 libm. This leaves out the hardware's own approximation error (lookup tables
//! and polynomials whose accuracy is not published). NaN inputs give NaN outputs everywhere,
//! including `max`, `min` and `relu` (IEEE 754-2019 maximum/minimum semantics, a documented
//! choice: the hardware's NaN behaviour is unknown).

use crate::isa::{ActFn, AluOp};

/// sqrt(2 / pi), the GELU tanh-approximation constant.
fn sqrt_2_over_pi() -> f64 {
    (2.0 / std::f64::consts::PI).sqrt()
}

/// 1 / (1 + e^-t) in f64 (0 for t = -inf, 1 for t = +inf).
fn sigmoid64(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// Applies activation `f` to `x`:
/// - `Identity`: x, bit for bit; `Relu`: x if x > 0, +0 for x <= 0 (including -0), NaN kept;
/// - `Square`: x * x in f32 (one rounding);
/// - `Exp`, `Tanh`, `Log` (ln; -inf at 0, NaN below), `Rsqrt` (1/sqrt; +inf at +0, NaN below 0),
///   `Sigmoid` (1 / (1 + e^-x)), `Silu` (x * sigmoid(x)) and `Gelu` in f64, rounded to f32.
///
/// `Gelu` is the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated as
/// the equal x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) to avoid cancellation for negative x.
/// `Gelu` and `Silu` give -0 at -inf (their limit) rather than NaN.
pub fn act(f: ActFn, x: f32) -> f32 {
    let t = x as f64;
    match f {
        ActFn::Identity => x,
        ActFn::Relu => relu(x),
        ActFn::Square => x * x,
        ActFn::Exp => t.exp() as f32,
        ActFn::Tanh => t.tanh() as f32,
        ActFn::Log => t.ln() as f32,
        ActFn::Rsqrt => (1.0 / t.sqrt()) as f32,
        ActFn::Sigmoid => sigmoid64(t) as f32,
        ActFn::Silu => gated(t, t),
        ActFn::Gelu => gated(t, 2.0 * sqrt_2_over_pi() * (t + 0.044715 * t * t * t)),
    }
}

/// x * sigmoid(gate) rounded to f32, with the -inf limit (-0) made explicit.
fn gated(x: f64, gate: f64) -> f32 {
    if x == f64::NEG_INFINITY {
        return -0.0;
    }
    (x * sigmoid64(gate)) as f32
}

/// max(x, 0) with NaN propagated and -0 mapped to +0.
fn relu(x: f32) -> f32 {
    if x.is_nan() || x > 0.0 {
        x
    } else {
        0.0
    }
}

/// Applies the binary operation `op` in f32: `Add`, `Sub`, `Mul`, `Div` are IEEE 754 with one
/// rounding to nearest even; `Max` and `Min` propagate NaN and order -0 below +0.
pub fn alu(op: AluOp, a: f32, b: f32) -> f32 {
    match op {
        AluOp::Add => a + b,
        AluOp::Sub => a - b,
        AluOp::Mul => a * b,
        AluOp::Div => a / b,
        AluOp::Max => maximum(a, b),
        AluOp::Min => minimum(a, b),
    }
}

/// IEEE 754-2019 maximum: NaN if either is NaN, +0 over -0.
fn maximum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// IEEE 754-2019 minimum: NaN if either is NaN, -0 under +0.
fn minimum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// Reduces `values` with `op` strictly left to right, ((v0 op v1) op v2) ..., each step one
/// [`alu`] in f32, so the result is deterministic. The hardware's reduction tree (which may
/// round differently for `Add`) is not modelled. An empty slice gives the operation's identity:
/// 0 for `Add` and `Sub`, 1 for `Mul` and `Div`, -inf for `Max`, +inf for `Min`.
pub fn reduce(op: AluOp, values: &[f32]) -> f32 {
    match values.split_first() {
        Some((&first, rest)) => rest.iter().fold(first, |acc, &v| alu(op, acc, v)),
        None => match op {
            AluOp::Add | AluOp::Sub => 0.0,
            AluOp::Mul | AluOp::Div => 1.0,
            AluOp::Max => f32::NEG_INFINITY,
            AluOp::Min => f32::INFINITY,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::testing::random_values;

    /// Distance in units in the last place between two finite f32 of the same sign (or zeros).
    fn ulps(a: f32, b: f32) -> u64 {
        let key = |x: f32| {
            let b = x.to_bits() as i64;
            if b < 0x8000_0000 {
                b
            } else {
                0x8000_0000 - b
            }
        };
        (key(a) - key(b)).unsigned_abs()
    }

    /// Independent f64 references: different formulas from the implementation, chosen per sign
    /// to avoid cancellation (p(t) is the logistic function written as e^t / (1 + e^t) for t < 0
    /// and through tanh otherwise).
    fn reference(f: ActFn, x: f64) -> f64 {
        let p = |t: f64| if t < 0.0 { t.exp() / (1.0 + t.exp()) } else { 0.5 * (1.0 + (t / 2.0).tanh()) };
        let c = (2.0 / std::f64::consts::PI).sqrt();
        match f {
            ActFn::Identity => x,
            ActFn::Exp => std::f64::consts::E.powf(x),
            ActFn::Gelu => x * p(2.0 * c * (x + 0.044715 * x.powi(3))),
            ActFn::Silu => x * p(x),
            ActFn::Tanh => (1.0 - (-2.0 * x).exp()) / (1.0 + (-2.0 * x).exp()),
            ActFn::Sigmoid => p(x),
            ActFn::Rsqrt => x.powf(-0.5),
            ActFn::Relu => x.max(0.0),
            ActFn::Square => x * x,
            ActFn::Log => x.log2() * std::f64::consts::LN_2,
        }
    }

    #[test]
    fn act_within_one_ulp_of_f64_reference() {
        let mut xs = random_values(4000, 42);
        xs.retain(|x| x.abs() < 30.0);
        xs.extend([0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -3.0, 10.0, -10.0, 1e-6, -1e-6]);
        for f in ActFn::ALL {
            for &x in &xs {
                let domain_ok = !matches!(f, ActFn::Log | ActFn::Rsqrt) || x > 0.0;
                if !domain_ok {
                    continue;
                }
                let got = act(f, x);
                let want = reference(f, x as f64) as f32;
                assert!(ulps(got, want) <= 1, "{}({x}) = {got}, reference {want}", f.name());
            }
        }
    }

    #[test]
    fn act_known_values() {
        assert_eq!(act(ActFn::Exp, 0.0), 1.0);
        assert_eq!(act(ActFn::Exp, 1.0), std::f32::consts::E);
        assert_eq!(act(ActFn::Log, 1.0), 0.0);
        assert_eq!(act(ActFn::Log, std::f32::consts::E), 0.999_999_94); // f32 e is just below e
        assert_eq!(act(ActFn::Log, 0.0), f32::NEG_INFINITY);
        assert!(act(ActFn::Log, -1.0).is_nan());
        assert_eq!(act(ActFn::Rsqrt, 4.0), 0.5);
        assert_eq!(act(ActFn::Rsqrt, 0.0), f32::INFINITY);
        assert!(act(ActFn::Rsqrt, -4.0).is_nan());
        assert_eq!(act(ActFn::Sigmoid, 0.0), 0.5);
        assert_eq!(act(ActFn::Sigmoid, f32::NEG_INFINITY), 0.0);
        assert_eq!(act(ActFn::Sigmoid, f32::INFINITY), 1.0);
        assert_eq!(act(ActFn::Tanh, f32::INFINITY), 1.0);
        assert_eq!(act(ActFn::Silu, 0.0), 0.0);
        assert_eq!(act(ActFn::Gelu, 0.0), 0.0);
        assert_eq!(act(ActFn::Gelu, f32::INFINITY), f32::INFINITY);
        assert_eq!(act(ActFn::Gelu, f32::NEG_INFINITY).to_bits(), (-0.0f32).to_bits());
        assert_eq!(act(ActFn::Silu, f32::NEG_INFINITY).to_bits(), (-0.0f32).to_bits());
        assert_eq!(act(ActFn::Silu, f32::INFINITY), f32::INFINITY);
        assert_eq!(act(ActFn::Gelu, 1.0), 0.841_192); // 0.8411919906...
        assert_eq!(act(ActFn::Relu, -0.0).to_bits(), 0);
        assert_eq!(act(ActFn::Relu, -3.0), 0.0);
        assert_eq!(act(ActFn::Relu, 3.0), 3.0);
        assert_eq!(act(ActFn::Square, -3.0), 9.0);
        assert_eq!(act(ActFn::Identity, f32::from_bits(0x7F80_0001)).to_bits(), 0x7F80_0001);
        for f in ActFn::ALL {
            assert!(act(f, f32::NAN).is_nan(), "{}", f.name());
        }
    }

    #[test]
    fn alu_ops_and_nan_rules() {
        assert_eq!(alu(AluOp::Add, 1.5, 2.25), 3.75);
        assert_eq!(alu(AluOp::Sub, 1.5, 2.25), -0.75);
        assert_eq!(alu(AluOp::Mul, 1.5, -2.0), -3.0);
        assert_eq!(alu(AluOp::Div, 1.0, 3.0), 1.0f32 / 3.0);
        assert_eq!(alu(AluOp::Div, 1.0, 0.0), f32::INFINITY);
        assert_eq!(alu(AluOp::Max, 1.0, -2.0), 1.0);
        assert_eq!(alu(AluOp::Min, 1.0, -2.0), -2.0);
        assert_eq!(alu(AluOp::Max, -0.0, 0.0).to_bits(), 0);
        assert_eq!(alu(AluOp::Max, 0.0, -0.0).to_bits(), 0);
        assert_eq!(alu(AluOp::Min, 0.0, -0.0).to_bits(), 0x8000_0000);
        assert_eq!(alu(AluOp::Min, -0.0, 0.0).to_bits(), 0x8000_0000);
        for op in AluOp::ALL {
            assert!(alu(op, f32::NAN, 1.0).is_nan(), "{}", op.name());
            assert!(alu(op, 1.0, f32::NAN).is_nan(), "{}", op.name());
        }
    }

    #[test]
    fn reduce_is_left_to_right() {
        // (1e8 + 1) rounds back to 1e8 in f32, so left to right gives 0; other orders give 1.
        assert_eq!(reduce(AluOp::Add, &[1e8, 1.0, -1e8]), 0.0);
        assert_eq!(reduce(AluOp::Add, &[1e8, -1e8, 1.0]), 1.0);
        assert_eq!(reduce(AluOp::Sub, &[10.0, 3.0, 2.0]), 5.0);
        assert_eq!(reduce(AluOp::Div, &[12.0, 3.0, 2.0]), 2.0);
        assert_eq!(reduce(AluOp::Max, &[1.0, 7.0, -3.0]), 7.0);
        assert_eq!(reduce(AluOp::Min, &[1.0, 7.0, -3.0]), -3.0);
        assert_eq!(reduce(AluOp::Mul, &[2.0, 3.0, 4.0]), 24.0);
        assert_eq!(reduce(AluOp::Add, &[-0.0]).to_bits(), 0x8000_0000);
        assert!(reduce(AluOp::Max, &[1.0, f32::NAN, 2.0]).is_nan());
    }

    #[test]
    fn reduce_empty_gives_identity() {
        assert_eq!(reduce(AluOp::Add, &[]), 0.0);
        assert_eq!(reduce(AluOp::Sub, &[]), 0.0);
        assert_eq!(reduce(AluOp::Mul, &[]), 1.0);
        assert_eq!(reduce(AluOp::Div, &[]), 1.0);
        assert_eq!(reduce(AluOp::Max, &[]), f32::NEG_INFINITY);
        assert_eq!(reduce(AluOp::Min, &[]), f32::INFINITY);
    }

    #[test]
    fn reduce_is_deterministic() {
        let v = random_values(10_000, 5);
        for op in [AluOp::Add, AluOp::Max, AluOp::Min] {
            let a = reduce(op, &v);
            assert_eq!(a.to_bits(), reduce(op, &v).to_bits());
            let manual = v[1..].iter().fold(v[0], |acc, &x| alu(op, acc, x));
            assert_eq!(a.to_bits(), manual.to_bits());
        }
    }
}
