//! libdevice's f64 `pow` as Triton 3.6 runs it (`__nv_pow` and its `__internal_accurate_pow` in the PTX Triton
//! gives for sm_90), op for op; branches become selects. ln|x| in double-double (the reduction's reciprocal from
//! `rcp.approx.ftz.f64` refined by two Newton steps), y·ln|x| as a head and tail, e^head by a degree-11
//! polynomial after Cody–Waite reduction, scaled by 2^n in one or two steps, corrected by the tail; C's special
//! cases after. libdevice works on the 32-bit halves of doubles; the same tests here are on the 64-bit bits
//! (each stated with the half it reads). The CPU model's `rcp.approx` is correctly rounded where the GPU's is
//! not, which the Newton steps absorb in all but rare last bits.

use crate::FloatOps;
use crate::steps64::horner;

fn c<T: FloatOps>(o: &mut T, bits: u64) -> T::F {
    o.fbits(bits)
}

/// Fast2Sum of a + b (|a| ≥ |b|): the rounded sum and its error.
fn two_sum<T: FloatOps>(o: &mut T, a: T::F, b: T::F) -> (T::F, T::F) {
    let s = o.add(a, b);
    let d = o.sub(a, s);
    let e = o.add(b, d);
    (s, e)
}

/// The exact product a·b as a head and the fma-computed tail fma(a, b, −head).
fn two_prod<T: FloatOps>(o: &mut T, a: T::F, b: T::F) -> (T::F, T::F) {
    let p = o.mul(a, b);
    let np = o.neg(p);
    let e = o.fma(a, b, np);
    (p, e)
}

const LN2_HI: u64 = 0x3fe6_2e42_fefa_39ef;
const LN2_LO: u64 = 0x3c7a_bc9e_3b39_803f;

