//! `exp10f` and `log10f` on the CPU model: Triton's bits from the H100 run (`conformance/RESULTS.md`), special
//! values, and the distance to the float64 function.

use super::*;
use crate::model::M32;
use crate::testing::Rng;
use crate::testutil::{spread, ulps32, worst_at32 as worst};

#[test]
fn triton_bits() {
    let b = f32::from_bits;
    // log10f has no approximate instruction: Triton's bits exactly.
    assert_eq!(log10f(&mut M32, b(0x4020_0000)).to_bits(), 0x3ecb_becc);
    // exp10f goes through ex2.approx, which the model rounds correctly: the H100's unit gave 10^1.5 one ulp
    // above the correctly rounded 0x41fcfb72, the model gives 0x41fcfb72 (the GPU code is Triton's sequence).
    assert_eq!(exp10f(&mut M32, b(0x3fc0_0000)).to_bits(), 0x41fc_fb72);
}

#[test]
fn specials() {
    let b = f32::from_bits;
    let inf = f32::INFINITY;
    // log10: 0 and subnormals' scaling (logf keeps subnormals), negative → NaN, inf → inf.
    assert_eq!(log10f(&mut M32, 0.0), -inf);
    assert_eq!(log10f(&mut M32, -0.0), -inf);
    assert!(log10f(&mut M32, -1.0).is_nan());
    assert_eq!(log10f(&mut M32, inf), inf);
    assert_eq!(log10f(&mut M32, 1000.0), 3.0);
    assert!(ulps32(log10f(&mut M32, b(1)), (f32::from_bits(1) as f64).log10() as f32) <= 1);
    // exp10: overflow to inf, underflow through subnormals to 0 (the scale multiplies without .ftz).
    assert_eq!(exp10f(&mut M32, 39.0), inf);
    assert_eq!(exp10f(&mut M32, -46.0), 0.0);
    assert_eq!(exp10f(&mut M32, -inf), 0.0);
    assert_eq!(exp10f(&mut M32, inf), inf);
    assert_eq!(exp10f(&mut M32, 0.0), 1.0);
    assert!(exp10f(&mut M32, f32::NAN).is_nan());
}

/// The stated bounds, against float64 (the model's approximate instructions correctly rounded): log10f within
/// 2 ulp, exp10f within 2 ulp for normal results (a subnormal result has fewer bits and the ex2.approx error
/// scales with 2^r, so the bound there is in absolute terms: within 2^-149·2). The points are the ones these
/// bounds were measured on (seed 31, `acoshf`'s draw between, now in `hyperbolic::acosh32`'s tests).
#[test]
fn within_bounds() {
    let mut rng = Rng::new(31);
    let xs = spread(&mut rng, 1e-38, 3e38, 100_000, false);
    let (w, at) = worst(log10f, f64::log10, &xs);
    assert!(w <= 2, "log10f: {w} ulp at {at:e}");
    let _acoshf_points = spread(&mut rng, 1e-7, 3e38, 100_000, false);
    let xs = spread(&mut rng, 1e-8, 37.9, 100_000, true);
    let (w, at) = worst(exp10f, |x| 10f64.powf(x), &xs);
    assert!(w <= 2, "exp10f: {w} ulp at {at:e}");
    let xs = spread(&mut rng, 37.9, 45.0, 20_000, false);
    for x in xs {
        let x = -x as f32;
        let (got, want) = (exp10f(&mut M32, x) as f64, 10f64.powf(x as f64));
        assert!((got - want).abs() <= 2.0 * f32::from_bits(1) as f64, "exp10f({x:e}) = {got:e}, want {want:e}");
    }
}
