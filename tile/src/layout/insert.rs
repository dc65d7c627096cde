//! Linking new ops into a function while layouts are assigned: a `convert_layout` placed just before the op that
//! needs it ([`convert_before`]), and an op placed right after another ([`insert_after`], the twin of
//! `passes::insert_before`). Propagation's rewrite, cleanup and operand staging share them.

use crate::ir::{Func, OpId, ValueId};
use crate::layout::rules::L;
use crate::ops::Op;
use crate::passes::insert_before;

/// A `convert_layout` of `v` to `l`, inserted before `before`.
pub fn convert_before(f: &mut Func, before: OpId, v: ValueId, l: L) -> ValueId {
    let r = f.op(before).parent.expect("linked op");
    let ty = f.ty(v).with_layout(Some(l));
    let loc = f.op(before).loc;
    let c = f.append(r, Op::ConvertLayout, &[v], vec![ty], &[], loc);
    f.region_mut(r).ops.pop();
    insert_before(f, r, before, c);
    f.op(c).results[0]
}

/// Inserts op `o` (already created, unlinked) right after `after`.
pub fn insert_after(f: &mut Func, after: OpId, o: OpId) {
    let r = f.op(after).parent.expect("linked op");
    let ops = &mut f.region_mut(r).ops;
    let at = ops.iter().position(|&x| x == after).expect("anchor op is in the region");
    ops.insert(at + 1, o);
    f.op_mut(o).parent = Some(r);
}
