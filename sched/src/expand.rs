//! Loop expansion: turns a loop and its [`LoopPlan`] into prologue, steady state and drain.
//!
//! With `S` stages the loads run `D = S − 1` iterations ahead. Each pipelined load gets a ring of `B` shared
//! buffers: `D` being filled, plus one when an asynchronous dot still reads the previous iteration's while the next
//! copy is issued; iteration `j`'s data goes to buffer `j mod B`, one `cp.async` group per iteration.
//!
//! - Prologue, before the loop: stage 0 of iterations `0..D` (copies predicated on the iteration existing).
//! - Steady state, iteration `k`: wait until at most `D − 1` groups are in flight (iteration `k`'s data has
//!   landed), run the last stage on buffer `k mod B` (the dot, asynchronous when the plan says so, followed by a
//!   wait that retires the previous iteration's dot and so frees its buffers; with several dots all asynchronous,
//!   the waits [`crate::dot_waits`] places; loads read back into registers right before their first reader),
//!   then stage 0 of iteration `k + D`
//!   into buffer `(k + D) mod B` (the one the previous iteration's dot read, or, with `B = D`, the one just read:
//!   the barrier analysis puts a barrier between), predicated on `k + D` being an iteration. The epilogue is predicated, not
//!   peeled: the last `D` iterations issue empty copies. In a fused loop nest, the inner loop's epilogue (the
//!   branch that reads the dot's result) runs after that refill; so do a body's trailing stores, with the
//!   elementwise work only they read (`store_tail`). The loop carries the ring positions (slot read, barrier
//!   parity, slot refilled), each advanced by an increment and a wrap.
//! - Drain, after the loop: wait for every copy group and the last dots, and release the rings.
//!
//! TMA loads (descriptor loads) go to the same rings; instead of `cp.async` groups, one mbarrier per ring buffer
//! counts an iteration's TMA bytes: armed (`mbarrier_expect`) with the copies when they are issued, waited for in
//! phase parity `(k / B) mod 2` by iteration `k`, invalidated in the drain.
//! Where the plan's `release` holds, each slot also has a counter (zeroed before the loop, freed in the drain), and
//! the steady state's copies are predicated on a `ring_release` of the slot instead of issued by the first thread
//! after a CTA barrier: every warp counts itself done with the slot, and the thread that completes the count
//! issues them.
//!
//! Stage 0 is pure apart from its loads, so running it for iterations that do not exist computes addresses
//! nothing dereferences; a zero-trip loop runs only the predicated-off prologue and the drain.

use std::collections::HashMap;

use tessel_tile::ir::{Func, OpId, RegionId, ValueData, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, CmpPred, Const, Op};
use tessel_tile::types::{Elem, ScalarType, Type};

use crate::async_dot::{AsyncDot, DotWait};
use crate::error::SchedError;
use crate::plan::{Consumer, LoopPlan};
use crate::ring::ring_type;

/// Builds ops detached from any region; the caller places them.
struct Emit<'f> {
    f: &'f mut Func,
    region: RegionId,
    loc: Option<tessel_tile::ir::Loc>,
    out: Vec<OpId>,
}

