//! Triton's float `%` (`tessel_math::remainder::frem`, LLVM's expansion of `frem`) as codegen emits it, against
//! the interpreter and Triton's measured results.

use crate::lower::fpops::model::{M32, M64};
use tessel_math::remainder::frem;
use tessel_tile::eval::arith::binary;
use tessel_tile::eval::value::{Val, from_bits};
use tessel_tile::ops::BinOp;
use tessel_tile::types::ScalarType::{self, BF16, F16, F32, F64};

/// Bits equal, or both NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn interp(t: ScalarType, x: f64, y: f64) -> f64 {
    binary(BinOp::Rem, false, t, Val::Float(x), Val::Float(y)).unwrap().as_f64()
}

/// The values Triton 3.6 gave on an H100 (conformance/RESULTS.md), from the CPU model of the emitted
/// sequence and from the interpreter.
#[test]
fn matches_tritons_measured_results() {
    let x = 1.0f32;
    let y = f32::from_bits(0x3dcc_cccd);
    assert_eq!(frem(&mut M32, x, y).to_bits(), 0xb280_0000);
    assert_eq!((interp(F32, 1.0, y as f64) as f32).to_bits(), 0xb280_0000);
    assert_eq!(frem(&mut M64, 1.0, 0.1).to_bits(), 0xbc90_0000_0000_0000);
    assert_eq!(interp(F64, 1.0, 0.1).to_bits(), 0xbc90_0000_0000_0000);
    // f16: −1 % 1 is +0 (C fmod gives −0).
    assert_eq!(frem(&mut M32, -1.0, 1.0).to_bits(), 0);
    assert_eq!(interp(F16, -1.0, 1.0).to_bits(), 0);
    // bf16 1.0 % 0x0001 (2^-133, an f32 subnormal): the quotient overflows, −inf.
    let tiny = from_bits(1, BF16).as_f64();
    assert_eq!(frem(&mut M32, 1.0, tiny as f32), f32::NEG_INFINITY);
    assert_eq!(interp(BF16, 1.0, tiny), f64::NEG_INFINITY);
    // |y| = inf selects x; y = 0, x = inf and NaN give NaN.
    assert_eq!(interp(F32, -0.0, f64::INFINITY).to_bits(), (-0.0f64).to_bits());
    assert_eq!(interp(F32, 2.0, f64::NEG_INFINITY), 2.0);
    for (a, b) in [(1.0, 0.0), (f64::INFINITY, 2.0), (f64::NAN, 1.0), (1.0, f64::NAN), (0.0, 0.0)] {
        assert!(interp(F32, a, b).is_nan() && interp(F64, a, b).is_nan(), "{a} % {b}");
    }
    // Ordinary cases agree with C's fmod (the sign of the dividend).
    assert_eq!(interp(F32, 1.0, -2.5), 1.0);
    assert_eq!(interp(F32, -7.5, 2.0), -1.5);
}

/// The emitted sequence (its CPU model) and the interpreter agree bit for bit on every pair of edge values
/// and random bit patterns, for f32, f64, and every 97th/331st f16 and bf16 pattern.
#[test]
fn model_equals_the_interpreter() {
    let mut rng = tessel_math::testing::Rng::new(7);
    let mut v32: Vec<f32> = vec![0.0, -0.0, 1.0, -1.0, 0.1, 2.5, 1e-45, 1e38, f32::MAX, f32::INFINITY, f32::NAN];
    v32.extend((0..250).map(|_| f32::from_bits(rng.next_u64() as u32)));
    for &x in &v32 {
        for &y in &v32 {
            let (got, want) = (frem(&mut M32, x, y) as f64, interp(F32, x as f64, y as f64));
            assert!(same(got, want), "f32 {x:e} % {y:e}: model {got:e}, interpreter {want:e}");
        }
    }
    let mut v64: Vec<f64> = vec![0.0, -0.0, 1.0, 0.1, -2.5, f64::from_bits(1), 1e300, f64::NEG_INFINITY];
    v64.extend((0..150).map(|_| f64::from_bits(rng.next_u64())));
    for &x in &v64 {
        for &y in &v64 {
            let (got, want) = (frem(&mut M64, x, y), interp(F64, x, y));
            assert!(same(got, want), "f64 {x:e} % {y:e}: model {got:e}, interpreter {want:e}");
        }
    }
    for t in [F16, BF16] {
        for xb in (0..=0xffffu64).step_by(97) {
            for yb in (0..=0xffffu64).step_by(331) {
                let (x, y) = (from_bits(xb, t).as_f64(), from_bits(yb, t).as_f64());
                let r = frem(&mut M32, x as f32, y as f32) as f64;
                let got = Val::Float(tessel_tile::eval::value::round_float(r, t)).as_f64();
                assert!(same(got, interp(t, x, y)), "{t} {x} % {y}");
            }
        }
    }
}
