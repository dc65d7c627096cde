//! `powf` on the CPU model: Triton's bits from the H100 run (`conformance/RESULTS.md`), C's special cases as
//! libdevice gives them, and the distance to the float64 function.

use super::*;
use crate::model::M32;
use crate::testing::Rng;
use crate::testutil::{same32, spread, ulps32};

#[test]
fn triton_bits() {
    let b = f32::from_bits;
    // A subnormal y is not an integer (tested on y's bits without flushing): pow(−1, 2^-149) is NaN.
    assert!(powf(&mut M32, -1.0, b(1)).is_nan());
}

#[test]
fn specials() {
    let inf = f32::INFINITY;
    let nan = f32::NAN;
    let p = |x: f32, y: f32| powf(&mut M32, x, y);
    assert_eq!(p(1.0, nan), 1.0);
    assert_eq!(p(nan, 0.0), 1.0);
    assert_eq!(p(nan, -0.0), 1.0);
    assert!(p(nan, 1.0).is_nan());
    assert!(p(2.0, nan).is_nan());
    assert!(same32(p(-0.0, 3.0), -0.0));
    assert!(same32(p(-0.0, 2.0), 0.0));
    assert_eq!(p(-0.0, -3.0), -inf);
    assert_eq!(p(0.0, -2.0), inf);
    assert_eq!(p(-0.0, -inf), inf);
    assert_eq!(p(-1.0, inf), 1.0);
    assert_eq!(p(-1.0, -inf), 1.0);
    assert_eq!(p(0.5, inf), 0.0);
    assert_eq!(p(0.5, -inf), inf);
    assert_eq!(p(2.0, inf), inf);
    assert_eq!(p(2.0, -inf), 0.0);
    assert_eq!(p(-inf, 3.0), -inf);
    assert_eq!(p(-inf, 2.0), inf);
    assert!(same32(p(-inf, -3.0), -0.0));
    assert!(same32(p(inf, -1.0), 0.0));
    assert!(p(-2.0, 0.5).is_nan());
    assert_eq!(p(-2.0, 3.0), -8.0);
    assert_eq!(p(2.0, 10.0), 1024.0);
    // 2^128 exactly, before the last rounding: inf or f32::MAX by the last bit of ex2.approx (the model's
    // correctly rounded 2^r lands on MAX).
    assert!(p(2.0, 128.0) >= f32::MAX);
    assert_eq!(p(2.0, -150.0), 0.0);
}

/// Within 2 ulp of float64's pow for normal results of random operands; subnormal results flush to ±0 (the
/// final correction is an `fma.rn.ftz`).
#[test]
fn within_bounds() {
    let mut rng = Rng::new(33);
    let xs = spread(&mut rng, 1e-38, 3e38, 400, true);
    let ys = spread(&mut rng, 1e-3, 300.0, 400, true);
    let mut w = 0;
    for &x in &xs {
        for &y in &ys {
            let (x, y) = (x as f32, y as f32);
            let (got, want) = (powf(&mut M32, x, y), (x as f64).powf(y as f64));
            if got.is_nan() && want.is_nan() {
                continue;
            }
            if want.abs() < f32::MIN_POSITIVE as f64 * (1.0 - 1e-6) {
                assert!(got == 0.0, "powf({x:e}, {y:e}) = {got:e}");
                continue;
            }
            let d = ulps32(got, want as f32);
            assert!(d <= 2, "powf({x:e}, {y:e}) = {got:e}, want {want:e}: {d} ulp");
            w = w.max(d);
        }
    }
}
