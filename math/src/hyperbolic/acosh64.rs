//! libdevice's f64 `acosh` as Triton 3.6 runs it (`__nv_acosh`, with the `__nv_log` and `__nv_log1p` it
//! inlines, in the PTX Triton gives for sm_90), op for op; branches become selects. libdevice reads the
//! 32-bit halves of doubles; the same tests are made here on the 64-bit bits (each says which half it
//! reads). The square root comes from `rsqrt.approx.ftz.f64` and the log's reciprocal from
//! `rcp.approx.ftz.f64`, each refined by Newton steps; the CPU model rounds those two correctly, which the
//! refinement absorbs in all but rare last bits.

use crate::FloatOps;
use crate::exp_log::log64::log_series;
use crate::steps64::horner;

fn c<T: FloatOps>(o: &mut T, bits: u64) -> T::F {
    o.fbits(bits)
}

const LN2_HI: u64 = 0x3fe6_2e42_fefa_39ef;
const LN2_LO: u64 = 0x3c7a_bc9e_3b39_803f;

/// `__nv_log`: v = 2^e·m (a subnormal scaled by 2^54 first; m in [0.707, 1.414)), ln m = u + u³·p(u²) with
/// u = 2(m − 1)/(m + 1) and its error carried, plus e·ln 2 in two parts. v negative (its high half, as a
/// signed integer, at most 0xfffff), infinite or NaN gives v·inf + inf; ±0 (high half 0 after the scaling)
/// gives −inf.
fn ln<T: FloatOps>(o: &mut T, v: T::F) -> T::F {
    // The high half at most 0xfffff as a signed integer: the bits, signed, at most 0x000fffff_ffffffff.
    let b0 = o.f_to_bits(v);
    let lim = o.ic(0x000f_ffff_ffff_ffff);
    let above = o.slt(lim, b0);
    let small = o.not(above);
    let k54 = c(o, 0x4350_0000_0000_0000);
    let vs = o.mul(v, k54);
    let v = o.sel(small, vs, v);
    let b = o.f_to_bits(v);
    let (bn, bs) = (o.ic(1023u64.wrapping_neg()), o.ic(1077u64.wrapping_neg()));
    let bias = o.isel(small, bs, bn);
    // Special: the high half minus 1, unsigned, above 0x7feffffe (±0, negative, inf, NaN).
    let h = o.shr(b, 32);
    let one_i = o.ic(1);
    let hm = o.isub(h, one_i);
    let low32 = o.ic(0xffff_ffff);
    let hm = o.iand(hm, low32);
    let slim = o.ic(0x7fef_ffff);
    let ok = o.ult(hm, slim);
    let inf = c(o, 0x7ff0_0000_0000_0000);
    let sp = o.fma(v, inf, inf);
    let habs = o.ic(0x7fff_ffff);
    let ha = o.iand(h, habs);
    let z = o.ic(0);
    let zero = o.ieq(ha, z);
    let ninf = c(o, 0xfff0_0000_0000_0000);
    let sp = o.sel(zero, ninf, sp);
    // The exponent and m.
    let eh = o.shr(h, 20);
    let e = o.iadd(bias, eh);
    let keep = o.ic(0x000f_ffff_ffff_ffff);
    let mb = o.iand(b, keep);
    let one_b = o.ic(0x3ff0_0000_0000_0000);
    let mb = o.ior(mb, one_b);
    let mlim = o.ic(0x3ff6_a09f_0000_0000);
    let low = o.ult(mb, mlim);
    let step = o.ic(0x0010_0000_0000_0000);
    let mh = o.isub(mb, step);
    let mb = o.isel(low, mb, mh);
    let e1 = o.iadd(e, one_i);
    let e = o.isel(low, e, e1);
    let m = o.bits_to_f(mb);
    let (one, m1) = (o.fc(1.0), o.fc(-1.0));
    let f = o.add(m, m1);
    let g = o.add(m, one);
    let r = o.rcp_approx_ftz(g);
    let ng = o.neg(g);
    let hh = o.fma(ng, r, one);
    let hh = o.fma(hh, hh, hh);
    let r = o.fma(hh, r, r);
    let (u, s) = log_series(o, f, r);
    let ef = o.i2f(e);
    let l2h = c(o, LN2_HI);
    let a1 = o.fma(ef, l2h, u);
    let nef = o.neg(ef);
    let a2 = o.fma(nef, l2h, a1);
    let a2 = o.sub(a2, u);
    let a2 = o.sub(s, a2);
    let l2l = c(o, LN2_LO);
    let a2 = o.fma(ef, l2l, a2);
    let res = o.add(a1, a2);
    o.sel(ok, res, sp)
}

