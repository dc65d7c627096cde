//! Thread-block clusters (`num_ctas` > 1, sm_90a and newer): a program is a cluster of `num_ctas` CTAs.
//!
//! - `program_id`/`num_programs` read `%clusterid`/`%nclusterid` (Triton's program id is the cluster's).
//! - A layout's `block` in-dim is the CTA's rank in the cluster (`%cluster_ctarank`): each CTA holds the elements
//!   of its rank, so element coordinates XOR in the block bases of the rank's bits (`Lower::thread_xor_cta`). A
//!   zero block basis (or no `block` dim) means every CTA holds the same elements; such values are computed in
//!   every CTA alike; their effects on global memory are one CTA's ([`super::memory::global_owner_pred`]), those on
//!   shared memory every CTA's own.
//! - `reduce` along an axis the block bases split combines the CTAs' partials through distributed shared memory
//!   ([`reduce_across_ctas`]): each CTA writes its partials into its own scratch, `barrier.cluster` (release,
//!   acquire), every thread reads the peers' partials with `mapa` + `ld.shared::cluster` and combines them in
//!   one order in every CTA (so replicated results agree bit for bit), and a second `barrier.cluster` keeps each
//!   CTA's scratch (and the CTA itself) alive until its peers have read it.
//! - `convert_layout` between layouts whose block bases differ goes through the CTA's own shared memory when each
//!   CTA already holds what it needs, else through distributed shared memory ([`convert_across_ctas`]).
//! - Every other op on a tensor split across CTAs is refused by [`check`], with the op, before any code is
//!   emitted: the pipeline reports it at the op's source span.
//! - Auto mode spreads tensors over the CTAs as Gluon authors do (`tessel_tile::layout::spreads_over_ctas`); an
//!   auto-mode kernel it does not spread runs in its cluster's first CTA alone ([`leader_only`]).

use tessel_layouts::LinearLayout;
use tessel_tile::ir::{Func, OpId};
use tessel_tile::ops::Op;
use tessel_tile::types::Type;

use super::Lower;
use super::coords::{bases, over_ctas};
use super::shared::{ld_shared_space, slot_bytes, st_shared};
use crate::CompileError;
use crate::ptx::{Reg, RegClass, special};

/// Whether a layout spreads a tensor over the CTAs of a cluster (some `block` basis is nonzero).
pub(crate) fn splits(l: &LinearLayout) -> bool {
    bases(l, "block").iter().any(|b| b.iter().any(|&x| x != 0))
}

fn split_ty(ty: &Type) -> bool {
    matches!(ty, Type::Tensor { layout: Some(l), .. } if splits(&l.linear))
}

/// The ops [`check`] lets touch a tensor split across CTAs: those whose lowering reads the block bases.
fn cluster_aware(op: &Op) -> bool {
    use tessel_tile::op_facts::LayoutKind;
    match op {
        // Per-register ops: each CTA computes its own elements (a scan only along a dim the CTAs do not split).
        Op::Scan { .. } | Op::Atomic { .. } | Op::AtomicCas { .. } => true,
        // Each CTA copies its part of the pointers into its part of the buffer (`cluster_local` checks that the two
        // are spread alike; `local::offsets` takes the per-CTA part), a buffer every CTA holds whole in full.
        Op::AsyncCopy => true,
        Op::Load { .. } | Op::Store { .. } => true,
        // Each CTA gathers into its part of the buffer from its part of the indices (`cluster_local` checks them).
        Op::TmaGather { .. } => true,
        // Each CTA's part of the accumulator from its parts of the operands (`cluster_local` checks the bases).
        Op::WarpGroupDot { .. } | Op::WarpGroupDotWait { .. } => true,
        o if o.facts().layout == LayoutKind::Same => true,
        Op::Constant(_)
        | Op::Arange { .. }
        | Op::Splat
        | Op::Reduce { .. }
        | Op::Broadcast
        | Op::ExpandDims { .. }
        | Op::Reshape { .. }
        | Op::Permute { .. }
        | Op::Join
        | Op::Split
        | Op::Cat
        | Op::ConvertLayout
        | Op::Assert { .. }
        // Each CTA prints the elements it owns, their indices through the block bases (`Lower::thread_coord`).
        | Op::Print { .. } => true,
        o => o.facts().layout == LayoutKind::Structured,
    }
}

