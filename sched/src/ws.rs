//! Automatic warp specialization of a pipelined loop (`tl.range(..., warp_specialize=True)`): the loop's TMA
//! copies move to a producer partition of their own, lowered through the same `warp_specialize` op gluon
//! kernels write.
//!
//! The expansion ([`crate::expand`]) builds the rings as for a loop that issues its own copies, then splits the
//! work:
//!
//! - **The default partition** (the kernel's `num_warps` warps) runs the loop's last stage and nothing of stage
//!   0's copies: iteration `k` waits for `ready[k mod B]` in parity `(k / B) mod 2`, runs its dots on the ring
//!   buffers, and where the single-partition loop would refill a slot (after the wait that retires the dots
//!   reading it) arrives on that slot's `empty` barrier instead. With `B = D + 1` buffers (a dot left in flight)
//!   that is the previous iteration's slot, so the first iteration arrives on none; with `B = D`, its own.
//! - **The producer** (worker 0, [`Producer`]) runs the loop again with stage 0 alone: iteration `k`
//!   waits until the consumer has released slot `k mod B` for its previous use (parity `(k / B) mod 2 ^ 1`,
//!   which a fresh barrier passes), arms `ready[k mod B]` with the iteration's bytes and issues the copies.
//!   The producer is never more than `B` iterations ahead: the `empty` barriers throttle it.
//!
//! No prologue or drain copies exist: the producer's loop is the whole schedule of the copies, and the consumer
//! waits for each phase as it comes. The partitions share nothing but the rings and their barriers; the
//! producer's captures are the scalars, pointers, descriptors and buffers stage 0 reads.
//!
//! [`plan`] says whether a loop can be split so, and why not; the schedule's text (`--emit sched`) carries it.

use std::collections::{HashMap, HashSet};

use tessel_tile::Target;
use tessel_tile::ir::{Func, OpId, RegionId, ValueDef, ValueId};
use tessel_tile::ops::{BinOp, Const, Op, WarpSpec};
use tessel_tile::types::{ScalarType, Type};

use crate::error::MAX_WARPS;
use crate::plan::LoopPlan;

/// Registers per thread a producer warpgroup keeps (scalars: coordinates, ring positions); the consumers get the
/// rest, 232 each beside two consumer warpgroups.
pub const PRODUCER_REGS: u32 = 40;

/// Shared memory per SM on sm_90a (bytes a kernel's CTAs may share).
const SMEM_PER_SM: u32 = 233_472;

/// The producer's shape. One thread issues the copies either way; the choice is about the consumers' registers
/// and how many CTAs an SM holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Producer {
    /// A warpgroup that gives its registers to the consumers (`setmaxnreg`: it keeps [`PRODUCER_REGS`]): taken
    /// when the kernel's shared memory holds one CTA per SM anyway. `setmaxnreg` moves registers between whole
    /// warpgroups only, and ptxas sizes a kernel's registers for its threads rounded up to warpgroups: a one-warp
    /// producer beside two consumer warpgroups leaves them 168 (65536 / 384) and no way to get more, which
    /// serializes attention's wgmmas at head dim 128 (ptxas says so: C7512). Only its first warp runs.
    Warpgroup,
    /// One warp, registers as they are: taken when shared memory leaves room for two CTAs per SM, which a
    /// reallocation would rule out (the kernel then starts at its full count per thread). Attention at head dim
    /// 64 runs two CTAs per SM in one partition. Measured on the H200 (ncu), the one-warp producer does not get
    /// them back beside eight consumer warps: registers are allocated as for 12 warps (ptxas's rounding to
    /// warpgroups), and ncu counts one block by registers and one by shared memory, so that kernel runs one CTA
    /// per SM either way (413 TFLOP/s against 405 with a producer warpgroup, 449 in one partition). Beside four
    /// consumer warps (5 warps, allocated as 8) two CTAs remain possible; not measured.
    Warp,
}

impl Producer {
    pub fn warps(self) -> u32 {
        match self {
            Producer::Warpgroup => 4,
            Producer::Warp => 1,
        }
    }
}

