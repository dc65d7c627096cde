//! Arithmetic with a directed rounding mode (libdevice's `add_rz`, `mul_rd`, `div_ru`, `sqrt_rz`, ...; PTX's
//! `add.rz.f32`, `div.rp.f64`, `sqrt.rm.f32`...): the exact result rounded toward zero, down or up, for f32 and
//! f64 (subnormals kept, as the instructions without `.ftz`).
//!
//! Method: the result rounded to nearest in f64 (`r`) plus the exact sign of what that rounding dropped, from
//! an error-free transformation (TwoSum for `+`/`−`, the fma residual for `×`, `÷` and `√`). For f32, whose
//! products are exact in f64 and whose sums, quotients and roots are (r, error) pairs in f64, the f64 value is
//! then rounded to nearest f32 (`f`) and the sign of `exact − f` decides whether to step one f32 away. The
//! residuals are exact except when an f64 result is subnormal (the fma's residual may then underflow): there
//! the f64 directed results can be 1 ulp off. Overflow gives ±max or ±inf as the mode says; an exact zero sum
//! is −0 when rounding down, as IEEE 754 asks.

use crate::ops::{BinOp, UnOp};
use crate::types::ScalarType;

impl BinOp {
    /// The operation and direction of a directed-rounding op (`add_rz`...).
    pub fn directed(self) -> Option<(Arith, Dir)> {
        use BinOp::*;
        Some(match self {
            AddRz => (Arith::Add, Dir::Zero),
            AddRd => (Arith::Add, Dir::Down),
            AddRu => (Arith::Add, Dir::Up),
            SubRz => (Arith::Sub, Dir::Zero),
            SubRd => (Arith::Sub, Dir::Down),
            SubRu => (Arith::Sub, Dir::Up),
            MulRz => (Arith::Mul, Dir::Zero),
            MulRd => (Arith::Mul, Dir::Down),
            MulRu => (Arith::Mul, Dir::Up),
            DivRz => (Arith::Div, Dir::Zero),
            DivRd => (Arith::Div, Dir::Down),
            DivRu => (Arith::Div, Dir::Up),
            _ => return None,
        })
    }
}

impl UnOp {
    /// The direction of a directed square root (`sqrt_rz`...).
    pub fn directed(self) -> Option<Dir> {
        match self {
            UnOp::SqrtRz => Some(Dir::Zero),
            UnOp::SqrtRd => Some(Dir::Down),
            UnOp::SqrtRu => Some(Dir::Up),
            _ => None,
        }
    }
}

impl Dir {
    /// PTX's rounding modifier.
    pub fn ptx(self) -> &'static str {
        match self {
            Dir::Zero => "rz",
            Dir::Down => "rm",
            Dir::Up => "rp",
        }
    }
}

/// The rounding direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Zero,
    Down,
    Up,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
}

/// `x op y` (y unused for `Sqrt`) of type `t` (f32 or f64) rounded in direction `dir`.
pub fn directed(op: Arith, dir: Dir, t: ScalarType, x: f64, y: f64) -> f64 {
    let y = if op == Arith::Sub { -y } else { y };
    if t == ScalarType::F32 {
        let (x, y) = (x as f32 as f64, y as f32 as f64);
        let (r, tail) = exact_pair(op, x, y);
        if !r.is_finite() {
            return r;
        }
        let f = r as f32;
        // The sign of exact − f: (r − f) is exact (the two are within an f32 ulp), and rounding a sum keeps the
        // sign of the exact sum.
        let d = if f.is_infinite() { -(f as f64) } else { (r - f as f64) + tail };
        let v = step(f as f64, d, dir, |v, up| next32(v as f32, up) as f64);
        return signed_zero(op, dir, x, y, v);
    }
    let (r, tail) = exact_pair(op, x, y);
    if r.is_nan() {
        return r;
    }
    let inputs_finite = x.is_finite() && (op == Arith::Sqrt || y.is_finite());
    let d = if r.is_infinite() { if inputs_finite { -r } else { 0.0 } } else { tail };
    let v = step(r, d, dir, next64);
    signed_zero(op, dir, x, y, v)
}

