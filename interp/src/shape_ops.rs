//! Ops that only move elements: splat, broadcast, expand_dims, reshape, permute, join, split, cat.

use crate::Fault;
use crate::value::Tensor;
use tessel_tile::ops::Op;
use tessel_tile::types::Type;

/// Evaluates a shape op; `result` is the type of its (first) result.
pub(super) fn eval(op: &Op, ins: &[&Tensor], result: &Type) -> Result<Vec<Tensor>, Fault> {
    let x = ins[0];
    let out_shape: Vec<u32> = result.shape().to_vec();
    Ok(match op {
        Op::Splat => vec![Tensor::splat(&out_shape, x.elem, x.data[0])],
        Op::Broadcast => {
            let in_strides = Tensor::strides(&x.shape);
            let n: usize = out_shape.iter().map(|&d| d as usize).product();
            let data = (0..n)
                .map(|i| {
                    let idx = Tensor::unravel(&out_shape, i);
                    let src: usize = idx
                        .iter()
                        .zip(&x.shape)
                        .zip(&in_strides)
                        .map(|((&j, &d), &s)| if d == 1 { 0 } else { j as usize * s })
                        .sum();
                    x.data[src]
                })
                .collect();
            vec![Tensor { shape: out_shape, elem: x.elem, data }]
        }
        // Row-major order is unchanged by these.
        Op::ExpandDims { .. } | Op::Reshape { .. } => {
            vec![Tensor { shape: out_shape, elem: x.elem, data: x.data.clone() }]
        }
        Op::Permute { order } => {
            let in_strides = Tensor::strides(&x.shape);
            let n = x.numel();
            let data = (0..n)
                .map(|i| {
                    let idx = Tensor::unravel(&out_shape, i);
                    // Output dim d is input dim order[d].
                    let src: usize = idx.iter().zip(order).map(|(&j, &d)| j as usize * in_strides[d as usize]).sum();
                    x.data[src]
                })
                .collect();
            vec![Tensor { shape: out_shape, elem: x.elem, data }]
        }
        Op::Join => {
            let data = x.data.iter().zip(&ins[1].data).flat_map(|(&a, &b)| [a, b]).collect();
            vec![Tensor { shape: out_shape, elem: x.elem, data }]
        }
        Op::Split => {
            let lo = x.data.iter().step_by(2).copied().collect();
            let hi = x.data.iter().skip(1).step_by(2).copied().collect();
            vec![
                Tensor { shape: out_shape.clone(), elem: x.elem, data: lo },
                Tensor { shape: out_shape, elem: x.elem, data: hi },
            ]
        }
        Op::Cat => {
            let mut data = x.data.clone();
            data.extend_from_slice(&ins[1].data);
            vec![Tensor { shape: out_shape, elem: x.elem, data }]
        }
        other => return Err(Fault::CannotRun(other.name())),
    })
}
