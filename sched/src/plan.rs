//! Which loops the pipeliner takes and how: the latency model, the legality checks, and the CoarseSchedule.
//!
//! The latency model is Triton's first-order one: a global load whose data a tensor-core `warpgroup_dot` reads
//! from shared memory (through the `local_alloc` that layout assignment put before the dot) takes `num_stages − 1`
//! iterations to arrive, so it is issued that many iterations ahead, as a `cp.async` into one buffer of a ring.
//! So is one whose every use converts it to an operand of a dot that runs on `mma.sync` (sm_80, and fewer than
//! four warps on sm_90a): its ring is swizzled for `ldmatrix`, and the dot reads its operand from there.
//! Everything the loads need from the loop (their pointers, masks, the pointer increments carried to the next
//! iteration) runs with them in stage 0; the rest of the body runs in the last stage. An accumulating dot whose
//! accumulator nothing else in the loop reads is made asynchronous, with one wgmma group left in flight across
//! the back edge.
//!
//! A loop that does not fit gets a schedule with every op in stage 0 and the reason, printed by
//! `tessel compile --emit sched`; it runs as written.

use std::collections::HashSet;

use tessel_layouts::{AnyLayout, DistributedLayout};
use tessel_tile::ir::{Func, OpId, ValueDef, ValueId};
use tessel_tile::layout::accelerate::runs_on_mma_sync;
use tessel_tile::layout::axis::AxisAnalysis;
use tessel_tile::layout::shared_access;
use tessel_tile::layout::staging::mma_sync_operand_layout;
use tessel_tile::ops::Op;
use tessel_tile::types::{Elem, Type};

pub use crate::async_dot::{AsyncDot, DotWait, Restart};
use crate::async_dot::{async_candidate, dots_nested, dots_of, is_zero};
use crate::error::{AsWritten, SkipReason, Skipped};
pub use crate::staging::{Staging, View};
use crate::staging::{inverse, stagings, views_match};

/// The schedule of one loop: for each op of its body, in the order the steady state issues them, the stage
/// (how many iterations ahead of the loop's current one it runs) and the cluster (its group in that order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoarseSchedule {
    /// The `for` op.
    pub loop_op: OpId,
    /// The pipelining depth asked for: the loop's `num_stages` (from `tl.range`), else the kernel's.
    pub requested_stages: u32,
    /// `(op, stage, cluster)` for the ops of the body, terminator excluded.
    pub ops: Vec<(OpId, u32, u32)>,
    /// Why the loop is scheduled the way it is.
    pub reason: String,
}

impl CoarseSchedule {
    /// The number of stages the schedule uses (1 + the largest stage).
    pub fn num_stages(&self) -> u32 {
        1 + self.ops.iter().map(|&(_, s, _)| s).max().unwrap_or(0)
    }
}

/// How one loop is pipelined.
#[derive(Clone, Debug)]
pub struct LoopPlan {
    pub loop_op: OpId,
    /// `num_stages`: loads run `stages − 1` iterations ahead.
    pub stages: u32,
    /// Buffers in each ring: the `stages − 1` being filled, plus the one an asynchronous dot still reads while the
    /// next copy is issued. Without one, the last stage is done with its buffer before the copy into it (a
    /// barrier between them).
    pub buffers: u32,
    /// Stage 0 in program order: the pipelined loads and every body op they need.
    pub stage0: Vec<OpId>,
    /// The pipelined loads, in program order.
    pub loads: Vec<PipelinedLoad>,
    /// Positions (among the loop-carried values) of the values stage 0 carries: the loads' pointers.
    pub early_args: Vec<usize>,
    /// Stage-0 ops that depend only on the induction variable (and [`LoopPlan::late_args`]) and whose values the
    /// last stage reads too: the last stage computes them again for its own iteration.
    pub remat: Vec<OpId>,
    /// Carried integers stage 0 advances by a loop-invariant increment (position among the carried values, the
    /// increment) that the last stage reads: it reads the carried value less `stages − 1` increments
    /// ([`crate::induction`]).
    pub late_args: Vec<(usize, ValueId)>,
    /// The `warpgroup_dot` made asynchronous, when there is one that can be.
    pub async_dot: Option<AsyncDot>,
    /// The auto-mode `tcgen05_mma` left in flight into the next iteration, when there is one that can be
    /// ([`crate::mma_flight`]).
    pub mma_flight: Option<crate::mma_flight::MmaFlight>,
    /// Whether each ring slot is refilled by the last warp to release it (`ring_release`) rather than by the
    /// first thread after a CTA barrier: see [`releases_pay`].
    pub release: bool,
}

