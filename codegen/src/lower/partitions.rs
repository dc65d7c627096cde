//! `warp_specialize`: the partitions of a kernel on disjoint warps of one CTA.
//!
//! The CTA has `num_warps + Σ worker_num_warps` warps (the plan of `sched::warp_spec`, written on the op as
//! `warp_starts`). Worker warps skip the kernel's code before the op: they branch from the entry straight to the
//! hand-off, where every thread meets at `bar.sync 0`. Values the workers capture that every thread already
//! holds (kernel arguments, whole shared-memory allocations, computed at the entry) are used as they are; the
//! others the default partition's first thread stores to scratch, and the workers load them between two
//! `bar.sync 0`s (the second keeps the partitions' own buffers, which may reuse the space, from overwriting
//! them early). Then each warp branches to its partition:
//!
//! - register reallocation, when the plan has counts: `setmaxnreg.dec`/`.inc` per partition (the entry has
//!   `.maxnreg`, without which ptxas ignores it);
//! - a worker's code is lowered with its own warp count and its thread and warp indices rebased to its first
//!   warp (its layouts are written for its warps), and its barriers are named barriers over its threads only
//!   (`bar.sync 2 + i, 32 * worker_num_warps[i]`); the default partition's, before, in and after the op, are
//!   `bar.sync 1, 32 * num_warps`, since the workers never reach them;
//! - the partitions' scratch does not overlap: workers are lowered first and each one's scratch starts above
//!   the last one's; shared-memory buffers made in a partition live over the whole op (`smem::alloc`).
//!
//! At the end every thread meets at `bar.sync 0` again and the workers exit; the default partition goes on
//! with its results.

use std::collections::HashMap;

use tessel_tile::ir::{Func, OpData, ValueDef, ValueId};
use tessel_tile::ops::Op;

use super::Lower;
use super::shared::{ld_shared, st_shared};
use crate::CompileError;
use crate::ptx::{Instr, Reg, RegClass, instr, mem, sym};

/// The per-thread values of a warp-specialized kernel, made at the entry.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    pub total_warps: u32,
    /// Whether the thread is in a worker partition (`warp >= num_warps`).
    is_worker: Reg,
    /// Each worker's thread index and warp index, counted from its first warp.
    rebased: Vec<(Reg, Reg)>,
    handoff: String,
}

/// Every tensor layout the kernel defines spans its partition's warps (a worker's own count, or the kernel's
/// `num_warps`). Only the values of linked ops and regions count: the arena also holds values of ops passes have
/// removed, whose layouts no code uses.
pub(crate) fn check_layout_warps(f: &Func) -> Result<(), CompileError> {
    let partition_warps = warps_of_values(f);
    let mut live: Vec<ValueId> = f.args().to_vec();
    for o in f.all_ops() {
        live.extend(&f.op(o).results);
        for &r in &f.op(o).regions {
            live.extend(&f.region(r).args);
        }
    }
    for v in live {
        let tessel_tile::Type::Tensor { layout: Some(l), .. } = f.ty(v) else { continue };
        let lin = &l.linear;
        let (warps, whose) = match partition_warps.get(&v) {
            Some(&(w, worker)) => (w, format!("worker partition {worker} has")),
            None => (f.config.num_warps, "the kernel has num_warps =".to_string()),
        };
        if lin.has_in_dim("warp") && lin.in_dim_size("warp") != warps {
            return Err(CompileError::new(format!(
                "a layout spans {} warps but {whose} {warps}",
                lin.in_dim_size("warp")
            )));
        }
    }
    Ok(())
}

