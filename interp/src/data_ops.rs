//! Data-dependent and target-specific ops: `gather`, `histogram`, and the ops that read the machine
//! (`globaltimer`, `smid`) or order whole grids (`gdc_wait`, `gdc_launch_dependents`). `inline_asm` is PTX,
//! which the interpreter cannot run (nor can Triton's).

use crate::Fault;
use crate::value::Tensor;
use tessel_tile::eval::value::Val;
use tessel_tile::ops::Op;
use tessel_tile::types::{Elem, ScalarType};

/// Evaluates one of this module's ops.
pub(super) fn eval(op: &Op, ins: &[&Tensor]) -> Result<Vec<Tensor>, Fault> {
    Ok(match op {
        Op::Gather { axis } => vec![gather(ins[0], ins[1], *axis as usize)?],
        Op::Histogram { num_bins } => vec![histogram(ins[0], ins.get(1).copied(), *num_bins)],
        Op::InlineAsm { .. } => return Err(Fault::InlineAsm),
        Op::GlobalTimer => {
            // %globaltimer counts nanoseconds; the host clock stands in for it.
            let ns =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
            vec![Tensor::scalar(Elem::Scalar(ScalarType::I64), Val::Int(ns))]
        }
        // Every program runs on "multiprocessor 0".
        Op::SmId => vec![Tensor::scalar(Elem::Scalar(ScalarType::I32), Val::Int(0))],
        // One launch at a time: the grid this one depends on has finished, and dependents start after it.
        Op::GdcWait | Op::GdcLaunchDependents => vec![],
        other => return Err(Fault::CannotRun(other.name())),
    })
}

fn gather(src: &Tensor, index: &Tensor, axis: usize) -> Result<Tensor, Fault> {
    let strides = Tensor::strides(&src.shape);
    let mut data = Vec::with_capacity(index.numel());
    for (i, v) in index.data.iter().enumerate() {
        let mut at = Tensor::unravel(&index.shape, i);
        let j = v.as_i64();
        if j < 0 || j >= src.shape[axis] as i64 {
            return Err(Fault::GatherIndex { index: j, at, axis, size: src.shape[axis] });
        }
        at[axis] = j as u32;
        data.push(src.data[at.iter().zip(&strides).map(|(&c, &s)| c as usize * s).sum::<usize>()]);
    }
    Ok(Tensor { shape: index.shape.clone(), elem: src.elem, data })
}

fn histogram(input: &Tensor, mask: Option<&Tensor>, num_bins: u32) -> Tensor {
    let mut counts = vec![0i64; num_bins as usize];
    for (i, v) in input.data.iter().enumerate() {
        let on = mask.is_none_or(|m| m.data[i].as_i64() != 0);
        let b = v.as_i64();
        if on && (0..num_bins as i64).contains(&b) {
            counts[b as usize] += 1;
        }
    }
    Tensor {
        shape: vec![num_bins],
        elem: Elem::Scalar(ScalarType::I32),
        data: counts.into_iter().map(Val::Int).collect(),
    }
}