/// Whether a TMA-only loop refills its ring slots through release counters instead of a CTA barrier. The
/// counters let the warpgroups drift apart, which pays when one can run the loop's non-tensor-core work (the
/// softmax between attention's two dots) while another runs its wgmmas: 4–6% on the H100 for attention with two
/// warpgroups. The last warp's atomic round trip delays each refill, though, and where the warps have nothing to
/// overlap (one warpgroup, or a loop that is one dot) that delay costs more than the barrier did (matmul 5–14%,
/// one-warpgroup attention 2–7%), so those keep the barrier.
fn releases_pay(f: &Func, body: &[OpId], loads: &[PipelinedLoad]) -> bool {
    let dots = body.iter().filter(|&&x| matches!(f.op(x).op, Op::WarpGroupDot { .. })).count();
    loads.iter().all(|l| l.tma) && f.config.num_warps >= 8 && dots >= 2
}

/// A load the pipeliner issues ahead into a ring: a `cp.async` of a pointer load, or a TMA copy of a
/// descriptor load (`tma`), which completes on the ring's mbarrier for its buffer.
#[derive(Clone, Debug)]
pub struct PipelinedLoad {
    pub load: OpId,
    pub tma: bool,
    /// The type of one buffer of its ring.
    pub buffer: Type,
    /// How the last stage reads it back: through the dots' shared-memory operands (the `local_alloc`s it
    /// replaces), or into registers in the load's layout (`local_load`, then masked-off elements set to the
    /// load's `other`).
    pub consumer: Consumer,
}

#[derive(Clone, Debug)]
pub enum Consumer {
    /// Every use of the load stages it for a wgmma: one ring buffer serves them all, each through its own view.
    Allocs(Vec<Staging>),
    Registers {
        mask_other: Option<(ValueId, ValueId)>,
    },
    /// Every use of the load converts it to the dot-operand layout of a dot that runs on `mma.sync` (these
    /// `convert_layout`s): the ring is swizzled for that read, and the last stage reads each operand straight
    /// from it (`local_load`, `ldmatrix` where the layouts allow), in place of the conversion's trip through
    /// shared memory. Masked-off elements are 0, as `cp.async` fills them.
    Operands {
        converts: Vec<OpId>,
    },
}

impl Consumer {
    /// The ops the ring replaces: the `local_alloc`s and the `permute`s before them, or the conversions to the
    /// dot-operand layout.
    pub fn staging_ops(&self) -> impl Iterator<Item = OpId> + '_ {
        let (stagings, converts): (&[Staging], &[OpId]) = match self {
            Consumer::Allocs(s) => (s, &[]),
            Consumer::Registers { .. } => (&[], &[]),
            Consumer::Operands { converts } => (&[], converts),
        };
        stagings.iter().flat_map(Staging::ops).chain(converts.iter().copied())
    }
}

/// The plan for loop `o`, or why it runs as written. Vectors that reach a dot ([`Vectors::Pipelined`]) run
/// ahead when the loop allows it; when they keep it from being pipelined (the last stage reads what their
/// addresses are computed from, and that cannot be computed again for its iteration: the causal mask of attention
/// backward, which reads the rows its statistics are loaded for, can, from the carried row offset), the loop is
/// planned without them.
pub fn plan(f: &Func, o: OpId, axis: &AxisAnalysis) -> Result<LoopPlan, AsWritten> {
    match plan_with(f, o, axis, Vectors::Pipelined) {
        Err(why) if vector_loads(f, o) => plan_with(f, o, axis, Vectors::AsWritten).map_err(|_| why),
        planned => planned,
    }
}

