//! How a pipelined load's tile reaches the tensor cores through shared memory: the `local_alloc`s that layout
//! assignment staged it in, which the load's ring replaces, and the views of the ring buffer they become.
//!
//! A staging is the chain from the loaded tile to one `local_alloc`: nothing (the dot reads the tile as
//! loaded), a `permute` (`tl.trans(x)`, attention's `desc.load(...).T`), or, for TMA loads, any chain of
//! `reshape`s and `permute`s (tutorial 10's scales, loaded as a 5-D block and unpacked into `[rows, scales]`).
//! Each register op of the chain becomes the same view of the ring buffer (`memdesc_permute`,
//! `memdesc_reshape`), so the copy lands as loaded and the reader sees it through the views. The reader is a
//! wgmma or tcgen05 MMA operand, or the source of a `tcgen05_copy` (block-scaled MMAs' scales).

use tessel_tile::ir::{Func, OpId, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::Type;

use crate::error::{SchedError, SkipReason};

/// One use of a pipelined load: its `local_alloc` and the views between the load and it.
#[derive(Clone, Debug)]
pub struct Staging {
    pub alloc: OpId,
    /// The register ops between the load and the `local_alloc`, in order, and the view each becomes.
    pub views: Vec<(OpId, View)>,
}

/// A view of a ring buffer standing for a register op of a staging chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    /// `memdesc_permute` with this order.
    Permute(Vec<u32>),
    /// `memdesc_reshape` to this shape.
    Reshape(Vec<u32>),
}

impl View {
    /// The type of this view of a buffer of type `t`.
    pub fn of(&self, t: &Type) -> Result<Type, SchedError> {
        let Type::MemDesc { shape, elem, layout } = t else { return Err(SchedError::NotAMemDesc(t.clone())) };
        let view_err = |e| SchedError::View(Box::new(e));
        let (shape, layout) = match self {
            View::Permute(order) => (
                order.iter().map(|&d| shape[d as usize]).collect(),
                tessel_tile::layout::shared_views::permute(layout, order).map_err(view_err)?,
            ),
            View::Reshape(to) => {
                (to.as_slice().into(), tessel_tile::layout::shared_views::reshape(layout, to).map_err(view_err)?)
            }
        };
        Ok(Type::MemDesc { shape, elem: *elem, layout })
    }

    /// The op that makes this view.
    pub fn op(&self) -> Op {
        match self {
            View::Permute(order) => Op::MemDescPermute { order: order.clone() },
            View::Reshape(_) => Op::MemDescReshape,
        }
    }
}

impl Staging {
    /// The type of this staging's view of a ring buffer of type `buffer`.
    pub fn view_of(&self, buffer: &Type) -> Result<Type, SchedError> {
        self.views.iter().try_fold(buffer.clone(), |t, (_, v)| v.of(&t))
    }

    /// The ops the ring replaces: the `local_alloc` and the register ops before it.
    pub fn ops(&self) -> impl Iterator<Item = OpId> + '_ {
        std::iter::once(self.alloc).chain(self.views.iter().map(|(x, _)| *x))
    }
}

/// How loaded `v` is staged for the tensor cores: one chain per use ending in a `local_alloc` that an MMA reads
/// as an operand or a `tcgen05_copy` copies, each op of the chain used only by the next. `chains` allows
/// reshapes and more than one op (TMA loads, whose ring buffer is the descriptor's block); otherwise a chain is
/// the `local_alloc` alone or after one `permute` (a cp.async ring holds the tile as loaded, the first staging's
/// permute undone). None when any use of `v` is something else.
pub(crate) fn stagings(f: &Func, ops: &[OpId], v: ValueId, uses: &[u32], chains: bool) -> Option<Vec<Staging>> {
    let user = |t: ValueId| ops.iter().copied().find(|&y| f.op(y).operands.contains(&t));
    let mut out = Vec::new();
    let mut seen = 0;
    for &y in ops {
        let n = f.op(y).operands.iter().filter(|&&o| o == v).count();
        if n == 0 {
            continue;
        }
        seen += n;
        let (mut x, mut views) = (y, Vec::new());
        loop {
            let xd = f.op(x);
            let view = match &xd.op {
                Op::LocalAlloc if xd.operands.len() == 1 => break,
                Op::Permute { order } => View::Permute(order.clone()),
                Op::Reshape { .. } if chains => View::Reshape(f.ty(xd.results[0]).shape().to_vec()),
                _ => return None,
            };
            let r = xd.results[0];
            if uses[r.index()] != 1 || (!chains && !views.is_empty()) {
                return None;
            }
            views.push((x, view));
            x = user(r)?;
        }
        out.push(Staging { alloc: x, views });
    }
    // A use elsewhere (after the loop, or inside a nested region) leaves the count short.
    let all = seen == uses[v.index()] as usize && !out.is_empty();
    (all && out.iter().all(|s| read_by_tensor_cores(f, ops, f.op(s.alloc).results[0]))).then_some(out)
}

