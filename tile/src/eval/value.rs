//! Element values and the number formats they are stored in.
//!
//! An element is a [`Val`]. Integers are kept
//! wrapped to their type's width and sign (an i64/u64 keeps all 64 bits: a u64 is its bits in an `i64`);
//! floats are kept as `f64` holding exactly a value of their type (every op rounds its result to the type),
//! so f16/bf16/fp8 results are the ones the GPU produces. A NaN keeps its payload and its quiet bit: loading
//! an f32 signalling NaN and storing (or bitcasting) it gives back the same bits, see [`widen_nan`].

use half::{bf16, f16};

use crate::types::{Elem, ScalarType};

/// One element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    Int(i64),
    Float(f64),
    /// An address in the interpreter's memory (see `Memory`).
    Ptr(u64),
}

impl Val {
    pub fn as_i64(self) -> i64 {
        match self {
            Val::Int(v) => v,
            Val::Float(f) => f as i64,
            Val::Ptr(p) => p as i64,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Val::Float(f) => f,
            Val::Int(v) => v as f64,
            Val::Ptr(p) => p as f64,
        }
    }

    pub fn is_true(self) -> bool {
        self.as_i64() != 0
    }
}

/// Wraps an integer to the width and signedness of `t`.
pub fn wrap_int(v: i64, t: ScalarType) -> i64 {
    let bits = t.bits();
    if bits >= 64 {
        return v;
    }
    let mask = (1i64 << bits) - 1;
    let low = v & mask;
    if t.is_signed_int() && low >> (bits - 1) & 1 == 1 { low | !mask } else { low }
}

/// The integers type `t` holds, `(lowest, highest)`: `i1` holds 0 and 1, `u64` up to 2^64 - 1.
pub fn int_limits(t: ScalarType) -> (i128, i128) {
    let bits = if t == ScalarType::I1 { 1 } else { t.bits() };
    if t.is_signed_int() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) }
}

/// The largest finite fp8 value (fp8 conversions saturate instead of giving inf); infinity for other types.
pub fn fp8_largest(t: ScalarType) -> f64 {
    match t {
        ScalarType::F8E4M3 => 448.0,
        ScalarType::F8E5M2 => 57344.0,
        _ => f64::INFINITY,
    }
}

/// Rounds a real number to the nearest value of float type `t` (ties to even; fp8 saturates to the largest
/// finite value as `cvt.rn.satfinite` does, infinities included). bf16 rounds through f32 (`half`'s
/// conversion), as the GPU's f32 computation followed by `cvt.rn.bf16.f32` does.
pub fn round_float(v: f64, t: ScalarType) -> f64 {
    match t {
        ScalarType::F64 => v,
        ScalarType::F32 => v as f32 as f64,
        ScalarType::F16 => f16::from_f64(v).to_f64(),
        ScalarType::BF16 => bf16_rne(v).to_f64(),
        // ±inf saturates to ±57344 as `cvt.rn.satfinite.e5m2x2` does (the GPU lowering's conversion); memory
        // still holds e5m2 infinities exactly (`to_bits` does not saturate).
        ScalarType::F8E5M2 if v.is_infinite() => 57344f64.copysign(v),
        ScalarType::F8E4M3 | ScalarType::F8E5M2 => decode_fp8(encode_fp8(v, t), t),
        _ => panic!("round_float on integer type {t}"),
    }
}

/// `v` rounded to bf16, nearest even, in one rounding (`cvt.rn.bf16.f32` / `.f64`). `half`'s `bf16::from_f64`
/// drops the low 32 bits of the f64 before rounding, so a value just above a tie (f32 0xc2568007) rounded down;
/// rounding to f32 by round-to-odd first keeps the sticky bit, and f32 -> bf16 is then exact nearest-even.
fn bf16_rne(v: f64) -> bf16 {
    let r = v as f32;
    if r as f64 == v || !r.is_finite() {
        return bf16::from_f32(r);
    }
    // Round to odd: truncate toward zero, then set the last bit.
    let toward_zero = if (r as f64).abs() > v.abs() { r.to_bits() - 1 } else { r.to_bits() };
    bf16::from_f32(f32::from_bits(toward_zero | 1))
}

