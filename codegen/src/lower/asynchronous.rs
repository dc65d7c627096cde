//! Asynchronous work: `async_copy` (`cp.async`, global → shared) with its commit and wait groups,
//! `memdesc_index`, `fence_async_shared`, and the wait of asynchronous `warpgroup_dot`s.
//!
//! Besides what the barrier analysis does for every shared-memory access, the lowering tracks what is still in
//! flight in program order: a read of a buffer that a copy may still be writing, or a write to a buffer that an
//! asynchronous wgmma may still be reading, is an error naming the missing wait (the interpreter reports the same
//! programs), never a race. Tracking is per straight-line region: work on whole allocations must be retired
//! before a loop or branch; work on `memdesc_index` views (rings of buffers, whose index is often a run-time
//! value) is not tracked here and may cross them, as the software pipeliner's does: the interpreter checks it.

use std::collections::VecDeque;

use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::types::Type;

use super::Lower;
use super::coords::layout_of;
use super::local::{accesses, offsets};
use crate::CompileError;
use crate::ptx::{Instr, Operand, Reg, RegClass, instr, mem};
use crate::smem::Span;

/// Asynchronous work issued and not yet waited for.
#[derive(Clone, Debug, Default)]
pub(crate) struct InFlight {
    /// Spans written by copies not yet committed, and by committed groups (oldest first).
    uncommitted: Vec<Span>,
    groups: VecDeque<Vec<Span>>,
    /// Spans read by asynchronous wgmmas (oldest first), with the value each produces.
    dots: VecDeque<(ValueId, Vec<Span>)>,
    /// Spans written by copies handed to an mbarrier (`async_copy_mbarrier_arrive`), with the barrier's spans:
    /// in flight until a wait on that barrier.
    on_barrier: Vec<(Vec<Span>, Vec<Span>)>,
}

fn overlaps(a: &Span, b: &Span) -> bool {
    a.0 < b.1 && b.0 < a.1
}

impl InFlight {
    /// Checks an op's accesses against the work in flight.
    pub(crate) fn check(&self, spans: &[Span]) -> Result<(), CompileError> {
        use crate::smem::Access::*;
        for s in spans {
            let copying = self
                .uncommitted
                .iter()
                .chain(self.groups.iter().flatten())
                .chain(self.on_barrier.iter().flat_map(|(_, c)| c))
                .any(|c| overlaps(c, s));
            if copying && s.2 != Write {
                return Err(CompileError::new(
                    "reads shared memory that an async_copy may still be writing: an async_wait (or, for copies handed \
                     to an mbarrier, a wait on it) must retire it first",
                ));
            }
            if matches!(s.2, Write | AsyncWrite)
                && let Some((d, _)) = self.dots.iter().find(|(_, r)| r.iter().any(|x| overlaps(x, s)))
            {
                return Err(CompileError::new(format!(
                    "writes shared memory that the asynchronous warpgroup_dot producing {d} may still read: a \
                     warpgroup_dot_wait must retire it first"
                )));
            }
        }
        Ok(())
    }

    /// The work in flight at a loop's back edge against the next iteration: its ops from the top are checked
    /// with [`InFlight::check`] (issues and waits applied as they come) until nothing from before is left or a
    /// nested region starts. A pipelined ring's buffers are views and not tracked; a single buffer reused while
    /// an asynchronous wgmma from the previous iteration may still read it is refused here, as in one iteration.
    pub(crate) fn check_back_edge(&self, l: &Lower, body: tessel_tile::ir::RegionId) -> Result<(), CompileError> {
        use tessel_tile::ops::Op;
        let mut state = self.clone();
        let carried = |s: &InFlight, before: &InFlight| {
            before.dots.iter().any(|(d, _)| s.dots.iter().any(|(e, _)| e == d))
                || before.groups.iter().any(|g| !g.is_empty() && s.groups.contains(g))
                || (!before.uncommitted.is_empty() && s.uncommitted.starts_with(&before.uncommitted))
                || before.on_barrier.iter().any(|b| !b.1.is_empty() && s.on_barrier.contains(b))
        };
        for &o in &l.f.region(body).ops {
            if !carried(&state, self) {
                break;
            }
            let d = l.f.op(o);
            if !d.regions.is_empty() || matches!(d.op, Op::Yield) {
                break;
            }
            state.check(&l.tracked_spans(o)).map_err(|e| {
                CompileError::new(format!("across the loop's back edge, the next iteration {}", e.cause))
            })?;
            match d.op {
                Op::WarpGroupDot { is_async: true, .. } => state.dot_issued(d.results[0], l.tracked_spans(o)),
                Op::WarpGroupDotWait { pending } => {
                    while state.dots.len() > pending as usize {
                        state.dots.pop_front();
                    }
                }
                Op::AsyncCopy => state.uncommitted.extend(l.tracked_spans(o)),
                Op::AsyncCommitGroup => {
                    let g = std::mem::take(&mut state.uncommitted);
                    state.groups.push_back(g);
                }
                Op::AsyncWait { pending } => {
                    while state.groups.len() > pending as usize {
                        state.groups.pop_front();
                    }
                }
                Op::AsyncCopyMBarrierArrive { .. } => state.copies_to_barrier(l.tracked_spans(o)),
                Op::MBarrierWait => state.barrier_waited(&l.tracked_spans(o)),
                _ => {}
            }
        }
        Ok(())
    }

