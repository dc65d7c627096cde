//! libdevice's `norm3d`, `norm4d`, `rnorm3d`, `rnorm4d` (f32 `__nv_norm3df`... and f64 `__nv_norm3d`...) as
//! Triton 3.6 runs them (their PTX for sm_90), op for op: the magnitudes sorted by min/max, all scaled by a
//! power of two near the largest's reciprocal (so the sum of squares neither overflows nor underflows), the
//! root or reciprocal root, and the scale put back. The f32 forms use `sqrt.approx.ftz`/`rsqrt.approx.ftz`,
//! which the CPU model rounds correctly (so it can differ from the GPU in the last bit); the f64 forms refine
//! `rsqrt.approx.ftz.f64` by one Newton step.

use crate::FloatOps;

/// The magnitudes' sum in libdevice's order (it is the result only where at most one is nonzero, or for NaN),
/// and the scaled values sorted: (sum, [smaller ones..., largest]) as `min`/`max` leave them.
fn sorted<T: FloatOps>(o: &mut T, xs: &[T::F], ftz: bool) -> (T::F, Vec<T::F>) {
    let a: Vec<T::F> = xs.iter().map(|&x| if ftz { o.abs_ftz(x) } else { o.abs(x) }).collect();
    let s = o.add(a[0], a[1]);
    let sum = match (a.len(), ftz) {
        // f32 norm4d adds the fourth before the third.
        (4, true) => {
            let s = o.add(s, a[3]);
            o.add(a[2], s)
        }
        _ => a[2..].iter().fold(s, |s, &v| o.add(s, v)),
    };
    let mut small = Vec::new();
    let mut big = a[0];
    for &v in &a[1..] {
        small.push(o.fmin(big, v));
        big = o.fmax(big, v);
    }
    small.push(big);
    (sum, small)
}

/// Σ (v·k)² from the smaller values (the latest first) to the largest, as libdevice orders its fmas.
fn sum_sq<T: FloatOps>(o: &mut T, v: &[T::F], k: T::F, ftz: bool) -> T::F {
    let scaled: Vec<T::F> = v.iter().map(|&x| o.mul(x, k)).collect();
    let n = scaled.len();
    let mut acc = o.mul(scaled[n - 2], scaled[n - 2]);
    for i in (0..n - 2).rev().chain([n - 1]) {
        acc = if ftz { o.fma_ftz(scaled[i], scaled[i], acc) } else { o.fma(scaled[i], scaled[i], acc) };
    }
    acc
}

/// f32: the largest's exponent rounded down to even, k = its reciprocal power of two (bits ⊕ 0x7e800000),
/// √Σ(v·k)² (`sqrt.approx.ftz`) times 2^e (the bits with 0x00800000 or'd in), or 1/√Σ (`rsqrt.approx.ftz`)
/// times k. Where the sum of magnitudes is not above the largest (one nonzero value, all zero) or NaN, the
/// sum itself (`norm`) or 1/sum's limits (`rnorm`: NaN stays, 0 gives inf); an infinite value gives inf (0
/// for `rnorm`).
pub fn norm_f32<T: FloatOps>(o: &mut T, xs: &[T::F], recip: bool) -> T::F {
    let (sum, v) = sorted(o, xs, true);
    let big = v[v.len() - 1];
    let bb = o.f_to_bits(big);
    let m = o.ic(0xfe00_0000);
    let eb = o.iand(bb, m);
    let flip = o.ic(0x7e80_0000);
    let kb = o.ixor(eb, flip);
    let k = o.bits_to_f(kb);
    let s = sum_sq(o, &v, k, true);
    let inf = o.fbits(0x7f80_0000);
    let is_inf = o.eq(big, inf);
    if recip {
        let r = o.rsqrt_approx_ftz(s);
        let r = o.mul(r, k);
        let a = o.abs_ftz(sum);
        let nan = o.is_nan(a);
        let r = o.sel(nan, sum, r);
        let zero = o.fc(0.0);
        o.sel(is_inf, zero, r)
    } else {
        let r = o.sqrt_approx_ftz(s);
        let one = o.ic(0x0080_0000);
        let ub = o.ior(eb, one);
        let u = o.bits_to_f(ub);
        let r = o.mul(r, u);
        let gt = o.lt(big, sum);
        let r = o.sel(gt, r, sum);
        o.sel(is_inf, inf, r)
    }
}

/// f64: as the f32 forms with the exponent's high word masked by 0xffc00000 (k = ⊕ 0x7fd00000, 2^e by or'ing
/// 0x00100000); y ≈ 1/√Σ from `rsqrt.approx.ftz.f64` and one Newton step y + y·e·(1/2 + 3e/8),
/// e = 1 − Σ·y² (for `norm` of Σ clamped to the largest finite double), √Σ = Σ·y. `norm`: where the largest's
/// high word is that of inf or NaN, the largest; `rnorm`: a sum of magnitudes not above 0 gives sum + inf
/// (inf for 0, NaN for NaN), an infinite largest gives 0.
pub fn norm_f64<T: FloatOps>(o: &mut T, xs: &[T::F], recip: bool) -> T::F {
    let (sum, v) = sorted(o, xs, false);
    let big = v[v.len() - 1];
    let bb = o.f_to_bits(big);
    let m = o.ic(0xffc0_0000_0000_0000);
    let eb = o.iand(bb, m);
    let flip = o.ic(0x7fd0_0000_0000_0000);
    let kb = o.ixor(eb, flip);
    let k = o.bits_to_f(kb);
    let s = sum_sq(o, &v, k, false);
    let sc = if recip {
        s
    } else {
        let max = o.fbits(0x7fef_ffff_ffff_ffff);
        o.fmin(s, max)
    };
    let y = o.rsqrt_approx_ftz(sc);
    let y2 = o.mul(y, y);
    let ny2 = o.neg(y2);
    let one = o.fc(1.0);
    let e = o.fma(sc, ny2, one);
    let (h, c) = (o.fc(0.5), o.fc(0.375));
    let p = o.fma(c, e, h);
    let ye = o.mul(e, y);
    let y = o.fma(p, ye, y);
    if recip {
        let r = o.mul(k, y);
        let zero = o.fc(0.0);
        let pos = o.lt(zero, sum);
        let inf = o.fbits(0x7ff0_0000_0000_0000);
        let lim = o.add(sum, inf);
        let r = o.sel(pos, r, lim);
        let is_inf = o.eq(big, inf);
        o.sel(is_inf, zero, r)
    } else {
        let r = o.mul(s, y);
        let one = o.ic(0x0010_0000_0000_0000);
        let ub = o.ior(eb, one);
        let u = o.bits_to_f(ub);
        let r = o.mul(u, r);
        let gt = o.lt(big, sum);
        let r = o.sel(gt, r, sum);
        let hi = o.shr(bb, 32);
        let lim = o.ic(0x7ff0_0000);
        let finite = o.ult(hi, lim);
        o.sel(finite, r, big)
    }
}

#[cfg(test)]
mod tests;