impl Emit<'_> {
    fn op(&mut self, op: Op, operands: &[ValueId], results: Vec<Type>) -> OpId {
        let o = self.f.append(self.region, op, operands, results, &[], self.loc);
        self.f.region_mut(self.region).ops.pop();
        self.out.push(o);
        o
    }

    fn value(&mut self, op: Op, operands: &[ValueId], ty: Type) -> ValueId {
        let o = self.op(op, operands, vec![ty]);
        self.f.op(o).results[0]
    }

    fn int(&mut self, v: i64, ty: &Type) -> ValueId {
        self.value(Op::Constant(Const::Int(v)), &[], ty.clone())
    }

    fn binary(&mut self, op: BinOp, a: ValueId, b: ValueId) -> ValueId {
        let ty = self.f.ty(a).clone();
        self.value(Op::Binary { op, propagate_nan: false }, &[a, b], ty)
    }

    /// `base + n * step`.
    fn advance(&mut self, base: ValueId, n: i64, step: ValueId) -> ValueId {
        if n == 0 {
            return base;
        }
        let ty = self.f.ty(base).clone();
        let c = self.int(n, &ty);
        let m = self.binary(BinOp::Mul, c, step);
        self.binary(BinOp::Add, base, m)
    }

    /// The ring position after `k` (in `0..n`): `k + 1`, or 0 when that is `n`; and whether it wrapped.
    fn wrap_next(&mut self, k: ValueId, n: u32) -> (ValueId, ValueId) {
        let ty = self.f.ty(k).clone();
        let one = self.int(1, &ty);
        let up = self.binary(BinOp::Add, k, one);
        let n = self.int(n as i64, &ty);
        let wrapped = self.value(Op::Cmp(CmpPred::Eq), &[up, n], Type::scalar(ScalarType::I1));
        let zero = self.int(0, &ty);
        (self.value(Op::Select, &[wrapped, zero, up], ty), wrapped)
    }

    fn less(&mut self, a: ValueId, b: ValueId) -> ValueId {
        self.value(Op::Cmp(CmpPred::Lt), &[a, b], Type::scalar(ScalarType::I1))
    }

    /// The async copy standing for a load with (remapped) `operands`: into `view`, with the load's mask (if
    /// any) and `ok` (the iteration exists). Masked-off elements are zero-filled, as the plan required.
    fn copy(&mut self, operands: &[ValueId], view: ValueId, ok: ValueId) -> ValueId {
        let ptrs = operands[0];
        let lay = match self.f.ty(ptrs) {
            Type::Tensor { layout, .. } => layout.clone(),
            _ => None,
        };
        let shape = self.f.ty(ptrs).shape().into();
        let mask_ty = Type::Tensor { shape, elem: Elem::Scalar(ScalarType::I1), layout: lay };
        let okt = self.value(Op::Splat, &[ok], mask_ty);
        let mask = match operands.get(1) {
            Some(&m) => self.binary(BinOp::And, m, okt),
            None => okt,
        };
        self.value(Op::AsyncCopy, &[ptrs, view, mask], Type::Token)
    }

    /// The TMA copy standing for a descriptor load with (remapped) `operands` (the descriptor, then the
    /// coordinates) into `view`, completing on `bar`, issued when `ok` (the iteration exists).
    fn tma_copy(&mut self, operands: &[ValueId], view: ValueId, bar: ValueId, ok: ValueId) {
        let mut ins = vec![operands[0], view, bar];
        ins.extend_from_slice(&operands[1..]);
        ins.push(ok);
        self.op(Op::TmaLoad { multicast: false }, &ins, vec![]);
    }

    /// A ring of `n` mbarriers named `name`, each expecting `count` arrivals per phase.
    fn barriers(&mut self, n: u32, count: u32, name: &str) -> Result<ValueId, SchedError> {
        let bars = self.value(Op::LocalAlloc, &[], ring_type(&tessel_tile::tma::barrier_type(), n)?);
        self.f.values[bars.index()].name = Some(name.into());
        let i32t = Type::scalar(ScalarType::I32);
        for b in 0..n {
            let idx = self.int(b as i64, &i32t);
            let bar = self.value(Op::MemDescIndex, &[bars, idx], tessel_tile::tma::barrier_type());
            self.op(Op::MBarrierInit { count }, &[bar], vec![]);
        }
        Ok(bars)
    }

    /// Invalidates the `n` mbarriers of ring `bars` and releases it.
    fn release_barriers(&mut self, bars: ValueId, n: u32) {
        let i32t = Type::scalar(ScalarType::I32);
        for b in 0..n {
            let idx = self.int(b as i64, &i32t);
            let bar = self.value(Op::MemDescIndex, &[bars, idx], tessel_tile::tma::barrier_type());
            self.op(Op::MBarrierInvalidate, &[bar], vec![]);
        }
        self.op(Op::LocalDealloc, &[bars], vec![]);
    }

    /// Arms the mbarrier of ring buffer `idx` for one iteration's TMA copies (`bytes`), when `ok`; returns it.
    fn arm(&mut self, bars: ValueId, idx: ValueId, bytes: u32, ok: ValueId) -> ValueId {
        let bar = self.value(Op::MemDescIndex, &[bars, idx], tessel_tile::tma::barrier_type());
        self.op(Op::MBarrierExpect { bytes }, &[bar, ok], vec![]);
        bar
    }
}

