//! libdevice's f64 `erfc`, `normcdf` and `erfcx` (`__nv_erfc`, `__nv_normcdf`, `__nv_erfcx`) as Triton 3.6 runs
//! them (their PTX for sm_90), op for op; branches become selects, and the 32-bit halves libdevice works on are
//! the same bits of the 64-bit integers here. Exact arithmetic and `rcp.approx.ftz.f64` (refined by Newton steps
//! to the correctly rounded reciprocal's neighbourhood, so the CPU model's correctly rounded start lands on the
//! same bits except in rare ties).

use crate::FloatOps;
use crate::exp_log::exp64::{exp_full, exp_neg};
use crate::steps64::{hi_abs, horner, recip};

/// erfc c polynomial in t = (a − 4)/(a + 4), highest degree first.
const C: [u64; 23] = [
    0xbdf8_774a_d4e0_bfd7,
    0xbe44_e1c6_fd03_d328,
    0xbe43_3014_9f7a_56b6,
    0x3e7b_edde_d837_6273,
    0x3e6f_9254_c3ab_f22b,
    0xbeab_9068_c214_8cf0,
    0x3e94_c645_4db3_4009,
    0x3ed7_f1c3_78f2_311d,
    0xbee7_8e05_1c6d_5c58,
    0xbef9_95b4_ead1_4a90,
    0x3f23_be27_cf0a_29b2,
    0xbf2a_1def_3e81_672e,
    0xbf48_d4ab_e68c_1713,
    0x3f74_9c67_210d_d6b4,
    0xbf90_9623_8568_e357,
    0x3fa3_079e_df8c_2dc9,
    0xbfb0_fb06_dff6_01fc,
    0x3fb7_fee0_04df_bcdc,
    0xbfb9_ddb2_3c3d_b8c6,
    0x3fb1_6ece_fcfa_5fda,
    0x3f8f_7f5d_f66f_b6d6,
    0xbfc1_df1a_d154_a29d,
    0x3ff3_ba59_16e9_fd7f,
];

/// erfc(a)·e^(a²) for a = |x| as `erfc` and `erfcx` compute it: t = (a − 4)/(a + 4) (corrected once), p(t) of
/// degree 22, p/(1 + 2a) (corrected once).
pub(crate) fn erfcx_rational<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let (m4, p4, one, two) = (o.fc(-4.0), o.fc(4.0), o.fc(1.0), o.fc(2.0));
    let n = o.add(a, m4);
    let d = o.add(a, p4);
    let r = recip(o, d);
    let t = o.mul(n, r);
    let t1 = o.add(t, one);
    let e = o.fma(m4, t1, a);
    let nt = o.neg(t);
    let e = o.fma(nt, a, e);
    let t = o.fma(r, e, t);
    let p = horner(o, t, &C);
    let d2 = o.fma(two, a, one);
    let r2 = recip(o, d2);
    let q = o.mul(r2, p);
    let m2 = o.fc(-2.0);
    let m = o.mul(q, m2);
    let s = o.fma(a, m, p);
    let nq = o.neg(q);
    let s = o.add(s, nq);
    o.fma(s, r2, q)
}

/// `__nv_erfc`: for a = |x|, t = (a − 4)/(a + 4), p(t) of degree 22, erfc(a) = p/(1 + 2a) (corrected once) ·
/// e^(−a²) (the square's rounding error carried in); 0 above |x| = 27.3 (hi word 0x403b4000); 2 − erfc(a) for
/// negative x; ±inf give 0 and 2, NaN gives x + x.
pub fn erfc<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (ha, xb) = hi_abs(o, x);
    let a = o.abs(x);
    let q = erfcx_rational(o, a);
    let two = o.fc(2.0);
    let na = o.neg(a);
    let sq = o.mul(a, na);
    let v = exp_neg(o, sq);
    let nsq = o.neg(sq);
    let err = o.fma(na, a, nsq);
    let v = o.fma(v, err, v);
    let res = o.mul(v, q);
    let lim = o.ic(0x403b_4000);
    let far = o.ult(lim, ha);
    let zero = o.fc(0.0);
    let res = o.sel(far, zero, res);
    let izero = o.ic(0);
    let neg = o.slt(xb, izero);
    let nres = o.sub(two, res);
    let res = o.sel(neg, nres, res);
    // inf and NaN.
    let ilim = o.ic(0x7fef_ffff);
    let special = o.ult(ilim, ha);
    let mag = o.ic(0x7fff_ffff_ffff_ffff);
    let ab = o.iand(xb, mag);
    let inf = o.ic(0x7ff0_0000_0000_0000);
    let is_inf = o.ieq(ab, inf);
    let lim_v = o.sel(neg, two, zero);
    let xx = o.add(x, x);
    let sp = o.sel(is_inf, lim_v, xx);
    o.sel(special, sp, res)
}

