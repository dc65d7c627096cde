//! Auto-mode dots on Blackwell's tensor cores (sm_100a): which `dot`s `tcgen05.mma` runs, the register layout of
//! their accumulator, and their rewrite into the tensor-memory ops gluon kernels write by hand.
//!
//! [`accumulator_layout`] is consulted by coalescing (through `accelerate::accumulator_layout`): a dot whose
//! types one dense kind takes ([`Tcgen05Kind`]: f16 or bf16 into f32, f32 at `input_precision` tf32, e4m3/e5m2
//! into f32, i8 into i32), with M 64 or a multiple of 128, each instruction's N (the tile's N, at most 256) a
//! multiple of the kind's step (16; 8 for M 64 except kind::i8), K a multiple of the kind's 32-byte step, on 4
//! or 8 warps and at most 512 tensor-memory columns, and which sits in the function body or in `for` loops,
//! `if`s and `while` bodies only, gets the `32x32b` register
//! layout of its accumulator's `TensorMemoryLayout((min(M, 128), min(N, 256)), 1)` (`TmemRegLayout`). The other
//! dots stay on `mma.sync`, and [`why_not`] says why (codegen writes it into the PTX as a comment).
//!
//! After propagation, [`lower_dots`] rewrites each such dot, synchronously (and each `dot_scaled` left for the
//! block-scaled MMA, its operands and scales placed by [`super::dot_scaled`], into a `tcgen05_mma_scaled`):
//!
//! - A and B are staged in NVMMA shared memory as for `wgmma` (`staging::stage_operand`: 8- and 32-bit operands
//!   K-major, the layout their kinds read), except a 16-bit A made next to the dot in the `32x32b` register
//!   layout of a tensor-memory tile (attention's P, computed from S as it was read from tensor memory): the MMA
//!   reads that one from tensor memory (`tmem_alloc` of it, `tmem_operand`), unless the kernel's buffers would
//!   then not fit the 512 columns, in which case every A is staged in shared memory;
//! - the accumulator lives in a tensor-memory buffer. A dot in a loop whose accumulator is carried by the loop
//!   and read by nothing else (`acc = tl.dot(a, b, acc)`) gets the buffer before the loop, holding the
//!   incoming accumulator (`tmem_alloc init`), and it is read once after the loop (`tmem_load`). So is a fused
//!   persistent loop's (`flatten=True`): its accumulator restarts as `select(first K step, 0, acc)`, which
//!   becomes the MMA's `use_acc` (false on a tile's first step), and its epilogue, in an `if` after the dot,
//!   reads the buffer there (`tmem_load` inside the `if`), so a K step moves no accumulator through
//!   registers; any other dot
//!   gets a buffer holding its accumulator operand right before it (none when that is the constant 0.0: the MMA
//!   then runs with `use_acc` false) and is read right after it;
//! - `tcgen05_mma` commits to an mbarrier of its own (allocated and initialized at the kernel's entry), waited
//!   for right after the MMA, before the next iteration's staging overwrites the operands. The parity waited
//!   for is threaded through every enclosing op as an `i32`: carried by `for` and `while` loops, yielded by an
//!   `if` (its other region yields it unchanged); the slot of the carried accumulator, which the buffer
//!   replaced, is reused for it in the innermost loop. So the fused loop of `flatten=True` (inside the `if`
//!   that skips a loop of no iteration) and the grouped GEMM's K loop (in a `while` in an `if` in a `for`) run
//!   on tcgen05.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, DistributedLayout, TmemAccess, TmemRegLayout};

use crate::ir::{Cursor, Func, OpId, RegionId, ValueDef, ValueId};
use crate::layout::rules::{L, from_spec};
use crate::layout::staging::{Hoisted, stage_operand};
use crate::layout::tcgen05_site::{enclosing_ops, tmem_layout};
use crate::ops::{BinOp, Const, InputPrecision, Op};
use crate::tcgen05_kind::Tcgen05Kind;
use crate::types::{Layout, ScalarType, Type};