/// What of the CTA pairs and multicast commits (`tessel_tile::cluster`) an op uses that codegen does not lower:
/// tensor memory split over the CTAs outside `cta_group::2` (a `cga_layout` without `two_ctas`). (Two-CTA
/// barriers, pair MMAs dense and block-scaled, pair copies, multicast commits and each CTA's part of a pair's
/// tensor memory and scales are lowered: `tcgen05`, `asynchronous`.)
fn not_lowered_yet<'t>(mut tys: impl Iterator<Item = &'t Type>) -> Option<&'static str> {
    tys.find_map(|ty| match ty {
        Type::MemDesc { layout, .. } => match &layout.spec {
            Some(tessel_layouts::AnyLayout::TensorMemory(t)) if !t.two_ctas && t.cta_split != [1, 1] => {
                Some("tensor memory split over the CTAs without `two_ctas` (`TensorMemoryLayout` with a cga_layout)")
            }
            _ => None,
        },
        _ => None,
    })
}

/// The cluster rules a kernel must keep before code generation: the op (`None`: the kernel as a whole) and why,
/// for the first it breaks. With `num_ctas` = 1 there are none.
pub fn check(f: &Func) -> Result<(), (Option<OpId>, String)> {
    let n = f.config.num_ctas;
    if n == 1 {
        return Ok(());
    }
    if f.target == tessel_tile::Target::Sm80 {
        return Err((None, format!("num_ctas = {n}: thread-block clusters need sm_90a or newer")));
    }
    if leader_only(f) {
        // The program runs in one CTA, as at num_ctas = 1: none of the rules below applies.
        return Ok(());
    }
    let uses = f.use_counts();
    tessel_tile::cluster::cta_group(f).map_err(|(o, m)| (Some(o), m))?;
    for o in f.all_ops() {
        let d = f.op(o);
        let tys = d.operands.iter().chain(&d.results).map(|&v| f.ty(v));
        for ty in tys.clone() {
            if let Type::Tensor { layout: Some(l), .. } = ty
                && l.linear.has_in_dim("block")
                && l.linear.in_dim_size("block") != 1
                && l.linear.in_dim_size("block") != n
            {
                let m = l.linear.in_dim_size("block");
                return Err((Some(o), format!("a layout spans {m} CTAs but the kernel has num_ctas = {n}")));
            }
        }
        let name = d.op.name();
        if let Some(why) = not_lowered_yet(tys.clone()) {
            return Err((
                Some(o),
                format!("`{name}`: {why} (the interpreter runs it) is not supported by codegen yet"),
            ));
        }
        // A scan along a dim the CTAs split would need the earlier CTAs' totals; along another, each CTA scans its
        // own rows.
        let scan_across = match &d.op {
            Op::Scan { axis, .. } => tys.clone().any(|ty| match ty {
                Type::Tensor { layout: Some(l), .. } => {
                    bases(&l.linear, "block").iter().any(|b| b[*axis as usize] != 0)
                }
                _ => false,
            }),
            _ => false,
        };
        // A register tensor into or out of a buffer spread as it is: each CTA moves its own part
        // (`cluster_local` checks that the two are spread alike); a pair's tensor memory likewise.
        let own_part = (matches!(d.op, Op::LocalStore | Op::LocalLoad | Op::LocalAlloc)
            && tys.clone().any(|ty| matches!(ty, Type::MemDesc { layout, .. } if splits(&layout.linear))))
            || (matches!(d.op, Op::TmemLoad | Op::TmemStore | Op::TmemAlloc)
                && tys.clone().any(tessel_tile::cluster::two_ctas));
        if tys.clone().any(split_ty) && (!cluster_aware(&d.op) || scan_across) && !own_part {
            return Err((
                Some(o),
                format!(
                    "`{name}` on a tensor spread over the CTAs of a cluster (a layout with nonzero cga_layout/block \
                     bases) is not supported yet; convert it to a layout every CTA holds whole first"
                ),
            ));
        }
        let replicated = |ty: &Type| match ty {
            Type::Tensor { layout: Some(l), .. } => {
                bases(&over_ctas(&l.linear, n), "block").iter().any(|b| b.iter().all(|&x| x == 0))
            }
            _ => true,
        };
        if matches!(d.op, Op::Atomic { .. } | Op::AtomicCas { .. })
            && uses[d.results[0].index()] > 0
            && replicated(f.ty(d.results[0]))
        {
            return Err((
                Some(o),
                format!(
                    "`{name}` whose old values are used, on elements every CTA of the cluster holds: one CTA \
                     does the atomic and the others cannot see its result yet"
                ),
            ));
        }
        if d.op == Op::ConvertLayout
            && let (Type::Tensor { layout: Some(src), .. }, Type::Tensor { layout: Some(dst), .. }) =
                (f.ty(d.operands[0]), f.ty(d.results[0]))
            && bases(&over_ctas(&src.linear, n), "block") != bases(&over_ctas(&dst.linear, n), "block")
        {
            // Data stays in each CTA (the planner's transfers) or comes from another (distributed shared memory).
            let (src, dst) = (over_ctas(&src.linear, n), over_ctas(&dst.linear, n));
            if let Err(e) = source_positions(&src, &dst) {
                return Err((Some(o), format!("`convert_layout` between layouts whose CTAs differ: {e}")));
            }
        }
        // A host descriptor's tensor map is a kernel parameter; a tiled one made in the kernel is written to its
        // CTA's slot of the program's global scratch (`tma::make_desc`). An im2col map has no such slots.
        if matches!(d.op, Op::MakeTensorDescIm2col { .. })
            && tessel_tile::tma::host_im2col_base(f, d.results[0]).is_none()
        {
            return Err((Some(o), format!("`{name}` in a cluster kernel (num_ctas = {n}) is not supported yet")));
        }
    }
    // The workers of a `warp_specialize` skip the top-level code before it, so a cluster barrier there (which
    // needs every thread of the cluster) would wait for them forever.
    let top = &f.region(f.body).ops;
    if let Some(ws) = top.iter().position(|&o| matches!(f.op(o).op, Op::WarpSpecialize(_))) {
        for &o in &top[..ws] {
            let d = f.op(o);
            let across = matches!(d.op, Op::Reduce { .. } | Op::ConvertLayout)
                && d.operands.iter().chain(&d.results).any(|&v| split_ty(f.ty(v)));
            if d.op == Op::ClusterBarrier || across {
                return Err((
                    Some(o),
                    format!(
                        "`{}` meets the other CTAs of the cluster at a cluster barrier, which every thread must \
                         reach, but the workers of the kernel's warp_specialize skip the code before it; move it \
                         after the warp_specialize",
                        d.op.name()
                    ),
                ));
            }
        }
    }
    // Shared memory spread over the CTAs: each CTA's part, and the ops that can do their share on it.
    super::cluster_local::localize(f).map(|_| ())
}

