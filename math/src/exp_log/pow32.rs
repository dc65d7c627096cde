//! libdevice's `powf` as Triton 3.6 runs it (`__nv_powf` in its PTX for sm_90 under `__CUDA_FTZ`), op for op;
//! branches become selects. ln|x| is carried as a head and tail (the reduction's reciprocal by
//! `rcp.approx.ftz`), y·ln|x| as a head and tail, e^(head) by libdevice's `expf` reduction and `ex2.approx.ftz`,
//! then corrected by the tail; C's special cases after. The CPU model evaluates the two approximate
//! instructions as correctly rounded functions, so it can differ from the GPU in the last bits.
//!
//! Whether y is an integer (odd, or at all) is decided on y's own bits without flushing (`cvt.rzi` and compares
//! without `.ftz`): a subnormal y is not an integer, so `powf(−1, 2^-149)` is NaN, as on the GPU.

use crate::FloatOps;
use crate::rounding::{Arith, Dir};
use crate::steps32::{horner, k};

/// a > b (ordered).
fn gt<T: FloatOps>(o: &mut T, a: T::F, b: T::F) -> T::P {
    o.lt(b, a)
}

/// The float with bits `b`.
fn kb<T: FloatOps>(o: &mut T, b: u32) -> T::I {
    o.ic(b as u64)
}

fn add_ftz<T: FloatOps>(o: &mut T, a: T::F, b: T::F) -> T::F {
    o.arith_ftz(Arith::Add, Dir::Nearest, a, b)
}

/// ln|x| as head + tail (|x| = 2^e·m, m in (√2/2, √2], ln m = 2·atanh((m − 1)/(m + 1)) by a short odd
/// polynomial with the quotient's rounding error carried), e·ln 2 in two parts added with compensation.
fn log_ext<T: FloatOps>(o: &mut T, ax: T::F) -> (T::F, T::F) {
    let b = o.f_to_bits(ax);
    let fm = kb(o, 0x007f_ffff);
    let mant = o.iand(b, fm);
    let one_b = kb(o, 0x3f80_0000);
    let mant = o.ior(mant, one_b);
    let m = o.bits_to_f(mant);
    let eb = o.shr(b, 23);
    let ef = o.i2f(eb);
    let bias = k(o, 0xc2fe_0000);
    let e = o.add(ef, bias);
    let sqrt2 = k(o, 0x3fb5_04f3);
    let up = gt(o, m, sqrt2);
    let half = o.fc(0.5);
    let mh = o.mul(m, half);
    let one = o.fc(1.0);
    let e1 = o.add(e, one);
    let e = o.sel(up, e1, e);
    let m = o.sel(up, mh, m);
    let m1 = o.fc(-1.0);
    let num = o.add(m, m1);
    let den = o.add(m, one);
    let rc = o.rcp_approx_ftz(den);
    let n2 = o.add(num, num);
    let q = o.mul(rc, n2);
    let q2 = o.mul(q, q);
    let p = horner(o, q2, &[0x3b18_f0fe, 0x3c4c_af63, 0x3daa_aabd]);
    let p = o.mul_ftz(p, q2);
    let p = o.mul_ftz(p, q);
    // The rounding error of q (through fmas with the reciprocal), then q + p as a head r48 and a tail r50
    // (Fast2Sum), the names those of libdevice's registers.
    let nrc = o.neg(rc);
    let r38 = o.fma(nrc, n2, num);
    let r39 = o.add(r38, r38);
    let nq = o.neg(q);
    let r41 = o.fma_ftz(nq, num, r39);
    let r42 = o.mul_ftz(rc, r41);
    let r43 = o.fma(rc, n2, p);
    let nr43 = o.neg(r43);
    let r45 = o.fma(rc, n2, nr43);
    let r46 = o.add(p, r45);
    let r47 = o.add(r42, r46);
    let r48 = o.add(r43, r47);
    let r49 = o.sub(r43, r48);
    let r50 = o.add(r47, r49);
    let (l2h, l2l) = (k(o, 0x3f31_7200), k(o, 0x35bf_be8e));
    let r52 = o.mul_ftz(e, l2h);
    let r54 = o.mul_ftz(e, l2l);
    let r55 = o.add(r52, r48);
    let r56 = o.sub(r52, r55);
    let r57 = o.add(r48, r56);
    let r58 = o.add(r50, r57);
    let r59 = o.add(r54, r58);
    let hi = o.add(r55, r59);
    let r61 = o.sub(r55, hi);
    let lo = o.add(r59, r61);
    (hi, lo)
}

/// e^(y·ln|x|) for |x| = `ax`, without the special cases.
fn pow_core<T: FloatOps>(o: &mut T, ax: T::F, y: T::F) -> T::F {
    let (hi, lo) = log_ext(o, ax);
    // y scaled by 2^-13 when huge, so that y·hi cannot overflow where the exponential will anyway.
    let ay = o.abs_ftz(y);
    let huge = k(o, 0x77f6_84df);
    let big = gt(o, ay, huge);
    let s = k(o, 0x3900_0000);
    let ys = o.mul(y, s);
    let y = o.sel(big, ys, y);
    let ph = o.mul_ftz(y, hi);
    let nph = o.neg(ph);
    let e1 = o.fma_ftz(y, hi, nph);
    let e2 = o.fma_ftz(y, lo, e1);
    let zero = o.fc(0.0);
    let pl = o.fma_ftz(zero, hi, e2);
    let t = add_ftz(o, ph, pl);
    // t = 88.72284 (just past ln(f32::MAX)) is moved one ulp down, its tail corrected by 2^-17 below.
    let tb = o.f_to_bits(t);
    let edge = kb(o, 0x42b1_7218);
    let at_edge = o.ieq(tb, edge);
    let below = k(o, 0x42b1_7217);
    let t1 = o.sel(at_edge, below, t);
    let v = exp_scaled(o, t1);
    // v·(1 + tail), tail = (ph − t) + pl (+ 2^-17 at the edge), unless v overflowed.
    let nt = o.neg(t);
    let d = add_ftz(o, ph, nt);
    let d = add_ftz(o, d, pl);
    let eps = k(o, 0x3700_0000);
    let de = o.add(d, eps);
    let d = o.sel(at_edge, de, d);
    let w = o.fma_ftz(v, d, v);
    let inf = k(o, 0x7f80_0000);
    let is_inf = o.eq(v, inf);
    o.sel(is_inf, inf, w)
}

