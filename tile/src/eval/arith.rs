//! Elementwise semantics: what one lane of a binary, unary or comparison op computes for each element type.

use crate::eval::value::{Val, round_float, wrap_int};
use crate::ops::{BinOp, CmpPred, UnOp};
use crate::types::ScalarType;
use tessel_math::{approx, rounding};

/// Why an op has no value on an element type (the verifier admits the type, the semantics do not cover it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// The op means nothing on this type (`popc` of a float, `div_rn` of an int).
    NotDefined { op: &'static str, ty: ScalarType },
    /// The op is defined on f32 and f64 only.
    FloatOnly { op: &'static str, ty: ScalarType },
    /// Not implemented on this type yet.
    NotYet { op: &'static str, ty: ScalarType },
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::NotDefined { op, ty } => write!(f, "`{op}` is not defined on {ty}"),
            EvalError::FloatOnly { op, ty } => write!(f, "`{op}` is defined on f32 and f64 only, not {ty}"),
            EvalError::NotYet { op, ty } => write!(f, "`{op}` on {ty} is not supported yet"),
        }
    }
}

impl std::error::Error for EvalError {}

/// `a op b` for elements of type `t`.
pub fn binary(op: BinOp, propagate_nan: bool, t: ScalarType, a: Val, b: Val) -> Result<Val, EvalError> {
    if t.is_float() {
        let (x, y) = (a.as_f64(), b.as_f64());
        if let Some((arith, dir)) = op.directed() {
            if !matches!(t, ScalarType::F32 | ScalarType::F64) {
                return Err(EvalError::FloatOnly { op: op.word(), ty: t });
            }
            return Ok(Val::Float(rounding::libdevice(arith, dir, t.float_format(), x, y)));
        }
        // libdevice's own sequences (`routines`, tessel_math's), as the GPU code runs them; the half types in f32.
        if t == ScalarType::F64
            && let Some(r) = crate::eval::routines::binary_f64(&mut tessel_math::model::M64, op, x, y)
        {
            return Ok(Val::Float(r));
        }
        if matches!(t, ScalarType::F32 | ScalarType::F16 | ScalarType::BF16)
            && let Some(r) = crate::eval::routines::binary_f32(&mut tessel_math::model::M32, op, x as f32, y as f32)
        {
            return Ok(Val::Float(round_float(r as f64, t)));
        }
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div | BinOp::DivRn => x / y,
            BinOp::DivApprox => approx::div(x, y),
            BinOp::Rem => frem(t, x, y),
            BinOp::Max | BinOp::Min if propagate_nan && (x.is_nan() || y.is_nan()) => f64::NAN,
            BinOp::Max => fmax(x, y),
            BinOp::Min => fmin(x, y),
            BinOp::Atan2 => libm_result(t, via_f32(t, libm_input(t, x).atan2(libm_input(t, y)))),
            // C's fmod, exact (Rust's `%` on floats; narrower operands are exact in f64 and so is the result).
            BinOp::Fmod => libm_input(t, x) % libm_input(t, y),
            _ => return Err(EvalError::NotDefined { op: op.word(), ty: t }),
        };
        return Ok(Val::Float(round_float(r, t)));
    }
    let bits = t.bits();
    let unsigned = t.is_unsigned_int() || t == ScalarType::I1;
    let (x, y) = (a.as_i64(), b.as_i64());
    let ux = |v: i64| v as u64 & if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        // Division by zero does not trap on the GPU, and Triton computes every lane, masked-off ones included,
        // then discards what the mask disables; so it must not abort here either. Undefined in the language;
        // defined here as Triton's code gives it on NVIDIA (see `int_div_by_zero`).
        BinOp::Div | BinOp::Rem if y == 0 => int_div_by_zero(bits, ux(x)),
        BinOp::Div if unsigned => (ux(x) / ux(y)) as i64,
        BinOp::Div => x.wrapping_div(y),
        BinOp::Rem if unsigned => (ux(x) % ux(y)) as i64,
        BinOp::Rem => x.wrapping_rem(y),
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        // Shift amounts at or past the width give 0 (or the sign for arithmetic right shifts), as PTX clamps.
        BinOp::Shl => {
            if ux(y) >= bits as u64 {
                0
            } else {
                x << ux(y)
            }
        }
        BinOp::Shr if unsigned => {
            if ux(y) >= bits as u64 {
                0
            } else {
                (ux(x) >> ux(y)) as i64
            }
        }
        BinOp::Shr => x >> ux(y).min(63),
        BinOp::Max if unsigned => ux(x).max(ux(y)) as i64,
        BinOp::Min if unsigned => ux(x).min(ux(y)) as i64,
        BinOp::Max => x.max(y),
        BinOp::Min => x.min(y),
        BinOp::UMulHi => ((ux(x) as u128 * ux(y) as u128) >> bits) as i64,
        BinOp::MulHi if !unsigned => ((x as i128 * y as i128) >> bits) as i64,
        BinOp::MulHi => ((ux(x) as u128 * ux(y) as u128) >> bits) as i64,
        _ => {
            return Err(EvalError::NotDefined { op: op.word(), ty: t });
        }
    };
    Ok(Val::Int(wrap_int(r, t)))
}

