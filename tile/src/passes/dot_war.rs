//! Gluon mode: a write into shared memory that an asynchronous `warpgroup_dot` may still be reading is a
//! write-after-read race (the tensor cores read their operands while the wgmma runs, until a
//! `warpgroup_dot_wait` retires it). Where this pass can see the race statically, it inserts
//! `warpgroup_dot_wait {pending = 0}` right before the write, and reports each one so the driver can warn with
//! the source spans: the kernel then runs as its author meant, on the GPU and in the interpreter alike.
//!
//! "Statically" means the write and the dot's operand are the same buffer for certain: the same allocation,
//! reached through views that keep every element (`permute`, `reshape`, `_reinterpret`), `memdesc_index` by the
//! same constant, and at most one of the two through a `slice` (two slices may be disjoint). Rings indexed at
//! run time are left alone: the interpreter checks each access as it runs and the code generator refuses what
//! it can prove, as before. The analysis follows program order through `if` (either branch), loops (the body
//! twice: the second pass sees what the previous iteration left in flight across the back edge) and
//! `warp_specialize` (each worker from nothing in flight; the default partition from what its parent had).
//!
//! Retiring every dot (`pending = 0`) rather than exactly the offending one keeps the count right whatever path
//! led there; a kernel written without the race never reaches this, so the cost is only paid by kernels that
//! would otherwise be wrong.

use crate::ir::{Func, OpId, RegionId, ValueDef, ValueId};
use crate::op_facts::BufferUse;
use crate::ops::{Const, Op};

/// A `warpgroup_dot_wait` this pass inserted: `wait`, right before `write`, retires `dot` (and every other
/// asynchronous dot in flight), which may still read the buffer `write` overwrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InsertedDotWait {
    pub wait: OpId,
    pub write: OpId,
    pub dot: OpId,
}

/// A shared-memory buffer as far as the pass can name it.
#[derive(Clone, Debug, PartialEq)]
struct Buffer {
    /// The allocation (or whatever value the chain of views starts from).
    root: ValueId,
    /// The constant indices of the `memdesc_index` views on the way, outermost last.
    indices: Vec<i64>,
    /// Whether a `slice` is on the way (a part of the buffer, which another part may not overlap).
    sliced: bool,
}

impl Buffer {
    fn surely_overlaps(&self, other: &Buffer) -> bool {
        self.root == other.root && self.indices == other.indices && !(self.sliced && other.sliced)
    }
}

/// The buffer memdesc `v` views, or `None` where a run-time index makes it unknowable here.
fn buffer(f: &Func, mut v: ValueId) -> Option<Buffer> {
    let (mut indices, mut sliced) = (Vec::new(), false);
    while let ValueDef::Result(o, 0) = f.value(v).def
        && f.op(o).op.is_memdesc_view()
    {
        let d = f.op(o);
        match d.op {
            Op::MemDescIndex => {
                let ValueDef::Result(c, 0) = f.value(d.operands[1]).def else { return None };
                let Op::Constant(Const::Int(i)) = f.op(c).op else { return None };
                indices.push(i);
            }
            Op::MemDescSlice { .. } => sliced = true,
            _ => {}
        }
        v = d.operands[0];
    }
    Some(Buffer { root: v, indices, sliced })
}

/// Asynchronous dots in flight, oldest first, with the buffers each reads.
#[derive(Clone, Debug, Default)]
struct InFlight(Vec<(OpId, Vec<Buffer>)>);

impl InFlight {
    /// After either of two paths: what may be in flight after one or the other.
    fn join(&mut self, other: &InFlight) {
        for (d, reads) in &other.0 {
            if !self.0.iter().any(|(e, _)| e == d) {
                self.0.push((*d, reads.clone()));
            }
        }
    }

    fn ids(&self) -> Vec<OpId> {
        self.0.iter().map(|(d, _)| *d).collect()
    }
}

/// Inserts a `warpgroup_dot_wait {pending = 0}` before every write into shared memory that an asynchronous
/// `warpgroup_dot` in flight surely reads (see the module comment), and returns them.
pub fn wait_before_overwriting_dot_operands(f: &mut Func) -> Vec<InsertedDotWait> {
    let mut out = Vec::new();
    region(f, f.body, &mut InFlight::default(), &mut out);
    out
}

fn region(f: &mut Func, r: RegionId, state: &mut InFlight, out: &mut Vec<InsertedDotWait>) {
    let mut i = 0;
    while i < f.region(r).ops.len() {
        let o = f.region(r).ops[i];
        let d = f.op(o).clone();
        match d.op {
            Op::WarpGroupDot { is_async: true, .. } => {
                let reads = d.operands[..2].iter().filter(|&&x| f.ty(x).memdesc().is_some());
                let reads = reads.filter_map(|&x| buffer(f, x)).collect();
                state.0.push((o, reads));
            }
            Op::WarpGroupDotWait { pending } => {
                let drop = state.0.len().saturating_sub(pending as usize);
                state.0.drain(..drop);
            }
            Op::For(_) | Op::While => {
                let entry = state.clone();
                // The first pass starts from the loop's entry; each later one from what the previous iteration left
                // in flight, until that stops changing (in practice the second pass).
                for _ in 0..4 {
                    let before = state.ids();
                    for &body in &d.regions {
                        region(f, body, state, out);
                    }
                    if state.ids() == before {
                        break;
                    }
                }
                // Zero iterations leave what was in flight on entry.
                state.join(&entry);
            }
            Op::If => {
                let entry = state.clone();
                let mut joined: Option<InFlight> = None;
                for &branch in &d.regions {
                    let mut s = entry.clone();
                    region(f, branch, &mut s, out);
                    match &mut joined {
                        Some(j) => j.join(&s),
                        None => joined = Some(s),
                    }
                }
                let mut after = joined.unwrap_or_default();
                // An `if` without `else` may skip its one branch.
                if d.regions.len() < 2 {
                    after.join(&entry);
                }
                *state = after;
            }
            Op::WarpSpecialize(_) => {
                for (k, &part) in d.regions.iter().enumerate() {
                    if k == 0 {
                        region(f, part, state, out);
                    } else {
                        region(f, part, &mut InFlight::default(), out);
                    }
                }
            }
            // Any other op that writes a buffer (`local_store`, `async_copy`, the TMA loads...).
            _ => {
                let write = d.op.facts().buffers.iter().find(|b| b.1 == BufferUse::Write);
                let written = write.and_then(|&(k, _)| buffer(f, d.operands[k]));
                let hit = written.and_then(|w| {
                    state.0.iter().rev().find(|(_, reads)| reads.iter().any(|b| b.surely_overlaps(&w))).map(|x| x.0)
                });
                if let Some(dot) = hit {
                    let wait = f.append(r, Op::WarpGroupDotWait { pending: 0 }, &[], vec![], &[], d.loc);
                    f.region_mut(r).ops.pop();
                    f.region_mut(r).ops.insert(i, wait);
                    i += 1;
                    state.0.clear();
                    out.push(InsertedDotWait { wait, write: o, dot });
                }
            }
        }
        i += 1;
    }
}
