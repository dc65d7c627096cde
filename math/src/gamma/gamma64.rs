//! libdevice's f64 `lgamma` (`__nv_lgamma` and its `__internal_lgamma_pos`) and `tgamma` (`__nv_tgamma`) as Triton
//! 3.6 runs them (their PTX for sm_90), op for op; branches become selects. `tgamma`: below 4 in magnitude the
//! recurrence to [0.5, 1.5) (unrolled by libdevice itself) over 1/Γ's polynomial; from 4, Stirling's form
//! e^((x − 1/2)·ln x − x) in double-double (`pow`'s extended logarithm, `__nv_exp`) times √(2π)·(1 + S(1/x)); below
//! −4 the reflection π/(x·sin(πx)·Γ(−x)) with Γ(−x) as √(2π)·e^(−x)·(−x)^(−x−1/2)... (`sinpi`'s kernel and
//! `pow`'s accurate core). `lgamma`: Five ranges of |x| (the log of a polynomial near 0, polynomials
//! around the zeros 1 and 2, a rational function to 8, Stirling's series beyond), and for negative x the
//! reflection ln(π/(|x|·|sin(π|x|)|)) − lgamma(|x|) with libdevice's `sinpi` kernel and `__nv_log`. Exact
//! arithmetic but for `rcp.approx.ftz.f64` (refined by Newton steps) in the logarithm and Stirling's 1/x.

use crate::FloatOps;
use crate::exp_log::exp64::{exp_full, exp_parts};
use crate::exp_log::log64::log_full;
use crate::exp_log::pow64::{accurate_pow, log_ext};
use crate::steps64::{horner, recip};

/// Below 0.7: lgamma(a) = −ln(a + a²·P(a)), highest degree first.
const SMALL: [u64; 14] = [
    0xbe78_4498_8bfe_6590,
    0x3ea7_b77c_eb06_25e8,
    0xbe99_8c69_c871_0cc4,
    0xbef6_527a_5a11_cf6e,
    0x3f20_ec29_50b1_b5de,
    0xbf2c_4d80_c24b_a278,
    0xbf53_15b4_e8cc_0d09,
    0x3f7d_917f_15d5_0020,
    0xbf83_b4ab_b41c_b6fa,
    0xbfa5_9af1_275b_7120,
    0x3fc5_5123_21a1_68a0,
    0xbfa5_815e_8fdc_e74c,
    0xbfe4_fcf4_026a_dd1a,
    0x3fe2_788c_fc6f_b5c8,
];

/// [0.7, 1.5): (1 − a)·P(1 − a).
const NEAR1: [u64; 22] = [
    0x3f88_1f6d_2a4c_4310,
    0x3fa3_eb50_4359_eb88,
    0x3fae_35d8_deb0_6317,
    0x3fae_d469_a8b6_ecce,
    0x3fac_c1b1_c357_befe,
    0x3fad_7154_db67_f79f,
    0x3faf_cc62_2cf2_f7bb,
    0x3fb1_1747_a4d1_cc43,
    0x3fb2_4ce1_6a21_b8ac,
    0x3fb3_b1c2_1a7b_cb00,
    0x3fb5_5672_3452_ed57,
    0x3fb7_48c0_0891_544f,
    0x3fb9_a020_7808_cf40,
    0x3fbc_8067_3b8a_e26b,
    0x3fc0_10b3_64b7_e555,
    0x3fc2_703a_1d23_9658,
    0x3fc5_b40c_b113_7e6e,
    0x3fca_8b9c_17ac_4f03,
    0x3fd1_5132_2ac7_cb52,
    0x3fd9_a4d5_5bea_b1d4,
    0x3fea_51a6_6253_07d6,
    0x3fe2_788c_fc6f_b619,
];