    pub(crate) fn dot_issued(&mut self, v: ValueId, reads: Vec<Span>) {
        self.dots.push_back((v, reads));
    }

    /// `async_copy_mbarrier_arrive` on the barrier at `bar`: every copy in flight completes on it (the groups stay,
    /// emptied, for the count of later waits).
    fn copies_to_barrier(&mut self, bar: Vec<Span>) {
        let mut copies = std::mem::take(&mut self.uncommitted);
        for g in self.groups.iter_mut() {
            copies.append(g);
        }
        if !copies.is_empty() {
            self.on_barrier.push((bar, copies));
        }
    }

    /// A wait on the barrier at `bar`: the copies handed to it have landed. A barrier reached through a view
    /// (`memdesc_index` with a run-time index) has no span here; its copies count as landed at any wait (the
    /// interpreter checks which barrier).
    fn barrier_waited(&mut self, bar: &[Span]) {
        self.on_barrier
            .retain(|(b, _)| !(b.is_empty() || bar.is_empty() || b.iter().any(|x| bar.iter().any(|y| overlaps(x, y)))));
    }

    /// Whether no tracked span is still in flight (groups and dots that touch only untracked views count as
    /// retired here: they may cross loops, as the pipeliner's do).
    pub(crate) fn is_empty(&self) -> bool {
        self.uncommitted.is_empty()
            && self.groups.iter().all(Vec::is_empty)
            && self.on_barrier.is_empty()
            && self.dots.iter().all(|(_, r)| r.is_empty())
    }
}

pub(crate) fn memdesc_index(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (mem, i, v) = (data.operands[0], data.operands[1], data.results[0]);
    let (base, idx) = (l.get(mem)?[0], l.get(i)?[0]);
    let Some((sub, elem, layout)) = l.f.ty(v).memdesc() else { unreachable!("verified") };
    // Tensor memory (`lane << 16 | column`): buffer i starts its columns on. Shared memory: its bytes, padding
    // included.
    let stride = if l.f.ty(v).is_tmem() {
        tessel_tile::tmem_types::columns(l.f.ty(v))
    } else {
        sub.iter().product::<u32>() * crate::smem::alloc::offsets_per_element(&layout.linear) as u32 * elem.bytes()
    };
    let r = l.b.reg(RegClass::B32);
    l.b.op("mad.lo.u32", r, (idx, stride, base));
    l.vals.insert(v, vec![r]);
    Ok(())
}