/// Whether 1-D loads whose data reaches a dot (attention backward's row statistics `m` and `Delta`, read into
/// the dot's result before the next dot) run ahead through rings read back into registers, as Triton pipelines
/// every load a dot depends on. Their rings are a vector per stage. Tiles that reach a dot through registers
/// (an operand converted before it is staged) run ahead only when the loop asks for stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vectors {
    Pipelined,
    AsWritten,
}

/// Whether loop `o`'s body has a 1-D load whose data reaches a dot ([`Vectors`]).
fn vector_loads(f: &Func, o: OpId) -> bool {
    let ops = &f.region(f.op(o).regions[0]).ops;
    ops.iter().any(|&x| matches!(f.op(x).op, Op::Load { .. }) && vector_reaching_dot(f, ops, f.op(x).results[0]))
}

/// Whether `v` is a 1-D tensor whose value reaches a `warpgroup_dot` among `ops` through the ops after it.
fn vector_reaching_dot(f: &Func, ops: &[OpId], v: ValueId) -> bool {
    if f.ty(v).shape().len() != 1 {
        return false;
    }
    let mut reached: HashSet<ValueId> = HashSet::from([v]);
    for &x in ops {
        let mut reads = false;
        f.walk_op(x, &mut |y| reads |= f.op(y).operands.iter().any(|o| reached.contains(o)));
        if !reads {
            continue;
        }
        if matches!(f.op(x).op, Op::WarpGroupDot { .. }) {
            return true;
        }
        reached.extend(f.op(x).results.iter().copied());
    }
    false
}