/// The values defined in worker partitions (results and region arguments, nested regions included), with the
/// worker's warp count and index.
pub(crate) fn warps_of_values(f: &Func) -> HashMap<ValueId, (u32, usize)> {
    let mut out = HashMap::new();
    for o in f.all_ops() {
        let d = f.op(o);
        let Op::WarpSpecialize(w) = &d.op else { continue };
        for (i, &r) in d.regions[1..].iter().enumerate() {
            let n = w.worker_num_warps[i];
            out.extend(f.region(r).args.iter().map(|&a| (a, (n, i))));
            f.walk(r, &mut |x| {
                out.extend(f.op(x).results.iter().map(|&v| (v, (n, i))));
                for &c in &f.op(x).regions {
                    out.extend(f.region(c).args.iter().map(|&a| (a, (n, i))));
                }
            });
        }
    }
    out
}

/// At the entry of a warp-specialized kernel: the per-thread values of the partitions, and the worker warps'
/// branch to the hand-off. Nothing for other kernels.
pub(crate) fn setup(l: &mut Lower) -> Result<(), CompileError> {
    let f = l.f;
    let ops: Vec<_> = f.all_ops().into_iter().filter(|&o| matches!(f.op(o).op, Op::WarpSpecialize(_))).collect();
    let Some(&o) = ops.first() else { return Ok(()) };
    if ops.len() > 1 {
        return Err(CompileError::new("tessel supports one warp_specialize per kernel").at(f, ops[1]));
    }
    if f.op(o).parent != Some(f.body) {
        return Err(CompileError::new("warp_specialize must be at the top level of the kernel").at(f, o));
    }
    let Op::WarpSpecialize(w) = &f.op(o).op else { unreachable!() };
    if w.warp_starts.len() != w.worker_num_warps.len() + 1 {
        return Err(CompileError::new(
            "warp_specialize has no partition plan (`warp_starts`): codegen runs after tessel_sched::pipeline",
        )
        .at(f, o));
    }
    let nw = f.config.num_warps;
    let total_warps = w.warp_starts.last().unwrap() + w.worker_num_warps.last().unwrap();
    l.b.set_prologue(true);
    let is_worker = l.b.reg(RegClass::Pred);
    l.b.op("setp.ge.u32", is_worker, (l.warp, nw));
    let rebased = w.warp_starts[1..]
        .iter()
        .map(|&start| {
            let (t, wp) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
            l.b.op("sub.u32", t, (l.tid, start * 32));
            l.b.op("sub.u32", wp, (l.warp, start));
            (t, wp)
        })
        .collect();
    l.b.set_prologue(false);
    let handoff = l.b.new_label("ws_handoff");
    let meets_first = l.cluster_init_after.is_some_and(|m| m != o);
    if meets_first {
        // The CTAs of the cluster meet in the top-level code before the `warp_specialize`, once the barriers are
        // initialized (`cluster::multicast_init_point`): a cluster barrier counts every thread, so the workers,
        // which skip that code, meet there too before they wait for the hand-off.
        let main = l.b.new_label("ws_main");
        let is_default = l.b.reg(RegClass::Pred);
        l.b.op("not.pred", is_default, is_worker);
        l.b.emit(Instr::bra_uni(&main).guard(is_default));
        l.cluster_barrier();
        l.b.emit(Instr::bra_uni(&handoff));
        l.b.label(&main);
    } else {
        l.b.emit(Instr::bra_uni(&handoff).guard(is_worker));
    }
    l.bar = (1, nw * 32);
    l.ws = Some(Setup { total_warps, is_worker, rebased, handoff });
    Ok(())
}

/// Branches each warp to `labels[i]` of the first `i` among `candidates` (in warp order) whose range ends past
/// it (`ends[i]`); the last candidate takes the rest, by a branch of its own, since the code after this is not its
/// body.
fn dispatch(l: &mut Lower, labels: &[String], ends: &[u32], candidates: &[usize]) {
    for (k, &i) in candidates.iter().enumerate() {
        if k + 1 == candidates.len() {
            l.b.emit(Instr::bra_uni(&labels[i]));
            break;
        }
        let p = l.b.reg(RegClass::Pred);
        l.b.op("setp.lt.u32", p, (l.warp, ends[i]));
        l.b.emit(Instr::bra_uni(&labels[i]).guard(p));
    }
}

