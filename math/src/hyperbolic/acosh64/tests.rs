//! f64 `acosh` on the CPU model: Triton's bits from the H100 run (`conformance/RESULTS.md`), special values,
//! and the distance to float64 references.

use super::*;
use crate::model::M64;
use crate::testing::Rng;
use crate::testutil::{same64, spread, ulps64};

#[test]
fn triton_bits() {
    let d = f64::from_bits;
    // acosh(2.5): tessel's former routine gave ...bb0.
    assert_eq!(acosh(&mut M64, d(0x4004_0000_0000_0000)).to_bits(), 0x3ff9_119c_13a3_1baf);
}

#[test]
fn specials() {
    let inf = f64::INFINITY;
    assert!(same64(acosh(&mut M64, 1.0), 0.0));
    assert!(acosh(&mut M64, 0.5).is_nan());
    assert!(acosh(&mut M64, -inf).is_nan());
    assert!(acosh(&mut M64, f64::NAN).is_nan());
    assert_eq!(acosh(&mut M64, inf), inf);
    // Just above 1: acosh(1 + 2^-52) = √(2·2^-52)·(1 − ...).
    let x = 1.0 + f64::EPSILON;
    assert!(ulps64(acosh(&mut M64, x), (2.0 * f64::EPSILON).sqrt()) <= 1);
    assert!(ulps64(acosh(&mut M64, f64::MAX), 710.475_860_073_943_9) <= 1);
}

/// acosh(1 + d) = log1p(d + √(2d + d²)), with 2d + d², its root and the sum carried in double-double, so that
/// the reference's only sizable error is the host's log1p (glibc: within an ulp); ln(2x) above 10^10.
fn reference(x: f64) -> f64 {
    let d = x - 1.0;
    if d == 0.0 {
        return 0.0;
    }
    if x > 1e10 {
        return if x < f64::MAX / 2.0 { (2.0 * x).ln() } else { x.ln() + std::f64::consts::LN_2 };
    }
    let two_sum = |a: f64, b: f64| {
        let s = a + b;
        let bb = s - a;
        (s, (a - (s - bb)) + (b - bb))
    };
    let p = d * d;
    let pe = d.mul_add(d, -p);
    let (s, se) = two_sum(2.0 * d, p);
    let se = se + pe;
    let r = s.sqrt();
    let rl = ((-r).mul_add(r, s) + se) / (2.0 * r);
    let (a, ae) = two_sum(d, r);
    let ae = ae + rl;
    a.ln_1p() + ae / (1.0 + a)
}

/// Within 2 ulp of [`reference`] over d = x − 1 from 10^-300 to 10^300.
#[test]
fn within_bounds() {
    let mut rng = Rng::new(35);
    let ds = spread(&mut rng, 1e-300, 1e300, 200_000, false);
    for d in ds {
        let x = 1.0 + d;
        let (got, want) = (acosh(&mut M64, x), reference(x));
        let e = ulps64(got, want);
        assert!(e <= 2, "acosh({x:e}) = {got:e}, want {want:e}: {e} ulp");
    }
}