/// Converts an element to the representation of `t` (the semantics of `cast` / `.to(dtype)`).
pub fn convert(v: Val, from: Elem, to: Elem) -> Val {
    match (from, to) {
        // An address is 64-bit: a narrower integer zero-extends (LLVM's `inttoptr`, which Triton's
        // `int_to_ptr` lowers to, and the GPU lowering's `cvt.u64.u32`).
        (Elem::Scalar(s), Elem::Ptr(..)) if s.bits() < 64 => Val::Ptr(v.as_i64() as u64 & ((1u64 << s.bits()) - 1)),
        (_, Elem::Ptr(..)) => Val::Ptr(v.as_i64() as u64),
        (Elem::Ptr(..), Elem::Scalar(t)) => Val::Int(wrap_int(v.as_i64(), t)),
        (Elem::Scalar(f), Elem::Scalar(t)) => {
            if t.is_float() {
                if !f.is_float() {
                    let x = if f.is_unsigned_int() { v.as_i64() as u64 as i128 } else { v.as_i64() as i128 };
                    return Val::Float(int_to_float(x, t));
                }
                if f == ScalarType::F64 && t == ScalarType::BF16 {
                    return Val::Float(round_bf16_once(v.as_f64()));
                }
                Val::Float(round_float(v.as_f64(), t))
            } else if t == ScalarType::I1 {
                Val::Int((if f.is_float() { v.as_f64() != 0.0 } else { v.as_i64() != 0 }) as i64)
            } else if f.is_float() {
                // Float to integer truncates toward zero and saturates (PTX cvt.rzi semantics).
                let x = v.as_f64().trunc();
                let (lo, hi) = int_range(t);
                if x.is_nan() {
                    return Val::Int(nan_to_int(f, t));
                }
                Val::Int(match t {
                    ScalarType::U64 => x as u64 as i64,
                    ScalarType::I64 => x as i64,
                    _ => x.clamp(lo as f64, hi as f64) as i64,
                })
            } else if f.is_unsigned_int() {
                Val::Int(wrap_int(v.as_i64() as u64 as i64, t))
            } else {
                Val::Int(wrap_int(v.as_i64(), t))
            }
        }
    }
}

/// What `cvt.rzi` (and `cvt.rni`...) gives for a NaN of float type `from` converted to integer type `to`, as
/// measured against Triton on an H100 (`conformance/RESULTS.md`): the sign bit alone for a 64-bit integer
/// (i64::MIN, or 2^63 for u64) and for a 32-bit integer from f64 (`double2int_ru(NaN)` = i32::MIN), 0 for a
/// 32-bit (or narrower) integer from f32 and the half types. Triton leaves the value undefined; these are the
/// GPU's.
pub fn nan_to_int(from: ScalarType, to: ScalarType) -> i64 {
    match (from, to.bits()) {
        (_, 64) => i64::MIN,
        (ScalarType::F64, 32) => wrap_int(1 << 31, to),
        _ => 0,
    }
}

/// The integer `x` (an i64 or u64 value) rounded once to float type `t`, to nearest even, as the GPU's cast
/// does.
/// Integers beyond 2^53 are first rounded to odd at f64's precision (truncate, then set the last bit when
/// inexact), which makes the second rounding to a narrower type the correct one.
pub fn int_to_float(x: i128, t: ScalarType) -> f64 {
    if t == ScalarType::F64 || x.unsigned_abs() <= 1 << 53 {
        return if t == ScalarType::BF16 { round_bf16_once(x as f64) } else { round_float(x as f64, t) };
    }
    let mag = x.unsigned_abs();
    // Keep the top 53 significant bits, ORing what falls off into the last one (round to odd).
    let drop = 128 - mag.leading_zeros() - 53;
    let kept = mag >> drop;
    let sticky = (mag & ((1u128 << drop) - 1) != 0) as u128;
    let odd = (kept | sticky) as f64 * 2f64.powi(drop as i32);
    let odd = if x < 0 { -odd } else { odd };
    if t == ScalarType::BF16 { round_bf16_once(odd) } else { round_float(odd, t) }
}

