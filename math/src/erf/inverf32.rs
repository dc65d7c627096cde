//! libdevice's f32 `erfcinvf`, `normcdfinvf`, `erfcxf` as Triton 3.6 runs them (their PTX for sm_90 under
//! `__CUDA_FTZ`), op for op; branches become selects. They start from the hardware's `lg2`/`rsqrt`/`rcp`/`ex2`/
//! `div.approx`, which the CPU model rounds correctly, so the model can differ from the GPU in the last bit.

use crate::FloatOps;
use crate::erf::erfc32::erfcx_rational;
use crate::rounding::{Arith, Dir};
use crate::steps32::{horner, k};

/// erfinv(x)/x in w = −log2(1 − x²) (the central polynomial `erfinvf` uses too).
const CENTRAL: [u32; 10] = [
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

/// erfcinv(y)·√(−log2 y) in t = 1/√(−log2 y), for the tails.
const TAIL: [u32; 9] = [
    0xc27c_73f1,
    0x42fe_f829,
    0xc2e4_361c,
    0x4271_4d9b,
    0xc1ae_51b3,
    0x40ce_f504,
    0xbfea_9e05,
    0xbcf8_71f4,
    0x3f55_3775,
];

/// `__nv_erfcinvf`: with y = 2 − x (`add.rn.ftz`), for x in [0.0034, 1.9966] erfinv(1 − x) by the central
/// polynomial in −log2(x·y), times 1 − x (as p − p·x); in the tails (and for NaN) t = 1/√(−log2 m) with m the
/// smaller of x and y, erfcinv = P(t)/t (the approximate reciprocal), negative when x > 1.
pub fn erfcinvf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let two = o.fc(2.0);
    let nx = o.neg(x);
    let y = o.arith_ftz(Arith::Add, Dir::Nearest, two, nx);
    // Central: l ∈ [0.0034, 1.9966].
    let s = o.mul_ftz(y, x);
    let l = o.lg2_approx_ftz(s);
    let w = o.neg(l);
    let p = horner(o, w, &CENTRAL);
    let near = o.fma_ftz(p, nx, p);
    // Tails.
    let one = o.fc(1.0);
    let upper = o.lt(one, x);
    let m = o.sel(upper, y, x);
    let l = o.lg2_approx_ftz(m);
    let nl = o.neg(l);
    let t = o.rsqrt_approx_ftz(nl);
    let p = horner(o, t, &TAIL);
    let r = o.rcp_approx_ftz(t);
    let nr = o.neg(r);
    let r = o.sel(upper, nr, r);
    let far = o.mul_ftz(p, r);
    let (lo, hi) = (k(o, 0x3b5e_d289), k(o, 0x3fff_9097));
    // Ordered: NaN takes the tail branch, as libdevice's unordered compares send it.
    let above = o.le(lo, x);
    let below = o.le(x, hi);
    let inside = o.and(above, below);
    o.sel(inside, near, far)
}

/// `__nv_normcdfinvf`: −√2·erfcinv(2x) (`mul.f32` by −√2 in f32), then + 0 (`add.rn.ftz`: −0 becomes +0).
pub fn normcdfinvf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let x2 = o.add(x, x);
    let v = erfcinvf(o, x2);
    let c = k(o, 0xbfb5_04f3);
    let v = o.mul(v, c);
    let zero = o.fc(0.0);
    o.arith_ftz(Arith::Add, Dir::Nearest, v, zero)
}

/// `__nv_erfcxf`: e^(x²)·erfc(x). For a = |x| below 10.055, `erfcf`'s rational part (erfc(a)·e^(a²)); beyond (and
/// NaN), the asymptotic series t/√π·(1 − t²/2 + 3t⁴/4 − 15t⁶/8 + 105t⁸/16) in t = 1/a (`div.approx` of 0.25 by
/// a/4). For negative x, 2·e^(a²) − erfcx(a) with e^(a²) from a² rounded toward zero (its error carried) and
/// libdevice's inline exponential: inf where that overflows.
pub fn erfcxf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let near = erfcx_rational(o, a);
    let q = o.fc(0.25);
    let aq = o.mul(a, q);
    let t = o.div_approx_ftz(q, aq);
    let t2 = o.mul(t, t);
    let p = horner(o, t2, &[0x40d2_0000, 0xbff0_0000, 0x3f40_0000, 0xbf00_0000, 0x3f80_0000]);
    let c = k(o, 0x3f10_6ebb);
    let r = o.mul(t, c);
    let far = o.mul(r, p);
    let lim = k(o, 0x4120_e148);
    let small = o.lt(a, lim);
    let pos = o.sel(small, near, far);
    // 2·e^(a²) − erfcx(a) for x < 0.
    let s = o.arith_ftz(Arith::Mul, Dir::Zero, a, a);
    let ns = o.neg(s);
    let err = o.fma_ftz(a, a, ns);
    // e^s by expf's core.
    let (e, sc) = crate::exp_log::explog32::exp_split(o, s, [0x3bbb_989d, 0x3fb8_aa3b, 0x32a5_7060]);
    let m = o.mul(e, sc);
    let v = o.fma(e, sc, m);
    let w = o.fma_ftz(v, err, v);
    let neg = o.sub(w, pos);
    let inf = k(o, 0x7f80_0000);
    let over = o.eq(v, inf);
    let neg = o.sel(over, inf, neg);
    let zero = o.fc(0.0);
    let is_neg = o.lt(x, zero);
    o.sel(is_neg, neg, pos)
}

#[cfg(test)]
mod tests;
