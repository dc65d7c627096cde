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

use tessel_tile::ir::{Cursor, Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, Const, Op};
use tessel_tile::types::{ScalarType, Type};

/// The MMA of a loop body that can stay in flight into the next iteration, and the ops of its wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaFlight {
    pub mma: OpId,
    /// `mbarrier_wait bar, phase` right after it.
    pub wait: OpId,
    /// `xor phase, 1` right after the wait, yielded back to the parity's slot.
    pub flip: OpId,
    /// The parity's position among the body's arguments (0 is the induction variable).
    pub slot: usize,
}

/// Whether `v` is the integer constant `x`.
fn is_int(f: &Func, v: ValueId, x: i64) -> bool {
    matches!(f.value(v).def, ValueDef::Result(p, _) if f.op(p).op == Op::Constant(Const::Int(x)))
}

/// The auto-mode MMA among the body's `ops` that may stay in flight: the body's only `tcgen05_mma`, into a
/// buffer made before the loop that nothing else in the body touches, with one barrier (used by nothing but
/// its initialization, the MMA and the wait) waited for right after it in the parity the loop carries, which
/// is flipped right after and yielded back. `reads_rings` says whether its operands are ring buffers (or made
/// before the loop), which the pipeliner does not overwrite while it may read them.
pub(crate) fn candidate(
    f: &Func,
    ops: &[OpId],
    args: &[ValueId],
    yields: &[ValueId],
    uses: &[u32],
    reads_rings: impl Fn(OpId) -> bool,
) -> Option<MmaFlight> {
    let mut mmas = ops.iter().enumerate().filter(|(_, x)| f.op(**x).op == Op::Tcgen05Mma);
    let (at, &mma) = mmas.next()?;
    if mmas.next().is_some() || !reads_rings(mma) {
        return None;
    }
    let md = f.op(mma);
    if md.operands.len() != 7 || !is_int(f, md.operands[6], 1) {
        return None;
    }
    let (acc, bar) = (md.operands[2], md.operands[5]);
    let body = md.parent?;
    let outside = |v: ValueId| match f.value(v).def {
        ValueDef::Result(p, _) => f.op(p).parent != Some(body),
        ValueDef::Arg(r, _) => r != body,
    };
    let mut touch = 0;
    for &x in ops {
        f.walk_op(x, &mut |y| touch += f.op(y).operands.iter().filter(|&&v| v == acc).count());
    }
    if !outside(acc) || !outside(bar) || touch != 1 || uses[bar.index()] != 3 {
        return None;
    }
    let (&wait, &flip) = (ops.get(at + 1)?, ops.get(at + 2)?);
    let (wd, fd) = (f.op(wait), f.op(flip));
    let phase = *wd.operands.get(1)?;
    let slot = args.iter().position(|&a| a == phase).filter(|&s| s >= 1)?;
    let flips =
        matches!(fd.op, Op::Binary { op: BinOp::Xor, .. }) && fd.operands[0] == phase && is_int(f, fd.operands[1], 1);
    let ok = wd.op == Op::mbarrier_wait()
        && wd.operands[0] == bar
        && flips
        && yields.get(slot - 1) == Some(&fd.results[0])
        && uses[phase.index()] == 2
        && uses[fd.results[0].index()] == 1;
    ok.then_some(MmaFlight { mma, wait, flip, slot })
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
    let bar = f.op(m.mma).operands[5];
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
    f.op_mut(m.mma).operands[5] = mine;
    // Then waits for MMA k - 1, and counts this one.
    let (prev, parity) = wait_for_previous(f, m.wait, pair, k);
    f.op_mut(m.wait).operands = [prev, parity].into_iter().collect();
    f.op_mut(m.flip).op = Op::Binary { op: BinOp::Add, propagate_nan: false };
    for v in [k, f.op(lp).results[m.slot - 1]] {
        f.values[v.index()].name = Some("mmas".into());
    }
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
