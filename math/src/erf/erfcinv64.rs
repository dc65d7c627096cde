//! libdevice's f64 `erfcinv` and `normcdfinv` (`__nv_erfcinv`, `__nv_normcdfinv`) as Triton 3.6 runs them
//! (their PTX for sm_90), op for op; branches become selects. Exact arithmetic except `rcp.approx.ftz.f64`
//! (refined by Newton steps) and `rsqrt.approx(.ftz).f64` (refined in the moderate tail; used as is in the far
//! tail, where the rational function is flat), which the CPU model rounds correctly.

use crate::FloatOps;
use crate::erf::erfinv64::{central, log_even};
use crate::exp_log::log64::log_full;
use crate::steps64::horner;

/// The moderate tail (m ≥ 2^−333): erfcinv = N(t)/(t·D(t)), t = 1/√(−ln m); D's leading 1 is an add.
const MID_N: [u64; 8] = [
    0x3feb_e922_2591_afab,
    0x4000_a0e7_3338_39aa,
    0x4008_768c_f7e5_7d5c,
    0x400b_77e7_e28d_a583,
    0x3ff3_4f26_a4f9_9cf9,
    0x3fc1_f674_adb0_19ed,
    0x3f75_ddae_9506_431d,
    0x3f0a_da49_aa32_489c,
];
const MID_D: [u64; 8] = [
    0x4001_e90f_f51c_2197,
    0x4011_1ea3_a7cf_3820,
    0x4011_a0e4_a474_9594,
    0x400d_4e97_7d38_c14d,
    0x3ff3_7fd5_67ec_0d5f,
    0x3fc1_fb9d_7f67_6033,
    0x3f75_ddcd_f989_46e4,
    0x3f0a_da42_d79d_8dbb,
];
/// The far tail (m below 2^−333, subnormals included).
const FAR_N: [u64; 5] =
    [0x3fe8_e210_1c71_b0bf, 0x3ffa_2013_964e_259c, 0x3fda_bfe9_0921_be68, 0x3f97_e413_14de_00d4, 0x3f31_1bd4_8710_2e94];
const FAR_D: [u64; 5] =
    [0x3ff5_9895_c30b_aa54, 0x3ffa_e8e5_956a_143f, 0x3fda_cce8_5ff7_383d, 0x3f97_e43b_6cac_34fe, 0x3f31_1bd0_8289_eb12];
/// N(t)/(t·D(t)) with D(t) = t^k + ... (its first step an add).
fn rational<T: FloatOps>(o: &mut T, t: T::F, n: &[u64], d: &[u64]) -> T::F {
    let num = horner(o, t, n);
    let c = o.fbits(d[0]);
    let mut den = o.add(t, c);
    for &ci in &d[1..] {
        let c = o.fbits(ci);
        den = o.fma(den, t, c);
    }
    let den = o.mul(t, den);
    o.div(num, den)
}

/// `__nv_erfcinv`: with y = 2 − x, for x in [0.00096, 1.99904] erfinv(1 − x) from `erfinv`'s central polynomial
/// in ln(x·y), times 1 − x (as p − p·x); beyond (and NaN), m = the smaller of x and y and t = 1/√(−ln m): a
/// rational function of t (the moderate tail, m's high word as an f32 at least 0x2b2bff2f, with the fast
/// logarithm and a refined t) or another with `__nv_log` and the unrefined `rsqrt.approx.f64` (the far tail),
/// negated when x > 1.
pub fn erfcinv<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let two = o.fc(2.0);
    let nx = o.neg(x);
    let y = o.add(two, nx);
    let s = o.mul(y, x);
    let l = log_even(o, s);
    let p = central(o, l);
    let near = o.fma(p, nx, p);
    // The tails.
    let xb = o.f_to_bits(x);
    let xh = o.sar(xb, 32);
    let lim1 = o.ic(0x3fef_ffff);
    let upper = o.slt(lim1, xh);
    let m = o.sel(upper, y, x);
    let l = log_even(o, m);
    let nl = o.neg(l);
    let t = o.rsqrt_approx_ftz(nl);
    let t2 = o.mul(t, t);
    let nt2 = o.neg(t2);
    let one = o.fc(1.0);
    let e = o.fma(nl, nt2, one);
    let (h, c) = (o.fc(0.5), o.fc(0.375));
    let q = o.fma(c, e, h);
    let te = o.mul(e, t);
    let t = o.fma(q, te, t);
    let mid = rational(o, t, &MID_N, &MID_D);
    let l = log_full(o, m);
    let nl = o.neg(l);
    let t = o.rsqrt_approx(nl);
    let far = rational(o, t, &FAR_N, &FAR_D);
    // m's high word read as an f32 below 6.1e−13 (or negative, or NaN): the far tail.
    let mb = o.f_to_bits(m);
    let mh = o.shr(mb, 32);
    let (c, inf) = (o.ic(0x2b2b_ff2f), o.ic(0x7f80_0000));
    let ge = o.ult(mh, c);
    let ge = o.not(ge);
    let past = o.ult(inf, mh);
    let le = o.not(past);
    let moderate = o.and(ge, le);
    let v = o.sel(moderate, mid, far);
    let nv = o.neg(v);
    let v = o.sel(upper, nv, v);
    let (lo, hi) = (o.fbits(0x3f4f_a4d2_ad8f_904d), o.fbits(0x3fff_fc0b_65aa_4e0e));
    let above = o.le(lo, x);
    let below = o.le(x, hi);
    let inside = o.and(above, below);
    o.sel(inside, near, v)
}

/// `__nv_normcdfinv`: −√2·erfcinv(2x), √2 in two parts (the tail's product added by an fma), then + 0 (−0 to
/// +0).
pub fn normcdfinv<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let x2 = o.add(x, x);
    let v = erfcinv(o, x2);
    let lo = o.fbits(0xbca2_1165_f626_cdd5);
    let l = o.mul(v, lo);
    let hi = o.fbits(0xbff6_a09e_667f_3bcc);
    let r = o.fma(hi, v, l);
    let zero = o.fc(0.0);
    o.add(r, zero)
}

#[cfg(test)]
mod tests;