/// An f64 rounded once to bf16, as the GPU's cast does: to f32 rounded to odd (truncate, set the last bit when
/// inexact), then to bf16 (f32 has enough extra bits for that second rounding to be the correct one).
/// [`round_float`] rounds through f32 to nearest instead, as the GPU's f32 arithmetic on bf16 values does.
pub fn round_bf16_once(x: f64) -> f64 {
    let f = x as f32;
    if !x.is_finite() || f as f64 == x {
        return bf16::from_f32(f).to_f64();
    }
    // Truncate toward zero (step back when rounding went up in magnitude), then make the last bit odd.
    let mut bits = f.to_bits();
    if (f as f64).abs() > x.abs() {
        bits -= 1;
    }
    bf16::from_f32(f32::from_bits(bits | 1)).to_f64()
}

fn int_range(t: ScalarType) -> (i64, i64) {
    let bits = t.bits();
    if t.is_unsigned_int() {
        (0, if bits >= 64 { i64::MAX } else { (1i64 << bits) - 1 })
    } else if bits >= 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    }
}

/// (mantissa bits, exponent bits) of the IEEE-style float types whose NaNs carry a payload.
fn nan_format(t: ScalarType) -> Option<(u32, u32)> {
    match t {
        ScalarType::F32 => Some((23, 8)),
        ScalarType::F16 => Some((10, 5)),
        ScalarType::BF16 => Some((7, 8)),
        ScalarType::F8E5M2 => Some((2, 5)),
        _ => None,
    }
}

/// The f64 NaN standing for the NaN `bits` of type `t`: same sign, the mantissa (payload and quiet bit)
/// moved to the top of the f64 mantissa. Hardware conversions (and Rust's `as`) would set the quiet bit of a
/// signalling NaN; this keeps it, so the bits come back unchanged from [`narrow_nan`]. `None` if `bits` is
/// not a NaN of `t`.
pub fn widen_nan(bits: u64, t: ScalarType) -> Option<f64> {
    let (m, e) = nan_format(t)?;
    let exp_mask = (1u64 << e) - 1;
    let mant = bits & ((1u64 << m) - 1);
    if (bits >> m) & exp_mask != exp_mask || mant == 0 {
        return None;
    }
    let sign = (bits >> (m + e)) & 1;
    Some(f64::from_bits(sign << 63 | 0x7ff << 52 | mant << (52 - m)))
}

/// The NaN bits of type `t` for an f64 NaN (the inverse of [`widen_nan`]); a payload that lies entirely
/// below `t`'s mantissa becomes the quiet NaN of that sign.
pub fn narrow_nan(x: f64, t: ScalarType) -> u64 {
    let (m, e) = nan_format(t).expect("a float type with NaN payloads");
    let b = x.to_bits();
    let mut mant = (b & ((1u64 << 52) - 1)) >> (52 - m);
    if mant == 0 {
        mant = 1 << (m - 1);
    }
    (b >> 63) << (m + e) | ((1u64 << e) - 1) << m | mant
}

/// Bits of an element as stored in memory (`t.bytes()` little-endian bytes).
pub fn to_bits(v: Val, t: ScalarType) -> u64 {
    if let Val::Float(x) = v
        && x.is_nan()
        && nan_format(t).is_some()
    {
        return narrow_nan(x, t);
    }
    match t {
        ScalarType::F64 => v.as_f64().to_bits(),
        ScalarType::F32 => (v.as_f64() as f32).to_bits() as u64,
        ScalarType::F16 => f16::from_f64(v.as_f64()).to_bits() as u64,
        ScalarType::BF16 => bf16_rne(v.as_f64()).to_bits() as u64,
        ScalarType::F8E4M3 | ScalarType::F8E5M2 => encode_fp8(v.as_f64(), t) as u64,
        _ => v.as_i64() as u64 & mask_bits(t.bytes() * 8),
    }
}

/// Every element of a little-endian buffer of type `t`, exactly (no detour through `f64` for integers; NaN
/// payloads kept).
pub fn decode_vals(bytes: &[u8], t: ScalarType) -> Vec<Val> {
    let n = t.bytes() as usize;
    bytes
        .chunks_exact(n)
        .map(|c| {
            let mut raw = [0u8; 8];
            raw[..n].copy_from_slice(c);
            from_bits(u64::from_le_bytes(raw), t)
        })
        .collect()
}

