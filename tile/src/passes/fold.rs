//! Constant folding and algebraic simplification.
//!
//! Folding evaluates with the interpreter's own element semantics ([`crate::eval::arith`]), so a folded
//! program computes exactly what the unfolded one would. Simplifications: `x+0`, `x-0`, `x*1`, `x/1`, `x|0`,
//! `x^0`, integer `x*0`, `x&0`; `select` on a constant condition; casts, broadcasts and reshapes to the same
//! type; `permute∘permute` (the identity disappears); splats and broadcasts of constants become constants.

use crate::eval::arith;
use crate::eval::value::{Val, convert};
use crate::ir::{Func, OpId, ValueId};
use crate::ops::{BinOp, Const, Op};
use crate::passes::edits::Edits;
use crate::types::{Elem, ScalarType, Type};

pub fn fold(f: &mut Func) -> bool {
    let mut edits = Edits::default();
    for o in f.all_ops() {
        edits.resolve_operands(f, o);
        let Some(rewrite) = simplify(f, o) else { continue };
        let result = f.op(o).results[0];
        let replacement = match rewrite {
            Rewrite::Value(v) => v,
            Rewrite::Constant(c) => {
                let ty = f.ty(result).clone();
                new_constant(f, &mut edits, o, c, ty)
            }
            Rewrite::Permute(x, order) => {
                let ty = f.ty(result).clone();
                edits.new_op_before(f, o, Op::Permute { order }, &[x], ty)
            }
        };
        edits.replace(result, replacement);
        edits.remove(o);
    }
    edits.apply(f)
}

enum Rewrite {
    Value(ValueId),
    Constant(Const),
    Permute(ValueId, Vec<u32>),
}

fn constant_of(f: &Func, v: ValueId) -> Option<Const> {
    match f.value(v).def {
        crate::ir::ValueDef::Result(o, 0) => match f.op(o).op {
            Op::Constant(c) => Some(c),
            _ => None,
        },
        _ => None,
    }
}

fn to_val(c: Const) -> Val {
    match c {
        Const::Int(i) => Val::Int(i),
        Const::Float(x) => Val::Float(x),
    }
}

fn from_val(v: Val) -> Const {
    match v {
        Val::Float(x) => Const::Float(x),
        other => Const::Int(other.as_i64()),
    }
}

fn scalar(t: &Type) -> Option<ScalarType> {
    t.elem().and_then(Elem::scalar)
}

fn is(c: Option<Const>, want: f64) -> bool {
    match c {
        Some(Const::Int(i)) => i as f64 == want,
        Some(Const::Float(x)) => x == want,
        None => false,
    }
}

fn simplify(f: &Func, o: OpId) -> Option<Rewrite> {
    let d = f.op(o);
    if d.results.len() != 1 {
        return None;
    }
    let ins = &d.operands;
    let consts: Vec<Option<Const>> = ins.iter().map(|&v| constant_of(f, v)).collect();
    let rty = f.ty(d.results[0]);
    match &d.op {
        Op::Binary { op, propagate_nan } => {
            let t = scalar(rty)?;
            if let (Some(a), Some(b)) = (consts[0], consts[1]) {
                return arith::binary(*op, *propagate_nan, t, to_val(a), to_val(b))
                    .ok()
                    .map(|v| Rewrite::Constant(from_val(v)));
            }
            let (a, b) = (consts[0], consts[1]);
            // The additive identity: 0 for integers; for floats only -0.0 (x + 0.0 is +0.0 for x = -0.0).
            let zero = |c: Option<Const>| {
                if t.is_float() {
                    matches!(c, Some(Const::Float(x)) if x == 0.0 && x.is_sign_negative())
                } else {
                    is(c, 0.0)
                }
            };
            match op {
                BinOp::Add | BinOp::Or | BinOp::Xor if zero(b) => Some(Rewrite::Value(ins[0])),
                BinOp::Add | BinOp::Or | BinOp::Xor if zero(a) => Some(Rewrite::Value(ins[1])),
                // x - 0 and shifts by 0 (float x - 0.0 is x, also for x = -0.0; but x - (-0.0) is x + 0.0, which
                // makes -0.0 into +0.0, so it stays).
                BinOp::Sub if t.is_float() && matches!(b, Some(Const::Float(z)) if z.is_sign_negative()) => None,
                BinOp::Sub | BinOp::Shl | BinOp::Shr if is(b, 0.0) => Some(Rewrite::Value(ins[0])),
                BinOp::Mul | BinOp::Div if is(b, 1.0) => Some(Rewrite::Value(ins[0])),
                BinOp::Mul if is(a, 1.0) => Some(Rewrite::Value(ins[1])),
                // Only for integers: for floats x*0 is NaN for x = inf.
                BinOp::Mul | BinOp::And if t.is_int() && (is(a, 0.0) || is(b, 0.0)) => {
                    Some(Rewrite::Constant(Const::Int(0)))
                }
                _ => None,
            }
        }
        Op::Unary(op) => {
            let c = consts[0]?;
            arith::unary(*op, scalar(rty)?, to_val(c)).ok().map(|v| Rewrite::Constant(from_val(v)))
        }
        Op::Cmp(p) => {
            let (a, b) = (consts[0]?, consts[1]?);
            let t = scalar(f.ty(ins[0]))?;
            Some(Rewrite::Constant(from_val(arith::compare(*p, t, to_val(a), to_val(b)))))
        }
        Op::Select => match consts[0] {
            Some(c) => Some(Rewrite::Value(if to_val(c).is_true() { ins[1] } else { ins[2] })),
            None if ins[1] == ins[2] => Some(Rewrite::Value(ins[1])),
            None => None,
        },
        Op::Cast | Op::Broadcast | Op::Reshape { .. } | Op::ConvertLayout if f.ty(ins[0]) == rty => {
            Some(Rewrite::Value(ins[0]))
        }
        Op::Cast => {
            let c = consts[0]?;
            let (from, to) = (f.ty(ins[0]).elem()?, rty.elem()?);
            to.scalar()?;
            Some(Rewrite::Constant(from_val(convert(to_val(c), from, to))))
        }
        Op::Splat | Op::Broadcast => consts[0].map(Rewrite::Constant),
        Op::Permute { order } => {
            if order.iter().enumerate().all(|(i, &d)| i as u32 == d) {
                return Some(Rewrite::Value(ins[0]));
            }
            let inner = match f.value(ins[0]).def {
                crate::ir::ValueDef::Result(p, 0) => p,
                _ => return None,
            };
            let Op::Permute { order: first } = &f.op(inner).op else { return None };
            // Output dim i of the outer permute is its input dim order[i], which is dim first[order[i]] of x.
            let composed: Vec<u32> = order.iter().map(|&i| first[i as usize]).collect();
            let x = f.op(inner).operands[0];
            if composed.iter().enumerate().all(|(i, &d)| i as u32 == d) {
                Some(Rewrite::Value(x))
            } else {
                Some(Rewrite::Permute(x, composed))
            }
        }
        _ => None,
    }
}

/// A `constant` op of type `ty` placed just before `before`.
fn new_constant(f: &mut Func, edits: &mut Edits, before: OpId, c: Const, ty: Type) -> ValueId {
    // Keep the constant's kind consistent with its type.
    let c = match (c, scalar(&ty)) {
        (Const::Int(i), Some(s)) if s.is_float() => Const::Float(i as f64),
        (Const::Float(x), Some(s)) if s.is_int() => Const::Int(x as i64),
        (c, _) => c,
    };
    edits.new_op_before(f, before, Op::Constant(c), &[], ty)
}
