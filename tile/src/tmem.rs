//! The tensor-memory plan: which of a CTA's 512 tensor-memory columns each `tmem_alloc` takes, and how many
//! columns the kernel allocates. Codegen lowers with it; the pipeline checks it (and the target) before layout
//! assignment, so that a kernel over the budget is refused at the source of the buffer that does not fit.
//!
//! Buffers are placed one after another, largest first, each aligned to its own size (a power of two of
//! columns), for the whole kernel (no reuse by liveness yet); the total is rounded up to a power of two of at
//! least 32 columns, as `tcgen05.alloc` requires.

use std::collections::HashMap;

use crate::ir::{Func, OpId, ValueId};
use crate::ops::Op;

/// Tensor-memory columns of a CTA (each 128 lanes of 32 bits).
pub const COLUMNS: u32 = 512;

/// Each buffer's first column, and the columns the kernel allocates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub columns: HashMap<ValueId, u32>,
    pub total: u32,
}

/// The columns a tensor-memory buffer takes: its 32-bit cells per lane.
pub fn buffer_columns(f: &Func, v: ValueId) -> u32 {
    let (_, elem, layout) = f.ty(v).memdesc().expect("a tensor-memory memdesc");
    (layout.linear.in_dim_size("col") * elem.bits()).div_ceil(32).max(1)
}

/// The plan of `f` (`None` when it has no tensor memory), or the `tmem_alloc` that does not fit with the message
/// naming every buffer.
pub fn plan(f: &Func) -> Result<Option<Plan>, (OpId, String)> {
    let allocs: Vec<(OpId, ValueId)> =
        f.all_ops().into_iter().filter(|&o| f.op(o).op == Op::TmemAlloc).map(|o| (o, f.op(o).results[0])).collect();
    if allocs.is_empty() {
        return Ok(None);
    }
    let size = |v: ValueId| buffer_columns(f, v).next_power_of_two();
    let mut by_size = allocs.clone();
    by_size.sort_by_key(|&(_, v)| std::cmp::Reverse(size(v)));
    let mut columns = HashMap::new();
    let mut next = 0u32;
    let mut overflow = None;
    for &(o, v) in &by_size {
        next = next.next_multiple_of(size(v));
        columns.insert(v, next);
        next += size(v);
        if next > COLUMNS && overflow.is_none() {
            overflow = Some(o);
        }
    }
    if let Some(o) = overflow {
        let mut msg = format!("the kernel needs {next} tensor-memory columns, more than the {COLUMNS} of a CTA");
        for &(_, v) in &allocs {
            let name = f.value(v).name.clone().map_or_else(|| v.to_string(), |n| format!("%{n}"));
            msg += &format!("; {name} ({}): {} columns", f.ty(v), buffer_columns(f, v));
        }
        return Err((o, msg));
    }
    Ok(Some(Plan { columns, total: next.next_power_of_two().max(32) }))
}
