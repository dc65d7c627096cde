//! Runtime values of the interpreter: a value is a tensor (a scalar is a tensor of shape `[]`) of elements
//! ([`Val`], in `tile::eval::value` with the number formats) in row-major order; and the scalar arguments a
//! kernel is called with, checked against their parameter's type.

use tessel_tile::eval::value::{Val, fp8_largest, int_limits, int_to_float, round_float};
use tessel_tile::types::{Elem, ScalarType};

/// A tensor (or scalar, when `shape` is empty).
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub shape: Vec<u32>,
    pub elem: Elem,
    pub data: Vec<Val>,
}

impl Tensor {
    pub fn scalar(elem: Elem, v: Val) -> Tensor {
        Tensor { shape: Vec::new(), elem, data: vec![v] }
    }

    pub fn splat(shape: &[u32], elem: Elem, v: Val) -> Tensor {
        let n = shape.iter().map(|&d| d as usize).product();
        Tensor { shape: shape.to_vec(), elem, data: vec![v; n] }
    }

    pub fn numel(&self) -> usize {
        self.data.len()
    }

    /// Row-major strides of the shape.
    pub fn strides(shape: &[u32]) -> Vec<usize> {
        let mut s = vec![1usize; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1] as usize;
        }
        s
    }

    /// The multi-index of flat index `i`.
    pub fn unravel(shape: &[u32], mut i: usize) -> Vec<u32> {
        let mut idx = vec![0u32; shape.len()];
        for d in (0..shape.len()).rev() {
            idx[d] = (i % shape[d] as usize) as u32;
            i /= shape[d] as usize;
        }
        idx
    }
}

/// Why a scalar argument does not fit its parameter's type (named by Triton's spelling, `uint64`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgError {
    /// An integer for a float parameter that would round to infinity.
    IntRoundsToInf { value: i128, ty: ScalarType },
    /// An integer outside the parameter's range (`lo..=hi`).
    IntWraps { value: i128, ty: ScalarType, lo: i128, hi: i128 },
    /// A float for an integer parameter.
    FloatForInt { value: f64, ty: ScalarType },
    /// A finite float beyond the parameter's range.
    FloatRoundsToInf { value: f64, ty: ScalarType },
}

impl ArgError {
    /// A value of the wrong kind (Python's `TypeError`), not one out of range (`OverflowError`).
    pub fn is_kind(&self) -> bool {
        matches!(self, ArgError::FloatForInt { .. })
    }
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            ArgError::IntRoundsToInf { value, ty } => {
                write!(f, "{value} does not fit {}: it would round to inf", ty.triton_name())
            }
            ArgError::IntWraps { value, ty, lo, hi } => {
                write!(f, "{value} does not fit {} (from {lo} to {hi}): it would wrap", ty.triton_name())
            }
            ArgError::FloatForInt { value, ty } => {
                write!(f, "{value:?} is a float, and the parameter is {}: give an integer", ty.triton_name())
            }
            ArgError::FloatRoundsToInf { value, ty } => {
                write!(f, "{value:?} does not fit {}: it would round to inf", ty.triton_name())
            }
        }
    }
}

impl std::error::Error for ArgError {}

/// A scalar argument written as the integer `v` (a Python int, a `--arg`), for a parameter of type `t`: the value
/// the interpreter and the GPU launch take (an `i64` holding the bits of a `u64` above 2^63; a float rounded to
/// `t`), or why it does not fit `t` (never wrapped or rounded to infinity).
pub fn int_arg(v: i128, t: ScalarType) -> Result<super::Arg, ArgError> {
    if t.is_float() {
        if !int_to_float(v, t).is_finite() || v.unsigned_abs() as f64 > fp8_largest(t) {
            return Err(ArgError::IntRoundsToInf { value: v, ty: t });
        }
        return Ok(super::Arg::Int(v as i64));
    }
    let (lo, hi) = int_limits(t);
    if v < lo || v > hi {
        return Err(ArgError::IntWraps { value: v, ty: t, lo, hi });
    }
    Ok(super::Arg::Int(v as i64))
}

/// A scalar argument written as the float `x`, for a parameter of type `t`: the value, or why it does not fit:
/// an integer parameter, or a finite value beyond `t`'s range (inf and nan pass as written).
pub fn float_arg(x: f64, t: ScalarType) -> Result<super::Arg, ArgError> {
    if t.is_int() {
        return Err(ArgError::FloatForInt { value: x, ty: t });
    }
    if x.is_finite() && (!round_float(x, t).is_finite() || x.abs() > fp8_largest(t)) {
        return Err(ArgError::FloatRoundsToInf { value: x, ty: t });
    }
    Ok(super::Arg::Float(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_arguments_are_range_checked_not_wrapped() {
        use crate::Arg;
        assert_eq!(int_arg((1 << 64) - 1, ScalarType::U64), Ok(Arg::Int(-1)));
        assert_eq!(
            int_arg(1 << 64, ScalarType::U64).unwrap_err().to_string(),
            "18446744073709551616 does not fit uint64 (from 0 to 18446744073709551615): it would wrap"
        );
        assert_eq!(int_arg(1 << 63, ScalarType::U64), Ok(Arg::Int(i64::MIN)));
        assert!(int_arg(1 << 63, ScalarType::I64).is_err());
        assert!(int_arg(-1, ScalarType::U32).is_err() && int_arg(1 << 31, ScalarType::I32).is_err());
        assert_eq!(int_arg(-(1 << 31), ScalarType::I32), Ok(Arg::Int(-(1 << 31))));
        assert!(int_arg(2, ScalarType::I1).is_err() && int_arg(1, ScalarType::I1).is_ok());
        assert!(int_arg(65520, ScalarType::F16).is_err() && int_arg(65504, ScalarType::F16).is_ok());
        assert!(int_arg(449, ScalarType::F8E4M3).is_err());
        assert_eq!(int_arg(i128::from(u64::MAX), ScalarType::F32), Ok(Arg::Int(-1)));
        assert_eq!(
            float_arg(1e39, ScalarType::F32).unwrap_err().to_string(),
            "1e39 does not fit float32: it would round to inf"
        );
        assert!(float_arg(f64::INFINITY, ScalarType::F32).is_ok() && float_arg(f64::NAN, ScalarType::F16).is_ok());
        assert!(float_arg(3.0e38, ScalarType::F32).is_ok() && float_arg(1e300, ScalarType::F64).is_ok());
        let e = float_arg(1.5, ScalarType::I32).unwrap_err();
        assert_eq!(e, ArgError::FloatForInt { value: 1.5, ty: ScalarType::I32 });
        assert!(e.is_kind() && e.to_string().contains("give an integer"));
    }
}