/// The little-endian bytes of `vals` as elements of type `t` (the inverse of [`decode_vals`]).
pub fn encode_vals(vals: &[Val], t: ScalarType) -> Vec<u8> {
    let n = t.bytes() as usize;
    let mut out = Vec::with_capacity(vals.len() * n);
    for &v in vals {
        out.extend_from_slice(&to_bits(v, t).to_le_bytes()[..n]);
    }
    out
}

/// Little-endian elements of type `t` as numbers (unsigned integers by their unsigned value): what a buffer's
/// bytes hold, whether they come from the interpreter's memory or back from a GPU. A view for norms and
/// tolerances: integers beyond 2^53 round (use [`decode_vals`] for exact values).
pub fn decode_le(bytes: &[u8], t: ScalarType) -> Vec<f64> {
    let n = t.bytes() as usize;
    bytes
        .chunks_exact(n)
        .map(|c| {
            let mut raw = [0u8; 8];
            raw[..n].copy_from_slice(c);
            let v = from_bits(u64::from_le_bytes(raw), t);
            if t.is_unsigned_int() { v.as_i64() as u64 as f64 } else { v.as_f64() }
        })
        .collect()
}

/// The element stored as `bits`.
pub fn from_bits(bits: u64, t: ScalarType) -> Val {
    if let Some(nan) = widen_nan(bits, t) {
        return Val::Float(nan);
    }
    match t {
        ScalarType::F64 => Val::Float(f64::from_bits(bits)),
        ScalarType::F32 => Val::Float(f32::from_bits(bits as u32) as f64),
        ScalarType::F16 => Val::Float(f16::from_bits(bits as u16).to_f64()),
        ScalarType::BF16 => Val::Float(bf16::from_bits(bits as u16).to_f64()),
        ScalarType::F8E4M3 | ScalarType::F8E5M2 => Val::Float(decode_fp8(bits as u8, t)),
        ScalarType::I1 => Val::Int((bits & 1) as i64),
        _ => Val::Int(wrap_int(bits as i64, t)),
    }
}

/// The fp4 e2m1 value of the low 4 bits of `nibble`: sign, 2 exponent bits (bias 1), 1 mantissa bit; no
/// infinities or NaN (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives).
pub fn decode_e2m1(nibble: u8) -> f64 {
    let (sign, e, m) = ((nibble >> 3) & 1, (nibble >> 1) & 3, nibble & 1);
    let mag = if e == 0 { 0.5 * m as f64 } else { 2f64.powi(e as i32 - 1) * (1.0 + 0.5 * m as f64) };
    if sign == 1 { -mag } else { mag }
}

/// Value `k` of a row of e2m1 values packed two per byte (`bytes`): the low nibble of byte `k / 2` for even `k`,
/// the high one for odd.
pub fn packed_e2m1(bytes: &[u8], k: usize) -> f64 {
    let b = bytes[k / 2];
    decode_e2m1(if k % 2 == 0 { b & 0xf } else { b >> 4 })
}

/// A block scale of format ue8m0 (`u8`): `2^(x - 127)`, NaN for 255.
pub fn decode_ue8m0(x: u8) -> f64 {
    if x == 255 { f64::NAN } else { 2f64.powi(x as i32 - 127) }
}

/// A block scale of format ue4m3 (an unsigned e4m3: the sign bit of the stored byte is not read).
pub fn decode_ue4m3(x: u8) -> f64 {
    decode_fp8(x & 0x7f, ScalarType::F8E4M3)
}