fn plan_with(f: &Func, o: OpId, axis: &AxisAnalysis, vectors: Vectors) -> Result<LoopPlan, AsWritten> {
    let d = f.op(o);
    let Op::For(attrs) = &d.op else { return Err(AsWritten::NotAFor) };
    let stages = attrs.num_stages.unwrap_or(f.config.num_stages);
    if stages <= 1 {
        return Err(AsWritten::Stages(stages));
    }
    if f.attrs.gluon {
        return Err(AsWritten::Gluon);
    }
    let body = d.regions[0];
    let ops: Vec<OpId> = f.region(body).ops.clone();
    let (yield_op, ops) = ops.split_last().expect("verified: a body ends in yield");
    let (args, yields) = (&f.region(body).args, &f.op(*yield_op).operands);
    let mut nested = false;
    for &x in ops {
        f.walk_op(x, &mut |y| nested |= matches!(f.op(y).op, Op::For(_) | Op::While));
    }
    if nested {
        return Err(AsWritten::Nested);
    }
    let in_body: HashSet<OpId> = ops.iter().copied().collect();
    let def_in_body = |v: ValueId| match f.value(v).def {
        ValueDef::Result(p, _) if in_body.contains(&p) => Some(p),
        _ => None,
    };
    let uses = f.use_counts();

    // The loads worth pipelining: those whose every use stages them in shared memory for a wgmma (once as loaded,
    // once transposed in attention's backward: one ring, a view per use), vectors that reach a dot ([`Vectors`])
    // and, when the loop itself asks for stages (`tl.range(..., num_stages=)`, as Triton does), the others too,
    // read back into registers. cp.async must be able to copy them (4+ contiguous bytes in both memories,
    // masked-off elements zero for the dot's operands; for register loads `other` is applied after the read).
    let explicit = attrs.num_stages.is_some();
    let mut loads = Vec::new();
    let mut skipped = Vec::new();
    for &x in ops {
        let xd = f.op(x);
        if xd.op == Op::DescLoad {
            // Descriptor loads left by layout assignment are TMA's (sm_90a, host descriptors).
            match tma_load(f, ops, x, explicit, &uses) {
                Ok(Some(l)) => loads.push(l),
                Ok(None) => {}
                Err(why) => skipped.push(Skipped { load: xd.results[0], why }),
            }
            continue;
        }
        if !matches!(xd.op, Op::Load { .. }) {
            continue;
        }
        let v = xd.results[0];
        let Some(Elem::Scalar(elem)) = f.ty(v).elem() else { continue };
        let Type::Tensor { layout: Some(dist), .. } = f.ty(v) else { continue };
        let (buffer, consumer) = match stagings(f, ops, v, &uses, false) {
            Some(stagings) => {
                // The ring holds the tile as loaded (the first staging's buffer, its permute undone); every
                // staging reads a view of it.
                let first = &stagings[0];
                let staged = f.ty(f.op(first.alloc).results[0]);
                let buffer = match first.views.first() {
                    Some((_, View::Permute(order))) => {
                        View::Permute(inverse(order)).of(staged).map_err(SkipReason::Permute)
                    }
                    _ => Ok(staged.clone()),
                };
                match buffer.and_then(|b| views_match(f, ops, &b, &stagings[1..], SkipReason::Views).map(|()| b)) {
                    Ok(b) => (b, Consumer::Allocs(stagings)),
                    Err(why) => {
                        skipped.push(Skipped { load: v, why });
                        continue;
                    }
                }
            }
            None if let Some(converts) = mma_sync_operand(f, ops, v, &uses) => {
                let fast = tessel_tile::layout::axis::register_run(&dist.linear).0;
                match mma_sync_operand_layout(f.ty(v).shape(), elem, fast) {
                    Ok(layout) => {
                        (Type::MemDesc { shape: f.ty(v).shape().into(), elem, layout }, Consumer::Operands { converts })
                    }
                    Err(e) => {
                        skipped.push(Skipped { load: v, why: SkipReason::Swizzle(e) });
                        continue;
                    }
                }
            }
            None if explicit || (vectors == Vectors::Pipelined && vector_reaching_dot(f, ops, v)) => {
                let mask_other = match (xd.operands.get(1), xd.operands.get(2)) {
                    (Some(&m), Some(&o)) if !is_zero(f, o) => Some((m, o)),
                    _ => None,
                };
                (row_major_buffer(f.ty(v), &dist.linear, elem), Consumer::Registers { mask_other })
            }
            None => continue,
        };
        // cp.async moves runs contiguous in global memory (the pointers' alignment and contiguity) and in the
        // buffer.
        let global = axis.access_width(f, xd.operands[0], xd.operands.get(1).copied(), elem.bytes());
        let shared = match &buffer {
            Type::MemDesc { layout: s, .. } => shared_access::offsets(&dist.linear, &s.linear)
                .map(|m| shared_access::contiguous_run(&m, dist.linear.in_dim_size("register"), elem.bytes()))
                .unwrap_or(1),
            _ => 1,
        };
        let width = global.min(shared) * elem.bytes();
        if width < 4 {
            skipped.push(Skipped { load: v, why: SkipReason::Width(width) });
            continue;
        }
        if let (Consumer::Allocs(_) | Consumer::Operands { .. }, Some(&other)) = (&consumer, xd.operands.get(2))
            && !is_zero(f, other)
        {
            skipped.push(Skipped { load: v, why: SkipReason::NonZeroOther });
            continue;
        }
        loads.push(PipelinedLoad { load: x, buffer, consumer, tma: false });
    }
    if loads.is_empty() {
        return Err(AsWritten::NoLoads { explicit, skipped });
    }

    // Stage 0: the loads, what they need from the body, and the next values of the loop-carried values they
    // read (a pointer's increment), to a fixed point.
    let mut stage0: HashSet<OpId> = loads.iter().map(|l| l.load).collect();
    let mut early: HashSet<usize> = HashSet::new();
    let mut work: Vec<OpId> = stage0.iter().copied().collect();
    while let Some(x) = work.pop() {
        // An `if` in stage 0 (a fused loop's tile prologue, computed on a tile's first step) reads values in its
        // branches too.
        let mut read = Vec::new();
        f.walk_op(x, &mut |y| read.extend(f.op(y).operands.iter().copied()));
        for v in read {
            if let Some(p) = def_in_body(v) {
                if stage0.insert(p) {
                    work.push(p);
                }
            } else if let Some(i) = args.iter().position(|&a| a == v)
                && i > 0
                && early.insert(i - 1)
                && let Some(p) = def_in_body(yields[i - 1])
                && stage0.insert(p)
            {
                work.push(p);
            }
        }
    }
    for &x in &stage0 {
        let xd = f.op(x);
        let pure_branch = |x: OpId| {
            let mut pure = true;
            f.walk_op(x, &mut |y| pure &= y == x || f.op(y).op.is_pure() || f.op(y).op == Op::Yield);
            pure
        };
        let ok = match &xd.op {
            Op::If => pure_branch(x),
            op => xd.regions.is_empty() && (op.is_pure() || matches!(op, Op::Load { .. } | Op::DescLoad)),
        };
        if !ok {
            return Err(AsWritten::ImpureStage0 { op: x, name: xd.op.name() });
        }
    }
    // The rest of the body runs in the last stage, one iteration behind: it may not read stage 0's values (they
    // belong to a later iteration) except the loads' data, through their `local_alloc`s, and values that depend
    // on nothing but the induction variable (attention's key offsets, also used by its causal mask), which the
    // last stage computes again for its own iteration.
    let iv = args[0];
    let inductions = crate::induction::inductions(f, args, yields, early.iter().copied(), |p| in_body.contains(&p));
    let induction_arg = |v: ValueId| {
        args.iter().position(|&a| a == v).filter(|&i| i > 0 && inductions.contains_key(&(i - 1))).map(|i| i - 1)
    };
    let mut iv_only: HashSet<OpId> = HashSet::new();
    for &x in ops.iter().filter(|x| stage0.contains(x) && f.op(**x).op.is_pure()) {
        let ok = f.op(x).operands.iter().all(|&v| match def_in_body(v) {
            Some(p) => iv_only.contains(&p),
            None => v == iv || !args.contains(&v) || induction_arg(v).is_some(),
        });
        if ok {
            iv_only.insert(x);
        }
    }
    let allocs: HashSet<OpId> = loads.iter().flat_map(|l| l.consumer.staging_ops()).collect();
    // The data of register loads: the last stage reads it back from the ring (so it may use it), stage 0 may not
    // (a load whose address depends on another load's data is not pipelined).
    let read_back: HashSet<ValueId> = loads
        .iter()
        .filter(|l| matches!(l.consumer, Consumer::Registers { .. }))
        .map(|l| f.op(l.load).results[0])
        .collect();
    for &x in &stage0 {
        if let Some(v) = f.op(x).operands.iter().find(|v| read_back.contains(v)) {
            return Err(AsWritten::NeedsLoadedData { op: x, name: f.op(x).op.name(), load: *v });
        }
    }
    let mut remat: HashSet<OpId> = HashSet::new();
    // The mask and `other` of register loads are applied in the last stage, for its own iteration.
    for l in &loads {
        if let Consumer::Registers { mask_other: Some((m, o)) } = l.consumer {
            for v in [m, o] {
                match def_in_body(v) {
                    Some(p) if iv_only.contains(&p) => {
                        remat.insert(p);
                    }
                    Some(_) => {
                        return Err(AsWritten::CarriedMask { value: v, carried: false });
                    }
                    None if args[1..].contains(&v) => {
                        return Err(AsWritten::CarriedMask { value: v, carried: true });
                    }
                    None => {}
                }
            }
        }
    }
    let mut late: HashSet<usize> = HashSet::new();
    for &x in ops.iter().filter(|x| !stage0.contains(x) && !allocs.contains(x)) {
        let mut bad = None;
        f.walk_op(x, &mut |y| {
            for &v in &f.op(y).operands {
                let early_arg = args.iter().position(|&a| a == v).is_some_and(|i| i > 0 && early.contains(&(i - 1)));
                match def_in_body(v).filter(|p| stage0.contains(p)) {
                    Some(_) if read_back.contains(&v) => {}
                    Some(p) if iv_only.contains(&p) => {
                        remat.insert(p);
                    }
                    Some(_) => bad = Some(v),
                    None if early_arg => match induction_arg(v) {
                        Some(i) => {
                            late.insert(i);
                        }
                        None => bad = Some(v),
                    },
                    None => {}
                }
            }
        });
        if let Some(v) = bad {
            return Err(AsWritten::UsesStage0 { op: x, name: f.op(x).op.name(), value: v });
        }
    }
    // A carried value the loads do not read goes back to the loop as the last stage computes it: one stage 0
    // computes (for a later iteration) is computed again when it depends on the induction variable alone (the
    // offsets a load used, carried out of the loop), or read back when it is a load's data; any other may not
    // be read after the loop or by the next iteration.
    // One nothing reads (attention backward's `offs_m`, reassigned every iteration) stays as stage 0 left it.
    for (i, &y) in yields.iter().enumerate().filter(|(i, _)| !early.contains(i)) {
        let read = uses[d.results[i].index()] > 0 || uses[args[i + 1].index()] > 0;
        match def_in_body(y).filter(|p| stage0.contains(p)) {
            Some(_) if read_back.contains(&y) || !read => {}
            Some(p) if iv_only.contains(&p) => {
                remat.insert(p);
            }
            Some(_) => return Err(AsWritten::CarriedFromStage0(d.results[i])),
            _ => {}
        }
    }
    // What the recomputed values need, in program order.
    let mut work: Vec<OpId> = remat.iter().copied().collect();
    while let Some(x) = work.pop() {
        for &v in &f.op(x).operands {
            if let Some(p) = def_in_body(v)
                && remat.insert(p)
            {
                work.push(p);
            }
        }
    }
    let remat: Vec<OpId> = ops.iter().copied().filter(|x| remat.contains(x)).collect();
    for &x in &remat {
        late.extend(f.op(x).operands.iter().filter_map(|&v| induction_arg(v)));
    }
    let mut late_args: Vec<(usize, ValueId)> = late.into_iter().map(|i| (i, inductions[&i])).collect();
    late_args.sort_unstable();
    for &i in &early {
        if uses[d.results[i].index()] > 0 {
            return Err(AsWritten::PointerUsedAfter(d.results[i]));
        }
        if def_in_body(yields[i]).is_none() && yields[i] != args[i + 1] {
            return Err(AsWritten::CarriedFromOutside(args[i + 1]));
        }
    }

    // A dot left in flight across the back edge may only read rings (and buffers made before the loop): a
    // buffer the loop body writes every iteration would be overwritten while the previous dot still reads it.
    let ring_results: HashSet<ValueId> = allocs.iter().map(|&a| f.op(a).results[0]).collect();
    // The wait before the accumulator's first read belongs to the last stage.
    let reads_rings = |dot: OpId| {
        f.op(dot).operands[..2]
            .iter()
            .all(|&m| !f.ty(m).is_memdesc() || ring_results.contains(&m) || def_in_body(m).is_none())
    };
    // The same of a buffer an MMA in flight reads, or of a view of one (the unpacked scales a copy reads).
    let staged = |mut m: ValueId| {
        while let ValueDef::Result(p, _) = f.value(m).def
            && f.op(p).op.is_memdesc_view()
        {
            m = f.op(p).operands[0];
        }
        !f.ty(m).is_memdesc() || ring_results.contains(&m) || def_in_body(m).is_none()
    };
    let async_dot = async_candidate(f, ops, args, yields, &uses).filter(|a| {
        // A restart's condition is the last stage's (recomputed when stage 0 computes it too).
        let restart_ok = a.restart.is_none_or(|r| !stage0.contains(&r.select));
        reads_rings(a.dot)
            && match a.wait {
                DotWait::BeforeUse(x) => !stage0.contains(&x) && !remat.contains(&x),
                DotWait::AfterIssue => true,
                // Every dot is asynchronous, and each may be in flight while the next iteration starts.
                DotWait::AtReads => dots_of(f, ops).all(reads_rings) && dots_nested(f, ops) == 0,
            }
            && restart_ok
            && a.readers.iter().all(|r| !stage0.contains(r))
    });
    let mut stage0: Vec<OpId> = ops.iter().copied().filter(|x| stage0.contains(x)).collect();
    stage0.shrink_to_fit();
    let mut early_args: Vec<usize> = early.into_iter().collect();
    early_args.sort_unstable();
    // An MMA in flight reads its ring buffers into the next iteration: the ring gets one more, as for an
    // asynchronous wgmma.
    let mma_flight =
        if async_dot.is_none() { crate::mma_flight::candidate(f, ops, args, yields, &uses, staged) } else { None };
    let buffers = if async_dot.is_some() || mma_flight.is_some() { stages } else { stages - 1 };
    let release = releases_pay(f, ops, &loads);
    Ok(LoopPlan {
        loop_op: o,
        stages,
        buffers,
        stage0,
        loads,
        early_args,
        remat,
        late_args,
        async_dot,
        mma_flight,
        release,
    })
}