/// How a loop is split into partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WsPlan {
    /// What the producer reads from outside the loop (and the `if`s around it), in order: its captures.
    pub captures: Vec<ValueId>,
    /// The `if`s the loop is nested in (a fused loop runs under `if k_tiles > 0`), outermost first, with
    /// the branch holding the loop: the `warp_specialize` wraps the outermost, and the producer takes the same
    /// branches.
    pub ifs: Vec<(OpId, usize)>,
    /// Ops of those branches the producer computes again for itself (pure, in program order): what it reads that
    /// is made there, conditions of inner `if`s included.
    pub recomputed: Vec<OpId>,
    /// sm_100a: the loop's tcgen05 MMA, which the default partition commits to the ring's `empty` barriers
    /// ([`crate::ws_mma`]).
    pub mma: Option<crate::ws_mma::WsMma>,
    pub producer: Producer,
    /// The shared memory the plan counted (the rings and the buffers made outside the loop), for the reason
    /// `--emit sched` gives.
    pub smem: u32,
}

impl WsPlan {
    /// What the split does, for the loop's schedule (`--emit sched`).
    pub fn describe(&self) -> String {
        let producer = match self.producer {
            Producer::Warp if matches!(self.mma, Some(crate::ws_mma::WsMma::InFlight(_))) => {
                "a producer warp issues the copies (the accumulator is in tensor memory: the default partition \
                 needs no registers a producer warpgroup could give it)"
                    .to_string()
            }
            Producer::Warp if self.mma.is_some() => {
                "a producer warp issues the copies (one warp, as for a K loop on sm_100a)".to_string()
            }
            Producer::Warpgroup => format!(
                "a producer warpgroup issues the copies and keeps {PRODUCER_REGS} registers per thread (the \
                 kernel's {} B of shared memory hold one CTA per SM)",
                self.smem
            ),
            Producer::Warp => format!(
                "a producer warp issues the copies (registers stay as they are: the {} B of shared memory counted \
                 for the rings and buffers would leave room for two CTAs per SM)",
                self.smem
            ),
        };
        match &self.mma {
            Some(crate::ws_mma::WsMma::InFlight(m)) => format!(
                "; warp-specialized: {producer}, the default partition issues {} and commits it to the slot's \
                 empty barrier (the MMA's completion releases the slot), then waits for the accumulator once{}",
                m.mma,
                if m.reads.is_empty() { " after the loop" } else { " in each tile's epilogue and after the loop" }
            ),
            Some(crate::ws_mma::WsMma::Chained { release, count }) => format!(
                "; warp-specialized: {producer}, the default partition issues the loop's {count} MMAs and waits for \
                 each where the loop does, {} committed to the slot's empty barrier and waited for there (its \
                 completion releases the slot)",
                release.mma
            ),
            None => {
                format!("; warp-specialized: {producer}, the default partition releases each slot through an mbarrier")
            }
        }
    }
}

