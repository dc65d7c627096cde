//! Measuring a libm routine on the CPU model against the host's float64 functions: ulp distances and random
//! points spread over every binade of a range.

use crate::model::{M32, M64};
use crate::testing::Rng;

/// The distance in f32 ulps between two f32 values (the integers of their bits, ordered).
pub fn ulps32(a: f32, b: f32) -> u64 {
    let key = |v: f32| {
        let b = v.to_bits() as i64;
        if b < 0x8000_0000 { b } else { 0x8000_0000 - b }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// The distance in f64 ulps between two f64 values.
pub fn ulps64(a: f64, b: f64) -> u64 {
    let key = |v: f64| {
        let b = v.to_bits() as i128;
        if b < 1 << 63 { b } else { (1 << 63) - b }
    };
    (key(a) - key(b)).unsigned_abs() as u64
}

/// `n` points in [lo, hi] (lo > 0): half uniform, half log-uniform (so every binade gets its share), each
/// negated with probability ½ when `signed`.
pub fn spread(rng: &mut Rng, lo: f64, hi: f64, n: usize, signed: bool) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let t = (rng.uniform() + 1.0) / 2.0;
            let x = if i % 2 == 0 { lo + (hi - lo) * t } else { (lo.ln() + (hi.ln() - lo.ln()) * t).exp() };
            if signed && rng.below(2) == 1 { -x } else { x }
        })
        .collect()
}

/// Both NaN, or the same bits.
pub fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

pub fn same64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The largest distance in f32 ulps from `f` to a table of (x, reference) rows (x an f32, the reference
/// rounded to f32), and the x where it is.
pub fn worst_f32(f: fn(&mut M32, f32) -> f32, refs: &[(f64, f64)]) -> (u64, f32) {
    let mut w = (0, 0.0);
    for &(x, want) in refs {
        let x = x as f32;
        let d = ulps32(f(&mut M32, x), want as f32);
        if d > w.0 {
            w = (d, x);
        }
    }
    w
}

/// The largest distance in f64 ulps from `f` to a table of (x, reference) rows, and the x where it is.
pub fn worst_f64(f: fn(&mut M64, f64) -> f64, refs: &[(f64, f64)]) -> (u64, f64) {
    let mut w = (0, 0.0);
    for &(x, want) in refs {
        let d = ulps64(f(&mut M64, x), want);
        if d > w.0 {
            w = (d, x);
        }
    }
    w
}

/// An f32 routine on the CPU model.
pub type Routine32 = fn(&mut M32, f32) -> f32;

/// The largest distance in f32 ulps from `f` (CPU model) to the f64 function `g` rounded to f32, over random
/// points of every binade in `[lo, hi]` (and their negatives when `signed`, for the odd functions), and where.
pub fn worst_sampled32(f: Routine32, g: fn(f64) -> f64, lo: f32, hi: f32, signed: bool) -> (u64, f32) {
    // erff and tanhf (the signed ones) read subnormals as zero; logf and log2f (not signed) scale them.
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
        let d = ulps32(got, want);
        if d > w {
            (w, at) = (d, x);
        }
    }
    (w, at)
}

/// The largest distance in f32 ulps from `f` to the f64 function `g` rounded to f32 over the points `xs`
/// (taken as f32), and where.
pub fn worst_at32(f: Routine32, g: fn(f64) -> f64, xs: &[f64]) -> (u64, f32) {
    let (mut w, mut at) = (0, 0.0);
    for &x in xs {
        let x = x as f32;
        let (got, want) = (f(&mut M32, x), g(x as f64) as f32);
        if got.is_nan() && want.is_nan() {
            continue;
        }
        let d = ulps32(got, want);
        if d > w {
            (w, at) = (d, x);
        }
    }
    (w, at)
}

/// Every row of a reference table within `bound` f64 ulps of `f`.
pub fn within64(name: &str, f: fn(&mut M64, f64) -> f64, refs: &[(f64, f64)], bound: u64) {
    for &(x, want) in refs {
        let got = f(&mut M64, x);
        let d = ulps64(got, want);
        assert!(d <= bound, "{name}({x:e}) = {got:e}, want {want:e}: {d} ulp");
    }
}
