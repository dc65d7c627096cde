//! Value conversions (`cast`) between every pair of element types, rounding to nearest even, float → int
//! truncating toward zero and saturating (NaN → 0), int → int wrapping, as the interpreter's `convert` does.
//!
//! Register forms: i8/u8 live in 16-bit registers sign- or zero-extended (so 16-bit instructions compute on
//! them and a result is brought back to 8 bits with [`canon8`]); fp8 values live in the low byte of a 16-bit
//! register. Every float conversion rounds once: f16/bf16/fp8 widen to f32 exactly, and a narrowing from f64
//! to bf16 or fp8 goes through f32 *rounded to odd* (truncate, then set the last bit if inexact), which makes
//! the second rounding exact ("round to odd" needs 2 more bits than the target, and f32 has 16 more than
//! bf16). Integer → bf16 goes the same way (a 32/64-bit integer is not exact in f32).
//!
//! fp8: sm_90a and later use `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` and `cvt.rn.f16x2.{e4m3,e5m2}x2`; sm_80 has
//! neither and uses the software conversions of `tessel_math::fp8` (exact, unit-tested against the interpreter). Both
//! saturate infinities to ±max, as `.satfinite` does (and so does the interpreter's conversion).

use tessel_tile::ops::Const;
use tessel_tile::types::{Elem, ScalarType};

use super::fpops::Emit;
use super::{Lower, class_of};
use crate::CompileError;
use tessel_math::fp8::{E4M3, E5M2, Fp8, f32_to_fp8, fp8_to_f32};
use tessel_tile::Target;

use crate::ptx::{Reg, RegClass, f32_imm, vector};

use ScalarType::*;

pub(crate) fn is_fp8(s: ScalarType) -> bool {
    matches!(s, F8E4M3 | F8E5M2)
}

fn is_int8(s: ScalarType) -> bool {
    matches!(s, I8 | U8)
}

/// The PTX integer type a register of `s` is operated on as (8-bit ints as their 16-bit extension).
pub(crate) fn int_ty(s: ScalarType) -> &'static str {
    match s {
        I8 | I16 => "s16",
        U8 | U16 => "u16",
        I32 => "s32",
        U32 => "u32",
        I64 => "s64",
        U64 => "u64",
        _ => unreachable!("int_ty of {s}"),
    }
}

fn fp8_format(s: ScalarType) -> (Fp8, &'static str) {
    match s {
        F8E4M3 => (E4M3, "e4m3x2"),
        _ => (E5M2, "e5m2x2"),
    }
}

/// Brings a 16-bit register back to the canonical form of the 8-bit integer type `s` (sign- or zero-extended
/// low byte); other types are returned as they are.
pub(crate) fn canon8(l: &mut Lower, x: Reg, s: ScalarType) -> Reg {
    if !is_int8(s) {
        return x;
    }
    let d = l.b.reg(RegClass::B16);
    if s == I8 {
        l.b.op("cvt.s16.s8", d, x);
    } else {
        l.b.op("and.b16", d, (x, 255));
    }
    d
}

/// The f32 value of the fp8 `x` (exact).
pub(crate) fn fp8_to_f32_reg(l: &mut Lower, x: Reg, s: ScalarType) -> Reg {
    let (fmt, name) = fp8_format(s);
    if l.arch == Target::Sm80 {
        let w = l.b.reg(RegClass::B32);
        l.b.op("cvt.u32.u16", w, x);
        return fp8_to_f32(&mut Emit { l, wide: false }, w, fmt);
    }
    let (w, lo, hi, d) =
        (l.b.reg(RegClass::B32), l.b.reg(RegClass::B16), l.b.reg(RegClass::B16), l.b.reg(RegClass::F32));
    l.b.op(format!("cvt.rn.f16x2.{name}"), w, x);
    l.b.op("mov.b32", vector(&[lo, hi]), w);
    l.b.op("cvt.f32.f16", d, lo);
    d
}

