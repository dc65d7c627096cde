//! One `tcgen05.mma` in flight across a pipelined K loop (sm_100a auto mode).
//!
//! Auto mode lowers a loop's `acc = tl.dot(a, b, acc)` synchronously (`tile::layout::tcgen05`): the MMA
//! commits to its own mbarrier and every thread waits for it right after it issues, carrying the barrier's
//! parity through the loop. Once the pipeliner feeds the MMA from rings, that wait is what keeps the next
//! refill off the slot the MMA reads. Here the loop instead issues MMA k, then waits for MMA k-1, so two MMAs
//! queue back to back on the tensor cores while the threads wait for the older one; the refill after that
//! wait reuses MMA k-1's slot, which the ring gets one buffer more for ([`crate::plan`]); after the loop one
//! wait drains the last MMA, before the accumulator is read.
//!
//! MMA k commits to barrier `k & 1` of a pair. A parity wait is ambiguous once its barrier has moved two phases
//! past it; with a pair, the next commit to the barrier MMA k-1 used is MMA k+1's, which issues only after every
//! thread has passed the CTA barrier before it (codegen's `tcgen05::thread_sync`), so every waiter has seen MMA
//! k-1 by then. The loop's parity slot now carries `k`, the number of MMAs issued; the wait for MMA k-1 is on
//! barrier `(k + 1) & 1` in parity `((k + 1) >> 1 & 1) ^ 1` (at k = 0: barrier 1, fresh, in parity 1, which a
//! fresh barrier has completed: no wait). The drain is the same wait for the count after the loop.
//!
//! A block-scaled MMA (`tcgen05_mma_scaled`) whose scales the body copies into tensor memory each iteration
//! (`tmem_alloc` + `tcgen05_copy`, as `tl.dot_scaled` lowers) stays in flight the same way, with its scale
//! buffers doubled: iteration k copies into buffer `k & 1` of a `[2, rows, scales]` allocation made before the
//! loop. The ISA orders a `tcgen05.cp` before a later `tcgen05.mma` of the same thread, but not an MMA before a
//! later copy: iteration k + 1's copy must not overwrite the scales MMA k may still read, so it writes the
//! buffer MMA k - 1 read, which the wait of iteration k has seen complete.
//!
//! A fused persistent loop (`flatten=True`, tutorial 09) reads the accumulator in its epilogue, a `tmem_load`
//! inside the `if` that ends a tile. The MMA stays in flight there too: the epilogue first waits for MMA k itself
//! (barrier `k & 1` in parity `(k >> 1) & 1`); the tile's next MMA, which restarts the accumulator, issues only
//! after that load.

use tessel_tile::ir::{Cursor, Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, Const, Op};
use tessel_tile::types::{ScalarType, Type};

/// The MMA of a loop body that can stay in flight into the next iteration, and the ops of its wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaFlight {
    pub mma: OpId,
    /// The body's `tmem_alloc`s of a block-scaled MMA's scales (each filled by one `tcgen05_copy`), doubled.
    pub scales: Vec<OpId>,
    /// The `tmem_load`s of the accumulator nested after the MMA (a fused loop's epilogue), each after a wait for
    /// the MMA of its iteration.
    pub reads: Vec<OpId>,
    /// `mbarrier_wait bar, phase` right after it.
    pub wait: OpId,
    /// `xor phase, 1` right after the wait, yielded back to the parity's slot.
    pub flip: OpId,
    /// The parity's position among the body's arguments (0 is the induction variable).
    pub slot: usize,
}

/// The operand index of the barrier an MMA of the body commits to (its predicate follows it): `tcgen05_mma a, b,
/// acc, use_acc, pred, bar, bar_pred`, or the block-scaled one with its two scales after `acc`.
fn barrier_operand(op: &Op) -> Option<usize> {
    match op {
        Op::Tcgen05Mma => Some(5),
        Op::Tcgen05MmaScaled { .. } => Some(7),
        _ => None,
    }
}

