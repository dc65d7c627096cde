//! The tcgen05 side of automatic warp specialization (sm_100a): what a K loop's `tcgen05_mma` becomes when
//! [`crate::ws`] hands the loop's TMA copies to a producer warp, and which loops it refuses.
//!
//! Auto mode lowers `acc = tl.dot(a, b, acc)` to a `tcgen05_mma` that commits to one barrier (`acc_bar`) and is
//! waited for right after it, the loop carrying the parity (`tile::layout::tcgen05`). Split into partitions, the
//! loop's MMA is the one [`crate::mma_flight::candidate`] recognizes (the only MMA of the body, reading ring
//! slots, its accumulator read by nothing in the loop but a fused loop's epilogue), and the default partition runs
//! it so:
//!
//! - **Release by completion.** Iteration `k` waits for `ready[s]` (`s = k mod B`) in parity `p = (k / B) mod 2`,
//!   issues the MMA and commits it to `empty[s]` (the MMA's barrier operand, `tcgen05.commit` after the issue),
//!   with nothing waited for: the slot goes back to the producer when the tensor cores are done reading it, not
//!   when a thread says so. `empty[s]` expects one arrival (the commit). MMA `k` is the `(k / B)`-th to commit to
//!   `empty[s]`, so it completes that barrier's phase `k / B`, which the producer's wait in parity `p ^ 1` for
//!   iteration `k + B` expects ([`crate::ws`]).
//! - **The accumulator.** After the loop the default partition commits once more to `acc_bar` and waits for it
//!   in the parity the loop received (it no longer flips it), then flips it for whatever follows: a commit covers
//!   every tcgen05 op the thread issued before it, and the pipe runs MMAs in order, so the wait sees the last MMA
//!   done before the accumulator is read (`tmem_load` after the join). A loop of no iterations commits nothing
//!   pending and the wait passes at once.
//! - **A fused persistent loop's epilogue** (`flatten=True`: the `tmem_load` inside the `if` that ends a tile)
//!   waits for `empty[s]` in parity `p` itself, right before the load: the phase MMA `k` completes, which covers
//!   every earlier MMA of the tile. It cannot be two phases ahead: the next commit to `empty[s]` is MMA `k + B`'s,
//!   not issued yet. The next tile's first MMA (`use_acc` false) overwrites the accumulator only after that load:
//!   both run in the default partition, and codegen issues an MMA after a tensor-memory load only past a thread
//!   sync of the partition (`tcgen05.fence::before_thread_sync`, its named barrier, `after_thread_sync`;
//!   `codegen/src/lower/tcgen05`), which every thread reaches after its `tcgen05.wait::ld`. One accumulator
//!   buffer: the tensor cores idle while the epilogue reads it.
//!
//! Refused, with the reason `--emit sched` prints (the loop is then pipelined in one partition as before): a loop
//! whose MMAs are several (attention: S = QK^T and O += P V, chained through P in registers), an MMA reading a
//! buffer the body writes (P staged by the threads) or an accumulator the body reads, and block-scaled MMAs whose
//! scales the body copies into tensor memory each step (`tcgen05.cp`): with MMAs up to `B` steps in flight and
//! the ISA ordering a copy before a later MMA but not an MMA before a later copy, the scale buffers would need a
//! copy per ring slot, which is not done yet.

use tessel_tile::ir::{Cursor, Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, Const, Op};
use tessel_tile::types::{ScalarType, Type};

use crate::mma_flight::MmaFlight;
use crate::plan::LoopPlan;

/// Whether op `x` is a tcgen05 MMA (dense or block-scaled).
fn is_mma(f: &Func, x: OpId) -> bool {
    matches!(f.op(x).op, Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. })
}

/// The MMA of loop `p.loop_op` the default partition issues and commits to the ring's `empty` barriers, or why
/// the loop is not split on sm_100a.
pub(crate) fn plan(f: &Func, p: &LoopPlan) -> Result<MmaFlight, String> {
    let body = f.op(p.loop_op).regions[0];
    let mut mmas = Vec::new();
    f.walk(body, &mut |x| {
        if is_mma(f, x) {
            mmas.push(x);
        }
    });
    match (&p.mma_flight, mmas.as_slice()) {
        (Some(m), _) if !m.scales.is_empty() => Err(format!(
            "{}'s block scales are copied into tensor memory every K step (tcgen05.cp), and with MMAs left in \
             flight across steps a copy could overwrite scales an earlier MMA still reads; block-scaled loops are \
             not warp-specialized yet",
            m.mma
        )),
        (Some(m), _) => Ok(m.clone()),
        (None, []) => Err("the loop issues no tcgen05 MMA (on sm_100a only a K loop feeding one is split)".into()),
        (None, [_, _, ..]) => Err(format!(
            "the loop issues {} tcgen05 MMAs ({}): chained MMAs (attention's S = QK^T and O += P V through P) \
             are not handed between partitions yet; only a K loop of one MMA is split on sm_100a",
            mmas.len(),
            mmas.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
        )),
        (None, &[x]) => {
            let ring = |v: ValueId| ring_slot(f, p, v);
            let operands = &f.op(x).operands;
            match operands[..2].iter().find(|&&v| !ring(v)) {
                Some(&v) => Err(format!(
                    "{x} reads {v}, which the loop body writes (not a ring slot the producer fills), so the \
                     producer could not tell when the MMA is done with it"
                )),
                None => Err(format!(
                    "{x}'s accumulator or barrier is used in the loop besides the MMA and its wait (only a fused \
                     loop's epilogue may read the accumulator), so its completion cannot be left to the ring's \
                     barriers"
                )),
            }
        }
    }
}