/// Whether loop `p.loop_op`, which asked for warp specialization, can be split into a TMA producer and the
/// consumer that runs the rest; `Err` says why not, for `--emit sched`. `taken`: another loop of the kernel was
/// split already (a kernel has one `warp_specialize`).
pub fn plan(f: &Func, p: &LoopPlan, taken: bool) -> Result<WsPlan, String> {
    let o = p.loop_op;
    if f.target == Target::Sm80 {
        return Err("sm_80 has no TMA to hand to a producer partition".into());
    }
    if taken || f.all_ops().iter().any(|&x| matches!(f.op(x).op, Op::WarpSpecialize(_))) {
        return Err("the kernel already has a warp_specialize, and a kernel has one".into());
    }
    let Some(ifs) = enclosing_ifs(f, o) else {
        return Err("the loop is not at the kernel's top level (a partition starts there)".into());
    };
    if let Some(l) = p.loads.iter().find(|l| !l.tma) {
        return Err(format!("{} is not a TMA copy (a producer partition issues TMA copies only)", l.load));
    }
    let mma = match f.target {
        Target::Sm100a => Some(crate::ws_mma::plan(f, p)?),
        _ if p.mma_flight.is_some() => return Err("a tcgen05 MMA in flight is not handed between partitions".into()),
        _ => None,
    };
    if f.config.num_warps % 4 != 0 {
        return Err(format!("{} warps do not make whole warpgroups for the consumer's wgmmas", f.config.num_warps));
    }
    let smem = smem_estimate(f, p);
    // Two CTAs per SM when each leaves the other its shared memory (1 KiB of it reserved per CTA). On sm_100a
    // the accumulator lives in tensor memory: the default partition needs no registers a warpgroup could give it,
    // and one warp loads, as in Triton's Blackwell partitions.
    let producer = if 2 * (smem + 1024) <= SMEM_PER_SM || f.config.maxnreg.is_some() || mma.is_some() {
        Producer::Warp
    } else {
        Producer::Warpgroup
    };
    if f.config.num_warps + producer.warps() > MAX_WARPS {
        return Err(format!(
            "{} warps and a producer's {} exceed the {MAX_WARPS} a CTA can have",
            f.config.num_warps,
            producer.warps()
        ));
    }
    // Stage 0 runs on the producer's warps: it may compute scalars only (tensors have the default partition's
    // layouts).
    for &x in &p.stage0 {
        if p.loads.iter().any(|l| l.load == x) {
            continue;
        }
        let mut tensor = None;
        f.walk_op(x, &mut |y| {
            if f.op(y).results.iter().any(|&r| f.ty(r).is_tensor()) {
                tensor = Some(y);
            }
        });
        if let Some(y) = tensor {
            return Err(format!(
                "stage 0 computes a tensor ({y}: {}) the producer would have to hold",
                f.op(y).op.name()
            ));
        }
    }
    let (captures, recomputed) = branch_values(f, &ifs, captures(f, p))?;
    if let Some(&v) = captures.iter().find(|&&v| f.ty(v).is_tensor()) {
        return Err(format!(
            "the copies read a tensor from outside the loop ({v}), and partitions share only scalars and buffers"
        ));
    }
    Ok(WsPlan { captures, ifs, recomputed, mma, producer, smem })
}

/// The `if`s loop `o` is nested in up to the kernel's body, outermost first, each with the branch holding the
/// loop; `None` when something else encloses it.
fn enclosing_ifs(f: &Func, o: OpId) -> Option<Vec<(OpId, usize)>> {
    let mut out = Vec::new();
    let mut x = o;
    loop {
        let r = f.op(x).parent?;
        if r == f.body {
            out.reverse();
            return Some(out);
        }
        let up = f.region(r).parent?;
        if f.op(up).op != Op::If {
            return None;
        }
        out.push((up, f.op(up).regions.iter().position(|&b| b == r)?));
        x = up;
    }
}

/// Splits what the producer reads from outside the loop (`needs`) and the conditions of the `if`s around it into
/// captures (made before the outermost `if`) and the ops of the `if`s' branches that compute the others, which
/// the producer runs again (pure ops only; their operands likewise), in program order.
fn branch_values(f: &Func, ifs: &[(OpId, usize)], needs: Vec<ValueId>) -> Result<(Vec<ValueId>, Vec<OpId>), String> {
    let Some(&(top, _)) = ifs.first() else { return Ok((needs, Vec::new())) };
    let mut inside = HashSet::new();
    f.walk_op(top, &mut |y| {
        inside.insert(y);
    });
    let (mut captures, mut ops): (Vec<ValueId>, HashSet<OpId>) = (Vec::new(), HashSet::new());
    let conditions = ifs.iter().map(|&(x, _)| f.op(x).operands[0]);
    for first in needs.into_iter().chain(conditions) {
        let mut work = vec![first];
        while let Some(v) = work.pop() {
            let def = match f.value(v).def {
                ValueDef::Result(d, _) => Some(d),
                ValueDef::Arg(..) => None,
            };
            // Constants the worker makes itself.
            if def.is_some_and(|d| matches!(f.op(d).op, Op::Constant(_)) && f.op(d).regions.is_empty()) {
                continue;
            }
            match def {
                Some(d) if inside.contains(&d) => {
                    let dd = f.op(d);
                    if !dd.op.is_pure() || !dd.regions.is_empty() {
                        return Err(format!(
                            "the copies read {v}, which {d} ({}) computes inside the `if` around the loop, and the \
                             producer can compute again only pure ops",
                            dd.op.name()
                        ));
                    }
                    if ops.insert(d) {
                        work.extend(dd.operands.iter().copied());
                    }
                }
                _ if !captures.contains(&v) => captures.push(v),
                _ => {}
            }
        }
    }
    let mut recomputed = Vec::new();
    f.walk_op(top, &mut |y| {
        if ops.contains(&y) {
            recomputed.push(y);
        }
    });
    Ok((captures, recomputed))
}

