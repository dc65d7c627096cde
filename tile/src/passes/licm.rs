//! Loop-invariant code motion: pure, region-free ops in a `for`/`while` body whose operands are all defined
//! outside the loop move in front of it. Hoisting is safe even when the loop runs zero times because pure ops
//! cannot trap — except integer division and remainder, which stay put.

use std::collections::HashSet;

use crate::ir::{Func, OpId, ValueId};
use crate::ops::{BinOp, Op};
use crate::passes::insert_before;

pub fn licm(f: &mut Func) -> bool {
    let mut changed = false;
    let loops: Vec<OpId> = f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::For(_) | Op::While)).collect();
    // Innermost loops come later in program order; hoisting them first lets an op climb several levels.
    for &l in loops.iter().rev() {
        let Some(parent) = f.op(l).parent else { continue };
        let inside = defined_inside(f, l);
        let mut hoisted: HashSet<ValueId> = HashSet::new();
        for r in f.op(l).regions.clone() {
            for o in f.region(r).ops.clone() {
                let d = f.op(o);
                let may_trap = matches!(d.op, Op::Binary { op: BinOp::Div | BinOp::Rem, .. })
                    && f.ty(d.operands[0]).elem().and_then(|e| e.scalar()).is_some_and(|s| s.is_int());
                let invariant = d.operands.iter().all(|v| !inside.contains(v) || hoisted.contains(v));
                if d.op.is_pure() && d.regions.is_empty() && !may_trap && invariant {
                    hoisted.extend(d.results.iter().copied());
                    f.region_mut(r).ops.retain(|&x| x != o);
                    insert_before(f, parent, l, o);
                    changed = true;
                }
            }
        }
    }
    changed
}

/// Every value defined by the loop op's regions: their arguments and the results of ops nested in them.
fn defined_inside(f: &Func, l: OpId) -> HashSet<ValueId> {
    let mut out = HashSet::new();
    for &r in &f.op(l).regions {
        out.extend(f.region(r).args.iter().copied());
        f.walk(r, &mut |o| {
            out.extend(f.op(o).results.iter().copied());
            for &c in &f.op(o).regions {
                out.extend(f.region(c).args.iter().copied());
            }
        });
    }
    out
}
