//! libdevice's `hypotf`, `hypot`, `rhypotf`, `rhypot` as Triton 3.6 runs them (`__nv_hypotf`, `__nv_hypot`,
//! `__nv_rhypotf`, `__nv_rhypot` in its PTX for sm_90, f32 under `__CUDA_FTZ`), op for op; branches become
//! selects. Each goes through an approximate instruction (`sqrt.approx.ftz.f32`, `rsqrt.approx.ftz`,
//! `rcp.approx.ftz`), so the CPU model can differ from the GPU in the last bit; the GPU code is the same sequence.

use crate::FloatOps;
use crate::steps32::k;

/// `hypotf`'s and `rhypotf`'s common start: m = max(|x|, |y|) and n = min (`abs.ftz`, compared as integers),
/// e the exponent bits of m rounded down to even, s the power of two that brings that exponent near 1, and
/// (m·s)² + (n·s)².
struct ScaledSum<T: FloatOps> {
    n: T::F,
    m: T::F,
    e: T::I,
    s: T::F,
    sum: T::F,
}

fn scaled_sum_f32<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> ScaledSum<T> {
    let (a, b) = (o.abs_ftz(x), o.abs_ftz(y));
    let (ab, bb) = (o.f_to_bits(a), o.f_to_bits(b));
    let nb = o.smin(bb, ab);
    let mb = o.smax(bb, ab);
    let mask = o.ic(0xfe00_0000);
    let e = o.iand(mb, mask);
    let flip = o.ic(0x7e80_0000);
    let sb = o.ixor(e, flip);
    let (n, m, s) = (o.bits_to_f(nb), o.bits_to_f(mb), o.bits_to_f(sb));
    let ns = o.mul(n, s);
    let ms = o.mul(m, s);
    let n2 = o.mul(ns, ns);
    let sum = o.fma_ftz(ms, ms, n2);
    ScaledSum { n, m, e, s, sum }
}

/// `__nv_hypotf`: with m = max(|x|, |y|) and n = min (compared as integers), both scaled by the power of two
/// that brings m's exponent (rounded down to even) near 1, √(m² + n²) by the approximate square root, scaled
/// back; n = 0 gives m, n = inf gives inf.
pub fn hypotf<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> T::F {
    let ScaledSum { n, m, e, sum, .. } = scaled_sum_f32(o, x, y);
    let r = o.sqrt_approx_ftz(sum);
    let hidden = o.ic(0x0080_0000);
    let bb = o.ior(e, hidden);
    let back = o.bits_to_f(bb);
    let v = o.mul(r, back);
    let zero = o.fc(0.0);
    let z = o.eq(n, zero);
    let v = o.sel(z, m, v);
    let inf = k(o, 0x7f80_0000);
    let i = o.eq(n, inf);
    o.sel(i, inf, v)
}

/// `__nv_hypot`: as `hypotf` with m, n ordered as unsigned integers and the scale taken from m's exponent
/// (rounded down to a multiple of 4); the square root as s·(1/√s) with 1/√s from `rsqrt.approx.ftz.f64` and one
/// correction step (s clamped to the largest double first); n = 0 gives m; n NaN or inf (its bits at or past
/// +inf's) gives n.
pub fn hypot<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> T::F {
    let (a, b) = (o.abs(x), o.abs(y));
    let (ab, bb) = (o.f_to_bits(a), o.f_to_bits(b));
    let nb = o.umin(bb, ab);
    let mb = o.umax(bb, ab);
    let mask = o.ic(0xffc0_0000_0000_0000);
    let e = o.iand(mb, mask);
    let flip = o.ic(0x7fd0_0000_0000_0000);
    let sb = o.ixor(e, flip);
    let (n, m, s) = (o.bits_to_f(nb), o.bits_to_f(mb), o.bits_to_f(sb));
    let ns = o.mul(s, n);
    let ms = o.mul(s, m);
    let n2 = o.mul(ns, ns);
    let sum = o.fma(ms, ms, n2);
    let big = o.fbits(0x7fef_ffff_ffff_ffff);
    let c = o.fmin(sum, big);
    let y0 = o.rsqrt_approx_ftz(c);
    let y2 = o.mul(y0, y0);
    let ny2 = o.neg(y2);
    let one = o.fc(1.0);
    let h = o.fma(c, ny2, one);
    let (half, k38) = (o.fc(0.5), o.fc(0.375));
    let p = o.fma(k38, h, half);
    let hy = o.mul(h, y0);
    let y1 = o.fma(p, hy, y0);
    let r = o.mul(sum, y1);
    let hidden = o.ic(0x0010_0000_0000_0000);
    let bb = o.ior(e, hidden);
    let back = o.bits_to_f(bb);
    let v = o.mul(back, r);
    let zero = o.fc(0.0);
    let z = o.eq(n, zero);
    let v = o.sel(z, m, v);
    let inf_b = o.ic(0x7ff0_0000_0000_0000);
    let finite = o.ult(nb, inf_b);
    o.sel(finite, v, n)
}