/// The scales of a block-scaled `mma` that the body fills each iteration: each is made outside the body (and
/// nothing in it but the MMA touches it), or by a `tmem_alloc` of the body that one `tcgen05_copy` before the
/// MMA fills from a `staged` buffer and only the MMA reads. `None` when a scale is neither.
fn copied_scales(
    f: &Func,
    ops: &[OpId],
    mma: OpId,
    uses: &[u32],
    staged: &impl Fn(ValueId) -> bool,
) -> Option<Vec<OpId>> {
    let body = f.op(mma).parent?;
    let at = |x: OpId| ops.iter().position(|&y| y == x);
    let mut allocs = Vec::new();
    for &s in &f.op(mma).operands[3..5] {
        let users: Vec<OpId> = ops.iter().copied().filter(|&x| f.op(x).operands.contains(&s)).collect();
        match f.value(s).def {
            ValueDef::Result(p, _) if f.op(p).parent == Some(body) => {
                let copy = users.iter().copied().find(|&x| x != mma)?;
                let ok = f.op(p).op == Op::TmemAlloc
                    && f.op(p).operands.is_empty()
                    && uses[s.index()] == 2
                    && users.len() == 2
                    && f.op(copy).op == Op::Tcgen05Copy
                    && f.op(copy).operands[1] == s
                    && staged(f.op(copy).operands[0])
                    && at(copy)? < at(mma)?;
                if !ok {
                    return None;
                }
                allocs.push(p);
            }
            _ if users != [mma] => return None,
            _ => {}
        }
    }
    Some(allocs)
}

/// Whether `v` is the integer constant `x`.
pub(crate) fn is_int(f: &Func, v: ValueId, x: i64) -> bool {
    matches!(f.value(v).def, ValueDef::Result(p, _) if f.op(p).op == Op::Constant(Const::Int(x)))
}

/// The auto-mode MMA among the body's `ops` that may stay in flight: the body's only `tcgen05_mma` (or
/// block-scaled one, its scales as [`copied_scales`] takes them), into a buffer made before the loop that nothing
/// else in the body touches, with one barrier (used by nothing but its initialization, the MMA and the wait)
/// waited for right after it in the parity the loop carries, which is flipped right after and yielded back.
/// `staged` says whether a buffer (its operands, the sources of its scales' copies) is a ring buffer (or made
/// before the loop), which the pipeliner does not overwrite while the MMA may read it.
pub(crate) fn candidate(
    f: &Func,
    ops: &[OpId],
    args: &[ValueId],
    yields: &[ValueId],
    uses: &[u32],
    staged: impl Fn(ValueId) -> bool,
) -> Option<MmaFlight> {
    let mut mmas = ops.iter().enumerate().filter(|(_, x)| barrier_operand(&f.op(**x).op).is_some());
    let (at, &mma) = mmas.next()?;
    if mmas.next().is_some() || !f.op(mma).operands[..2].iter().all(|&m| staged(m)) {
        return None;
    }
    let md = f.op(mma);
    let b = barrier_operand(&md.op)?;
    if md.operands.len() != b + 2 || !is_int(f, md.operands[b + 1], 1) {
        return None;
    }
    let scales = if b == 7 { copied_scales(f, ops, mma, uses, &staged)? } else { Vec::new() };
    let (acc, bar) = (md.operands[2], md.operands[b]);
    let body = md.parent?;
    let outside = |v: ValueId| match f.value(v).def {
        ValueDef::Result(p, _) => f.op(p).parent != Some(body),
        ValueDef::Arg(r, _) => r != body,
    };
    // The accumulator: the MMA's, and read by nothing else but `tmem_load`s nested in ops after the MMA's wait
    // (a fused persistent loop's epilogue, in its `if`).
    let (mut touch, mut reads, mut stray) = (0, Vec::new(), false);
    for (i, &x) in ops.iter().enumerate() {
        f.walk_op(x, &mut |y| {
            let n = f.op(y).operands.iter().filter(|&&v| v == acc).count();
            touch += n;
            if n > 0 && y != mma {
                let epilogue = i > at + 2 && y != x && f.op(y).op == Op::TmemLoad && f.op(y).operands[0] == acc;
                if epilogue { reads.push(y) } else { stray = true }
            }
        });
    }
    if !outside(acc) || !outside(bar) || stray || touch != 1 + reads.len() || uses[bar.index()] != 3 {
        return None;
    }
    let (wait, flip, slot) = wait_and_flip(f, ops, at, bar, args, yields, |v| uses[v.index()])?;
    Some(MmaFlight { mma, scales, reads, wait, flip, slot })
}