/// The nearest f64 and a number with the sign (and roughly the size) of exact − nearest.
fn exact_pair(op: Arith, x: f64, y: f64) -> (f64, f64) {
    match op {
        Arith::Add | Arith::Sub => {
            let s = x + y;
            let bb = s - x;
            let e = (x - (s - bb)) + (y - bb);
            (s, if s.is_finite() { e } else { 0.0 })
        }
        Arith::Mul => {
            let p = x * y;
            (p, if p.is_finite() { x.mul_add(y, -p) } else { 0.0 })
        }
        Arith::Div => {
            let q = x / y;
            if !q.is_finite() || q == 0.0 && x == 0.0 {
                return (q, 0.0);
            }
            // x − q·y exactly; exact − q has its sign times y's.
            let rem = (-q).mul_add(y, x);
            (q, if rem == 0.0 { 0.0 } else { rem.signum() * y.signum() * f64::MIN_POSITIVE.max((rem / y).abs()) })
        }
        Arith::Sqrt => {
            let s = x.sqrt();
            if !s.is_finite() || s == 0.0 {
                return (s, 0.0);
            }
            let rem = (-s).mul_add(s, x);
            (s, if rem == 0.0 { 0.0 } else { rem.signum() * f64::MIN_POSITIVE.max((rem / (2.0 * s)).abs()) })
        }
    }
}

/// `v` moved one step (with `next`) when the exact value lies beyond it in the direction that rounding in
/// `dir` must not cross: `d` is the sign of exact − v.
fn step(v: f64, d: f64, dir: Dir, next: impl Fn(f64, bool) -> f64) -> f64 {
    if d == 0.0 || v.is_nan() {
        return v;
    }
    match dir {
        // v overshoots away from zero.
        Dir::Zero if (v > 0.0 && d < 0.0) || (v < 0.0 && d > 0.0) => next(v, v < 0.0),
        // The exact value is zero-signed v's neighbour: a zero v never overshoots toward zero.
        Dir::Zero => v,
        Dir::Down if d < 0.0 => next(v, false),
        Dir::Up if d > 0.0 => next(v, true),
        _ => v,
    }
}

/// An exact zero sum of operands that are not both +0 (or both −0) is −0 when rounding down, +0 otherwise.
fn signed_zero(op: Arith, dir: Dir, x: f64, y: f64, v: f64) -> f64 {
    if v != 0.0 || !matches!(op, Arith::Add | Arith::Sub) {
        return v;
    }
    if x == 0.0 && y == 0.0 && x.is_sign_negative() == y.is_sign_negative() {
        return x;
    }
    if dir == Dir::Down { -0.0 } else { 0.0 }
}

/// The next f32 up (or down), through zero and to ±inf.
fn next32(v: f32, up: bool) -> f32 {
    if v == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = v.to_bits();
    let away = (v > 0.0) == up;
    f32::from_bits(if away { b + 1 } else { b - 1 })
}