/// [1.5, 3): (a − 2)·P(a − 2).
const NEAR2: [u64; 20] = [
    0x3e45_2636_1243_38b3,
    0xbe71_fa71_d78c_0ee2,
    0x3e8d_111f_31e6_1306,
    0xbea0_502b_be1b_2706,
    0x3eb0_6850_b297_0292,
    0xbec1_0847_4875_033d,
    0x3ed2_4acc_c629_09dc,
    0xbee3_cb25_209e_63be,
    0x3ef5_81cb_bc8c_dc7b,
    0xbf07_8e04_b85c_7597,
    0x3f1a_1273_0cf4_5051,
    0xbf2d_3fd3_5406_2012,
    0x3f40_b36b_0b4d_e323,
    0xbf53_8ac5_c6d0_317a,
    0x3f67_add6_eaab_19fc,
    0xbf7e_404f_c20e_4d5b,
    0x3f95_1322_ac7d_a390,
    0xbfb1_3e00_1a55_78a3,
    0x3fd4_a34c_c4a6_0fa3,
    0x3fdb_0ee6_0720_93cf,
];

/// [3, 8): (a − 3) + N(a − 3)/D(a − 3); D's leading 1 is an add, then `DEN3`.
const NUM3: [u64; 8] = [
    0xc0af_7040_bb18_fb05,
    0xc112_2b77_3020_7ef3,
    0xc158_5a0d_b81d_e7d0,
    0xc18a_992b_8ba9_4677,
    0xc1aa_c5cb_6957_cc20,
    0xc1bc_0e2b_3087_74be,
    0xc1c6_ba13_dcae_7f67,
    0xc1cc_f33b_9c3d_120c,
];

const DEN3: [u64; 7] = [
    0xc08f_f62e_0be1_89fe,
    0xc100_74fa_ce10_c93f,
    0xc151_b662_f8d7_5791,
    0xc18e_e64a_b4d2_07f7,
    0xc1b9_0516_87c9_951a,
    0xc1d2_b866_bf0b_853d,
    0xc1d4_e213_0e9d_c133,
];

/// From 8 on: Stirling's correction S(1/a²), highest degree first (times 1/a, plus ln√(2π)).
const STIRLING: [u64; 6] = [
    0xbf5a_c321_0347_83f9,
    0x3f4b_68b9_9273_8fbf,
    0xbf43_80d0_1e4f_7b8c,
    0x3f4a_019f_a29f_7264,
    0xbf66_c16c_16b2_acec,
    0x3fb5_5555_5555_5545,
];

/// `__internal_lgamma_pos` for a ≥ 0 (the ranges chosen by a's high word).
fn lgamma_pos<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    // Below 0.7.
    let p = horner(o, a, &SMALL);
    let p = o.mul(a, p);
    let y = o.fma(p, a, a);
    let l = log_full(o, y);
    let r0 = o.neg(l);
    // [0.7, 1.5).
    let one = o.fc(1.0);
    let t = o.sub(one, a);
    let p = horner(o, t, &NEAR1);
    let r1 = o.mul(t, p);
    // [1.5, 3).
    let m2 = o.fc(-2.0);
    let t = o.add(a, m2);
    let p = horner(o, t, &NEAR2);
    let r2 = o.mul(t, p);
    // [3, 8).
    let m3 = o.fc(-3.0);
    let t = o.add(a, m3);
    let n = horner(o, t, &NUM3);
    let c = o.fbits(DEN3[0]);
    let mut d = o.add(t, c);
    for &ci in &DEN3[1..] {
        let c = o.fbits(ci);
        d = o.fma(d, t, c);
    }
    let q = o.div(n, d);
    let r3 = o.add(t, q);
    // From 8: (a − 1/2)·ln a − a + ln√(2π) + S(1/a²)/a, the halved log by its exponent field.
    let r = recip(o, a);
    let rr = o.mul(r, r);
    let s = horner(o, rr, &STIRLING);
    let c = o.fbits(0x3fed_67f1_c864_beae);
    let s = o.fma(s, r, c);
    let l = log_full(o, a);
    let lb = o.f_to_bits(l);
    let step = o.ic(1 << 52);
    let hb = o.isub(lb, step);
    let hl = o.bits_to_f(hb);
    let mh = o.fc(-0.5);
    let am = o.add(a, mh);
    let u = o.fma(hl, am, s);
    let na = o.neg(a);
    let w = o.fma(hl, am, na);
    let r4 = o.add(w, u);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let is_inf = o.eq(a, inf);
    let r4 = o.sel(is_inf, inf, r4);
    // The ranges by a's high word.
    let ab = o.f_to_bits(a);
    let h = o.shr(ab, 32);
    let mut v = r4;
    for (lim, r) in [(0x4020_0000, r3), (0x4008_0000, r2), (0x3ff8_0000, r1), (0x3fe6_6666, r0)] {
        let lim = o.ic(lim);
        let below = o.ult(h, lim);
        v = o.sel(below, r, v);
    }
    v
}