/// Where every CTA of a cluster must meet once its barriers are initialized: after the last top-level
/// `mbarrier_init` before the first top-level op that reaches other CTAs' barriers ([`reaches_peers`]), which
/// must exist there first. When that op is the
/// kernel's `warp_specialize`, the meeting is its hand-off, where the workers (which skip the top-level code
/// before it) join the CTA. `None` without such ops or clusters; an error when no barrier is initialized at the
/// top level before the first of them (the meeting must be reached by every thread of every CTA, so it cannot
/// sit in a loop, a branch or a partition).
pub(crate) fn multicast_init_point(f: &Func) -> Result<Option<OpId>, CompileError> {
    if f.config.num_ctas <= 1 {
        return Ok(None);
    }
    let mut last_init = None;
    for &o in &f.region(f.body).ops {
        let mut multicast = false;
        f.walk_op(o, &mut |x| multicast |= reaches_peers(f, x));
        if multicast {
            return match last_init {
                Some(_) if matches!(f.op(o).op, Op::WarpSpecialize(_)) => Ok(Some(o)),
                Some(i) => Ok(Some(i)),
                None => Err(CompileError::new(
                    "a multicast TMA load, a cta_mask arrival, a two-CTA barrier or a CTA pair's MMA reaches the \
                     barriers of other CTAs of the cluster, so they must be initialized (mbarrier.init) at the \
                     kernel's top level before it: each CTA's must exist before another CTA reaches it",
                )),
            };
        }
        if matches!(f.op(o).op, Op::MBarrierInit { .. }) {
            last_init = Some(o);
        }
    }
    Ok(None)
}