pub fn unary(op: UnOp, t: ScalarType, a: Val) -> Result<Val, EvalError> {
    if t.is_int() {
        let x = a.as_i64();
        let r = match op {
            UnOp::Neg => x.wrapping_neg(),
            UnOp::Not if t == ScalarType::I1 => (x == 0) as i64,
            UnOp::Not => !x,
            UnOp::Abs => x.wrapping_abs(),
            UnOp::Popc | UnOp::Clz | UnOp::Brev => {
                let bits = t.bits();
                let u = x as u64 & if bits >= 64 { u64::MAX } else { (1 << bits) - 1 };
                match op {
                    UnOp::Popc => u.count_ones() as i64,
                    UnOp::Clz => (u.leading_zeros() - (64 - bits)) as i64,
                    _ => (u.reverse_bits() >> (64 - bits)) as i64,
                }
            }
            _ => return Err(EvalError::NotDefined { op: op.word(), ty: t }),
        };
        return Ok(Val::Int(wrap_int(r, t)));
    }
    if let Some(dir) = op.directed() {
        if !matches!(t, ScalarType::F32 | ScalarType::F64) {
            return Err(EvalError::FloatOnly { op: op.word(), ty: t });
        }
        return Ok(Val::Float(rounding::libdevice(rounding::Arith::Sqrt, dir, t.float_format(), a.as_f64(), 0.0)));
    }
    if matches!(t, ScalarType::F32 | ScalarType::F16 | ScalarType::BF16)
        && let Some(r) = crate::eval::routines::unary_f32(&mut tessel_math::model::M32, op, a.as_f64() as f32)
    {
        return Ok(Val::Float(round_float(r as f64, t)));
    }
    if t == ScalarType::F64
        && let Some(r) = crate::eval::routines::unary_f64(&mut tessel_math::model::M64, op, a.as_f64())
    {
        return Ok(Val::Float(r));
    }
    let x = ftz_input(op, t, a.as_f64());
    let r = match op {
        UnOp::Neg => -x,
        UnOp::Abs => x.abs(),
        UnOp::Exp if t != ScalarType::F64 => ex2_f32(x as f32 * std::f32::consts::LOG2_E, false),
        UnOp::Exp2 if t != ScalarType::F64 => ex2_f32(x as f32, true),
        UnOp::Exp => x.exp(),
        UnOp::Exp2 => x.exp2(),
        UnOp::Log => x.ln(),
        UnOp::Log2 => x.log2(),
        UnOp::Sqrt | UnOp::SqrtRn => x.sqrt(),
        UnOp::Rsqrt => 1.0 / x.sqrt(),
        // Correctly rounded; f16/bf16 compute in f32 on the GPU (as in Triton), so they round to f32 first.
        UnOp::Sin => via_f32(t, x.sin()),
        UnOp::Cos => via_f32(t, x.cos()),
        UnOp::Erf => tessel_math::host::erf(x),
        UnOp::Floor => x.floor(),
        UnOp::Ceil => x.ceil(),
        // The libdevice functions: correctly rounded (the host's f64 function, within an ulp of f64, rounded
        // once to f32 for the narrower types); the GPU's routines (`codegen/src/lower/libdevice.rs`) are
        // within the bounds stated there.
        UnOp::Tanh => libm_result(t, via_f32(t, x.tanh())),
        UnOp::Sinh => libm_result(t, via_f32(t, x.sinh())),
        UnOp::Cosh => libm_result(t, via_f32(t, x.cosh())),
        UnOp::Tan => libm_result(t, via_f32(t, x.tan())),
        UnOp::Asin => libm_result(t, via_f32(t, x.asin())),
        UnOp::Acos => libm_result(t, via_f32(t, x.acos())),
        UnOp::Atan => libm_result(t, via_f32(t, x.atan())),
        UnOp::Asinh => libm_result(t, via_f32(t, asinh(x))),
        UnOp::Acosh => libm_result(t, via_f32(t, acosh(x))),
        UnOp::Atanh => libm_result(t, via_f32(t, atanh(x))),
        UnOp::Log1p => libm_result(t, via_f32(t, x.ln_1p())),
        UnOp::Expm1 => libm_result(t, via_f32(t, x.exp_m1())),
        UnOp::Log10 => libm_result(t, via_f32(t, x.log10())),
        UnOp::Exp10 => libm_result(t, via_f32(t, 10f64.powf(x))),
        UnOp::Cbrt => libm_result(t, via_f32(t, x.cbrt())),
        UnOp::Lg2Approx => approx::lg2(x),
        UnOp::SinApprox => approx::sin_cos(x, false),
        UnOp::CosApprox => approx::sin_cos(x, true),
        UnOp::Saturate => approx::saturate(x),
        UnOp::Trunc => x.trunc(),
        UnOp::Rint => x.round_ties_even(),
        UnOp::Round => x.round(),
        // libdevice's own sequences only (`routines`, tessel_math's), at the widths it has them.
        UnOp::Sinpi
        | UnOp::Cospi
        | UnOp::Rcbrt
        | UnOp::Logb
        | UnOp::Erfinv
        | UnOp::Erfc
        | UnOp::RsqrtRnFtz
        | UnOp::Normcdf
        | UnOp::Erfcx
        | UnOp::Erfcinv
        | UnOp::Normcdfinv
        | UnOp::BesselI0
        | UnOp::BesselI1
        | UnOp::Tgamma
        | UnOp::Lgamma
        | UnOp::J0
        | UnOp::J1
        | UnOp::Y0
        | UnOp::Y1
        | UnOp::Rcp64h => {
            return Err(EvalError::NotYet { op: op.word(), ty: t });
        }
        UnOp::Not
        | UnOp::Popc
        | UnOp::Clz
        | UnOp::Brev
        | UnOp::SqrtRnFtz
        | UnOp::SqrtRz
        | UnOp::SqrtRd
        | UnOp::SqrtRu => {
            return Err(EvalError::NotDefined { op: op.word(), ty: t });
        }
    };
    Ok(Val::Float(round_float(r, t)))
}