/// ln(a) for a = |x| as head + tail.
pub(crate) fn log_ext<T: FloatOps>(o: &mut T, a: T::F) -> (T::F, T::F) {
    // A subnormal (high half ≤ 0xfffff) is scaled by 2^54 first.
    let b0 = o.f_to_bits(a);
    let normal_min = o.ic(0x0010_0000_0000_0000);
    let sub = o.ult(b0, normal_min);
    let k54 = c(o, 0x4350_0000_0000_0000);
    let scaled = o.mul(a, k54);
    let bs = o.f_to_bits(scaled);
    let b = o.isel(sub, bs, b0);
    let e = o.shr(b, 52);
    let (z, m54) = (o.ic(0), o.ic(54u64.wrapping_neg()));
    let adj = o.isel(sub, m54, z);
    let e = o.iadd(e, adj);
    // m in [1, 2) from the bits; above 1.4142 (high half ≥ 0x3ff6a09f) halved, the exponent one more.
    let keep = o.ic(0x800f_ffff_ffff_ffff);
    let mb = o.iand(b, keep);
    let one_b = o.ic(0x3ff0_0000_0000_0000);
    let mb = o.ior(mb, one_b);
    let lim = o.ic(0x3ff6_a09f_0000_0000);
    let low = o.ult(mb, lim);
    let step = o.ic(0x0010_0000_0000_0000);
    let mh = o.isub(mb, step);
    let mb = o.isel(low, mb, mh);
    let (b1023, b1022) = (o.ic(1023u64.wrapping_neg()), o.ic(1022u64.wrapping_neg()));
    let bias = o.isel(low, b1023, b1022);
    let e = o.iadd(e, bias);
    let m = o.bits_to_f(mb);
    // u = 2(m − 1)/(m + 1) with the reciprocal refined twice.
    let (one, m1) = (o.fc(1.0), o.fc(-1.0));
    let f = o.add(m, m1);
    let g = o.add(m, one);
    let r = o.rcp_approx_ftz(g);
    let ng = o.neg(g);
    let h = o.fma(ng, r, one);
    let h = o.fma(h, h, h);
    let r = o.fma(h, r, r);
    let t = o.mul(f, r);
    let u = o.fma(f, r, t);
    let u2 = o.mul(u, u);
    let p = horner(
        o,
        u2,
        &[
            0x3eb0_f5ff_7d2c_afe2,
            0x3ed0_f5d2_41ad_3b5a,
            0x3ef3_b20a_7548_8a3f,
            0x3f17_45cd_e4fa_ecd5,
            0x3f3c_71c7_258a_578b,
            0x3f62_4924_9242_b910,
            0x3f89_9999_9999_9dfb,
        ],
    );
    // The error of u: r·(2(f − u) − u·f).
    let d = o.sub(f, u);
    let d = o.add(d, d);
    let nu = o.neg(u);
    let d = o.fma(nu, f, d);
    let ue = o.mul(r, d);
    // 1/12 + u²·p as a head q and tail ql.
    let k12 = c(o, 0x3fb5_5555_5555_5555);
    let q = o.fma(u2, p, k12);
    let k12b = c(o, 0x3fb5_5555_5555_5555);
    let ql = o.sub(k12b, q);
    let ql = o.fma(u2, p, ql);
    let k12l = c(o, 0xbc46_a4cb_00b9_e7b0);
    let ql = o.add(ql, k12l);
    let (q, ql) = two_sum(o, q, ql);
    // u³ exactly (head u3, tail u3l), then u³·q.
    let (s, se) = two_prod(o, u, u);
    let ueb = o.f_to_bits(ue);
    let twice = o.ic(0x0010_0000_0000_0000);
    let ue2 = o.iadd(ueb, twice);
    let ue2 = o.bits_to_f(ue2);
    let se = o.fma(u, ue2, se);
    let (u3, u3l) = two_prod(o, s, u);
    let u3l = o.fma(s, ue, u3l);
    let u3l = o.fma(se, u, u3l);
    let (w, wl) = two_prod(o, q, u3);
    let wl = o.fma(q, u3l, wl);
    let wl = o.fma(ql, u3, wl);
    let (w, wl) = two_sum(o, w, wl);
    let (v, vl) = two_sum(o, u, w);
    let vl = o.add(wl, vl);
    let vl = o.fma(r, d, vl);
    let (v, vl) = two_sum(o, v, vl);
    // + e·ln 2 (ln 2 in two parts).
    let ef = o.i2f(e);
    let l2h = c(o, LN2_HI);
    let a1 = o.fma(ef, l2h, v);
    let nef = o.neg(ef);
    let a2 = o.fma(nef, l2h, a1);
    let a2 = o.sub(a2, v);
    let a2 = o.sub(vl, a2);
    let l2l = c(o, LN2_LO);
    let a2 = o.fma(ef, l2l, a2);
    two_sum(o, a1, a2)
}