/// The fp8 `s` nearest to the f32 `x` (ties to even, saturating).
pub(crate) fn f32_to_fp8_reg(l: &mut Lower, x: Reg, s: ScalarType) -> Reg {
    let (fmt, name) = fp8_format(s);
    let d = l.b.reg(RegClass::B16);
    if l.arch == Target::Sm80 {
        let c = f32_to_fp8(&mut Emit { l, wide: false }, x, fmt);
        l.b.op("cvt.u16.u32", d, c);
        return d;
    }
    // The first source goes to the upper byte: 0.0 there leaves the value alone in the low byte.
    let z = l.b.reg(RegClass::F32);
    l.b.op("mov.f32", z, f32_imm(0.0));
    l.b.op(format!("cvt.rn.satfinite.{name}.f32"), d, (z, x));
    d
}

/// The fp8 `s` values nearest to the f32 `hi` and `lo` in the upper and lower byte of a 16-bit register (sm_90a
/// and later: `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`).
pub(crate) fn f32_pair_to_fp8(l: &mut Lower, hi: Reg, lo: Reg, s: ScalarType) -> Reg {
    let d = l.b.reg(RegClass::B16);
    l.b.op(format!("cvt.rn.satfinite.{}.f32", fp8_format(s).1), d, (hi, lo));
    d
}

/// Sets the last bit of `r` (an f32 obtained by truncation) when `inexact`: rounding to odd.
fn set_sticky(l: &mut Lower, r: Reg, inexact: Reg) -> Reg {
    let (b, o, s, d) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32), l.b.reg(RegClass::B32), l.b.reg(RegClass::F32));
    l.b.op("mov.b32", b, r);
    l.b.op("or.b32", o, (b, 1));
    l.b.op("selp.b32", s, (o, b, inexact));
    l.b.op("mov.b32", d, s);
    d
}

/// The f64 `x` as an f32 rounded to odd.
fn f64_to_f32_odd(l: &mut Lower, x: Reg) -> Reg {
    let (r, back, p) = (l.b.reg(RegClass::F32), l.b.reg(RegClass::F64), l.b.reg(RegClass::Pred));
    l.b.op("cvt.rz.f32.f64", r, x);
    l.b.op("cvt.f64.f32", back, r);
    l.b.op("setp.neu.f64", p, (back, x));
    set_sticky(l, r, p)
}

/// The integer `x` of type `s` as an f32 rounded to odd.
fn int_to_f32_odd(l: &mut Lower, x: Reg, s: ScalarType) -> Reg {
    let t = int_ty(s);
    let (r, back, p) = (l.b.reg(RegClass::F32), l.b.reg(x.class), l.b.reg(RegClass::Pred));
    l.b.op(format!("cvt.rz.f32.{t}"), r, x);
    l.b.op(format!("cvt.rzi.{t}.f32"), back, r);
    l.b.op(format!("setp.ne.{t}"), p, (back, x));
    set_sticky(l, r, p)
}

/// The type a float of type `s` computes in: f32, or f64 for f64.
pub(crate) fn float_compute(s: ScalarType) -> ScalarType {
    if s == F64 { F64 } else { F32 }
}

/// `x` (a float of type `s`) in its compute type, exactly.
pub(crate) fn widen_float(l: &mut Lower, x: Reg, s: ScalarType) -> Reg {
    match s {
        F16 | BF16 => {
            let d = l.b.reg(RegClass::F32);
            l.b.op(format!("cvt.f32.{}", if s == F16 { "f16" } else { "bf16" }), d, x);
            d
        }
        F8E4M3 | F8E5M2 => fp8_to_f32_reg(l, x, s),
        _ => x,
    }
}