/// Expands loop `p.loop_op` as the module doc describes.
pub fn expand(f: &mut Func, p: &LoopPlan, ws: Option<&crate::ws::WsPlan>) -> Result<(), SchedError> {
    let o = p.loop_op;
    let d = f.op(o).clone();
    let parent = d.parent.expect("linked loop");
    let body = d.regions[0];
    let args = f.region(body).args.clone();
    let (lb, ub, step) = (d.operands[0], d.operands[1], d.operands[2]);
    let iv = args[0];
    // The copies run `ahead` iterations ahead of the dots. Split into partitions (`ws`), the producer runs them
    // and this loop runs stage 0's other values for its own iteration: nothing is shifted.
    let ahead = (p.stages - 1) as i64;
    let dist = if ws.is_some() { 0 } else { ahead };
    let i32t = Type::scalar(ScalarType::I32);
    let mut pre = Emit { f, region: parent, loc: d.loc, out: Vec::new() };

    // The rings.
    let mut rings = Vec::new();
    for l in &p.loads {
        let one = l.buffer.clone();
        let ring = pre.value(Op::LocalAlloc, &[], ring_type(&one, p.buffers)?);
        // Named after the load it stands for (`%a_ring`), for the allocation table and its errors.
        let loaded = pre.f.op(l.load).results[0];
        pre.f.values[ring.index()].name = pre.f.value(loaded).name.as_ref().map(|n| format!("{n}_ring"));
        rings.push((ring, one));
    }
    // TMA loads complete on one mbarrier per ring buffer, armed with all their bytes for the iteration.
    let cp_async = p.loads.iter().any(|l| !l.tma);
    let mut tma_bytes = 0;
    for l in p.loads.iter().filter(|l| l.tma) {
        // In a cluster, what lands in each CTA: its part of a block its CTAs split.
        tma_bytes += tessel_tile::tma::desc_cta_bytes(pre.f, pre.f.op(l.load).operands[0])?;
    }
    let bars = if tma_bytes > 0 { Some(pre.barriers(p.buffers, 1, "tma_bars")?) } else { None };
    // Split into partitions, the consumer releases each slot to the producer through its `empty` barrier: each
    // warpgroup on its own where only wgmmas read the rings (its wait retires them), else the whole partition.
    // On sm_100a the MMA's commit releases the slot: one arrival ([`crate::ws_mma`]).
    let ws_mma = ws.and_then(|w| w.mma.as_ref());
    let per_warpgroup = p.loads.iter().all(|l| matches!(l.consumer, Consumer::Allocs(_))) && ws_mma.is_none();
    let releases = if per_warpgroup { pre.f.config.num_warps / 4 } else { 1 };
    let empties = match bars {
        Some(_) if ws.is_some() => Some(pre.barriers(p.buffers, releases, "ring_empty")?),
        _ => None,
    };
    // Where the plan says so (TMA loads alone), the last warp to release a slot refills it, through one counter
    // per slot: the warps never meet at a CTA barrier in the loop.
    let counters = match bars {
        Some(_) if p.release => {
            let ty = tessel_tile::tma::release_counter_type();
            let counters = pre.value(Op::LocalAlloc, &[], ring_type(&ty, p.buffers)?);
            pre.f.values[counters.index()].name = Some("ring_releases".into());
            for b in 0..p.buffers {
                let idx = pre.int(b as i64, &i32t);
                let c = pre.value(Op::MemDescIndex, &[counters, idx], ty.clone());
                pre.op(Op::RingCounterInit, &[c], vec![]);
            }
            Some(counters)
        }
        _ => None,
    };

    // Prologue: stage 0 of iterations 0..D.
    let yields = pre.f.op(*pre.f.region(body).ops.last().expect("yield")).operands.clone();
    let mut carried: Vec<ValueId> = p.early_args.iter().map(|&j| d.operands[3 + j]).collect();
    for i in 0..dist {
        let iv_i = pre.advance(lb, i, step);
        let ok = pre.less(iv_i, ub);
        let mut map: HashMap<ValueId, ValueId> = HashMap::from([(iv, iv_i)]);
        for (k, &j) in p.early_args.iter().enumerate() {
            map.insert(args[j + 1], carried[k]);
        }
        let mut tokens = Vec::new();
        let slot = pre.int(i % p.buffers as i64, &i32t);
        let bar = bars.map(|bars| pre.arm(bars, slot, tma_bytes, ok));
        for &x in &p.stage0 {
            let xd = pre.f.op(x).clone();
            let operands: Vec<ValueId> = xd.operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
            if let Some(n) = p.loads.iter().position(|l| l.load == x) {
                let (ring, one) = rings[n].clone();
                let view = pre.value(Op::MemDescIndex, &[ring, slot], one);
                match bar.filter(|_| p.loads[n].tma) {
                    Some(bar) => pre.tma_copy(&operands, view, bar, ok),
                    None => tokens.push(pre.copy(&operands, view, ok)),
                }
            } else {
                let types = xd.results.iter().map(|&r| pre.f.ty(r).clone()).collect();
                let regions: Vec<RegionId> =
                    xd.regions.iter().map(|&r| tessel_tile::passes::clone_region(pre.f, r, &mut map)).collect();
                let c = pre.op(xd.op.clone(), &operands, types);
                for &r in &regions {
                    pre.f.region_mut(r).parent = Some(c);
                }
                pre.f.op_mut(c).regions = regions.into();
                for (&r, &cr) in xd.results.iter().zip(&pre.f.op(c).results.clone()) {
                    map.insert(r, cr);
                }
            }
        }
        if cp_async {
            pre.value(Op::AsyncCommitGroup, &tokens, Type::Token);
        }
        for (k, &j) in p.early_args.iter().enumerate() {
            carried[k] = *map.get(&yields[j]).unwrap_or(&yields[j]);
        }
    }
    let zero = pre.int(0, &i32t);
    let first_fill = pre.int(ahead % p.buffers as i64, &i32t);
    let prologue = std::mem::take(&mut pre.out);
    let f = pre.f;

    // The loop starts its stage-0 values D iterations ahead and carries its ring positions: the slot iteration k
    // reads (k mod B), the parity of the barrier phase it waits for ((k / B) mod 2) and the slot it refills
    // ((k + D) mod B), each advanced by an increment and a wrap (no division in the loop).
    for (k, &j) in p.early_args.iter().enumerate() {
        f.op_mut(o).operands[3 + j] = carried[k];
    }
    let ring_arg = |f: &mut Func, init: ValueId, name: &str| add_carried(f, o, init, name).0;
    let slot = ring_arg(f, zero, "ring_slot");
    let phase = bars.map(|_| ring_arg(f, zero, "ring_phase"));
    let fill = ring_arg(f, first_fill, "ring_fill");

    // Steady state.
    let old_ops = f.region(body).ops.clone();
    let (&yield_op, old_ops) = old_ops.split_last().expect("yield");
    let mut e = Emit { f, region: body, loc: d.loc, out: Vec::new() };
    if cp_async {
        e.value(Op::AsyncWait { pending: (dist - 1) as u32 }, &[], Type::Token);
    }
    let ext = slot;
    if let Some(bars) = bars {
        // Iteration k's copies are the (k / B)-th into buffer k mod B: they complete that barrier's phase k / B.
        let bar = e.value(Op::MemDescIndex, &[bars, ext], tessel_tile::tma::barrier_type());
        e.op(Op::mbarrier_wait(), &[bar, phase.expect("carried with the barriers")], vec![]);
    }
    // The dots' views of the buffers read; loads read back into registers index theirs where they read it.
    let mut read_backs: Vec<ReadBack> = Vec::new();
    for (n, l) in p.loads.iter().enumerate() {
        let (ring, one) = rings[n].clone();
        if let Consumer::Registers { mask_other } = l.consumer {
            let loaded = e.f.op(l.load).results[0];
            let ty = read_type(e.f, old_ops, loaded, mask_other.is_some());
            read_backs.push(ReadBack { loaded, ty, ring, one, slot: ext, mask_other });
            continue;
        }
        if let Consumer::Operands { converts } = &l.consumer {
            // Each conversion to the mma.sync operand layout becomes a read of the ring in that layout.
            for &c in converts {
                let converted = e.f.op(c).results[0];
                let ty = e.f.ty(converted).clone();
                read_backs.push(ReadBack {
                    loaded: converted,
                    ty,
                    ring,
                    one: one.clone(),
                    slot: ext,
                    mask_other: None,
                });
                e.f.unlink(c);
            }
            continue;
        }
        let view = e.value(Op::MemDescIndex, &[ring, ext], one.clone());
        if let Consumer::Allocs(stagings) = &l.consumer {
            for s in stagings {
                // The staging's register ops become the same views of the ring buffer.
                let staged = e.f.op(s.alloc).results[0];
                let (mut read, mut ty) = (view, one.clone());
                for (x, v) in &s.views {
                    ty = v.of(&ty)?;
                    e.f.unlink(*x);
                    read = e.value(v.op(), &[read], ty.clone());
                }
                e.f.replace_all_uses(staged, read);
                e.f.unlink(s.alloc);
            }
        }
    }
    // Values of stage 0 the last stage reads as well, computed again for the current iteration: from the
    // carried integers stage 0 advances by an increment, their value D increments back.
    let mut again: HashMap<ValueId, ValueId> = HashMap::new();
    for &(j, inc) in &p.late_args {
        let late = e.advance(args[j + 1], -dist, inc);
        again.insert(args[j + 1], late);
    }
    for &x in &p.remat {
        let xd = e.f.op(x).clone();
        let operands: Vec<ValueId> = xd.operands.iter().map(|v| *again.get(v).unwrap_or(v)).collect();
        let types = xd.results.iter().map(|&r| e.f.ty(r).clone()).collect();
        let c = e.op(xd.op.clone(), &operands, types);
        for (&r, &cr) in xd.results.iter().zip(&e.f.op(c).results.clone()) {
            again.insert(r, cr);
        }
    }
    let mut order = std::mem::take(&mut e.out);
    let early: std::collections::HashSet<OpId> = p.stage0.iter().copied().collect();
    let staging: std::collections::HashSet<OpId> = p.loads.iter().flat_map(|l| l.consumer.staging_ops()).collect();
    let restart = p.async_dot.as_ref().and_then(|a| a.restart);
    // Where the epilogue of a fused loop nest (the branch reading the dot's result) starts in `order`: it and
    // what follows it run after the refill, so that the next iterations' copies are in flight while the tile is
    // converted and stored (Triton orders them so too). Nothing of stage 0 reads them: it runs `D` iterations
    // ahead.
    let mut epilogue_at = None;
    let at_reads = p.async_dot.as_ref().is_some_and(|a| a.wait == DotWait::AtReads);
    // Where in `order` every dot of the previous iteration is retired mid-body (after the wait before the
    // accumulator's first read), if it is: the previous iteration's buffers are free from there.
    let mut retired_at = None;
    for &x in old_ops.iter().filter(|x| !early.contains(x) && !staging.contains(x)) {
        // Loads read back into registers, each right before its first reader (after the dots that come before
        // it, which then meet the landed buffers first).
        let mut read = Vec::new();
        e.f.walk_op(x, &mut |y| read.extend(e.f.op(y).operands.iter().copied()));
        for r in extract(&mut read_backs, |r| read.contains(&r.loaded)) {
            r.emit(&mut e, &mut again);
        }
        order.append(&mut e.out);
        if epilogue_at.is_none() && p.async_dot.as_ref().is_some_and(|a| a.readers.contains(&x)) {
            epilogue_at = Some(order.len());
        }
        if restart.is_some_and(|r| r.select == x) {
            // The dot restarts through `use_acc` instead.
            e.f.op_mut(x).parent = None;
            continue;
        }
        if let Some(&AsyncDot { carried, wait: DotWait::BeforeUse(first), .. }) = p.async_dot.as_ref()
            && first == x
        {
            // The previous iteration's dot is retired before its accumulator is read again.
            let acc = e.f.region(body).args[carried];
            let ty = e.f.ty(acc).clone();
            let ready = e.value(Op::WarpGroupDotWait { pending: 0 }, &[acc], ty);
            again.insert(acc, ready);
            order.append(&mut e.out);
            retired_at = Some(order.len());
        }
        let mut nested = Vec::new();
        e.f.walk_op(x, &mut |y| nested.push(y));
        for y in nested {
            for v in e.f.op_mut(y).operands.iter_mut() {
                if let Some(&n) = again.get(v) {
                    *v = n;
                }
            }
        }
        if let Some(r) = restart.filter(|_| p.async_dot.as_ref().is_some_and(|a| a.dot == x)) {
            // use_acc = !when; the accumulator operand is the carried value itself.
            let a = p.async_dot.as_ref().expect("checked");
            let when = *again.get(&r.when).unwrap_or(&r.when);
            let yes = e.value(Op::Constant(Const::Int(1)), &[], Type::scalar(ScalarType::I1));
            let use_acc = e.binary(BinOp::Xor, when, yes);
            order.append(&mut e.out);
            let acc = e.f.region(body).args[a.carried];
            let dot = e.f.op_mut(x);
            dot.operands[2] = acc;
            dot.operands.push(use_acc);
        }
        if let Some(a) = p.async_dot.as_ref().filter(|a| a.readers.contains(&x)) {
            // The epilogue waits for the dot inside, where it reads the result.
            wait_inside(e.f, x, e.f.op(a.dot).results[0]);
        }
        if let (Some(m), Some(empties)) = (ws_mma, empties)
            && m.release().mma == x
        {
            // The MMA commits to its slot's `empty` barrier; an epilogue reading its accumulator (or the wait for
            // a chained one) waits for that.
            let empty = e.value(Op::MemDescIndex, &[empties, slot], tessel_tile::tma::barrier_type());
            order.append(&mut e.out);
            crate::ws_mma::release_to(e.f, p.loop_op, m, empty, phase.expect("carried with the barriers"))?;
        }
        order.push(x);
        if let Some(a) = p.async_dot.as_ref().filter(|a| a.dot == x || at_reads) {
            if let Op::WarpGroupDot { is_async, .. } = &mut e.f.op_mut(x).op {
                *is_async = true;
            }
            if a.wait == DotWait::AfterIssue {
                e.op(Op::WarpGroupDotWait { pending: 1 }, &[], vec![]);
                order.append(&mut e.out);
            }
        }
    }
    // Data nothing in the last stage reads is still read back before its buffer is refilled.
    for r in std::mem::take(&mut read_backs) {
        r.emit(&mut e, &mut again);
    }
    order.append(&mut e.out);
    let carried: Vec<ValueId> =
        e.f.op(yield_op).operands.iter().flat_map(|v| [*v, *again.get(v).unwrap_or(v)]).collect();
    let epilogue_at = epilogue_at.or_else(|| store_tail(e.f, &order, &p.stage0, &carried));
    let epilogue = epilogue_at.map_or_else(Vec::new, |at| order.split_off(at));
    let iv_ahead = e.advance(iv, dist, step);
    let ins = fill;
    // Where the refill goes (with every dot asynchronous, the waits that free its slot come right before it).
    let mut refill_at = order.len();
    if let Some(empties) = empties.filter(|_| ws_mma.is_none()) {
        // The slot is released to the producer instead: iteration `k + D − B`'s, which is the previous iteration's
        // when a dot stays in flight (none on the first iteration; released as soon as its dots are retired,
        // which may be mid-body), else this one's.
        let previous = p.buffers as i64 > ahead;
        let bar = e.value(Op::MemDescIndex, &[empties, ins], tessel_tile::tma::barrier_type());
        let mut operands = vec![bar];
        if previous {
            operands.push(e.less(lb, iv));
        }
        e.op(Op::MBarrierArrive { count: 1, per_warpgroup, cta_mask: 0 }, &operands, vec![]);
        let release = std::mem::take(&mut e.out);
        match retired_at.filter(|&at| previous && at <= order.len()) {
            Some(at) => {
                refill_at += release.len();
                drop(order.splice(at..at, release));
            }
            // At the refill: after the waits that free the slot.
            None => order.extend(release),
        }
    }
    // The slot being refilled is the one an earlier iteration read: with a release counter, every warp counts
    // itself done with it and the last one issues the copies.
    // (Split into partitions, the producer refills it: `ok` is `None`.)
    let ok = empties.is_none().then(|| {
        let ok = e.less(iv_ahead, ub);
        match counters {
            Some(counters) => {
                let c = e.value(Op::MemDescIndex, &[counters, ins], tessel_tile::tma::release_counter_type());
                let mut ins_ = vec![c, ok];
                for (ring, one) in &rings {
                    ins_.push(e.value(Op::MemDescIndex, &[*ring, ins], one.clone()));
                }
                e.value(Op::RingRelease, &ins_, Type::scalar(ScalarType::I1))
            }
            None => ok,
        }
    });
    let bar = bars.zip(ok).map(|(bars, ok)| e.arm(bars, ins, tma_bytes, ok));
    order.append(&mut e.out);
    let mut tokens = Vec::new();
    for &x in &p.stage0 {
        let mut nested = Vec::new();
        e.f.walk_op(x, &mut |y| nested.push(y));
        for y in nested {
            for v in e.f.op_mut(y).operands.iter_mut() {
                if *v == iv {
                    *v = iv_ahead;
                }
            }
        }
        if let Some(n) = p.loads.iter().position(|l| l.load == x) {
            let Some(ok) = ok else {
                // The producer issues it.
                e.f.op_mut(x).parent = None;
                continue;
            };
            let (ring, one) = rings[n].clone();
            let view = e.value(Op::MemDescIndex, &[ring, ins], one);
            let operands = e.f.op(x).operands.to_vec();
            match bar.filter(|_| p.loads[n].tma) {
                Some(bar) => e.tma_copy(&operands, view, bar, ok),
                None => tokens.push(e.copy(&operands, view, ok)),
            }
            e.f.op_mut(x).parent = None;
            order.append(&mut e.out);
        } else {
            order.push(x);
        }
    }
    if cp_async {
        e.value(Op::AsyncCommitGroup, &tokens, Type::Token);
    }
    let (next_slot, wrapped) = e.wrap_next(slot, p.buffers);
    let next_phase = phase.map(|phase| {
        let (one, zero) = (e.int(1, &i32t), e.int(0, &i32t));
        let flip = e.value(Op::Select, &[wrapped, one, zero], i32t.clone());
        e.binary(BinOp::Xor, phase, flip)
    });
    let (next_fill, _) = e.wrap_next(fill, p.buffers);
    order.append(&mut e.out);
    order.extend(epilogue);
    order.push(yield_op);
    let f = e.f;
    // What the loop carries besides stage 0's own values is the last stage's: computed again for the current
    // iteration, or read back from a ring.
    for (j, v) in f.op_mut(yield_op).operands.iter_mut().enumerate() {
        if let Some(&n) = again.get(v).filter(|_| !p.early_args.contains(&j)) {
            *v = n;
        }
    }
    f.op_mut(yield_op).operands.push(next_slot);
    f.op_mut(yield_op).operands.extend(next_phase);
    f.op_mut(yield_op).operands.push(next_fill);
    if at_reads {
        order = crate::dot_waits::place(f, body, &order, refill_at);
    }
    for &x in &order {
        f.op_mut(x).parent = Some(body);
    }
    f.region_mut(body).ops = order;

    // Drain.
    let mut e = Emit { f, region: parent, loc: d.loc, out: Vec::new() };
    // The values the rest of the kernel reads for the loop's results: the waits' where a dot may still write one.
    let mut finals: Vec<ValueId> = d.results.to_vec();
    if cp_async {
        e.value(Op::AsyncWait { pending: 0 }, &[], Type::Token);
    }
    if let Some(a) = &p.async_dot {
        // The loop's results the last dots may still be writing: the async dot's, or with every dot
        // asynchronous, each one a dot yields.
        let results: Vec<ValueId> = match a.wait {
            DotWait::AtReads => (0..yields.len())
                .filter(|&j| crate::async_dot::dots_of(e.f, old_ops).any(|x| e.f.op(x).results[0] == yields[j]))
                .map(|j| d.results[j])
                .collect(),
            _ => vec![d.results[a.carried - 1]],
        };
        let types = results.iter().map(|&r| e.f.ty(r).clone()).collect();
        let w = e.op(Op::WarpGroupDotWait { pending: 0 }, &results, types);
        for (&result, ready) in results.iter().zip(e.f.op(w).results.clone()) {
            e.f.replace_all_uses(result, ready);
            let j = finals.iter().position(|&v| v == result).expect("a loop result");
            finals[j] = ready;
        }
        e.f.op_mut(w).operands = results.into();
    }
    // Split into partitions, the default partition runs what came so far; the rest follows the join.
    let waits = std::mem::take(&mut e.out);
    for (ring, _) in &rings {
        e.op(Op::LocalDealloc, &[*ring], vec![]);
    }
    // Every copy issued was waited for in the loop (the predicated-off ones were never issued).
    if let Some(bars) = bars {
        e.release_barriers(bars, p.buffers);
    }
    if let Some(counters) = counters {
        e.op(Op::LocalDealloc, &[counters], vec![]);
    }
    if let Some(empties) = empties {
        e.release_barriers(empties, p.buffers);
    }
    let mut drain = std::mem::take(&mut e.out);
    let f = e.f;
    // The op the prologue goes before and the drain after: the loop, or the warp_specialize running it.
    let anchor = match (ws, bars, empties) {
        (Some(w), Some(ready), Some(empty)) => {
            let rings = crate::ws::Rings { rings, ready, empty, bytes: tma_bytes };
            crate::ws::split(f, p, w, &rings, &waits, &finals)
        }
        _ => {
            drain.splice(0..0, waits);
            o
        }
    };
    // (A split loop nested in `if`s has its `warp_specialize` around the outermost.)
    let parent = f.op(anchor).parent.expect("linked loop");
    let ops = &mut f.region_mut(parent).ops;
    let at = ops.iter().position(|&x| x == anchor).expect("linked loop");
    ops.splice(at + 1..at + 1, drain.iter().copied());
    ops.splice(at..at, prologue.iter().copied());
    for &x in prologue.iter().chain(&drain) {
        f.op_mut(x).parent = Some(parent);
    }
    Ok(())
}