fn setmaxnreg(l: &mut Lower, to: u32) {
    let from = l.f.config.maxnreg.unwrap_or(to);
    if to < from {
        l.b.effect("setmaxnreg.dec.sync.aligned.u32", to);
    } else if to > from {
        l.b.effect("setmaxnreg.inc.sync.aligned.u32", to);
    }
}

pub(crate) fn lower(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let f = l.f;
    let Op::WarpSpecialize(w) = &data.op else { unreachable!("a warp_specialize") };
    let Some(s) = l.ws.clone() else { unreachable!("setup ran: the op is in the kernel") };
    let nw = f.config.num_warps;
    // The captures every thread holds, and those the workers load from the default partition.
    let mut captures: Vec<Option<Vec<Reg>>> = Vec::new();
    let mut transfer: Vec<(usize, Reg)> = Vec::new();
    for (i, &c) in data.operands.iter().enumerate() {
        let regs = l.get(c)?.to_vec();
        let host =
            tessel_tile::tma::host_desc_base(f, c).is_some() || tessel_tile::tma::host_im2col_base(f, c).is_some();
        if matches!(f.ty(c), tessel_tile::Type::TensorDesc { .. }) && host {
            // A host descriptor (tiled or im2col): a worker's TMA copies reach its tensor map, a kernel parameter, through
            // `tma::desc_source`; the worker reads none of its registers (the elaborator gives workers no
            // `desc.shape`), so nothing is handed over.
            captures.push(Some(regs));
            continue;
        }
        if regs.len() != 1 {
            return Err(CompileError::new(format!(
                "worker partitions take scalars and shared-memory descriptors, not {}",
                f.ty(c)
            )));
        }
        // A kernel argument, or a value in its registers (`multiple_of` and other hints): loaded at the entry.
        let param = matches!(f.value(c).def, ValueDef::Arg(r, _) if r == f.body)
            || f.args().iter().any(|a| l.vals.get(a).is_some_and(|p| p[0] == regs[0]));
        if param || l.entry_regs.contains(&regs[0]) {
            captures.push(Some(regs));
        } else {
            captures.push(None);
            transfer.push((i, regs[0]));
        }
    }
    let slots = if transfer.is_empty() { None } else { Some(l.scratch_at(8 * transfer.len() as u32)?) };
    if let Some(at) = slots {
        let skip = l.b.new_label("ws_stored");
        let not_first = l.b.reg(RegClass::Pred);
        l.b.op("setp.ne.u32", not_first, (l.tid, 0));
        l.b.emit(Instr::bra(&skip).guard(not_first));
        for (k, &(_, r)) in transfer.iter().enumerate() {
            let a = address(l, at + 8 * k as u32, false);
            st_shared(l, a, r);
        }
        l.b.label(&skip);
    }
    l.b.label(&s.handoff);
    l.b.effect("bar.sync", 0);
    if l.cluster_init_after == Some(l.cur_op) {
        // Every CTA's barriers initialized before any CTA's multicast copy or arrival reaches them: the workers
        // joined the CTA only here, and a cluster barrier needs every thread.
        l.cluster_barrier();
    }
    if let Some(at) = slots {
        let loaded = l.b.new_label("ws_loaded");
        l.b.emit(Instr::bra_uni(&loaded).unless(s.is_worker));
        for (k, &(i, r)) in transfer.iter().enumerate() {
            let a = address(l, at + 8 * k as u32, true);
            captures[i] = Some(vec![ld_shared(l, a, r.class)]);
        }
        l.b.label(&loaded);
        l.b.effect("bar.sync", 0);
    }
    // Each partition's code starts from the state after the hand-off barrier (TMA stores issued before the
    // warp_specialize still read their buffers).
    l.hazards.clear();
    let entry_hazards = l.hazards.clone();
    let captures: Vec<Vec<Reg>> = captures.into_iter().map(|c| c.expect("every capture has its registers")).collect();
    let (default_label, join) = (l.b.new_label("ws_default"), l.b.new_label("ws_join"));
    // The join's named barrier: after the default partition's (1) and the workers' (2 + i).
    let join_bar = 2 + w.worker_num_warps.len() as u32;
    let total_warps = s.total_warps;
    l.b.emit(Instr::bra_uni(&default_label).unless(s.is_worker));
    // The workers: register reallocation, then each to its code. Worker i runs on warps [warp_starts[i + 1],
    // warp_starts[i + 1] + worker_num_warps[i]).
    let labels: Vec<String> = (0..w.worker_num_warps.len()).map(|_| l.b.new_label("ws_worker")).collect();
    let ends: Vec<u32> = (0..labels.len()).map(|i| w.warp_starts[i + 1] + w.worker_num_warps[i]).collect();
    let counts = w.regs.get(1..).unwrap_or(&[]);
    if counts.iter().all(|&r| r == counts[0]) {
        // One count for every worker: set once, then each warp to its worker.
        if let Some(&r) = counts.first() {
            setmaxnreg(l, r);
        }
        // (A lone worker's body comes next.)
        if labels.len() > 1 {
            dispatch(l, &labels, &ends, &(0..labels.len()).collect::<Vec<_>>());
        }
    } else {
        // A count per warpgroup (the plan has each warpgroup's workers agree): `setmaxnreg.sync.aligned` wants
        // every warp of a warpgroup at the same instruction, so each warp first branches to its warpgroup's
        // `setmaxnreg`, then to its worker.
        let groups: Vec<u32> = (w.warp_starts[1] / 4..total_warps.div_ceil(4)).collect();
        let group_labels: Vec<String> = groups.iter().map(|_| l.b.new_label("ws_warpgroup")).collect();
        let group_ends: Vec<u32> = groups.iter().map(|g| 4 * (g + 1)).collect();
        dispatch(l, &group_labels, &group_ends, &(0..groups.len()).collect::<Vec<_>>());
        for (g, label) in groups.iter().zip(&group_labels) {
            l.b.label(label);
            let members: Vec<usize> =
                (0..labels.len()).filter(|&i| w.warp_starts[i + 1] < 4 * (g + 1) && ends[i] > 4 * g).collect();
            setmaxnreg(l, counts[members[0]]);
            dispatch(l, &labels, &ends, &members);
        }
    }
    for (i, label) in labels.iter().enumerate() {
        l.b.label(label);
        let saved = (l.tid, l.warp, l.num_warps, std::mem::take(&mut l.coord_cache), l.bar, l.warp_base);
        let n = w.worker_num_warps[i];
        (l.tid, l.warp, l.num_warps, l.bar) = (s.rebased[i].0, s.rebased[i].1, n, (2 + i as u32, 32 * n));
        l.warp_base = w.warp_starts[1 + i];
        let r = data.regions[1 + i];
        for (&a, c) in f.region(r).args.iter().zip(&captures) {
            l.vals.insert(a, c.clone());
        }
        if n > 1 && one_warp_runs(f, r) {
            // One warp does all there is (scalar work, waits, TMA copies: auto mode's producer, a warpgroup so
            // that registers can move); the others count themselves at the join and exit instead of spinning on
            // the same waits beside the consumers' warps. The partition is lowered as one warp, so that the one
            // issues every box of a copy (boxes go to the partition's warps in turn).
            let idle = l.b.reg(RegClass::Pred);
            l.b.op("setp.ne.u32", idle, (l.warp, 0));
            l.b.emit(instr("bar.arrive").guard(idle).srcs((join_bar, 32 * total_warps)));
            l.b.emit(instr("exit").guard(idle));
            (l.num_warps, l.bar) = (1, (2 + i as u32, 32));
        }
        acquire_kernel_maps(l, r);
        // Other threads than the code lowered before: nothing is known of what they did.
        l.tmem_need = super::tcgen05::TmemNeed::Sync;
        let ran = l.region(r);
        let idle = l.in_flight.is_empty();
        (l.tid, l.warp, l.num_warps, l.coord_cache, l.bar, l.warp_base) = saved;
        ran?;
        if !idle {
            return Err(CompileError::new(format!(
                "asynchronous copies or wgmmas of worker partition {i} are still in flight at its end: wait for them"
            )));
        }
        l.hazards = entry_hazards.clone();
        l.scratch_floor = l.scratch_floor.max(l.smem_bytes);
        // The worker's warps are done: they count themselves at the join and exit, rather than running into the
        // default partition's code. ptxas sizes each partition's registers by the `setmaxnreg` before its code,
        // and code both reach gets the smaller count: a common join would hold the default partition to the
        // kernel's entry count and spill it.
        l.b.effect("bar.arrive", (join_bar, 32 * total_warps));
        l.b.effect("exit", ());
    }
    // The default partition, on the kernel's warps, with its scratch above the workers'.
    l.b.label(&default_label);
    if let Some(&r) = w.regs.first() {
        setmaxnreg(l, r);
    }
    l.tmem_need = super::tcgen05::TmemNeed::Sync;
    let yielded = l.region(data.regions[0])?;
    for (&res, y) in data.results.iter().zip(yielded) {
        let regs = l.get(y)?.to_vec();
        l.vals.insert(res, regs);
    }
    if !l.in_flight.is_empty() {
        return Err(CompileError::new(
            "asynchronous copies or wgmmas of the default partition are still in flight at its end: wait for them",
        ));
    }
    l.b.label(&join);
    // Every worker's writes are done before the kernel goes on (its buffers are released, its barriers
    // invalidated).
    l.b.effect("bar.sync", (join_bar, 32 * total_warps));
    l.hazards.clear();
    l.scratch_floor = 0;
    debug_assert_eq!(l.bar, (1, 32 * nw));
    Ok(())
}