/// The `32x32b` register layout of `dot` op `o`'s accumulator when `tcgen05.mma` runs it on the function's
/// target, else why not.
pub fn accumulator_layout(f: &Func, o: OpId) -> Result<L, String> {
    if f.target != crate::target::Target::Sm100a {
        return Err(format!("tcgen05 needs sm_100a, the kernel compiles for {}", f.target));
    }
    let d = f.op(o);
    if matches!(d.op, Op::DotScaled { .. }) {
        // The block-scaled MMA's own rule (`layout::dot_scaled`); the accumulator is read as a dense one's.
        if let Some(why) = super::dot_scaled::why_not(f, o) {
            return Err(why);
        }
        let shape = f.ty(d.results[0]).shape();
        let reg = TmemRegLayout::new(tmem_layout(shape[0], shape[1]), TmemAccess::B32x32, f.config.num_warps);
        return from_spec(DistributedLayout::TmemReg(reg), shape).map_err(|e| e.to_string());
    }
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
    enclosing_ops(f, o)?;
    let reg = TmemRegLayout { split_n: split_along_n(f, o), ..TmemRegLayout::new(tmem, TmemAccess::B32x32, warps) };
    from_spec(DistributedLayout::TmemReg(reg), shape).map_err(|e| e.to_string())
}

/// Whether dot `o`'s accumulator (its result, or the result of the loop that carries it) is split into its two
/// column halves where it is read: `reshape` to `[M, 2, N / 2]`, `permute (0, 2, 1)`, `split` (tutorial 09's
/// `EPILOGUE_SUBTILE`). Its register layout is then `32x32b_splitn`, which holds each half in registers of its
/// own: on 8 warps `32x32b` gives the second warpgroup the second half, and the split would convert the whole
/// tile through shared memory. Triton splits the tensor-memory load in two instead (`TMemSplitLoadPattern`);
/// both read every column once.
fn split_along_n(f: &Func, o: OpId) -> bool {
    let d = f.op(o);
    let r = d.results[0];
    let &[m, n] = f.ty(r).shape() else { return false };
    let mut values = vec![r];
    if let Some(body) = d.parent
        && let Some(lp) = f.region(body).parent
        && matches!(f.op(lp).op, Op::For(_))
        && let Some(&y) = f.region(body).ops.last()
    {
        let yields = &f.op(y).operands;
        values.extend(yields.iter().zip(&f.op(lp).results).filter(|(v, _)| **v == r).map(|(_, &res)| res));
    }
    let ops = f.all_ops();
    let users = |v: ValueId| ops.iter().copied().filter(move |&x| f.op(x).operands.contains(&v));
    let result = |x: OpId| f.op(x).results[0];
    values.iter().any(|&v| {
        users(v).any(|x| {
            matches!(f.op(x).op, Op::Reshape { .. })
                && f.ty(result(x)).shape() == [m, 2, n / 2]
                && users(result(x)).any(|p| {
                    matches!(&f.op(p).op, Op::Permute { order } if order[..] == [0, 2, 1])
                        && users(result(p)).any(|s| f.op(s).op == Op::Split)
                })
        })
    })
}

/// Why `dot` op `o` does not run on `tcgen05.mma` on sm_100a, or `None` when it does.
pub fn why_not(f: &Func, o: OpId) -> Option<String> {
    accumulator_layout(f, o).err()
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
        .filter(|&o| {
            matches!(f.op(o).op, Op::Dot { .. } | Op::DotScaled { .. }) && on_tcgen05(f.ty(f.op(o).results[0]))
        })
        .collect();
    if dots.is_empty() {
        return Ok(false);
    }
    // Operands A in tensor memory when the kernel's buffers still fit its 512 columns, else all in shared memory.
    let before = f.clone();
    lower_all(f, &dots, true)?;
    if crate::tmem::plan(f).is_err() {
        *f = before;
        lower_all(f, &dots, false)?;
    }
    Ok(true)
}

