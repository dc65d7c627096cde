//! tessel-math owns the math the compiler and the interpreter share, knowing nothing of the IR: routines written
//! once over [`FloatOps`], a sequence of typed float/int/predicate operations at one precision, grouped by the
//! function they compute ([`exp_log`], [`trig`], [`hyperbolic`], [`erf`], [`roots`], [`gamma`], [`bessel`]); the
//! CPU model of those operations ([`model`]); the GPU's arithmetic modelled exactly where an op's semantics
//! needs it ([`rounding`]: rounding directions, [`approx`]: the approximate units); the host references the
//! tests measure against ([`host`]); and the one test random-number generator ([`testing`]).
//!
//! Codegen implements [`FloatOps`] by emitting PTX (`codegen/src/lower/fpops.rs`), [`model`] by computing the
//! same operations on the CPU with the same roundings, so a routine's PTX and its CPU evaluation (the
//! interpreter's semantics for the op, and the tests' model) are the same sequence, instruction for instruction.
//! Most routines are libdevice's own sequences as Triton 3.6 runs them, op for op (each module says which);
//! `tessel_tile::eval::routines` says which computes which op.
//!
//! A routine whose trip count depends on its operands (`bessel_n`'s recurrences) is written in parts, a set-up,
//! one step and a finish: the model loops over the step, codegen emits the loop (a warp loops while any lane
//! needs a step, and a lane that needs none keeps its state through the step's selects), so each lane still runs
//! exactly the same operations.
//!
//! Every plain float op is correctly rounded to nearest even and keeps subnormals (`add.rn`, `fma.rn`...); the
//! `_ftz` forms are libdevice's, which Triton compiles with `__CUDA_FTZ`. Integers have the width of the float
//! (32 or 64 bits) and wrap.
//!
//! The tests' reference tables of the special functions (erfc..., the Bessel and gamma functions) are mpmath's
//! values at 200 bits, rounded once to f64; `mpmath_refs.py` recomputes any row.

pub mod approx;
pub mod bessel;
pub mod erf;
pub mod exp_log;
pub mod fp8;
pub mod gamma;
pub mod host;
pub mod hyperbolic;
pub mod model;
pub mod remainder;
pub mod roots;
pub mod rounding;
mod steps32;
mod steps64;
pub mod testing;
#[cfg(test)]
mod testutil;
pub mod trig;

use rounding::{Arith, Dir};

/// A sequence of float/int/predicate operations at one precision (32 or 64 bits).
pub trait FloatOps {
    /// A float, an integer of the same width, a predicate.
    type F: Copy;
    type I: Copy;
    type P: Copy;