/// Whether op `x` reaches another CTA's barrier or memory: a multicast TMA load, an mbarrier arrival with a
/// `cta_mask`, an op on a two-CTA barrier (the odd CTA's arrivals, expectations and copies land on the even
/// CTA's), a CTA pair's tcgen05 MMA or commit (the even CTA's MMA writes the odd CTA's tensor memory and its
/// commit arrives on the odd CTA's barrier), and a cluster launch control request (its response is multicast).
fn reaches_peers(f: &Func, x: OpId) -> bool {
    let d = f.op(x);
    let pairs = || f.values.iter().any(|v| tessel_tile::cluster::two_ctas(&v.ty));
    match d.op {
        Op::TmaLoad { multicast: true } | Op::TmaGather { multicast: true } => true,
        Op::MBarrierArrive { cta_mask, .. } if cta_mask != 0 => true,
        Op::Tcgen05Mma | Op::Tcgen05Commit { .. } => pairs(),
        // A cluster's request: the response and its bytes reach every CTA's buffer and barrier.
        Op::ClcTryCancel => true,
        // The odd CTA's arrivals, expectations and copies on a two-CTA barrier (views of it reach nothing).
        Op::MBarrierArrive { .. } | Op::MBarrierExpect { .. } | Op::TmaLoad { .. } | Op::TmaGather { .. } => {
            d.operands.iter().any(|&v| tessel_tile::cluster::barrier_ctas(f.ty(v)) == 2)
        }
        _ => false,
    }
}

/// Whether the kernel's program runs in its cluster's first CTA alone while the other CTAs exit at once: an
/// auto-mode kernel at `num_ctas` > 1 none of whose tensors the layout pass spread over the CTAs
/// (`tessel_tile::layout::spread`: a kernel with tcgen05 or mma.sync dots or im2col descriptors, one whose
/// reductions across the CTAs are too small to pay, or one the compile driver laid out again unspread because
/// [`check`] refused an op on a spread tensor). Every CTA would hold
/// every element; rather than have each compute the whole program and one write it, which atomics whose old
/// values are used and loads of memory other programs write (spin locks) would break, the first CTA runs it
/// exactly as a one-CTA kernel. The launch stays a cluster launch of `num_ctas` CTAs, as the caller asked, with
/// `program_id` the cluster's.
pub(crate) fn leader_only(f: &Func) -> bool {
    f.config.num_ctas > 1 && !f.attrs.gluon && !spread(f)
}

/// Whether some live tensor of `f` is spread over the CTAs of its cluster.
pub fn spread(f: &Func) -> bool {
    f.all_ops().into_iter().any(|o| {
        let d = f.op(o);
        d.results.iter().chain(&d.operands).any(|&v| split_ty(f.ty(v)))
    })
}

