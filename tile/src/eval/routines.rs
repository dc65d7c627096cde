//! Which libdevice sequence of the math routines (`crate::libm`) computes each op, where Triton's libdevice code
//! is reproduced op for op: the interpreter and folding run it on the CPU model ([`tessel_math::model`]), codegen
//! emits it as PTX, both through these tables.

use crate::ops::{BinOp, UnOp};
use tessel_math::*;

/// The f64 routine of `op` that reproduces Triton's libdevice code op for op, where there is one.
pub fn unary_f64<T: FloatOps>(o: &mut T, op: UnOp, x: T::F) -> Option<T::F> {
    Some(match op {
        UnOp::Erf => erf64::erf(o, x),
        UnOp::Acosh => acosh64::acosh(o, x),
        UnOp::Sinpi => sinpi64::sinpi(o, x),
        UnOp::Cospi => sinpi64::cospi(o, x),
        UnOp::Logb => logb64::logb(o, x),
        UnOp::Rcp64h => o.rcp_approx_ftz(x),
        UnOp::Rcbrt => erfc64::rcbrt(o, x),
        UnOp::Erfc => erfc64::erfc(o, x),
        UnOp::Normcdf => erfc64::normcdf(o, x),
        UnOp::Erfinv => erfinv64::erfinv(o, x),
        UnOp::Erfcinv => erfcinv64::erfcinv(o, x),
        UnOp::Erfcx => erfc64::erfcx(o, x),
        UnOp::BesselI0 => bessel_i64::i0(o, x),
        UnOp::BesselI1 => bessel_i64::i1(o, x),
        UnOp::Lgamma => gamma64::lgamma(o, x),
        UnOp::Tgamma => gamma64::tgamma(o, x),
        UnOp::Normcdfinv => erfcinv64::normcdfinv(o, x),
        UnOp::J0 => bessel_j64::j0(o, x),
        UnOp::J1 => bessel_j64::j1(o, x),
        UnOp::Y0 => bessel_j64::y0(o, x),
        UnOp::Y1 => bessel_j64::y1(o, x),
        _ => return None,
    })
}

/// The f64 routine of the binary `op` that reproduces Triton's libdevice code op for op, where there is one.
pub fn binary_f64<T: FloatOps>(o: &mut T, op: BinOp, x: T::F, y: T::F) -> Option<T::F> {
    Some(match op {
        BinOp::Hypot => roots::hypot(o, x, y),
        BinOp::Pow => pow64::pow(o, x, y),
        BinOp::Rhypot => roots::rhypot(o, x, y),
        _ => return None,
    })
}

/// The f32 routine of the binary `op` that reproduces Triton's libdevice code op for op, where there is one
/// (f16 and bf16 compute in f32 and round the result).
pub fn binary_f32<T: FloatOps>(o: &mut T, op: BinOp, x: T::F, y: T::F) -> Option<T::F> {
    Some(match op {
        BinOp::Hypot => roots::hypotf(o, x, y),
        BinOp::Pow => pow32::powf(o, x, y),
        BinOp::Rhypot => roots::rhypotf(o, x, y),
        _ => return None,
    })
}

/// The f32 routine of `op` that reproduces Triton's libdevice code op for op, where there is one (f16 and
/// bf16 compute in f32 and round the result). Both the interpreter and codegen go through here.
pub fn unary_f32<T: FloatOps>(o: &mut T, op: UnOp, x: T::F) -> Option<T::F> {
    Some(match op {
        UnOp::Log => libdevice32::logf(o, x),
        UnOp::Log2 => libdevice32::log2f(o, x),
        UnOp::Erf => libdevice32::erff(o, x),
        UnOp::Tanh => libdevice32::tanhf(o, x),
        UnOp::Sin => trig32::sinf(o, x, false),
        UnOp::Cos => trig32::sinf(o, x, true),
        UnOp::Exp10 => explog32::exp10f(o, x),
        UnOp::Log10 => explog32::log10f(o, x),
        UnOp::Acosh => explog32::acoshf(o, x),
        UnOp::Cbrt => roots::cbrtf(o, x),
        UnOp::Sinpi => special32::sinpif(o, x),
        UnOp::Cospi => special32::cospif(o, x),
        UnOp::Rcbrt => special32::rcbrtf(o, x),
        UnOp::Logb => special32::logbf(o, x),
        UnOp::Erfinv => special32::erfinvf(o, x),
        UnOp::Erfc => special32::erfcf(o, x),
        UnOp::Normcdf => special32::normcdff(o, x),
        UnOp::RsqrtRnFtz => special32::rsqrt_rnf(o, x),
        UnOp::Erfcx => inverf32::erfcxf(o, x),
        UnOp::Erfcinv => inverf32::erfcinvf(o, x),
        UnOp::Normcdfinv => inverf32::normcdfinvf(o, x),
        UnOp::BesselI0 => bessel_i32::i0f(o, x),
        UnOp::BesselI1 => bessel_i32::i1f(o, x),
        UnOp::Tgamma => gamma32::tgammaf(o, x),
        UnOp::Lgamma => gamma32::lgammaf(o, x),
        UnOp::J0 => bessel_j32::j0f(o, x),
        UnOp::J1 => bessel_j32::j1f(o, x),
        UnOp::Y0 => bessel_j32::y0f(o, x),
        UnOp::Y1 => bessel_j32::y1f(o, x),
        _ => return None,
    })
}
