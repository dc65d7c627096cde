//! The tcgen05 side of automatic warp specialization (sm_100a): what a loop's `tcgen05_mma`s become when
//! [`crate::ws`] hands the loop's TMA copies to a producer warp, and which loops it refuses. Two shapes of loop
//! split ([`WsMma`]): a K loop of one MMA, left in flight, and attention's chained MMAs, each waited for where the
//! loop as written waits.
//!
//! Auto mode lowers `acc = tl.dot(a, b, acc)` to a `tcgen05_mma` that commits to one barrier (`acc_bar`) and is
//! waited for right after it, the loop carrying the parity (`tile::layout::tcgen05`).
//!
//! ## One MMA in flight ([`WsMma::InFlight`])
//!
//! The loop's MMA is the one [`crate::mma_flight::candidate`] recognizes (the only MMA of the body, reading ring
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
//! ## Chained MMAs ([`WsMma::Chained`]: attention's forward loop)
//!
//! Tutorial 06's loop issues S = Q K^T (K from a ring slot, S into a tensor-memory buffer of the body), reads S
//! into registers for the softmax, stores P into a buffer of the body (tensor memory, where P V reads it as
//! operand A; shared memory when tensor memory is full), stores the rescaled O into its
//! tensor-memory buffer (O is carried in registers: `tmem_alloc` of `acc * alpha`) and issues O += P V (V from
//! the same slot), reading O back. Each MMA commits to its own barrier and every thread waits for it right after
//! the issue, as in the loop as written. None is left in flight: the softmax reads S right after the first, and
//! the second's O is read right after it and carried in registers, so a wait would only move, not go. Split, the
//! default partition keeps every MMA and wait where they are, with one change: the last MMA reading the slot
//! (P V) commits to `empty[s]` instead of its own barrier and is waited for there, in parity `p`, the parity of
//! the `ready[s]` wait. That costs nothing over the loop as written (one commit, one wait, as before) and the
//! release needs no thread: the commit's arrival is it. The MMA's own barrier is not used in the loop any more,
//! so the loop yields its parity unchanged (a later loop waiting on it, causal attention's second, sees the
//! phases it expects). Why each access is ordered:
//!
//! - **The slot's reuse.** The producer refills slot `s` for iteration `k + B` after its wait for `empty[s]`'s
//!   phase `k / B`, which completes when everything the default partition's thread issued before the commit is
//!   done: Q K^T (which also completed earlier, its own wait) and P V, the slot's only readers (the plan checks
//!   that nothing but MMAs at or before the released one reads a ring slot). The default partition's wait in
//!   parity `p` cannot be a phase late: the next commit to `empty[s]` is iteration `k + B`'s, which this same
//!   thread issues after the wait; nor early: the phases before `k / B` are earlier iterations' commits, each
//!   waited for in its own iteration.
//! - **S's overwrite in tensor memory.** Iteration `k + 1`'s Q K^T writes the buffer iteration `k`'s `tmem_load`
//!   read; both are the default partition's, and codegen issues an MMA after a tensor-memory load only past the
//!   partition's thread sync (every thread past its `tcgen05.wait::ld`), as in the loop as written.
//! - **P's rewrite.** Iteration `k + 1` stores P into the buffer P V of iteration `k` read, after the wait for
//!   `empty[s]` that saw P V complete (the same wait that guards O's read); the stores then reach the next MMA
//!   through codegen's thread sync before an issue (with a proxy fence first for a shared buffer). In tensor
//!   memory P may share S's columns (S is dead once loaded): iteration `k + 1`'s Q K^T overwrites them only after
//!   that same wait.
//! - **O.** Read (`tmem_load`) after the same wait, rescaled in registers and stored back (`tcgen05.st`) before
//!   the next P V, behind the partition's thread sync before the issue; after the loop nothing is in flight, so
//!   the loop's results are final at the join and nothing after it waits.
//! - **The second loop of causal attention** runs after the join, unsplit (a kernel has one `warp_specialize`),
//!   with rings, barriers and tensor-memory buffers of its own; the producer warp has exited, every copy it
//!   issued was waited for in the split loop, and every commit was waited for too, so nothing of the split loop
//!   is pending there.
//!
//! Refused, with the reason `--emit sched` prints (the loop is then pipelined in one partition as before): an MMA
//! inside an op of the body (an `if`), a block-scaled MMA among several, an MMA not waited for right after it
//! issues on a barrier of its own, a ring slot read by something other than the MMAs (a read-back into
//! registers).
//!
//! ## Block scales copied every step
//!
//! A block-scaled MMA in flight whose scales the body copies into tensor memory each step (`tcgen05.cp`, as
//! `tl.dot_scaled` lowers) gets a scale buffer per ring slot: iteration `k` copies into buffer `s`, the slot it
//! reads. The ISA pipelines a copy before a later MMA of the same thread, but not an MMA before a later copy, so
//! the copy of iteration `k + B` must not start before MMA `k`, the last to read buffer `s`, is done. It cannot:
//! the default partition issues that copy after its wait for `ready[s]` of iteration `k + B`, which completes
//! only after the producer's copy into slot `s`, which the producer issues only after its wait for `empty[s]`
//! saw MMA `k`'s commit (a commit also covers the copies before it). The one-partition loop doubles the buffers
//! instead ([`crate::mma_flight`]).
//!
//! ## Refused
//!
//! For one MMA: an MMA reading a buffer the body writes or an accumulator the body reads (it could not be left
//! in flight).