/// The shared memory the split loop's kernel needs at the least: its rings (the pipelined loads' buffers, one
/// per slot) and every buffer made outside the loop (attention's Q).
fn smem_estimate(f: &Func, p: &LoopPlan) -> u32 {
    // Each CTA's: its part of a buffer spread over a cluster's CTAs.
    let bytes = |t: &Type| match t {
        Type::MemDesc { shape, elem, layout } => {
            shape.iter().product::<u32>() * elem.bytes() / tessel_tile::cluster::parts(&layout.linear)
        }
        _ => 0,
    };
    let rings: u32 = p.loads.iter().map(|l| bytes(&l.buffer) * p.buffers).sum();
    let outside: u32 = f
        .all_ops()
        .into_iter()
        .filter(|&x| f.op(x).op == Op::LocalAlloc && !is_in(f, x, p.loop_op))
        .map(|x| bytes(f.ty(f.op(x).results[0])))
        .sum();
    rings + outside
}

/// What the producer reads from outside the loop: the bounds, the initial values of the carried values stage 0
/// advances, and what stage 0's ops read (constants excepted: the producer makes its own), in first-use order.
fn captures(f: &Func, p: &LoopPlan) -> Vec<ValueId> {
    let o = p.loop_op;
    let (mut inside_ops, mut inside_regions) = (HashSet::new(), HashSet::new());
    f.walk_op(o, &mut |y| {
        inside_ops.insert(y);
        inside_regions.extend(f.op(y).regions.iter().copied());
    });
    let outside = |v: ValueId| match f.value(v).def {
        ValueDef::Result(d, _) => !inside_ops.contains(&d) && !matches!(f.op(d).op, Op::Constant(_)),
        ValueDef::Arg(r, _) => !inside_regions.contains(&r),
    };
    let mut out: Vec<ValueId> = Vec::new();
    let mut add = |v: ValueId| {
        if outside(v) && !out.contains(&v) {
            out.push(v);
        }
    };
    let d = f.op(o);
    for &v in &d.operands[..3] {
        add(v);
    }
    for &j in &p.early_args {
        add(d.operands[3 + j]);
    }
    for &x in &p.stage0 {
        f.walk_op(x, &mut |y| f.op(y).operands.iter().for_each(|&v| add(v)));
    }
    out
}

/// The rings and barriers the expansion made for a split loop.
pub(crate) struct Rings {
    /// One ring per pipelined load, in `p.loads` order, with the type of one buffer.
    pub rings: Vec<(ValueId, Type)>,
    /// `ready[B]`: the TMA copies of an iteration complete on their slot's.
    pub ready: ValueId,
    /// `empty[B]`: the consumer arrives on a slot's once it is done with it.
    pub empty: ValueId,
    /// The bytes an iteration's copies bring.
    pub bytes: u32,
}

