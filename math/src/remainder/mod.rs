//! Integer parts and remainders of floats, written over [`FloatOps`]: tessel's own f64 `round` (half away from
//! zero), Triton's float `%` ([`frem`]) and libdevice's exact `fmod` ([`fmod`]).
//!
//! Float `%` as Triton computes it on NVIDIA GPUs, which is not C's exact `fmod`.
//!
//! Triton lowers `%` on floats to LLVM's `frem`, and LLVM's NVPTX backend expands `frem` (PTX has no float
//! remainder) to `x − trunc(x / y)·y`, marking the product and the difference contractible, so that they
//! become one fma, and selecting `x` itself when `|y| = ∞`:
//!
//! ```text
//! q = div.rn(x, y)          IEEE division (LLVM's f32 `fdiv` without fast-math flags), no flush-to-zero
//! t = cvt.rzi(q)            toward zero
//! r = fma.rn(−t, y, x)      one rounding
//! result = |y| = ∞ ? x : r
//! ```
//!
//! f16 and bf16 have no `frem` lowering of their own: LLVM promotes them to f32, runs the f32 sequence and
//! rounds the result once to the type. f64 runs the same sequence in f64.
//!
//! Consequences (all measured against Triton 3.6 on an H100, `conformance/RESULTS.md`): when `x / y` rounds
//! up to the next integer the result has the divisor's opposite sign (`1.0 % 0.1` is `−2^-26` in f32 and
//! `−2^-54` in f64); a zero result is +0 whatever the dividend's sign (`−1.0 % 1.0 = +0`); when `x / y`
//! overflows the result is ±inf (`bf16: 1.0 % 2^-133 = −inf`); once |x / y| reaches 2^24 (2^53 for f64) the
//! quotient is no longer an exact integer and the result is not a remainder at all. `y = 0`, `x = ±inf` and
//! NaNs give NaN. The interpreter (`tessel_tile::eval::arith::frem`) computes exactly this.

pub mod fmod;

use crate::FloatOps;
use crate::steps64::copysign;

/// Round to nearest, ties away from zero (C's `round`): trunc(x), one further from zero when the dropped
/// part (exact) is at least ½.
pub fn round<T: FloatOps>(o: &mut T, x: T::F) -> T::F {
    let t = o.trunc(x);
    let d = o.sub(x, t);
    let d = o.abs(d);
    let half = o.fc(0.5);
    let up = o.le(half, d);
    let one = o.fc(1.0);
    let s = copysign(o, one, x);
    let r = o.add(t, s);
    o.sel(up, r, t)
}

/// `x % y` by Triton's formula above, at the precision of `o` (f32 for f32/f16/bf16 operands, f64 for f64).
pub fn frem<T: FloatOps>(o: &mut T, x: T::F, y: T::F) -> T::F {
    let q = o.div(x, y);
    let t = o.trunc(q);
    let nt = o.neg(t);
    let r = o.fma(nt, y, x);
    let ay = o.abs(y);
    let inf = o.fc(f64::INFINITY);
    let y_inf = o.eq(ay, inf);
    o.sel(y_inf, x, r)
}