/// `jn`/`yn` of an i32 order and an f32 or f64 value: libdevice's recurrences (`tessel_math::bessel::bessel_n`), the loop the
/// PTX runs.
pub fn bessel_n(kind: tessel_math::bessel::bessel_n::Kind, t: ScalarType, n: i64, x: f64) -> Result<f64, EvalError> {
    use tessel_math::bessel::bessel_n::{Kind, model32, model64};
    // The order is an i32 value.
    let n = n as i32;
    match t {
        ScalarType::F32 => Ok(model32(kind, n, x as f32) as f64),
        ScalarType::F64 => Ok(model64(kind, n, x)),
        _ => Err(EvalError::FloatOnly { op: if kind == Kind::J { "jn" } else { "yn" }, ty: t }),
    }
}

/// `norm`/`rnorm` of three or four f32 or f64 values: libdevice's sequences (`tessel_math::roots::norm`).
pub fn norm(t: ScalarType, xs: &[f64], recip: bool) -> Result<f64, EvalError> {
    use tessel_math::{model, roots::norm};
    match t {
        ScalarType::F32 => {
            let xs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
            Ok(norm::norm_f32(&mut model::M32, &xs, recip) as f64)
        }
        ScalarType::F64 => Ok(norm::norm_f64(&mut model::M64, xs, recip)),
        _ => Err(EvalError::FloatOnly { op: if recip { "rnorm" } else { "norm" }, ty: t }),
    }
}