pub(crate) fn async_copy(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (ptr, buf) = (data.operands[0], data.operands[1]);
    let mask = data.operands.get(2).copied();
    let Some((_, elem, shared)) = l.f.ty(buf).memdesc() else { unreachable!("verified") };
    let eb = elem.bytes();
    let map = offsets(layout_of(l.f.ty(ptr))?, &shared.linear)?;
    let ptrs = l.get(ptr)?.to_vec();
    let masks = mask.map(|m| l.get(m).map(|r| r.to_vec())).transpose()?;
    let global_vec = super::memory::vector_width(l, ptr, mask, eb);
    let base = l.get(buf)?[0];
    let runs = accesses(l, &map, ptrs.len() as u32, eb, base, global_vec, false);
    let bytes = runs.first().map_or(eb, |r| r.1 * eb);
    if ![4, 8, 16].contains(&bytes) {
        return Err(CompileError::new(format!(
            "async_copy moves {bytes} bytes per thread access here; cp.async needs 4, 8 or 16 contiguous, aligned bytes \
             (in global and in shared memory): give the pointers a layout and alignment that allow it"
        )));
    }
    let kind = if bytes == 16 { "cg" } else { "ca" };
    // Where the layout replicates elements across threads, one thread of each group copies them (the others
    // would write the same bytes concurrently).
    let owner = super::memory::owner_pred(l, &l.f.ty(ptr).clone())?;
    let op = format!("cp.async.{kind}.shared.global");
    for (r0, _, dst) in runs {
        let src = ptrs[r0 as usize];
        match &masks {
            Some(m) => {
                // Masked-off elements are zero-filled: a source size of 0 bytes.
                let size = l.b.reg(RegClass::B32);
                l.b.op("selp.b32", size, (bytes, 0, m[r0 as usize]));
                l.b.emit(instr(op.clone()).when(owner).srcs((dst, mem(src), bytes, size)));
            }
            None => l.b.emit(instr(op.clone()).when(owner).srcs((dst, mem(src), bytes))),
        }
    }
    let spans = l.tracked_spans(l.cur_op);
    l.in_flight.uncommitted.extend(spans);
    l.vals.insert(data.results[0], vec![]);
    Ok(())
}

pub(crate) fn commit_group(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    l.b.effect("cp.async.commit_group", ());
    let group = std::mem::take(&mut l.in_flight.uncommitted);
    l.in_flight.groups.push_back(group);
    l.vals.insert(data.results[0], vec![]);
    Ok(())
}

pub(crate) fn async_wait(l: &mut Lower, data: &OpData, pending: u32) -> Result<(), CompileError> {
    l.b.effect("cp.async.wait_group", pending);
    while l.in_flight.groups.len() > pending as usize {
        l.in_flight.groups.pop_front();
    }
    l.vals.insert(data.results[0], vec![]);
    Ok(())
}

/// `cp.async.mbarrier.arrive`, by every thread of the partition: the barrier tracks the thread's copies in
/// flight. `arrivals = 0` is the default form (the pending count is raised by one first: net zero); otherwise
/// `.noinc`, and the partition's threads must be that many arrivals.
pub(crate) fn copy_mbarrier_arrive(l: &mut Lower, data: &OpData, arrivals: u32) -> Result<(), CompileError> {
    // The partition's threads: its named barrier's, or the CTA's.
    let threads = if l.bar.1 == 0 { l.num_warps * 32 } else { l.bar.1 };
    if arrivals != 0 && arrivals != threads {
        return Err(CompileError::new(format!(
            "async_copy.mbarrier_arrive(increment_count=False) arrives once per thread: {arrivals} arrivals were \
             planned, but the partition has {threads} threads"
        )));
    }
    let bar = l.get(data.operands[0])?[0];
    let op = if arrivals == 0 {
        "cp.async.mbarrier.arrive.shared::cta.b64"
    } else {
        "cp.async.mbarrier.arrive.noinc.shared::cta.b64"
    };
    l.b.emit(instr(op).srcs(mem(bar)));
    let bar_spans = l.tracked_spans(l.cur_op);
    l.in_flight.copies_to_barrier(bar_spans);
    Ok(())
}

pub(crate) fn dot_wait(l: &mut Lower, data: &OpData, pending: u32) -> Result<(), CompileError> {
    l.b.effect("wgmma.wait_group.sync.aligned", pending);
    while l.in_flight.dots.len() > pending as usize {
        l.in_flight.dots.pop_front();
    }
    for (&x, &r) in data.operands.iter().zip(&data.results) {
        // A dependency the wait leaves in flight (Gluon's `acc = warpgroup_mma_wait(1, deps=[acc])` right after
        // issuing `acc`) stays in flight under its new name: the next wgmma may accumulate into it (the tensor
        // cores order wgmmas on one accumulator), and a later wait retires it.
        for (d, _) in l.in_flight.dots.iter_mut().filter(|(d, _)| *d == x) {
            *d = r;
        }
        let regs = if matches!(l.f.ty(x), Type::Token) { vec![] } else { l.get(x)?.to_vec() };
        l.vals.insert(r, regs);
    }
    Ok(())
}

