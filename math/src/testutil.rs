//! Measuring a libm routine on the CPU model against the host's float64 functions: ulp distances and random
//! points spread over every binade of a range.

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
pub fn worst_f32(f: fn(&mut crate::model::M32, f32) -> f32, refs: &[(f64, f64)]) -> (u64, f32) {
    let mut w = (0, 0.0);
    for &(x, want) in refs {
        let x = x as f32;
        let d = ulps32(f(&mut crate::model::M32, x), want as f32);
        if d > w.0 {
            w = (d, x);
        }
    }
    w
}

/// The largest distance in f64 ulps from `f` to a table of (x, reference) rows, and the x where it is.
pub fn worst_f64(f: fn(&mut crate::model::M64, f64) -> f64, refs: &[(f64, f64)]) -> (u64, f64) {
    let mut w = (0, 0.0);
    for &(x, want) in refs {
        let d = ulps64(f(&mut crate::model::M64, x), want);
        if d > w.0 {
            w = (d, x);
        }
    }
    w
}