use tessel_tile::ir::{Cursor, Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, Const, Op};
use tessel_tile::types::{ScalarType, Type};

use crate::mma_flight::MmaFlight;
use crate::plan::{Consumer, LoopPlan};

/// How the default partition issues a split loop's tcgen05 MMAs (see the module's description).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WsMma {
    /// The loop's one MMA, committed to `empty[s]` and left in flight; waited for once after the loop (and in a
    /// fused loop's epilogue).
    InFlight(MmaFlight),
    /// Several MMAs (`count`), each waited for where the loop as written waits; `release` (its `reads` and
    /// `scales` empty), the last to read a ring slot, commits to `empty[s]` and is waited for there.
    Chained { release: MmaFlight, count: usize },
}

impl WsMma {
    /// The MMA committed to the slot's `empty` barrier, with its wait and parity.
    pub fn release(&self) -> &MmaFlight {
        match self {
            WsMma::InFlight(m) | WsMma::Chained { release: m, .. } => m,
        }
    }
}

/// Whether op `x` is a tcgen05 MMA (dense or block-scaled).
fn is_mma(f: &Func, x: OpId) -> bool {
    matches!(f.op(x).op, Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. })
}

/// How the default partition issues the MMAs of loop `p.loop_op`, or why the loop is not split on sm_100a.
pub(crate) fn plan(f: &Func, p: &LoopPlan) -> Result<WsMma, String> {
    let body = f.op(p.loop_op).regions[0];
    let mut mmas = Vec::new();
    f.walk(body, &mut |x| {
        if is_mma(f, x) {
            mmas.push(x);
        }
    });
    match (&p.mma_flight, mmas.as_slice()) {
        (Some(m), _) => Ok(WsMma::InFlight(m.clone())),
        (None, []) => Err("the loop issues no tcgen05 MMA (on sm_100a only a loop feeding MMAs is split)".into()),
        (None, [_, _, ..]) => chained(f, p, &mmas),
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

/// The results of the `local_alloc`s the pipelined loads stage (each becomes a view of a ring slot).
fn staged(f: &Func, p: &LoopPlan) -> Vec<ValueId> {
    p.loads
        .iter()
        .flat_map(|l| match &l.consumer {
            Consumer::Allocs(s) => s.iter().map(|s| f.op(s.alloc).results[0]).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// `v` with its memdesc views (`memdesc_permute`, ...) looked through.
fn viewed(f: &Func, v: ValueId) -> ValueId {
    let mut m = v;
    while let ValueDef::Result(d, _) = f.value(m).def
        && f.op(d).op.is_memdesc_view()
    {
        m = f.op(d).operands[0];
    }
    m
}

/// Whether `v` (an MMA operand) is a buffer of one of the loop's pipelined loads, or made outside the loop.
fn ring_slot(f: &Func, p: &LoopPlan, v: ValueId) -> bool {
    let body = f.op(p.loop_op).regions[0];
    let m = viewed(f, v);
    staged(f, p).contains(&m) || matches!(f.value(m).def, ValueDef::Result(d, _) if f.op(d).parent != Some(body))
}

/// Several MMAs: each waited for right after it issues, the last reading a ring slot committed to the slot's
/// `empty` barrier ([`WsMma::Chained`]), or why not.
fn chained(f: &Func, p: &LoopPlan, mmas: &[OpId]) -> Result<WsMma, String> {
    let body = f.op(p.loop_op).regions[0];
    let list = mmas.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
    let several = format!("the loop issues {} tcgen05 MMAs ({list})", mmas.len());
    if let Some(&x) = mmas.iter().find(|&&x| f.op(x).parent != Some(body)) {
        return Err(format!(
            "{several}, and {x} is nested in an op of the body; chained MMAs are split only at the body's top level"
        ));
    }
    if let Some(&x) = mmas.iter().find(|&&x| f.op(x).op != Op::Tcgen05Mma) {
        return Err(format!("{several}, and {x} is block-scaled; only dense MMAs are split when there are several"));
    }
    let mut waited = Vec::new();
    for &x in mmas {
        match synchronous(f, body, x) {
            Some(m) => waited.push(m),
            None => {
                return Err(format!(
                    "{several}, and {x} is not waited for right after it issues on a barrier of its own (in the \
                     parity the loop carries), so its completion is not the loop's to hand to the slot's release"
                ));
            }
        }
    }
    // What reads the ring slots: MMAs only, none after the released one.
    let slots = staged(f, p);
    let reads_slot = |x: OpId| f.op(x).operands[..2].iter().any(|&v| slots.contains(&viewed(f, v)));
    let Some(last) = mmas.iter().rposition(|&x| reads_slot(x)) else {
        return Err(format!("{several}, and none reads a ring slot the producer fills"));
    };
    if let Some(l) = p.loads.iter().find(|l| !matches!(l.consumer, Consumer::Allocs(_))) {
        return Err(format!(
            "{several}, and {} is read back from its ring into registers: only MMAs' reads of a slot are released by \
             a commit",
            l.load
        ));
    }
    let mut stray = None;
    f.walk(body, &mut |y| {
        let yd = f.op(y);
        let touches = yd.operands.iter().any(|&v| slots.contains(&viewed(f, v)));
        if touches && !yd.op.is_memdesc_view() && !mmas.contains(&y) && stray.is_none() {
            stray = Some(y);
        }
    });
    if let Some(y) = stray {
        return Err(format!(
            "{several}, and {y} ({}) reads a ring slot besides them: only MMAs' reads of a slot are released by a \
             commit",
            f.op(y).op.name()
        ));
    }
    Ok(WsMma::Chained { release: waited.swap_remove(last), count: mmas.len() })
}

/// `mma` as the synchronous lowering leaves it: its barrier (made outside the loop, predicate 1) used in the body
/// by nothing but the MMA and `mbarrier_wait bar, phase` right after it, `phase` a carried parity read only by
/// the wait and `xor phase, 1` right after, which only the yield reads, back into its slot.
fn synchronous(f: &Func, body: tessel_tile::ir::RegionId, mma: OpId) -> Option<MmaFlight> {
    let ops = &f.region(body).ops;
    let args = &f.region(body).args;
    let yields = &f.op(*ops.last()?).operands;
    let at = ops.iter().position(|&x| x == mma)?;
    let md = f.op(mma);
    let b = barrier_operand(f, mma);
    if md.operands.len() != b + 2 || !crate::mma_flight::is_int(f, md.operands[b + 1], 1) {
        return None;
    }
    let bar = md.operands[b];
    if matches!(f.value(bar).def, ValueDef::Result(d, _) if f.op(d).parent == Some(body)) {
        return None;
    }
    let uses = |v: ValueId| {
        let mut n = 0;
        f.walk(body, &mut |y| n += f.op(y).operands.iter().filter(|&&u| u == v).count() as u32);
        n
    };
    if uses(bar) != 2 {
        return None;
    }
    let (wait, flip, slot) = crate::mma_flight::wait_and_flip(f, ops, at, bar, args, yields, uses)?;
    Some(MmaFlight { mma, scales: Vec::new(), reads: Vec::new(), wait, flip, slot })
}

/// The operand index of `mma`'s barrier.
fn barrier_operand(f: &Func, mma: OpId) -> usize {
    match f.op(mma).op {
        Op::Tcgen05MmaScaled { .. } => 7,
        _ => 5,
    }
}

/// Before the expansion: the released MMA's parity flip leaves the body (the loop yields the parity it got), and
/// for an MMA left in flight its wait too, so nothing in the loop waits for it.
pub(crate) fn prepare(f: &mut Func, lp: OpId, w: &WsMma) {
    let m = w.release();
    let body = f.op(lp).regions[0];
    let phase = f.region(body).args[m.slot];
    let yield_op = *f.region(body).ops.last().expect("a yield");
    f.op_mut(yield_op).operands[m.slot - 1] = phase;
    f.unlink(m.flip);
    if let WsMma::InFlight(_) = w {
        f.unlink(m.wait);
    }
}

/// In the expansion of loop `lp`, as the released MMA is placed: it commits to `empty` (the ring's `empty[slot]`)
/// instead of its own barrier. An MMA in flight has each epilogue read of its accumulator wait first for `empty`
/// in `phase` (the phase MMA `k` completes), and the scales it copies into tensor memory each step one buffer per
/// ring slot (see the module's description); a chained one is waited for there, where the loop waited for it.
pub(crate) fn release_to(
    f: &mut Func,
    lp: OpId,
    w: &WsMma,
    empty: ValueId,
    phase: ValueId,
) -> Result<(), crate::SchedError> {
    let m = w.release();
    let b = barrier_operand(f, m.mma);
    f.op_mut(m.mma).operands[b] = empty;
    match w {
        WsMma::InFlight(m) => {
            if !m.scales.is_empty() {
                let ValueDef::Result(ix, _) = f.value(empty).def else { unreachable!("`empty` indexes the ring") };
                let (ring, slot) = (f.op(ix).operands[0], f.op(ix).operands[1]);
                let n = f.ty(ring).shape()[0];
                for &s in &m.scales {
                    crate::mma_flight::buffer_by(f, lp, s, n, slot)?;
                }
            }
            for &r in &m.reads {
                Cursor { f, anchor: r }.insert(Op::mbarrier_wait(), &[empty, phase], vec![]);
            }
        }
        WsMma::Chained { release, .. } => {
            f.op_mut(release.wait).operands = [empty, phase].into_iter().collect();
        }
    }
    Ok(())
}

/// After the expansion and the split, for an MMA in flight: one commit to the accumulator's barrier and its wait
/// right after loop `lp` (in the default partition), in the parity the loop yields; what follows reads the parity
/// flipped. (Chained MMAs leave nothing in flight.)
pub(crate) fn drain(f: &mut Func, lp: OpId, w: &WsMma) {
    let WsMma::InFlight(m) = w else { return };
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