fn lower_all(f: &mut Func, dots: &[OpId], a_in_tmem: bool) -> Result<(), super::AssignError> {
    let mut hoisted = Hoisted::new();
    for &o in dots {
        lower_dot(f, o, a_in_tmem, &mut hoisted)?;
    }
    Ok(())
}

/// The tensor-memory buffer a dense dot `o` reads its operand A (`v`) from instead of shared memory, when it
/// can: a 16-bit A (kind::f16, the one kind that reads A from tensor memory) made in the dot's own region (one
/// made outside is staged once in shared memory instead, not stored every iteration), already in the `32x32b`
/// register layout of `TensorMemoryLayout((128, min(K, 256)), 1)` (attention's P, computed from S as it was
/// loaded from tensor memory), with M a multiple of 128. Its `tmem_alloc` is then one `tcgen05.st` per thread,
/// packed two elements to a column, with no shared-memory round trip and no proxy fence: Triton's
/// `PromoteLHSToTMem`.
fn tmem_operand(f: &Func, o: OpId, v: ValueId) -> Option<Type> {
    let d = f.op(o);
    if !matches!(d.op, Op::Dot { .. }) {
        return None;
    }
    let (a, c) = (f.ty(v), f.ty(d.results[0]));
    let (a_t, b_t, c_t) = (a.elem()?.scalar()?, f.ty(d.operands[1]).elem()?.scalar()?, c.elem()?.scalar()?);
    if !Tcgen05Kind::of(a_t, b_t, c_t).is_ok_and(|k| k.a_in_tmem_ok()) {
        return None;
    }
    let made_here = match f.value(v).def {
        ValueDef::Result(def, _) => f.op(def).parent == d.parent,
        ValueDef::Arg(..) => false,
    };
    let shape = a.shape();
    if !made_here || shape.len() != 2 || shape[0] % 128 != 0 {
        return None;
    }
    let tmem = tmem_layout(shape[0], shape[1]);
    let reg = TmemRegLayout::new(tmem.clone(), TmemAccess::B32x32, f.config.num_warps);
    let want = from_spec(DistributedLayout::TmemReg(reg), shape).ok()?;
    if a.layout()?.linear != want.linear {
        return None;
    }
    let linear = AnyLayout::TensorMemory(tmem.clone()).to_linear(shape).ok()?;
    let layout = Arc::new(Layout { spec: Some(AnyLayout::TensorMemory(tmem)), linear });
    Some(Type::MemDesc { shape: shape.into(), elem: a_t, layout })
}

/// How the innermost loop around a dot carries its accumulator, when it does: through its carried value `slot`
/// (0 first), which the dot alone reads (or, `restart`, a `select(splat(when), 0, carried)` that only the dot
/// reads: a fused persistent loop restarting the accumulator on each tile's first K step) and to which the
/// dot's result is yielded back. The result may also be read by `readers`, ops inside `if`s after the dot in
/// the loop's body (the fused loop's epilogue); nothing else reads it.
struct Carried {
    lp: OpId,
    slot: usize,
    /// The `select` and its scalar condition `when`.
    restart: Option<(OpId, ValueId)>,
    readers: Vec<OpId>,
}