/// A `desc_load` the pipeliner can issue ahead as a TMA copy: staged for a wgmma in the descriptor's TMA
/// layout (its buffer is then a ring buffer the copy fills), or, when the loop asks for stages, any other (read
/// back into registers). `Ok(None)`: not a load to pipeline.
fn tma_load(
    f: &Func,
    ops: &[OpId],
    x: OpId,
    explicit: bool,
    uses: &[u32],
) -> Result<Option<PipelinedLoad>, SkipReason> {
    let (desc, v) = (f.op(x).operands[0], f.op(x).results[0]);
    if tessel_tile::tma::desc_block(f.ty(desc)).is_none() {
        return Ok(None);
    }
    // The block in the descriptor's TMA layout (its `make_tensor_desc`'s, else the default).
    let buffer = tessel_tile::tma::desc_buffer_type(f, desc).map_err(SkipReason::Tma)?;
    // `desc.load(...).T`: the tile is staged transposed; the copy lands as the descriptor lays it out and the dot
    // reads a permuted view of it. Staged through views the reader cannot take, it is read back into registers
    // when the loop asks for stages, as a load staged some other way is.
    let staged =
        stagings(f, ops, v, uses, true).map(|s| views_match(f, ops, &buffer, &s, SkipReason::StagedLayout).map(|()| s));
    let consumer = match staged {
        Some(Ok(stagings)) => Consumer::Allocs(stagings),
        Some(Err(_)) | None if explicit => Consumer::Registers { mask_other: None },
        Some(Err(why)) => return Err(why),
        None => return Ok(None),
    };
    Ok(Some(PipelinedLoad { load: x, buffer, consumer, tma: true }))
}

