//! Removal of redundant conversions (Triton's RemoveLayoutConversions, on structured IR):
//!
//! - `convert(convert(x))` becomes one conversion of `x` (none if `x` already has the target layout);
//! - a conversion of a cheap value (`arange`, `splat`, `constant`, and elementwise and shape ops over such
//!   values and scalars, at most [`REMAT_BUDGET`] ops) is replaced by recomputing the value in the target
//!   layout next to the original;
//! - a conversion of the only use of a `broadcast`, `expand_dims` or widening `cast` moves above it, so the
//!   smaller tensor is converted;
//! - conversions feeding an elementwise op move below it when its result is no wider than what they moved
//!   (the other operands are recomputed in the source layout), so a value is converted once, at its
//!   narrowest;
//! - the generic passes then drop conversions to the same layout, merge duplicates (CSE) and hoist
//!   conversions of loop-invariant values out of loops (LICM).

use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::layout::insert::{convert_before, insert_after};
use crate::layout::rules::{self, Kind, L};
use crate::ops::Op;

/// The most ops one rematerialization may clone.
pub const REMAT_BUDGET: usize = 12;

fn converts(f: &Func) -> Vec<OpId> {
    f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::ConvertLayout)).collect()
}

fn def_op(f: &Func, v: ValueId) -> Option<OpId> {
    match f.value(v).def {
        ValueDef::Result(o, _) if f.op(o).parent.is_some() => Some(o),
        _ => None,
    }
}

/// Whether `o`'s result can be recomputed in another layout by cloning it.
fn cheap(f: &Func, o: OpId) -> bool {
    let d = f.op(o);
    d.results.len() == 1
        && d.regions.is_empty()
        && d.op.is_pure()
        && match rules::kind(&d.op) {
            Kind::Source => matches!(d.op, Op::Constant(_) | Op::Splat | Op::Arange { .. }),
            Kind::Same => true,
            Kind::Special => matches!(
                d.op,
                Op::Broadcast | Op::ExpandDims { .. } | Op::Permute { .. } | Op::Reshape { .. } | Op::Join | Op::Cat
            ),
            _ => false,
        }
}

/// Plans recomputing `v` in layout `l`: the ops to clone, operands first. `None` if too costly.
fn plan(f: &Func, v: ValueId, l: &L, budget: &mut usize, out: &mut Vec<(OpId, L)>) -> Option<()> {
    if rules::layout_of(f, v).as_deref() == Some(&**l) {
        return Some(());
    }
    let o = def_op(f, v)?;
    if converted_from(f, v, l).is_some() {
        return Some(());
    }
    if !cheap(f, o) || *budget == 0 {
        return None;
    }
    *budget -= 1;
    let reqs = rules::backward(f, o, &[Some(l.clone())])?;
    for (&w, req) in f.op(o).operands.iter().zip(reqs) {
        if let Some(req) = req {
            plan(f, w, &req, budget, out)?;
        }
    }
    if !out.iter().any(|(p, pl)| *p == o && pl == l) {
        out.push((o, l.clone()));
    }
    Some(())
}

/// `x` when `v = convert_layout(x)` and `x` is already in layout `l`.
fn converted_from(f: &Func, v: ValueId, l: &L) -> Option<ValueId> {
    let p = def_op(f, v)?;
    let x = *f.op(p).operands.first()?;
    (matches!(f.op(p).op, Op::ConvertLayout) && rules::layout_of(f, x).as_deref() == Some(&**l)).then_some(x)
}

/// Clones `v`'s producer chain in layout `l`; each clone sits right after its original.
fn remat(f: &mut Func, v: ValueId, l: &L) -> Option<ValueId> {
    let mut budget = REMAT_BUDGET;
    let mut steps = Vec::new();
    plan(f, v, l, &mut budget, &mut steps)?;
    let mut made: Vec<(ValueId, L, ValueId)> = Vec::new();
    let mut result = converted_from(f, v, l).unwrap_or(v);
    for (o, lo) in steps {
        let d = f.op(o).clone();
        let reqs = rules::backward(f, o, &[Some(lo.clone())])?;
        let operands: Vec<ValueId> = d
            .operands
            .iter()
            .zip(reqs)
            .map(|(&w, req)| match req {
                Some(req) if rules::layout_of(f, w).as_deref() != Some(&*req) => converted_from(f, w, &req)
                    .or_else(|| made.iter().find(|(x, xl, _)| *x == w && *xl == req).map(|m| m.2))
                    .unwrap_or(w),
                _ => w,
            })
            .collect();
        let ty = f.ty(d.results[0]).with_layout(Some(lo.clone()));
        let r = d.parent?;
        let c = f.append(r, d.op.clone(), &operands, vec![ty], &[], d.loc);
        f.region_mut(r).ops.pop();
        insert_after(f, o, c);
        let nv = f.op(c).results[0];
        f.values[nv.index()].name = f.value(d.results[0]).name.clone();
        made.push((d.results[0], lo, nv));
        result = nv;
    }
    Some(result)
}

/// `convert(convert(x))` → `convert(x)`.
fn fold_chains(f: &mut Func) -> bool {
    let mut changed = false;
    for c in converts(f) {
        let src = f.op(c).operands[0];
        if let Some(p) = def_op(f, src)
            && matches!(f.op(p).op, Op::ConvertLayout)
        {
            f.op_mut(c).operands[0] = f.op(p).operands[0];
            changed = true;
        }
    }
    changed
}