/// `x / 0` and `x % 0` (both the same) for an integer of `bits` bits whose bits are `ux`, as Triton 3.6's code
/// computes them on NVIDIA GPUs (measured on an H100, `conformance/RESULTS.md`): PTX's `div`/`rem` by zero give
/// all ones (−1, or the type's largest unsigned value) for quotient and remainder alike; but LLVM's NVPTX
/// backend divides 64-bit integers through a 32-bit `div.u32`/`rem.u32` when both operands' high halves are
/// zero (its "bypass slow division"), so a 64-bit dividend in [0, 2^32) over 0 gives 0xFFFF_FFFF zero-extended
/// (4294967295), for signed and unsigned types alike.
pub fn int_div_by_zero(bits: u32, ux: u64) -> i64 {
    if bits == 64 && ux >> 32 == 0 { 0xffff_ffff } else { -1 }
}

/// Float `%` as Triton computes it on NVIDIA (LLVM's NVPTX expansion of `frem`, see
/// `codegen/src/lower/fmod.rs`): `x − trunc(x / y)·y` with an IEEE division and one fma, or `x` when
/// `|y| = ∞`; f16 and bf16 compute in f32 and round once. Not C's exact `fmod`: `1.0 % 0.1` is `−2^-26` in
/// f32, a zero result is +0, and a quotient that overflows gives ±inf.
pub fn frem(t: ScalarType, x: f64, y: f64) -> f64 {
    if t == ScalarType::F64 {
        let q = (x / y).trunc();
        return if y.is_infinite() { x } else { (-q).mul_add(y, x) };
    }
    let (x, y) = (x as f32, y as f32);
    let q = (x / y).trunc();
    (if y.is_infinite() { x } else { (-q).mul_add(y, x) }) as f64
}

/// `fma(x, y, z)` of type `t` with one rounding at the precision it computes in: f32 for f32 (and for f16/bf16,
/// rounded again to the type, as the GPU's `fma.rn.f32` and narrowing do), f64 for f64. An f64 fma rounded to
/// f32 afterwards would round twice (1 ulp off, measured against Triton).
pub fn fma(t: ScalarType, x: f64, y: f64, z: f64) -> f64 {
    if t == ScalarType::F64 {
        return x.mul_add(y, z);
    }
    round_float((x as f32).mul_add(y as f32, z as f32) as f64, t)
}

/// `max` of two non-NaN-propagating floats as PTX's `max.f32`/`max.f64` (and so Triton) computes it: a NaN
/// operand gives the other one, and −0 counts as less than +0.
fn fmax(x: f64, y: f64) -> f64 {
    if x == 0.0 && y == 0.0 { if x.is_sign_negative() { y } else { x } } else { x.max(y) }
}

/// `min` as PTX's `min.f32`: a NaN operand gives the other one, −0 counts as less than +0.
fn fmin(x: f64, y: f64) -> f64 {
    if x == 0.0 && y == 0.0 { if x.is_sign_negative() { x } else { y } } else { x.min(y) }
}

