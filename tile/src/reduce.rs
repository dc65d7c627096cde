//! Facts about `reduce` ops that the code generator and the interpreter must agree on.

use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::ops::{BinOp, Op};
use crate::types::{Elem, ScalarType};

/// The factors `(x, y)` and type of a `reduce` whose in-thread steps run as `fma` (`tl.sum(x * y)`, as LLVM
/// contracts Triton's): one f32/f64 operand, a combine region that is exactly `add` of its two arguments,
/// `enable_fp_fusion` on, and a product `x * y` of the operand's type with no other use. The code generator
/// emits `fma(x0, y0, x1*y1)`, then `fma(xi, yi, acc)`, over a thread's registers; the interpreter replays the
/// same steps when it reduces in the layout's order.
pub fn contracted_product(f: &Func, reduce: OpId) -> Option<(ScalarType, ValueId, ValueId)> {
    let data = f.op(reduce);
    let src = *data.operands.first()?;
    if !f.config.fp_fusion || data.operands.len() != 1 || f.use_counts()[src.index()] != 1 {
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
