//! Code sinking: a pure op whose every use sits inside one region of a later `if` moves into that region, so it
//! runs only when the branch does. The software pipeliner recomputes a fused persistent loop's tile coordinates
//! in its last stage for the epilogue, which runs under an `if` on each tile's last step: sunk, those integer
//! divisions run once per tile instead of once per step.

use std::collections::HashSet;

use crate::ir::{Func, OpId, RegionId};
use crate::ops::Op;
use crate::types::Type;

/// Sinks pure ops into the `if` regions that alone use them, in every region of `f`; whether anything moved.
pub fn sink_into_branches(f: &mut Func) -> bool {
    let mut changed = false;
    let mut regions = vec![f.body];
    while let Some(r) = regions.pop() {
        changed |= sink_region(f, r);
        for o in f.region(r).ops.clone() {
            regions.extend(f.op(o).regions.iter().copied());
        }
    }
    changed
}

/// The regions of `o`'s nested ops (`o`'s own included), transitively.
fn regions_within(f: &Func, r: RegionId, out: &mut HashSet<RegionId>) {
    out.insert(r);
    for &o in &f.region(r).ops {
        for &inner in &f.op(o).regions {
            regions_within(f, inner, out);
        }
    }
}

fn sink_region(f: &mut Func, r: RegionId) -> bool {
    let mut changed = false;
    // Last op first, so that a chain of pure ops follows its last user into the branch.
    let ops = f.region(r).ops.clone();
    for (i, &x) in ops.iter().enumerate().rev() {
        let xd = f.op(x);
        if !xd.op.is_pure() || !xd.regions.is_empty() || xd.results.is_empty() || xd.parent != Some(r) {
            continue;
        }
        // Arithmetic only: a tensor descriptor the program makes once stays where it is made (codegen writes its
        // tensor map at the kernel's top level), as do buffers and tokens.
        if xd.results.iter().any(|&v| matches!(f.ty(v), Type::TensorDesc { .. } | Type::MemDesc { .. } | Type::Token)) {
            continue;
        }
        let results = xd.results.clone();
        // Every use of every result, as (the op of `r` it is under, the region of that op it is in).
        let mut target: Option<(OpId, RegionId)> = None;
        let mut ok = true;
        for &y in &f.region(r).ops[i + 1..] {
            let yd = f.op(y);
            if yd.operands.iter().any(|v| results.contains(v)) {
                ok = false;
                break;
            }
            for &inner in &yd.regions {
                let mut within = HashSet::new();
                regions_within(f, inner, &mut within);
                let mut uses = false;
                for &w in &within {
                    uses |= f.region(w).ops.iter().any(|&z| f.op(z).operands.iter().any(|v| results.contains(v)));
                }
                if uses {
                    if target.is_some() || yd.op != Op::If {
                        ok = false;
                    }
                    target = Some((y, inner));
                }
            }
            if !ok {
                break;
            }
        }
        let Some((_, inner)) = target.filter(|_| ok) else { continue };
        let ops = &mut f.region_mut(r).ops;
        ops.retain(|&o| o != x);
        f.region_mut(inner).ops.insert(0, x);
        f.op_mut(x).parent = Some(inner);
        changed = true;
    }
    changed
}
