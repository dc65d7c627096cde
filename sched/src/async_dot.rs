//! The dot a pipelined loop leaves in flight across its back edge ([`AsyncDot`]): which `warpgroup_dot` of a body
//! qualifies (its result goes back to a loop-carried accumulator and nothing else reads it, or only the `if`s of
//! a fused nest's epilogue do), where the next iteration waits for it ([`DotWait`]), and the accumulator's
//! restart from zero that a flattened nest's first K step becomes ([`Restart`], the dot's `use_acc`).
//! [`crate::plan`] asks for the candidate and keeps it when the dot reads only rings.

use tessel_tile::ir::{Func, OpId, ValueDef, ValueId};
use tessel_tile::ops::{Const, Op};
use tessel_tile::types::Type;

/// A `warpgroup_dot` left in flight across the back edge, and where its result is waited for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncDot {
    pub dot: OpId,
    /// The position among the body's arguments (0 is the induction variable) of the loop-carried accumulator
    /// the dot's result goes back to.
    pub carried: usize,
    pub wait: DotWait,
    /// The accumulator restarted on some iterations (a flattened loop nest's first K step): the `select` of a
    /// zero or the carried value on a scalar condition, which the expansion replaces with the dot's `use_acc`
    /// (the negated condition), so the dot accumulates into the carried value itself and stays in flight.
    pub restart: Option<Restart>,
    /// `if` ops after the dot that read its result (a flattened nest's epilogue, on the inner loop's last step):
    /// each waits for the dot inside, so the wait is paid only when the epilogue runs.
    pub readers: Vec<OpId>,
}

/// See [`AsyncDot::restart`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restart {
    pub select: OpId,
    /// The scalar condition under which the accumulator restarts from zero.
    pub when: ValueId,
}

/// Where the previous iteration's asynchronous dot is retired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DotWait {
    /// Right after the dot, down to one group in flight: the dot accumulates into the carried value itself and
    /// nothing else reads it, so the next iteration's dot chains on the registers in flight (a matmul's K loop).
    AfterIssue,
    /// Before this op of the body, the first that reads the carried accumulator (attention's rescaling
    /// `acc * alpha`): everything the next iteration does before it (its other dots, their softmax) overlaps
    /// with the dot. Waits for every group.
    BeforeUse(OpId),
    /// The dot accumulates into the carried value itself and nothing else reads it, with other dots in the body
    /// (attention backward's dk/dv and dq loops): every dot of the body runs asynchronously and is waited for
    /// where its result is first read, or before the next dot when it reads A from registers ([`crate::dot_waits`]);
    /// this one stays in flight into the next iteration, retired by its first wait.
    AtReads,
}

/// Whether `v` is a constant 0 (scalar or splat).
pub(crate) fn is_zero(f: &Func, v: ValueId) -> bool {
    match f.value(v).def {
        ValueDef::Result(p, _) => match f.op(p).op {
            Op::Constant(Const::Int(0)) => true,
            Op::Constant(Const::Float(x)) => x == 0.0 && x.is_sign_positive(),
            Op::Splat | Op::Broadcast => is_zero(f, f.op(p).operands[0]),
            _ => false,
        },
        ValueDef::Arg(..) => false,
    }
}

