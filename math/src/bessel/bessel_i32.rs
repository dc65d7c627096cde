//! libdevice's f32 modified Bessel functions of the first kind, `cyl_bessel_i0f` and `cyl_bessel_i1f`, as
//! Triton 3.6 runs them (their PTX for sm_90 under `__CUDA_FTZ`), op for op; branches become selects. Below a
//! threshold a polynomial in x²; above, the asymptotic form e^|x|/√|x|·P(1/|x|) with e^|x| = (e^(|x|/2))² built
//! as s·(E − 1)·(E + 1) + s from libdevice's `expm1f` of |x|/2 (so that it overflows only where the result
//! does). `rcp`/`rsqrt`/`ex2.approx` are the hardware's, which the CPU model rounds correctly.

use crate::FloatOps;
use crate::steps32::{horner, k};

/// `expm1f`'s core for h = |x|/2 ≥ 0: j = rni(h·log2 e) (0 for |h| < 0.41), r = h − j·ln 2 (two parts),
/// e^r − 1 = r + r²·q(r), then 2^j·(e^r − 1) + (2^j − 1), with j = 128 done as 2·(2^127...), 127 past, −1 far
/// below, h + h at 0.
fn expm1_half<T: FloatOps>(o: &mut T, h: T::F) -> T::F {
    let l2e = k(o, 0x3fb8_aa3b);
    let t = o.mul(h, l2e);
    let j = o.rni(t);
    let ah = o.abs_ftz(h);
    let lim = k(o, 0x3ed1_eb85);
    let small = o.lt(ah, lim);
    let zero = o.fc(0.0);
    let j = o.sel(small, zero, j);
    let nj = o.neg(j);
    let (l2h, l2l) = (k(o, 0x3f31_7200), k(o, 0x35bf_be8e));
    let r = o.fma_ftz(nj, l2h, h);
    let r = o.fma_ftz(nj, l2l, r);
    let c128 = o.fc(128.0);
    let at128 = o.eq(j, c128);
    let c127 = o.fc(127.0);
    let jj = o.sel(at128, c127, j);
    let q = horner(o, r, &[0x3ab5_ebe6, 0x3c09_5663, 0x3d2a_abe3, 0x3e2a_a9f6, 0x3eff_fffe]);
    let m = o.mul(r, q);
    let u = o.fma_ftz(m, r, r);
    let e = o.ex2_approx_ftz(jj);
    let m1 = o.fc(-1.0);
    let t = o.add(e, m1);
    let v = o.fma_ftz(u, e, t);
    let vv = o.add(v, v);
    let v = o.sel(at128, vv, v);
    let over = o.lt(c128, jj);
    let inf = k(o, 0x7f80_0000);
    let v = o.sel(over, inf, v);
    let far = k(o, 0xc1c8_0000);
    let under = o.lt(jj, far);
    let v = o.sel(under, m1, v);
    let is_zero = o.eq(h, zero);
    let hh = o.add(h, h);
    o.sel(is_zero, hh, v)
}

/// The asymptotic form for a = |x|: s = P(1/a)/√a (the approximate reciprocal and reciprocal root), then
/// s·E² as s·(E − 1)·((E − 1) + 2) + s with E = e^(a/2).
fn asymptotic<T: FloatOps>(o: &mut T, a: T::F, p: &[u32]) -> T::F {
    let r = o.rcp_approx_ftz(a);
    let p = horner(o, r, p);
    let rs = o.rsqrt_approx_ftz(a);
    let s = o.mul(rs, p);
    let half = o.fc(0.5);
    let h = o.mul(a, half);
    let v = expm1_half(o, h);
    let sv = o.mul_ftz(s, v);
    let two = o.fc(2.0);
    let w = o.arith_ftz(crate::rounding::Arith::Add, crate::rounding::Dir::Nearest, v, two);
    let t = o.mul_ftz(sv, w);
    o.arith_ftz(crate::rounding::Arith::Add, crate::rounding::Dir::Nearest, t, s)
}

/// Whether a = |x| takes the asymptotic form: at least `lim` and finite (NaN and inf take the polynomial).
fn is_far<T: FloatOps>(o: &mut T, a: T::F, lim: u32) -> T::P {
    let lim = k(o, lim);
    let ge = o.le(lim, a);
    let inf = k(o, 0x7f80_0000);
    let is_inf = o.eq(a, inf);
    let fin = o.not(is_inf);
    o.and(ge, fin)
}

/// `__nv_cyl_bessel_i0f`: below |x| = 9 a degree-10 polynomial in x²; beyond, the asymptotic form.
pub fn i0f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let p = [0x3eb2_8ba6, 0xbbb2_cb0d, 0x3d08_9707, 0x3ce4_77e2, 0x3d4c_4525, 0x3ecc_4229];
    let far = asymptotic(o, a, &p);
    let x2 = o.mul(a, a);
    let c = [
        0x2037_2901,
        0x2385_ab76,
        0x2840_8812,
        0x2c24_4edb,
        0x3002_0914,
        0x3391_8d5a,
        0x36e3_919c,
        0x39e3_8df6,
        0x3c80_0002,
        0x3e80_0000,
        0x3f80_0000,
    ];
    let near = horner(o, x2, &c);
    let f = is_far(o, a, 0x4110_0000);
    o.sel(f, far, near)
}

/// `__nv_cyl_bessel_i1f`: below |x| = 8.085 x/2 + x·x²·P(x²) (P of degree 8); beyond, the asymptotic form with
/// x's sign bit.
pub fn i1f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let p = [0xbf00_bcd4, 0x3ce9_3d2e, 0xbd47_a025, 0xbd3e_1ea9, 0xbe19_334b, 0x3ecc_422b];
    let far = asymptotic(o, a, &p);
    let sign = o.ic(0x8000_0000);
    let xb = o.f_to_bits(x);
    let sb = o.iand(xb, sign);
    let fb = o.f_to_bits(far);
    let fb = o.ior(sb, fb);
    let far = o.bits_to_f(fb);
    let x2 = o.mul(x, x);
    let c = [
        0x224d_7bdd,
        0x25c5_4ac1,
        0x2a37_0c80,
        0x2e11_c2c5,
        0x31c2_96ae,
        0x3535_fffe,
        0x3863_8f95,
        0x3b2a_aa97,
        0x3d80_0001,
    ];
    let p = horner(o, x2, &c);
    let p = o.mul(x2, p);
    let half = o.fc(0.5);
    let h = o.mul(x, half);
    let near = o.fma_ftz(x, p, h);
    let f = is_far(o, a, 0x4101_5c29);
    o.sel(f, far, near)
}

#[cfg(test)]
mod tests;