/// Whether each staging of `stagings` reads `buffer` through its views: the view's layout equals its
/// `local_alloc`'s bit for bit, or (a `tcgen05_copy`'s source) every copy reading it has a plan from the view.
/// Else `mismatch`.
pub(crate) fn views_match(
    f: &Func,
    ops: &[OpId],
    buffer: &Type,
    stagings: &[Staging],
    mismatch: SkipReason,
) -> Result<(), SkipReason> {
    for s in stagings {
        let view = s.view_of(buffer).map_err(SkipReason::Permute)?;
        let staged_v = f.op(s.alloc).results[0];
        let staged = f.ty(staged_v);
        let same = matches!((staged.memdesc(), view.memdesc()), (Some(s), Some(b)) if s.2.linear == b.2.linear);
        if !same && !copied_from(f, ops, staged_v, &view) {
            return Err(mismatch);
        }
    }
    Ok(())
}

/// Whether `staged` is read only by `tcgen05_copy`s, each of which can copy from `view` instead.
fn copied_from(f: &Func, ops: &[OpId], staged: ValueId, view: &Type) -> bool {
    let readers: Vec<OpId> = ops.iter().copied().filter(|&x| f.op(x).operands.contains(&staged)).collect();
    !readers.is_empty()
        && readers.iter().all(|&x| {
            let d = f.op(x);
            d.op == Op::Tcgen05Copy
                && d.operands[0] == staged
                && tessel_tile::tcgen05_copy::plan(view, f.ty(d.operands[1])).is_ok()
        })
}

/// The permutation that undoes `order`.
pub(crate) fn inverse(order: &[u32]) -> Vec<u32> {
    let mut inv = vec![0; order.len()];
    for (i, &d) in order.iter().enumerate() {
        inv[d as usize] = i as u32;
    }
    inv
}

/// Whether memdesc `m` is an operand A or B of a `warpgroup_dot` or a `tcgen05_mma` among `ops`, or the source
/// of a `tcgen05_copy`. (Auto mode's `tcgen05_mma`s wait for their barrier right after they issue, so the ring
/// slot an MMA read is free by the time the refill after it comes; one left in flight ([`crate::mma_flight`])
/// has waited for the previous one, whose slot the refill takes. A `tcgen05_copy` runs before the MMA it feeds,
/// in order on the tensor cores, so the MMA's commit covers it too.)
fn read_by_tensor_cores(f: &Func, ops: &[OpId], m: ValueId) -> bool {
    ops.iter().any(|&x| {
        let d = f.op(x);
        match d.op {
            Op::WarpGroupDot { .. } | Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. } => d.operands[..2].contains(&m),
            Op::Tcgen05Copy => d.operands[0] == m,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        tessel_tile::parse::parse_type(text).unwrap()
    }

    /// Tutorial 10's scales: a 5-D TMA block `[1, rep_m, rep_k, 2, 256]` unpacked as the tutorial unpacks it in
    /// registers (`reshape(rep_m, rep_k, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(rows, scales)`), seen as views of
    /// the block's unswizzled buffer: `tcgen05.cp` copies the scales from that view for every block the
    /// tutorial's configurations load.
    #[test]
    fn tutorial_scale_blocks_are_copied_through_their_unpacking_views() {
        for (rep_m, rep_k, elem) in
            [(1, 1, "u8"), (2, 1, "u8"), (1, 2, "u8"), (2, 2, "u8"), (1, 4, "f8e4m3"), (2, 4, "f8e4m3")]
        {
            let buffer = ty(&format!("memdesc<1x{rep_m}x{rep_k}x2x256x{elem}, NVMMASharedLayout(0, 8, rank=5)>"));
            let (rows, scales) = (128 * rep_m, 4 * rep_k);
            let staging = Staging {
                alloc: OpId(0),
                views: vec![
                    (OpId(0), View::Reshape(vec![rep_m, rep_k, 32, 4, 4])),
                    (OpId(0), View::Permute(vec![0, 3, 2, 1, 4])),
                    (OpId(0), View::Reshape(vec![rows, scales])),
                ],
            };
            let view = staging.view_of(&buffer).unwrap_or_else(|e| panic!("{rep_m}x{rep_k}: {e:?}"));
            let dst = ty(&format!("memdesc<{rows}x{scales}x{elem}, TensorMemoryScalesLayout()>"));
            let plan = tessel_tile::tcgen05_copy::plan(&view, &dst);
            assert!(plan.is_ok(), "{rep_m}x{rep_k} {elem}: {plan:?}\n{view}");
        }
    }
}
