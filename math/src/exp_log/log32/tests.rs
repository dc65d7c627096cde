//! `logf` and `log2f` on the CPU model: Triton's bits where the H100 run recorded them
//! (`conformance/RESULTS.md`), special values, and the distance to the float64 function over many points.

use super::*;
use crate::model::M32;
use crate::testutil::{Routine32 as Routine, worst_sampled32 as worst};

#[test]
fn triton_bits() {
    let b = f32::from_bits;
    let cases: [(Routine, u32, u32); 2] = [(logf, 0x3fc0_0000, 0x3ecf_9920), (log2f, 0x4020_0000, 0x3fa9_34f0)];
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
}

/// The bounds the module states, against float64.
#[test]
fn accuracy_against_float64() {
    let (w, at) = worst(logf, f64::ln, 1e-38, 3e38, false);
    assert!(w <= 1, "logf: {w} ulp at {at:e}");
    let (w, at) = worst(log2f, f64::log2, 1e-38, 3e38, false);
    assert!(w <= 1, "log2f: {w} ulp at {at:e}");
}
