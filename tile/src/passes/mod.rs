//! Generic passes over the tile IR. Each is a plain function `fn(&mut Func) -> bool` (did it change
//! anything) with text-in/text-out tests; [`canonicalize`] runs them to a fixed point.

mod build;
mod carried;
mod cse;
mod dce;
mod dead_carried;
mod dot_acc;
mod dot_war;
mod edits;
mod flatten;
mod fold;
mod licm;
mod narrow;
mod ptr_induction;
mod sink;
mod unroll;

pub use build::{clone_op, clone_region};
pub use carried::forward_unchanged_buffers;
pub use cse::cse;
pub use dce::dce;
pub use dead_carried::drop_dead_carried;
pub use dot_acc::combine_dot_add;
pub use dot_war::{InsertedDotWait, wait_before_overwriting_dot_operands};
pub use flatten::{NotFused, flatten_loops};
pub use fold::fold;
pub use licm::licm;
pub use narrow::narrow_float_arith;
pub use ptr_induction::reassociate_pointer_inductions;
pub use sink::sink_into_branches;
pub use unroll::unroll_loops;

use crate::ir::{Func, OpId, RegionId};

/// Folding, float arithmetic narrowed to its rounding type, the dot-accumulate combine, CSE, loop-invariant code
/// motion, dead-code elimination, the loop slots nobody reads dropped and the forwarding of buffers loops carry
/// unchanged until nothing changes.
pub fn canonicalize(f: &mut Func) {
    for _ in 0..16 {
        let changed = fold(f)
            | narrow_float_arith(f)
            | combine_dot_add(f)
            | cse(f)
            | licm(f)
            | dce(f)
            | drop_dead_carried(f)
            | forward_unchanged_buffers(f);
        if !changed {
            break;
        }
    }
}

/// Inserts the already-created op `o` into region `r` just before `before`.
pub(crate) fn insert_before(f: &mut Func, r: RegionId, before: OpId, o: OpId) {
    let ops = &mut f.region_mut(r).ops;
    let at = ops.iter().position(|&x| x == before).expect("anchor op is in the region");
    ops.insert(at, o);
    f.op_mut(o).parent = Some(r);
}
