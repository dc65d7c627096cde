//! Loop-invariant code motion: pure, region-free ops in a `for`/`while` body whose operands are all defined
//! outside the loop move in front of it. Hoisting is safe even when the loop runs zero times because pure ops
//! cannot trap — except integer division and remainder, which stay put.

use std::collections::{HashMap, HashSet};

use crate::ir::{Func, OpId, RegionId, ValueId};
use crate::ops::{BinOp, Op};

pub fn licm(f: &mut Func) -> bool {
    let mut changed = false;
    let loops: Vec<OpId> = f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::For(_) | Op::While)).collect();
    // Ops that left a loop, by the region they go to and the loop they go in front of. A region takes its ops
    // when it is next read (the turn of the loop it belongs to) or at the end, so that a region holding many
    // loops is rewritten once rather than once per loop.
    let mut pending: HashMap<RegionId, HashMap<OpId, Vec<OpId>>> = HashMap::new();
    // Innermost loops come later in program order; hoisting them first lets an op climb several levels.
    for &l in loops.iter().rev() {
        let Some(parent) = f.op(l).parent else { continue };
        for r in f.op(l).regions.clone() {
            place(f, &mut pending, r);
        }
        let inside = defined_inside(f, l);
        let mut hoisted: HashSet<ValueId> = HashSet::new();
        // In the order they leave the loop, which is the order they take in front of it.
        let mut moved: Vec<OpId> = Vec::new();
        for r in f.op(l).regions.clone() {
            let mut kept = Vec::new();
            for &o in &f.region(r).ops {
                let d = f.op(o);
                let may_trap = matches!(d.op, Op::Binary { op: BinOp::Div | BinOp::Rem, .. })
                    && f.ty(d.operands[0]).elem().and_then(|e| e.scalar()).is_some_and(|s| s.is_int());
                let invariant = d.operands.iter().all(|v| !inside.contains(v) || hoisted.contains(v));
                if d.op.is_pure() && d.regions.is_empty() && !may_trap && invariant {
                    hoisted.extend(d.results.iter().copied());
                    moved.push(o);
                } else {
                    kept.push(o);
                }
            }
            f.region_mut(r).ops = kept;
        }
        if !moved.is_empty() {
            pending.entry(parent).or_default().insert(l, moved);
            changed = true;
        }
    }
    let rest: Vec<RegionId> = pending.keys().copied().collect();
    for r in rest {
        place(f, &mut pending, r);
    }
    changed
}

/// Puts the ops waiting for region `r` in front of their loops.
fn place(f: &mut Func, pending: &mut HashMap<RegionId, HashMap<OpId, Vec<OpId>>>, r: RegionId) {
    let Some(mut before) = pending.remove(&r) else { return };
    let old = std::mem::take(&mut f.region_mut(r).ops);
    let mut ops = Vec::with_capacity(old.len() + before.values().map(Vec::len).sum::<usize>());
    for x in old {
        for o in before.remove(&x).unwrap_or_default() {
            f.op_mut(o).parent = Some(r);
            ops.push(o);
        }
        ops.push(x);
    }
    f.region_mut(r).ops = ops;
}

/// Every value defined by the loop op's regions: their arguments and the results of ops nested in them.
pub(crate) fn defined_inside(f: &Func, l: OpId) -> HashSet<ValueId> {
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
