//! libdevice's f64 `erfinv` (`__nv_erfinv`) as Triton 3.6 runs it (its PTX for sm_90), op for op; branches
//! become selects. Exact arithmetic but for `rcp.approx.ftz.f64` in the logarithm, which Newton steps take to
//! within a rounding of the reciprocal (so the CPU model's correctly rounded start gives the GPU's bits but in
//! rare ties).

use crate::FloatOps;
use crate::steps64::{hi_abs, horner, recip};

/// 2·atanh(f) − 2f over f², f = (m − 1)/(m + 1), highest degree first.
const ATANH: [u64; 10] = [
    0x3fb5_c5c2_18c7_75c9,
    0x3fa5_5cf5_9cdc_5d89,
    0x3fae_fd18_cf6e_bb9c,
    0x3fb1_0682_edcb_8d1b,
    0x3fb3_b1dd_3ac7_fc96,
    0x3fb7_45cb_459b_54a6,
    0x3fbc_71c7_41a0_669f,
    0x3fc2_4924_9209_112e,
    0x3fc9_9999_999a_06c1,
    0x3fd5_5555_5555_5535,
];

/// erfinv(x)/x in w = −ln(1 − x²) − 3.125, for w below 6.5.
const CENTRAL: [u64; 23] = [
    0xbbb1_35d2_e746_e627,
    0xbc08_ddf9_3324_d327,
    0x3c37_b83e_ef0b_7c9f,
    0x3c69_ba72_cd58_9b91,
    0xbca3_3689_090a_6b96,
    0x3c78_2e11_8981_32e0,
    0x3cfd_e4ac_fd9e_26ba,
    0xbd26_d33e_ed66_c487,
    0xbd36_f216_7040_d8e2,
    0x3d87_2a22_c2d7_7e20,
    0xbdac_8859_c4e5_c0af,
    0xbdcd_c583_d118_a561,
    0x3e12_0f47_ccf4_6b3c,
    0xbe31_a9e3_8dc8_4d60,
    0xbe5f_36cd_6d3d_46a9,
    0x3e9c_6b4f_5d03_b787,
    0xbeb6_e8a5_434a_e8a2,
    0xbeed_1d1f_7b87_36f6,
    0x3f28_79c2_a212_f024,
    0xbf48_4576_9484_fca8,
    0xbf78_b6c3_3114_f909,
    0x3fce_bd80_d9b1_3e28,
    0x3ffa_755e_7c99_ae86,
];

/// erfinv(x)/x in t − 3.25, t = √(−ln(1 − x²)) below 4.
const MID: [u64; 19] = [
    0x3e23_040f_87db_d932,
    0x3e78_5cbe_5287_8635,
    0xbe92_7774_53dd_3955,
    0x3e53_95ab_cd55_4c6c,
    0x3eb9_3638_8a37_90ad,
    0xbed0_d5db_812b_5083,
    0x3ec8_860c_d5d6_52f6,
    0x3eea_29a0_cacd_fb23,
    0xbf08_cef1_f802_81f2,
    0x3f11_e684_d0b9_188a,
    0x3ef9_32cd_54c8_a222,
    0xbf37_448a_89ef_8aa3,
    0x3f4f_3cc5_5ad4_0c25,
    0xbf5b_a924_132f_38b1,
    0x3f64_68ee_ca53_3cf8,
    0xbf6e_bada_bb89_1bbd,
    0x3f75_ffcf_e5b7_6afc,
    0x3ff0_158a_6d64_1d39,
    0x4008_abcc_380d_5a48,
];

/// erfinv(x)/x in t − 5, t at least 4.
const TAIL: [u64; 17] = [
    0xbdbd_cec3_a778_5389,
    0xbdf1_8fee_c0e3_8727,
    0x3e19_e6bf_2dda_45e3,
    0xbe30_468f_b24e_2f5f,
    0x3e40_5ac6_a8fb_a182,
    0xbe50_102e_495f_b9c0,
    0x3e5f_4c20_e133_4af8,
    0xbe72_2d22_0fdf_9c3e,
    0x3e8e_bc8b_b824_cb54,
    0xbeb0_a8d4_0ea3_72cc,
    0x3ed2_fbd2_9d09_3d2b,
    0xbef4_a349_7e1e_0fac,
    0x3f13_ebf4_eb00_938f,
    0xbf2c_2f36_a8fc_5d53,
    0xbf22_2ea5_df04_047c,
    0x3ff0_2a30_d1fb_a0dc,
    0x4013_664d_dd1a_d7fb,
];

