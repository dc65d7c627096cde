//! Pointer tensors a loop advances by one offset for every element (`a_ptrs += BLOCK_K * stride_ak`) become one
//! scalar offset the loop carries instead:
//!
//! ```text
//! for ... (%p = %p0) { use %p; %q = addptr %p, splat(%s); yield %q }
//! for ... (%acc = 0 : i64) { %p = addptr %p0, splat(%acc); use %p; %acc' = add %acc, sext(%s); yield %acc' }
//! ```
//!
//! Each element's address is then its loop-invariant start plus the one running offset, computed where it is
//! used, as LLVM's loop strength reduction leaves Triton's loops. Carried the other way, every address register
//! is rewritten at the end of the iteration right after the memory instruction that read it, and ptxas makes
//! the update wait for that read (in the pipelined matmul the `cp.async` issue stalled on it: measured on the
//! H200, the tutorial's 2560³ matmul ran 5% faster in this form). The offset is carried in 64 bits: an `i32`
//! sum over the iterations could wrap where the pointer arithmetic it replaces does not.
//!
//! Taken only when the advance is the same for every element (a splat of a value defined outside the loop, or
//! a constant) and the advanced tensor is used only by the `yield`.

use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::ops::{BinOp, Const, Op};
use crate::types::{Elem, ScalarType, Type};

use super::insert_before;
use super::licm::defined_inside;

/// Rewrites every pointer-tensor induction of every `for` loop; whether anything changed.
pub fn reassociate_pointer_inductions(f: &mut Func) -> bool {
    let mut changed = false;
    for o in f.all_ops() {
        if !matches!(f.op(o).op, Op::For(_)) {
            continue;
        }
        let inductions = find(f, o);
        changed |= !inductions.is_empty();
        for (j, advance, step) in inductions {
            rewrite(f, o, j, advance, step);
        }
    }
    changed
}

/// How the induction advances per iteration: by a scalar defined outside the loop, or by a constant.
enum Step {
    Scalar(ValueId),
    Const(i64),
}

/// The iteration arguments of loop `o` that are pointer inductions: (index among the iteration arguments, the
/// `addptr` that advances it, the per-iteration step).
fn find(f: &Func, o: OpId) -> Vec<(usize, OpId, Step)> {
    let d = f.op(o);
    let body = d.regions[0];
    let Some(&y) = f.region(body).ops.last().filter(|&&y| matches!(f.op(y).op, Op::Yield)) else { return Vec::new() };
    let args = &f.region(body).args;
    let uses = f.use_counts();
    let inside = defined_inside(f, o);
    let mut out = Vec::new();
    for (j, &next) in f.op(y).operands.iter().enumerate() {
        let arg = args[j + 1];
        if !matches!(f.ty(arg).elem(), Some(Elem::Ptr(..))) || !f.ty(arg).is_tensor() || uses[next.index()] != 1 {
            continue;
        }
        let ValueDef::Result(adv, 0) = f.value(next).def else { continue };
        let a = f.op(adv);
        if !matches!(a.op, Op::AddPtr) || a.parent != Some(body) || a.operands[0] != arg {
            continue;
        }
        let ValueDef::Result(inc, 0) = f.value(a.operands[1]).def else { continue };
        let step = match &f.op(inc).op {
            Op::Splat if !inside.contains(&f.op(inc).operands[0]) => Step::Scalar(f.op(inc).operands[0]),
            Op::Constant(Const::Int(c)) => Step::Const(*c),
            _ => continue,
        };
        let is_int = |v: ValueId| f.ty(v).elem().and_then(|e| e.scalar()).is_some_and(|s| s.is_int());
        if matches!(step, Step::Scalar(s) if !is_int(s)) {
            continue;
        }
        out.push((j, adv, step));
    }
    out
}

