//! The f32 libdevice routines on the CPU model: Triton's bits where the H100 run recorded them
//! (`conformance/RESULTS.md`), special values, and the distance to the float64 function over many points.

use super::*;
use crate::model::M32;
use crate::testing::Rng;

/// A routine on the CPU model.
type Routine = fn(&mut M32, f32) -> f32;

fn ulps(a: f32, b: f32) -> u64 {
    let key = |v: f32| {
        let b = v.to_bits() as i64;
        if b < 0x8000_0000 { b } else { 0x8000_0000 - b }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// The largest distance in f32 ulps from `f` (CPU model) to the f64 function `g` rounded to f32, over random
/// points of every binade in `[lo, hi]` (and their negatives when `signed`, for the odd functions).
fn worst(f: Routine, g: fn(f64) -> f64, lo: f32, hi: f32, signed: bool) -> (u64, f32) {
    // erff and tanhf read subnormals as zero; logf and log2f (not signed here) scale them.
    let ftz = signed;
    let mut rng = Rng::new(5);
    let (mut w, mut at) = (0, 0.0);
    for i in 0..200_000 {
        let t = rng.uniform();
        let x = if i % 2 == 0 {
            lo + (hi - lo) * t as f32
        } else {
            (lo.max(1e-30).ln() as f64 + (hi.ln() as f64 - lo.max(1e-30).ln() as f64) * t).exp() as f32
        };
        let x = if signed && rng.below(2) == 1 { -x } else { x };
        let xr = if x.is_subnormal() && ftz { 0.0 } else { x };
        let (got, want) = (f(&mut M32, x), g(xr as f64) as f32);
        if got.is_nan() && want.is_nan() {
            continue;
        }
        let d = ulps(got, want);
        if d > w {
            (w, at) = (d, x);
        }
    }
    (w, at)
}

#[test]
fn triton_bits() {
    let b = f32::from_bits;
    let cases: [(Routine, u32, u32); 5] = [
        (logf, 0x3fc0_0000, 0x3ecf_9920),
        (log2f, 0x4020_0000, 0x3fa9_34f0),
        (erff, 0xbed6_f00b, 0xbee5_01b1),
        (erff, 0x0080_0000, 0x0090_6eba),
        (tanhf, 0x3dcc_cccd, 0x3dcc_1ebd),
    ];
    for (f, x, want) in cases {
        assert_eq!(f(&mut M32, b(x)).to_bits(), want, "{x:#x}");
    }
}

#[test]
fn special_values() {
    let inf = f32::INFINITY;
    for f in [logf as Routine, log2f] {
        assert_eq!(f(&mut M32, 0.0), -inf);
        assert_eq!(f(&mut M32, -0.0), -inf);
        assert_eq!(f(&mut M32, inf), inf);
        assert!(f(&mut M32, -1.0).is_nan() && f(&mut M32, f32::NAN).is_nan() && f(&mut M32, -inf).is_nan());
        assert_eq!(f(&mut M32, 1.0), 0.0);
        // Subnormals are scaled, not flushed: log2(2^-149) = -149.
    }
    assert_eq!(log2f(&mut M32, f32::from_bits(1)), -149.0);
    assert!(logf(&mut M32, -f32::from_bits(1)).is_nan());
    for f in [erff as Routine, tanhf] {
        assert_eq!(f(&mut M32, inf), 1.0);
        assert_eq!(f(&mut M32, -inf), -1.0);
        assert!(f(&mut M32, f32::NAN).is_nan());
        assert_eq!(f(&mut M32, -0.0).to_bits(), (-0.0f32).to_bits());
        // Subnormal inputs flush (`abs.ftz`, `fma.rn.ftz`).
        assert_eq!(f(&mut M32, f32::from_bits(1)), 0.0);
    }
}

/// The bounds the module states, against float64.
#[test]
fn accuracy_against_float64() {
    let (w, at) = worst(logf, f64::ln, 1e-38, 3e38, false);
    assert!(w <= 1, "logf: {w} ulp at {at:e}");
    let (w, at) = worst(log2f, f64::log2, 1e-38, 3e38, false);
    assert!(w <= 1, "log2f: {w} ulp at {at:e}");
    let (w, at) = worst(erff, crate::host::erf, 1e-30, 12.0, true);
    assert!(w <= 2, "erff: {w} ulp at {at:e}");
    let (w, at) = worst(tanhf, f64::tanh, 1e-30, 20.0, true);
    assert!(w <= 2, "tanhf: {w} ulp at {at:e}");
}