/// ln s for a positive normal s, as libdevice's erfinv computes it: s = 2^e·m with e rounded down to even and
/// m in [0.5, 2), ln m = 2·atanh((m − 1)/(m + 1)) with the quotient corrected once, plus e·ln 2.
pub(crate) fn log_even<T: FloatOps>(o: &mut T, s: T::F) -> T::F {
    let sb = o.f_to_bits(s);
    let e = o.shr(sb, 52);
    let even = o.ic(2046);
    let e = o.iand(e, even);
    let bias = o.ic(1022u64.wrapping_neg());
    let e = o.iadd(e, bias);
    let ef = o.i2f(e);
    let keep = o.ic(0x801f_ffff_ffff_ffff);
    let mb = o.iand(sb, keep);
    let half = o.ic(0x3fe0_0000_0000_0000);
    let mb = o.ior(mb, half);
    let m = o.bits_to_f(mb);
    let (m1, p1) = (o.fc(-1.0), o.fc(1.0));
    let n = o.add(m, m1);
    let d = o.add(m, p1);
    let r = recip(o, d);
    let f = o.mul(n, r);
    let m2 = o.fc(-2.0);
    let c = o.fma(m2, f, n);
    let nf = o.neg(f);
    let c = o.fma(nf, n, c);
    let f = o.fma(c, r, f);
    let f2 = o.mul(f, f);
    let p = horner(o, f2, &ATANH);
    let p = o.mul(f2, p);
    let a = o.fma(p, f, f);
    let a = o.add(a, a);
    let ln2 = o.fbits(0x3fe6_2e42_fefa_39ef);
    o.fma(ef, ln2, a)
}

/// The central polynomial of erfinv, in l = ln(1 − x²) (above −6.5): erfinv(x)/x.
pub(crate) fn central<T: FloatOps>(o: &mut T, l: T::F) -> T::F {
    let c = o.fbits(0xc009_0000_0000_0000);
    let w = o.sub(c, l);
    horner(o, w, &CENTRAL)
}

/// `__nv_erfinv`: l = ln(1 − x²); erfinv(x) = x·P(−l − 3.125) while l > −6.5 (l's high word below
/// 0xc01a0000 as unsigned), else x·Q(t − 3.25) for t = √−l below 4 and x·R(t − 5) beyond; |x| = 1 gives ±inf,
/// |x| > 1 NaN, NaN itself.
pub fn erfinv<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (ha, _) = hi_abs(o, x);
    let nx = o.neg(x);
    let one = o.fc(1.0);
    let s = o.fma(x, nx, one);
    let l = log_even(o, s);
    let near = central(o, l);
    let nl = o.neg(l);
    let t = o.sqrt(nl);
    let c = o.fbits(0xc00a_0000_0000_0000);
    let u = o.add(t, c);
    let mid = horner(o, u, &MID);
    let c = o.fbits(0xc014_0000_0000_0000);
    let u = o.add(t, c);
    let tail = horner(o, u, &TAIL);
    let tb = o.f_to_bits(t);
    let th = o.shr(tb, 32);
    let four = o.ic(0x4010_0000);
    let below4 = o.ult(th, four);
    let far = o.sel(below4, mid, tail);
    let lb = o.f_to_bits(l);
    let lh = o.shr(lb, 32);
    let lim = o.ic(0xc019_ffff);
    let is_far = o.ult(lim, lh);
    let v = o.sel(is_far, far, near);
    // |x| ≥ 1 (x's high word at least 0x3ff00000) or NaN: x itself for NaN, inf for |x| = 1, else NaN; the
    // product with x below gives the sign (and NaN for NaN).
    let lim1 = o.ic(0x3fef_ffff);
    let out = o.ult(lim1, ha);
    let a = o.abs(x);
    let is_one = o.eq(a, one);
    let (inf, nan) = (o.fbits(0x7ff0_0000_0000_0000), o.fbits(0xfff8_0000_0000_0000));
    let sp = o.sel(is_one, inf, nan);
    let is_nan = o.is_nan(x);
    let sp = o.sel(is_nan, x, sp);
    let v = o.sel(out, sp, v);
    o.mul(v, x)
}

#[cfg(test)]
mod tests;
