//! Where a tcgen05 MMA of auto mode may sit and the tensor memory its accumulator takes: shared by the dense dots
//! ([`super::tcgen05`]) and the block-scaled ones ([`super::dot_scaled`]), which both lower through it.

use tessel_layouts::TensorMemoryLayout;

use crate::ir::{Func, OpId, RegionId};
use crate::ops::Op;

/// The tensor-memory layout of an `[m, n]` f32 accumulator: one instruction tile per block, 128 (or 64) rows
/// by at most 256 columns.
pub(super) fn tmem_layout(m: u32, n: u32) -> TensorMemoryLayout {
    TensorMemoryLayout { block: [m.min(128), n.min(256)], col_stride: 1, two_ctas: false, cta_split: [1, 1] }
}

/// The structured ops around op `o`, outermost first, each with its region that holds `o`: the MMA's barrier
/// parity is threaded through them (`for` loops and `while` loops carry it, an `if` yields it), so they may be
/// `for`, `if`, and `while` when `o` sits in its `after` region (the loop body; the grouped GEMM's tile loop).
/// Any other op around the dot is an error naming it.
pub(super) fn enclosing_ops(f: &Func, o: OpId) -> Result<Vec<(OpId, RegionId)>, String> {
    let mut chain = Vec::new();
    let mut region = f.op(o).parent;
    while let Some(r) = region {
        let Some(p) = f.region(r).parent else { break };
        match f.op(p).op {
            Op::For(_) | Op::If => {}
            Op::While if f.op(p).regions[1] == r => {}
            Op::While => return Err("a dot in the condition of a `while`".into()),
            ref other => {
                return Err(format!(
                    "a dot inside `{}` (tcgen05's barrier parity is threaded through `for`, `while` and `if` only)",
                    other.name()
                ));
            }
        }
        chain.push((p, r));
        region = f.op(p).parent;
    }
    chain.reverse();
    Ok(chain)
}
