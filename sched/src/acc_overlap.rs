//! A fused persistent loop's epilogue overlapped with the next tile's MMAs (sm_100a): the accumulator in two
//! tensor-memory buffers, a tile's epilogue run one iteration late.
//!
//! With its MMA in flight ([`crate::mma_flight`]), a fused loop (`flatten=True`, tutorial 09) still leaves the
//! tensor cores idle at each tile's end: iteration `k`, the tile's last K step, issues MMA `k`, then its epilogue
//! (the `if` that ends a tile) waits for MMA `k`, reads the accumulator and stores the tile, and only the next
//! iteration issues the next tile's first MMA, which overwrites that accumulator. Here the epilogue of iteration
//! `k` runs in iteration `k + 1` instead, right after MMA `k + 1` is issued and MMA `k` waited for (the wait the
//! loop makes anyway), so the next tile's first MMA runs while the epilogue reads and stores. Only that one: the
//! threads issue the MMA after it once the epilogue is done (a separate MMA warp would keep issuing; not done).
//! Triton's Blackwell pipeliner does the same (its epilogue in a later stage, its accumulator multi-buffered).
//! A warp-specialized loop ([`crate::ws_mma`], the default partition's) waits for no MMA in the body: its late
//! epilogue follows MMA `k + 1`'s issue and waits, as before, for `empty[s]` of iteration `k` in that
//! iteration's parity, which the loop now carries too (the slot and its view are remade inside the epilogue).
//! The next commit to that barrier is MMA `k + B`'s, so a ring of `B` ≥ 2 barriers keeps the wait unambiguous.
//!
//! - **Two accumulators.** Tile `t` accumulates into buffer `t & 1` of a `[2, M, N]` tensor-memory allocation.
//!   The loop carries the buffer index (`acc_buf`), flipped in every iteration that ends a tile. The epilogue of
//!   tile `t` reads buffer `t & 1` while tile `t + 1` accumulates into the other one; tile `t + 2` overwrites
//!   buffer `t & 1` with its first MMA (`use_acc` false), issued after that epilogue's load in program order, and
//!   codegen issues an MMA after a tensor-memory load only past a thread sync of the CTA.
//! - **One iteration late.** Every value of the body the epilogue reads (its condition, the MMA count its wait is
//!   computed from, the buffer index, a tile's row and column offsets) is carried into the next iteration, where
//!   the epilogue reads it. What the
//!   epilogue itself carries (the tile counter it advances, yielded back into its own slot) stays as it was: its
//!   runs keep their order, each one iteration later. The condition's initial value is false: iteration 0 runs
//!   no epilogue. After the loop (and after the wait for the last MMA) a copy of the epilogue runs the last
//!   tile's, on the loop's final values; what read the loop's results of the epilogue's slots reads the copy's.
//! - **Where it does not apply**, the loop stays as [`crate::mma_flight`] left it, with the reason in `--emit
//!   sched`: `disallow_acc_multi_buffer=True`; an accumulator read outside the epilogue, or not restarted per
//!   tile (its `use_acc` constant); epilogue results read in the body; values the epilogue would carry that are
//!   not numbers or tensors of them, or tensors of more than [`MAX_CARRIED_REGISTERS`] registers per thread; two
//!   accumulators over the 512 tensor-memory columns; an epilogue waiting on a ring of one barrier. The compile
//!   driver also schedules the kernel again without it when it does not fit in shared memory (the copy after
//!   the loop stages its tile in a buffer of its own, live beside the rings in a split loop), before it gives up
//!   the MMA in flight.

use std::collections::HashMap;

use tessel_tile::ir::{Cursor, Func, OpId, RegionId, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, Const, Op};
use tessel_tile::types::{Elem, ScalarType, Type};

use crate::mma_flight::MmaFlight;

/// The most registers per thread of tensors the loop carries for a late epilogue (its offsets and masks); past
/// it the registers would cost more than the overlap gains.
const MAX_CARRIED_REGISTERS: u32 = 64;

