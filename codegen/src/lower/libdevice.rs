//! The libdevice functions of `triton.language.extra.libdevice` that PTX has no instruction for, emitted from
//! tessel's own routines at f64 precision (written over `FloatOps` in `tessel_math`, so the CPU model in the
//! tests runs the emitted sequence): `tanh`, `sinh`, `cosh`, `asinh`, `atanh` (`hyperbolic::own64`), `tan`,
//! `asin`, `acos`, `atan`, `atan2` (`trig::sincos64`, `trig::atan64`), `log1p`, `expm1`, `log10`, `exp10`
//! (`exp_log::own64`), `cbrt` (`roots::cbrt`), `round` (`remainder`). f32 (and f16/bf16, which compute in f32) arguments are widened to f64,
//! flushed first when subnormal (libdevice under Triton's FTZ setting), and the f64 result rounds once to f32.
//! Where `tessel_math` has libdevice's own sequence (f32 `tanh`, `exp10`, `log10`, `cbrt`; `acosh`,
//! `hypot` and `pow` at both widths), codegen emits that instead: `exp10`, `log10`, `cbrt` here serve f64 only.
//!
//! Accuracy, measured by the tests (`libdevice/tests.rs`) against the host's libm (glibc) on 40k–70k points
//! per function over its whole range, special values included: every f32 result is within 1 ulp of the
//! correctly rounded value (the tests found none off); in f64, `tanh`, `sinh` and `cosh` are within 3 ulp and
//! the others within 2 ulp (`log1p`, `log10`, `exp10`, `cbrt`, `asinh`, `atanh` measured at 1). CUDA
//! documents 1–3 ulp for libdevice's own versions, so results may differ from Triton's in the last bits.
//! `trunc`, `rint` and `round` are exact.

use super::Lower;
use super::fpops::{Emit, FloatOps};
use crate::ptx::{Reg, RegClass, f32_imm};
use tessel_math::exp_log::own64::{exp10, expm1, log1p, log10};
use tessel_math::hyperbolic::own64::{asinh, atanh, cosh, sinh, tanh};
use tessel_math::remainder::round;
use tessel_math::roots::cbrt::cbrt;
use tessel_math::trig::atan64::{acos, asin, atan, atan2};
use tessel_math::trig::sincos64::tan;
use tessel_tile::ops::UnOp;
use tessel_tile::types::ScalarType;

/// The routine of a libdevice unary op, at f64 precision; `None` for the other ops.
pub(crate) fn unary<T: FloatOps>(o: &mut T, op: UnOp, x: T::F) -> Option<T::F> {
    Some(match op {
        UnOp::Tanh => tanh(o, x),
        UnOp::Sinh => sinh(o, x),
        UnOp::Cosh => cosh(o, x),
        UnOp::Tan => tan(o, x),
        UnOp::Asin => asin(o, x),
        UnOp::Acos => acos(o, x),
        UnOp::Atan => atan(o, x),
        UnOp::Asinh => asinh(o, x),
        UnOp::Atanh => atanh(o, x),
        UnOp::Log1p => log1p(o, x),
        UnOp::Expm1 => expm1(o, x),
        UnOp::Log10 => log10(o, x),
        UnOp::Exp10 => exp10(o, x),
        UnOp::Cbrt => cbrt(o, x),
        UnOp::Trunc => o.trunc(x),
        UnOp::Rint => o.rni(x),
        UnOp::Round => round(o, x),
        _ => return None,
    })
}

/// Emits libdevice op `op` on `x` of type `s` (f32 computes in f64 after the FTZ flush; f64 directly); `None`
/// when `op` is not one of them.
pub(crate) fn emit_unary(l: &mut Lower, op: UnOp, s: ScalarType, x: Reg) -> Option<Reg> {
    let ours = matches!(
        op,
        UnOp::Tanh
            | UnOp::Sinh
            | UnOp::Cosh
            | UnOp::Tan
            | UnOp::Asin
            | UnOp::Acos
            | UnOp::Atan
            | UnOp::Asinh
            | UnOp::Atanh
            | UnOp::Log1p
            | UnOp::Expm1
            | UnOp::Log10
            | UnOp::Exp10
            | UnOp::Cbrt
            | UnOp::Trunc
            | UnOp::Rint
            | UnOp::Round
    );
    if !ours {
        return None;
    }
    Some(if s == ScalarType::F64 {
        unary(&mut Emit { l, wide: true }, op, x).expect("a libdevice op")
    } else {
        let w = widen_flushed(l, x);
        let r = unary(&mut Emit { l, wide: true }, op, w).expect("a libdevice op");
        narrow(l, r)
    })
}

/// Emits `atan2` of f32 or f64 registers.
pub(crate) fn emit_atan2(l: &mut Lower, s: ScalarType, a: Reg, b: Reg) -> Reg {
    if s == ScalarType::F64 {
        return atan2(&mut Emit { l, wide: true }, a, b);
    }
    let (a, b) = (widen_flushed(l, a), widen_flushed(l, b));
    let r = atan2(&mut Emit { l, wide: true }, a, b);
    narrow(l, r)
}

/// An f32 register flushed when subnormal (the only effect of `mul.rn.ftz` by 1) and widened to f64.
pub(crate) fn widen_flushed(l: &mut Lower, x: Reg) -> Reg {
    let f = l.b.reg(RegClass::F32);
    l.b.op("mul.rn.ftz.f32", f, (x, f32_imm(1.0)));
    let w = l.b.reg(RegClass::F64);
    l.b.op("cvt.f64.f32", w, f);
    w
}

/// The f64 result rounded to f32, a subnormal result flushed to ±0 as libdevice's f32 functions under
/// Triton's FTZ setting give it (`atan2f(2^-126, 2.5) = 0`, measured).
pub(crate) fn narrow(l: &mut Lower, r: Reg) -> Reg {
    let d = l.b.reg(RegClass::F32);
    l.b.op("cvt.rn.ftz.f32.f64", d, r);
    d
}

#[cfg(test)]
mod tests;