fn mask_bits(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

/// (exponent bits, mantissa bits, bias, has infinities) of the fp8 formats: e4m3 is the "fn" variant
/// (no infinities, one NaN pattern, max 448), e5m2 follows IEEE (max 57344).
fn fp8_format(t: ScalarType) -> (i32, i32, i32, bool) {
    match t {
        ScalarType::F8E4M3 => (4, 3, 7, false),
        ScalarType::F8E5M2 => (5, 2, 15, true),
        _ => unreachable!("not an fp8 type: {t}"),
    }
}

fn fp8_max(t: ScalarType) -> f64 {
    match t {
        ScalarType::F8E4M3 => 448.0,
        _ => 57344.0,
    }
}

/// Encodes with round-to-nearest-even, saturating finite overflow to the largest finite value.
pub fn encode_fp8(x: f64, t: ScalarType) -> u8 {
    let (e_bits, m_bits, bias, has_inf) = fp8_format(t);
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    if x.is_nan() {
        return if has_inf { 0x7e | sign } else { 0x7f | sign };
    }
    let a = x.abs();
    if a.is_infinite() && has_inf {
        return sign | (((1 << e_bits) - 1) << m_bits) as u8;
    }
    if a > fp8_max(t) {
        return sign | encode_fp8(fp8_max(t), t);
    }
    // Quantum at the value's binade (subnormals share the smallest normal binade's quantum).
    let min_exp = 1 - bias;
    let e = if a == 0.0 { min_exp } else { (a.log2().floor() as i32).max(min_exp) };
    let quantum = 2f64.powi(e - m_bits);
    let q = a / quantum;
    let mut n = q.floor();
    let frac = q - n;
    if frac > 0.5 || (frac == 0.5 && n % 2.0 == 1.0) {
        n += 1.0;
    }
    let value = n * quantum;
    if value > fp8_max(t) {
        return sign | encode_fp8(fp8_max(t), t);
    }
    if value == 0.0 {
        return sign;
    }
    let e = (value.log2().floor() as i32).max(min_exp);
    let (exp_field, man) = if e == min_exp && value < 2f64.powi(min_exp) {
        (0, (value / 2f64.powi(min_exp - m_bits)) as u32)
    } else {
        ((e + bias) as u32, ((value / 2f64.powi(e) - 1.0) * 2f64.powi(m_bits)) as u32)
    };
    sign | ((exp_field << m_bits) | man) as u8
}

pub fn decode_fp8(b: u8, t: ScalarType) -> f64 {
    let (e_bits, m_bits, bias, has_inf) = fp8_format(t);
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((b >> m_bits) & ((1 << e_bits) - 1)) as i32;
    let man = (b & ((1 << m_bits) - 1)) as i32;
    let exp_max = (1 << e_bits) - 1;
    if has_inf && exp == exp_max {
        return if man == 0 { sign * f64::INFINITY } else { f64::NAN };
    }
    if !has_inf && exp == exp_max && man == (1 << m_bits) - 1 {
        return f64::NAN;
    }
    if exp == 0 {
        sign * man as f64 * 2f64.powi(1 - bias - m_bits)
    } else {
        sign * (1.0 + man as f64 / (1 << m_bits) as f64) * 2f64.powi(exp - bias)
    }
}

/// An f32 as the tensor cores read a tf32 operand: the low 13 mantissa bits dropped (truncated toward zero).
/// Triton hands the f32 bits to `mma ... .tf32` / `wgmma ... .tf32` unconverted, so this is its tf32 `dot`
/// (measured on an H100: rounding to nearest instead, as `cvt.rna.tf32.f32`, matched 1 of 4096 results).
pub fn round_tf32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & !0x1fff)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f32 -> bf16 rounds once, to nearest even: Triton's `cvt.rn.bf16.f32` of 0xc2568007 is 0xc257 (the bits
    /// below the tie decide; `half`'s `from_f64` lost them and gave 0xc256). Ties go to even; f64 inputs too.
    #[test]
    fn bf16_rounds_once_to_nearest_even() {
        let bf = |b: u32| to_bits(Val::Float(f32::from_bits(b) as f64), ScalarType::BF16);
        assert_eq!(bf(0xc256_8007), 0xc257);
        assert_eq!(bf(0xc256_8000), 0xc256);
        assert_eq!(bf(0xc257_8000), 0xc258);
        assert_eq!(bf(0x3f80_7fff), 0x3f80);
        assert_eq!(bf(0x0000_8001), 0x0001);
        assert_eq!(round_float(f32::from_bits(0xc256_8007) as f64, ScalarType::BF16), -53.75);
        // An f64 just above a tie that f32 rounding alone would turn into the tie.
        let just_above = f64::from_bits(0x3ff0_1000_0000_0001);
        assert_eq!(to_bits(Val::Float(just_above), ScalarType::BF16), 0x3f81);
    }

    #[test]
    fn fp8_round_trips_every_encoding() {
        for t in [ScalarType::F8E4M3, ScalarType::F8E5M2] {
            for b in 0..=255u8 {
                let v = decode_fp8(b, t);
                if v.is_nan() {
                    continue;
                }
                assert_eq!(decode_fp8(encode_fp8(v, t), t).to_bits(), v.to_bits(), "{t} {b:#x} = {v}");
            }
        }
    }

    #[test]
    fn fp8_rounds_to_nearest_even_and_saturates() {
        let t = ScalarType::F8E4M3;
        assert_eq!(decode_fp8(encode_fp8(1.0625, t), t), 1.0); // halfway between 1.0 and 1.125: even is 1.0
        assert_eq!(decode_fp8(encode_fp8(1.1875, t), t), 1.25); // halfway between 1.125 and 1.25: even is 1.25
        assert_eq!(decode_fp8(encode_fp8(1000.0, t), t), 448.0);
        assert_eq!(decode_fp8(encode_fp8(-1e9, t), t), -448.0);
        assert_eq!(decode_fp8(encode_fp8(2f64.powi(-9), t), t), 2f64.powi(-9)); // smallest subnormal
        assert_eq!(decode_fp8(encode_fp8(2f64.powi(-11), t), t), 0.0);
        let t = ScalarType::F8E5M2;
        assert_eq!(decode_fp8(encode_fp8(f64::INFINITY, t), t), f64::INFINITY);
        // Converting saturates infinities (satfinite), storing an e5m2 infinity keeps it.
        assert_eq!(round_float(f64::NEG_INFINITY, t), -57344.0);
        assert_eq!(to_bits(Val::Float(f64::INFINITY), t), 0x7c);
        assert_eq!(decode_fp8(encode_fp8(1e6, t), t), 57344.0);
    }

    #[test]
    fn integer_wrapping_and_float_to_int_saturation() {
        assert_eq!(wrap_int(200, ScalarType::I8), -56);
        assert_eq!(wrap_int(-1, ScalarType::U16), 65535);
        let to_i8 = |x| convert(Val::Float(x), Elem::Scalar(ScalarType::F32), Elem::Scalar(ScalarType::I8));
        assert_eq!(to_i8(300.7), Val::Int(127));
        assert_eq!(to_i8(-2.9), Val::Int(-2));
        assert_eq!(to_i8(f64::NAN), Val::Int(0));
        let to = |x, t| convert(Val::Float(x), Elem::Scalar(ScalarType::F64), Elem::Scalar(t));
        assert_eq!(to(1.8e19, ScalarType::U64), Val::Int(18_000_000_000_000_000_000u64 as i64));
        assert_eq!(to(1e30, ScalarType::U64), Val::Int(-1));
        assert_eq!(to(-1e30, ScalarType::I64), Val::Int(i64::MIN));
    }

    /// Integer (and f64) to float rounds once: values whose f64 (or f32) rounding lands on a midpoint of the
    /// target still round the right way, as the GPU's casts do.
    #[test]
    fn wide_integers_convert_to_floats_with_one_rounding() {
        let cvt = |v: i64, from, to| convert(Val::Int(v), Elem::Scalar(from), Elem::Scalar(to)).as_f64();
        // 2^60 + 2^36 + 1: just above the midpoint between two f32s (ulp 2^37 there); f64 alone would round
        // it onto the midpoint and ties-to-even would then go down.
        let x = (1i64 << 60) + (1 << 36) + 1;
        assert_eq!(cvt(x, ScalarType::I64, ScalarType::F32), ((1i64 << 60) + (1 << 37)) as f64);
        assert_eq!(cvt(x, ScalarType::I64, ScalarType::F32), x as f32 as f64);
        assert_eq!(cvt(-x, ScalarType::I64, ScalarType::F32), -x as f32 as f64);
        assert_eq!(cvt(-1, ScalarType::U64, ScalarType::F32), u64::MAX as f32 as f64);
        assert_eq!(cvt(i64::MIN, ScalarType::I64, ScalarType::F64), -(2f64.powi(63)));
        // f16: 2^15 + 2^4 + 1 is above the midpoint between 32768 and 32800 (exact in f64, one rounding).
        assert_eq!(cvt((1 << 15) + (1 << 4) + 1, ScalarType::I64, ScalarType::F16), 32800.0);
        // bf16 (ulp 2^55 at 2^62): just above a midpoint, from an integer and from an f64; f32 rounding to
        // nearest first would land on the midpoint and then round down to even.
        let y = (1i64 << 62) + (1 << 54) + (1 << 10);
        assert_eq!(cvt(y, ScalarType::I64, ScalarType::BF16), ((1i64 << 62) + (1 << 55)) as f64);
        let f = convert(Val::Float(y as f64), Elem::Scalar(ScalarType::F64), Elem::Scalar(ScalarType::BF16));
        assert_eq!(f.as_f64(), ((1i64 << 62) + (1 << 55)) as f64);
        assert_eq!(round_bf16_once(1.0 + 2f64.powi(-8)), 1.0); // a true tie rounds to even
    }

    /// Signalling and quiet NaNs with payloads, of both signs, survive a load (`from_bits`) and a store or
    /// bitcast (`to_bits`) unchanged, also across a bitcast to the integer of the same width and back.
    #[test]
    fn nan_payloads_round_trip_bit_for_bit() {
        let cases: [(ScalarType, ScalarType, &[u64]); 5] = [
            (ScalarType::F32, ScalarType::I32, &[0x7f80_0001, 0x7fa0_0000, 0xffbf_ffff, 0x7fc0_0001, 0xff80_1234]),
            (ScalarType::F16, ScalarType::I16, &[0x7c01, 0x7d55, 0xfe01, 0x7fff]),
            (ScalarType::BF16, ScalarType::U16, &[0x7f81, 0xffa5, 0x7fc1]),
            (ScalarType::F64, ScalarType::I64, &[0x7ff0_0000_0000_0001, 0xfff4_0000_dead_beef, 0x7ff8_0000_0000_0007]),
            (ScalarType::F8E5M2, ScalarType::I8, &[0x7d, 0xfe, 0x7f]),
        ];
        for (f, i, bits) in cases {
            for &b in bits {
                let v = from_bits(b, f);
                assert!(v.as_f64().is_nan(), "{f} {b:#x}");
                assert_eq!(to_bits(v, f), b, "{f} {b:#x} through a load and a store");
                let as_int = from_bits(to_bits(v, f), i);
                assert_eq!(to_bits(from_bits(to_bits(as_int, i), f), f), b, "{f} {b:#x} bitcast to {i} and back");
            }
        }
    }

    #[test]
    fn wide_integers_keep_all_64_bits() {
        for (t, vals) in [
            (ScalarType::I64, vec![i64::MAX, i64::MIN, i64::MAX - 1, i64::MIN + 1, (1 << 53) + 1]),
            (ScalarType::U64, vec![-1, -2, i64::MIN, (1 << 53) + 1]),
        ] {
            let vals: Vec<Val> = vals.into_iter().map(Val::Int).collect();
            let bytes = encode_vals(&vals, t);
            assert_eq!(decode_vals(&bytes, t), vals, "{t}");
        }
        assert_eq!(to_bits(Val::Int(-1), ScalarType::U64), u64::MAX);
    }

    #[test]
    fn tf32_rounding() {
        assert_eq!(round_tf32(1.0 + 2f32.powi(-11)), 1.0); // truncated, even past the half
        assert_eq!(round_tf32(-(1.0 + 2f32.powi(-10) + 2f32.powi(-11))), -(1.0 + 2f32.powi(-10)));
        assert_eq!(round_tf32(f32::INFINITY), f32::INFINITY);
    }

    /// NaN converted to integers gives the GPU's bits (measured against Triton on an H100).
    #[test]
    fn nan_to_integers() {
        use ScalarType::*;
        let c = |f, t| convert(Val::Float(f64::NAN), Elem::Scalar(f), Elem::Scalar(t)).as_i64();
        assert_eq!(c(F32, I64), i64::MIN);
        assert_eq!(c(F64, I64), i64::MIN);
        assert_eq!(c(F32, U64), i64::MIN);
        assert_eq!(c(F64, I32), i32::MIN as i64);
        assert_eq!(c(F32, I32), 0);
        assert_eq!(c(F32, U32), 0);
    }
}
