//! libdevice's f64 modified Bessel functions of the first kind, `cyl_bessel_i0` and `cyl_bessel_i1`, as Triton
//! 3.6 runs them (their PTX for sm_90), op for op; branches become selects. Below |x| = 11.05 (11 for i1) a
//! polynomial in x²; from there to 2^125 the asymptotic form E·(E·P(1/|x|)/√|x|) with E = e^(|x|/2)
//! (`__nv_exp`), so that the product overflows only where the result does. `rcp.approx.ftz.f64` and
//! `rsqrt.approx.ftz.f64` are refined by Newton steps (the CPU model rounds their starts correctly).

use crate::FloatOps;
use crate::exp_log::exp64::exp_full;
use crate::steps64::{hi_abs, horner, recip};

const I0_FAR: [u64; 18] = [
    0x41f2_f851_fc23_7b1d,
    0x41ff_efdd_4ff3_7461,
    0xc1fa_8a19_07f5_7f70,
    0x41e1_0b68_5285_1c22,
    0xc1b9_25fc_57cc_b350,
    0x4188_5261_a717_6974,
    0xc150_6bfa_24be_44db,
    0x4110_03cc_0da5_8b08,
    0xc0c6_e73a_a6a2_c47a,
    0x4078_5e17_bc10_541a,
    0xc021_6c66_9036_5068,
    0x3fd9_34e0_8086_004c,
    0x3fb6_aa7c_7d42_8943,
    0x3fa6_eac2_735a_091e,
    0x3f9d_ebaa_9056_1e71,
    0x3f9c_b94d_dfd2_3f70,
    0x3fa9_8845_33d3_0179,
    0x3fd9_8845_33d4_3657,
];
const I0_NEAR: [u64; 18] = [
    0x37d4_d7f5_9295_7da6,
    0x3858_c41d_50ab_516f,
    0x3909_5dda_3f2c_417b,
    0x39a3_6718_9a01_363e,
    0x3a3e_9074_5678_b866,
    0x3ad4_16d1_4fa3_a4bd,
    0x3b66_9d02_1fde_720e,
    0x3bf5_6010_14e9_5430,
    0x3c80_b313_c032_5230,
    0x3d05_22a4_2ffe_f890,
    0x3d85_22a4_4080_9476,
    0x3e00_2e85_c07b_a843,
    0x3e72_3456_789b_9de8,
    0x3edc_71c7_1c71_b63c,
    0x3f3c_71c7_1c71_c7c2,
    0x3f8f_ffff_ffff_fffb,
    0x3fd0_0000_0000_0000,
    0x3ff0_0000_0000_0000,
];
const I1_FAR: [u64; 18] = [
    0x41d8_729d_a7e5_a092,
    0xc20a_9923_a681_0426,
    0x4201_5d3d_b3c5_ffe0,
    0xc1e4_d2d8_9a39_13c1,
    0x41bd_cdff_9b08_0398,
    0xc18c_5f2e_01fb_2ff9,
    0x4152_fcfb_5fd5_4150,
    0xc112_6d4c_d831_fc06,
    0x40ca_49ab_c2ca_d407,
    0xc07b_f09a_8d0b_4bcf,
    0x4023_f8f8_f6f2_6890,
    0xbfdd_6e31_961e_ce73,
    0xbfbb_bdc1_21c5_123b,
    0xbfad_76aa_cf55_fc53,
    0xbfa4_f1c4_ff86_494b,
    0xbfa7_efc0_e3c7_167e,
    0xbfc3_2633_e6de_cf48,
    0x3fd9_8845_33d4_3649,
];
const I1_NEAR: [u64; 16] = [
    0x3826_8d52_e367_973f,
    0x38a7_6b71_c289_18b0,
    0x3958_082f_e660_6acb,
    0x39f0_ec04_908e_2753,
    0x3a88_d983_808a_730d,
    0x3b1e_2162_4af0_555a,
    0x3baf_1802_4073_231e,
    0x3c3a_b810_d07c_53a4,
    0x3cc2_c976_77fa_b629,
    0x3d45_22a4_2918_d8a1,
    0x3dc2_7e4f_b8f6_17fc,
    0x3e38_45c8_a0ab_d799,
    0x3ea6_c16c_16c3_69a2,
    0x3f0c_71c7_1c71_a4b2,
    0x3f65_5555_5555_5681,
    0x3faf_ffff_ffff_fff1,
];

/// P(1/a) (the refined reciprocal) and 1/√a (`rsqrt.approx.ftz` and one Newton step y + y·e·(1/2 + 3e/8)).
fn far_parts<T: FloatOps>(o: &mut T, a: T::F, p: &[u64]) -> (T::F, T::F) {
    let r = recip(o, a);
    let p = horner(o, r, p);
    let y = o.rsqrt_approx_ftz(a);
    let y2 = o.mul(y, y);
    let ny2 = o.neg(y2);
    let one = o.fc(1.0);
    let e = o.fma(a, ny2, one);
    let (h, c) = (o.fc(0.5), o.fc(0.375));
    let q = o.fma(c, e, h);
    let ye = o.mul(e, y);
    (p, o.fma(q, ye, y))
}

/// Whether |x|'s high word is in [lo, 0x47bfffff] (|x| from lo's value up to 2^125): the asymptotic form.
fn is_far<T: FloatOps>(o: &mut T, x: T::F, lo: u64) -> T::P {
    let (ha, _) = hi_abs(o, x);
    let neg = o.ic(lo.wrapping_neg());
    let d = o.iadd(ha, neg);
    let span = o.ic(0x47bf_ffff - lo);
    // libdevice's high-word arithmetic wraps at 32 bits.
    let m = o.ic(0xffff_ffff);
    let d = o.iand(d, m);
    let out = o.ult(span, d);
    o.not(out)
}

/// `__nv_cyl_bessel_i0`.
pub fn i0<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let (p, y) = far_parts(o, a, &I0_FAR);
    let s = o.mul(y, p);
    let half = o.fc(0.5);
    let h = o.mul(a, half);
    let e = exp_full(o, h);
    let se = o.mul(s, e);
    let far = o.mul(e, se);
    let x2 = o.mul(a, a);
    let near = horner(o, x2, &I0_NEAR);
    let f = is_far(o, x, 0x4026_19fc);
    o.sel(f, far, near)
}

/// `__nv_cyl_bessel_i1`: the asymptotic form with x's sign bit; below 11, x/2 + x·x²·P(x²).
pub fn i1<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs(x);
    let (p, y) = far_parts(o, a, &I1_FAR);
    let s = o.mul(p, y);
    let half = o.fc(0.5);
    let h = o.mul(a, half);
    let e = exp_full(o, h);
    let se = o.mul(s, e);
    let far = o.mul(se, e);
    let xb = o.f_to_bits(x);
    let sign = o.ic(1 << 63);
    let sb = o.iand(xb, sign);
    let fb = o.f_to_bits(far);
    let fb = o.ior(fb, sb);
    let far = o.bits_to_f(fb);
    let x2 = o.mul(x, x);
    let p = horner(o, x2, &I1_NEAR);
    let p = o.mul(p, x2);
    let hx = o.mul(x, half);
    let near = o.fma(x, p, hx);
    let f = is_far(o, x, 0x4026_0000);
    o.sel(f, far, near)
}

#[cfg(test)]
mod tests;
