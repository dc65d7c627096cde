//! `sinpif`, `cospif`, `rcbrtf`, `logbf`, `erfinvf` on the CPU model: exact values, special values, and the
//! distance to float64 references.

use super::*;
use crate::model::M32;
use crate::testing::Rng;
use crate::testutil::{same32, spread, ulps32};

/// sin(πx) and cos(πx) in f64 after the exact reduction x − 2·round(x/2) (an f32 in f64 loses nothing), the
/// zeros exact.
fn sinpi_ref(x: f64, cos: bool) -> f64 {
    let r = x - 2.0 * (x / 2.0).round();
    // The exact zeros (f64's π·r would leave 1e-16 there).
    if (cos && r.abs() == 0.5) || (!cos && r.fract() == 0.0) {
        return 0.0;
    }
    let a = std::f64::consts::PI * r;
    if cos { a.cos() } else { a.sin() }
}

#[test]
fn sinpi_cospi() {
    let s = |x: f32| sinpif(&mut M32, x);
    let c = |x: f32| cospif(&mut M32, x);
    assert_eq!(s(0.5), 1.0);
    assert_eq!(s(-0.5), -1.0);
    assert!(same32(s(1.0), 0.0) && same32(s(-1.0), -0.0) && same32(s(-0.0), -0.0));
    assert!(same32(s(1e30), 0.0));
    assert!(s(f32::INFINITY).is_nan() && s(f32::NAN).is_nan());
    assert_eq!(c(0.0), 1.0);
    assert_eq!(c(1.0), -1.0);
    assert!(same32(c(0.5), 0.0));
    assert_eq!(c(1e30), 1.0);
    assert!(c(f32::INFINITY).is_nan() && c(f32::NAN).is_nan());
    let mut rng = Rng::new(41);
    let mut xs = spread(&mut rng, 1e-30, 1e7, 100_000, true);
    xs.extend(spread(&mut rng, 1e-3, 4.0, 50_000, true));
    for &x in &xs {
        let x = x as f32;
        for cos in [false, true] {
            let got = if cos { c(x) } else { s(x) };
            let want = sinpi_ref(x as f64, cos) as f32;
            let d = ulps32(got, want);
            let name = if cos { "cospif" } else { "sinpif" };
            assert!(d <= 1 || got.abs() == 0.0 && want.abs() == 0.0, "{name}({x:e}) = {got:e}, want {want:e}: {d} ulp");
        }
    }
}

#[test]
fn rcbrt() {
    assert_eq!(rcbrtf(&mut M32, 8.0), 0.5);
    assert_eq!(rcbrtf(&mut M32, -0.125), -2.0);
    assert_eq!(rcbrtf(&mut M32, 0.0), f32::INFINITY);
    assert_eq!(rcbrtf(&mut M32, -0.0), f32::NEG_INFINITY);
    assert!(same32(rcbrtf(&mut M32, f32::INFINITY), 0.0));
    assert!(same32(rcbrtf(&mut M32, f32::NEG_INFINITY), -0.0));
    assert!(rcbrtf(&mut M32, f32::NAN).is_nan());
    let mut rng = Rng::new(42);
    for x in spread(&mut rng, 1.2e-38, 3e38, 100_000, true) {
        let x = x as f32;
        let (got, want) = (rcbrtf(&mut M32, x), (1.0 / (x as f64).cbrt()) as f32);
        let d = ulps32(got, want);
        assert!(d <= 1, "rcbrtf({x:e}) = {got:e}, want {want:e}: {d} ulp");
    }
}

#[test]
fn logb() {
    let l = |x: f32| logbf(&mut M32, x);
    assert_eq!(l(1.0), 0.0);
    assert_eq!(l(-8.5), 3.0);
    assert_eq!(l(0.1), -4.0);
    assert_eq!(l(f32::MAX), 127.0);
    assert_eq!(l(f32::MIN_POSITIVE), -126.0);
    assert_eq!(l(0.0), f32::NEG_INFINITY);
    assert_eq!(l(-0.0), f32::NEG_INFINITY);
    // A subnormal is read as zero by abs.ftz but is not zero to the compare: its leading zeros are those of
    // 0 (32), so libdevice gives −150 for every subnormal.
    assert_eq!(l(f32::from_bits(1)), -150.0);
    assert_eq!(l(f32::from_bits(0x0040_0000)), -150.0);
    assert_eq!(l(f32::INFINITY), f32::INFINITY);
    assert_eq!(l(f32::NEG_INFINITY), f32::INFINITY);
    assert!(l(f32::NAN).is_nan());
    let mut rng = Rng::new(43);
    for x in spread(&mut rng, 1.2e-38, 3e38, 20_000, true) {
        let x = x as f32;
        assert_eq!(l(x), (x.abs() as f64).log2().floor() as f32, "logbf({x:e})");
    }
}

/// erfinv in f64 by Newton's method on the interpreter's erf (accurate to float64) from the routine's value.
fn erfinv_ref(x: f64, start: f64) -> f64 {
    let mut y = start;
    for _ in 0..4 {
        let d = (crate::host::erf(y) - x) / (2.0 / std::f64::consts::PI.sqrt() * (-y * y).exp());
        if d.is_finite() {
            y -= d;
        }
    }
    y
}