/// The `convert_layout`s through which loaded `v` reaches dots that run on `mma.sync`: every use of `v` is one
/// (in the body, all to one type), and each result is operand A or B of such a dot. None otherwise.
fn mma_sync_operand(f: &Func, ops: &[OpId], v: ValueId, uses: &[u32]) -> Option<Vec<OpId>> {
    let mut converts: Vec<OpId> = Vec::new();
    for &y in ops {
        let yd = f.op(y);
        if !yd.operands.contains(&v) {
            continue;
        }
        let r = yd.results.first().copied()?;
        let same_type = converts.first().is_none_or(|&c| f.ty(f.op(c).results[0]) == f.ty(r));
        let operand = matches!(
            f.ty(r).layout().and_then(|l| l.spec.as_ref()),
            Some(AnyLayout::Distributed(DistributedLayout::DotOperand(_)))
        );
        let feeds = ops.iter().any(|&x| {
            let xd = f.op(x);
            matches!(xd.op, Op::Dot { .. }) && runs_on_mma_sync(f.ty(xd.results[0])) && xd.operands[..2].contains(&r)
        });
        if yd.op != Op::ConvertLayout || !same_type || !operand || !feeds {
            return None;
        }
        converts.push(y);
    }
    // A use elsewhere (after the loop, or inside a nested region) leaves the count short.
    (!converts.is_empty() && converts.len() == uses[v.index()] as usize).then_some(converts)
}