/// Replaces loop `p.loop_op` (already rewritten as the consumer) and `after` (ops the default partition runs
/// after it: the wait for its last dot) with a `warp_specialize` whose default partition runs them and whose
/// worker is the producer; the op's results are the values `after` left for the rest of the kernel (`finals`,
/// one per loop result). A loop nested in `if`s (`w.ifs`) stays in them: the `warp_specialize` takes the
/// outermost `if`'s place and its results, `after` follows the loop in its branch, and the producer takes the
/// same branches, computing again what it reads from them (`w.recomputed`). Returns the `warp_specialize`.
pub(crate) fn split(f: &mut Func, p: &LoopPlan, w: &WsPlan, rings: &Rings, after: &[OpId], finals: &[ValueId]) -> OpId {
    let o = p.loop_op;
    let top = w.ifs.first().map_or(o, |&(x, _)| x);
    let parent = f.op(top).parent.expect("linked loop");
    let loc = f.op(o).loc;
    // The default partition: the loop (or the `if` holding it) and what follows it there.
    let default = f.new_region();
    // The worker: its arguments stand for the captures, then the rings and barriers.
    let worker = f.new_region();
    let mut captures = w.captures.clone();
    captures.extend(rings.rings.iter().map(|(r, _)| *r));
    captures.extend([rings.ready, rings.empty]);
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    for &c in &captures {
        let (ty, name) = (f.ty(c).clone(), f.value(c).name.clone());
        let a = f.add_region_arg(worker, ty, name);
        map.insert(c, a);
    }
    // The producer's way into the loop: the same branches of the same conditions.
    let mut inner = worker;
    for &(x, branch) in &w.ifs {
        let region = f.op(x).parent.expect("a linked if");
        let here: Vec<OpId> = w.recomputed.iter().copied().filter(|&y| f.op(y).parent == Some(region)).collect();
        for y in here {
            clone_into(f, inner, y, &mut map);
        }
        let cond = worker_value(f, inner, f.op(x).operands[0], &mut map);
        let branches = [f.new_region(), f.new_region()];
        f.append(inner, Op::If, &[cond], vec![], &branches, loc);
        f.append(inner, Op::Yield, &[], vec![], &[], loc);
        f.append(branches[1 - branch], Op::Yield, &[], vec![], &[], loc);
        inner = branches[branch];
    }
    let region = f.op(o).parent.expect("linked loop");
    let here: Vec<OpId> = w.recomputed.iter().copied().filter(|&y| f.op(y).parent == Some(region)).collect();
    for y in here {
        clone_into(f, inner, y, &mut map);
    }
    producer(f, p, rings, inner, &mut map);
    let (results, types): (Vec<ValueId>, Vec<Type>) = if top == o {
        finals.iter().map(|&v| (v, f.ty(v).clone())).unzip()
    } else {
        // `after` runs in the loop's branch, right after it.
        let ops = &mut f.region_mut(region).ops;
        let at = ops.iter().position(|&x| x == o).expect("linked loop");
        ops.splice(at + 1..at + 1, after.iter().copied());
        for &x in after {
            f.op_mut(x).parent = Some(region);
        }
        f.op(top).results.iter().map(|&v| (v, f.ty(v).clone())).unzip()
    };
    let worker_num_regs = match w.producer {
        Producer::Warpgroup => vec![PRODUCER_REGS],
        Producer::Warp => Vec::new(),
    };
    let spec = WarpSpec { worker_num_warps: vec![w.producer.warps()], worker_num_regs, ..WarpSpec::default() };
    let ws = f.append(parent, Op::WarpSpecialize(spec), &captures, types, &[default, worker], loc);
    // In the loop's (or the `if`'s) place.
    let ops = &mut f.region_mut(parent).ops;
    ops.pop();
    let at = ops.iter().position(|&x| x == top).expect("linked loop");
    ops[at] = ws;
    let ws_results = f.op(ws).results.clone();
    for (&v, &r) in results.iter().zip(&ws_results) {
        f.replace_all_uses(v, r);
    }
    let moved: Vec<OpId> = if top == o { std::iter::once(o).chain(after.iter().copied()).collect() } else { vec![top] };
    for x in moved {
        f.op_mut(x).parent = Some(default);
        f.region_mut(default).ops.push(x);
    }
    f.append(default, Op::Yield, &results, vec![], &[], loc);
    ws
}

/// `v` as the worker sees it: mapped, or a constant made in region `r`.
fn worker_value(f: &mut Func, r: RegionId, v: ValueId, map: &mut HashMap<ValueId, ValueId>) -> ValueId {
    if let Some(&m) = map.get(&v) {
        return m;
    }
    if let ValueDef::Result(c, _) = f.value(v).def
        && let Op::Constant(k) = f.op(c).op
        && f.op(c).regions.is_empty()
    {
        let (ty, loc) = (f.ty(v).clone(), f.op(c).loc);
        let x = f.append(r, Op::Constant(k), &[], vec![ty], &[], loc);
        let n = f.op(x).results[0];
        map.insert(v, n);
        return n;
    }
    v
}