fn rewrite(f: &mut Func, o: OpId, j: usize, advance: OpId, step: Step) {
    let i64t = Type::scalar(ScalarType::I64);
    let d = f.op(o).clone();
    let (body, parent) = (d.regions[0], d.parent.expect("linked loop"));
    let (arg, init, result) = (f.region(body).args[j + 1], d.operands[3 + j], d.results[j]);
    let ptr_ty = f.ty(arg).clone();
    let off_ty = ptr_ty.with_elem(Elem::Scalar(ScalarType::I64));
    let loc = f.op(advance).loc;

    // In front of the loop: the offset starts at 0, and the step widened to i64.
    let before = |f: &mut Func, op: Op, operands: &[ValueId]| {
        let x = f.append(parent, op, operands, vec![i64t.clone()], &[], loc);
        f.unlink(x);
        insert_before(f, parent, o, x);
        f.op(x).results[0]
    };
    let zero = before(f, Op::Constant(Const::Int(0)), &[]);
    let step = match step {
        Step::Const(c) => before(f, Op::Constant(Const::Int(c)), &[]),
        Step::Scalar(s) if *f.ty(s) == i64t => s,
        Step::Scalar(s) => before(f, Op::Cast, &[s]),
    };

    // The carried value becomes the offset; the body's uses of the pointers read `init + offset`.
    for v in [arg, result] {
        let data = &mut f.values[v.index()];
        data.ty = i64t.clone();
        data.name = data.name.take().map(|n| format!("{n}_offset"));
    }
    f.op_mut(o).operands[3 + j] = zero;
    // Computed right before each use: at the top of the body, the addresses would be live across (and their
    // arithmetic scheduled ahead of) whatever comes first, the MMAs of a pipelined loop.
    let mut users = Vec::new();
    f.walk(body, &mut |x| {
        if x != advance && f.op(x).operands.contains(&arg) {
            users.push(x)
        }
    });
    for x in users {
        let region = f.op(x).parent.expect("linked op");
        let (_, ptrs) = pointers_at(f, region, x, init, arg, &off_ty, &ptr_ty, loc);
        for v in f.op_mut(x).operands.iter_mut().filter(|v| **v == arg) {
            *v = ptrs;
        }
    }

    // The advance becomes the offset's.
    let next = f.append(body, Op::Binary { op: BinOp::Add, propagate_nan: false }, &[arg, step], vec![i64t], &[], loc);
    f.unlink(next);
    insert_before(f, body, advance, next);
    let y = *f.region(body).ops.last().expect("a yield");
    f.op_mut(y).operands[j] = f.op(next).results[0];
    f.unlink(advance);

    // After the loop, its result is again `init + offset`, where anything uses it.
    if f.use_counts()[result.index()] > 0 {
        let at = f.region(parent).ops.iter().position(|&x| x == o).expect("linked loop") + 1;
        let after = f.region(parent).ops[at];
        let (splat, ptrs) = pointers_at(f, parent, after, init, result, &off_ty, &ptr_ty, loc);
        let mut all = Vec::new();
        f.walk(f.body, &mut |x| all.push(x));
        for x in all.into_iter().filter(|&x| x != splat) {
            for v in f.op_mut(x).operands.iter_mut().filter(|v| **v == result) {
                *v = ptrs;
            }
        }
    }
}

/// `addptr init, splat(offset)` placed before `anchor` in `region`: (the splat op, the pointers).
#[allow(clippy::too_many_arguments)]
fn pointers_at(
    f: &mut Func,
    region: crate::ir::RegionId,
    anchor: OpId,
    init: ValueId,
    offset: ValueId,
    off_ty: &Type,
    ptr_ty: &Type,
    loc: Option<crate::ir::Loc>,
) -> (OpId, ValueId) {
    let splat = f.append(region, Op::Splat, &[offset], vec![off_ty.clone()], &[], loc);
    f.unlink(splat);
    insert_before(f, region, anchor, splat);
    let add = f.append(region, Op::AddPtr, &[init, f.op(splat).results[0]], vec![ptr_ty.clone()], &[], loc);
    f.unlink(add);
    insert_before(f, region, anchor, add);
    (splat, f.op(add).results[0])
}
