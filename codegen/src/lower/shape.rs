//! Shape ops that keep every element in its thread: `permute` (`tl.trans`), `reshape`, `join`, `split`, `cat`.
//!
//! Auto mode gives their results the layouts of `tessel_tile::layout::rules` (`permute`, `reshape`, `join`,
//! `split`, `cat`), which leave each element in the register slot of the thread that already holds it, so
//! lowering is register re-indexing: every result register takes the operand register whose element
//! corresponds to it ([`gather`]). The correspondences are those of the interpreter (`interp/src/shape_ops.rs`):
//! `permute` moves operand dim `order[i]` to result dim `i`; `reshape` keeps the row-major flat index (also
//! with `can_reorder`, which the interpreter does not use to reorder); `join(a, b)` puts `a` at index 0 and `b`
//! at index 1 of a new last dim, `split` undoes it (into scalars, for a `[2]` tensor every thread holds whole:
//! Gluon's packed `add2` of two scalars in a reduction); `cat(a, b)` stacks `b` after `a` along dim 0. When the
//! layouts put some element in another thread the op needs a `convert_layout`, and lowering says so.

use tessel_tile::ir::OpData;
use tessel_tile::ops::Op;

use super::Lower;
use super::coords::{Source, bases, flatten, gather, layout_of, reg_coords};
use crate::CompileError;

pub(crate) fn shape_op(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let f = l.f;
    let in_tys: Vec<_> = data.operands.iter().map(|&v| f.ty(v).clone()).collect();
    let ins: Vec<_> = in_tys.iter().map(layout_of).collect::<Result<_, _>>()?;
    let regs: Vec<Vec<_>> = data.operands.iter().map(|&v| l.get(v).map(<[_]>::to_vec)).collect::<Result<_, _>>()?;
    let in_shape = in_tys[0].shape().to_vec();
    let rank = in_shape.len();
    let id = |c: &[u32]| c.to_vec();
    for (j, &v) in data.results.iter().enumerate() {
        let out_ty = f.ty(v);
        if matches!(data.op, Op::Split) && !out_ty.is_tensor() {
            // The halves of a `[2]` tensor are scalars: every thread must hold both elements.
            let Some(r) = scalar_half(ins[0], j as u32) else {
                return Err(CompileError::new(format!(
                    "`split` of {} into scalars needs both elements in every thread, as registers",
                    in_tys[0]
                )));
            };
            l.vals.insert(v, vec![regs[0][r as usize]]);
            continue;
        }
        let out = layout_of(out_ty)?;
        let out_shape = out_ty.shape().to_vec();
        let mapped = match &data.op {
            Op::Permute { order } => {
                let order = order.clone();
                let fs = move |c: &[u32]| order.iter().map(|&d| c[d as usize]).collect::<Vec<u32>>();
                gather(&[Source { regs: &regs[0], layout: ins[0], key: &fs, tag: vec![0; rank] }], out, &id)
            }
            Op::Reshape { .. } => {
                let (si, so) = (in_shape.clone(), out_shape.clone());
                let fs = move |c: &[u32]| vec![flatten(c, &si)];
                let fd = move |c: &[u32]| vec![flatten(c, &so)];
                gather(&[Source { regs: &regs[0], layout: ins[0], key: &fs, tag: vec![0] }], out, &fd)
            }
            Op::Join => {
                // Operand `i` is the result's slice at index `i` of the new last dim.
                let fs = |c: &[u32]| c.iter().copied().chain([0]).collect::<Vec<u32>>();
                let tag = |i: u32| (0..=rank).map(|d| if d == rank { i } else { 0 }).collect();
                let srcs = [
                    Source { regs: &regs[0], layout: ins[0], key: &fs, tag: tag(0) },
                    Source { regs: &regs[1], layout: ins[1], key: &fs, tag: tag(1) },
                ];
                gather(&srcs, out, &id)
            }
            Op::Split => {
                // Result `j` is the operand's slice at index `j` of its last dim (size 2).
                let fd = |c: &[u32]| c.iter().copied().chain([0]).collect::<Vec<u32>>();
                let tag = (0..rank).map(|d| if d == rank - 1 { j as u32 } else { 0 }).collect();
                gather(&[Source { regs: &regs[0], layout: ins[0], key: &id, tag }], out, &fd)
            }
            Op::Cat => {
                // `b` follows `a` along dim 0: its dim-0 coordinates gain the (power-of-two) size of `a`'s.
                let mut tag = vec![0; rank];
                tag[0] = in_shape[0];
                let srcs = [
                    Source { regs: &regs[0], layout: ins[0], key: &id, tag: vec![0; rank] },
                    Source { regs: &regs[1], layout: ins[1], key: &id, tag },
                ];
                gather(&srcs, out, &id)
            }
            other => return Err(CompileError::new(format!("`{}` is not a shape op", other.name()))),
        };
        let Some(out_regs) = mapped else {
            let from: Vec<String> = in_tys.iter().map(|t| t.to_string()).collect();
            return Err(CompileError::new(format!(
                "`{}` from {} to {out_ty} needs elements held by other threads: the layouts do not allow \
                 re-indexing registers in place; a convert_layout is needed",
                data.op.name(),
                from.join(" and ")
            )));
        };
        l.vals.insert(v, out_regs);
    }
    Ok(())
}

/// The register holding element `j` of a `[2]` tensor laid out by `src` in every thread, when every thread
/// holds the whole tensor (no lane, warp or CTA basis moves it).
fn scalar_half(src: &tessel_layouts::LinearLayout, j: u32) -> Option<u32> {
    let everywhere = ["lane", "warp", "block"].iter().all(|d| bases(src, d).iter().all(|b| b.iter().all(|&x| x == 0)));
    everywhere.then(|| (0..src.in_dim_size("register")).find(|&r| reg_coords(src, r) == [j])).flatten()
}