/// A new carried value of `for` loop `lp`, starting at `init`: its body argument (named `name`) and its result
/// (unnamed). The caller appends what the body yields for it.
pub(crate) fn add_carried(f: &mut Func, lp: OpId, init: ValueId, name: &str) -> (ValueId, ValueId) {
    let ty = f.ty(init).clone();
    let body = f.op(lp).regions[0];
    f.op_mut(lp).operands.push(init);
    let arg = f.add_region_arg(body, ty.clone(), Some(name.into()));
    let slot = f.op(lp).results.len() as u32;
    let v = ValueId(f.values.len() as u32);
    f.values.push(ValueData { ty, def: ValueDef::Result(lp, slot), name: None });
    f.op_mut(lp).results.push(v);
    (arg, v)
}

/// A pipelined load read back from its ring into registers in the last stage.
struct ReadBack {
    loaded: ValueId,
    /// The type it is read back as ([`read_type`]).
    ty: Type,
    ring: ValueId,
    /// The type of one buffer of the ring, and the buffer this iteration reads.
    one: Type,
    slot: ValueId,
    /// The load's mask and `other`, applied after the read.
    mask_other: Option<(ValueId, ValueId)>,
}

impl ReadBack {
    /// The buffer in the load's layout, `other` where the mask was off; the last stage reads it for the load.
    fn emit(&self, e: &mut Emit, again: &mut HashMap<ValueId, ValueId>) {
        let ty = self.ty.clone();
        let view = e.value(Op::MemDescIndex, &[self.ring, self.slot], self.one.clone());
        let mut data = e.value(Op::LocalLoad, &[view], ty.clone());
        if let Some((m, o)) = self.mask_other {
            let (m, o) = (*again.get(&m).unwrap_or(&m), *again.get(&o).unwrap_or(&o));
            data = e.value(Op::Select, &[m, data, o], ty);
        }
        again.insert(self.loaded, data);
    }
}