/// A copy of the pure op `y` appended to region `r`, its operands and results mapped.
fn clone_into(f: &mut Func, r: RegionId, y: OpId, map: &mut HashMap<ValueId, ValueId>) {
    let yd = f.op(y).clone();
    let operands: Vec<ValueId> = yd.operands.iter().map(|&v| worker_value(f, r, v, map)).collect();
    let types = yd.results.iter().map(|&v| f.ty(v).clone()).collect();
    let c = f.append(r, yd.op.clone(), &operands, types, &[], yd.loc);
    for (&v, &n) in yd.results.iter().zip(&f.op(c).results.clone()) {
        map.insert(v, n);
        f.values[n.index()].name = f.value(v).name.clone();
    }
}

/// The producer's loop, built into `worker`: for every iteration, wait for the slot to be free, arm its
/// `ready` barrier, and run stage 0 with its loads as TMA copies into the slot.
fn producer(f: &mut Func, p: &LoopPlan, rings: &Rings, worker: RegionId, map: &mut HashMap<ValueId, ValueId>) {
    let o = p.loop_op;
    let d = f.op(o).clone();
    let body = d.regions[0];
    let args = f.region(body).args.clone();
    let yields = f.op(*f.region(body).ops.last().expect("yield")).operands.clone();
    let loc = d.loc;
    let i32t = Type::scalar(ScalarType::I32);
    let i1t = Type::scalar(ScalarType::I1);
    let at = |f: &mut Func, r: RegionId, op: Op, ins: &[ValueId], ty: Option<Type>| -> Option<ValueId> {
        let x = f.append(r, op, ins, ty.into_iter().collect(), &[], loc);
        f.op(x).results.first().copied()
    };
    // Constants the loop's bounds and stage 0 read, made in the worker.
    let mut consts: Vec<ValueId> = d.operands[..3].to_vec();
    consts.extend(p.early_args.iter().map(|&j| d.operands[3 + j]));
    for &x in &p.stage0 {
        f.walk_op(x, &mut |y| consts.extend(f.op(y).operands.iter().copied()));
    }
    for v in consts {
        if map.contains_key(&v) {
            continue;
        }
        if let ValueDef::Result(c, _) = f.value(v).def
            && let Op::Constant(k) = f.op(c).op
            && f.op(c).regions.is_empty()
            && !is_in(f, c, o)
        {
            let ty = f.ty(v).clone();
            let n = at(f, worker, Op::Constant(k), &[], Some(ty)).expect("a result");
            map.insert(v, n);
        }
    }
    let m = |map: &HashMap<ValueId, ValueId>, v: ValueId| *map.get(&v).unwrap_or(&v);
    let zero = at(f, worker, Op::Constant(Const::Int(0)), &[], Some(i32t.clone())).expect("a result");
    let mut operands: Vec<ValueId> = d.operands[..3].iter().map(|&v| m(map, v)).collect();
    operands.extend(p.early_args.iter().map(|&j| m(map, d.operands[3 + j])));
    operands.extend([zero, zero]);
    let mut types: Vec<Type> = p.early_args.iter().map(|&j| f.ty(args[j + 1]).clone()).collect();
    types.extend([i32t.clone(), i32t.clone()]);
    let lbody = f.new_region();
    let iv = f.add_region_arg(lbody, f.ty(args[0]).clone(), f.value(args[0]).name.clone());
    map.insert(args[0], iv);
    for &j in &p.early_args {
        let a = f.add_region_arg(lbody, f.ty(args[j + 1]).clone(), f.value(args[j + 1]).name.clone());
        map.insert(args[j + 1], a);
    }
    let slot = f.add_region_arg(lbody, i32t.clone(), Some("ring_slot".into()));
    let phase = f.add_region_arg(lbody, i32t.clone(), Some("ring_phase".into()));
    let attrs = tessel_tile::ops::LoopAttrs { num_stages: Some(1), ..Default::default() };
    f.append(worker, Op::For(attrs), &operands, types, &[lbody], loc);
    f.append(worker, Op::Yield, &[], vec![], &[], loc);

    // The slot's previous use released (a fresh barrier passes parity 1), its barrier armed.
    let one = at(f, lbody, Op::Constant(Const::Int(1)), &[], Some(i32t.clone())).expect("a result");
    let yes = at(f, lbody, Op::Constant(Const::Int(1)), &[], Some(i1t.clone())).expect("a result");
    let bar_t = tessel_tile::tma::barrier_type();
    let empty = at(f, lbody, Op::MemDescIndex, &[map[&rings.empty], slot], Some(bar_t.clone())).expect("a result");
    let parity = binary(f, lbody, BinOp::Xor, phase, one, loc);
    at(f, lbody, Op::mbarrier_wait(), &[empty, parity], None);
    let ready = at(f, lbody, Op::MemDescIndex, &[map[&rings.ready], slot], Some(bar_t)).expect("a result");
    at(f, lbody, Op::MBarrierExpect { bytes: rings.bytes }, &[ready, yes], None);
    for &x in &p.stage0 {
        if let Some(n) = p.loads.iter().position(|l| l.load == x) {
            let (ring, one_buf) = &rings.rings[n];
            let view = at(f, lbody, Op::MemDescIndex, &[map[ring], slot], Some(one_buf.clone())).expect("a result");
            let xd = f.op(x);
            let mut ins = vec![m(map, xd.operands[0]), view, ready];
            ins.extend(xd.operands[1..].iter().map(|&v| m(map, v)));
            ins.push(yes);
            at(f, lbody, Op::TmaLoad { multicast: false }, &ins, None);
        } else {
            let xd = f.op(x).clone();
            let operands: Vec<ValueId> = xd.operands.iter().map(|&v| m(map, v)).collect();
            let regions: Vec<RegionId> =
                xd.regions.iter().map(|&r| tessel_tile::passes::clone_region(f, r, map)).collect();
            let types = xd.results.iter().map(|&r| f.ty(r).clone()).collect();
            let c = f.append(lbody, xd.op.clone(), &operands, types, &regions, xd.loc);
            for (&r, &cr) in xd.results.iter().zip(&f.op(c).results.clone()) {
                map.insert(r, cr);
                f.values[cr.index()].name = f.value(r).name.clone();
            }
        }
    }
    // The next slot, and the phase flipped when it wraps.
    let up = binary(f, lbody, BinOp::Add, slot, one, loc);
    let n = at(f, lbody, Op::Constant(Const::Int(p.buffers as i64)), &[], Some(i32t.clone())).expect("a result");
    let wrapped = at(f, lbody, Op::Cmp(tessel_tile::ops::CmpPred::Eq), &[up, n], Some(i1t)).expect("a result");
    let next_slot = at(f, lbody, Op::Select, &[wrapped, zero, up], Some(i32t.clone())).expect("a result");
    let flip = at(f, lbody, Op::Select, &[wrapped, one, zero], Some(i32t)).expect("a result");
    let next_phase = binary(f, lbody, BinOp::Xor, phase, flip, loc);
    let mut next: Vec<ValueId> = p.early_args.iter().map(|&j| m(map, yields[j])).collect();
    next.extend([next_slot, next_phase]);
    f.append(lbody, Op::Yield, &next, vec![], &[], loc);
}

fn binary(f: &mut Func, r: RegionId, op: BinOp, a: ValueId, b: ValueId, loc: Option<tessel_tile::ir::Loc>) -> ValueId {
    let ty = f.ty(a).clone();
    let x = f.append(r, Op::Binary { op, propagate_nan: false }, &[a, b], vec![ty], &[], loc);
    f.op(x).results[0]
}

/// Whether op `x` is `o` or nested in it.
fn is_in(f: &Func, mut x: OpId, o: OpId) -> bool {
    loop {
        if x == o {
            return true;
        }
        match f.op(x).parent.and_then(|r| f.region(r).parent) {
            Some(p) => x = p,
            None => return false,
        }
    }
}
