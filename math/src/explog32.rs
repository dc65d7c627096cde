//! libdevice's f32 `exp10f`, `log10f` and `acoshf` as Triton 3.6 runs them (`__nv_exp10f`, `__nv_log10f`,
//! `__nv_acoshf` in the PTX Triton gives for sm_90 under `__CUDA_FTZ`), op for op; branches become selects.
//! `exp10f` and the small branch of `acoshf` go through approximate instructions (`ex2.approx.ftz`,
//! `sqrt.approx.ftz`), so the CPU model can differ from the GPU in the last bit there; `log10f` uses none and
//! is bit-exact.

use super::FloatOps;
use super::libdevice32::{horner, k, logf};
use super::{Arith, Dir};

/// `__nv_exp10f`: 2^j · 2^r with j = ⌊x·log2(10)⌉ taken from a rounded-down fma in the mantissa of 1.5·2^23
/// (clamped to [−127, 125] through a saturated fraction), r = x·log2(10) − j in two parts; the scale 2^j
/// multiplies the approximate 2^r without `.ftz`, so subnormal results survive.
pub fn exp10f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (e, scale) = exp_split(o, x, [0x3c57_fa62, 0x4054_9a78, 0x3397_9a37]);
    o.mul(e, scale)
}

/// libdevice's f32 exponential core for b^x (`expf`: b = e, `exp10f`: b = 10), as `exp10f` above describes:
/// `c` scales x into the saturated fraction that rounds j, `hi + lo` is log2(b) in two parts. Returns (2^r from
/// `ex2.approx.ftz`, the scale 2^j), whose product is the result.
pub(super) fn exp_split<T: FloatOps>(o: &mut T, x: T::F, [c, hi, lo]: [u32; 3]) -> (T::F, T::F) {
    let (c, half) = (k(o, c), o.fc(0.5));
    let t = o.fma_ftz(x, c, half);
    let s = o.sat_ftz(t);
    let (w, m) = (k(o, 0x437c_0000), k(o, 0x4b40_0001));
    let j = o.fma_rm_ftz(s, w, m);
    let bias = k(o, 0xcb40_007f);
    let a = o.add(j, bias);
    let na = o.neg(a);
    let hi = k(o, hi);
    let r = o.fma_ftz(x, hi, na);
    let lo = k(o, lo);
    let r = o.fma_ftz(x, lo, r);
    let jb = o.f_to_bits(j);
    let sb = o.shl(jb, 23);
    let scale = o.bits_to_f(sb);
    (o.ex2_approx_ftz(r), scale)
}

/// `__nv_log10f`: `logf` times log10(e) (rounded), with log10(0) = −inf.
pub fn log10f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let l = logf(o, x);
    let c = k(o, 0x3ede_5bd9);
    let v = o.mul(l, c);
    let zero = o.fc(0.0);
    let z = o.eq(x, zero);
    let ninf = k(o, 0xff80_0000);
    o.sel(z, ninf, v)
}

/// `__nv_acoshf`: with d = x − 1, for d in [+0, 2^23] log1p(d + √(d·x)) (`d·x` rounded toward zero, `√` the
/// approximate one, log1p by libdevice's own reduction), else (large d, d < 0, NaN) ln(d) + ln 2.
pub fn acoshf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let m1 = o.fc(-1.0);
    let d = o.add(x, m1);
    let db = o.f_to_bits(d);
    let lim = o.ic(0x4b00_0001);
    let small = o.ult(db, lim);
    // Large, negative or NaN d.
    let l = logf(o, d);
    let ln2 = k(o, 0x3f31_7218);
    let big = o.add(l, ln2);
    // Small d: u = d + √(x·d + d).
    let p = o.arith_ftz(Arith::Mul, Dir::Zero, x, d);
    let q = o.arith_ftz(Arith::Add, Dir::Nearest, p, d);
    let r = o.sqrt_approx_ftz(q);
    let u = o.add(d, r);
    let v = log1p_core(o, u);
    o.sel(small, v, big)
}

/// The log1p inside libdevice's `acoshf`: 1 + u = 2^e·m with e from (1 + u) rounded toward zero, m − 1 formed
/// as u·2^-e + (2^-e − 1) without cancellation (the 2^-e scalings done on the bits), a degree-8 polynomial.
fn log1p_core<T: FloatOps>(o: &mut T, u: T::F) -> T::F {
    let one = o.fc(1.0);
    let s = o.arith_ftz(Arith::Add, Dir::Zero, u, one);
    let sb = o.f_to_bits(s);
    let off = o.ic(0xc0c0_0000);
    let t = o.iadd(sb, off);
    let mask = o.ic(0xff80_0000);
    let eb = o.iand(t, mask);
    let ub = o.f_to_bits(u);
    let mb = o.isub(ub, eb);
    let mf = o.bits_to_f(mb);
    let four = o.ic(0x4080_0000);
    let qb = o.isub(four, eb);
    let qf = o.bits_to_f(qb);
    let (quarter, m1) = (o.fc(0.25), o.fc(-1.0));
    let a = o.fma_ftz(quarter, qf, m1);
    let f = o.add(a, mf);
    let ef = o.i2f(eb);
    let ulp = k(o, 0x3400_0000);
    let e = o.mul(ef, ulp);
    let c = [
        0xbd39_bf78,
        0x3dd8_0012,
        0xbe07_78e0,
        0x3e14_6475,
        0xbe2a_68dd,
        0x3e4c_af9e,
        0xbe80_0042,
        0x3eaa_aae6,
        0xbf00_0000,
    ];
    let p = horner(o, f, &c);
    let q = o.mul(f, p);
    let q = o.fma_ftz(q, f, f);
    let ln2 = k(o, 0x3f31_7218);
    let v = o.fma_ftz(e, ln2, q);
    // Specials, by the bits of u: below +inf's (u in [+0, inf)), v. Otherwise (+inf, NaN, negative): u in
    // [−1, −0] (bits, read as signed, below those of −1 − 2^-23) keeps v, the rest (+inf, NaN, u < −1) gives
    // u·inf + inf (inf or NaN); then −0 gives −0.
    let inf_b = o.ic(0x7f80_0000);
    let finite = o.ult(ub, inf_b);
    let low = o.ic(0xbf80_0001);
    let keep = o.slt(ub, low);
    let inf = k(o, 0x7f80_0000);
    let w = o.fma_ftz(u, inf, inf);
    let w = o.sel(keep, v, w);
    let zero = o.fc(0.0);
    let z = o.eq(u, zero);
    let nz = k(o, 0x8000_0000);
    let w = o.sel(z, nz, w);
    o.sel(finite, v, w)
}

#[cfg(test)]
mod tests;