/// `__nv_lgamma`: NaN gives x + x; x with its sign bit clear `lgamma_pos(x)`; otherwise +inf at the integers
/// (−0 included), −ln|x| below 2^−63, else ln(π/(|x|·|sinpi(|x|)|)) − lgamma(|x|).
pub fn lgamma<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let pos = lgamma_pos(o, a);
    let (q, r) = crate::trig::sinpi64::reduce(o, a);
    let s = crate::trig::sinpi64::kernel(o, q, r);
    let s = o.abs(s);
    let d = o.mul(a, s);
    let pi = o.fbits(0x4009_21fb_5444_2d18);
    let t = o.div(pi, d);
    let ab = o.f_to_bits(a);
    let h = o.shr(ab, 32);
    let lim = o.ic(0x3c00_0000);
    let tiny = o.ult(h, lim);
    let m = o.sel(tiny, a, t);
    let l = log_full(o, m);
    let nl = o.neg(l);
    let refl = o.sub(l, pos);
    let v = o.sel(tiny, nl, refl);
    let tr = o.trunc(a);
    let int = o.eq(a, tr);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let v = o.sel(int, inf, v);
    let xb = o.f_to_bits(x);
    let zero = o.ic(0);
    let neg = o.slt(xb, zero);
    let v = o.sel(neg, v, pos);
    let nan = o.is_nan(x);
    let xx = o.add(x, x);
    o.sel(nan, xx, v)
}

/// 1/Γ(1 + t) for t in [−0.5, 0.5], highest degree first (then a last step adds 1).
const RGAMMA: [u64; 15] = [
    0x3e38_1b49_60fc_f5c9,
    0xbe8a_f704_9ae8_a594,
    0x3eb3_01d4_6d4b_22f5,
    0xbeb5_0272_aeed_0fc4,
    0xbef5_1ce1_a405_16f8,
    0x3f20_c8aa_7419_084c,
    0xbf2c_3650_196b_ad8a,
    0xbf53_1711_365a_3e26,
    0x3f7d_919c_52a7_df35,
    0xbf83_b4af_2838_6f4d,
    0xbfa5_9af1_03c3_7b4d,
    0x3fc5_5123_20b4_39ef,
    0xbfa5_815e_8fa2_6f4f,
    0xbfe4_fcf4_026a_fa2b,
    0x3fe2_788c_fc6f_b619,
];

/// Stirling's correction 1 + S(1/x)/x, S highest degree first.
const STIRLING_T: [u64; 13] = [
    0xbf64_bee4_7c38_a637,
    0x3f73_c25d_a813_03d5,
    0xbf6b_7c37_a96c_fc72,
    0x3f35_a85a_bde1_e324,
    0x3f4a_8b28_f07b_3f05,
    0xbf0a_15d1_d45a_282f,
    0xbf43_67d3_468c_b5be,
    0x3f12_471b_0e9f_1005,
    0x3f49_b100_4744_d5c4,
    0xbf2e_13ce_69ab_4b7f,
    0xbf65_f726_8ecf_8a01,
    0x3f6c_71c7_1c71_ace0,
    0x3fb5_5555_5555_5556,
];