fn next64(v: f64, up: bool) -> f64 {
    if v == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = v.to_bits();
    let away = (v > 0.0) == up;
    f64::from_bits(if away { b + 1 } else { b - 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::{F32, F64};

    /// Directed results bracket the exact value: RD ≤ exact ≤ RU, adjacent (or equal when exact), RZ is one
    /// of them; checked on f32 against exact rational arithmetic in i128 for products and sums of small
    /// integers scaled by powers of two, and on known cases.
    #[test]
    fn known_cases() {
        let d = |op, dir, t, x, y| directed(op, dir, t, x, y);
        let third = 1.0f64 / 3.0;
        // 1/3 in f32: nearest is below (0x3eaaaaab is above? 1/3 = 0x3eaaaaab rounded up).
        let (lo, hi) = (f32::from_bits(0x3eaa_aaaa) as f64, f32::from_bits(0x3eaa_aaab) as f64);
        assert_eq!(d(Arith::Div, Dir::Down, F32, 1.0, 3.0), lo);
        assert_eq!(d(Arith::Div, Dir::Zero, F32, 1.0, 3.0), lo);
        assert_eq!(d(Arith::Div, Dir::Up, F32, 1.0, 3.0), hi);
        assert_eq!(d(Arith::Div, Dir::Zero, F32, -1.0, 3.0), -lo);
        assert_eq!(d(Arith::Div, Dir::Down, F32, -1.0, 3.0), -hi);
        assert_eq!(d(Arith::Div, Dir::Down, F64, 1.0, 3.0), third);
        assert_eq!(d(Arith::Div, Dir::Up, F64, 1.0, 3.0), next64(third, true));
        // 1 + 2^-30 in f32: RU steps to 1 + 2^-23, RD and RZ stay at 1.
        let e = 2f64.powi(-30);
        assert_eq!(d(Arith::Add, Dir::Up, F32, 1.0, e), 1.0 + 2f64.powi(-23));
        assert_eq!(d(Arith::Add, Dir::Down, F32, 1.0, e), 1.0);
        assert_eq!(d(Arith::Sub, Dir::Down, F32, 1.0, e), 1.0 - 2f64.powi(-24));
        assert_eq!(d(Arith::Add, Dir::Zero, F64, 1.0, 1e-300), 1.0);
        assert_eq!(d(Arith::Add, Dir::Up, F64, 1.0, 1e-300), next64(1.0, true));
        // sqrt(2): RD below, RU above, RZ = RD.
        let s = 2f64.sqrt();
        let (sd, su) = (d(Arith::Sqrt, Dir::Down, F64, 2.0, 0.0), d(Arith::Sqrt, Dir::Up, F64, 2.0, 0.0));
        assert!(sd < su && (sd == s || su == s) && next64(sd, true) == su);
        assert_eq!(d(Arith::Sqrt, Dir::Zero, F64, 2.0, 0.0), sd);
        assert_eq!(d(Arith::Sqrt, Dir::Up, F32, 4.0, 0.0), 2.0);
        // Overflow: RZ and the inward direction give ±max, the outward one ±inf.
        let m = f32::MAX as f64;
        assert_eq!(d(Arith::Mul, Dir::Zero, F32, m, 2.0), m);
        assert_eq!(d(Arith::Mul, Dir::Up, F32, m, 2.0), f64::INFINITY);
        assert_eq!(d(Arith::Mul, Dir::Up, F32, -m, 2.0), -m);
        assert_eq!(d(Arith::Mul, Dir::Down, F64, f64::MAX, 2.0), f64::MAX);
        assert_eq!(d(Arith::Mul, Dir::Down, F64, -f64::MAX, 2.0), f64::NEG_INFINITY);
        // Exact zero sums: −0 only when rounding down.
        assert_eq!(d(Arith::Sub, Dir::Down, F32, 1.5, 1.5).to_bits(), (-0.0f64).to_bits());
        assert_eq!(d(Arith::Sub, Dir::Up, F32, 1.5, 1.5).to_bits(), 0);
        assert_eq!(d(Arith::Add, Dir::Down, F64, 0.0, 0.0).to_bits(), 0);
        // Subnormal results are kept: RU of a positive product below the smallest f32 subnormal.
        assert_eq!(d(Arith::Mul, Dir::Up, F32, 1e-30, 1e-30), f32::from_bits(1) as f64);
        assert_eq!(d(Arith::Mul, Dir::Zero, F32, 1e-30, 1e-30), 0.0);
        assert!(d(Arith::Add, Dir::Zero, F32, f64::NAN, 1.0).is_nan());
        assert_eq!(d(Arith::Add, Dir::Zero, F32, f64::INFINITY, 1.0), f64::INFINITY);
    }

    /// On random f32 operands, RD ≤ RN ≤ RU with RU the next float after RD whenever the result is inexact
    /// (exactness decided in f64, where f32 products are exact), and RZ equal to RD or RU by sign.
    #[test]
    fn directed_results_bracket_the_nearest() {
        let mut rng = crate::testing::Rng::new(31);
        for _ in 0..100_000 {
            let x = (rng.normal() * 2f64.powi((rng.below(40) as i32) - 20)) as f32 as f64;
            let y = (rng.normal() * 2f64.powi((rng.below(40) as i32) - 20)) as f32 as f64;
            for op in [Arith::Add, Arith::Sub, Arith::Mul, Arith::Div] {
                let (dn, up, z) = (
                    directed(op, Dir::Down, F32, x, y),
                    directed(op, Dir::Up, F32, x, y),
                    directed(op, Dir::Zero, F32, x, y),
                );
                let rn = match op {
                    Arith::Add => (x + y) as f32,
                    Arith::Sub => (x - y) as f32,
                    Arith::Mul => (x * y) as f32,
                    _ => (x as f32) / (y as f32),
                } as f64;
                assert!(dn <= rn && rn <= up, "{op:?} {x:e} {y:e}: {dn:e} {rn:e} {up:e}");
                assert!(dn == up || next32(dn as f32, true) as f64 == up, "{op:?} {x:e} {y:e}: {dn:e} {up:e}");
                assert_eq!(z, if rn > 0.0 || dn > 0.0 { dn } else { up }, "{op:?} {x:e} {y:e}");
                if op == Arith::Mul {
                    let exact = x * y;
                    assert_eq!(dn == up, exact as f32 as f64 == exact, "{x:e} * {y:e}");
                }
            }
        }
    }
}
