//! libdevice's f32 `sinpif`, `cospif`, `rcbrtf`, `logbf`, `erfinvf`, `erfcf`, `normcdff`, `frsqrt_rn` as Triton
//! 3.6 runs them (their PTX for
//! sm_90 under `__CUDA_FTZ`), op for op; branches become selects. `sinpif`/`cospif` and `logbf` are exact
//! arithmetic and bit-exact in the CPU model; `rcbrtf` (`lg2`/`ex2`/`rcp.approx.ftz`), `erfinvf`
//! (`lg2`/`rsqrt.approx.ftz`), `erfcf` (`rcp`/`ex2.approx.ftz`) can differ from the GPU in the last bit there;
//! `frsqrt_rn` refines its approximate start to the correctly rounded result.

use super::libdevice32::{horner, k};
use super::pow32::exp_scaled;
use super::trig32::sin_cos_kernel;
use super::{Arith, Dir, FloatOps};

/// The reduction of `sinpif`/`cospif`: n = rni(2x), r = (x − n/2)·π (π in two parts), quadrant n.
fn pi_reduce<T: FloatOps>(o: &mut T, x: T::F) -> (T::I, T::F) {
    let t = o.add(x, x);
    let n = o.rni(t);
    let q = o.f2i(n);
    let nn = o.neg(n);
    let half = o.fc(0.5);
    let r = o.fma_ftz(nn, half, x);
    let lo = k(o, 0x3422_2169);
    let rl = o.mul(r, lo);
    let hi = k(o, 0x4049_0fda);
    let r = o.fma_ftz(r, hi, rl);
    (q, r)
}

/// `__nv_sinpif`: sin(πx); an integral x (infinities included) gives x·0 (±0, or NaN).
pub fn sinpif<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (q, r) = pi_reduce(o, x);
    let v = sin_cos_kernel(o, q, r, false);
    let t = o.trunc(x);
    let frac = o.ne(t, x);
    let zero = o.fc(0.0);
    let z = o.mul_ftz(x, zero);
    o.sel(frac, v, z)
}

/// `__nv_cospif`: cos(πx); |x| above 2^24 (every such f32 is an even integer) read as x·0.
pub fn cospif<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let lim = k(o, 0x4b80_0000);
    // Unordered: NaN keeps x.
    let big = o.lt(lim, a);
    let small = o.not(big);
    let zero = o.fc(0.0);
    let z = o.mul_ftz(x, zero);
    let x = o.sel(small, x, z);
    let (q, r) = pi_reduce(o, x);
    sin_cos_kernel(o, q, r, true)
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

/// `__nv_logbf`: the unbiased exponent as a float; subnormals (|x|'s bits at most 0x7fffff, so 0 too) from
/// the leading zeros (−118 − clz, with logb(±0) = −inf); inf and NaN give x·x.
pub fn logbf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let ab = o.f_to_bits(a);
    let lim = o.ic(0x007f_ffff);
    let normal = o.ult(lim, ab);
    let z = o.clz(ab);
    let base = o.ic(118u64.wrapping_neg());
    let e = o.isub(base, z);
    let ef = o.i2f(e);
    let zero = o.fc(0.0);
    let is_zero = o.eq(x, zero);
    let ninf = k(o, 0xff80_0000);
    let sub = o.sel(is_zero, ninf, ef);
    let eb = o.shr(ab, 23);
    let bias = o.ic(127u64.wrapping_neg());
    let e = o.iadd(eb, bias);
    let ef = o.i2f(e);
    let inf_lim = o.ic(0x7f7f_ffff);
    let special = o.ult(inf_lim, ab);
    let xx = o.mul(x, x);
    let norm = o.sel(special, xx, ef);
    o.sel(normal, norm, sub)
}

/// `__nv_erfinvf`: with w = −log2(1 − x²) (the approximate log), below 8.2 a polynomial in w times x; beyond,
/// a polynomial in 1/√w (the approximate reciprocal square root) over its exactly rounded reciprocal, with x's
/// sign.
pub fn erfinvf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let nx = o.neg(x);
    let one = o.fc(1.0);
    let s = o.fma_ftz(x, nx, one);
    let l = o.lg2_approx_ftz(s);
    let w = o.neg(l);
    let lim = k(o, 0xc103_3333);
    let lt = o.lt(l, lim);
    // Far tail: l < −8.2.
    let t = o.rsqrt_approx_ftz(w);
    let p = horner(o, t, &[0xbf17_04a1, 0xbf29_baa5, 0x3fcc_6adc, 0xbf2c_daed, 0xbdc3_0537, 0x3f55_d9b9]);
    let rt = o.div(one, t);
    let v = o.mul(rt, p);
    let sign = o.ic(0x8000_0000);
    let xb = o.f_to_bits(x);
    let sb = o.iand(xb, sign);
    let vb = o.f_to_bits(v);
    let fb = o.ior(sb, vb);
    let far = o.bits_to_f(fb);
    // Central: l ≥ −8.2 (or NaN).
    let c = [
        0xaf8a_6370,
        0x3221_f645,
        0xb401_6fda,
        0x3468_f846,
        0x3707_42aa,
        0xb804_db4d,
        0xba4a_fea1,
        0x3bb5_c027,
        0x3e24_ae0f,
        0x3f62_dfc4,
    ];
    let p = horner(o, w, &c);
    let near = o.mul(p, x);
    o.sel(lt, far, near)
}

