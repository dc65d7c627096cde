//! libdevice's f64 `__nv_log` as its f64 sequences inline it (`erfcinv`'s far tail, the Bessel and gamma
//! functions; `acosh` runs its core, [`log_series`], after its own reduction).

use crate::FloatOps;
use crate::steps64::{horner, recip};

/// ln(1 + 2f)-style series of `__nv_log` in (2f)², highest degree first; `acosh`'s logarithm evaluates it too.
const LOG_SERIES: [u64; 8] = [
    0x3eb1_380b_3ae8_0f1e,
    0x3ed0_ee25_8b7a_8b04,
    0x3ef3_b266_9f02_676f,
    0x3f17_45cb_a9ab_0956,
    0x3f3c_71c7_2d1b_5154,
    0x3f62_4924_923b_e72d,
    0x3f89_9999_9999_a3c4,
    0x3fb5_5555_5555_5554,
];

/// `__nv_log` for m below 2^−333 (or not positive): subnormals scaled by 2^54, m = 2^e·f with f in
/// [0.7071, 1.4142), ln f = 2u + (2u)³·P((2u)²) with 2u = 2(f − 1)/(f + 1) and its rounding error carried, e·ln 2
/// in two parts. 0 gives −inf; negative, inf and NaN give m·inf + inf.
pub(crate) fn log_full<T: FloatOps>(o: &mut T, m: T::F) -> T::F {
    let mb = o.f_to_bits(m);
    let mh = o.shr(mb, 32);
    let (lo, hi) = (o.ic(0x000f_ffff), o.ic(0x8000_0000));
    let above = o.ult(lo, mh);
    let pos = o.ult(mh, hi);
    let normal = o.and(above, pos);
    let big = o.fbits(0x4350_0000_0000_0000);
    let ms = o.mul(m, big);
    let m = o.sel(normal, m, ms);
    let (e1, e2) = (o.ic(1023u64.wrapping_neg()), o.ic(1077u64.wrapping_neg()));
    let e0 = o.isel(normal, e1, e2);
    let mb = o.f_to_bits(m);
    let mh = o.shr(mb, 32);
    let zero = o.ic(0);
    let is_zero_hi = o.ieq(mh, zero);
    let lim = o.ic(0x7fef_ffff);
    let over = o.ult(lim, mh);
    let special = o.or(is_zero_hi, over);
    let eb = o.shr(mh, 20);
    let e = o.iadd(e0, eb);
    let keep = o.ic(0x000f_ffff_ffff_ffff);
    let fb = o.iand(mb, keep);
    let one = o.ic(0x3ff0_0000_0000_0000);
    let fb = o.ior(fb, one);
    let fh = o.shr(fb, 32);
    let sq2 = o.ic(0x3ff6_a09f);
    let low = o.ult(fh, sq2);
    let (d0, d1) = (o.ic(0), o.ic(1 << 52));
    let dec = o.isel(low, d0, d1);
    let fb = o.isub(fb, dec);
    let (i0, i1) = (o.ic(0), o.ic(1));
    let inc = o.isel(low, i0, i1);
    let e = o.iadd(e, inc);
    let f = o.bits_to_f(fb);
    let (m1, p1) = (o.fc(-1.0), o.fc(1.0));
    let a = o.add(f, m1);
    let b = o.add(f, p1);
    let r = recip(o, b);
    let (u, lo) = log_series(o, a, r);
    let ef = o.i2f(e);
    let (l2h, l2l) = (o.fbits(0x3fe6_2e42_fefa_39ef), o.fbits(0x3c7a_bc9e_3b39_803f));
    let hi = o.fma(ef, l2h, u);
    let nef = o.neg(ef);
    let back = o.fma(nef, l2h, hi);
    let back = o.sub(back, u);
    let lo = o.sub(lo, back);
    let lo = o.fma(ef, l2l, lo);
    let l = o.add(hi, lo);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let sp = o.fma(m, inf, inf);
    let mask = o.ic(0x7fff_ffff);
    let mha = o.iand(mh, mask);
    let zero_m = o.ieq(mha, zero);
    let ninf = o.fbits(0xfff0_0000_0000_0000);
    let sp = o.sel(zero_m, ninf, sp);
    o.sel(special, sp, l)
}

/// The core of `__nv_log` once its argument is reduced to m = 1 + f in [0.707, 1.414), with r the refined
/// reciprocal of m + 1: ln m = u + lo, u = 2f·r with its rounding error carried into lo, and the series in u²
/// (`acosh`'s logarithm, with its own reduction, shares it).
pub(crate) fn log_series<T: FloatOps>(o: &mut T, f: T::F, r: T::F) -> (T::F, T::F) {
    let u = o.mul(f, r);
    let u = o.fma(f, r, u);
    let u2 = o.mul(u, u);
    let q = horner(o, u2, &LOG_SERIES);
    let d = o.sub(f, u);
    let d = o.add(d, d);
    let nu = o.neg(u);
    let d = o.fma(nu, f, d);
    let d = o.mul(r, d);
    let q = o.mul(u2, q);
    let lo = o.fma(q, u, d);
    (u, lo)
}
