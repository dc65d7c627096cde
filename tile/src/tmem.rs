//! The tensor-memory plan: which of a CTA's 512 tensor-memory columns each `tmem_alloc` takes, and how many
//! columns the kernel allocates. Codegen lowers with it; the pipeline checks it (and the target) before layout
//! assignment, so that a kernel over the budget is refused at the source of the buffer that does not fit.
//!
//! Each buffer is live from its `tmem_alloc` to its last use, through the views made of it (`index`, `slice`,
//! `_reinterpret`); a use inside a loop or branch keeps it live to the end of that op at the allocation's level.
//! A buffer whose last use is a `tcgen05_mma`, `tcgen05_mma_scaled` or `tcgen05_copy` (which read and write it
//! asynchronously, after the op) stays live to the end of the kernel, as do all buffers when a tensor-memory
//! value flows where views cannot be followed (through a branch's or loop's results or arguments). Buffers are
//! placed largest first, each aligned to its own size (a power of two of columns), at the lowest columns no
//! buffer live at the same time holds; the total is rounded up to a power of two of at least 32 columns, as
//! `tcgen05.alloc` requires.

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

/// The columns a tensor-memory buffer takes in each CTA: its 32-bit cells per lane, less the CTA split (a
/// `TensorMemoryLayout` split over the CTAs of a cluster lays the split out as its last `col` bits; each CTA holds
/// its part).
pub fn buffer_columns(f: &Func, v: ValueId) -> u32 {
    let ty = f.ty(v);
    let split = ty.memdesc().map_or(1, |(_, _, l)| cta_parts(l));
    (crate::tmem_types::columns(ty) / split).max(1)
}

/// The CTA parts a tensor-memory layout splits its columns into: its last `col` bits select the CTA (1 without a
/// split). A broadcast's copies are each CTA's own columns too.
pub fn cta_parts(layout: &crate::types::Layout) -> u32 {
    match layout.spec.as_ref() {
        Some(tessel_layouts::AnyLayout::TensorMemory(t)) => t.cta_split[0] * t.cta_split[1],
        Some(tessel_layouts::AnyLayout::TensorMemoryScales(t)) => t.cta_split[0] * t.cta_split[1] * t.broadcast,
        _ => 1,
    }
    .max(1)
}

/// Where a 2-D tensor-memory layout (`row, col → dim0, dim1`, `col` counting element slots) puts each element:
/// every (row, slot) holding it, slots first then rows (so the first is the lowest slot, at its lowest row).
/// Zero bases make several places hold one element: the lane quarters of a `TensorMemoryScalesLayout` hold
/// copies, and slots past a small tensor repeat others.
pub fn placements(layout: &tessel_layouts::LinearLayout) -> HashMap<(u32, u32), Vec<(u32, u32)>> {
    let (rows, slots) = (layout.in_dim_size("row"), layout.in_dim_size("col"));
    let mut at: HashMap<(u32, u32), Vec<(u32, u32)>> = HashMap::new();
    for slot in 0..slots {
        for row in 0..rows {
            let c = layout.apply(&[row, slot]);
            at.entry((c[0], c[1])).or_default().push((row, slot));
        }
    }
    at
}

/// One buffer: its allocation, result, columns (a power of two) and live range in program positions.
struct Buffer {
    op: OpId,
    value: ValueId,
    size: u32,
    live: (usize, usize),
}

/// The live range of every `tmem_alloc` of `f`, in positions of [`Func::all_ops`].
fn live_ranges(f: &Func, allocs: &[(OpId, ValueId)]) -> Vec<(usize, usize)> {
    let ops = f.all_ops();
    let pos: HashMap<OpId, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    let end = |o: OpId| {
        let mut last = pos[&o];
        f.walk_op(o, &mut |x| last = last.max(pos[&x]));
        last
    };
    // Which buffer each tensor-memory value views; `None` once one flows where views are not followed.
    let mut owner: HashMap<ValueId, usize> = allocs.iter().enumerate().map(|(i, &(_, v))| (v, i)).collect();
    let is_view = |op: &Op| matches!(op, Op::MemDescIndex | Op::MemDescSlice { .. } | Op::MemDescReinterpret);
    let whole = (0, ops.len());
    for &o in &ops {
        let d = f.op(o);
        let tmem_results = d.results.iter().any(|&r| f.ty(r).is_tmem());
        let region_args = d.regions.iter().any(|&r| f.region(r).args.iter().any(|&a| f.ty(a).is_tmem()));
        if (tmem_results && d.op != Op::TmemAlloc && !is_view(&d.op)) || region_args {
            return vec![whole; allocs.len()];
        }
        if is_view(&d.op)
            && let Some(&b) = owner.get(&d.operands[0])
        {
            owner.insert(d.results[0], b);
        }
    }
    let mut ranges: Vec<(usize, usize)> = allocs.iter().map(|&(o, _)| (pos[&o], pos[&o])).collect();
    let mut last_is_mma = vec![false; allocs.len()];
    for &o in &ops {
        let d = f.op(o);
        for &v in &d.operands {
            let Some(&b) = owner.get(&v) else { continue };
            // The use at the allocation's level: the op holding it there.
            let home = f.op(allocs[b].0).parent;
            let mut at = o;
            while f.op(at).parent != home {
                match f.op(at).parent.and_then(|r| f.region(r).parent) {
                    Some(p) => at = p,
                    None => break,
                }
            }
            let e = end(at);
            if e >= ranges[b].1 {
                ranges[b].1 = e;
                last_is_mma[b] = matches!(d.op, Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. } | Op::Tcgen05Copy);
            }
        }
    }
    for (b, r) in ranges.iter_mut().enumerate() {
        if last_is_mma[b] {
            r.1 = whole.1;
        }
    }
    ranges
}