/// Whether a CTA of the cluster writes into or arrives on another's shared memory (or tensor memory)
/// asynchronously ([`reaches_peers`]): then every CTA must wait for the others before it exits.
pub(crate) fn peers_reach_shared_memory(f: &Func) -> bool {
    f.config.num_ctas > 1 && f.all_ops().into_iter().any(|o| reaches_peers(f, o))
}

/// `%clusterid.*`/`%nclusterid.*` in a cluster kernel, else `%ctaid.*`/`%nctaid.*`: the program's id and the
/// number of programs along `axis`.
pub(crate) fn program_sreg(clusters: bool, count: bool, axis: usize) -> Option<&'static str> {
    let table = match (clusters, count) {
        (false, false) => ["%ctaid.x", "%ctaid.y", "%ctaid.z"],
        (false, true) => ["%nctaid.x", "%nctaid.y", "%nctaid.z"],
        (true, false) => ["%clusterid.x", "%clusterid.y", "%clusterid.z"],
        (true, true) => ["%nclusterid.x", "%nclusterid.y", "%nclusterid.z"],
    };
    table.get(axis).copied()
}

impl Lower<'_> {
    /// `%cluster_ctarank`, read once at the kernel entry.
    pub(crate) fn cta_rank(&mut self) -> Reg {
        if let Some(r) = self.cta_rank {
            return r;
        }
        let r = self.b.reg(RegClass::B32);
        self.b.set_prologue(true);
        self.b.op("mov.u32", r, special("%cluster_ctarank"));
        self.b.set_prologue(false);
        self.cta_rank = Some(r);
        r
    }

    /// `barrier.cluster.arrive.release` + `wait.acquire` over every thread of every CTA of the cluster: orders the
    /// CTA's own shared-memory accesses too, as `bar.sync` does.
    pub(crate) fn cluster_barrier(&mut self) {
        self.b.effect("barrier.cluster.arrive.release.aligned", ());
        self.b.effect("barrier.cluster.wait.acquire.aligned", ());
        self.hazards.clear();
    }
}

/// One group of a reduction: its output element's register part and its value per operand.
pub(crate) type Group = (Vec<u32>, Vec<Reg>);