fn carried(f: &Func, o: OpId) -> Option<Carried> {
    let d = f.op(o);
    let body = d.parent?;
    let lp = f.region(body).parent?;
    if !matches!(f.op(lp).op, Op::For(_)) {
        return None;
    }
    let uses = f.use_counts();
    let (mut carried, mut restart) = (d.operands[acc_operand(&d.op)], None);
    if let ValueDef::Result(sel, _) = f.value(carried).def
        && f.op(sel).op == Op::Select
        && f.op(sel).parent == Some(body)
        && is_zero(f, f.op(sel).operands[1])
        && uses[carried.index()] == 1
    {
        let mut when = f.op(sel).operands[0];
        while let ValueDef::Result(p, _) = f.value(when).def
            && matches!(f.op(p).op, Op::Splat | Op::Broadcast | Op::ConvertLayout)
        {
            when = f.op(p).operands[0];
        }
        if f.ty(when).is_tensor() {
            return None;
        }
        restart = Some((sel, when));
        carried = f.op(sel).operands[2];
    }
    let ValueDef::Arg(r, index) = f.value(carried).def else { return None };
    if r != body || index == 0 || uses[carried.index()] != 1 {
        return None;
    }
    let slot = index as usize - 1;
    let yield_op = *f.region(body).ops.last()?;
    let result = d.results[0];
    let yields = &f.op(yield_op).operands;
    if yields.iter().filter(|&&v| v == result).count() != 1 || yields.get(slot) != Some(&result) {
        return None;
    }
    // Every other reader sits in an `if` of the body after the dot (only with a restart: a plain K loop's
    // accumulator is read after the loop).
    let ops = &f.region(body).ops;
    let at = ops.iter().position(|&x| x == o)?;
    let mut readers = Vec::new();
    for &x in &ops[at + 1..ops.len() - 1] {
        let direct = f.op(x).operands.contains(&result);
        let mut inner = Vec::new();
        f.walk_op(x, &mut |y| {
            if y != x && f.op(y).operands.contains(&result) {
                inner.push(y);
            }
        });
        if direct || (!inner.is_empty() && (f.op(x).op != Op::If || restart.is_none())) {
            return None;
        }
        readers.extend(inner);
    }
    let read = readers.iter().map(|&y| f.op(y).operands.iter().filter(|&&v| v == result).count()).sum::<usize>();
    (uses[result.index()] as usize == 1 + read).then_some(Carried { lp, slot, restart, readers })
}

/// The accumulator's operand of a `dot` (2) or a `dot_scaled` (4).
fn acc_operand(op: &Op) -> usize {
    if matches!(op, Op::DotScaled { .. }) { 4 } else { 2 }
}