/// The `warpgroup_dot` of the body that may stay in flight across the back edge: its result only goes back to a
/// loop-carried accumulator. When the dot accumulates into that value itself and nothing else reads it, the
/// next iteration's dot chains on it: alone in the body it is waited for right after its next issue
/// ([`DotWait::AfterIssue`]), among other dots every dot is waited for where it is read ([`DotWait::AtReads`]).
/// Otherwise the next iteration waits before its first read of the value, and only the last such dot of the body
/// qualifies (the others stay synchronous, and each of their waits retires it too, being in order).
pub(crate) fn async_candidate(
    f: &Func,
    ops: &[OpId],
    args: &[ValueId],
    yields: &[ValueId],
    uses: &[u32],
) -> Option<AsyncDot> {
    let dots: Vec<OpId> = dots_of(f, ops).collect();
    let &dot = dots.last()?;
    let dd = f.op(dot);
    let (acc, result) = (dd.operands[2], dd.results[0]);
    if !matches!(f.ty(acc), Type::Tensor { .. }) || dd.operands.len() > 3 {
        return None;
    }
    let carried = 1 + yields.iter().position(|&y| y == result)?;
    let at = ops.iter().position(|&x| x == dot).expect("a body op");
    // Reads of the result besides the back edge: only inside `if`s after the dot (each waits inside).
    let count_in = |x: OpId| {
        let mut n = 0;
        f.walk_op(x, &mut |y| n += f.op(y).operands.iter().filter(|&&v| v == result).count() as u32);
        n
    };
    let readers: Vec<OpId> =
        ops[at + 1..].iter().copied().filter(|&x| f.op(x).op == Op::If && count_in(x) > 0).collect();
    let inside: u32 = readers.iter().map(|&x| count_in(x)).sum();
    if uses[result.index()] != 1 + inside || readers.iter().any(|&x| f.op(x).operands.contains(&result)) {
        return None;
    }
    let restart = restart_of(f, ops, acc, args[carried], uses);
    let acc = if restart.is_some() { args[carried] } else { acc };
    if dots.len() == 1 && args[carried] == acc && uses[acc.index()] == 1 {
        return Some(AsyncDot { dot, carried, wait: DotWait::AfterIssue, restart, readers });
    }
    if !readers.is_empty() || restart.is_some() {
        return None;
    }
    if args[carried] == acc && uses[acc.index()] == 1 {
        return Some(AsyncDot { dot, carried, wait: DotWait::AtReads, restart: None, readers });
    }
    // Every read of the carried value comes before the dot (the dot then overwrites its registers).
    let reads = |x: OpId| {
        let mut r = false;
        f.walk_op(x, &mut |y| r |= f.op(y).operands.contains(&args[carried]));
        r
    };
    if ops[at..].iter().any(|&x| reads(x)) {
        return None;
    }
    let first = ops[..at].iter().copied().find(|&x| reads(x)).unwrap_or(dot);
    Some(AsyncDot { dot, carried, wait: DotWait::BeforeUse(first), restart: None, readers: Vec::new() })
}

/// The `warpgroup_dot`s among `ops`, in order.
pub(crate) fn dots_of<'a>(f: &'a Func, ops: &'a [OpId]) -> impl Iterator<Item = OpId> + 'a {
    ops.iter().copied().filter(|&x| matches!(f.op(x).op, Op::WarpGroupDot { .. }))
}

/// How many `warpgroup_dot`s sit inside the regions of `ops` (an `if`'s branches).
pub(crate) fn dots_nested(f: &Func, ops: &[OpId]) -> usize {
    let mut n = 0;
    for &x in ops {
        f.walk_op(x, &mut |y| n += usize::from(y != x && matches!(f.op(y).op, Op::WarpGroupDot { .. })));
    }
    n
}

/// `acc = select(splat(when), 0, carried)` read by nothing but the dot: the accumulator restarting from zero
/// when the scalar `when` holds (a flattened nest's first K step).
fn restart_of(f: &Func, ops: &[OpId], acc: ValueId, carried: ValueId, uses: &[u32]) -> Option<Restart> {
    let ValueDef::Result(select, _) = f.value(acc).def else { return None };
    let sd = f.op(select);
    if sd.op != Op::Select || !ops.contains(&select) || uses[acc.index()] != 1 {
        return None;
    }
    if sd.operands[2] != carried || !is_zero(f, sd.operands[1]) || uses[carried.index()] != 1 {
        return None;
    }
    // The condition, through the splat (and layout conversions) that made it a tensor.
    let mut when = sd.operands[0];
    loop {
        match f.value(when).def {
            ValueDef::Result(p, _) if matches!(f.op(p).op, Op::Splat | Op::Broadcast | Op::ConvertLayout) => {
                when = f.op(p).operands[0];
            }
            _ => break,
        }
    }
    (!f.ty(when).is_tensor()).then_some(Restart { select, when })
}