/// One buffer for a load read back into registers of layout `dist`: the tensor row-major with `dist`'s
/// fastest register dim innermost, so each thread's run of registers is one contiguous copy.
fn row_major_buffer(t: &Type, dist: &tessel_layouts::LinearLayout, elem: tessel_tile::ScalarType) -> Type {
    let shape = t.shape();
    // A tensor spread over a cluster's CTAs (auto mode's split: each CTA a contiguous range along the split dims)
    // is staged likewise: each CTA's part of the buffer holds its part of the tensor, row-major, the block bases
    // the registers'.
    let block = tessel_tile::cluster::block_bases(dist);
    // A split that is not one aligned box per CTA stays a buffer every CTA holds whole (codegen then refuses the
    // copy of spread pointers into it, and the kernel runs unspread).
    let (part, block) = match tessel_tile::cluster_part::part_shape(shape, &block) {
        Ok(part) => (part, block),
        Err(_) => (shape.to_vec(), Vec::new()),
    };
    let (fast, _) = tessel_tile::layout::axis::register_run(dist);
    let mut order: Vec<usize> = vec![fast];
    order.extend((0..shape.len()).rev().filter(|&d| d != fast));
    let mut bases = Vec::new();
    for &d in &order {
        for j in 0..part[d].trailing_zeros() {
            let mut b = vec![0u32; shape.len()];
            b[d] = 1 << j;
            bases.push(b);
        }
    }
    let mut ins = vec![("offset", bases)];
    if !block.is_empty() {
        ins.push(("block", block));
    }
    let outs = tessel_layouts::standard_out_dims(shape.len()).into_iter().zip(shape.iter().copied());
    let linear = tessel_layouts::LinearLayout::new(ins, outs).expect("a row-major layout of the shape");
    Type::MemDesc { shape: shape.into(), elem, layout: std::sync::Arc::new(tessel_tile::Layout { spec: None, linear }) }
}

