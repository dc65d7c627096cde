//! Which libdevice sequence of the math routines (`crate::libm`) computes each op, where Triton's libdevice code
//! is reproduced op for op: the interpreter and folding run it on the CPU model ([`tessel_math::model`]), codegen
//! emits it as PTX, both through these tables.

use crate::ops::{BinOp, UnOp};
use tessel_math::{FloatOps, bessel, erf, exp_log, gamma, hyperbolic, roots, trig};

/// The f64 routine of `op` that reproduces Triton's libdevice code op for op, where there is one.
pub fn unary_f64<T: FloatOps>(o: &mut T, op: UnOp, x: T::F) -> Option<T::F> {
    Some(match op {
        UnOp::Erf => erf::erf64::erf(o, x),
        UnOp::Acosh => hyperbolic::acosh64::acosh(o, x),
        UnOp::Sinpi => trig::sinpi64::sinpi(o, x),
        UnOp::Cospi => trig::sinpi64::cospi(o, x),
        UnOp::Logb => exp_log::logb::logb(o, x),
        UnOp::Rcp64h => o.rcp_approx_ftz(x),
        UnOp::Rcbrt => roots::cbrt::rcbrt(o, x),
        UnOp::Erfc => erf::erfc64::erfc(o, x),
        UnOp::Normcdf => erf::erfc64::normcdf(o, x),
        UnOp::Erfinv => erf::erfinv64::erfinv(o, x),
        UnOp::Erfcinv => erf::erfcinv64::erfcinv(o, x),
        UnOp::Erfcx => erf::erfc64::erfcx(o, x),
        UnOp::BesselI0 => bessel::bessel_i64::i0(o, x),
        UnOp::BesselI1 => bessel::bessel_i64::i1(o, x),
        UnOp::Lgamma => gamma::gamma64::lgamma(o, x),
        UnOp::Tgamma => gamma::gamma64::tgamma(o, x),
        UnOp::Normcdfinv => erf::erfcinv64::normcdfinv(o, x),
        UnOp::J0 => bessel::bessel_j64::j0(o, x),
        UnOp::J1 => bessel::bessel_j64::j1(o, x),
        UnOp::Y0 => bessel::bessel_j64::y0(o, x),
        UnOp::Y1 => bessel::bessel_j64::y1(o, x),
        _ => return None,
    })
}

/// The f64 routine of the binary `op` that reproduces Triton's libdevice code op for op, where there is one.
pub fn binary_f64<T: FloatOps>(o: &mut T, op: BinOp, x: T::F, y: T::F) -> Option<T::F> {
    Some(match op {
        BinOp::Hypot => roots::hypot::hypot(o, x, y),
        BinOp::Pow => exp_log::pow64::pow(o, x, y),
        BinOp::Rhypot => roots::hypot::rhypot(o, x, y),
        _ => return None,
    })
}

/// The f32 routine of the binary `op` that reproduces Triton's libdevice code op for op, where there is one
/// (f16 and bf16 compute in f32 and round the result).
pub fn binary_f32<T: FloatOps>(o: &mut T, op: BinOp, x: T::F, y: T::F) -> Option<T::F> {
    Some(match op {
        BinOp::Hypot => roots::hypot::hypotf(o, x, y),
        BinOp::Pow => exp_log::pow32::powf(o, x, y),
        BinOp::Rhypot => roots::hypot::rhypotf(o, x, y),
        _ => return None,
    })
}

/// The f32 routine of `op` that reproduces Triton's libdevice code op for op, where there is one (f16 and
/// bf16 compute in f32 and round the result). Both the interpreter and codegen go through here.
pub fn unary_f32<T: FloatOps>(o: &mut T, op: UnOp, x: T::F) -> Option<T::F> {
    Some(match op {
        UnOp::Log => exp_log::log32::logf(o, x),
        UnOp::Log2 => exp_log::log32::log2f(o, x),
        UnOp::Erf => erf::erf32::erff(o, x),
        UnOp::Tanh => hyperbolic::tanh32::tanhf(o, x),
        UnOp::Sin => trig::sincos32::sinf(o, x, false),
        UnOp::Cos => trig::sincos32::sinf(o, x, true),
        UnOp::Exp10 => exp_log::explog32::exp10f(o, x),
        UnOp::Log10 => exp_log::explog32::log10f(o, x),
        UnOp::Acosh => hyperbolic::acosh32::acoshf(o, x),
        UnOp::Cbrt => roots::cbrt::cbrtf(o, x),
        UnOp::Sinpi => trig::sinpi32::sinpif(o, x),
        UnOp::Cospi => trig::sinpi32::cospif(o, x),
        UnOp::Rcbrt => roots::cbrt::rcbrtf(o, x),
        UnOp::Logb => exp_log::logb::logbf(o, x),
        UnOp::Erfinv => erf::erfinv32::erfinvf(o, x),
        UnOp::Erfc => erf::erfc32::erfcf(o, x),
        UnOp::Normcdf => erf::erfc32::normcdff(o, x),
        UnOp::RsqrtRnFtz => roots::rsqrt::rsqrt_rnf(o, x),
        UnOp::Erfcx => erf::inverf32::erfcxf(o, x),
        UnOp::Erfcinv => erf::inverf32::erfcinvf(o, x),
        UnOp::Normcdfinv => erf::inverf32::normcdfinvf(o, x),
        UnOp::BesselI0 => bessel::bessel_i32::i0f(o, x),
        UnOp::BesselI1 => bessel::bessel_i32::i1f(o, x),
        UnOp::Tgamma => gamma::gamma32::tgammaf(o, x),
        UnOp::Lgamma => gamma::gamma32::lgammaf(o, x),
        UnOp::J0 => bessel::bessel_j32::j0f(o, x),
        UnOp::J1 => bessel::bessel_j32::j1f(o, x),
        UnOp::Y0 => bessel::bessel_j32::y0f(o, x),
        UnOp::Y1 => bessel::bessel_j32::y1f(o, x),
        _ => return None,
    })
}
