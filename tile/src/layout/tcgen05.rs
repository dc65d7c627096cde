//! Auto-mode dots on Blackwell's tensor cores (sm_100a): which `dot`s `tcgen05.mma` runs, the register layout of
//! their accumulator, and their rewrite into the tensor-memory ops gluon kernels write by hand.
//!
//! [`accumulator_layout`] is consulted by coalescing (through `accelerate::accumulator_layout`): a dot whose
//! types one dense kind takes ([`Tcgen05Kind`]: f16 or bf16 into f32, f32 at `input_precision` tf32, e4m3/e5m2
//! into f32, i8 into i32), with M 64 or a multiple of 128, each instruction's N (the tile's N, at most 256) a
//! multiple of the kind's step (16; 8 for M 64 except kind::i8), K a multiple of the kind's 32-byte step, on 4
//! or 8 warps and at most 512 tensor-memory columns, and which sits in the function body or in `for` loops
//! only, gets the `32x32b` register
//! layout of its accumulator's `TensorMemoryLayout((min(M, 128), min(N, 256)), 1)` (`TmemRegLayout`). The other
//! dots stay on `mma.sync`, and [`why_not`] says why (codegen writes it into the PTX as a comment).
//!
//! After propagation, [`lower_dots`] rewrites each such dot, synchronously:
//!
//! - A and B are staged in NVMMA shared memory as for `wgmma` (`staging::stage_operand`: 8- and 32-bit operands
//!   K-major, the layout their kinds read);
//! - the accumulator lives in a tensor-memory buffer. A dot in a loop whose accumulator is carried by the loop
//!   and read by nothing else (`acc = tl.dot(a, b, acc)`) gets the buffer before the loop, holding the
//!   incoming accumulator (`tmem_alloc init`), and it is read once after the loop (`tmem_load`); any other dot
//!   gets a buffer holding its accumulator operand right before it (none when that is the constant 0.0: the MMA
//!   then runs with `use_acc` false) and is read right after it;
//! - `tcgen05_mma` commits to an mbarrier of its own (allocated and initialized at the kernel's entry), waited
//!   for right after the MMA, before the next iteration's staging overwrites the operands. The parity waited
//!   for is carried through every enclosing loop as an `i32` (the slot of the carried accumulator, which the
//!   buffer replaced, is reused for it in the innermost loop).

use std::sync::Arc;

use tessel_layouts::{AnyLayout, DistributedLayout, TensorMemoryLayout, TmemAccess, TmemRegLayout};

use crate::ir::{Cursor, Func, OpId, ValueDef, ValueId};
use crate::layout::rules::{L, from_spec};
use crate::layout::staging::{Hoisted, stage_operand};
use crate::ops::{BinOp, Const, InputPrecision, Op};
use crate::tcgen05_kind::Tcgen05Kind;
use crate::types::{Layout, ScalarType, Type};

/// The tensor-memory layout of an `[m, n]` f32 accumulator: one instruction tile per block, 128 (or 64) rows
/// by at most 256 columns.
pub fn tmem_layout(m: u32, n: u32) -> TensorMemoryLayout {
    TensorMemoryLayout { block: [m.min(128), n.min(256)], col_stride: 1, two_ctas: false, cta_split: [1, 1] }
}

