//! The small steps the f64 sequences share: Horner's rule with `fma.rn` over coefficients given by their bits, the
//! high word of a double, the reciprocal refined from `rcp.approx.ftz.f64` (libdevice's); a magnitude with another
//! value's sign, a polynomial over f64 coefficients, finiteness (tessel's own routines').

use crate::FloatOps;

/// Horner's rule with `fma.rn`: ((c0·x + c1)·x + c2)... with `c` from the highest degree down.
pub(crate) fn horner<T: FloatOps>(o: &mut T, x: T::F, c: &[u64]) -> T::F {
    let mut acc = o.fbits(c[0]);
    for &ci in &c[1..] {
        let k = o.fbits(ci);
        acc = o.fma(acc, x, k);
    }
    acc
}

/// The high 32 bits of x's bits with the sign cleared (libdevice's `hi & 0x7fffffff`), and x's bits.
pub(crate) fn hi_abs<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::I) {
    let xb = o.f_to_bits(x);
    let h = o.shr(xb, 32);
    let m = o.ic(0x7fff_ffff);
    (o.iand(h, m), xb)
}

/// 1/d from `rcp.approx.ftz.f64` and libdevice's refinement: e = 1 − d·r, e + e², r + r·(e + e²).
pub(crate) fn recip<T: FloatOps>(o: &mut T, d: T::F) -> T::F {
    let one = o.fc(1.0);
    let r = o.rcp_approx_ftz(d);
    let nd = o.neg(d);
    let e = o.fma(nd, r, one);
    let e = o.fma(e, e, e);
    o.fma(e, r, r)
}

pub(crate) const SIGN: u64 = 1 << 63;

/// `|a|` with the sign of `s`.
pub(crate) fn copysign<T: FloatOps>(o: &mut T, a: T::F, s: T::F) -> T::F {
    let ab = o.f_to_bits(a);
    let m = o.ic(!SIGN);
    let ab = o.iand(ab, m);
    let sb = o.f_to_bits(s);
    let sm = o.ic(SIGN);
    let sb = o.iand(sb, sm);
    let r = o.ior(ab, sb);
    o.bits_to_f(r)
}

pub(crate) fn poly<T: FloatOps>(o: &mut T, x: T::F, c: &[f64]) -> T::F {
    let c: Vec<T::F> = c.iter().map(|&v| o.fc(v)).collect();
    let (last, rest) = c.split_last().expect("coefficients");
    rest.iter().rev().fold(*last, |acc, &k| o.fma(acc, x, k))
}

pub(crate) fn is_finite<T: FloatOps>(o: &mut T, x: T::F) -> T::P {
    let ax = o.abs(x);
    let inf = o.fc(f64::INFINITY);
    o.lt(ax, inf)
}

/// (hi, lo) constant pair.
pub(crate) fn pair<T: FloatOps>(o: &mut T, p: (u64, u64)) -> (T::F, T::F) {
    (o.fbits(p.0), o.fbits(p.1))
}
