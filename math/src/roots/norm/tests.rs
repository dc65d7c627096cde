//! `norm3d`, `norm4d`, `rnorm3d`, `rnorm4d` on the CPU model: special values and the distance to references
//! (f32: the root of the exact f64 sum of squares; f64: the sum of squares in double-double, scaled by a
//! power of two, and its root corrected once).

use super::*;
use crate::model::{M32, M64};
use crate::testing::Rng;
use crate::testutil::{same32, same64, ulps32, ulps64};

/// f32 values of every binade in [2^-126, 2^127], random signs; zeros now and then.
fn f32s(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            if rng.below(16) == 0 {
                return 0.0;
            }
            let e = rng.below(250) as i32 - 125;
            let v = (1.0 + rng.uniform().abs()) as f32 * 2f32.powi(e);
            if rng.below(2) == 1 { -v } else { v }
        })
        .collect()
}

/// √Σx² (or its reciprocal) of f64 values: scaled by 2^−e of the largest, each square exact as a
/// double-double, the sum carried in double-double, its root (and reciprocal) as double-doubles corrected once,
/// and the scale put back.
fn reference64(xs: &[f64], recip: bool) -> f64 {
    let big = xs.iter().fold(0f64, |m, x| m.max(x.abs()));
    if big == 0.0 {
        return if recip { f64::INFINITY } else { 0.0 };
    }
    let e = big.log2().floor() as i32;
    let scale = |v: f64, k: i32| v * 2f64.powi(k / 2) * 2f64.powi(k - k / 2);
    let (mut h, mut l) = (0.0f64, 0.0f64);
    for &x in xs {
        let v = scale(x, -e);
        let p = v * v;
        let pe = v.mul_add(v, -p);
        let s = h + p;
        let bv = s - h;
        let err = (h - (s - bv)) + (p - bv);
        h = s;
        l += err + pe;
    }
    // √(h + l) as rh + rl: rl = (h − rh² + l)/(2·rh), the square's error exact by fma.
    let rh = h.sqrt();
    let rl = ((-rh).mul_add(rh, h) + l) / (2.0 * rh);
    if !recip {
        return scale(rh + rl, e);
    }
    // 1/(rh + rl): q = 1/rh corrected by the residual 1 − q·(rh + rl).
    let q = 1.0 / rh;
    let res = (-rh).mul_add(q, 1.0) - rl * q;
    scale(q.mul_add(res, q), -e)
}

#[test]
fn f32_forms() {
    let mut rng = Rng::new(51);
    let n3 = |xs: &[f32]| norm_f32(&mut M32, xs, false);
    let r3 = |xs: &[f32]| norm_f32(&mut M32, xs, true);
    for n in [3, 4] {
        for _ in 0..20_000 {
            let xs = f32s(&mut rng, n);
            let exact: f64 = xs.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>().sqrt();
            let (got, want) = (n3(&xs), exact as f32);
            let d = ulps32(got, want);
            // CUDA's programming guide: norm3df/norm4df 3 ulp, rnorm3df/rnorm4df 2 ulp.
            assert!(d <= 2, "norm{n}df({xs:?}) = {got:e}, want {want:e}: {d} ulp");
            if exact > 1.2e-38 && exact < 8e37 {
                let (got, want) = (r3(&xs), (1.0 / exact) as f32);
                let d = ulps32(got, want);
                assert!(d <= 2, "rnorm{n}df({xs:?}) = {got:e}, want {want:e}: {d} ulp");
            }
        }
    }
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    assert_eq!(n3(&[3.0, -4.0, 12.0]), 13.0);
    assert_eq!(n3(&[0.0, -0.0, 0.0]), 0.0);
    assert_eq!(n3(&[0.0, -5.0, 0.0, 0.0]), 5.0);
    assert_eq!(n3(&[nan, -inf, 1.0]), inf);
    assert!(n3(&[nan, 1.0, 2.0]).is_nan());
    assert_eq!(n3(&[f32::MAX, f32::MAX, 0.0]), inf);
    assert_eq!(r3(&[0.0, 0.0, -0.0]), inf);
    assert!(same32(r3(&[inf, nan, 1.0]), 0.0));
    assert!(r3(&[nan, 1.0, 2.0, 3.0]).is_nan());
    assert_eq!(r3(&[2.0, 0.0, 0.0, 0.0]), 0.5);
}

#[test]
fn f64_forms() {
    let mut rng = Rng::new(52);
    let v = |rng: &mut Rng| {
        if rng.below(16) == 0 {
            return 0.0;
        }
        let e = rng.below(2000) as i32 - 1000;
        let v = (1.0 + rng.uniform().abs()) * 2f64.powi(e);
        if rng.below(2) == 1 { -v } else { v }
    };
    for n in [3, 4] {
        for _ in 0..20_000 {
            let xs: Vec<f64> = (0..n).map(|_| v(&mut rng)).collect();
            let (got, want) = (norm_f64(&mut M64, &xs, false), reference64(&xs, false));
            let d = ulps64(got, want);
            // CUDA's programming guide: norm3d/norm4d 2 ulp (reached here), rnorm3d/rnorm4d 1 ulp.
            assert!(d <= 2, "norm{n}d({xs:?}) = {got:e}, want {want:e}: {d} ulp");
            let (got, want) = (norm_f64(&mut M64, &xs, true), reference64(&xs, true));
            let d = ulps64(got, want);
            assert!(d <= 1, "rnorm{n}d({xs:?}) = {got:e}, want {want:e}: {d} ulp");
        }
    }
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let n3 = |xs: &[f64]| norm_f64(&mut M64, xs, false);
    let r3 = |xs: &[f64]| norm_f64(&mut M64, xs, true);
    assert_eq!(n3(&[3.0, -4.0, 12.0]), 13.0);
    assert_eq!(n3(&[2.0, 3.0, 5.0, 7.0]), 87f64.sqrt());
    assert_eq!(n3(&[0.0, -0.0, 0.0]), 0.0);
    assert_eq!(n3(&[nan, -inf, 1.0]), inf);
    assert!(n3(&[nan, 1.0, 2.0]).is_nan());
    assert_eq!(n3(&[f64::MAX, f64::MAX, 0.0]), inf);
    assert_eq!(n3(&[5e-324, 0.0, 0.0]), 5e-324);
    assert_eq!(r3(&[0.0, 0.0, -0.0]), inf);
    assert!(same64(r3(&[inf, nan, 1.0]), 0.0));
    assert!(r3(&[nan, 1.0, 2.0, 3.0]).is_nan());
    assert_eq!(r3(&[2.0, 0.0, 0.0, 0.0]), 0.5);
}