/// erfc(a)·e^(a²) for a = |x| as `erfcf` and `erfcxf` compute it: t = (a − 4)/(a + 4) (the approximate
/// reciprocal, corrected), p(t) a degree-10 polynomial, p/(1 + 2a) (corrected likewise).
pub(super) fn erfcx_rational<T: FloatOps>(o: &mut T, a: T::F) -> T::F {
    let (m4, four, one) = (o.fc(-4.0), o.fc(4.0), o.fc(1.0));
    let n = o.add(a, m4);
    let d = o.add(a, four);
    let rd = o.rcp_approx_ftz(d);
    let t = o.mul_ftz(n, rd);
    let t1 = o.add(t, one);
    let e = o.fma_ftz(m4, t1, a);
    let nt = o.neg(t);
    let e = o.fma_ftz(nt, a, e);
    let t = o.fma_ftz(rd, e, t);
    let c = [
        0x3a69_a091,
        0x3be6_e05b,
        0xbc81_fb4b,
        0x3d15_373b,
        0xbd88_7c5a,
        0x3dc0_21d5,
        0xbdce_d424,
        0x3d8b_74de,
        0x3c7b_f170,
        0xbe0e_f8d4,
        0x3f9d_d2c9,
    ];
    let p = horner(o, t, &c);
    let two = o.fc(2.0);
    let d2 = o.fma_ftz(two, a, one);
    let r2 = o.rcp_approx_ftz(d2);
    let q = o.mul_ftz(p, r2);
    let m2 = o.fc(-2.0);
    let m = o.mul(q, m2);
    let s = o.fma_ftz(a, m, p);
    let s = o.sub(s, q);
    o.fma_ftz(s, r2, q)
}

/// `__nv_erfcf`: for a = |x|, t = (a − 4)/(a + 4) (the approximate reciprocal, corrected), p(t) a degree-10
/// polynomial, erfc(a) = p/(1 + 2a) (corrected likewise) · e^(−a²) (the square's rounding error carried into
/// the exponential); 0 above a = 10.055; 2 − erfc(a) for negative x.
pub fn erfcf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let q = erfcx_rational(o, a);
    let two = o.fc(2.0);
    let na = o.neg(a);
    let sq = o.mul(a, na);
    let v = exp_scaled(o, sq);
    let nsq = o.neg(sq);
    let err = o.fma_ftz(na, a, nsq);
    let v = o.fma_ftz(v, err, v);
    let r = o.mul(v, q);
    let lim = k(o, 0x4120_e148);
    let far = o.lt(lim, a);
    let zero = o.fc(0.0);
    let r = o.sel(far, zero, r);
    let neg = o.lt(x, zero);
    let nr = o.sub(two, r);
    o.sel(neg, nr, r)
}

/// `__nv_normcdff`: Φ(x) = erfc(−x/√2)/2 with x clamped to ±14.5, −x/√2 carried as a head u and tail, `erfcf`
/// of the head, and below x = −1 the first-order correction for the tail (d/du erfc(u) = −2u·erfc(u)... as
/// libdevice scales it).
pub fn normcdff<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let lim = k(o, 0x4168_0000);
    let big = o.lt(lim, a);
    let cl = super::libdevice32::with_sign(o, lim, x);
    let t = o.sel(big, cl, x);
    let c = k(o, 0xbf35_04f3);
    let h = o.mul_ftz(t, c);
    let nh = o.neg(h);
    let e = o.fma_ftz(t, c, nh);
    let cl = k(o, 0xb24f_e77a);
    let l = o.fma_ftz(t, cl, e);
    let u = o.arith_ftz(Arith::Add, Dir::Nearest, h, l);
    let v = erfcf(o, u);
    let d = o.sub(h, u);
    let d = o.arith_ftz(Arith::Add, Dir::Nearest, d, l);
    let m2 = o.fc(-2.0);
    let m = o.mul(u, m2);
    let m = o.mul(m, v);
    let w = o.fma_ftz(m, d, v);
    let m1 = o.fc(-1.0);
    let low = o.lt(t, m1);
    let v = o.sel(low, w, v);
    let half = o.fc(0.5);
    o.mul(v, half)
}

/// `__nv_frsqrt_rn`: 1/√x correctly rounded. For a positive normal x, m = x's significand with the exponent's
/// parity (m in [0.5, 2)), y ≈ 1/√m from `rsqrt.approx.ftz` refined by one step with y² carried exactly, and
/// the halved exponent difference added back to the bits; others (0, subnormals, negatives, inf, NaN) give
/// `rsqrt.approx.ftz` of x.
pub fn rsqrt_rnf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let xb = o.f_to_bits(x);
    let off = o.ic(0xff80_0000);
    let xm = o.iadd(xb, off);
    let lim = o.ic(0x7eff_ffff);
    let special = o.ult(lim, xm);
    let keep = o.ic(0x00ff_ffff);
    let mb = o.iand(xb, keep);
    let half = o.ic(0x3f00_0000);
    let mb = o.ior(mb, half);
    let kk = o.isub(mb, xb);
    let m = o.bits_to_f(mb);
    let y = o.rsqrt_approx_ftz(m);
    let y2 = o.mul(y, y);
    let ny2 = o.neg(y2);
    let e2 = o.fma_ftz(y, y, ny2);
    let nm = o.neg(m);
    let one = o.fc(1.0);
    let h = o.fma_ftz(y2, nm, one);
    let h = o.fma_ftz(e2, nm, h);
    let (c38, c12) = (o.fc(0.375), o.fc(0.5));
    let p = o.fma_ftz(c38, h, c12);
    let yh = o.mul(y, h);
    let r = o.fma_ftz(p, yh, y);
    let sh = o.sar(kk, 1);
    let rb = o.f_to_bits(r);
    let rb = o.iadd(sh, rb);
    let v = o.bits_to_f(rb);
    let s = o.rsqrt_approx_ftz(x);
    o.sel(special, s, v)
}

#[cfg(test)]
mod tests;
