//! The small steps libdevice's f64 sequences share: Horner's rule with `fma.rn` over coefficients given by
//! their bits, the high word of a double, the reciprocal refined from `rcp.approx.ftz.f64`.

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
