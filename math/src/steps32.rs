//! The small steps libdevice's f32 sequences share: a constant from its bits, Horner's rule with `fma.rn.ftz`,
//! a magnitude given another value's sign.

use crate::FloatOps;

const SIGN: u64 = 0x8000_0000;

pub(crate) fn k<T: FloatOps>(o: &mut T, bits: u32) -> T::F {
    o.fbits(bits as u64)
}

/// Horner's rule with `fma.rn.ftz`: ((c0·x + c1)·x + c2)... with `c` from the highest degree down.
pub(crate) fn horner<T: FloatOps>(o: &mut T, x: T::F, c: &[u32]) -> T::F {
    let mut acc = k(o, c[0]);
    for &ci in &c[1..] {
        let ci = k(o, ci);
        acc = o.fma_ftz(acc, x, ci);
    }
    acc
}

/// |x| with the sign of `s` put back by bits: (s & sign) | bits(v), for v ≥ 0.
pub(crate) fn with_sign<T: FloatOps>(o: &mut T, v: T::F, s: T::F) -> T::F {
    let sb = o.f_to_bits(s);
    let m = o.ic(SIGN);
    let sb = o.iand(sb, m);
    let vb = o.f_to_bits(v);
    let r = o.ior(sb, vb);
    o.bits_to_f(r)
}