/// Overlaps the epilogue of fused loop `lp`, whose MMA `m` is in flight, with the next tile's MMAs (see the
/// module's description), after the loop's expansion and before [`crate::mma_flight::drain`] puts the wait for
/// the last MMA between the loop and the last tile's epilogue; `Err` says why not, with the function left as it
/// was.
pub(crate) fn apply(f: &mut Func, lp: OpId, m: &MmaFlight) -> Result<(), String> {
    let before = f.clone();
    let done = rewrite(f, lp, m).and_then(|()| match tessel_tile::tmem::plan(f) {
        Ok(_) => Ok(()),
        Err((_, why)) => Err(format!("two accumulators do not fit: {why}")),
    });
    if done.is_err() {
        *f = before;
    }
    done
}

fn rewrite(f: &mut Func, lp: OpId, m: &MmaFlight) -> Result<(), String> {
    let Op::For(attrs) = &f.op(lp).op else { return Err("not a for loop".into()) };
    if attrs.disallow_acc_multi_buffer {
        return Err("disallow_acc_multi_buffer=True".into());
    }
    let body = f.op(lp).regions[0];
    let epi = epilogue(f, body, m)?;
    let yield_op = *f.region(body).ops.last().expect("a body ends in yield");
    let epi_results = f.op(epi).results.clone();
    if f.all_ops().into_iter().any(|x| x != yield_op && f.op(x).operands.iter().any(|v| epi_results.contains(v))) {
        return Err("the epilogue's results are read in the loop".into());
    }
    let (mma, cond) = (m.mma, f.op(epi).operands[0]);
    if matches!(f.value(f.op(mma).operands[3]).def, ValueDef::Result(p, _) if matches!(f.op(p).op, Op::Constant(_))) {
        return Err("the accumulator is not restarted per tile (its use_acc is a constant)".into());
    }
    let acc = f.op(mma).operands[2];
    let alloc = match f.value(acc).def {
        ValueDef::Result(p, _) if f.op(p).op == Op::TmemAlloc && f.op(p).parent != Some(body) => p,
        _ => return Err("the accumulator is not a tensor-memory buffer made before the loop".into()),
    };
    if f.use_counts()[acc.index()] as usize != 1 + m.reads.len() {
        return Err("the accumulator is read outside the epilogue".into());
    }
    // Where the epilogue goes: after the wait for the previous MMA (one partition), or after the MMA itself (a
    // split loop waits for no MMA in the body; its epilogue waits for the slot's `empty` barrier).
    let at = |f: &Func, x: OpId| f.region(body).ops.iter().position(|&y| y == x);
    let anchor = if at(f, m.wait).is_some() { m.wait } else { mma };
    match (at(f, anchor), at(f, epi)) {
        (Some(w), Some(e)) if w < e => {}
        _ => return Err("the epilogue does not follow the MMA in the body".into()),
    }
    views_inside(f, body, epi)?;

    // Two accumulators, the loop carrying which one the current tile uses.
    let i32t = Type::scalar(ScalarType::I32);
    let one_ty = f.ty(acc).clone();
    let two_ty = pair_type(&one_ty)?;
    let pair = Cursor { f, anchor: alloc }.op(Op::TmemAlloc, &[], two_ty);
    f.values[pair.index()].name = Some("acc_pair".into());
    let zero = Cursor { f, anchor: lp }.constant(Const::Int(0), i32t.clone());
    let acc_buf = carry(f, lp, zero, "acc_buf");
    let view = buffer(f, mma, pair, acc_buf, &one_ty);
    f.op_mut(mma).operands[2] = view;
    for &r in &m.reads {
        let view = buffer(f, r, pair, acc_buf, &one_ty);
        f.op_mut(r).operands[0] = view;
    }
    f.unlink(alloc);
    let mut c = Cursor { f, anchor: yield_op };
    let one = c.constant(Const::Int(1), i32t.clone());
    let other = c.op(Op::Binary { op: BinOp::Xor, propagate_nan: false }, &[acc_buf, one], i32t.clone());
    let next = c.op(Op::Select, &[cond, other, acc_buf], i32t);
    f.op_mut(yield_op).operands.push(next);

    // What the epilogue reads of this iteration, carried into the next one; its own slots stay.
    let args = f.region(body).args.clone();
    let yields = f.op(yield_op).operands.clone();
    let own: Vec<ValueId> =
        yields.iter().enumerate().filter(|(_, v)| epi_results.contains(v)).map(|(j, _)| args[j + 1]).collect();
    let mut read = Vec::new();
    f.walk_op(epi, &mut |y| {
        for &v in &f.op(y).operands {
            let of_body = match f.value(v).def {
                ValueDef::Result(p, _) => f.op(p).parent == Some(body) && p != epi,
                ValueDef::Arg(r, _) => r == body,
            };
            if of_body && !own.contains(&v) && !read.contains(&v) {
                read.push(v);
            }
        }
    });
    let mut late = HashMap::new();
    let mut registers = 0;
    for &v in &read {
        let ty = f.ty(v).clone();
        let s = match &ty {
            Type::Scalar(Elem::Scalar(s)) => *s,
            Type::Tensor { elem: Elem::Scalar(s), layout: Some(l), .. } => {
                registers += l.linear.in_dim_size("register");
                *s
            }
            _ => return Err(format!("the epilogue reads {v} ({ty}), which is not a number or a tensor of them")),
        };
        if registers > MAX_CARRIED_REGISTERS {
            return Err(format!(
                "the epilogue reads tensors of the body of more than {MAX_CARRIED_REGISTERS} registers per thread, \
                 which the loop would carry"
            ));
        }
        let init = if s.is_float() { Const::Float(0.0) } else { Const::Int(0) };
        let init = Cursor { f, anchor: lp }.constant(init, ty);
        let name = f.value(v).name.as_deref().map_or("prev".to_string(), |n| format!("{n}_prev"));
        let arg = carry(f, lp, init, &name);
        f.op_mut(yield_op).operands.push(v);
        late.insert(v, arg);
    }
    let mut inside = Vec::new();
    f.walk_op(epi, &mut |y| inside.push(y));
    for y in inside {
        for v in f.op_mut(y).operands.iter_mut() {
            if let Some(&a) = late.get(v) {
                *v = a;
            }
        }
    }

    // The epilogue right after the wait for the previous MMA (or the MMA).
    let ops = &mut f.region_mut(body).ops;
    ops.retain(|&x| x != epi);
    let w = ops.iter().position(|&x| x == anchor).expect("the anchor is in the body");
    ops.insert(w + 1, epi);

    // The last tile's epilogue right after the loop (the drain's wait comes before it), on the loop's final
    // values.
    let outer = f.op(lp).parent.expect("a linked loop");
    let results = f.op(lp).results.clone();
    let args = f.region(body).args.clone();
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    for (j, &a) in args.iter().enumerate().skip(1) {
        map.insert(a, results[j - 1]);
    }
    let readers: Vec<(usize, ValueId)> = yields
        .iter()
        .enumerate()
        .filter_map(|(j, v)| epi_results.iter().position(|r| r == v).map(|i| (i, results[j])))
        .collect();
    let last = clone_after(f, epi, outer, lp, &mut map);
    for (i, r) in readers {
        let to = f.op(last).results[i];
        for x in f.all_ops() {
            if x != last && !is_inside(f, x, last) && !is_inside(f, x, lp) {
                for v in f.op_mut(x).operands.iter_mut().filter(|v| **v == r) {
                    *v = to;
                }
            }
        }
    }
    Ok(())
}

