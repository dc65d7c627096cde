//! libdevice's cube roots and their reciprocals, `cbrtf`, `rcbrtf` and f64 `rcbrt` (`__nv_cbrtf`, `__nv_rcbrtf`,
//! `__nv_rcbrt`), as Triton 3.6 runs them (their PTX for sm_90, f32 under `__CUDA_FTZ`), op for op; branches
//! become selects. They start from `lg2`/`ex2`/`rcp.approx.ftz` (f64 `rcbrt` from the f32 ones, then refines in
//! f64), which the CPU model rounds correctly, so the f32 forms can differ from the GPU in the last bit.

use crate::FloatOps;
use crate::exp_log::own64::{exp2_f64, log2_f64};
use crate::steps32::k;
use crate::steps64::{copysign, hi_abs, is_finite};

/// `__nv_cbrtf`: r = 2^(log2|x| / 3), one Newton-like correction r − (r − |x|/r²)/3 computed as
/// fma(fma(1/r², −|x|, r), −1/3, r), the sign put back; 0, ±inf (where x + x = x) give x + x.
pub fn cbrtf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let l = o.lg2_approx_ftz(a);
    let third = k(o, 0x3eaa_aaab);
    let t = o.mul(l, third);
    let r = o.ex2_approx_ftz(t);
    let sq = o.mul(r, r);
    let rc = o.rcp_approx_ftz(sq);
    let na = o.neg(a);
    let c = o.fma_ftz(rc, na, r);
    let m3 = k(o, 0xbeaa_aaab);
    let v = o.fma_ftz(c, m3, r);
    let zero = o.fc(0.0);
    let neg = o.lt(x, zero);
    let nv = o.neg(v);
    let v = o.sel(neg, nv, v);
    let xx = o.add(x, x);
    let same = o.eq(xx, x);
    o.sel(same, xx, v)
}

/// `__nv_rcbrtf`: r = 2^(−log2|x| / 3), one Newton step r + r/3·(1 − |x|·r³) (as fmas), the sign put back;
/// 0 and ±inf (where x + x = x) give the approximate reciprocal of x (±inf, ±0); NaN stays NaN.
pub fn rcbrtf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let l = o.lg2_approx_ftz(a);
    let m3 = k(o, 0xbeaa_aaab);
    let t = o.mul(l, m3);
    let r = o.ex2_approx_ftz(t);
    let r2 = o.mul(r, r);
    let na = o.neg(a);
    let ra = o.mul(r, na);
    let one = o.fc(1.0);
    let e = o.fma_ftz(r2, ra, one);
    let third = k(o, 0x3eaa_aaab);
    let r3 = o.mul(r, third);
    let v = o.fma_ftz(e, r3, r);
    let zero = o.fc(0.0);
    let neg = o.lt(x, zero);
    let nv = o.neg(v);
    let v = o.sel(neg, nv, v);
    let xx = o.add(x, x);
    let ordinary = o.ne(xx, x);
    let rc = o.rcp_approx_ftz(x);
    o.sel(ordinary, v, rc)
}

/// `__nv_rcbrt`: for finite nonzero x, |x| (subnormals scaled by 2^54) = 2^(3q)·m with q = rni((e − 1022)/3)
/// in f32, y = 2^(−log2 m / 3) from the f32 approximations, one f64 correction of y from the residual
/// 1 − m·y³ (carried with its rounding errors), then 2^−q (2^(18−q) for subnormals) put back by the
/// exponent; 0 gives inf, inf gives 0, NaN gives x + x; x's sign bit OR'd on.
pub fn rcbrt<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (ha, xb) = hi_abs(o, x);
    let zero = o.fc(0.0);
    let is_zero = o.eq(x, zero);
    let ilim = o.ic(0x7fef_ffff);
    let non_finite = o.ult(ilim, ha);
    let special = o.or(is_zero, non_finite);
    // 0 ↔ inf by flipping the exponent bits; NaN gives x + x.
    let lo_mask = o.ic(0xffff_ffff);
    let lo = o.iand(xb, lo_mask);
    let ebits = o.ic(0x7ff0_0000);
    let fh = o.ixor(ha, ebits);
    let fh = o.shl(fh, 32);
    let fb = o.ior(fh, lo);
    let flip = o.bits_to_f(fb);
    let nan = o.is_nan(x);
    let xx = o.add(x, x);
    let sp = o.sel(nan, xx, flip);
    let a = o.abs(x);
    let sub_lim = o.ic(0x0010_0000);
    let sub = o.ult(ha, sub_lim);
    let big = o.fbits(0x4350_0000_0000_0000);
    let sa = o.mul(a, big);
    let m0 = o.sel(sub, sa, a);
    let (i18, i0) = (o.ic(18), o.ic(0));
    let base = o.isel(sub, i18, i0);
    let mb = o.f_to_bits(m0);
    let e = o.shr(mb, 52);
    let bias = o.ic(1022u64.wrapping_neg());
    let e = o.iadd(e, bias);
    let ef = o.i2f(e);
    let qf = o.f32_rni_scaled(ef, 0x3eaa_aaab);
    let q = o.f2i(qf);
    let step = o.ic((3u64 << 52).wrapping_neg());
    let off = o.imul(q, step);
    let mb = o.iadd(mb, off);
    let m = o.bits_to_f(mb);
    let y = o.f32_exp2_scaled_log2(m, 0xbeaa_aaab);
    let one = o.fc(1.0);
    let y2 = o.mul(y, y);
    let my = o.mul(m, y);
    let nmy = o.neg(my);
    let r = o.fma(y2, nmy, one);
    let emy = o.fma(m, y, nmy);
    let nemy = o.neg(emy);
    let r = o.fma(y2, nemy, r);
    let ny2 = o.neg(y2);
    let ey2 = o.fma(y, y, ny2);
    let ney2 = o.neg(ey2);
    let r = o.fma(my, ney2, r);
    let (c3, c9) = (o.fbits(0x3fd5_5555_5555_5555), o.fbits(0x3fcc_71c7_1c71_c71c));
    let p = o.fma(c9, r, c3);
    let yr = o.mul(r, y);
    let v = o.fma(p, yr, y);
    let sh = o.isub(base, q);
    let sh = o.shl(sh, 52);
    let vb = o.f_to_bits(v);
    let vb = o.iadd(vb, sh);
    let v = o.bits_to_f(vb);
    let v = o.sel(special, sp, v);
    let sign = o.ic(1 << 63);
    let sb = o.iand(xb, sign);
    let vb = o.f_to_bits(v);
    let vb = o.ior(vb, sb);
    o.bits_to_f(vb)
}

pub fn cbrt<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let l = log2_f64(o, a);
    let third = o.fc(1.0 / 3.0);
    let l = o.mul(l, third);
    let y = exp2_f64(o, l);
    // One Newton step: y + (a/y² − y)/3.
    let y2 = o.mul(y, y);
    let d = o.div(a, y2);
    let d = o.sub(d, y);
    let y = o.fma(d, third, y);
    let zero = o.fc(0.0);
    let z = o.eq(a, zero);
    let fin = is_finite(o, a);
    let special = o.not(fin);
    let special = o.or(special, z);
    let y = o.sel(special, a, y);
    copysign(o, y, x)
}

#[cfg(test)]
mod tests;
