//! libdevice's `fmod` (`__nv_fmodf`/`__nv_fmod`): C's exact `fmod` (the result has the sign of the dividend
//! and |result| < |divisor|). Triton's `%` on floats is not this (see [`super::frem`]); only
//! `libdevice.fmod` reaches it. The remainder of two floats is always exactly representable, so the result is
//! exact; PTX has no `rem` on floats.
//!
//! Method (exact integer long division, as musl's `fmod`): every operand is widened to f64 (exact) and split as
//! |v| = M·2^E with an integer mantissa M < 2^p (p = 53 for f64 operands; 24 for f32, whose mantissas fit in
//! 24 bits). Then x mod y = 2^Ey·((Mx·2^(Ex−Ey)) mod My), and the power of two is brought in `S = 64 − p` bits
//! at a time: r ← Mx mod My, then while the exponent gap g > 0, r ← (r·2^min(g,S)) mod My (`rem.u64`;
//! r·2^S < 2^64 because r < My < 2^p). The result r·2^Ey is an integer below 2^53 times a power of two; it is
//! formed with two exact scalings (the second rounds nothing: the true remainder is representable). Gaps are
//! small for ordinary operands (one `rem.u64`); the worst f32 case (1e38 mod 1e-38) takes 5 steps and the worst
//! f64 case 191. Special cases: y = 0, x = ±inf or a NaN give NaN; |x| < |y| (including x = ±0 and y = ±inf)
//! gives x; a zero remainder keeps x's sign. f32 subnormal operands are flushed first (libdevice under
//! Triton's FTZ setting).
//!
//! The routine is written over [`FloatOps`] in three parts (set-up, one loop step, finish) so that the CPU model
//! runs exactly the instruction sequence the PTX loop executes.

use crate::FloatOps;

/// The loop state: the partial remainder, the divisor's mantissa, the exponent gap still to bring in.
pub struct State<I, F> {
    pub r: I,
    pub my: I,
    pub gap: I,
    /// The divisor's exponent (for the finish), and the operands (for the special cases).
    ey: I,
    x: F,
    y: F,
}

const MANT: u64 = (1 << 52) - 1;

/// (M, E) with |v| = M·2^E, M < 2^p: f64 normals take the implicit bit, subnormals (f64 operands only) have
/// E = −1074; for p < 53 the mantissa drops its (zero) low 53 − p bits.
fn split<T: FloatOps>(o: &mut T, v: T::F, p: u32) -> (T::I, T::I) {
    let b = o.f_to_bits(v);
    let mask = o.ic(MANT);
    let man = o.iand(b, mask);
    let field = o.shr(b, 52);
    let m7ff = o.ic(0x7ff);
    let field = o.iand(field, m7ff);
    let one = o.ic(1);
    let sub = o.ult(field, one);
    let implicit = o.ic(1 << 52);
    let full = o.ior(man, implicit);
    let m = o.isel(sub, man, full);
    let m = o.shr(m, 53 - p);
    // A subnormal's exponent field reads as 1.
    let f = o.isel(sub, one, field);
    let bias = o.ic((1075 - (53 - p)) as u64);
    let e = o.isub(f, bias);
    (m, e)
}

/// Splits the operands and takes the first remainder.
pub fn setup<T: FloatOps>(o: &mut T, x: T::F, y: T::F, p: u32) -> State<T::I, T::F> {
    let (ax, ay) = (o.abs(x), o.abs(y));
    let (mx, ex) = split(o, ax, p);
    let (my, ey) = split(o, ay, p);
    // A zero or non-finite divisor would divide by zero: use 1 (the result is replaced by a special case).
    let one = o.ic(1);
    let bad = o.ult(my, one);
    let my = o.isel(bad, one, my);
    let r = o.urem(mx, my);
    let gap = o.isub(ex, ey);
    // No steps when the result is a special case (x = ±inf, y = 0, a NaN).
    let (zero, inf) = (o.fc(0.0), o.fc(f64::INFINITY));
    let xfin = o.lt(ax, inf);
    let ynz = o.lt(zero, ay);
    let ok = o.and(xfin, ynz);
    let izero = o.ic(0);
    let gap = o.isel(ok, gap, izero);
    State { r, my, gap, ey, x, y }
}

/// Whether another step is needed: the gap is positive.
pub fn more<T: FloatOps>(o: &mut T, s: &State<T::I, T::F>) -> T::P {
    let zero = o.ic(0);
    o.slt(zero, s.gap)
}

/// One step: brings in up to `64 − p` bits of the exponent gap.
pub fn step<T: FloatOps>(o: &mut T, s: &State<T::I, T::F>, p: u32) -> (T::I, T::I) {
    let most = o.ic((64 - p) as u64);
    let k = o.umin(s.gap, most);
    let shifted = o.shl_v(s.r, k);
    let r = o.urem(shifted, s.my);
    let gap = o.isub(s.gap, k);
    (r, gap)
}

/// r·2^Ey with x's sign, and the special cases.
pub fn finish<T: FloatOps>(o: &mut T, s: &State<T::I, T::F>) -> T::F {
    let rf = o.i2f(s.r);
    // Two exact scalings by 2^h and 2^(Ey − h), h = Ey/2: both normal powers of two for Ey in [−1074, 971].
    let h = o.sar(s.ey, 1);
    let rest = o.isub(s.ey, h);
    let mut v = rf;
    for k in [h, rest] {
        let bias = o.ic(1023);
        let e = o.iadd(k, bias);
        let e = o.shl(e, 52);
        let pw = o.bits_to_f(e);
        v = o.mul(v, pw);
    }
    // The sign of x (also on a zero remainder).
    let xb = o.f_to_bits(s.x);
    let sign_mask = o.ic(1 << 63);
    let sign = o.iand(xb, sign_mask);
    let vb = o.f_to_bits(v);
    let vb = o.ior(vb, sign);
    let v = o.bits_to_f(vb);
    let (ax, ay) = (o.abs(s.x), o.abs(s.y));
    // |x| < |y| (x = ±0, y = ±inf, or simply smaller): x itself.
    let small = o.lt(ax, ay);
    let v = o.sel(small, s.x, v);
    // y = 0, x = ±inf, or a NaN: NaN.
    let zero = o.fc(0.0);
    let inf = o.fc(f64::INFINITY);
    let y0 = o.eq(ay, zero);
    let xinf = o.eq(ax, inf);
    let xn = o.is_nan(s.x);
    let yn = o.is_nan(s.y);
    let bad = o.or(y0, xinf);
    let bad = o.or(bad, xn);
    let bad = o.or(bad, yn);
    let nan = o.fc(f64::NAN);
    o.sel(bad, nan, v)
}

/// The CPU model of the loop codegen emits (`codegen/src/lower/cfmod.rs`): the same steps in the same loop (one lane; the extra zero-bit steps a warp
/// makes for its other lanes leave a lane unchanged).
pub fn model(x: f64, y: f64, p: u32) -> f64 {
    use crate::model::M64;
    let o = &mut M64;
    let mut s = setup(o, x, y, p);
    while more(o, &s) {
        (s.r, s.gap) = step(o, &s, p);
    }
    finish(o, &s)
}