/// libdevice compares x's high word read as an f32 with f32 constants: `ge` for a positive constant `c` (the
/// word's sign bit clear, at least c, not a NaN), `le` for a negative one (sign bit set, at or beyond c, not a
/// NaN), each with its unordered form (true for a NaN) when `unordered`.
fn hi_cmp<T: FloatOps>(o: &mut T, h: T::I, c: u32, unordered: bool) -> T::P {
    let mag_mask = o.ic(0x7fff_ffff);
    let mag = o.iand(h, mag_mask);
    let inf = o.ic(0x7f80_0000);
    let nan = o.ult(inf, mag);
    let sign = o.ic(0x8000_0000);
    let sb = o.iand(h, sign);
    let zero = o.ic(0);
    let positive = o.ieq(sb, zero);
    let side = if c & 0x8000_0000 == 0 { positive } else { o.not(positive) };
    let ci = o.ic(c as u64);
    let below = o.ult(h, ci);
    let beyond = o.not(below);
    let ordered = o.and(side, beyond);
    let not_nan = o.not(nan);
    let ordered = o.and(ordered, not_nan);
    if unordered { o.or(ordered, nan) } else { ordered }
}

/// Horner's rule over `RGAMMA` and the closing `+ 1` step.
fn rgamma<T: FloatOps>(o: &mut T, t: T::F) -> T::F {
    let p = horner(o, t, &RGAMMA);
    let one = o.fc(1.0);
    o.fma(p, t, one)
}