/// `__nv_log1p` of u: for the high half of u, read as an f32, in (−1.7, 1.79) (unordered compares: NaN
/// patterns go the other way) u − u·q + ... by the quotient q = u/(u + 2) and a polynomial; else ln(1 + u).
fn log1p<T: FloatOps>(o: &mut T, u: T::F) -> T::F {
    let ub = o.f_to_bits(u);
    let uh = o.shr(ub, 32);
    let abs_m = o.ic(0x7fff_ffff);
    let ah = o.iand(uh, abs_m);
    let nan_lim = o.ic(0x7f80_0000);
    let nan = o.ult(nan_lim, ah);
    let sign = o.ic(0x8000_0000);
    let pos = o.ult(uh, sign);
    let (plim, nlim) = (o.ic(0x3fe5_5555), o.ic(0xbfd9_9999));
    let lim = o.isel(pos, plim, nlim);
    let below = o.ult(uh, lim);
    let far = o.not(below);
    let far = o.or(nan, far);
    let two = o.fc(2.0);
    let a = o.add(u, two);
    let q = o.div(u, a);
    let nu = o.neg(u);
    let w = o.mul(q, nu);
    let v = o.fma(q, nu, u);
    let v2 = o.mul(v, v);
    let p = horner(
        o,
        v2,
        &[
            0x3eb3_72fb_2fbe_14b5,
            0x3ed0_87ff_ceb2_dc44,
            0x3ef3_b9ff_890f_468c,
            0x3f17_457e_fd51_baf8,
            0x3f3c_71c8_de3c_e825,
            0x3f62_4924_8fa4_661f,
            0x3f89_9999_999d_70c4,
            0x3fb5_5555_5555_5462,
        ],
    );
    let z = o.mul(v2, p);
    let z = o.fma(z, v, w);
    let near = o.add(u, z);
    let one = o.fc(1.0);
    let u1 = o.add(u, one);
    let l = ln(o, u1);
    o.sel(far, l, near)
}

/// `__nv_acosh`: with d = x − 1, for d below 2^52 (its high half, unsigned, below 0x43300000) log1p(d + √(x·d
/// + d)) (d itself when its high half is 0); else (large d, negative, NaN) ln(d) + ln 2.
pub fn acosh<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let m1 = o.fc(-1.0);
    let d = o.add(x, m1);
    let db = o.f_to_bits(d);
    let dh = o.shr(db, 32);
    let lim = o.ic(0x4330_0000);
    let small = o.ult(dh, lim);
    let l = ln(o, d);
    let l2 = c(o, LN2_HI);
    let big = o.add(l, l2);
    // √s, s = x·d + d, from y0 ≈ 1/√s: t = s·y0 corrected with y0/2, then y0 refined and t corrected again.
    let s = o.fma(x, d, d);
    let y0 = o.rsqrt_approx_ftz(s);
    let yb = o.f_to_bits(y0);
    let step = o.ic(0x0010_0000_0000_0000);
    let yh = o.isub(yb, step);
    let yh = o.bits_to_f(yh);
    let t = o.mul(s, y0);
    let nt = o.neg(t);
    let e1 = o.fma(t, nt, s);
    let t1 = o.fma(e1, yh, t);
    let nt1 = o.neg(t1);
    let one = o.fc(1.0);
    let e2 = o.fma(y0, nt1, one);
    let y1 = o.fma(e2, yh, yh);
    let e3 = o.fma(t1, nt1, s);
    let root = o.fma(e3, y1, t1);
    let u = o.add(d, root);
    let v = log1p(o, u);
    let z = o.ic(0);
    let tiny = o.ieq(dh, z);
    let v = o.sel(tiny, d, v);
    o.sel(small, v, big)
}

#[cfg(test)]
mod tests;
