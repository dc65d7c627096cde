//! libdevice's f32 `logf` and `log2f` (`__nv_logf`, `__nv_log2f`, `tl.log` and `tl.log2` on f32) as Triton 3.6
//! runs them (the sequences its PTX for sm_90 holds under `__CUDA_FTZ`), op for op: one shared reduction, the
//! same polynomial coefficients, evaluation order, roundings and flushes. They use no approximate instruction,
//! so the CPU model gives the GPU's bits. The interpreter evaluates them with [`crate::model::M32`].

use crate::FloatOps;
use crate::steps32::{horner, k};

/// The shared reduction of `logf` and `log2f`: a subnormal x scaled by 2^23 (its exponent corrected by −23),
/// then x = 2^e·m with m in [c, 2c) around 1 (`c` the bits of the lower end), as (x', e as f32, m − 1).
fn log_reduce<T: FloatOps>(o: &mut T, x: T::F, c: u32) -> (T::F, T::F, T::F) {
    let tiny = k(o, 0x0080_0000);
    let p = o.lt(x, tiny);
    let scale = k(o, 0x4b00_0000);
    let xs = o.mul(x, scale);
    let x1 = o.sel(p, xs, x);
    let (m23, zero) = (o.fc(-23.0), o.fc(0.0));
    let e0 = o.sel(p, m23, zero);
    let b = o.f_to_bits(x1);
    let off = o.ic((c as u64).wrapping_neg() & 0xffff_ffff);
    let t = o.iadd(b, off);
    let mask = o.ic(0xff80_0000);
    let eb = o.iand(t, mask);
    let mb = o.isub(b, eb);
    let ef = o.i2f(eb);
    let ulp = k(o, 0x3400_0000);
    let e = o.fma_ftz(ef, ulp, e0);
    let m = o.bits_to_f(mb);
    let m1 = o.fc(-1.0);
    let r = o.add(m, m1);
    (x1, e, r)
}

/// The special cases of `logf`/`log2f`: x' at or past +inf (and negative numbers, whose bits are above
/// +inf's) give x'·inf + inf (inf, or NaN), zero gives −inf.
fn log_specials<T: FloatOps>(o: &mut T, x1: T::F, r: T::F) -> T::F {
    let b = o.f_to_bits(x1);
    let infb = o.ic(0x7f80_0000);
    let finite = o.ult(b, infb);
    let inf = k(o, 0x7f80_0000);
    let s = o.fma_ftz(x1, inf, inf);
    let r = o.sel(finite, r, s);
    let zero = o.fc(0.0);
    let z = o.eq(x1, zero);
    let ninf = k(o, 0xff80_0000);
    o.sel(z, ninf, r)
}

/// `__nv_logf` (`tl.log` on f32).
pub fn logf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (x1, e, r) = log_reduce(o, x, 0x3f2a_aaab);
    let c = [
        0xbe05_5027,
        0x3e10_39f6,
        0xbdf8_cdcc,
        0x3e0f_2955,
        0xbe2a_d8b9,
        0x3e4c_ed0b,
        0xbe7f_ff22,
        0x3eaa_aa78,
        0xbf00_0000,
    ];
    let p = horner(o, r, &c);
    let q = o.mul(r, p);
    let q = o.fma_ftz(q, r, r);
    let ln2 = k(o, 0x3f31_7218);
    let v = o.fma_ftz(e, ln2, q);
    log_specials(o, x1, v)
}

/// `__nv_log2f` (`tl.log2` on f32).
pub fn log2f<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let (x1, e, r) = log_reduce(o, x, 0x3f35_04f3);
    let c = [
        0x3dc6_b27f,
        0xbe2c_7f30,
        0x3e2f_cf2a,
        0xbe37_4e43,
        0x3e52_0bf4,
        0xbe76_3c8b,
        0x3e93_bf99,
        0xbeb8_aa49,
        0x3ef6_384a,
        0xbf38_aa3b,
    ];
    let p = horner(o, r, &c);
    let q = o.mul(r, p);
    let q = o.mul(r, q);
    let log2e = k(o, 0x3fb8_aa3b);
    let q = o.fma_ftz(r, log2e, q);
    let v = o.add(e, q);
    log_specials(o, x1, v)
}

#[cfg(test)]
mod tests;