/// Conversions of cheap values become recomputations.
fn rematerialize(f: &mut Func) -> bool {
    let mut changed = false;
    for c in converts(f) {
        if f.op(c).parent.is_none() {
            continue;
        }
        let (src, res) = (f.op(c).operands[0], f.op(c).results[0]);
        let Some(l) = rules::layout_of(f, res) else { continue };
        if let Some(nv) = remat(f, src, &l) {
            f.replace_all_uses(res, nv);
            f.unlink(c);
            changed = true;
        }
    }
    changed
}

/// A conversion that is the only use of a broadcast, `expand_dims` or widening cast moves above it.
fn sink_to_smaller(f: &mut Func) -> bool {
    let mut changed = false;
    let uses = f.use_counts();
    for c in converts(f) {
        let (src, res) = (f.op(c).operands[0], f.op(c).results[0]);
        let Some(p) = def_op(f, src) else { continue };
        let d = f.op(p).clone();
        let widening = matches!(d.op, Op::Cast)
            && f.ty(d.operands[0]).elem().map(|e| e.bits()) < f.ty(src).elem().map(|e| e.bits());
        if !(matches!(d.op, Op::Broadcast | Op::ExpandDims { .. }) || widening) || uses.get(src.index()) != Some(&1) {
            continue;
        }
        let Some(l) = rules::layout_of(f, res) else { continue };
        let Some(reqs) = rules::backward(f, p, &[Some(l.clone())]) else { continue };
        let Some(req) = reqs[0].clone() else { continue };
        // convert(op(x)) → op(convert(x)), both placed where the conversion was.
        let x = d.operands[0];
        let cx = convert_before(f, c, x, req);
        let r = f.op(c).parent.expect("linked");
        let ty = f.ty(src).with_layout(Some(l.clone()));
        let n = f.append(r, d.op.clone(), &[cx], vec![ty], &[], d.loc);
        f.region_mut(r).ops.pop();
        insert_after(f, def_op(f, cx).expect("just made"), n);
        let nv = f.op(n).results[0];
        f.values[nv.index()].name = f.value(src).name.clone();
        f.replace_all_uses(res, nv);
        f.unlink(c);
        changed = true;
    }
    changed
}

fn elem_bits(f: &Func, v: ValueId) -> u32 {
    f.ty(v).elem().map_or(0, |e| e.bits())
}

/// `op(convert(x), ...)` → `convert(op(x, ...))` for an elementwise op whose converted operands all come from
/// one layout L and have no other use, when the result is no wider than what those conversions moved: the
/// other tensor operands are recomputed in L (cheap values, or conversions from L), and one conversion of
/// the result replaces the operands'. So a value is converted once, at its narrowest, right before the
/// memory op that wants the other layout (layer norm's `y = x_hat * w + b` converts the f16 `y`, as in
/// Triton, instead of the f32 product and the f16 `b`).
fn sink_past_elementwise(f: &mut Func) -> bool {
    let mut changed = false;
    for o in f.all_ops() {
        let d = f.op(o).clone();
        let elementwise = d.results.len() == 1
            && d.regions.is_empty()
            && d.op.is_pure()
            && rules::kind(&d.op) == Kind::Same
            && !matches!(d.op, Op::ConvertLayout);
        if d.parent.is_none() || !elementwise {
            continue;
        }
        let res = d.results[0];
        let Some(ld) = rules::layout_of(f, res) else { continue };
        let uses = f.use_counts();
        // The layout the operands' conversions come from, and the bits per element they move.
        let mut from: Option<L> = None;
        let mut moved = 0;
        let mut single = true;
        for &w in &d.operands {
            let Some(p) = def_op(f, w).filter(|&p| matches!(f.op(p).op, Op::ConvertLayout)) else { continue };
            let Some(lx) = rules::layout_of(f, f.op(p).operands[0]) else { continue };
            single &= uses.get(w.index()) == Some(&1) && from.as_ref().is_none_or(|l| *l == lx);
            from = Some(lx);
            moved += elem_bits(f, w);
        }
        let Some(ls) = from else { continue };
        if !single || ls == ld || elem_bits(f, res) > moved {
            continue;
        }
        let Some(reqs) = rules::backward(f, o, &[Some(ls.clone())]) else { continue };
        let feasible = d.operands.iter().zip(&reqs).all(|(&w, req)| match req {
            Some(req) => plan(f, w, req, &mut REMAT_BUDGET.clone(), &mut Vec::new()).is_some(),
            None => true,
        });
        if !feasible {
            continue;
        }
        let mut operands = Vec::with_capacity(d.operands.len());
        for (&w, req) in d.operands.iter().zip(reqs) {
            operands.push(match req {
                Some(req) => remat(f, w, &req).expect("planned above"),
                None => w,
            });
        }
        let r = d.parent.expect("linked");
        let n = f.append(r, d.op.clone(), &operands, vec![f.ty(res).with_layout(Some(ls.clone()))], &[], d.loc);
        f.region_mut(r).ops.pop();
        insert_after(f, o, n);
        let nv = f.op(n).results[0];
        f.values[nv.index()].name = f.value(res).name.clone();
        let c = f.append(r, Op::ConvertLayout, &[nv], vec![f.ty(res).clone()], &[], d.loc);
        f.region_mut(r).ops.pop();
        insert_after(f, n, c);
        f.replace_all_uses(res, f.op(c).results[0]);
        f.unlink(o);
        changed = true;
    }
    changed
}

/// Runs the rewrites to a fixed point (each removes or moves a conversion, so this ends).
pub fn cleanup(f: &mut Func) {
    for _ in 0..32 {
        let mut changed = fold_chains(f);
        changed |= rematerialize(f);
        changed |= sink_to_smaller(f);
        changed |= sink_past_elementwise(f);
        crate::passes::dce(f);
        if !changed {
            break;
        }
    }
}
