//! Register values as the PTX types read them: widths, masks, sign extension, floats through the IR's number
//! formats.

use tessel_tile::eval::value::{Val, from_bits, to_bits};
use tessel_tile::types::ScalarType;

pub(super) fn suffix_bits(t: &str) -> u32 {
    match t {
        "pred" => 1,
        _ => t.trim_start_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap_or(32),
    }
}

pub(super) fn mask(bits: u32) -> u64 {
    if bits >= 64 { !0 } else { (1u64 << bits) - 1 }
}

pub(super) fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 { v as i64 } else { ((v << (64 - bits)) as i64) >> (64 - bits) }
}

pub(super) fn scalar(t: &str) -> Option<ScalarType> {
    Some(match t {
        "f16" => ScalarType::F16,
        "bf16" => ScalarType::BF16,
        "f32" => ScalarType::F32,
        "f64" => ScalarType::F64,
        _ => return None,
    })
}

pub(super) fn to_f(v: u64, t: &str) -> f64 {
    from_bits(v, scalar(t).unwrap()).as_f64()
}

pub(super) fn from_f(x: f64, t: &str) -> u64 {
    to_bits(Val::Float(x), scalar(t).unwrap())
}

/// The value of integer type `t` (`s32`, `u16`, `b64`...) as i128, sign-extended for signed types.
pub(super) fn int_val(v: u64, t: &str) -> i128 {
    let bits = suffix_bits(t);
    if t.starts_with('s') { sext(v, bits) as i128 } else { (v & mask(bits)) as i128 }
}