    /// `v` rounded to the precision.
    fn fc(&mut self, v: f64) -> Self::F;
    /// A float from its bits.
    fn fbits(&mut self, bits: u64) -> Self::F;
    fn ic(&mut self, v: u64) -> Self::I;
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// Correctly rounded square root (`sqrt.rn`).
    fn sqrt(&mut self, a: Self::F) -> Self::F;
    /// `a * b + c` with one rounding.
    fn fma(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn neg(&mut self, a: Self::F) -> Self::F;
    fn abs(&mut self, a: Self::F) -> Self::F;
    /// Round to the nearest integer, ties to even (`cvt.rni`).
    fn rni(&mut self, a: Self::F) -> Self::F;
    /// Round toward zero to an integer (`cvt.rzi`).
    fn trunc(&mut self, a: Self::F) -> Self::F;
    /// An integral float as a signed integer (saturating; NaN gives 0).
    fn f2i(&mut self, a: Self::F) -> Self::I;
    /// A signed integer as a float (rounded).
    fn i2f(&mut self, a: Self::I) -> Self::F;
    /// An unsigned integer as a float (rounded: `cvt.rn.f32.u32`, `cvt.rn.f64.u64`).
    fn u2f(&mut self, a: Self::I) -> Self::F;
    fn f_to_bits(&mut self, a: Self::F) -> Self::I;
    fn bits_to_f(&mut self, a: Self::I) -> Self::F;
    fn iadd(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn isub(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn iand(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn ior(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn shl(&mut self, a: Self::I, n: u32) -> Self::I;
    /// Logical shift right.
    fn shr(&mut self, a: Self::I, n: u32) -> Self::I;
    /// Arithmetic shift right.
    fn sar(&mut self, a: Self::I, n: u32) -> Self::I;
    /// Shift left by a variable amount (amounts at or past the width give 0, as PTX clamps).
    fn shl_v(&mut self, a: Self::I, n: Self::I) -> Self::I;
    /// Logical shift right by a variable amount (amounts at or past the width give 0).
    fn shr_v(&mut self, a: Self::I, n: Self::I) -> Self::I;
    /// Unsigned remainder (`b` nonzero).
    fn urem(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Unsigned high half of the double-width product.
    fn umulhi(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Wrapping (low half) product.
    fn imul(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Signed `a < b`.
    fn slt(&mut self, a: Self::I, b: Self::I) -> Self::P;
    /// Unsigned `a < b`.
    fn ult(&mut self, a: Self::I, b: Self::I) -> Self::P;
    fn umin(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Ordered comparisons (false when either side is NaN).
    fn lt(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn le(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn eq(&mut self, a: Self::F, b: Self::F) -> Self::P;
    /// `a != b` or either is NaN.
    fn ne(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn is_nan(&mut self, a: Self::F) -> Self::P;
    fn sel(&mut self, p: Self::P, a: Self::F, b: Self::F) -> Self::F;
    fn isel(&mut self, p: Self::P, a: Self::I, b: Self::I) -> Self::I;
    fn and(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn or(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn not(&mut self, a: Self::P) -> Self::P;

    /// libdevice's flushing and approximate forms (Triton compiles libdevice with `__CUDA_FTZ`). At 64 bits
    /// they are the plain operations (f64 has no `.ftz`). `fma.rn.ftz`:
    fn fma_ftz(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    /// `fma.rm.ftz`: rounded down.
    fn fma_rm_ftz(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    /// `cvt.ftz.sat`: clamped to [0, 1] (NaN gives 0).
    fn sat_ftz(&mut self, a: Self::F) -> Self::F;
    /// `ex2.approx.ftz`, `lg2.approx.ftz`, `rcp.approx.ftz`: the hardware's approximations. The CPU model
    /// rounds the exact function correctly, so it can differ from the GPU in the last bits (the PTX ISA bounds
    /// `ex2.approx` to 2 ulp, `lg2.approx` to 2^-22.6 absolute for arguments near 1, `rcp.approx` to 1 ulp).
    fn ex2_approx_ftz(&mut self, a: Self::F) -> Self::F;
    fn lg2_approx_ftz(&mut self, a: Self::F) -> Self::F;
    fn rcp_approx_ftz(&mut self, a: Self::F) -> Self::F;
    /// `abs.ftz`: |a|, a subnormal giving +0.
    fn abs_ftz(&mut self, a: Self::F) -> Self::F;
    /// `mul.rn.ftz`.
    fn mul_ftz(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn ixor(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// The one f64 step of libdevice's f32 argument reduction (32-bit only): the signed 64-bit integer
    /// `hi:lo` converted to f64 (`cvt.rn.f64.s64`), times the f64 with bits `scale` (`mul.f64`), rounded to f32
    /// (`cvt.rn.f32.f64`).
    fn s64_scaled_to_f32(&mut self, hi: Self::I, lo: Self::I, scale: u64) -> Self::F;
    /// The f32 steps of libdevice's f64 `erf` (64-bit only): `cvt.rn.f32.f64` of `a`, `mul.f32` by the f32
    /// with bits `k`, `cvt.rni.f32.f32`, widened back (`cvt.f64.f32`).
    fn f32_rni_scaled(&mut self, a: Self::F, k: u32) -> Self::F;
    /// `ex2.approx.ftz.f32` of an integral f64 `n` (exact: a power of two, 0 below 2^-126), widened back.
    fn ex2_f32_widened(&mut self, n: Self::F) -> Self::F;
    /// `add`/`sub`/`mul` rounded in direction `dir`, with `.ftz` at 32 bits (`mul.rz.ftz.f32`, `add.rn.ftz.f32`;
    /// the plain directed form at 64 bits).
    fn arith_ftz(&mut self, op: Arith, dir: Dir, a: Self::F, b: Self::F) -> Self::F;
    /// `sqrt.approx.ftz.f32` (32-bit only) and `rsqrt.approx.ftz` (both widths): the hardware's approximations,
    /// which the CPU model rounds correctly (the PTX ISA bounds both to about 1 ulp at f32).
    fn sqrt_approx_ftz(&mut self, a: Self::F) -> Self::F;
    fn rsqrt_approx_ftz(&mut self, a: Self::F) -> Self::F;
    /// Signed and unsigned integer minimum and maximum (`min.s32`, `max.u64`...).
    fn smin(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn smax(&mut self, a: Self::I, b: Self::I) -> Self::I;
    fn umax(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// Leading zero bits of the integer, at its width (`clz.b32`; 64 at 64 bits for 0).
    fn clz(&mut self, a: Self::I) -> Self::I;
    /// Integer equality (`setp.eq.b32`).
    fn ieq(&mut self, a: Self::I, b: Self::I) -> Self::P;
    /// `min.f32`/`min.f64`: the smaller, or the other operand when one is NaN.
    fn fmin(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `max.f32`/`max.f64`: the larger, or the other operand when one is NaN.
    fn fmax(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// The f32 steps of libdevice's f64 `rcbrt` (64-bit only): `cvt.rn.f32.f64` of `a`, `lg2.approx.ftz.f32`,
    /// `mul.f32` by the f32 with bits `k`, `ex2.approx.ftz.f32`, widened back (`cvt.f64.f32`): 2^(k·log2 a).
    fn f32_exp2_scaled_log2(&mut self, a: Self::F, k: u32) -> Self::F;
    /// `div.approx.ftz.f32` (32-bit only): a·(1/b) from the approximate reciprocal, 0 for |b| > 2^126 (the CPU
    /// model is the interpreter's, [`approx::div`]).
    fn div_approx_ftz(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `rsqrt.approx.f64` (64-bit only): as `rsqrt_approx_ftz` but keeping subnormal operands.
    fn rsqrt_approx(&mut self, a: Self::F) -> Self::F;
    /// `cvt.rmi.ftz.f32.f32` / `cvt.rmi.f64.f64`: rounded down to an integer (a subnormal f32 read as ±0).
    fn floor_ftz(&mut self, a: Self::F) -> Self::F;
    /// The f32 magnitude test of libdevice's f64 `jn` (64-bit only): `cvt.rn.f32.f64` of `a`, `abs.ftz.f32`,
    /// widened back (`cvt.f64.f32`).
    fn abs_as_f32(&mut self, a: Self::F) -> Self::F;
}