/// Whether predicate `x` is a `ring_release` result: true in the elected lane of the warp that completed the
/// round.
pub(crate) fn released_by_ring(l: &Lower, x: ValueId) -> bool {
    matches!(l.f.value(x).def, tessel_tile::ir::ValueDef::Result(r, _) if matches!(l.f.op(r).op, tessel_tile::ops::Op::RingRelease))
}

/// The thread that makes mbarrier initializations, arrivals and transaction expectations, and issues TMA copies,
/// once per program: `%tid == 0`, and the op's own predicate when it has one. A predicate made by
/// `ring_release` already names the one thread that issues (an `elect.sync` lane, so ptxas predicates its
/// copies instead of looping over the active lanes).
pub(crate) fn first_thread(l: &mut Lower, pred: Option<ValueId>) -> Result<crate::ptx::Reg, CompileError> {
    if let Some(x) = pred.filter(|&x| released_by_ring(l, x)) {
        return Ok(l.get(x)?[0]);
    }
    let p = l.b.reg(RegClass::Pred);
    l.b.op("setp.eq.u32", p, (l.tid, 0));
    if let Some(x) = pred {
        let q = l.get(x)?[0];
        l.b.op("and.pred", p, (p, q));
    }
    Ok(p)
}

pub(crate) fn mbarrier(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    use tessel_tile::ops::Op;
    let bar = l.get(data.operands[0])?[0];
    let sm90 = l.arch != tessel_tile::Target::Sm80;
    let need_sm90 = |what: &str| {
        CompileError::new(format!("{what} needs sm_90a or newer (mbarrier transactions and arrival counts)"))
    };
    // A two-CTA barrier (`allocate_mbarrier(two_ctas=True)`) is the one in the pair's even CTA: it counts both
    // CTAs' arrivals and bytes, and only that CTA waits on it (`tessel_tile::cluster`).
    let pair_bar = tessel_tile::cluster::barrier_ctas(l.f.ty(data.operands[0])) == 2;
    let odd = if pair_bar { Some(odd_cta(l)) } else { None };
    match &data.op {
        Op::MBarrierInit { count } if pair_bar => {
            // The even CTA's first thread, for the pair's count (the odd CTA's copy of the barrier is unused).
            let p = first_thread(l, None)?;
            let lead = l.b.reg(RegClass::Pred);
            l.b.op("not.pred", lead, odd.expect("a pair's barrier"));
            l.b.op("and.pred", lead, (lead, p));
            l.b.emit(instr("mbarrier.init.shared.b64").guard(lead).srcs((mem(bar), 2 * *count)));
            l.b.emit(instr("fence.mbarrier_init.release.cluster").guard(lead));
        }
        Op::MBarrierInit { count } => {
            let p = first_thread(l, None)?;
            l.b.emit(instr("mbarrier.init.shared.b64").guard(p).srcs((mem(bar), *count)));
            if sm90 {
                // The initialization made visible to the async proxy (TMA completes transactions on it).
                l.b.emit(instr("fence.mbarrier_init.release.cluster").guard(p));
            }
        }
        Op::MBarrierArrive { count, per_warpgroup, cta_mask } => {
            let p = if *per_warpgroup {
                // The first thread of each warpgroup arrives once its own wait has retired the wgmmas that read
                // what the arrival releases: no barrier with the other warpgroups.
                if l.num_warps % 4 != 0 {
                    return Err(CompileError::new(format!(
                        "a per-warpgroup arrival needs whole warpgroups, and the program has {} warps",
                        l.num_warps
                    )));
                }
                let (lane, p) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
                l.b.op("and.b32", lane, (l.tid, 127));
                l.b.op("setp.eq.u32", p, (lane, 0));
                if let Some(&x) = data.operands.get(1) {
                    let q = l.get(x)?[0];
                    l.b.op("and.pred", p, (p, q));
                }
                p
            } else {
                // One thread arrives for the whole partition (as in Triton, where the arrive has block-level
                // semantics): every thread's shared-memory reads and writes, and every warpgroup's wait for its
                // wgmmas, must be complete before the waiter may reuse the buffers, so the partition syncs first.
                if !l.b.ends_with_barrier() {
                    l.barrier();
                }
                first_thread(l, data.operands.get(1).copied())?
            };
            if *cta_mask != 0 {
                if !sm90 {
                    return Err(need_sm90("an arrival on other CTAs' barriers (`cta_mask`)"));
                }
                remote_arrive(l, bar, p, *count, *cta_mask);
                return Ok(());
            }
            if pair_bar {
                let at = lead_barrier(l, bar);
                l.b.emit(
                    instr("mbarrier.arrive.shared::cluster.b64").guard(p).dst(Operand::Sink).srcs((mem(at), *count)),
                );
                return Ok(());
            }
            match (*count, sm90) {
                (1, false) => {
                    let s = l.b.reg(RegClass::B64);
                    l.b.emit(instr("mbarrier.arrive.shared.b64").guard(p).dst(s).srcs(mem(bar)));
                }
                (_, false) => return Err(need_sm90("an arrival count above 1")),
                (n, true) => l.b.emit(
                    instr("mbarrier.arrive.release.cta.shared::cta.b64")
                        .guard(p)
                        .dst(Operand::Sink)
                        .srcs((mem(bar), n)),
                ),
            }
        }
        Op::MBarrierExpect { bytes } => {
            if !sm90 {
                return Err(need_sm90("mbarrier_expect"));
            }
            let p = first_thread(l, data.operands.get(1).copied())?;
            if pair_bar {
                // Each CTA announces its own copies' bytes (and one arrival) on the even CTA's barrier.
                let at = lead_barrier(l, bar);
                let op = "mbarrier.arrive.expect_tx.shared::cluster.b64";
                l.b.emit(instr(op).guard(p).dst(Operand::Sink).srcs((mem(at), *bytes)));
                return Ok(());
            }
            l.b.emit(
                instr("mbarrier.arrive.expect_tx.shared::cta.b64").guard(p).dst(Operand::Sink).srcs((mem(bar), *bytes)),
            );
        }
        Op::MBarrierWait => {
            let phase = l.get(data.operands[1])?[0];
            let (again, done) = (l.b.new_label("mbar_wait"), l.b.new_label("mbar_done"));
            let p = l.b.reg(RegClass::Pred);
            if let Some(odd) = odd {
                // Only the even CTA waits on a pair's barrier (what it orders is that CTA's MMA issue).
                l.b.emit(Instr::bra_uni(&done).guard(odd));
            }
            l.b.label(&again);
            if sm90 {
                // CTA scope also where peers arrive (`cta_mask`): see `remote_arrive`.
                l.b.op("mbarrier.try_wait.parity.shared::cta.b64", p, (mem(bar), phase));
            } else {
                l.b.op("mbarrier.test_wait.parity.shared.b64", p, (mem(bar), phase));
            }
            l.b.emit(Instr::bra_uni(&done).guard(p));
            l.b.emit(Instr::bra_uni(&again));
            l.b.label(&done);
            let spans = l.tracked_spans(l.cur_op);
            l.in_flight.barrier_waited(&spans);
        }
        Op::MBarrierInvalidate => {
            let p = first_thread(l, None)?;
            if let Some(odd) = odd {
                l.b.op("not.pred", odd, odd);
                l.b.op("and.pred", p, (p, odd));
            }
            l.b.emit(instr("mbarrier.inval.shared.b64").guard(p).srcs(mem(bar)));
        }
        _ => unreachable!("not an mbarrier op"),
    }
    Ok(())
}

