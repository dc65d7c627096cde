//! The operands of a block-scaled MMA (`tcgen05_mma_scaled`) as its products read them: each value decoded from
//! its format (e4m3, e5m2, or e2m1 packed two per byte along K, the low nibble first) and multiplied by the scale
//! of its block of VEC values along K (ue8m0 `2^(x - 127)` in a `u8`, or ue4m3); the MMA is then the f32 dot of
//! the results, products taken exactly and accumulated in K order with one f32 rounding per step. Auto mode's
//! `dot_scaled` computes the same where its target runs it on that MMA.

use tessel_tile::eval::value::{Val, decode_ue4m3, decode_ue8m0, packed_e2m1, to_bits};
use tessel_tile::ops::MxFormat;
use tessel_tile::types::{Elem, ScalarType};

use super::Tensor;

/// The byte of `x`, an element of a `u8` or fp8 tensor.
fn byte(x: Val, elem: Elem) -> u8 {
    to_bits(x, elem.scalar().expect("a scalar element")) as u8
}

/// The value of a scale element.
fn scale(x: Val, elem: Elem) -> f64 {
    if elem == Elem::Scalar(ScalarType::F8E4M3) { decode_ue4m3(byte(x, elem)) } else { decode_ue8m0(byte(x, elem)) }
}

/// Value `k` of a row of `t` (a `[rows, K']` view: `row` gives the element of K' index `i`), in format `f`.
fn value(t: &Tensor, at: impl Fn(usize) -> usize, k: usize, f: MxFormat) -> f64 {
    match f {
        MxFormat::E2m1 => {
            let b = byte(t.data[at(k / 2)], t.elem);
            packed_e2m1(&[b], k % 2)
        }
        _ => t.data[at(k)].as_f64(),
    }
}

/// A `[M, K']` and B `[K'', N]` with their scales `[M, K / VEC]` and `[N, K / VEC]`: the f32 tensors `[M, K]` and
/// `[K, N]` the MMA multiplies.
pub(crate) fn dequantize(
    a: &Tensor,
    b: &Tensor,
    sa: &Tensor,
    sb: &Tensor,
    fa: MxFormat,
    fb: MxFormat,
) -> (Tensor, Tensor) {
    let (m, n) = (a.shape[0] as usize, b.shape[1] as usize);
    let k = a.shape[1] as usize * (8 / fa.bits()) as usize;
    let (ka, kb) = (a.shape[1] as usize, b.shape[0] as usize);
    let groups = sa.shape[1] as usize;
    let vec = k / groups;
    let f32 = Elem::Scalar(ScalarType::F32);
    let mut av = Vec::with_capacity(m * k);
    for i in 0..m {
        for kk in 0..k {
            let s = scale(sa.data[i * groups + kk / vec], sa.elem);
            av.push(Val::Float(value(a, |c| i * ka + c, kk, fa) * s));
        }
    }
    let mut bv = vec![Val::Float(0.0); k * n];
    for j in 0..n {
        for kk in 0..k {
            let s = scale(sb.data[j * groups + kk / vec], sb.elem);
            bv[kk * n + j] = Val::Float(value(b, |r| r * n + j, kk, fb) * s);
        }
    }
    debug_assert_eq!(kb * (8 / fb.bits()) as usize, k);
    (
        Tensor { shape: vec![m as u32, k as u32], elem: f32, data: av },
        Tensor { shape: vec![k as u32, n as u32], elem: f32, data: bv },
    )
}