fn lower_dot(f: &mut Func, o: OpId, a_in_tmem: bool, hoisted: &mut Hoisted) -> Result<(), super::AssignError> {
    let d = f.op(o).clone();
    let acc_ty = f.ty(d.results[0]).clone();
    let shape = acc_ty.shape().to_vec();
    let tmem = tmem_layout(shape[0], shape[1]);
    let linear = AnyLayout::TensorMemory(tmem.clone()).to_linear(&shape)?;
    let layout = Arc::new(Layout { spec: Some(AnyLayout::TensorMemory(tmem)), linear });
    let elem = acc_ty.elem().and_then(|e| e.scalar()).expect("a scalar accumulator");
    let buf_ty = Type::MemDesc { shape: shape.as_slice().into(), elem, layout };
    // The MMA and the operands it reads before the accumulator (A, B) and after it (a block-scaled one's scales).
    let (mma, before, after) = if matches!(d.op, Op::DotScaled { .. }) {
        let (mma, [a, b, sa, sb]) = super::dot_scaled::stage(f, o, hoisted)?;
        (mma, [a, b], vec![sa, sb])
    } else {
        let a = match tmem_operand(f, o, d.operands[0]).filter(|_| a_in_tmem) {
            Some(ty) => Cursor { f, anchor: o }.op(Op::TmemAlloc, &[d.operands[0]], ty),
            None => stage_operand(f, o, d.operands[0], false, hoisted)?,
        };
        let b = stage_operand(f, o, d.operands[1], true, hoisted)?;
        (Op::Tcgen05Mma, [a, b], vec![])
    };
    let around = enclosing_ops(f, o).map_err(|_| super::AssignError::NoFit("dot"))?;

    // The mbarrier the MMA commits to, initialized at the kernel's entry.
    let body = f.body;
    let first = f.region(body).ops[0];
    let mut c = Cursor { f, anchor: first };
    let bar = c.op(Op::LocalAlloc, &[], crate::tma::barrier_type());
    c.insert(Op::MBarrierInit { count: 1 }, &[bar], vec![]);

    // The accumulator's buffer: before the loop that carries it, else right before the dot.
    let carried = carried(f, o);
    let (init, anchor) = match &carried {
        Some(c) => (f.op(c.lp).operands[3 + c.slot], c.lp),
        None => (d.operands[acc_operand(&d.op)], o),
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

    let phase = thread_phase(f, &around, carried.as_ref().map(|c| c.slot), o);
    let mut c = Cursor { f, anchor: o };
    let i1 = Type::scalar(ScalarType::I1);
    let yes = c.constant(Const::Int(1), i1.clone());
    let use_acc = match &carried {
        _ if from_zero => c.constant(Const::Int(0), i1),
        // A restart: accumulate unless the loop restarts here (the MMA overwrites the buffer then).
        Some(Carried { restart: Some((_, when)), .. }) => {
            c.op(Op::Binary { op: BinOp::Xor, propagate_nan: false }, &[*when, yes], i1)
        }
        _ => yes,
    };
    let mut ins = vec![before[0], before[1], acc];
    ins.extend(after);
    ins.extend([use_acc, yes, bar, yes]);
    c.insert(mma, &ins, vec![]);
    c.insert(Op::mbarrier_wait(), &[bar, phase.now], vec![]);
    let one = c.constant(Const::Int(1), Type::scalar(ScalarType::I32));
    let next =
        c.op(Op::Binary { op: BinOp::Xor, propagate_nan: false }, &[phase.now, one], Type::scalar(ScalarType::I32));
    match carried {
        Some(Carried { lp, slot, restart, readers }) => {
            // The epilogue's reads in the body, right where they are (after the MMA's wait).
            for y in readers {
                let loaded = Cursor { f, anchor: y }.op(Op::TmemLoad, &[acc], acc_ty.clone());
                for v in f.op_mut(y).operands.iter_mut().filter(|v| **v == d.results[0]) {
                    *v = loaded;
                }
            }
            if let Some((sel, _)) = restart {
                // Read by nothing once the dot is gone, and its carried operand is about to become the parity.
                f.unlink(sel);
            }
            // The loop's result is read from the buffer after the loop, if anything reads it (a fused loop's
            // epilogue read it inside); the slot now carries the parity.
            let result = f.op(lp).results[slot];
            if f.use_counts()[result.index()] > 0 {
                let region = f.op(lp).parent.expect("linked loop");
                let at = f.region(region).ops.iter().position(|&x| x == lp).expect("the loop is in its region");
                let after = f.region(region).ops[at + 1];
                let loaded = Cursor { f, anchor: after }.op(Op::TmemLoad, &[acc], acc_ty.clone());
                f.replace_all_uses(result, loaded);
            }
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

/// An `i32` parity threaded through the structured ops around an op: its value at that op, and where each of
/// those ops carries it.
struct Phase {
    now: ValueId,
    carriers: Vec<Carrier>,
}

/// How one structured op carries the parity.
enum Carrier {
    /// A `for` or a `while` loop: its carried value `slot` (the `while`'s body is its `after` region).
    Loop { op: OpId, slot: usize },
    /// An `if`: its result `slot`, yielded from `arm` (the region holding the op) after the parity changes and
    /// from the other region as it was before the `if` (`outer`).
    If { op: OpId, slot: usize, arm: RegionId, outer: ValueId },
}

/// Adds a result of type `ty` to op `o`; returns its index.
fn add_result(f: &mut Func, o: OpId, ty: Type) -> usize {
    let slot = f.op(o).results.len();
    let v = ValueId(f.values.len() as u32);
    f.values.push(crate::ir::ValueData { ty, def: ValueDef::Result(o, slot as u32), name: Some("phase".into()) });
    f.op_mut(o).results.push(v);
    slot
}

/// Threads a parity, 0 before the outermost of `around` (the ops around `at` and their regions holding it,
/// outermost first), through each of them: a new carried value or result, or the innermost loop's slot `reuse`
/// (a `for` whose values are retyped to `i32`).
fn thread_phase(f: &mut Func, around: &[(OpId, RegionId)], reuse: Option<usize>, at: OpId) -> Phase {
    let i32t = Type::scalar(ScalarType::I32);
    let start = around.first().map(|&(o, _)| o).unwrap_or(at);
    let mut now = Cursor { f, anchor: start }.constant(Const::Int(0), i32t.clone());
    let mut carriers = Vec::new();
    for (i, &(op, region)) in around.iter().enumerate() {
        let carrier = match f.op(op).op {
            Op::For(_) => {
                let body = f.op(op).regions[0];
                let slot = match reuse {
                    Some(slot) if i + 1 == around.len() => {
                        f.op_mut(op).operands[3 + slot] = now;
                        let arg = f.region(body).args[1 + slot];
                        f.values[arg.index()].ty = i32t.clone();
                        f.values[arg.index()].name = Some("phase".into());
                        slot
                    }
                    _ => {
                        f.op_mut(op).operands.push(now);
                        f.add_region_arg(body, i32t.clone(), Some("phase".into()));
                        add_result(f, op, i32t.clone())
                    }
                };
                now = f.region(body).args[1 + slot];
                Carrier::Loop { op, slot }
            }
            Op::While => {
                // before (args = inits) ends in `condition c, args...`, which become the after args and results.
                let (before, after) = (f.op(op).regions[0], f.op(op).regions[1]);
                f.op_mut(op).operands.push(now);
                let b = f.add_region_arg(before, i32t.clone(), Some("phase".into()));
                let cond = *f.region(before).ops.last().expect("a `before` region ends in `condition`");
                f.op_mut(cond).operands.push(b);
                now = f.add_region_arg(after, i32t.clone(), Some("phase".into()));
                Carrier::Loop { op, slot: add_result(f, op, i32t.clone()) }
            }
            _ => Carrier::If { op, slot: add_result(f, op, i32t.clone()), arm: region, outer: now },
        };
        carriers.push(carrier);
    }
    Phase { now, carriers }
}

impl Phase {
    /// Yields `next` (the parity after the wait) from the innermost op around, and each op's result from the
    /// one around it; an `if`'s other region yields the parity as it came in.
    fn close(self, f: &mut Func, mut next: ValueId) {
        for c in self.carriers.iter().rev() {
            let (op, slot) = match *c {
                Carrier::Loop { op, slot } => (op, slot),
                Carrier::If { op, slot, .. } => (op, slot),
            };
            // The region whose terminator yields `next`: the loop's body (a `while`'s `after`), the `if`'s arm.
            let regions = f.op(op).regions.clone();
            let (arm, other) = match *c {
                Carrier::Loop { .. } => (*regions.last().expect("a loop has a body"), None),
                Carrier::If { arm, outer, .. } => {
                    (arm, Some((*regions.iter().find(|&&r| r != arm).expect("an `if` has two regions"), outer)))
                }
            };
            set_yielded(f, arm, slot, next);
            if let Some((r, outer)) = other {
                set_yielded(f, r, slot, outer);
            }
            next = f.op(op).results[slot];
        }
    }
}

/// Makes the `yield` ending region `r` yield `v` as its operand `slot` (appended when it is the next one).
fn set_yielded(f: &mut Func, r: RegionId, slot: usize, v: ValueId) {
    let y = *f.region(r).ops.last().expect("a region ends in yield");
    let operands = &mut f.op_mut(y).operands;
    if slot < operands.len() {
        operands[slot] = v;
    } else {
        operands.push(v);
    }
}
