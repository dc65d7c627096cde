//! f64 `sinpi`, `cospi` on the CPU model: exact values, special values, and the distance to a reference.

use super::*;
use crate::model::M64;
use crate::testing::Rng;
use crate::testutil::{same64, spread, ulps64};

/// sin(πr) or cos(πr) for the exactly reduced r = x − 2·round(x/2), with π·r carried in double-double and the
/// first-order correction of its tail: within about an ulp.
fn reference(x: f64, cos: bool) -> f64 {
    let r = x - 2.0 * (x / 2.0).round();
    if (cos && r.abs() == 0.5) || (!cos && r.fract() == 0.0) {
        return 0.0;
    }
    let (ph, pl) = (std::f64::consts::PI, 1.224_646_799_147_353_2e-16);
    let a = ph * r;
    let al = ph.mul_add(r, -a) + pl * r;
    if cos { a.cos() - a.sin() * al } else { a.sin() + a.cos() * al }
}

#[test]
fn exact_and_special_values() {
    let s = |x: f64| sinpi(&mut M64, x);
    let c = |x: f64| cospi(&mut M64, x);
    assert_eq!(s(0.5), 1.0);
    assert_eq!(s(-1.5), 1.0);
    assert!(same64(s(1.0), 0.0) && same64(s(-3.0), -0.0) && same64(s(-0.0), -0.0));
    assert!(same64(s(1e300), 0.0));
    assert!(s(f64::INFINITY).is_nan() && s(f64::NAN).is_nan());
    assert_eq!(c(0.0), 1.0);
    assert_eq!(c(-1.0), -1.0);
    assert!(same64(c(0.5), 0.0));
    assert_eq!(c(1e300), 1.0);
    assert_eq!(c(2f64.powi(53) + 2.0), 1.0);
    assert!(c(f64::INFINITY).is_nan() && c(f64::NAN).is_nan());
}

/// Within 2 ulp of [`reference`] (1 ulp of libdevice's own error plus the reference's); zeros as zeros.
#[test]
fn within_bounds() {
    let mut rng = Rng::new(45);
    let mut xs = spread(&mut rng, 1e-300, 1e15, 100_000, true);
    xs.extend(spread(&mut rng, 1e-3, 4.0, 50_000, true));
    for &x in &xs {
        for cos in [false, true] {
            let got = if cos { cospi(&mut M64, x) } else { sinpi(&mut M64, x) };
            let want = reference(x, cos);
            let d = ulps64(got, want);
            assert!(d <= 2 || got.abs() == 0.0 && want == 0.0, "{x:e} cos={cos}: {got:e} vs {want:e}, {d} ulp");
        }
    }
}
