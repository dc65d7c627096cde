//! `hypotf`, `hypot`, `rhypotf`, `rhypot` on the CPU model: Triton's bits from the H100 run
//! (`conformance/RESULTS.md`), special values, and the distance to the float64 function.

use super::*;
use crate::model::{M32, M64};
use crate::testing::Rng;
use crate::testutil::{same64, spread, ulps32, ulps64};

#[test]
fn triton_bits() {
    let (b, d) = (f32::from_bits, f64::from_bits);
    // hypotf(1, 0.5) is √20·2^-2 by sqrt.approx: the model's correctly rounded √20 gives 0x3f8f1bbd; the same
    // sequence with the root one ulp lower gives the H100's 0x3f8f1bbc.
    assert_eq!(hypotf(&mut M32, b(0x3f80_0000), b(0x3f00_0000)).to_bits(), 0x3f8f_1bbd);
    // hypot's rsqrt.approx is followed by a correction step, and the model lands on Triton's bits.
    assert_eq!(hypot(&mut M64, d(0x3ff0_0000_0000_0000), d(0x3ff8_0000_0000_0000)).to_bits(), 0x3ffc_d82b_4461_59f4);
}

#[test]
fn specials() {
    let inf = f32::INFINITY;
    // hypot: an infinity wins over a NaN; a zero gives the other's magnitude.
    assert_eq!(hypotf(&mut M32, inf, f32::NAN), inf);
    assert_eq!(hypotf(&mut M32, f32::NAN, -inf), inf);
    assert!(hypotf(&mut M32, f32::NAN, 1.0).is_nan());
    assert_eq!(hypotf(&mut M32, -3.0, 0.0), 3.0);
    assert_eq!(hypotf(&mut M32, f32::MAX, f32::MAX), inf);
    let dinf = f64::INFINITY;
    assert_eq!(hypot(&mut M64, dinf, f64::NAN), dinf);
    assert_eq!(hypot(&mut M64, f64::NAN, -dinf), dinf);
    assert!(hypot(&mut M64, f64::NAN, 1.0).is_nan());
    assert_eq!(hypot(&mut M64, -3.0, 0.0), 3.0);
    assert_eq!(hypot(&mut M64, 3.0, 4.0), 5.0);
    assert_eq!(hypot(&mut M64, f64::MAX, f64::MAX), dinf);
    assert!(same64(hypot(&mut M64, 5e-324, 0.0), 5e-324));
}

/// The stated bounds against float64: hypotf within 1 ulp, hypot within 2 ulp (f32 subnormal operands read as
/// zero, as libdevice's `.ftz` forms do), on the points they were measured on (seed 32, after `cbrtf`'s draw, in
/// `roots::cbrt`'s tests).
#[test]
fn within_bounds() {
    let mut rng = Rng::new(32);
    let _cbrtf_points = spread(&mut rng, 1.2e-38, 3e38, 100_000, true);
    let ys = spread(&mut rng, 1e-30, 1e30, 300, true);
    let zs = spread(&mut rng, 1e-300, 1e300, 300, true);
    for &x in &ys {
        for &y in &ys {
            let (x, y) = (x as f32, y as f32);
            let d = ulps32(hypotf(&mut M32, x, y), (x as f64).hypot(y as f64) as f32);
            assert!(d <= 1, "hypotf({x:e}, {y:e}): {d} ulp");
        }
    }
    for &x in &zs {
        for &y in &zs {
            let d = ulps64(hypot(&mut M64, x, y), x.hypot(y));
            assert!(d <= 2, "hypot({x:e}, {y:e}): {d} ulp");
        }
    }
}

/// rhypot: 1/hypot within 2 ulp (f32: rsqrt.approx, the model's correctly rounded; f64: one correction step),
/// and C's special cases as libdevice gives them.
#[test]
fn rhypot_within_bounds() {
    let inf = f32::INFINITY;
    assert_eq!(rhypotf(&mut M32, 3.0, 4.0), 0.2);
    assert_eq!(rhypotf(&mut M32, 0.0, -0.0), inf);
    assert_eq!(rhypotf(&mut M32, inf, f32::NAN), 0.0);
    assert!(rhypotf(&mut M32, f32::NAN, 1.0).is_nan());
    let dinf = f64::INFINITY;
    // Not correctly rounded: 0.2 less an ulp.
    assert!(ulps64(rhypot(&mut M64, 3.0, 4.0), 0.2) <= 1);
    assert_eq!(rhypot(&mut M64, 0.0, -0.0), dinf);
    assert_eq!(rhypot(&mut M64, f64::NAN, -dinf), 0.0);
    assert!(rhypot(&mut M64, f64::NAN, 1.0).is_nan());
    assert_eq!(rhypot(&mut M64, 5e-324, 0.0), dinf);
    let mut rng = Rng::new(36);
    let ys = spread(&mut rng, 1e-18, 1e18, 300, true);
    let zs = spread(&mut rng, 1e-150, 1e150, 300, true);
    for &x in &ys {
        for &y in &ys {
            let (x, y) = (x as f32, y as f32);
            let d = ulps32(rhypotf(&mut M32, x, y), (1.0 / (x as f64).hypot(y as f64)) as f32);
            assert!(d <= 2, "rhypotf({x:e}, {y:e}): {d} ulp");
        }
    }
    for &x in &zs {
        for &y in &zs {
            let d = ulps64(rhypot(&mut M64, x, y), 1.0 / x.hypot(y));
            assert!(d <= 2, "rhypot({x:e}, {y:e}): {d} ulp");
        }
    }
}
