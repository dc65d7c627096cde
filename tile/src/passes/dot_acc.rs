//! `x + dot(a, b, 0)` → `dot(a, b, x)` (and `dot(a, b, 0) + x`): the accumulation form users write as
//! `acc += tl.dot(a, b)` becomes the one tensor cores run in place, with no separate add of a whole tile per
//! iteration and an accumulator the pipeliner can keep in flight. Triton combines the same pattern; like it,
//! only when the dot has no other use and its accumulator is a constant zero (the sum then changes only by the
//! order of one addition). So is `x + dot_scaled(..., 0, ...)`, whose accumulator is its operand 4.

use crate::ir::{Func, ValueDef, ValueId};
use crate::ops::{BinOp, Const, Op};

/// Whether `v` is a constant 0 (scalar or splatted).
fn is_zero(f: &Func, v: ValueId) -> bool {
    match f.value(v).def {
        ValueDef::Result(p, _) => match f.op(p).op {
            Op::Constant(Const::Int(0)) => true,
            Op::Constant(Const::Float(x)) => x == 0.0,
            Op::Splat => is_zero(f, f.op(p).operands[0]),
            _ => false,
        },
        ValueDef::Arg(..) => false,
    }
}

/// Rewrites every `add` of a single-use zero-accumulator `dot` and a value of the dot's type.
pub fn combine_dot_add(f: &mut Func) -> bool {
    let uses = f.use_counts();
    let mut changed = false;
    for o in f.all_ops() {
        let d = f.op(o);
        if !matches!(d.op, Op::Binary { op: BinOp::Add, .. }) || d.operands.len() != 2 {
            continue;
        }
        let (x, y, r) = (d.operands[0], d.operands[1], d.results[0]);
        let dot_of = |v: ValueId| match f.value(v).def {
            ValueDef::Result(p, 0)
                if matches!(f.op(p).op, Op::Dot { .. } | Op::DotScaled { .. }) && uses[v.index()] == 1 =>
            {
                Some(p)
            }
            _ => None,
        };
        let Some((dot, other)) = dot_of(y).map(|p| (p, x)).or_else(|| dot_of(x).map(|p| (p, y))) else { continue };
        let acc = if matches!(f.op(dot).op, Op::DotScaled { .. }) { 4 } else { 2 };
        if !is_zero(f, f.op(dot).operands[acc]) || f.ty(other) != f.ty(r) || f.ty(f.op(dot).results[0]) != f.ty(r) {
            continue;
        }
        // The dot moves to the add's place (its operands are defined before the add, which may come later).
        f.op_mut(dot).operands[acc] = other;
        let dr = f.op(dot).results[0];
        f.replace_all_uses(r, dr);
        let region = f.op(o).parent.expect("linked op");
        f.unlink(dot);
        let ops = &mut f.region_mut(region).ops;
        let at = ops.iter().position(|&x| x == o).expect("linked op");
        ops[at] = dot;
        f.op_mut(dot).parent = Some(region);
        f.op_mut(o).parent = None;
        changed = true;
    }
    changed
}
