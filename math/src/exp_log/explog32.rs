//! libdevice's f32 `exp10f` and `log10f` as Triton 3.6 runs them (`__nv_exp10f`, `__nv_log10f` in the PTX Triton
//! gives for sm_90 under `__CUDA_FTZ`), op for op; branches become selects. `exp10f` goes through
//! `ex2.approx.ftz`, so the CPU model can differ from the GPU in the last bit there; `log10f` uses no
//! approximate instruction and is bit-exact.

use crate::FloatOps;
use crate::exp_log::log32::logf;
use crate::steps32::k;

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
pub(crate) fn exp_split<T: FloatOps>(o: &mut T, x: T::F, [c, hi, lo]: [u32; 3]) -> (T::F, T::F) {
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

#[cfg(test)]
mod tests;