/// Step 4 of `reduce` in a cluster: combines each group's value over the CTAs whose block bases move along the
/// reduced axis `a`, through distributed shared memory. `lin` is the operand layout, `out_shape` the result's
/// shape, `drop_axis` the map from operand to result coordinates, `region` the combine region.
pub(crate) fn reduce_across_ctas(
    l: &mut Lower,
    lin: &LinearLayout,
    a: usize,
    out_shape: &[u32],
    region: tessel_tile::ir::RegionId,
    groups: &mut [Group],
    drop_axis: &dyn Fn(&[u32]) -> Vec<u32>,
) -> Result<(), CompileError> {
    use super::coords::flatten;
    let block = bases(lin, "block");
    let axis_ctas: Vec<usize> = block.iter().enumerate().filter(|(_, b)| b[a] != 0).map(|(i, _)| i).collect();
    if axis_ctas.is_empty() {
        return Ok(());
    }
    if axis_ctas.iter().any(|&i| block[i].iter().enumerate().any(|(d, &x)| d != a && x != 0)) {
        return Err(CompileError::new("a block (CTA) basis mixes the reduced axis with other dims; not supported yet"));
    }
    if l.bar != (0, 0) {
        return Err(CompileError::new("a reduction across the CTAs of a cluster inside warp_specialize"));
    }
    let Some((_, first)) = groups.first() else { return Ok(()) };
    let classes: Vec<RegClass> = first.iter().map(|r| r.class).collect();
    let out_numel: u32 = out_shape.iter().product::<u32>().max(1);
    let region_bytes: Vec<u32> = classes.iter().map(|&c| out_numel * slot_bytes(c)).collect();
    l.b.comment("reduce: combine the CTAs of the axis through distributed shared memory");
    // The result element of a group is its register part XOR the thread's (lanes, warps, CTA rank), axis dropped.
    let flat = |b: &Vec<u32>| flatten(&drop_axis(b), out_shape);
    let lv: Vec<u32> = bases(lin, "lane").iter().map(flat).collect();
    let wv: Vec<u32> = bases(lin, "warp").iter().map(flat).collect();
    let bv: Vec<u32> = block.iter().map(flat).collect();
    let thread = l.thread_xor_cta(lv, wv, bv);
    let base = l.scratch(region_bytes.iter().sum())?;
    let mut addrs: Vec<Vec<Reg>> = Vec::new();
    for (key, vals) in groups.iter() {
        let slot = l.xor_const(thread, flatten(key, out_shape), 0);
        let mut off = 0;
        let mut per_op = Vec::new();
        for (k, &c) in classes.iter().enumerate() {
            let addr = l.b.reg(RegClass::B32);
            l.b.op("mad.lo.u32", addr, (slot, slot_bytes(c), base));
            if off > 0 {
                l.b.op("add.u32", addr, (addr, off));
            }
            st_shared(l, addr, vals[k]);
            per_op.push(addr);
            off += region_bytes[k];
        }
        addrs.push(per_op);
    }
    l.cluster_barrier();
    // The peers along the axis: this CTA's rank with the axis bits replaced by the peer's index.
    let rank = l.cta_rank();
    let axis_mask: u32 = axis_ctas.iter().fold(0, |m, &i| m | 1 << i);
    let others = l.b.reg(RegClass::B32);
    l.b.op("and.b32", others, (rank, !axis_mask));
    let w = 1usize << axis_ctas.len();
    let peers: Vec<Reg> = (0..w)
        .map(|j| {
            let bits =
                axis_ctas.iter().enumerate().filter(|(k, _)| j >> k & 1 == 1).fold(0u32, |m, (_, &i)| m | 1 << i);
            let p = l.b.reg(RegClass::B32);
            l.b.op("or.b32", p, (others, bits));
            p
        })
        .collect();
    for (g, per_op) in addrs.iter().enumerate() {
        let mut level: Vec<Vec<Reg>> = Vec::with_capacity(w);
        for &peer in &peers {
            let vals = per_op
                .iter()
                .zip(&classes)
                .map(|(&addr, &c)| {
                    let remote = l.b.reg(RegClass::B32);
                    l.b.op("mapa.shared::cluster.u32", remote, (addr, peer));
                    ld_shared_space(l, remote, c, "shared::cluster")
                })
                .collect();
            level.push(vals);
        }
        // Every CTA combines the partials in the order of the peers' axis index, widest stride first.
        let mut stride = w / 2;
        while stride > 0 {
            for i in 0..stride {
                level[i] = l.combine(region, &level[i], &level[i + stride])?;
            }
            stride /= 2;
        }
        groups[g].1 = level.swap_remove(0);
    }
    l.cluster_barrier();
    Ok(())
}

/// Where each element of a `convert_layout` from `src` to `dst` comes from when it crosses CTAs: the map from the
/// destination's (register, lane, warp, block) to the source's, as `(register, lane, warp, block)` positions of
/// its out-dims (a replicated source element is read from its first holder).
fn source_positions(src: &LinearLayout, dst: &LinearLayout) -> Result<(LinearLayout, [usize; 4]), String> {
    let t = dst.invert_and_compose(src).map_err(|e| e.to_string())?;
    let names = t.out_dim_names();
    let at = |n: &str| names.iter().position(|d| d.as_str() == n).ok_or_else(|| format!("no `{n}` in {t:?}"));
    Ok((t.clone(), [at("register")?, at("lane")?, at("warp")?, at("block")?]))
}

