//! Which TMA loads of a pipelined loop two CTAs of a cluster may share.
//!
//! Programs `2i` and `2i + 1` of a matmul in grouped order load the same B tile at every K step (they differ in
//! their row of tiles only). Launched as a pair in a cluster, each can load half of the tile and multicast it
//! into both CTAs' shared memory: a third less L2 → SM traffic for a 128×256 tile, which at the H100's power
//! cap is clock speed. Whether two programs load the same block is a fact about their program ids that auto
//! mode cannot prove in general (`_tile_offsets` divides by run-time values), so the kernel checks it at run
//! time: the load's coordinates must be computed, at every iteration, from the induction variable, from values
//! the same in every program (kernel arguments, constants) and from loop-invariant values that the pair
//! exchanges once before the loop (`cluster_agree`). The loop bounds must agree too, so that both CTAs run
//! the same iterations. Where the exchanged values differ, or the launch did not pair the CTAs, each CTA loads
//! its own blocks as before.
//!
//! A load qualifies when its block is an even number of TMA boxes (the halves are whole boxes), in a loop at
//! the top level of a kernel without warp specialization (every thread of both CTAs reaches the agreement's
//! cluster barrier), on sm_90a. One load per loop is shared, the largest: two CTAs that load the same blocks
//! of two operands compute the same tile.

use std::collections::HashMap;

use tessel_tile::Target;
use tessel_tile::ir::{Func, OpId, RegionId, ValueDef, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::{ScalarType, Type};

use crate::plan::LoopPlan;

/// The load of the plan (its index) that two CTAs may share, the largest where several may, and the values
/// (i32 scalars) both CTAs must hold for it to be shared.
pub(crate) fn shareable(f: &Func, p: &LoopPlan) -> Option<(usize, Vec<ValueId>)> {
    let o = p.loop_op;
    if f.target != Target::Sm90a || f.op(o).parent != Some(f.body) {
        return None;
    }
    if f.all_ops().into_iter().any(|x| matches!(f.op(x).op, Op::WarpSpecialize(_))) {
        return None;
    }
    let d = f.op(o);
    let body = d.regions[0];
    let mut memo = HashMap::new();
    // The bounds: both CTAs run the same iterations.
    let mut bounds = Vec::new();
    for &b in &d.operands[..3] {
        if !uniform(f, b, &mut memo) {
            if *f.ty(b) != Type::scalar(ScalarType::I32) {
                return None;
            }
            bounds.push(b);
        }
    }
    let mut best: Option<(usize, u32, Vec<ValueId>)> = None;
    for (n, l) in p.loads.iter().enumerate() {
        let load = f.op(l.load);
        if !l.tma || !matches!(load.op, Op::DescLoad) {
            continue;
        }
        let Some((elem, block)) = tessel_tile::tma::desc_block(f.ty(load.operands[0])) else { continue };
        let Ok(b) = tessel_tile::tma::block(elem, block) else { continue };
        if b.boxes.len() < 2 || b.boxes.len() % 2 != 0 || best.as_ref().is_some_and(|x| x.1 >= b.bytes()) {
            continue;
        }
        let mut values = bounds.clone();
        if load.operands[1..].iter().all(|&c| inputs(f, o, body, c, &mut values, &mut memo)) {
            best = Some((n, b.bytes(), values));
        }
    }
    best.map(|(n, _, values)| (n, values))
}

/// Collects into `out` the loop-invariant, program-dependent values `v` (an operand in the body of loop `o`)
/// is computed from; false when `v` depends on anything else than those, uniform values and the induction
/// variable (a loop-carried value, a load, an op with regions).
fn inputs(
    f: &Func,
    o: OpId,
    body: RegionId,
    v: ValueId,
    out: &mut Vec<ValueId>,
    memo: &mut HashMap<ValueId, bool>,
) -> bool {
    if !inside(f, o, v) {
        if !uniform(f, v, memo) {
            if *f.ty(v) != Type::scalar(ScalarType::I32) {
                return false;
            }
            if !out.contains(&v) {
                out.push(v);
            }
        }
        return true;
    }
    match f.value(v).def {
        ValueDef::Arg(r, 0) => r == body,
        ValueDef::Arg(..) => false,
        ValueDef::Result(x, _) => {
            let d = f.op(x);
            d.op.is_pure()
                && d.regions.is_empty()
                && !matches!(d.op, Op::ProgramId(_) | Op::InlineAsm { .. })
                && d.results.iter().all(|&r| f.ty(r).shape().is_empty())
                && d.operands.iter().all(|&a| inputs(f, o, body, a, out, memo))
        }
    }
}

/// Whether `v` is defined inside loop `o` (by an op of its body, or of a region nested in it, or as one of
/// those regions' arguments).
fn inside(f: &Func, o: OpId, v: ValueId) -> bool {
    let mut region = match f.value(v).def {
        ValueDef::Arg(r, _) => Some(r),
        ValueDef::Result(x, _) => f.op(x).parent,
    };
    while let Some(r) = region {
        match f.region(r).parent {
            Some(p) if p == o => return true,
            Some(p) => region = f.op(p).parent,
            None => return false,
        }
    }
    false
}

/// Whether `v` is the same in every program: a kernel argument, a constant, or a pure scalar op of such values
/// (not the program id).
fn uniform(f: &Func, v: ValueId, memo: &mut HashMap<ValueId, bool>) -> bool {
    if let Some(&u) = memo.get(&v) {
        return u;
    }
    let u = match f.value(v).def {
        ValueDef::Arg(r, _) => r == f.body,
        ValueDef::Result(x, _) => {
            let d = f.op(x);
            d.op.is_pure()
                && d.regions.is_empty()
                && !matches!(d.op, Op::ProgramId(_) | Op::InlineAsm { .. })
                && d.results.iter().all(|&r| f.ty(r).shape().is_empty())
                && d.operands.clone().iter().all(|&a| uniform(f, a, memo))
        }
    };
    memo.insert(v, u);
    u
}