/// libdevice's inline `expf` core (in `powf` and `erfcf`): j = trunc(t·log2 e) clamped to ±126, r = t − j·ln 2 in
/// two parts, 2^(r·log2 e) by `ex2.approx.ftz` times 2^j (a multiply without `.ftz`).
pub(crate) fn exp_scaled<T: FloatOps>(o: &mut T, t1: T::F) -> T::F {
    let log2e = k(o, 0x3fb8_aa3b);
    let jt = o.mul_ftz(t1, log2e);
    let j = o.trunc(jt);
    let aj = o.abs_ftz(j);
    let lim = k(o, 0x42fc_0000);
    let clamp = gt(o, aj, lim);
    let cj = crate::steps32::with_sign(o, lim, j);
    let j = o.sel(clamp, cj, j);
    let nl2h = k(o, 0xbf31_7218);
    let r = o.fma_ftz(j, nl2h, t1);
    let l2l = k(o, 0x3102_e308);
    let r = o.fma_ftz(j, l2l, r);
    let r = o.mul(r, log2e);
    let mb = k(o, 0x4b40_007f);
    let jb = o.add(j, mb);
    let jb = o.f_to_bits(jb);
    let sb = o.shl(jb, 23);
    let scale = o.bits_to_f(sb);
    let e = o.ex2_approx_ftz(r);
    o.mul(e, scale)
}

/// `__nv_powf`.
pub fn powf<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> T::F {
    // y − 2·trunc(y/2): |·| = 1 exactly when y is an odd integer.
    let half = o.fc(0.5);
    let h = o.mul(y, half);
    let ht = o.trunc(h);
    let m2 = o.fc(-2.0);
    let odd = o.fma(ht, m2, y);
    let odd = o.abs_ftz(odd);
    let ax = o.abs_ftz(x);
    let v = pow_core(o, ax, y);
    let ay = o.abs_ftz(y);
    let (zero, one) = (o.fc(0.0), o.fc(1.0));
    let y_odd = o.eq(odd, one);
    let x_neg = o.lt(x, zero);
    let neg_odd = o.and(x_neg, y_odd);
    // x = ±0 (or a subnormal x, which the compare keeps): ±0 or inf by y's sign, signed as x + x when y is odd.
    let x_nz = o.ne(x, zero);
    let xx = o.add(x, x);
    let xxb = o.f_to_bits(xx);
    let z0 = o.ic(0);
    let zb = o.isel(y_odd, xxb, z0);
    let y_neg = o.lt(y, zero);
    let infb = kb(o, 0x7f80_0000);
    let zi = o.ior(zb, infb);
    let zb = o.isel(y_neg, zi, zb);
    let at_zero = o.bits_to_f(zb);
    // x ≠ 0: −v for a negative x and odd y; NaN for a negative x and non-integer y.
    let nv = o.neg(v);
    let v = o.sel(neg_odd, nv, v);
    let yt = o.trunc(y);
    let frac = o.ne(yt, y);
    let nan = k(o, 0x7fff_ffff);
    let vn = o.sel(frac, nan, v);
    let v = o.sel(x_neg, vn, v);
    let r = o.sel(x_nz, v, at_zero);
    // |x| + |y| at or past +inf's bits (as signed): NaN operands give x + y; |y| = inf gives inf or 0 by
    // whether |x| > 1 and y's sign (1 for x = −1); |x| = inf gives inf or 0 by y's sign, negated for odd y.
    let s = o.add(ax, ay);
    let sb = o.f_to_bits(s);
    let ordinary = o.slt(sb, infb);
    let xnan = o.is_nan(ax);
    let ynan = o.is_nan(ay);
    let any_nan = o.or(xnan, ynan);
    let inf = k(o, 0x7f80_0000);
    let y_inf = o.eq(ay, inf);
    let x_inf = o.eq(ax, inf);
    let gt1 = gt(o, ax, one);
    let ib = o.isel(gt1, infb, z0);
    let flipped = o.ixor(ib, infb);
    let ib = o.isel(y_neg, flipped, ib);
    let ib = o.bits_to_f(ib);
    let m1 = o.fc(-1.0);
    let x_m1 = o.eq(x, m1);
    let on_y_inf = o.sel(x_m1, one, ib);
    let y_nonneg = o.le(zero, y);
    let xb = o.isel(y_nonneg, infb, z0);
    let signb = kb(o, 0x8000_0000);
    let xbn = o.ior(xb, signb);
    let xb = o.isel(neg_odd, xbn, xb);
    let on_x_inf = o.bits_to_f(xb);
    let sp = o.sel(x_inf, on_x_inf, r);
    let sp = o.sel(y_inf, on_y_inf, sp);
    let xy = o.add(x, y);
    let sp = o.sel(any_nan, xy, sp);
    let r = o.sel(ordinary, r, sp);
    // pow(1, y) = pow(x, ±0) = 1, NaN operands included.
    let y0 = o.eq(y, zero);
    let r = o.sel(y0, one, r);
    let x1 = o.eq(x, one);
    o.sel(x1, one, r)
}

#[cfg(test)]
mod tests;