/// `__nv_tgamma`.
pub fn tgamma<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let xb = o.f_to_bits(x);
    let h = o.shr(xb, 32);
    let (one, m1) = (o.fc(1.0), o.fc(-1.0));
    // [0, 4) (and −0): Γ(x) = (x − 1)(x − 2)·... down to [0.5, 1.5), over 1/Γ's polynomial there (times x
    // below 0.5).
    let p9 = hi_cmp(o, h, 0x400c_0000, false);
    let a = o.fma(x, one, m1);
    let b = o.add(x, m1);
    let mut acc = o.sel(p9, a, one);
    let mut z = o.sel(p9, b, x);
    for c in [0x4004_0000, 0x3ff8_0000] {
        let p = hi_cmp(o, h, c, false);
        let na = o.neg(acc);
        let a = o.fma(z, acc, na);
        let b = o.add(z, m1);
        acc = o.sel(p, a, acc);
        z = o.sel(p, b, z);
    }
    let p12 = hi_cmp(o, h, 0x3fe0_0000, false);
    let zb = o.add(z, m1);
    let t = o.sel(p12, zb, z);
    let r = rgamma(o, t);
    let rx = o.mul(r, x);
    let d = o.sel(p12, r, rx);
    let small = o.div(acc, d);
    // From 4: e^((x − 1/2)·ln x − x) in double-double, then × √(2π)·(1 + S(1/x)/x).
    let (lh, ll) = log_ext(o, x);
    let mh = o.fc(-0.5);
    let xm = o.add(x, mh);
    let p = o.mul(lh, xm);
    let np = o.neg(p);
    let pe = o.fma(lh, xm, np);
    let pe = o.fma(ll, xm, pe);
    let s = o.add(p, pe);
    let d = o.sub(p, s);
    let sl = o.add(pe, d);
    let u = o.sub(s, x);
    let w = o.sub(s, u);
    let w = o.sub(w, x);
    let wl = o.add(sl, w);
    let hi = o.add(u, wl);
    let d = o.sub(u, hi);
    let lo = o.add(wl, d);
    let e = exp_full(o, hi);
    let e = o.fma(lo, e, e);
    let sq_lo = o.fbits(0xbcaa_6a0d_6f81_4637);
    let el = o.mul(e, sq_lo);
    let sq_hi = o.fbits(0x4004_0d93_1ff6_2706);
    let e = o.fma(e, sq_hi, el);
    let rx = recip(o, x);
    let sp = horner(o, rx, &STIRLING_T);
    let sp = o.mul(rx, sp);
    let big = o.fma(sp, e, e);
    let lim = o.fbits(0x4065_73fa_e561_f648);
    let over = o.le(lim, x);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let big = o.sel(over, inf, big);
    let from4 = hi_cmp(o, h, 0x4010_0000, true);
    let pos = o.sel(from4, big, small);
    // (−4, 0): Γ(x) = 1/(x(x + 1)·...·Γ over [0.5, 1.5)), the factors up to −0.5.
    let p22 = hi_cmp(o, h, 0xc00c_0000, false);
    let a = o.fma(x, x, x);
    let b = o.add(x, one);
    let mut acc = o.sel(p22, a, x);
    let mut z = o.sel(p22, b, x);
    for c in [0xc004_0000, 0xbff8_0000, 0xbfe0_0000] {
        let p = hi_cmp(o, h, c, false);
        let a = o.fma(z, acc, acc);
        let b = o.add(z, one);
        acc = o.sel(p, a, acc);
        z = o.sel(p, b, z);
    }
    let r = rgamma(o, z);
    let d = o.mul(acc, r);
    let near_neg = o.div(one, d);
    // (−185, −4]: π/(x·sin(πx)·Γ(−x)) as √(π/2)·e^|x|/(|x|·sin(πx)·(1 + S(1/|x|)/|x|))·|x|^−(|x| − 1/2), the power
    // split in two halves below −143.
    let ax = o.abs(x);
    let (q, rr) = crate::trig::sinpi64::reduce(o, x);
    let sn = crate::trig::sinpi64::kernel(o, q, rr);
    let ra = recip(o, ax);
    let sp = horner(o, ra, &STIRLING_T);
    let sp = o.mul(ra, sp);
    let sf = o.fma(sp, sn, sn);
    let den = o.mul(ax, sf);
    let (ep, n32) = exp_parts(o, ax);
    let (lo_n, hi_n) = (o.ic(1022u64.wrapping_neg()), o.ic(1022));
    let under = o.slt(n32, lo_n);
    let over = o.slt(hi_n, n32);
    let split = o.or(under, over);
    let bias = o.ic(1023);
    let direct = o.iadd(n32, bias);
    let direct = o.shl(direct, 52);
    let k = o.ic(2046);
    let t = o.iadd(n32, k);
    let t1 = o.shr(t, 1);
    let f1 = o.shl(t1, 52);
    let tt = o.shl(t, 52);
    let f2 = o.isub(tt, f1);
    let s1 = o.bits_to_f(f1);
    let ep1 = o.mul(s1, ep);
    let ep = o.sel(split, ep1, ep);
    let sb = o.isel(split, f2, direct);
    let sc = o.bits_to_f(sb);
    let e = o.mul(ep, sc);
    let lo = o.fbits(0xbc9a_6a0d_6f81_4637);
    let el = o.mul(e, lo);
    let hi = o.fbits(0x3ff4_0d93_1ff6_2706);
    let e = o.fma(e, hi, el);
    let g = o.div(e, den);
    let am = o.add(ax, mh);
    let amb = o.f_to_bits(am);
    let step = o.ic(1 << 52);
    let amh = o.isub(amb, step);
    let amh = o.bits_to_f(amh);
    let p21 = hi_cmp(o, h, 0xc061_e400, false);
    let y = o.sel(p21, amh, am);
    let ny = o.neg(y);
    let pw = accurate_pow(o, ax, ny);
    let gp = o.mul(pw, g);
    let g = o.sel(p21, gp, g);
    let far_neg = o.mul(pw, g);
    // At or below −185: ±0 by the parity of ⌊x⌋.
    let fl = o.floor_ftz(x);
    let half = o.fc(0.5);
    let hf = o.mul(fl, half);
    let hf = o.floor_ftz(hf);
    let m2 = o.fc(-2.0);
    let par = o.fma(hf, m2, fl);
    let odd = o.eq(par, one);
    let (nz, pz) = (o.fc(-0.0), o.fc(0.0));
    let tiny = o.sel(odd, nz, pz);
    let lim = 0xc067_2000;
    let underflow = hi_cmp(o, h, lim, true);
    let far_neg = o.sel(underflow, tiny, far_neg);
    let from_m4 = hi_cmp(o, h, 0xc010_0000, true);
    let neg = o.sel(from_m4, far_neg, near_neg);
    let tr = o.trunc(x);
    let int = o.eq(tr, x);
    let nan = o.fbits(0xfff8_0000_0000_0000);
    let neg = o.sel(int, nan, neg);
    let zero = o.fc(0.0);
    let is_neg = o.lt(x, zero);
    let v = o.sel(is_neg, neg, pos);
    let is_nan = o.is_nan(x);
    let xx = o.add(x, x);
    o.sel(is_nan, xx, v)
}

#[cfg(test)]
mod tests;