/// `__nv_normcdf`: Φ(x) = erfc(−x/√2)/2 with x clamped to ±38.5, −x/√2 carried as h + l (1/√2 in two parts),
/// `erfc` of u = h + l, and for x < −1 (x's high word at least 0xbff00001) the first-order correction for
/// the part of h + l that u lost: erfc(u) − 2u·erfc(u)·((h − u) + l).
pub fn normcdf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let lim = o.fc(38.5);
    let big = o.lt(lim, a);
    let xb = o.f_to_bits(x);
    let sign = o.ic(1 << 63);
    let sb = o.iand(xb, sign);
    let lb = o.f_to_bits(lim);
    let cb = o.ior(sb, lb);
    let cl = o.bits_to_f(cb);
    let t = o.sel(big, cl, x);
    let c = o.fbits(0xbfe6_a09e_667f_3bcd);
    let h = o.mul(t, c);
    let nh = o.neg(h);
    let e = o.fma(t, c, nh);
    let cl = o.fbits(0x3c8b_dd34_13b2_6456);
    let l = o.fma(t, cl, e);
    let u = o.add(h, l);
    let v = erfc(o, u);
    let tb = o.f_to_bits(t);
    let th = o.shr(tb, 32);
    let ilim = o.ic(0xbff0_0001);
    let small = o.ult(th, ilim);
    let d = o.sub(h, u);
    let d = o.add(d, l);
    let m2 = o.fc(-2.0);
    let m = o.mul(u, m2);
    let m = o.mul(m, v);
    let w = o.fma(m, d, v);
    let v = o.sel(small, v, w);
    let half = o.fc(0.5);
    o.mul(v, half)
}

/// `__nv_erfcx`: e^(x²)·erfc(x). Below |x| = 32 (the high word of |x| below 0x40400000) `erfc`'s rational part;
/// beyond (and NaN) the asymptotic series r/√π·(1 − r²/2 + 3r⁴/4 − 15r⁶/8 + 105r⁸/16 − 945r¹⁰/32) in r = 1/x
/// (correctly rounded). For x < 0 (x's sign bit), 2·e^(x²)·(1 + err) − erfcx(|x|) with err the square's rounding
/// error and `__nv_exp` of x² (2^n put on the exponent directly, in two halves from x² = 708.4 on, inf from 745);
/// inf where 2·e^(x²) overflows.
pub fn erfcx<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (ha, xb) = hi_abs(o, x);
    let a = o.abs(x);
    let near = erfcx_rational(o, a);
    let one = o.fc(1.0);
    let r = o.div(one, x);
    let r2 = o.mul(r, r);
    let c = [
        0xc03d_8800_0000_0000,
        0x401a_4000_0000_0000,
        0xbffe_0000_0000_0000,
        0x3fe8_0000_0000_0000,
        0xbfe0_0000_0000_0000,
        0x3ff0_0000_0000_0000,
    ];
    let p = horner(o, r2, &c);
    let k = o.fbits(0x3fe2_0dd7_5042_9b6d);
    let rk = o.mul(r, k);
    let far = o.mul(rk, p);
    let lim = o.ic(0x4040_0000);
    let small = o.ult(ha, lim);
    let pos = o.sel(small, near, far);
    // x < 0.
    let s = o.mul(x, x);
    let ns = o.neg(s);
    let err = o.fma(x, x, ns);
    let v = exp_full(o, s);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let v2 = o.add(v, v);
    let w = o.fma(v2, err, v2);
    let neg = o.sub(w, pos);
    let is_inf = o.eq(v2, inf);
    let neg = o.sel(is_inf, inf, neg);
    let izero = o.ic(0);
    let is_neg = o.slt(xb, izero);
    o.sel(is_neg, neg, pos)
}

#[cfg(test)]
mod tests;