/// The type a vector loaded into registers is read back from its ring as: where every reader converts it to
/// one layout (attention backward's row statistics, loaded spread over the threads and converted to the rows of
/// the dot's result), that layout, which each thread then reads its rows of directly (the conversions become
/// no-ops) instead of exchanging them through shuffles every iteration; else the load's own. A vector only (a
/// tile read in a dot's layout may conflict in its banks), and without a mask (`other` is applied in the load's).
fn read_type(f: &Func, ops: &[OpId], loaded: ValueId, masked: bool) -> Type {
    let own = f.ty(loaded).clone();
    if masked || own.shape().len() != 1 {
        return own;
    }
    let mut to: Option<&Type> = None;
    let mut all = true;
    for &x in ops {
        f.walk_op(x, &mut |y| {
            let yd = f.op(y);
            if !yd.operands.contains(&loaded) {
                return;
            }
            let r = f.ty(yd.results[0]);
            if yd.op != Op::ConvertLayout || to.is_some_and(|t| t != r) {
                all = false;
            } else {
                to = Some(r);
            }
        });
    }
    match to {
        Some(t) if all => t.clone(),
        _ => own,
    }
}

/// Where the last stage's trailing global stores start in `order`, with the elementwise work that only they read
/// (`None` when the body does not end in stores). They run after the refill, as a fused loop nest's epilogue
/// does: the next iterations' copies are issued before the results are computed and stored, and the registers
/// the copies' addresses need are not those the stores still hold (a store keeps its data registers until the
/// memory unit has read them, so reusing them right after the stores waits on memory). Nothing moves past an op
/// with effects other than a store, past one that is not elementwise, or past the read-backs of landed data;
/// stage 0 and the loop's yield (`carried`: its operands, as given and as recomputed) read none of what moves.
fn store_tail(f: &Func, order: &[OpId], stage0: &[OpId], carried: &[ValueId]) -> Option<usize> {
    use tessel_tile::op_facts::LayoutKind;
    let mut kept_reads: std::collections::HashSet<ValueId> = carried.iter().copied().collect();
    for &x in stage0 {
        f.walk_op(x, &mut |y| kept_reads.extend(f.op(y).operands.iter().copied()));
    }
    let mut start = order.len();
    let mut stores = 0;
    for (i, &x) in order.iter().enumerate().rev() {
        let xd = f.op(x);
        let store = matches!(xd.op, Op::Store { .. });
        let elementwise = xd.op.is_pure()
            && xd.regions.is_empty()
            && matches!(xd.op.facts().layout, LayoutKind::Same | LayoutKind::Source);
        if !(store || elementwise) || xd.results.iter().any(|r| kept_reads.contains(r)) {
            break;
        }
        stores += usize::from(store);
        start = i;
    }
    (stores > 0 && start < order.len()).then_some(start)
}