/// The `32x32b` register layout of `dot` op `o`'s accumulator when `tcgen05.mma` runs it on the function's
/// target, else why not.
pub fn accumulator_layout(f: &Func, o: OpId) -> Result<L, String> {
    if f.target != crate::target::Target::Sm100a {
        return Err(format!("tcgen05 needs sm_100a, the kernel compiles for {}", f.target));
    }
    let d = f.op(o);
    let (a, b, c) = (f.ty(d.operands[0]), f.ty(d.operands[1]), f.ty(d.results[0]));
    let scalar = |t: &Type| t.elem().and_then(|e| e.scalar());
    let (Some(a_t), Some(b_t), Some(c_t)) = (scalar(a), scalar(b), scalar(c)) else {
        return Err("operands that are not scalar tensors".into());
    };
    let kind = Tcgen05Kind::of(a_t, b_t, c_t)?;
    if let Op::Dot { precision, .. } = d.op
        && kind == Tcgen05Kind::Tf32
        && precision != InputPrecision::Tf32
    {
        return Err(format!(
            "f32 operands with input_precision {} (tcgen05.mma reads f32 as tf32: kind::tf32 is input_precision \
             tf32 only)",
            precision.word()
        ));
    }
    let shape = c.shape();
    if shape.len() != 2 {
        return Err(format!("a {}-D dot (tcgen05 takes 2-D tiles)", shape.len()));
    }
    let (m, n, k) = (shape[0], shape[1], a.shape()[1]);
    let warps = f.config.num_warps;
    if warps != 4 && warps != 8 {
        return Err(format!("{warps} warps (tensor-memory loads need 4 or 8)"));
    }
    if m != 64 && m % 128 != 0 {
        return Err(format!("block M {m} (tcgen05 needs M 64 or a multiple of 128)"));
    }
    let tmem = tmem_layout(m, n);
    let n_step = kind.n_step(m.min(128));
    let n_instr = tmem.block[1];
    if n_instr < n_step || n_instr % n_step != 0 || n % n_instr != 0 {
        return Err(format!(
            "block N {n} (each tcgen05.mma kind::{}'s N must be a multiple of {n_step}, at most 256)",
            kind.name()
        ));
    }
    let k_step = kind.k_step(a_t);
    if k % k_step != 0 {
        return Err(format!("block K {k} (tcgen05.mma kind::{} steps K by {k_step}: 32 bytes)", kind.name()));
    }
    if n < 16 {
        return Err(format!("block N {n} (the staged B needs 32 bytes along a row)"));
    }
    let columns = n * m.div_ceil(128);
    if columns > 512 {
        return Err(format!("an accumulator of {m}x{n} takes {columns} tensor-memory columns, more than 512"));
    }
    enclosing_loops(f, o)?;
    let reg = TmemRegLayout::new(tmem, TmemAccess::B32x32, warps);
    from_spec(DistributedLayout::TmemReg(reg), shape).map_err(|e| e.to_string())
}

/// Why `dot` op `o` does not run on `tcgen05.mma` on sm_100a, or `None` when it does.
pub fn why_not(f: &Func, o: OpId) -> Option<String> {
    accumulator_layout(f, o).err()
}

/// The `for` loops around op `o`, outermost first; an error when another structured op encloses it (the
/// MMA's barrier parity is carried through loops only).
fn enclosing_loops(f: &Func, o: OpId) -> Result<Vec<OpId>, String> {
    let mut loops = Vec::new();
    let mut region = f.op(o).parent;
    while let Some(r) = region {
        let Some(p) = f.region(r).parent else { break };
        match f.op(p).op {
            Op::For(_) => loops.push(p),
            ref other => {
                return Err(format!(
                    "a dot inside `{}` (tcgen05's barrier parity is carried through `for` loops only)",
                    other.name()
                ));
            }
        }
        region = f.op(p).parent;
    }
    loops.reverse();
    Ok(loops)
}

/// Whether `t` has a tensor-memory register layout: a dot [`lower_dots`] rewrites.
fn on_tcgen05(t: &Type) -> bool {
    matches!(t.layout().and_then(|l| l.spec.as_ref()), Some(AnyLayout::Distributed(DistributedLayout::TmemReg(_))))
}

/// Rewrites every `dot` whose accumulator has a tensor-memory register layout into tensor-memory ops and a
/// `tcgen05_mma` (see the module's description). Returns whether anything changed.
pub fn lower_dots(f: &mut Func) -> Result<bool, super::AssignError> {
    let dots: Vec<OpId> = f
        .all_ops()
        .into_iter()
        .filter(|&o| matches!(f.op(o).op, Op::Dot { .. }) && on_tcgen05(f.ty(f.op(o).results[0])))
        .collect();
    let mut hoisted = Hoisted::new();
    for &o in &dots {
        lower_dot(f, o, &mut hoisted)?;
    }
    Ok(!dots.is_empty())
}