/// The wait for the MMA at `ops[at]` as the synchronous lowering leaves it: `mbarrier_wait bar, phase` right after
/// the MMA and `xor phase, 1` right after that, yielded back into the slot the body received `phase` in, the
/// parity read by nothing else (`uses(v)`: how many operands of the body read `v`). `(wait, flip, slot)`.
pub(crate) fn wait_and_flip(
    f: &Func,
    ops: &[OpId],
    at: usize,
    bar: ValueId,
    args: &[ValueId],
    yields: &[ValueId],
    uses: impl Fn(ValueId) -> u32,
) -> Option<(OpId, OpId, usize)> {
    let (&wait, &flip) = (ops.get(at + 1)?, ops.get(at + 2)?);
    let (wd, fd) = (f.op(wait), f.op(flip));
    let phase = *wd.operands.get(1)?;
    let slot = args.iter().position(|&a| a == phase).filter(|&s| s >= 1)?;
    let flips =
        matches!(fd.op, Op::Binary { op: BinOp::Xor, .. }) && fd.operands[0] == phase && is_int(f, fd.operands[1], 1);
    let ok = wd.op == Op::mbarrier_wait()
        && wd.operands.len() == 2
        && wd.operands[0] == bar
        && flips
        && yields.get(slot - 1) == Some(&fd.results[0])
        && uses(phase) == 2
        && uses(fd.results[0]) == 1;
    ok.then_some((wait, flip, slot))
}

/// `(barrier, parity)` of the wait for the MMA before the `k`-th (see the module's description), made before
/// `anchor`: `bars[(k + 1) & 1]` in parity `((k + 1) >> 1 & 1) ^ 1`.
fn wait_for_previous(f: &mut Func, anchor: OpId, pair: ValueId, k: ValueId) -> (ValueId, ValueId) {
    let i32t = Type::scalar(ScalarType::I32);
    let mut c = Cursor { f, anchor };
    let one = c.constant(Const::Int(1), i32t.clone());
    let bin = |c: &mut Cursor, op, x, y| c.op(Op::Binary { op, propagate_nan: false }, &[x, y], i32t.clone());
    let kp = bin(&mut c, BinOp::Add, k, one);
    let idx = bin(&mut c, BinOp::And, kp, one);
    let half = bin(&mut c, BinOp::Shr, kp, one);
    let bit = bin(&mut c, BinOp::And, half, one);
    let parity = bin(&mut c, BinOp::Xor, bit, one);
    let bar = c.op(Op::MemDescIndex, &[pair, idx], tessel_tile::tma::barrier_type());
    (bar, parity)
}

/// Rewrites loop `lp` so that its MMA ([`candidate`]) stays in flight (see the module's description).
pub(crate) fn apply(f: &mut Func, lp: OpId, m: &MmaFlight) -> Result<(), crate::SchedError> {
    let i32t = Type::scalar(ScalarType::I32);
    let b = barrier_operand(&f.op(m.mma).op).expect("a candidate is an MMA");
    let bar = f.op(m.mma).operands[b];
    let ValueDef::Result(alloc, _) = f.value(bar).def else { unreachable!("a candidate's barrier is made outside") };
    let init = f
        .all_ops()
        .into_iter()
        .find(|&x| matches!(f.op(x).op, Op::MBarrierInit { .. }) && f.op(x).operands[0] == bar)
        .expect("a candidate's barrier is initialized");
    // The pair, where the single barrier was made and initialized.
    let mut c = Cursor { f, anchor: alloc };
    let pair = c.op(Op::LocalAlloc, &[], crate::ring::ring_type(&tessel_tile::tma::barrier_type(), 2)?);
    c.f.values[pair.index()].name = Some("mma_bars".into());
    for i in 0..2 {
        let idx = c.constant(Const::Int(i), i32t.clone());
        let one = c.op(Op::MemDescIndex, &[pair, idx], tessel_tile::tma::barrier_type());
        c.insert(Op::MBarrierInit { count: 1 }, &[one], vec![]);
    }
    f.unlink(init);
    f.unlink(alloc);

    // MMA k commits to bars[k & 1].
    let body = f.op(lp).regions[0];
    let k = f.region(body).args[m.slot];
    let mut c = Cursor { f, anchor: m.mma };
    let one = c.constant(Const::Int(1), i32t.clone());
    let idx = c.op(Op::Binary { op: BinOp::And, propagate_nan: false }, &[k, one], i32t.clone());
    let mine = c.op(Op::MemDescIndex, &[pair, idx], tessel_tile::tma::barrier_type());
    f.op_mut(m.mma).operands[b] = mine;
    // Its scales are copied into buffer k & 1 of two, made before the loop.
    for &s in &m.scales {
        let mut c = Cursor { f, anchor: s };
        let c1 = c.constant(Const::Int(1), i32t.clone());
        let idx = c.op(Op::Binary { op: BinOp::And, propagate_nan: false }, &[k, c1], i32t.clone());
        buffer_by(f, lp, s, 2, idx)?;
    }
    // An epilogue reading the accumulator waits for MMA k itself: bars[k & 1] in parity (k >> 1) & 1.
    for &r in &m.reads {
        let mut c = Cursor { f, anchor: r };
        let one = c.constant(Const::Int(1), i32t.clone());
        let bin = |c: &mut Cursor, op, x, y| c.op(Op::Binary { op, propagate_nan: false }, &[x, y], i32t.clone());
        let idx = bin(&mut c, BinOp::And, k, one);
        let half = bin(&mut c, BinOp::Shr, k, one);
        let parity = bin(&mut c, BinOp::And, half, one);
        let bar = c.op(Op::MemDescIndex, &[pair, idx], tessel_tile::tma::barrier_type());
        c.insert(Op::mbarrier_wait(), &[bar, parity], vec![]);
    }
    // Then waits for MMA k - 1, and counts this one.
    let (prev, parity) = wait_for_previous(f, m.wait, pair, k);
    f.op_mut(m.wait).operands = [prev, parity].into_iter().collect();
    f.op_mut(m.flip).op = Op::Binary { op: BinOp::Add, propagate_nan: false };
    for v in [k, f.op(lp).results[m.slot - 1]] {
        f.values[v.index()].name = Some("mmas".into());
    }
    Ok(())
}