/// The float `x` of type `from` (any float) rounded once to the float type `to`.
pub(crate) fn float_to_float(l: &mut Lower, x: Reg, from: ScalarType, to: ScalarType) -> Reg {
    if to == F64 {
        let w = widen_float(l, x, from);
        if from == F64 {
            return w;
        }
        let d = l.b.reg(RegClass::F64);
        l.b.op("cvt.f64.f32", d, w);
        return d;
    }
    if from == F64 && matches!(to, F32 | F16) {
        let d = l.b.reg(class_of(Elem::Scalar(to)).expect("a float class"));
        l.b.op(format!("cvt.rn.{}.f64", if to == F32 { "f32" } else { "f16" }), d, x);
        return d;
    }
    let w = if from == F64 { f64_to_f32_odd(l, x) } else { widen_float(l, x, from) };
    narrow_f32(l, w, to)
}

/// The f32 `x` rounded to the float type `to` (f32, f16, bf16 or fp8).
pub(crate) fn narrow_f32(l: &mut Lower, x: Reg, to: ScalarType) -> Reg {
    match to {
        F32 => x,
        F16 | BF16 => {
            let d = l.b.reg(RegClass::B16);
            l.b.op(format!("cvt.rn.{}.f32", if to == F16 { "f16" } else { "bf16" }), d, x);
            d
        }
        F8E4M3 | F8E5M2 => f32_to_fp8_reg(l, x, to),
        _ => unreachable!("narrow_f32 to {to}"),
    }
}

fn int_to_int(l: &mut Lower, x: Reg, from: ScalarType, to: ScalarType) -> Reg {
    let (fc, tc) = (x.class, class_of(Elem::Scalar(to)).expect("an integer class"));
    let y = if fc.bits() == tc.bits() {
        x
    } else {
        // Widening extends by the source's signedness, narrowing truncates.
        let d = l.b.reg(tc);
        l.b.op(format!("cvt.{}.{}", int_ty(to), int_ty(from)), d, x);
        d
    };
    canon8(l, y, to)
}

fn float_to_int(l: &mut Lower, x: Reg, from: ScalarType, to: ScalarType) -> Reg {
    let w = widen_float(l, x, from);
    let ft = float_compute(from).name();
    let d = l.b.reg(class_of(Elem::Scalar(to)).expect("an integer class"));
    l.b.op(format!("cvt.rzi.{}.{ft}", int_ty(to)), d, w);
    if !is_int8(to) {
        return d;
    }
    // Saturate to the 8-bit range (the conversion above saturated to 16 bits).
    let c = l.b.reg(RegClass::B16);
    if to == I8 {
        let t = l.b.reg(RegClass::B16);
        l.b.op("max.s16", t, (d, -128));
        l.b.op("min.s16", c, (t, 127));
    } else {
        l.b.op("min.u16", c, (d, 255));
    }
    c
}

fn int_to_float(l: &mut Lower, x: Reg, from: ScalarType, to: ScalarType) -> Reg {
    let t = int_ty(from);
    match to {
        F32 | F64 | F16 => {
            let d = l.b.reg(class_of(Elem::Scalar(to)).expect("a float class"));
            l.b.op(format!("cvt.rn.{}.{t}", to.name()), d, x);
            d
        }
        // 8/16-bit integers are exact in f32; wider ones round to odd there first.
        _ if from.bits() <= 16 => {
            let f = l.b.reg(RegClass::F32);
            l.b.op(format!("cvt.rn.f32.{t}"), f, x);
            narrow_f32(l, f, to)
        }
        // fp8 saturates far below 2^24, where integers stop being exact in f32.
        F8E4M3 | F8E5M2 => {
            let f = l.b.reg(RegClass::F32);
            l.b.op(format!("cvt.rn.f32.{t}"), f, x);
            narrow_f32(l, f, to)
        }
        _ => {
            let f = int_to_f32_odd(l, x, from);
            narrow_f32(l, f, to)
        }
    }
}

