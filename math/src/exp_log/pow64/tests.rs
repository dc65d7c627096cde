//! f64 `pow` on the CPU model: Triton's bits from the H100 run (`conformance/RESULTS.md`), C's special cases as
//! libdevice gives them, and the distance to the host's pow.

use super::*;
use crate::model::M64;
use crate::testing::Rng;
use crate::testutil::{same64, spread, ulps64};

#[test]
fn triton_bits() {
    let d = f64::from_bits;
    // pow(2.5, 2.5): tessel's former routine gave ...759.
    assert_eq!(pow(&mut M64, d(0x4004_0000_0000_0000), d(0x4004_0000_0000_0000)).to_bits(), 0x4023_c3a4_edfa_9758);
}

#[test]
fn specials() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let p = |x: f64, y: f64| pow(&mut M64, x, y);
    assert_eq!(p(1.0, nan), 1.0);
    assert_eq!(p(nan, 0.0), 1.0);
    assert_eq!(p(nan, -0.0), 1.0);
    assert!(p(nan, 1.0).is_nan());
    assert!(p(2.0, nan).is_nan());
    assert!(same64(p(-0.0, 3.0), -0.0));
    assert!(same64(p(-0.0, 2.0), 0.0));
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
    assert!(same64(p(-inf, -3.0), -0.0));
    assert!(same64(p(inf, -1.0), 0.0));
    assert!(p(-2.0, 0.5).is_nan());
    assert!(p(-2.0, 2f64.powi(-1074)).is_nan());
    assert_eq!(p(-2.0, 3.0), -8.0);
    assert_eq!(p(2.0, 10.0), 1024.0);
    assert_eq!(p(2.0, 1024.0), inf);
    assert_eq!(p(2.0, -1074.0), 2f64.powi(-1074));
    assert_eq!(p(2.0, -1076.0), 0.0);
    assert_eq!(p(2f64.powi(-1074), 0.5), 2f64.powi(-537));
}

/// Within 1 ulp of the host's pow (glibc's, correctly rounded in practice) over random operands whose result
/// is finite and normal, and within one unit of 2^-1074 for subnormal results.
#[test]
fn within_bounds() {
    let mut rng = Rng::new(34);
    let xs = spread(&mut rng, 1e-300, 1e300, 400, true);
    let ys = spread(&mut rng, 1e-3, 600.0, 400, true);
    for &x in &xs {
        for &y in &ys {
            let (got, want) = (pow(&mut M64, x, y), x.powf(y));
            if got.is_nan() && want.is_nan() {
                continue;
            }
            if want.abs() < f64::MIN_POSITIVE {
                assert!((got - want).abs() <= 2f64.powi(-1074), "pow({x:e}, {y:e}) = {got:e}, want {want:e}");
                continue;
            }
            let d = ulps64(got, want);
            assert!(d <= 1, "pow({x:e}, {y:e}) = {got:e}, want {want:e}: {d} ulp");
        }
    }
}