/// Whether this CTA is the odd one of its pair (`%cluster_ctarank & 1`).
fn odd_cta(l: &mut Lower) -> Reg {
    let rank = l.cta_rank();
    let (bit, p) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.b.op("and.b32", bit, (rank, 1));
    l.b.op("setp.ne.u32", p, (bit, 0));
    p
}

/// The `shared::cluster` address of the barrier at offset `bar` in this CTA pair's even CTA (a two-CTA barrier:
/// both CTAs arrive and complete their copies' bytes there).
pub(crate) fn lead_barrier(l: &mut Lower, bar: Reg) -> Reg {
    let rank = l.cta_rank();
    let (lead, at) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
    l.b.op("and.b32", lead, (rank, !1u32));
    l.b.op("mapa.shared::cluster.u32", at, (bar, lead));
    at
}

/// `count` arrivals, by the thread `p` holds, on the barrier at offset `bar` of every CTA whose rank differs from
/// this CTA's only in `mask`'s bits: its own barrier directly, the peers' through `mapa`.
///
/// The arrivals and the waits keep the default CTA scope, as CUTLASS's cluster pipelines and Triton's remote
/// arrivals do. What the barriers order across CTAs is asynchronous-proxy traffic: a peer's TMA (multicast)
/// writes into this CTA's buffers after this CTA's wgmma reads of them have retired (`warpgroup_mma_wait`, before
/// the arrival in program order), and the copies' bytes complete on the destination's own barrier. Cluster-scope
/// semantics would order generic-proxy accesses too, at a price measured on the H200 (2026-12-02, the cluster
/// GEMM at 4096^3): each `acquire.cluster` wait became an L1 invalidation (`CCTL.IVALL`) and each
/// `release.cluster` arrival a `MEMBAR.ALL.CTA` with error barriers, 61% of the warps' stall samples together, and the
/// kernel ran at 0.54x of the 1-CTA one. Data that crosses CTAs through generic loads and stores (the cross-CTA
/// reductions and conversions) meets at cluster barriers, which do release and acquire at cluster scope.
fn remote_arrive(l: &mut Lower, bar: Reg, p: Reg, count: u32, mask: u16) {
    let rank = l.cta_rank();
    l.b.emit(instr("mbarrier.arrive.release.cta.shared::cta.b64").guard(p).dst(Operand::Sink).srcs((mem(bar), count)));
    for d in (1..l.f.config.num_ctas).filter(|d| d & !u32::from(mask) == 0) {
        let (peer, at) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
        l.b.op("xor.b32", peer, (rank, d));
        l.b.op("mapa.shared::cluster.u32", at, (bar, peer));
        l.b.emit(instr("mbarrier.arrive.shared::cluster.b64").guard(p).dst(Operand::Sink).srcs((mem(at), count)));
    }
}

