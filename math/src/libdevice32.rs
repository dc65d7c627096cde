//! libdevice's f32 routines as Triton 3.6 runs them on NVIDIA GPUs (`__nv_logf`, `__nv_log2f`, `__nv_erff`,
//! `__nv_tanhf`, the sequences its PTX for sm_90 holds once libdevice is linked under `__CUDA_FTZ`), op for op:
//! the same reductions, polynomial coefficients, evaluation order, roundings and flushes, so that tessel's GPU
//! code gives Triton's bits. Branches become selects (both sides are computed; the selected one has the same
//! bits). The interpreter evaluates these same sequences with [`super::model::M32`], where the approximate
//! instructions (`ex2.approx.ftz`, `rcp.approx.ftz`) round the exact function instead of the hardware's
//! approximation: `logf` and `log2f` use none and are bit-exact; `erff` (above |x| ≈ 1.003) and `tanhf`
//! (above |x| = 0.6) can differ from the GPU by the hardware unit's error (measured by the tests against
//! float64: both stay within 2 ulp of the true function).

use super::FloatOps;

const SIGN: u64 = 0x8000_0000;

pub(super) fn k<T: FloatOps>(o: &mut T, bits: u32) -> T::F {
    o.fbits(bits as u64)
}

/// Horner's rule with `fma.rn.ftz`: ((c0·x + c1)·x + c2)... with `c` from the highest degree down.
pub(super) fn horner<T: FloatOps>(o: &mut T, x: T::F, c: &[u32]) -> T::F {
    let mut acc = k(o, c[0]);
    for &ci in &c[1..] {
        let ci = k(o, ci);
        acc = o.fma_ftz(acc, x, ci);
    }
    acc
}

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

/// |x| with the sign of `s` put back by bits: (s & sign) | bits(v), for v ≥ 0.
pub(super) fn with_sign<T: FloatOps>(o: &mut T, v: T::F, s: T::F) -> T::F {
    let sb = o.f_to_bits(s);
    let m = o.ic(SIGN);
    let sb = o.iand(sb, m);
    let vb = o.f_to_bits(v);
    let r = o.ior(sb, vb);
    o.bits_to_f(r)
}

/// `__nv_erff` (`tl.erf` on f32): an odd polynomial in x² below |x| = 1.00296, above it 1 − 2^p(|x|).
pub fn erff<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let split = k(o, 0x3f80_60fe);
    let big = o.le(split, a);
    let near = [0x38b1_e96a, 0xba57_4d20, 0x3baa_d5ea, 0xbcdc_1be7, 0x3de7_18af, 0xbec0_93ac, 0x3e03_75d3];
    let far = [0x3789_ca3c, 0xb9f5_60b9, 0x3bac_840b, 0xbd0c_8162, 0x3e1c_f906, 0x3f6a_937e, 0x3f20_d842];
    let sq = o.mul(x, x);
    let t = o.sel(big, a, sq);
    let mut acc = {
        let (n, f) = (k(o, near[0]), k(o, far[0]));
        o.sel(big, f, n)
    };
    for i in 1..7 {
        let (n, f) = (k(o, near[i]), k(o, far[i]));
        let c = o.sel(big, f, n);
        acc = o.fma_ftz(acc, t, c);
    }
    let nt = o.neg(t);
    let m = o.sel(big, nt, x);
    let r = o.fma_ftz(acc, m, m);
    let e = o.ex2_approx_ftz(r);
    let one = o.fc(1.0);
    let d = o.sub(one, e);
    let d = with_sign(o, d, x);
    // Below the split, or NaN (an unordered compare keeps the polynomial's NaN).
    o.sel(big, d, r)
}

/// `__nv_tanhf`: an odd polynomial below |x| = 0.6 (and for NaN), else 1 − 2/(2^(2|x|·log2 e) + 1) with the
/// approximate reciprocal, 1 from |x| = 9.01 on.
pub fn tanhf<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let a = o.abs_ftz(x);
    let split = k(o, 0x3f19_999a);
    let big = o.le(split, a);
    let sq = o.mul(x, x);
    let c = [0x3c80_f082, 0xbd56_3cae, 0x3e08_5941, 0xbeaa_a9ed, 0x0000_0000];
    let p = horner(o, sq, &c);
    let small = o.fma_ftz(p, x, x);
    let k2 = k(o, 0x4038_aa3b);
    let t = o.mul(a, k2);
    let e = o.ex2_approx_ftz(t);
    let one = o.fc(1.0);
    let d = o.add(e, one);
    let rc = o.rcp_approx_ftz(d);
    let m2 = o.fc(-2.0);
    let v = o.fma_ftz(rc, m2, one);
    let sat = k(o, 0x4110_2cb4);
    let is_one = o.le(sat, a);
    let v = o.sel(is_one, one, v);
    let v = with_sign(o, v, x);
    o.sel(big, v, small)
}

#[cfg(test)]
mod tests;