/// e^(y·ln a) for a = |x|, without the special cases.
pub(crate) fn accurate_pow<T: FloatOps>(o: &mut T, a: T::F, y: T::F) -> T::F {
    let (lh, ll) = log_ext(o, a);
    // A huge |y| (high half of 2|y| above 0xfdffffff) loses exponent bits 20–23 of its high half.
    let yb = o.f_to_bits(y);
    let y2 = o.shl(yb, 1);
    let lim = o.ic(0xfdff_ffff_ffff_ffff);
    let huge = o.ult(lim, y2);
    let mask = o.ic(0xff0f_ffff_ffff_ffff);
    let ym = o.iand(yb, mask);
    let yb = o.isel(huge, ym, yb);
    let y = o.bits_to_f(yb);
    let (ph, pe) = two_prod(o, lh, y);
    let pl = o.fma(ll, y, pe);
    let t = o.add(ph, pl);
    // exp(t): n = round(t·log2 e) through the 1.5·2^52 shifter, r = t − n·ln 2 in two parts.
    let (log2e, shifter) = (c(o, 0x3ff7_1547_652b_82fe), c(o, 0x4338_0000_0000_0000));
    let nb = o.fma(t, log2e, shifter);
    let nshift = c(o, 0xc338_0000_0000_0000);
    let n = o.add(nb, nshift);
    let nl2h = c(o, 0xbfe6_2e42_fefa_39ef);
    let r = o.fma(n, nl2h, t);
    let nl2l = c(o, 0xbc7a_bc9e_3b39_803f);
    let r = o.fma(n, nl2l, r);
    let p = horner(o, r, &crate::exp_log::exp64::EXP_POLY);
    // 2^n added to the exponent (n is the low 32 bits of the shifter's sum, a signed integer).
    let pb = o.f_to_bits(p);
    let nbits = o.f_to_bits(nb);
    let nhi = o.shl(nbits, 52);
    let eb = o.iadd(pb, nhi);
    let direct = o.bits_to_f(eb);
    // |t| past 708.4 (the high half of t, read as an f32, at least 4.1918...): overflow to inf or underflow to 0;
    // below 4.2276 (|t| < 745.1, the subnormal range) 2^n split in two factors, 2^⌊n/2⌋ then 2^(n − ⌊n/2⌋).
    let tb = o.f_to_bits(t);
    let th = o.shr(tb, 32);
    let absmask = o.ic(0x7fff_ffff);
    let th = o.iand(th, absmask);
    let big_lim = o.ic(0x4086_232b);
    let ordinary = o.ult(th, big_lim);
    let zero = o.fc(0.0);
    let neg = o.lt(t, zero);
    let inf = c(o, 0x7ff0_0000_0000_0000);
    let ti = o.add(t, inf);
    let sat = o.sel(neg, zero, ti);
    let sub_lim = o.ic(0x4087_4800);
    let below = o.ult(th, sub_lim);
    let beyond = o.not(below);
    let n32 = o.shl(nbits, 32);
    let n32 = o.sar(n32, 32);
    let sgn = o.shr(n32, 63);
    let half = o.iadd(n32, sgn);
    let half = o.sar(half, 1);
    let h52 = o.shl(half, 52);
    let s1 = o.iadd(pb, h52);
    let s1 = o.bits_to_f(s1);
    let rest = o.isub(n32, half);
    let rest = o.shl(rest, 52);
    let one_b = o.ic(0x3ff0_0000_0000_0000);
    let rest = o.iadd(rest, one_b);
    let s2 = o.bits_to_f(rest);
    let split = o.mul(s2, s1);
    let far = o.sel(beyond, sat, split);
    let v = o.sel(ordinary, direct, far);
    // v·(1 + tail), the tail (ph − t) + pl, unless v is infinite.
    let d = o.sub(ph, t);
    let d = o.add(pl, d);
    let w = o.fma(v, d, v);
    let vb = o.f_to_bits(v);
    let absmask = o.ic(0x7fff_ffff_ffff_ffff);
    let vabs = o.iand(vb, absmask);
    let infb = o.ic(0x7ff0_0000_0000_0000);
    let is_inf = o.ieq(vabs, infb);
    o.sel(is_inf, v, w)
}

