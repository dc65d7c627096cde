//! Multiply-add contraction (Triton's `enable_fp_fusion`, on unless a kernel turns it off): where `a * b + c`
//! rounds once, as one `fma`, as LLVM contracts Triton's code. The code generator emits these as `fma.rn` and the
//! interpreter evaluates them the same way, so the two round alike: [`contraction`] for an `add`/`sub` of a
//! product, [`contracted_product`] for `tl.sum(x * y)`.

use std::collections::HashMap;

use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::ops::{BinOp, Op};
use crate::types::{Elem, ScalarType};

/// An `add`/`sub` that runs as `fma(±x, y, ±addend)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contraction {
    pub x: ValueId,
    pub y: ValueId,
    pub addend: ValueId,
    /// `c - x * y`: the product is negated.
    pub negate_product: bool,
    /// `x * y - c`: the addend is negated.
    pub negate_addend: bool,
}

/// Whether op `o` is contracted: `a * b + c`, `c + a * b`, `a * b - c` or `c - a * b` on f32/f64 with
/// `enable_fp_fusion` on, where the product is a `mul` of operands of its own type with no other use (`uses`:
/// [`Func::use_counts`]). The product's own op stays, dead to the result.
pub fn contraction(f: &Func, o: OpId, uses: &[u32]) -> Option<Contraction> {
    let data = f.op(o);
    let Op::Binary { op: op @ (BinOp::Add | BinOp::Sub), .. } = data.op else { return None };
    if !f.attrs.fp_fusion || !matches!(f.ty(data.results[0]).elem()?, Elem::Scalar(ScalarType::F32 | ScalarType::F64)) {
        return None;
    }
    let product = |v: ValueId| {
        let ValueDef::Result(m, _) = f.value(v).def else { return None };
        let d = f.op(m);
        let mul = matches!(d.op, Op::Binary { op: BinOp::Mul, .. });
        (mul && uses[v.index()] == 1 && f.ty(d.operands[0]) == f.ty(v)).then(|| (d.operands[0], d.operands[1]))
    };
    let sub = op == BinOp::Sub;
    let (x, y, addend, negate_product, negate_addend) = match (product(data.operands[0]), product(data.operands[1])) {
        (Some((x, y)), _) => (x, y, data.operands[1], false, sub),
        (None, Some((x, y))) => (x, y, data.operands[0], sub, false),
        (None, None) => return None,
    };
    Some(Contraction { x, y, addend, negate_product, negate_addend })
}

/// Every contracted op of `f` ([`contraction`]).
pub fn contractions(f: &Func) -> HashMap<OpId, Contraction> {
    let uses = f.use_counts();
    f.all_ops().into_iter().filter_map(|o| Some((o, contraction(f, o, &uses)?))).collect()
}

/// The factors `(x, y)` and type of a `reduce` whose in-thread steps run as `fma` (`tl.sum(x * y)`, as LLVM
/// contracts Triton's): one f32/f64 operand, a combine region that is exactly `add` of its two arguments,
/// `enable_fp_fusion` on, and a product `x * y` of the operand's type with no other use. The code generator
/// emits `fma(x0, y0, x1*y1)`, then `fma(xi, yi, acc)`, over a thread's registers; the interpreter replays the
/// same steps when it reduces in the layout's order.
pub fn contracted_product(f: &Func, reduce: OpId) -> Option<(ScalarType, ValueId, ValueId)> {
    let data = f.op(reduce);
    let src = *data.operands.first()?;
    if !f.attrs.fp_fusion || data.operands.len() != 1 || f.use_counts()[src.index()] != 1 {
        return None;
    }
    let ty = match f.ty(src).elem()? {
        Elem::Scalar(t @ (ScalarType::F32 | ScalarType::F64)) => t,
        _ => return None,
    };
    let rd = f.region(*data.regions.first()?);
    let [add, y] = rd.ops[..] else { return None };
    let (a, y) = (f.op(add), f.op(y));
    let combine_is_add = matches!(y.op, Op::Yield)
        && y.operands.len() == 1
        && y.operands[0] == a.results[0]
        && matches!(a.op, Op::Binary { op: BinOp::Add, .. })
        && rd.args.len() == 2
        && (a.operands[..] == [rd.args[0], rd.args[1]] || a.operands[..] == [rd.args[1], rd.args[0]]);
    let ValueDef::Result(mul, _) = f.value(src).def else { return None };
    let m = f.op(mul);
    let is_mul = matches!(m.op, Op::Binary { op: BinOp::Mul, .. }) && m.operands.iter().all(|&x| f.ty(x) == f.ty(src));
    (combine_is_add && is_mul).then(|| (ty, m.operands[0], m.operands[1]))
}