/// Removes the items of `v` that satisfy `pred` and returns them, in order.
fn extract<T>(v: &mut Vec<T>, pred: impl Fn(&T) -> bool) -> Vec<T> {
    let (taken, kept) = std::mem::take(v).into_iter().partition(|x| pred(x));
    *v = kept;
    taken
}

/// Makes every region of `reader` that reads `result` (an asynchronous dot's) start with a
/// `warpgroup_dot_wait {pending = 0}` of it and read the wait's value instead.
fn wait_inside(f: &mut Func, reader: OpId, result: ValueId) {
    for r in f.op(reader).regions.clone() {
        let mut users = Vec::new();
        f.walk(r, &mut |y| {
            if f.op(y).operands.contains(&result) {
                users.push(y);
            }
        });
        if users.is_empty() {
            continue;
        }
        let ty = f.ty(result).clone();
        let loc = f.op(reader).loc;
        let w = f.append(r, Op::WarpGroupDotWait { pending: 0 }, &[result], vec![ty], &[], loc);
        let ops = &mut f.region_mut(r).ops;
        ops.pop();
        ops.insert(0, w);
        let ready = f.op(w).results[0];
        for y in users {
            for v in f.op_mut(y).operands.iter_mut() {
                if *v == result {
                    *v = ready;
                }
            }
        }
    }
}
