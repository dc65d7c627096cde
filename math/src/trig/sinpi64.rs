//! libdevice's f64 `sinpi` and `cospi` as Triton 3.6 runs them (`__nv_sinpi`, `__nv_cospi` in its PTX for
//! sm_90), op for op: n = rni(2x) (2x formed by adding 1 to the exponent field), r = (x − n/2)·π in two parts,
//! then the sine or cosine polynomial of `__cudart_sin_cos_coeffs` by the quadrant. Exact arithmetic only, so
//! the CPU model gives the GPU's bits.

use crate::FloatOps;

/// libdevice's `__cudart_sin_cos_coeffs`: the sine polynomial (r² powers, highest first, ending in 0) and the
/// cosine one (ending in −1/2, 1).
const SIN: [u64; 7] = [
    0x3de5_db65_f978_5eba,
    0xbe5a_e5f1_2cb0_d246,
    0x3ec7_1de3_69ac_e392,
    0xbf2a_01a0_19db_62a1,
    0x3f81_1111_1111_0818,
    0xbfc5_5555_5555_5554,
    0x0,
];
const COS: [u64; 7] = [
    0xbda8_ff83_20fd_8164,
    0x3e21_eea7_c1ef_8528,
    0xbe92_7e4f_8e06_e6d9,
    0x3efa_01a0_19dd_bce9,
    0xbf56_c16c_16c1_5d47,
    0x3fa5_5555_5555_5551,
    0xbfe0_0000_0000_0000,
];

/// sin(r + q·π/2) for |r| ≤ π/4.
pub(crate) fn kernel<T: FloatOps>(o: &mut T, q: T::I, r: T::F) -> T::F {
    let one_i = o.ic(1);
    let bit = o.iand(q, one_i);
    let z = o.ic(0);
    let even = o.ieq(bit, z);
    let r2 = o.mul(r, r);
    let (s0, c0) = (o.fbits(SIN[0]), o.fbits(COS[0]));
    let mut p = o.sel(even, s0, c0);
    for i in 1..7 {
        let (s, c) = (o.fbits(SIN[i]), o.fbits(COS[i]));
        let ci = o.sel(even, s, c);
        p = o.fma(p, r2, ci);
    }
    let sv = o.fma(p, r, r);
    let one = o.fc(1.0);
    let cv = o.fma(p, r2, one);
    let v = o.sel(even, sv, cv);
    let two = o.ic(2);
    let bit = o.iand(q, two);
    let keep = o.ieq(bit, z);
    let (m1, zero) = (o.fc(-1.0), o.fc(0.0));
    let nv = o.fma(v, m1, zero);
    o.sel(keep, v, nv)
}

/// (n, r) with n = rni(2x) (2x by the exponent field: +2^52 on the bits) and r = (x − n/2)·π.
pub(crate) fn reduce<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F) {
    let b = o.f_to_bits(x);
    let step = o.ic(0x0010_0000_0000_0000);
    let b2 = o.iadd(b, step);
    let x2 = o.bits_to_f(b2);
    let n = o.rni(x2);
    let q = o.f2i(n);
    let nn = o.neg(n);
    let half = o.fc(0.5);
    let r = o.fma(nn, half, x);
    let lo = o.fbits(0x3ca1_a626_3314_5c07);
    let rl = o.mul(r, lo);
    let hi = o.fbits(0x4009_21fb_5444_2d18);
    let r = o.fma(r, hi, rl);
    (q, r)
}

/// `__nv_sinpi`: an integral x (infinities included) gives x·0.
pub fn sinpi<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (q, r) = reduce(o, x);
    let v = kernel(o, q, r);
    let t = o.trunc(x);
    let int = o.eq(t, x);
    let zero = o.fc(0.0);
    let z = o.mul(x, zero);
    o.sel(int, z, v)
}

/// `__nv_cospi`: |x| at or above 2^53 (the high half of the bits, shifted left once, above 0x86800000) read as
/// x·0; the quadrant is n + 1.
pub fn cospi<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let b = o.f_to_bits(x);
    let b2 = o.shl(b, 1);
    let lim = o.ic(0x8680_0001_ffff_ffff);
    let big = o.ult(lim, b2);
    let zero = o.fc(0.0);
    let z = o.mul(x, zero);
    let x = o.sel(big, z, x);
    let (q, r) = reduce(o, x);
    let one = o.ic(1);
    let q = o.iadd(q, one);
    kernel(o, q, r)
}

#[cfg(test)]
mod tests;