/// The slot (among the carried values, 0 first) of the innermost loop around `o` through which its accumulator
/// is carried: operand 2 is that loop's carried value, used by `o` alone, and `o`'s result is yielded back to
/// it and used by nothing else.
fn carried_slot(f: &Func, o: OpId) -> Option<(OpId, usize)> {
    let d = f.op(o);
    let body = d.parent?;
    let lp = f.region(body).parent?;
    if !matches!(f.op(lp).op, Op::For(_)) {
        return None;
    }
    let ValueDef::Arg(r, index) = f.value(d.operands[2]).def else { return None };
    if r != body || index == 0 {
        return None;
    }
    let slot = index as usize - 1;
    let uses = f.use_counts();
    let yield_op = *f.region(body).ops.last()?;
    let result = d.results[0];
    let yields = &f.op(yield_op).operands;
    let yielded_once = yields.iter().filter(|&&v| v == result).count() == 1 && yields.get(slot) == Some(&result);
    (uses[d.operands[2].index()] == 1 && uses[result.index()] == 1 && yielded_once).then_some((lp, slot))
}

fn lower_dot(f: &mut Func, o: OpId, hoisted: &mut Hoisted) -> Result<(), super::AssignError> {
    let d = f.op(o).clone();
    let acc_ty = f.ty(d.results[0]).clone();
    let shape = acc_ty.shape().to_vec();
    let tmem = tmem_layout(shape[0], shape[1]);
    let linear = AnyLayout::TensorMemory(tmem.clone()).to_linear(&shape)?;
    let layout = Arc::new(Layout { spec: Some(AnyLayout::TensorMemory(tmem)), linear });
    let elem = acc_ty.elem().and_then(|e| e.scalar()).expect("a scalar accumulator");
    let buf_ty = Type::MemDesc { shape: shape.as_slice().into(), elem, layout };
    let a = stage_operand(f, o, d.operands[0], false, hoisted)?;
    let b = stage_operand(f, o, d.operands[1], true, hoisted)?;
    let loops = enclosing_loops(f, o).map_err(|_| super::AssignError::NoFit("dot"))?;

    // The mbarrier the MMA commits to, initialized at the kernel's entry.
    let body = f.body;
    let first = f.region(body).ops[0];
    let mut c = Cursor { f, anchor: first };
    let bar = c.op(Op::LocalAlloc, &[], crate::tma::barrier_type());
    c.insert(Op::MBarrierInit { count: 1 }, &[bar], vec![]);

    // The accumulator's buffer: before the loop that carries it, else right before the dot.
    let carried = carried_slot(f, o);
    let (init, anchor) = match carried {
        Some((lp, slot)) => (f.op(lp).operands[3 + slot], lp),
        None => (d.operands[2], o),
    };
    // A dot of its own from zero (attention's QK^T) needs no store: the MMA does not read the buffer.
    let from_zero = carried.is_none() && is_zero(f, init);
    let acc = if from_zero {
        Cursor { f, anchor }.op(Op::TmemAlloc, &[], buf_ty)
    } else {
        let init = if f.ty(init).layout() == acc_ty.layout() {
            init
        } else {
            let l = Arc::new(acc_ty.layout().expect("laid out").clone());
            crate::layout::insert::convert_before(f, anchor, init, l)
        };
        Cursor { f, anchor }.op(Op::TmemAlloc, &[init], buf_ty)
    };

    let phase = thread_phase(f, &loops, carried.map(|(_, s)| s), o);
    let mut c = Cursor { f, anchor: o };
    let yes = c.constant(Const::Int(1), Type::scalar(ScalarType::I1));
    let use_acc = if from_zero { c.constant(Const::Int(0), Type::scalar(ScalarType::I1)) } else { yes };
    c.insert(Op::Tcgen05Mma, &[a, b, acc, use_acc, yes, bar, yes], vec![]);
    c.insert(Op::mbarrier_wait(), &[bar, phase.now], vec![]);
    let one = c.constant(Const::Int(1), Type::scalar(ScalarType::I32));
    let next =
        c.op(Op::Binary { op: BinOp::Xor, propagate_nan: false }, &[phase.now, one], Type::scalar(ScalarType::I32));
    match carried {
        Some((lp, slot)) => {
            // The loop's result is read from the buffer after the loop; the slot now carries the parity.
            let result = f.op(lp).results[slot];
            let region = f.op(lp).parent.expect("linked loop");
            let at = f.region(region).ops.iter().position(|&x| x == lp).expect("the loop is in its region");
            let after = f.region(region).ops[at + 1];
            let loaded = Cursor { f, anchor: after }.op(Op::TmemLoad, &[acc], acc_ty.clone());
            f.replace_all_uses(result, loaded);
            f.values[result.index()].ty = Type::scalar(ScalarType::I32);
            f.values[result.index()].name = Some("phase".into());
        }
        None => {
            let loaded = Cursor { f, anchor: o }.op(Op::TmemLoad, &[acc], acc_ty.clone());
            f.replace_all_uses(d.results[0], loaded);
        }
    }
    phase.close(f, next);
    f.unlink(o);
    Ok(())
}