/// Whether worker region `r` needs only its first warp: scalars, loops and branches over them, buffer views,
/// mbarrier waits and expectations, and TMA loads, each issued by one thread; nothing that lays a tensor over
/// the partition's warps or makes them meet at a barrier.
fn one_warp_runs(f: &Func, r: tessel_tile::ir::RegionId) -> bool {
    let mut ok = true;
    f.walk(r, &mut |o| {
        let d = f.op(o);
        let allowed = matches!(
            d.op,
            Op::Constant(_)
                | Op::Binary { .. }
                | Op::Cmp(_)
                | Op::Select
                | Op::For(_)
                | Op::If
                | Op::Yield
                | Op::MemDescIndex
                | Op::MBarrierWait
                | Op::MBarrierExpect { .. }
                | Op::TmaLoad { multicast: false }
        );
        ok &= allowed && d.results.iter().all(|&v| !f.ty(v).is_tensor());
    });
    ok
}

/// The tensor maps the kernel made (`tma::make_desc`) that worker region `r` copies with: the default partition
/// released them and met the workers at the hand-off barrier, but only its own threads acquired them, so each
/// worker thread acquires them before its first copy.
fn acquire_kernel_maps(l: &mut Lower, r: tessel_tile::ir::RegionId) {
    let f = l.f;
    for &a in &f.region(r).args {
        if tessel_tile::tma::kernel_desc_maker(f, a).is_some()
            && let Some(&map) = l.vals.get(&a).and_then(|regs| regs.first())
        {
            l.b.effect("fence.proxy.tensormap::generic.acquire.gpu", (mem(map), super::tma::MAP_BYTES));
        }
    }
}

/// The shared address `global_smem + at`, at the entry (for the workers, which skip the code before the op) or
/// here.
fn address(l: &mut Lower, at: u32, entry: bool) -> Reg {
    l.b.set_prologue(entry);
    let a = l.b.reg(RegClass::B32);
    l.b.op("mov.u32", a, sym("global_smem"));
    if at != 0 {
        l.b.op("add.u32", a, (a, at));
    }
    l.b.set_prologue(false);
    a
}