/// The model of `ex2.approx.f32` (with `.ftz` when `ftz`) that f32, f16 and bf16 `exp` and `exp2` use on the
/// GPU, as in Triton: `exp(x)` is `ex2.approx.f32(x·log2 e)` with the product rounded to f32 (Triton's
/// `ExpOpConversionApprox`), `exp2(x)` is libdevice's `exp2f`, which under Triton's FTZ setting is
/// `ex2.approx.ftz.f32` (a subnormal result is +0: `exp2(-139.3) = 0`, measured). This model rounds 2^y
/// correctly where the hardware unit approximates it; the two differ by the unit's own error only (the PTX ISA
/// gives `ex2.approx.f32` a maximum relative error of about 2^-22, i.e. ≤ 2 ulp; `conformance/RESULTS.md`
/// measures it), no longer by the argument's rounding, which for `exp` of large |x| is worth up to
/// |x·log2 e|·2^-24 relative (58 ulp over the conformance inputs before this model).
pub fn ex2_f32(y: f32, ftz: bool) -> f64 {
    let y = if ftz && y.is_subnormal() { 0.0 } else { y };
    let r = (y as f64).exp2() as f32;
    (if ftz && r.is_subnormal() { 0.0 } else { r }) as f64
}

/// A subnormal input read as ±0, for the ops the GPU runs with flush-to-zero on f32 (and on bf16, which
/// computes in f32 and whose subnormals are f32 subnormals): `sqrt` and `rsqrt` (`sqrt.approx.ftz`,
/// `rsqrt.approx.ftz`), and libdevice's `sinf`, `cosf`, `floorf`, `ceilf`, `erff` and the other libdevice
/// functions (`tanhf`, `atanf`, ...) under Triton's FTZ setting. See `README.md` in this directory for the
/// whole table.
pub fn ftz_input(op: UnOp, t: ScalarType, x: f64) -> f64 {
    let flushes = !matches!(op, UnOp::Neg | UnOp::Abs | UnOp::Not | UnOp::Exp | UnOp::Exp2 | UnOp::Log | UnOp::Log2)
        && op != UnOp::SqrtRn;
    if flushes && matches!(t, ScalarType::F32 | ScalarType::BF16) && (x as f32).is_subnormal() {
        0f64.copysign(x)
    } else {
        x
    }
}

/// asinh, acosh and atanh through libm's `log1p` without cancellation (Rust's own `f64::atanh` loses ~20 ulp
/// near −1, `f64::acosh` more near 1): within ~2 ulp.
pub fn asinh(x: f64) -> f64 {
    let a = x.abs();
    let r = if a > 268_435_456.0 {
        a.ln() + std::f64::consts::LN_2
    } else {
        (a + a * a / (1.0 + (1.0 + a * a).sqrt())).ln_1p()
    };
    r.copysign(x)
}

pub fn acosh(x: f64) -> f64 {
    if x > 268_435_456.0 {
        return x.ln() + std::f64::consts::LN_2;
    }
    let t = x - 1.0;
    (t + (t * (t + 2.0)).sqrt()).ln_1p()
}

pub fn atanh(x: f64) -> f64 {
    let a = x.abs();
    (0.5 * (2.0 * a / (1.0 - a)).ln_1p()).copysign(x)
}

/// An input of a libdevice function of type `t` as the GPU reads it: f32 (and bf16) subnormals flushed to ±0.
fn libm_input(t: ScalarType, x: f64) -> f64 {
    if matches!(t, ScalarType::F32 | ScalarType::BF16) && (x as f32).is_subnormal() { 0f64.copysign(x) } else { x }
}

