//! Models of the GPU's approximate instructions that libdevice's `fast_*f` functions use (`lg2.approx.ftz.f32`,
//! `sin.approx.ftz.f32`, `cos.approx.ftz.f32`, `div.approx.ftz.f32`) and of `cvt.ftz.sat.f32` (`saturatef`).
//!
//! The hardware's approximations are not specified bit for bit, so these model them: subnormal operands and
//! results flush (`.ftz`), and the function is rounded correctly where the unit approximates it. The PTX ISA
//! bounds the unit: `lg2.approx` within 2^-22.6 absolute for x in [0.5, 2] and 2^-22 relative elsewhere,
//! `div.approx` within 2 ulp for |y| in [2^-126, 2^126] (0, or NaN for an infinite x, above), `sin.approx` and
//! `cos.approx` within 2^-20.5 absolute on [−π, π]. For sin and cos the model follows the hardware's
//! reduction as we understand it (on sm_70+ `sin.approx` is `FMUL.RZ` by 1/(2π) then `MUFU.SIN` of the
//! fraction of a turn; *unverified*), so that large arguments land near where the GPU's do (the f32 product
//! loses up to |x|·2^-24 turns, which no model of the true sine would show).

use crate::rounding::{Arith, Dir, Format, directed, flush_f32};

/// `lg2.approx.ftz.f32`.
pub fn lg2(x: f64) -> f64 {
    flush_f32((flush_f32(x) as f32 as f64).log2() as f32 as f64)
}

/// 1/(2π) as the f32 the hardware's reduction multiplies by.
const INV_2PI: f32 = 0.159_154_94;

/// `sin.approx.ftz.f32` (`cos` when `cos`).
pub fn sin_cos(x: f64, cos: bool) -> f64 {
    let x = flush_f32(x);
    if !x.is_finite() {
        return f64::NAN;
    }
    let t = directed(Arith::Mul, Dir::Zero, Format::F32, x, INV_2PI as f64);
    let turn = t - t.round_ties_even();
    let a = std::f64::consts::TAU * turn;
    let r = if cos { a.cos() } else { a.sin() };
    flush_f32(r as f32 as f64)
}

/// `div.approx.ftz.f32`: x·(1/y).
pub fn div(x: f64, y: f64) -> f64 {
    let (x, y) = (flush_f32(x), flush_f32(y));
    let big = 2f64.powi(126);
    if y.abs() > big && y.is_finite() {
        // A NaN or infinite dividend stays NaN (Triton: fast_dividef(0x7f800001, 0x7e967699) = NaN).
        return if !x.is_finite() { f64::NAN } else { 0f64.copysign(x) * y.signum() };
    }
    let r = (1.0 / y) as f32;
    flush_f32((x as f32 * r) as f64)
}

/// `cvt.ftz.sat.f32.f32`: clamped to [+0, 1], NaN (and −0, measured as Triton's `saturatef(-0) = +0`) to +0.
pub fn saturate(x: f64) -> f64 {
    let x = flush_f32(x);
    if x.is_nan() || x <= 0.0 { 0.0 } else { x.min(1.0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Triton's bits recorded on an H100 (`conformance/RESULTS.md`), where the model has them exactly, and
    /// the bounds elsewhere.
    #[test]
    fn approximations() {
        // div.approx by |y| > 2^126 gives 0: fast_dividef(1, 1.0e38) = 0 on the GPU.
        assert_eq!(div(1.0, f32::from_bits(0x7e96_7699) as f64).to_bits(), 0);
        assert!(div(f32::from_bits(0x7f80_0001) as f64, f32::from_bits(0x7e96_7699) as f64).is_nan());
        assert!(div(f64::INFINITY, f32::from_bits(0x7e96_7699) as f64).is_nan());
        assert_eq!(div(6.0, 3.0), 2.0);
        assert_eq!(saturate(f32::from_bits(1) as f64), 0.0);
        assert_eq!(saturate(f64::NAN), 0.0);
        assert_eq!(saturate(-3.0).to_bits(), 0);
        assert_eq!(saturate(0.5), 0.5);
        assert_eq!(lg2(8.0), 3.0);
        assert_eq!(lg2(f32::from_bits(1) as f64), f64::NEG_INFINITY);
        // Within 2^-20 of the true function on [−π, π]; beyond, the f32 reduction to turns costs up to
        // |x|·2^-24 turns, as on the GPU (sin.approx(3e9) is not sin(3e9)).
        let mut worst: f64 = 0.0;
        for i in 0..100_000 {
            let x = (i as f64 / 100_000.0 - 0.5) * 2.0 * std::f64::consts::PI;
            let x = x as f32 as f64;
            worst = worst.max((sin_cos(x, false) - x.sin()).abs()).max((sin_cos(x, true) - x.cos()).abs());
        }
        assert!(worst < 2f64.powi(-20), "{worst:e}");
        assert!(sin_cos(f64::INFINITY, false).is_nan());
    }
}
