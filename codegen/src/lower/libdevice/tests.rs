//! Each routine against the host's libm (glibc) in f64, and through the f32 path (flush, widen, compute,
//! round) against the correctly rounded f32 value.

use super::*;
use crate::lower::fpops::model::M64;
use tessel_math::testing::Rng;
use tessel_tile::eval::arith as reference;

type Un = fn(&mut M64, f64) -> f64;

fn ulps(got: f64, want: f64) -> f64 {
    if got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()) {
        return 0.0;
    }
    if !got.is_finite() || !want.is_finite() || got.is_sign_negative() != want.is_sign_negative() && want != 0.0 {
        return f64::INFINITY;
    }
    let ulp = if want == 0.0 { f64::from_bits(1) } else { f64::from_bits(want.abs().to_bits() + 1) - want.abs() };
    (got - want).abs() / ulp
}

fn ulps32(got: f32, want: f32) -> f64 {
    if got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()) {
        return 0.0;
    }
    if !got.is_finite() || !want.is_finite() {
        return f64::INFINITY;
    }
    let ulp = if want == 0.0 { f32::from_bits(1) } else { f32::from_bits(want.abs().to_bits() + 1) - want.abs() };
    ((got as f64 - want as f64).abs() / ulp as f64).max(if got == want { 0.0 } else { 1.0 })
}

/// `n` values ±2^e·m with e uniform in [lo, hi] (signed when `signed`).
fn log_spread(rng: &mut Rng, lo: f64, hi: f64, n: usize, signed: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let e = lo + (hi - lo) * (rng.uniform() + 1.0) / 2.0;
            let v = 2f64.powf(e);
            if signed && rng.uniform() < 0.0 { -v } else { v }
        })
        .collect()
}

fn uniform(rng: &mut Rng, lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n).map(|_| lo + (hi - lo) * (rng.uniform() + 1.0) / 2.0).collect()
}

/// The worst f64 ulp error (asserted ≤ `bound64`) and f32 error (asserted ≤ 1) of `f` against `reference`.
fn check(name: &str, f: Un, reference: fn(f64) -> f64, xs: &[f64], bound64: f64) {
    let (mut w64, mut w32): (f64, f64) = (0.0, 0.0);
    for &x in xs {
        let (got, want) = (f(&mut M64, x), reference(x));
        let e = ulps(got, want);
        assert!(e <= bound64, "{name}({x:e}) = {got:e}, want {want:e}: {e} ulp");
        w64 = w64.max(e);
        let xf = x as f32;
        let xf = if xf.is_subnormal() { 0f32.copysign(xf) } else { xf };
        let (got, want) = (f(&mut M64, xf as f64) as f32, reference(xf as f64) as f32);
        let e = ulps32(got, want);
        assert!(e <= 1.0, "{name}f({xf:e}) = {got:e}, want {want:e}: {e} ulp");
        w32 = w32.max(e);
    }
    eprintln!("{name}: worst {w64:.2} ulp (f64), {w32} ulp (f32) over {} arguments", xs.len());
}

/// Bits equal (or both NaN) on special arguments: zeros keep their sign, infinities and NaN.
fn specials(name: &str, f: Un, reference: fn(f64) -> f64, extra: &[f64]) {
    let base = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0, -1.0];
    for &x in base.iter().chain(extra) {
        let (got, want) = (f(&mut M64, x), reference(x));
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()) || ulps(got, want) <= 1.0,
            "{name}({x:e}) = {got:e}, want {want:e}"
        );
    }
}

#[test]
fn exponential_family() {
    let mut rng = Rng::new(21);
    let mut xs = uniform(&mut rng, -50.0, 709.7, 40_000);
    xs.extend(log_spread(&mut rng, -60.0, 0.0, 20_000, true));
    check("expm1", expm1, f64::exp_m1, &xs, 2.0);
    specials("expm1", expm1, f64::exp_m1, &[709.78, 710.0, -40.0, -745.0, 1e-310]);
    let mut xs = log_spread(&mut rng, -60.0, 1020.0, 40_000, false);
    xs.extend(uniform(&mut rng, -1.0, 1.0, 20_000));
    xs.extend(log_spread(&mut rng, -60.0, 0.0, 10_000, true));
    check("log1p", log1p, f64::ln_1p, &xs, 2.0);
    specials("log1p", log1p, f64::ln_1p, &[-2.0, -1.0 + 1e-16, 1e-310]);
    let mut xs = uniform(&mut rng, -30.0, 30.0, 30_000);
    xs.extend(log_spread(&mut rng, -40.0, 9.0, 30_000, true));
    check("tanh", tanh, f64::tanh, &xs, 3.0);
    specials("tanh", tanh, f64::tanh, &[25.0, -1e-300]);
    let mut xs = uniform(&mut rng, -712.0, 712.0, 30_000);
    xs.extend(log_spread(&mut rng, -40.0, 6.0, 30_000, true));
    check("sinh", sinh, f64::sinh, &xs, 3.0);
    check("cosh", cosh, f64::cosh, &xs, 3.0);
    specials("sinh", sinh, f64::sinh, &[711.0, -711.0]);
    specials("cosh", cosh, f64::cosh, &[711.0, -711.0]);
    let xs = uniform(&mut rng, -330.0, 310.0, 40_000);
    check("exp10", exp10, |x| 10f64.powf(x), &xs, 2.0);
    specials("exp10", exp10, |x| 10f64.powf(x), &[2.0, -3.0, 308.0, 309.0, -324.0]);
    let xs = log_spread(&mut rng, -1070.0, 1023.0, 40_000, false);
    check("log10", log10, f64::log10, &xs, 2.0);
    specials("log10", log10, f64::log10, &[-1.0, 10.0, 1e-310]);
    let xs = log_spread(&mut rng, -1070.0, 1023.0, 40_000, true);
    check("cbrt", cbrt, f64::cbrt, &xs, 2.0);
    specials("cbrt", cbrt, f64::cbrt, &[-8.0, 27.0, 1e-310, -1e-310]);
}