/// The plan of `f` (`None` when it has no tensor memory), or the `tmem_alloc` that does not fit with the message
/// naming the buffers live with it.
pub fn plan(f: &Func) -> Result<Option<Plan>, (OpId, String)> {
    let allocs: Vec<(OpId, ValueId)> =
        f.all_ops().into_iter().filter(|&o| f.op(o).op == Op::TmemAlloc).map(|o| (o, f.op(o).results[0])).collect();
    if allocs.is_empty() {
        return Ok(None);
    }
    let ranges = live_ranges(f, &allocs);
    let bufs: Vec<Buffer> = allocs
        .iter()
        .zip(ranges)
        .map(|(&(op, value), live)| Buffer { op, value, size: buffer_columns(f, value).next_power_of_two(), live })
        .collect();
    let overlap = |a: &Buffer, b: &Buffer| a.live.0 <= b.live.1 && b.live.0 <= a.live.1;
    let mut order: Vec<usize> = (0..bufs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(bufs[i].size));
    let mut placed: Vec<(usize, u32)> = Vec::new();
    let mut columns = HashMap::new();
    let mut top = 0u32;
    for &i in &order {
        let b = &bufs[i];
        let taken =
            |at: u32| placed.iter().any(|&(j, c)| overlap(b, &bufs[j]) && at < c + bufs[j].size && c < at + b.size);
        let Some(at) = (0..COLUMNS / b.size).map(|k| k * b.size).find(|&at| !taken(at)) else {
            let live: Vec<usize> = (0..bufs.len()).filter(|&j| j == i || overlap(b, &bufs[j])).collect();
            let need: u32 = live.iter().map(|&j| bufs[j].size).sum();
            let mut msg = format!("the kernel needs {need} tensor-memory columns, more than the {COLUMNS} of a CTA");
            for j in live {
                let v = bufs[j].value;
                let name = f.value(v).name.clone().map_or_else(|| v.to_string(), |n| format!("%{n}"));
                msg += &format!("; {name} ({}): {} columns", f.ty(v), buffer_columns(f, v));
            }
            return Err((b.op, msg));
        };
        placed.push((i, at));
        columns.insert(b.value, at);
        top = top.max(at + b.size);
    }
    Ok(Some(Plan { columns, total: top.next_power_of_two().max(32) }))
}

#[cfg(test)]
mod tests {
    fn plan(text: &str) -> Result<Vec<(String, u32)>, String> {
        let f = crate::parse::parse_func(text).unwrap();
        let p = super::plan(&f).map_err(|(_, m)| m)?.expect("tensor memory");
        let mut cols: Vec<(String, u32)> =
            p.columns.iter().map(|(&v, &c)| (f.value(v).name.clone().unwrap_or_default(), c)).collect();
        cols.sort();
        cols.push(("total".into(), p.total));
        Ok(cols)
    }

    const REGS: &str = "DistributedLinearLayout([[0,1],[0,2],[0,4],[0,8],[0,16],[0,32],[0,64],[0,128]],\
                        [[1,0],[2,0],[4,0],[8,0],[16,0]],[[32,0],[64,0]],[],[128,256])";

    #[test]
    fn buffers_used_one_after_another_share_columns() {
        // %a is done (loaded) before %b is allocated: both take columns 0..256.
        let text = format!(
            "func @k() attributes {{target = sm_100a, num_warps = 4}} {{
  %a = tmem_alloc : memdesc<128x256xf32, TensorMemoryLayout((128,256), 1)>
  %x = tmem_load %a : tensor<128x256xf32, {REGS}>
  %b = tmem_alloc %x : memdesc<128x256xf32, TensorMemoryLayout((128,256), 1)>
  %c = tmem_alloc : memdesc<128x256xf32, TensorMemoryLayout((128,256), 1)>
  %y = tmem_load %b : tensor<128x256xf32, {REGS}>
  tmem_store %y, %c
  return
}}"
        );
        assert_eq!(plan(&text).unwrap(), [("a".into(), 0), ("b".into(), 0), ("c".into(), 256), ("total".into(), 512)]);
    }

    #[test]
    fn buffers_live_together_over_the_budget_are_named() {
        let text = format!(
            "func @k() attributes {{target = sm_100a, num_warps = 4}} {{
  %a = tmem_alloc : memdesc<128x256xf32, TensorMemoryLayout((128,256), 1)>
  %b = tmem_alloc : memdesc<128x256xf32, TensorMemoryLayout((128,256), 1)>
  %c = tmem_alloc : memdesc<128x64xf32, TensorMemoryLayout((128,64), 1)>
  %x = tmem_load %a : tensor<128x256xf32, {REGS}>
  %y = tmem_load %b : tensor<128x256xf32, {REGS}>
  return
}}"
        );
        let err = plan(&text).unwrap_err();
        assert!(err.contains("needs 576 tensor-memory columns, more than the 512 of a CTA"), "{err}");
        assert!(err.contains("%a (memdesc<128x256xf32") && err.contains("%c (memdesc<128x64xf32"), "{err}");
    }
}
