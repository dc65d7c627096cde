//! `tl.range(..., loop_unroll_factor=U)`: the loop's body repeated `U` times per iteration, then a remainder
//! loop for the iterations left over, as Triton unrolls before scheduling.
//!
//! `for iv in range(lb, ub, step)` becomes
//!
//! ```text
//! main_ub = lb + max((ub - lb) / (U * step), 0) * (U * step)
//! for iv in range(lb, main_ub, U * step):   body(iv); body(iv + step); ...; body(iv + (U - 1) * step)
//! for iv in range(main_ub, ub, step):        body(iv)
//! ```
//!
//! carrying the loop's values from one copy of the body to the next and from the main loop into the remainder.
//! The main loop keeps the loop's other attributes (its `num_stages`); the remainder runs as written. Loops whose
//! step is not a positive constant are left alone (the trip count of the main loop needs the step's sign).

use std::collections::HashMap;

use super::build::{Builder, clone_op, const_int};
use crate::ir::{Func, OpId, ValueId};
use crate::ops::{BinOp, CmpPred, Const, LoopAttrs, Op};
use crate::types::Type;

/// Unrolls every `for` that asks for it; whether anything changed.
pub fn unroll_loops(f: &mut Func) -> bool {
    let mut changed = false;
    for o in f.all_ops() {
        let Op::For(attrs) = &f.op(o).op else { continue };
        let Some(u) = attrs.loop_unroll_factor.filter(|&u| u > 1) else { continue };
        if let Some(step) = const_int(f, f.op(o).operands[2]).filter(|&s| s > 0) {
            unroll(f, o, u as i64, step);
            changed = true;
        }
    }
    changed
}

fn unroll(f: &mut Func, o: OpId, u: i64, step: i64) {
    let d = f.op(o).clone();
    let Op::For(attrs) = d.op.clone() else { unreachable!("a for loop") };
    let parent = d.parent.expect("linked loop");
    let at = f.region(parent).ops.iter().position(|&x| x == o).expect("an op of its region");
    let (lb, ub) = (d.operands[0], d.operands[1]);
    let ity = f.ty(lb).clone();
    // Division and comparison follow the type's signedness.
    let mut b = Builder { f, region: parent, at: Some(at), loc: d.loc };
    // main_ub = lb + (ub > lb ? (ub - lb) / S : 0) * S, with S = U * step.
    let big = b.int(u * step, &ity);
    let diff = b.binary(BinOp::Sub, ub, lb);
    let q = b.binary(BinOp::Div, diff, big);
    let some = b.cmp(CmpPred::Gt, ub, lb);
    let zero = b.int(0, &ity);
    let q = b.value(Op::Select, &[some, q, zero], ity.clone());
    let span = b.binary(BinOp::Mul, q, big);
    let main_ub = b.binary(BinOp::Add, lb, span);
    let f = b.f;

    // The main loop: a new op with a new body holding U copies of the old one.
    let body = d.regions[0];
    let old_args = f.region(body).args.clone();
    let main_body = f.new_region();
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    let iv = f.add_region_arg(main_body, ity.clone(), f.value(old_args[0]).name.clone());
    let mut carried: Vec<ValueId> = old_args[1..]
        .iter()
        .map(|&a| {
            let (ty, name) = (f.ty(a).clone(), f.value(a).name.clone());
            f.add_region_arg(main_body, ty, name)
        })
        .collect();
    let old_ops = f.region(body).ops.clone();
    let (&yield_op, old_ops) = old_ops.split_last().expect("verified: a body ends in yield");
    for j in 0..u {
        let iv_j = if j == 0 {
            iv
        } else {
            let c = f.append(main_body, Op::Constant(Const::Int(j * step)), &[], vec![ity.clone()], &[], d.loc);
            let c = f.op(c).results[0];
            let a = f.append(
                main_body,
                Op::Binary { op: BinOp::Add, propagate_nan: false },
                &[iv, c],
                vec![ity.clone()],
                &[],
                d.loc,
            );
            f.op(a).results[0]
        };
        map.insert(old_args[0], iv_j);
        for (&a, &c) in old_args[1..].iter().zip(&carried) {
            map.insert(a, c);
        }
        for &x in old_ops {
            clone_op(f, x, main_body, &mut map);
        }
        carried = f.op(yield_op).operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    }
    f.append(main_body, Op::Yield, &carried, vec![], &[], d.loc);
    let main_attrs = LoopAttrs { loop_unroll_factor: None, ..attrs.clone() };
    let mut operands = vec![lb, main_ub, big];
    operands.extend_from_slice(&d.operands[3..]);
    let types: Vec<Type> = d.results.iter().map(|&r| f.ty(r).clone()).collect();
    let main = f.append(parent, Op::For(main_attrs), &operands, types, &[main_body], d.loc);
    let ops = &mut f.region_mut(parent).ops;
    ops.pop();
    let at = ops.iter().position(|&x| x == o).expect("still linked");
    ops.insert(at, main);

    // The remainder: the old loop, from main_ub, on the main loop's results, run as written.
    let main_results = f.op(main).results.clone();
    let rd = f.op_mut(o);
    rd.operands[0] = main_ub;
    rd.operands[3..].copy_from_slice(&main_results);
    rd.op = Op::For(LoopAttrs { loop_unroll_factor: None, num_stages: Some(1), ..attrs });
}