#[test]
fn inverse_trigonometric_and_hyperbolic() {
    let mut rng = Rng::new(22);
    let mut xs = log_spread(&mut rng, -1070.0, 1023.0, 40_000, true);
    xs.extend(uniform(&mut rng, -4.0, 4.0, 20_000));
    check("atan", atan, f64::atan, &xs, 2.0);
    specials("atan", atan, f64::atan, &[]);
    check("asinh", asinh, reference::asinh, &xs, 2.0);
    specials("asinh", asinh, reference::asinh, &[1e300, -1e-300]);
    let mut xs = uniform(&mut rng, -1.0, 1.0, 40_000);
    xs.extend(log_spread(&mut rng, -60.0, 0.0, 20_000, true));
    xs.extend(log_spread(&mut rng, -60.0, -1.0, 10_000, false).into_iter().map(|d| 1.0 - d));
    check("asin", asin, f64::asin, &xs, 2.0);
    check("acos", acos, f64::acos, &xs, 2.0);
    check("atanh", atanh, reference::atanh, &xs, 2.0);
    for f in [(asin as Un, f64::asin as fn(f64) -> f64), (acos, f64::acos), (atanh, reference::atanh)] {
        specials("asin/acos/atanh", f.0, f.1, &[1.5, -1.5, 1e-310]);
    }
}

#[test]
fn tan_is_sin_over_cos() {
    let mut rng = Rng::new(23);
    let mut xs = log_spread(&mut rng, -1070.0, 1000.0, 40_000, true);
    xs.extend(uniform(&mut rng, -10.0, 10.0, 20_000));
    check("tan", tan, f64::tan, &xs, 2.0);
    specials("tan", tan, f64::tan, &[]);
}

#[test]
fn atan2_within_bounds() {
    let mut rng = Rng::new(24);
    let ys = log_spread(&mut rng, -1000.0, 1000.0, 300, true);
    let xs = log_spread(&mut rng, -1000.0, 1000.0, 300, true);
    let mut wa: f64 = 0.0;
    for &y in &ys {
        for &x in &xs {
            let e = ulps(atan2(&mut M64, y, x), y.atan2(x));
            assert!(e <= 3.0, "atan2({y:e}, {x:e}): {e} ulp");
            wa = wa.max(e);
            let (xf, yf) = (x as f32, y as f32);
            if xf.is_normal() && yf.is_normal() {
                let got = atan2(&mut M64, yf as f64, xf as f64) as f32;
                assert!(ulps32(got, (yf as f64).atan2(xf as f64) as f32) <= 1.0, "atan2f({yf:e}, {xf:e})");
            }
        }
    }
    eprintln!("atan2: worst {wa:.2} ulp");
    // C99's special cases, against the host's atan2 (exact bits).
    let sp = [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-310];
    for &y in &sp {
        for &x in &sp {
            let (got, want) = (atan2(&mut M64, y, x), y.atan2(x));
            assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "atan2({y}, {x}) = {got}");
        }
    }
}

#[test]
fn round_is_half_away_from_zero() {
    let cases = [0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, 4503599627370495.5, 1e300, -0.3, 0.0, -0.0];
    for x in cases.into_iter().chain([f64::INFINITY, f64::NAN]) {
        let (got, want) = (round(&mut M64, x), x.round());
        assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "round({x}) = {got}, want {want}");
    }
    let mut rng = Rng::new(25);
    for x in uniform(&mut rng, -1e6, 1e6, 50_000) {
        assert_eq!(round(&mut M64, x).to_bits(), x.round().to_bits(), "round({x})");
    }
}