/// The schedule of a loop the pipeliner takes: the last stage first (cluster 0: the dot on the data that has
/// arrived), then stage 0 (cluster 1: the copies for `stages − 1` iterations ahead), as the steady state runs;
/// in a fused loop nest, the inner loop's epilogue (from the branch reading the dot's result on) last (cluster 2,
/// still the last stage).
pub fn schedule_of(f: &Func, p: &LoopPlan, requested_stages: u32) -> CoarseSchedule {
    let body = f.region(f.op(p.loop_op).regions[0]);
    let early: HashSet<OpId> = p.stage0.iter().copied().collect();
    let last = p.stages - 1;
    let body_ops = body.ops.iter().copied().filter(|&x| !f.op(x).op.is_terminator());
    let readers = p.async_dot.as_ref().map_or(&[][..], |a| &a.readers[..]);
    let mut late: Vec<(OpId, u32, u32)> = Vec::new();
    let mut ops: Vec<(OpId, u32, u32)> = Vec::new();
    for x in body_ops.clone().filter(|x| !early.contains(x)) {
        if !late.is_empty() || readers.contains(&x) {
            late.push((x, last, 2));
        } else {
            ops.push((x, last, 0));
        }
    }
    ops.extend(body_ops.filter(|x| early.contains(x)).map(|x| (x, 0, 1)));
    ops.extend(late);
    let dot = match &p.async_dot {
        Some(AsyncDot { dot, wait: DotWait::AfterIssue, restart, readers, .. }) => {
            let restart = restart.map_or(String::new(), |r| {
                format!(", restarting its accumulator through use_acc (replacing {})", r.select)
            });
            let readers: Vec<String> = readers.iter().map(|r| r.to_string()).collect();
            let readers =
                if readers.is_empty() { String::new() } else { format!(", waited for inside {}", readers.join(", ")) };
            format!("; {dot} runs asynchronously, one wgmma group in flight across iterations{restart}{readers}")
        }
        Some(AsyncDot { dot, wait: DotWait::BeforeUse(x), .. }) => {
            format!("; {dot} runs asynchronously, waited for before {x} of the next iteration")
        }
        Some(AsyncDot { dot, wait: DotWait::AtReads, .. }) => format!(
            "; every dot runs asynchronously, waited for where its result is read, {dot} in flight across \
             iterations"
        ),
        None => String::new(),
    };
    CoarseSchedule {
        loop_op: p.loop_op,
        requested_stages,
        ops,
        reason: format!(
            "{} load(s) pipelined {} iteration(s) ahead through {} into rings of {} buffers{dot}",
            p.loads.len(),
            p.stages - 1,
            match (p.loads.iter().any(|l| l.tma), p.loads.iter().any(|l| !l.tma)) {
                (true, true) => "TMA and cp.async",
                (true, false) if p.release => "TMA (each slot refilled by the last warp to release it)",
                (true, false) => "TMA",
                _ => "cp.async",
            },
            p.buffers
        ),
    }
}

/// The schedule of a loop that runs as written: every op in stage 0, in program order.
pub fn as_written(f: &Func, o: OpId, requested_stages: u32, reason: String) -> CoarseSchedule {
    let body = f.region(f.op(o).regions[0]);
    let ops = body.ops.iter().filter(|&&x| !f.op(x).op.is_terminator()).map(|&x| (x, 0, 0)).collect();
    CoarseSchedule { loop_op: o, requested_stages, ops, reason }
}