#[test]
fn erfinv() {
    let e = |x: f32| erfinvf(&mut M32, x);
    assert_eq!(e(0.0), 0.0);
    assert!(same32(e(-0.0), -0.0));
    assert_eq!(e(1.0), f32::INFINITY);
    assert_eq!(e(-1.0), f32::NEG_INFINITY);
    assert!(e(1.5).is_nan() && e(f32::NAN).is_nan());
    let mut rng = Rng::new(44);
    let mut xs = spread(&mut rng, 1e-30, 0.999_999, 100_000, true);
    xs.extend((0..2000).map(|i| 1.0 - (i as f64 + 1.0) * 2f64.powi(-24)));
    for &x in &xs {
        let x = x as f32;
        let got = e(x);
        let want = erfinv_ref(x as f64, got as f64) as f32;
        let d = ulps32(got, want);
        assert!(d <= 2, "erfinvf({x:e}) = {got:e}, want {want:e}: {d} ulp");
    }
}

/// erfc(x) in f64: 1 − erf(x) below 2 (erfc ≥ 0.0047 there, so erf's error grows at most 200-fold, far below
/// an f32 ulp), the continued fraction e^(−x²)/√π / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))) above.
fn erfc_ref(x: f64) -> f64 {
    if x < 2.0 {
        return 1.0 - crate::host::erf(x);
    }
    let mut k = x;
    for n in (1..2000).rev() {
        k = x + (n as f64 / 2.0) / k;
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / k
}

#[test]
fn erfc() {
    let e = |x: f32| erfcf(&mut M32, x);
    assert_eq!(e(0.0), 1.0);
    assert_eq!(e(f32::INFINITY), 0.0);
    assert_eq!(e(f32::NEG_INFINITY), 2.0);
    assert_eq!(e(-20.0), 2.0);
    assert!(e(f32::NAN).is_nan());
    // Results below 2^-126 flush (the last fma is .ftz): erfc(9.5) = 2^-133.6.
    assert_eq!(e(9.5), 0.0);
    let mut rng = Rng::new(46);
    let mut worst = 0;
    for x in spread(&mut rng, 1e-20, 9.19, 100_000, true) {
        let x = x as f32;
        let got = e(x);
        let want = if x < 0.0 { 2.0 - erfc_ref(-x as f64) } else { erfc_ref(x as f64) } as f32;
        let d = ulps32(got, want);
        assert!(d <= 4, "erfcf({x:e}) = {got:e}, want {want:e}: {d} ulp");
        worst = worst.max(d);
    }
    eprintln!("erfcf: worst {worst} ulp");
}

/// Correctly rounded for every positive normal x: within half an ulp of 1/√x (in f64).
#[test]
fn rsqrt_rn() {
    let r = |x: f32| rsqrt_rnf(&mut M32, x);
    assert_eq!(r(4.0), 0.5);
    assert_eq!(r(0.25), 2.0);
    assert_eq!(r(0.0), f32::INFINITY);
    assert_eq!(r(f32::from_bits(1)), f32::INFINITY);
    assert_eq!(r(f32::INFINITY), 0.0);
    assert!(r(-1.0).is_nan() && r(f32::NAN).is_nan());
    let mut rng = Rng::new(47);
    for x in spread(&mut rng, 1.2e-38, 3.4e38, 200_000, false) {
        let x = x as f32;
        let got = r(x);
        let want = 1.0 / (x as f64).sqrt();
        let ulp = (f32::from_bits(got.to_bits() + 1) - got) as f64;
        let off = (got as f64 - want).abs() / ulp;
        assert!(off <= 0.5 + 1e-6, "rsqrt_rn({x:e}) = {got:e}, {off} ulp from {want:e}");
    }
}

/// normcdf against erfc(−x/√2)/2 in f64 (the reference above): within 4 ulp (libdevice's erfcf bound; the
/// −x/√2 head and tail make the argument exact to first order).
#[test]
fn normcdf() {
    let n = |x: f32| normcdff(&mut M32, x);
    assert_eq!(n(0.0), 0.5);
    assert_eq!(n(f32::INFINITY), 1.0);
    assert_eq!(n(f32::NEG_INFINITY), 0.0);
    assert_eq!(n(-14.0), 0.0);
    assert!(n(f32::NAN).is_nan());
    let mut rng = Rng::new(49);
    let mut worst = 0;
    for x in spread(&mut rng, 1e-20, 13.0, 100_000, true) {
        let x = x as f32;
        let u = -(x as f64) / std::f64::consts::SQRT_2;
        let want = if u < 0.0 { 2.0 - erfc_ref(-u) } else { erfc_ref(u) } / 2.0;
        // erfc below 2^-126 flushes (its last fma is .ftz); the final halving keeps subnormals.
        if 2.0 * want < f32::MIN_POSITIVE as f64 {
            assert_eq!(n(x), 0.0, "normcdff({x:e})");
            continue;
        }
        if want < f32::MIN_POSITIVE as f64 {
            let err = (n(x) as f64 - want).abs();
            assert!(err <= 4.0 * f32::from_bits(1) as f64, "normcdff({x:e}) = {:e}, want {want:e}", n(x));
            continue;
        }
        let d = ulps32(n(x), want as f32);
        assert!(d <= 4, "normcdff({x:e}) = {:e}, want {want:e}: {d} ulp", n(x));
        worst = worst.max(d);
    }
    eprintln!("normcdff: worst {worst} ulp");
}