/// Value conversion from `from` to `to`.
pub(crate) fn cast_scalar(l: &mut Lower, x: Reg, from: ScalarType, to: ScalarType) -> Result<Reg, CompileError> {
    if from == to {
        return Ok(x);
    }
    if from == I1 {
        let (one, zero) =
            (l.const_reg(Const::Int(1), Elem::Scalar(to))?, l.const_reg(Const::Int(0), Elem::Scalar(to))?);
        let dc = class_of(Elem::Scalar(to))?;
        let d = l.b.reg(dc);
        l.b.op(format!("selp.b{}", dc.bits()), d, (one, zero, x));
        return Ok(d);
    }
    if to == I1 {
        let d = l.b.reg(RegClass::Pred);
        if from.is_float() {
            let w = widen_float(l, x, from);
            let c = float_compute(from);
            let zero = l.const_reg(Const::Int(0), Elem::Scalar(c))?;
            l.b.op(format!("setp.neu.{}", c.name()), d, (w, zero));
        } else {
            l.b.op(format!("setp.ne.{}", int_ty(from)), d, (x, 0));
        }
        return Ok(d);
    }
    Ok(match (from.is_float(), to.is_float()) {
        (false, false) => int_to_int(l, x, from, to),
        (true, false) => float_to_int(l, x, from, to),
        (false, true) => int_to_float(l, x, from, to),
        (true, true) => float_to_float(l, x, from, to),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::fpops::model::M32;
    use tessel_tile::eval::value::{decode_fp8, encode_fp8};
    use tessel_tile::types::ScalarType;

    /// A deterministic spread of test points in [lo, hi].
    fn points(lo: f64, hi: f64, n: usize) -> Vec<f64> {
        let mut rng = tessel_math::testing::Rng::new(4);
        (0..n).map(|_| lo + (hi - lo) * (rng.uniform() + 1.0) / 2.0).collect()
    }

    /// The software fp8 conversions (`tessel_math::fp8`, sm_80's) against the interpreter's.
    #[test]
    fn software_fp8_matches_the_interpreter() {
        for (f, t) in [(E4M3, ScalarType::F8E4M3), (E5M2, ScalarType::F8E5M2)] {
            for b in 0..=255u32 {
                let got = fp8_to_f32(&mut M32, b, f);
                let want = decode_fp8(b as u8, t);
                assert!(got as f64 == want || (got.is_nan() && want.is_nan()), "{t} {b:#x}: {got} vs {want}");
            }
            let mut xs: Vec<f32> = Vec::new();
            for b in 0..=255u8 {
                let v = decode_fp8(b, t);
                let next = decode_fp8(b.wrapping_add(1), t);
                if v.is_finite() {
                    let v = v as f32;
                    xs.extend([v, f32::from_bits(v.to_bits() + 1), f32::from_bits(v.to_bits().saturating_sub(1))]);
                    if next.is_finite() && (b & 0x7f) != 0x7f {
                        let mid = ((v as f64 + next) / 2.0) as f32;
                        xs.extend([mid, f32::from_bits(mid.to_bits() + 1), f32::from_bits(mid.to_bits() - 1)]);
                    }
                }
            }
            xs.extend(points(-70000.0, 70000.0, 20_000).into_iter().map(|x| x as f32));
            xs.extend(points(-1.0, 1.0, 20_000).into_iter().map(|x| (x * 1e-3) as f32));
            xs.extend([0.0, -0.0, f32::MAX, f32::MIN, f32::from_bits(1)]);
            for x in xs {
                let got = f32_to_fp8(&mut M32, x, f);
                let want = encode_fp8(x as f64, t) as u32;
                // NaN codes may differ (0x7f here and in the hardware; the interpreter uses 0x7e for e5m2).
                let both_nan = decode_fp8(got as u8, t).is_nan() && decode_fp8(want as u8, t).is_nan();
                assert!(got == want || both_nan, "{t}: encode({x:e}) = {got:#x}, want {want:#x}");
            }
            let max = f.max_code;
            assert_eq!(f32_to_fp8(&mut M32, f32::INFINITY, f), max);
            assert_eq!(f32_to_fp8(&mut M32, f32::NEG_INFINITY, f), max | 0x80);
            assert_eq!(f32_to_fp8(&mut M32, f32::NAN, f) & 0x7f, 0x7f);
        }
    }
}