/// `ring_counter_init counter`: the first thread zeroes it (ordered before the releases by the barrier analysis,
/// as an mbarrier's initialization is before its waits).
pub(crate) fn ring_counter_init(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let counter = l.get(data.operands[0])?[0];
    let p = first_thread(l, None)?;
    l.b.emit(instr("st.shared.u32").guard(p).srcs((mem(counter), 0)));
    Ok(())
}

/// `%issue = ring_release counter, pred, buffers...`: an elected lane of each warp adds one to the counter once
/// the warp is done with the buffers (its reads, and its waits for the wgmmas that read them, come before in
/// program order; the release orders them before the refill the last warp issues, as an mbarrier arrival
/// would). The warp whose addition completes a round of `num_warps` is the last reader: its elected lane issues
/// when `pred`. No warp waits for another.
///
/// The lane is `elect.sync`'s, not lane 0: ptxas then knows at most one lane of the warp issues, and predicates
/// the copies (one `UTMALDG` each) instead of looping over the active lanes (`BRA.U.ANY`) around every copy.
pub(crate) fn ring_release(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let counter = l.get(data.operands[0])?[0];
    let pred = l.get(data.operands[1])?[0];
    let n = l.num_warps;
    let (leader_lane, leader) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.b.op("elect.sync", Operand::PredPair(leader_lane, leader), -1);
    let old = l.b.reg(RegClass::B32);
    // The other lanes keep 0; the leader test below leaves them out.
    l.b.op("mov.u32", old, 0);
    // Acquire-release: the warp's reads of the slot happen before the refill the last warp issues. (Relaxed
    // measured the same on the H100; the cost of the release is its round trip, not its ordering.)
    l.b.emit(instr("atom.acq_rel.cta.shared::cta.add.u32").guard(leader).dst(old).srcs((mem(counter), 1)));
    let round = l.b.reg(RegClass::B32);
    if n.is_power_of_two() {
        l.b.op("and.b32", round, (old, n - 1));
    } else {
        l.b.op("rem.u32", round, (old, n));
    }
    let issue = l.b.reg(RegClass::Pred);
    l.b.op("setp.eq.u32", issue, (round, n - 1));
    l.b.op("and.pred", issue, (issue, leader));
    l.b.op("and.pred", issue, (issue, pred));
    l.vals.insert(data.results[0], vec![issue]);
    Ok(())
}