/// `convert_layout` that moves data between the CTAs of a cluster, through distributed shared memory: every
/// thread writes each of its registers into its CTA's scratch at its position (register, then lane, then warp:
/// no two threads share a slot), `barrier.cluster`, each destination register reads its element from the
/// position and CTA the source layout gives it (`mapa` + `ld.shared::cluster`; both linear in the destination's
/// register, lane, warp and CTA bits), and a second `barrier.cluster` keeps the scratch until every peer has read.
pub(crate) fn convert_across_ctas(
    l: &mut Lower,
    regs: &[Reg],
    src: &LinearLayout,
    dst: &LinearLayout,
    class: RegClass,
) -> Result<Vec<Reg>, CompileError> {
    if l.bar != (0, 0) {
        return Err(CompileError::new("a conversion across the CTAs of a cluster inside warp_specialize"));
    }
    let (t, [reg_d, lane_d, warp_d, block_d]) =
        source_positions(src, dst).map_err(|e| CompileError::new(format!("a conversion across CTAs: {e}")))?;
    let lr = src.in_dim_size_log2("register");
    let lw = src.in_dim_size_log2("warp");
    let eb = slot_bytes(class);
    let slot = move |v: &[u32]| v[reg_d] | v[lane_d] << lr | v[warp_d] << (lr + 5);
    l.b.comment("convert_layout: across the CTAs of the cluster through distributed shared memory");
    let base = l.scratch((eb << (lr + 5 + lw)).max(eb))?;
    // Stores: register r of thread tid at slot r | tid << lr.
    let lane_vals: Vec<u32> = (0..5).map(|i| 1 << (lr + i)).collect();
    let warp_vals: Vec<u32> = (0..lw).map(|j| 1 << (lr + 5 + j)).collect();
    let own = l.thread_xor(lane_vals, warp_vals);
    for (r, &v) in regs.iter().enumerate() {
        let at = l.xor_const(own, r as u32, 0);
        let addr = l.b.reg(RegClass::B32);
        l.b.op("mad.lo.u32", addr, (at, eb, base));
        st_shared(l, addr, v);
    }
    l.cluster_barrier();
    // Loads: the slot and CTA of each destination element, a thread part and a per-register constant each.
    let image = |dim: &str, f: &dyn Fn(&[u32]) -> u32| -> Vec<u32> {
        let n = dst.in_dim_size_log2(dim);
        (0..n)
            .map(|i| {
                let input: Vec<u32> =
                    dst.in_dim_names().iter().map(|d| if d.as_str() == dim { 1 << i } else { 0 }).collect();
                f(&t.apply(&input))
            })
            .collect()
    };
    let rank_of = move |v: &[u32]| v[block_d];
    let slot_thread = l.thread_xor_cta(image("lane", &slot), image("warp", &slot), image("block", &slot));
    let rank_thread = l.thread_xor_cta(image("lane", &rank_of), image("warp", &rank_of), image("block", &rank_of));
    let mut out = Vec::new();
    for r in 0..dst.in_dim_size("register") {
        let input: Vec<u32> = dst.in_dim_names().iter().map(|d| if d.as_str() == "register" { r } else { 0 }).collect();
        let v = t.apply(&input);
        let at = l.xor_const(slot_thread, slot(&v), 0);
        let addr = l.b.reg(RegClass::B32);
        l.b.op("mad.lo.u32", addr, (at, eb, base));
        let rank = l.xor_const(rank_thread, rank_of(&v), 0);
        let remote = l.b.reg(RegClass::B32);
        l.b.op("mapa.shared::cluster.u32", remote, (addr, rank));
        out.push(ld_shared_space(l, remote, class, "shared::cluster"));
    }
    l.cluster_barrier();
    Ok(out)
}

/// Checks that reject what code generation cannot lower, for tests of the check itself.
#[cfg(test)]
mod tests {
    use super::program_sreg;

    #[test]
    fn program_ids_of_clusters() {
        assert_eq!(program_sreg(true, false, 0), Some("%clusterid.x"));
        assert_eq!(program_sreg(true, true, 1), Some("%nclusterid.y"));
        assert_eq!(program_sreg(false, false, 2), Some("%ctaid.z"));
        assert_eq!(program_sreg(false, false, 3), None);
    }
}