/// A libdevice function's result as the GPU gives it for type `t`: an f32 (or bf16) subnormal flushed to ±0
/// (libdevice under Triton's FTZ setting; measured: `atan2f(2^-126, 2.5) = 0`).
fn libm_result(t: ScalarType, r: f64) -> f64 {
    if matches!(t, ScalarType::F32 | ScalarType::BF16) { rounding::flush_f32(r as f32 as f64) } else { r }
}

/// `r` rounded to f32 first when `t` is a half type (which the GPU computes in f32).
fn via_f32(t: ScalarType, r: f64) -> f64 {
    if matches!(t, ScalarType::F16 | ScalarType::BF16) { r as f32 as f64 } else { r }
}

pub fn compare(pred: CmpPred, t: ScalarType, a: Val, b: Val) -> Val {
    use std::cmp::Ordering;
    let ord = if t.is_float() {
        a.as_f64().partial_cmp(&b.as_f64())
    } else if t.is_unsigned_int() {
        let m = if t.bits() >= 64 { u64::MAX } else { (1u64 << t.bits()) - 1 };
        Some((a.as_i64() as u64 & m).cmp(&(b.as_i64() as u64 & m)))
    } else {
        Some(a.as_i64().cmp(&b.as_i64()))
    };
    let r = match (pred, ord) {
        (CmpPred::Ne, None) => true,
        (_, None) => false,
        (CmpPred::Eq, Some(o)) => o == Ordering::Equal,
        (CmpPred::Ne, Some(o)) => o != Ordering::Equal,
        (CmpPred::Lt, Some(o)) => o == Ordering::Less,
        (CmpPred::Le, Some(o)) => o != Ordering::Greater,
        (CmpPred::Gt, Some(o)) => o == Ordering::Greater,
        (CmpPred::Ge, Some(o)) => o != Ordering::Less,
    };
    Val::Int(r as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_semantics_follow_c_and_ptx() {
        let i = |v| Val::Int(v);
        let t = ScalarType::I32;
        assert_eq!(binary(BinOp::Div, false, t, i(-7), i(2)), Ok(i(-3)));
        assert_eq!(binary(BinOp::Rem, false, t, i(-7), i(2)), Ok(i(-1)));
        assert_eq!(binary(BinOp::Shr, false, t, i(-8), i(1)), Ok(i(-4)));
        assert_eq!(binary(BinOp::Shr, false, ScalarType::U32, i(0xffff_fff8), i(1)), Ok(i(0x7fff_fffc)));
        assert_eq!(binary(BinOp::Shl, false, t, i(1), i(40)), Ok(i(0)));
        assert_eq!(binary(BinOp::UMulHi, false, ScalarType::U32, i(0xffff_ffff), i(2)), Ok(i(1)));
        assert_eq!(binary(BinOp::Add, false, t, i(i32::MAX as i64), i(1)), Ok(i(i32::MIN as i64)));
        // By zero: all ones for quotient and remainder alike (Triton on an H100: i32 `0 % 0` is −1)...
        for t in [ScalarType::I8, ScalarType::I32, ScalarType::U32, ScalarType::I64, ScalarType::U64] {
            let ones = Ok(i(wrap_int(-1, t)));
            assert_eq!(binary(BinOp::Div, false, t, i(wrap_int(-7, t)), i(0)), ones, "{t}");
            assert_eq!(binary(BinOp::Rem, false, t, i(wrap_int(-7, t)), i(0)), ones, "{t}");
            assert_eq!(binary(BinOp::Rem, false, t, i(wrap_int(1 << 40, t)), i(0)), ones, "{t}");
        }
        // ...except a 64-bit dividend in [0, 2^32), which LLVM divides with div.u32/rem.u32: 4294967295 (Triton on
        // an H100: i64 and u64 `0 // 0` and `0 % 0`).
        for t in [ScalarType::I64, ScalarType::U64] {
            for x in [0, 7, 0xffff_ffff] {
                assert_eq!(binary(BinOp::Div, false, t, i(x), i(0)), Ok(i(0xffff_ffff)), "{t} {x}");
                assert_eq!(binary(BinOp::Rem, false, t, i(x), i(0)), Ok(i(0xffff_ffff)), "{t} {x}");
            }
        }
        assert_eq!(binary(BinOp::Rem, false, ScalarType::U32, i(5), i(0)), Ok(i(0xffff_ffff)));
        assert_eq!(binary(BinOp::Div, false, t, i(i32::MIN as i64), i(-1)), Ok(i(i32::MIN as i64)));
    }

    #[test]
    fn float_results_round_to_their_type() {
        let f = |v| Val::Float(v);
        // 2048 + 1 is not representable in f16: ties to even gives 2048.
        assert_eq!(binary(BinOp::Add, false, ScalarType::F16, f(2048.0), f(1.0)), Ok(f(2048.0)));
        assert_eq!(
            binary(BinOp::Max, true, ScalarType::F32, f(f64::NAN), f(1.0)).map(|v| v.as_f64().is_nan()),
            Ok(true)
        );
        assert_eq!(binary(BinOp::Max, false, ScalarType::F32, f(f64::NAN), f(1.0)), Ok(f(1.0)));
        assert_eq!(compare(CmpPred::Ne, ScalarType::F32, f(f64::NAN), f(f64::NAN)), Val::Int(1));
    }

    /// The FTZ ops see a subnormal f32 as ±0, the others keep it (see README.md).
    #[test]
    fn flush_to_zero_follows_the_gpu_instructions() {
        let f = |v| Val::Float(v);
        let un = |op, t, x: f64| unary(op, t, f(x)).unwrap().as_f64();
        let tiny = f32::from_bits(1) as f64; // 1e-45
        assert_eq!(un(UnOp::Ceil, ScalarType::F32, tiny), 0.0);
        assert_eq!(un(UnOp::Floor, ScalarType::F32, -tiny).to_bits(), (-0.0f64).to_bits());
        assert_eq!(un(UnOp::Sqrt, ScalarType::F32, tiny), 0.0);
        assert_eq!(un(UnOp::Rsqrt, ScalarType::F32, tiny), f64::INFINITY);
        assert_eq!(un(UnOp::Sin, ScalarType::F32, -tiny).to_bits(), (-0.0f64).to_bits());
        assert_eq!(un(UnOp::Erf, ScalarType::F32, tiny), 0.0);
        assert_eq!(un(UnOp::Cos, ScalarType::F32, tiny), 1.0);
        // Not flushed: sqrt_rn (sqrt.rn keeps subnormals), f64, and the ops without .ftz.
        assert_eq!(un(UnOp::SqrtRn, ScalarType::F32, tiny), (tiny.sqrt() as f32) as f64);
        assert_eq!(un(UnOp::Ceil, ScalarType::F64, 1e-310), 1.0);
        assert_eq!(un(UnOp::Abs, ScalarType::F32, -tiny), tiny);
        assert_eq!(un(UnOp::Sin, ScalarType::F32, 3e9), (3e9f64).sin() as f32 as f64);
    }

    /// Float `%` is Triton's expansion of `frem`, not C's `fmod`: equal to fmod on ordinary operands (the sign of
    /// the dividend, unlike Python's floats), different where the quotient rounds or overflows.
    #[test]
    fn float_remainder_follows_tritons_frem() {
        let f = |v| Val::Float(v);
        let rem = |t, x, y| binary(BinOp::Rem, false, t, f(x), f(y)).unwrap().as_f64();
        assert_eq!(rem(ScalarType::F32, 1.0, -2.5), 1.0);
        assert_eq!(rem(ScalarType::F32, -1.0, 2.5), -1.0);
        assert_eq!(rem(ScalarType::F16, 7.5, 2.0), 1.5);
        // A zero result is +0 (fmod: −0), and 1 % 0.1f rounds its quotient up to 10 (fmod: 0.0999...).
        assert_eq!(rem(ScalarType::F32, -5.0, 2.5).to_bits(), 0);
        assert_eq!((rem(ScalarType::F32, 1.0, 0.1f32 as f64) as f32).to_bits(), 0xb280_0000);
        assert_eq!(rem(ScalarType::F64, 1.0, 0.1).to_bits(), 0xbc90_0000_0000_0000);
        // The quotient overflows f32 (bf16 computes in f32): −inf.
        assert_eq!(rem(ScalarType::BF16, 1.0, 2f64.powi(-133)), f64::NEG_INFINITY);
        assert_eq!(rem(ScalarType::F32, 2.0, f64::INFINITY), 2.0);
        assert!(rem(ScalarType::F32, f64::INFINITY, 2.0).is_nan() && rem(ScalarType::F64, 1.0, 0.0).is_nan());
    }

    /// Where IEEE leaves a choice, the GPU's instructions (and Triton's measured results) decide: max/min order
    /// −0 below +0; f32 fma rounds once in f32; NaN to u64 is 2^63.
    #[test]
    fn signed_zeros_fma_and_nan_casts_follow_the_gpu() {
        let f = |v| Val::Float(v);
        let bits = |op, x: f64, y: f64| binary(op, false, ScalarType::F32, f(x), f(y)).unwrap().as_f64().to_bits();
        for (x, y) in [(-0.0, 0.0), (0.0, -0.0)] {
            assert_eq!(bits(BinOp::Max, x, y), 0, "max({x}, {y})");
            assert_eq!(bits(BinOp::Min, x, y), (-0.0f64).to_bits(), "min({x}, {y})");
        }
        assert_eq!(bits(BinOp::Max, -0.0, -0.0), (-0.0f64).to_bits());
        assert_eq!(bits(BinOp::Min, 0.0, 0.0), 0);
        // Triton's fma(x, y, x) for x = 2.5, y = 0x7149f2ca: one f32 rounding gives 0x71fc6f7d (an f64 fma rounded
        // again to f32 gives 0x71fc6f7c).
        let (x, y) = (2.5f32 as f64, f32::from_bits(0x7149_f2ca) as f64);
        assert_eq!((fma(ScalarType::F32, x, y, x) as f32).to_bits(), 0x71fc_6f7d);
        use crate::types::Elem;
        let nan =
            crate::eval::value::convert(f(f64::NAN), Elem::Scalar(ScalarType::F32), Elem::Scalar(ScalarType::U64));
        assert_eq!(nan.as_i64() as u64, 1 << 63);
    }

    /// `exp` and `exp2` on f32 follow the GPU's argument reduction (x·log2 e rounded to f32) and flushes (`exp2`
    /// is `.ftz`), leaving only the hardware unit's own error.
    #[test]
    fn exp_models_ex2_approx() {
        let un = |op, t, x: f64| unary(op, t, Val::Float(x)).unwrap().as_f64();
        // Triton's exp2(-139.27) is 0 (ex2.approx.ftz); f64 keeps the subnormal-free exact value.
        let x = f32::from_bits(0xc30b_46a8) as f64;
        assert_eq!(un(UnOp::Exp2, ScalarType::F32, x), 0.0);
        assert!(un(UnOp::Exp2, ScalarType::F64, x) > 0.0);
        // exp(88) computes 2^(88·log2e rounded to f32): not the correctly rounded e^88.
        let y = 88f32 * std::f32::consts::LOG2_E;
        assert_eq!(un(UnOp::Exp, ScalarType::F32, 88.0), (y as f64).exp2() as f32 as f64);
        assert_ne!(un(UnOp::Exp, ScalarType::F32, 88.0), 88f64.exp() as f32 as f64);
        // exp keeps subnormal results (no .ftz): e^-100 ≈ 3.7e-44.
        assert!(un(UnOp::Exp, ScalarType::F32, -100.0) > 0.0);
        assert_eq!(un(UnOp::Exp, ScalarType::F16, 0.0), 1.0);
    }
}