/// Whether `v` is the constant 0.0 (or integer 0; a splat).
fn is_zero(f: &Func, v: ValueId) -> bool {
    matches!(f.value(v).def, ValueDef::Result(p, _)
        if matches!(f.op(p).op, Op::Constant(Const::Float(x)) if x == 0.0)
            || matches!(f.op(p).op, Op::Constant(Const::Int(0))))
}

/// An `i32` parity carried through loops: its value at the op it was made for, and the slot of each loop.
struct Phase {
    now: ValueId,
    loops: Vec<(OpId, usize)>,
}

/// Carries a parity, 0 before the outermost of `loops` (those around `at`, outermost first), through each of
/// them: a new carried value, or the innermost loop's slot `reuse` (whose values are retyped to `i32`).
fn thread_phase(f: &mut Func, loops: &[OpId], reuse: Option<usize>, at: OpId) -> Phase {
    let i32t = Type::scalar(ScalarType::I32);
    let start = loops.first().copied().unwrap_or(at);
    let mut now = Cursor { f, anchor: start }.constant(Const::Int(0), i32t.clone());
    let mut slots = Vec::new();
    for (i, &lp) in loops.iter().enumerate() {
        let body = f.op(lp).regions[0];
        let slot = match reuse {
            Some(slot) if i + 1 == loops.len() => {
                f.op_mut(lp).operands[3 + slot] = now;
                let arg = f.region(body).args[1 + slot];
                f.values[arg.index()].ty = i32t.clone();
                f.values[arg.index()].name = Some("phase".into());
                slot
            }
            _ => {
                f.op_mut(lp).operands.push(now);
                f.add_region_arg(body, i32t.clone(), Some("phase".into()));
                let slot = f.op(lp).results.len();
                let v = ValueId(f.values.len() as u32);
                f.values.push(crate::ir::ValueData {
                    ty: i32t.clone(),
                    def: ValueDef::Result(lp, slot as u32),
                    name: Some("phase".into()),
                });
                f.op_mut(lp).results.push(v);
                slot
            }
        };
        now = f.region(body).args[1 + slot];
        slots.push((lp, slot));
    }
    Phase { now, loops: slots }
}

impl Phase {
    /// Yields `next` (the parity after the wait) from the innermost loop, and each loop's result from the one
    /// around it.
    fn close(self, f: &mut Func, mut next: ValueId) {
        for &(lp, slot) in self.loops.iter().rev() {
            let body = f.op(lp).regions[0];
            let y = *f.region(body).ops.last().expect("a body ends in yield");
            let operands = &mut f.op_mut(y).operands;
            if slot < operands.len() {
                operands[slot] = next;
            } else {
                operands.push(next);
            }
            next = f.op(lp).results[slot];
        }
    }
}