/// Whether `v` (an MMA operand) is a buffer of one of the loop's pipelined loads, or made outside the loop.
fn ring_slot(f: &Func, p: &LoopPlan, v: ValueId) -> bool {
    let body = f.op(p.loop_op).regions[0];
    let staged: Vec<ValueId> = p
        .loads
        .iter()
        .flat_map(|l| match &l.consumer {
            crate::plan::Consumer::Allocs(s) => s.iter().map(|s| f.op(s.alloc).results[0]).collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut m = v;
    while let ValueDef::Result(d, _) = f.value(m).def
        && f.op(d).op.is_memdesc_view()
    {
        m = f.op(d).operands[0];
    }
    staged.contains(&m) || matches!(f.value(m).def, ValueDef::Result(d, _) if f.op(d).parent != Some(body))
}

/// The operand index of `mma`'s barrier.
fn barrier_operand(f: &Func, mma: OpId) -> usize {
    match f.op(mma).op {
        Op::Tcgen05MmaScaled { .. } => 7,
        _ => 5,
    }
}

/// Before the expansion: the wait right after the MMA and the parity flip after it leave the body (the loop
/// yields the parity it got), so nothing in the loop waits for an MMA.
pub(crate) fn prepare(f: &mut Func, lp: OpId, m: &MmaFlight) {
    let body = f.op(lp).regions[0];
    let phase = f.region(body).args[m.slot];
    let yield_op = *f.region(body).ops.last().expect("a yield");
    f.op_mut(yield_op).operands[m.slot - 1] = phase;
    f.unlink(m.flip);
    f.unlink(m.wait);
}

/// In the expansion, as the MMA is placed: it commits to `bar` (the ring's `empty[slot]`) instead of the
/// accumulator's barrier.
pub(crate) fn commit_to(f: &mut Func, m: &MmaFlight, bar: ValueId) {
    let b = barrier_operand(f, m.mma);
    f.op_mut(m.mma).operands[b] = bar;
}

/// In the expansion: each epilogue read of the accumulator waits first for `empty` in `phase` (the barrier MMA
/// `k` commits to, the phase it completes; see the module's description).
pub(crate) fn epilogue_waits(f: &mut Func, m: &MmaFlight, empty: ValueId, phase: ValueId) {
    for &r in &m.reads {
        Cursor { f, anchor: r }.insert(Op::mbarrier_wait(), &[empty, phase], vec![]);
    }
}

/// After the expansion and the split: one commit to the accumulator's barrier and its wait right after loop
/// `lp` (in the default partition), in the parity the loop yields; what follows reads the parity flipped.
pub(crate) fn drain(f: &mut Func, lp: OpId, m: &MmaFlight) {
    let bar = f.op(m.wait).operands[0];
    let region = f.op(lp).parent.expect("a linked loop");
    let at = f.region(region).ops.iter().position(|&x| x == lp).expect("the loop is in its region");
    let next = f.region(region).ops[at + 1];
    let phase = f.op(lp).results[m.slot - 1];
    let i32t = Type::scalar(ScalarType::I32);
    let mut c = Cursor { f, anchor: next };
    c.insert(Op::Tcgen05Commit { multicast: 0 }, &[bar], vec![]);
    let wait = c.insert(Op::mbarrier_wait(), &[bar, phase], vec![]);
    let one = c.constant(Const::Int(1), i32t.clone());
    let flip = c.insert(Op::Binary { op: BinOp::Xor, propagate_nan: false }, &[phase, one], vec![i32t]);
    let flipped = f.op(flip).results[0];
    for x in f.all_ops() {
        if x == wait || x == flip {
            continue;
        }
        for v in f.op_mut(x).operands.iter_mut() {
            if *v == phase {
                *v = flipped;
            }
        }
    }
}