/// `__nv_pow`.
pub fn pow<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> T::F {
    let (xb, yb) = (o.f_to_bits(x), o.f_to_bits(y));
    // y an odd integer: its bits shifted left by (biased exponent − 1012) are exactly the sign bit (the units
    // bit lands on bit 63 with nothing below it; shifts past 63, or negative ones, give 0).
    let ye = o.shr(yb, 52);
    let field = o.ic(0x7ff);
    let ye = o.iand(ye, field);
    let k1012 = o.ic(1012);
    let sh = o.isub(ye, k1012);
    let unit = o.shl_v(yb, sh);
    let top = o.ic(0x8000_0000_0000_0000);
    let odd = o.ieq(unit, top);
    let ax = o.abs(x);
    let v = accurate_pow(o, ax, y);
    let ay = o.abs(y);
    let zero = o.fc(0.0);
    let z0 = o.ic(0);
    let y_neg = o.slt(yb, z0);
    let infhi = o.ic(0x7ff0_0000_0000_0000);
    // x = ±0: ±0 or ±inf by y's sign, x's sign kept when y is an odd integer (other than ±0.5, by libdevice's
    // own test).
    let half = o.fc(0.5);
    let not_half = o.ne(ay, half);
    let signed = o.and(not_half, odd);
    let hi_mask = o.ic(0xffff_ffff_0000_0000);
    let xhi = o.iand(xb, hi_mask);
    let zb = o.isel(signed, xhi, z0);
    let zi = o.ior(zb, infhi);
    let zb = o.isel(y_neg, zi, zb);
    let at_zero = o.bits_to_f(zb);
    // x ≠ 0: negated for a negative x and odd y; NaN for a negative x and non-integer y.
    let x_neg = o.slt(xb, z0);
    let nv = o.neg(v);
    let sv = o.sel(odd, nv, v);
    let v1 = o.sel(x_neg, sv, v);
    let yt = o.trunc(y);
    let frac = o.ne(yt, y);
    let nan = c(o, 0xfff8_0000_0000_0000);
    let vn = o.sel(frac, nan, v1);
    let v1 = o.sel(x_neg, vn, v1);
    let x_nz = o.ne(x, zero);
    let r = o.sel(x_nz, v1, at_zero);
    // x + y not finite: NaN operands give x + y; |y| = inf gives inf or 0 by whether |x| > 1 and y's sign (1 for
    // x = −1); |x| = inf gives inf or 0 by y's sign, negated for a negative x and odd y.
    let s = o.add(x, y);
    let sb = o.f_to_bits(s);
    let se = o.iand(sb, infhi);
    let overflowed = o.ieq(se, infhi);
    let finite = o.not(overflowed);
    let xn = o.is_nan(ax);
    let yn = o.is_nan(ay);
    let any_nan = o.or(xn, yn);
    let inf = c(o, 0x7ff0_0000_0000_0000);
    let y_inf = o.eq(ay, inf);
    let x_inf = o.eq(ax, inf);
    let one = o.fc(1.0);
    let gt1 = o.lt(one, ax);
    let ib = o.isel(gt1, infhi, z0);
    let fl = o.ixor(ib, infhi);
    let ib = o.isel(y_neg, fl, ib);
    let ib = o.bits_to_f(ib);
    let m1 = o.fc(-1.0);
    let x_m1 = o.eq(x, m1);
    let on_y_inf = o.sel(x_m1, one, ib);
    let xi = o.isel(y_neg, z0, infhi);
    let ayb = o.f_to_bits(ay);
    let ay_hi = o.iand(ayb, hi_mask);
    let half_hi = o.ic(0x3fe0_0000_0000_0000);
    let half_hi = o.ieq(ay_hi, half_hi);
    let not_half_hi = o.not(half_hi);
    let signb = o.ic(0x8000_0000_0000_0000);
    let xs = o.ior(xi, signb);
    let xs = o.isel(not_half_hi, xs, xi);
    let xs = o.isel(odd, xs, xi);
    let xi = o.isel(x_neg, xs, xi);
    let on_x_inf = o.bits_to_f(xi);
    let sp = o.sel(x_inf, on_x_inf, r);
    let sp = o.sel(y_inf, on_y_inf, sp);
    let sp = o.sel(any_nan, s, sp);
    let r = o.sel(finite, r, sp);
    // pow(1, y) = pow(x, ±0) = 1, NaN operands included.
    let y0 = o.eq(y, zero);
    let r = o.sel(y0, one, r);
    let x1 = o.eq(x, one);
    o.sel(x1, one, r)
}

#[cfg(test)]
mod tests;
