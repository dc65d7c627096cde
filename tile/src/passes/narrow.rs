//! Float arithmetic narrowed to the type its result is rounded to: `cast<N>(cast<W>(a) op cast<W>(b))`, with `a`
//! and `b` of type N, becomes `a op b` computed in N. LLVM's InstCombine does this to the IR of every Triton
//! kernel (`fptrunc (fadd (fpext a), (fpext b))` → `fadd a, b`), so `(x.to(tl.float32) + y.to(tl.float32)).to(
//! tl.float16)` runs as one `add.f16x2` per two elements in Triton's PTX, not as two conversions, an f32 add and
//! a pack.
//!
//! The result is the same bits: for `+`, `-` with W's precision at least 2p+1 and `*` with at least 2p (p is N's
//! significand width, the implicit bit included), rounding the exact result to W and then to N gives the
//! correctly rounded N result (Figueroa's double-rounding bound). f32 (24 bits) covers f16 (11) and bf16 (8), and
//! f64 (53) covers f32 (24). The target decides how N's arithmetic runs (f16 natively everywhere, bf16 from
//! sm_90, else widened and rounded once, which is again the same bits).
//!
//! Through an `if` too, as InstCombine folds the truncation into a phi: when the only use of an `if` result is
//! such a cast and every branch yields a widened N value or a narrowable operation for it, the result becomes N
//! (tutorial 05's backward: `partial_db = dy` in one branch, `dy + tl.load(DB)` in the other, stored as f16).

use super::edits::Edits;
use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::ops::{BinOp, Op};
use crate::types::{Elem, ScalarType, Type};

/// Significand width with the implicit bit, for the float types narrowing applies to.
fn precision(s: ScalarType) -> Option<u32> {
    match s {
        ScalarType::BF16 => Some(8),
        ScalarType::F16 => Some(11),
        ScalarType::F32 => Some(24),
        ScalarType::F64 => Some(53),
        _ => None,
    }
}

fn float_of(ty: &Type) -> Option<ScalarType> {
    match ty.elem()? {
        Elem::Scalar(s) => precision(s).map(|_| s),
        Elem::Ptr(..) => None,
    }
}

/// `x` when `v` is `cast<W>(x)` with `x` of type `narrow`'s element (an exact widening).
fn widened_from(f: &Func, v: ValueId, narrow: ScalarType) -> Option<ValueId> {
    let ValueDef::Result(p, 0) = f.value(v).def else { return None };
    let d = f.op(p);
    (d.op == Op::Cast && float_of(f.ty(d.operands[0])) == Some(narrow)).then(|| d.operands[0])
}

/// `(op, a, b)` when `v` is a single-use `cast<W>(a) op cast<W>(b)` whose rounding to `narrow` equals `a op b`
/// computed in `narrow`.
fn narrowable_binary(f: &Func, uses: &[u32], v: ValueId, narrow: ScalarType) -> Option<(Op, ValueId, ValueId)> {
    let ValueDef::Result(p, 0) = f.value(v).def else { return None };
    let d = f.op(p);
    let Op::Binary { op, .. } = d.op else { return None };
    let (w, n) = (precision(float_of(f.ty(v))?)?, precision(narrow)?);
    let exact = match op {
        BinOp::Add | BinOp::Sub => w > 2 * n,
        BinOp::Mul => w >= 2 * n,
        _ => false,
    };
    if !exact || uses[v.index()] != 1 {
        return None;
    }
    let a = widened_from(f, d.operands[0], narrow)?;
    let b = widened_from(f, d.operands[1], narrow)?;
    Some((d.op.clone(), a, b))
}

/// A value of type `ty` (N) equal to the rounding of the W value `v` to N, made by `edits` before `anchor`; `None`
/// when `v` is neither a widened N value nor a narrowable operation.
fn narrowed(f: &mut Func, edits: &mut Edits, uses: &[u32], v: ValueId, ty: &Type, anchor: OpId) -> Option<ValueId> {
    let n = float_of(ty)?;
    if let Some(x) = widened_from(f, v, n) {
        return Some(x);
    }
    let (op, a, b) = narrowable_binary(f, uses, v, n)?;
    let x = edits.new_op_before(f, anchor, op, &[a, b], ty.clone());
    f.values[x.index()].name = f.value(v).name.clone();
    Some(x)
}

/// Whether every branch of `if` op `p` yields, as result `k`, a value [`narrowed`] can make in `narrow`.
fn branches_narrowable(f: &Func, uses: &[u32], p: OpId, k: usize, narrow: ScalarType) -> bool {
    f.op(p).regions.iter().all(|&r| {
        let Some(&y) = f.region(r).ops.last() else { return false };
        let v = f.op(y).operands[k];
        widened_from(f, v, narrow).is_some() || narrowable_binary(f, uses, v, narrow).is_some()
    })
}

/// Narrows every such cast of `f`; whether anything changed.
pub fn narrow_float_arith(f: &mut Func) -> bool {
    let uses = f.use_counts();
    let mut edits = Edits::default();
    for o in f.all_ops() {
        let d = f.op(o);
        if d.op != Op::Cast || d.parent.is_none() {
            continue;
        }
        let (src, res) = (d.operands[0], d.results[0]);
        let ty = f.ty(res).clone();
        let (Some(n), Some(w)) = (float_of(&ty), float_of(f.ty(src))) else { continue };
        if precision(w) <= precision(n) {
            continue;
        }
        match f.value(src).def {
            ValueDef::Result(p, 0) if matches!(f.op(p).op, Op::Binary { .. }) => {
                if let Some(v) = narrowed(f, &mut edits, &uses, src, &ty, o) {
                    // The value the source named is the rounded one.
                    f.values[v.index()].name = f.value(res).name.clone();
                    edits.replace(res, v);
                }
            }
            ValueDef::Result(p, k) if f.op(p).op == Op::If && uses[src.index()] == 1 => {
                let k = k as usize;
                if !branches_narrowable(f, &uses, p, k, n) {
                    continue;
                }
                for r in f.op(p).regions.clone() {
                    let y = *f.region(r).ops.last().expect("a branch ends in its yield");
                    let v = f.op(y).operands[k];
                    let x = narrowed(f, &mut edits, &uses, v, &ty, y).expect("checked narrowable");
                    f.op_mut(y).operands[k] = x;
                }
                f.values[src.index()].ty = ty;
                edits.replace(res, src);
            }
            _ => {}
        }
    }
    edits.apply(f)
}