/// `__nv_rhypotf`: 1/√(x² + y²) as `hypotf`'s scaled sum under `rsqrt.approx.ftz`, times the scale; 0 when
/// the smaller magnitude (by bits) is inf.
pub fn rhypotf<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> T::F {
    let ScaledSum { n, s, sum, .. } = scaled_sum_f32(o, x, y);
    let r = o.rsqrt_approx_ftz(sum);
    let v = o.mul(r, s);
    let inf = k(o, 0x7f80_0000);
    let i = o.eq(n, inf);
    let zero = o.fc(0.0);
    o.sel(i, zero, v)
}

/// `__nv_rhypot`: `hypot`'s scaled sum, 1/√ from `rsqrt.approx.ftz.f64` and one correction step, times the
/// scale; a result at or past +inf's bits (a zero or subnormal sum, inf, NaN) is replaced: n = inf gives 0, a
/// NaN m gives m + n, else inf (m finite) or 0 (m = inf).
pub fn rhypot<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> T::F {
    let (a, b) = (o.abs(x), o.abs(y));
    let (ab, bb) = (o.f_to_bits(a), o.f_to_bits(b));
    let nb = o.umin(bb, ab);
    let mb = o.umax(bb, ab);
    let mask = o.ic(0xffc0_0000_0000_0000);
    let e = o.iand(mb, mask);
    let flip = o.ic(0x7fd0_0000_0000_0000);
    let sb = o.ixor(e, flip);
    let (n, m, s) = (o.bits_to_f(nb), o.bits_to_f(mb), o.bits_to_f(sb));
    let ns = o.mul(s, n);
    let ms = o.mul(s, m);
    let n2 = o.mul(ns, ns);
    let sum = o.fma(ms, ms, n2);
    let y0 = o.rsqrt_approx_ftz(sum);
    let y2 = o.mul(y0, y0);
    let ny2 = o.neg(y2);
    let one = o.fc(1.0);
    let h = o.fma(sum, ny2, one);
    let (half, k38) = (o.fc(0.5), o.fc(0.375));
    let p = o.fma(k38, h, half);
    let hy = o.mul(h, y0);
    let y1 = o.fma(p, hy, y0);
    let v = o.mul(s, y1);
    let vb = o.f_to_bits(v);
    let inf_b = o.ic(0x7ff0_0000_0000_0000);
    let ordinary = o.ult(vb, inf_b);
    let mnan = o.is_nan(m);
    let mn = o.add(m, n);
    let inf = o.fbits(0x7ff0_0000_0000_0000);
    let m_inf = o.eq(m, inf);
    let zero = o.fc(0.0);
    let r = o.sel(m_inf, zero, inf);
    let r = o.sel(mnan, mn, r);
    let n_inf = o.eq(n, inf);
    let r = o.sel(n_inf, zero, r);
    o.sel(ordinary, v, r)
}

#[cfg(test)]
mod tests;