/// Gives the epilogue `epi` its own copy of each view of the body it reads, a `memdesc_index` of a buffer made
/// before the loop (a split loop's `empty[slot]`), so that the loop carries the index, not the view. A barrier
/// so indexed and waited for in the epilogue needs a ring of two or more: one iteration late, the wait must
/// still find the phase it expects, which the next commit to that barrier (`B` iterations on) would move.
fn views_inside(f: &mut Func, body: RegionId, epi: OpId) -> Result<(), String> {
    let mut uses = Vec::new();
    f.walk_op(epi, &mut |y| {
        for (i, &v) in f.op(y).operands.iter().enumerate() {
            if let ValueDef::Result(p, _) = f.value(v).def
                && f.op(p).parent == Some(body)
                && f.op(p).op == Op::MemDescIndex
                && !matches!(f.value(f.op(p).operands[0]).def, ValueDef::Result(q, _) if f.op(q).parent == Some(body))
            {
                uses.push((y, i, p));
            }
        }
    });
    for (y, i, p) in uses {
        let ring = f.op(p).operands[0];
        if f.op(y).op == Op::mbarrier_wait() && f.ty(ring).shape().first().is_some_and(|&n| n < 2) {
            return Err(format!("the epilogue waits on {ring}, a ring of one barrier"));
        }
        let (operands, ty) = (f.op(p).operands.clone(), f.ty(f.op(p).results[0]).clone());
        let view = Cursor { f, anchor: y }.op(Op::MemDescIndex, &operands, ty);
        f.op_mut(y).operands[i] = view;
    }
    Ok(())
}