/// Turns the body's `tmem_alloc` `s` (one buffer) into buffer `idx` (a value made before `s`) of an `[n, ...]`
/// allocation made before loop `lp`: the op becomes the `memdesc_index` in place, so its result and every use
/// stay as they are.
pub(crate) fn buffer_by(f: &mut Func, lp: OpId, s: OpId, n: u32, idx: ValueId) -> Result<(), crate::SchedError> {
    let one = f.op(s).results[0];
    let ty = f.ty(one).clone();
    let Type::MemDesc { shape, elem, layout } = &ty else { return Err(crate::SchedError::NotAMemDesc(ty)) };
    let shape2: Vec<u32> = [n].into_iter().chain(shape.iter().copied()).collect();
    let Some(spec) = layout.spec.clone() else { return Err(crate::SchedError::NotAMemDesc(ty)) };
    let linear = spec.to_linear(&shape2).map_err(crate::SchedError::Layout)?;
    let two = Type::MemDesc {
        shape: tessel_tile::types::Shape::from_slice(&shape2),
        elem: *elem,
        layout: std::sync::Arc::new(tessel_tile::types::Layout { spec: Some(spec), linear }),
    };
    let ring = Cursor { f, anchor: lp }.op(Op::TmemAlloc, &[], two);
    let what = if n == 2 { "pair" } else { "ring" };
    f.values[ring.index()].name = Some(format!("{}_{what}", f.value(one).name.as_deref().unwrap_or("scales")));
    let d = f.op_mut(s);
    d.op = Op::MemDescIndex;
    d.operands = [ring, idx].into_iter().collect();
    Ok(())
}

/// After the loop's expansion: the wait for the last MMA right after the loop, before the rings it reads are
/// released and anything reads the accumulator.
pub(crate) fn drain(f: &mut Func, lp: OpId, m: &MmaFlight) {
    let pair = match f.value(f.op(m.wait).operands[0]).def {
        ValueDef::Result(ix, _) => f.op(ix).operands[0],
        ValueDef::Arg(..) => unreachable!("the wait's barrier is an index of the pair"),
    };
    let region = f.op(lp).parent.expect("a linked loop");
    let at = f.region(region).ops.iter().position(|&x| x == lp).expect("the loop is in its region");
    let after = f.region(region).ops[at + 1];
    let count = f.op(lp).results[m.slot - 1];
    let (last, parity) = wait_for_previous(f, after, pair, count);
    Cursor { f, anchor: after }.insert(Op::mbarrier_wait(), &[last, parity], vec![]);
}