/// The body's `if` holding every read of the accumulator (the fused loop's epilogue).
fn epilogue(f: &Func, body: RegionId, m: &MmaFlight) -> Result<OpId, String> {
    let top = |mut x: OpId| -> Option<OpId> {
        loop {
            let p = f.op(x).parent?;
            if p == body {
                return Some(x);
            }
            x = f.region(p).parent?;
        }
    };
    let first = m.reads.first().ok_or("nothing in the loop reads the accumulator (no epilogue to overlap)")?;
    match top(*first) {
        Some(e) if f.op(e).op == Op::If && m.reads.iter().all(|&r| top(r) == Some(e)) => Ok(e),
        _ => Err("the accumulator's reads are not all in one `if` of the body".into()),
    }
}

/// `[2, M, N]` buffers of the tensor-memory buffer type `one`.
fn pair_type(one: &Type) -> Result<Type, String> {
    let Type::MemDesc { shape, elem, layout } = one else { return Err(format!("{one} is not a memdesc")) };
    let spec = layout.spec.clone().ok_or_else(|| format!("{one} has no tensor-memory layout"))?;
    let shape2: Vec<u32> = [2].into_iter().chain(shape.iter().copied()).collect();
    let linear = spec.to_linear(&shape2).map_err(|e| e.to_string())?;
    Ok(Type::MemDesc {
        shape: tessel_tile::types::Shape::from_slice(&shape2),
        elem: *elem,
        layout: std::sync::Arc::new(tessel_tile::types::Layout { spec: Some(spec), linear }),
    })
}

/// Buffer `index & 1` of `pair`, made before op `anchor`.
fn buffer(f: &mut Func, anchor: OpId, pair: ValueId, index: ValueId, one: &Type) -> ValueId {
    let i32t = Type::scalar(ScalarType::I32);
    let mut c = Cursor { f, anchor };
    let c1 = c.constant(Const::Int(1), i32t.clone());
    let idx = c.op(Op::Binary { op: BinOp::And, propagate_nan: false }, &[index, c1], i32t);
    c.op(Op::MemDescIndex, &[pair, idx], one.clone())
}

/// A new carried value of loop `lp` (see [`crate::expand::add_carried`]), its argument and result named `name`;
/// returns the argument.
fn carry(f: &mut Func, lp: OpId, init: ValueId, name: &str) -> ValueId {
    let (arg, result) = crate::expand::add_carried(f, lp, init, name);
    f.values[result.index()].name = Some(name.into());
    arg
}

/// A copy of op `x` (and its regions, operands through `map`) in region `r`, right after op `after` (the loop).
fn clone_after(f: &mut Func, x: OpId, r: RegionId, after: OpId, map: &mut HashMap<ValueId, ValueId>) -> OpId {
    let c = tessel_tile::passes::clone_op(f, x, r, map);
    let ops = &mut f.region_mut(r).ops;
    ops.pop();
    let at = ops.iter().position(|&y| y == after).expect("the loop is in its region");
    ops.insert(at + 1, c);
    c
}

/// Whether op `x` is nested in op `o`.
fn is_inside(f: &Func, mut x: OpId, o: OpId) -> bool {
    while let Some(r) = f.op(x).parent {
        match f.region(r).parent {
            Some(p) if p == o => return true,
            Some(p) => x = p,
            None => return false,
        }
    }
    false
}
