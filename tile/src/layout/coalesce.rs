//! Coalescing: the layout of every memory op's tile (Triton's Coalesce pass).
//!
//! For a load, store or atomic through a tensor of pointers: the dims ordered by the pointer's contiguity
//! (most contiguous fastest, ties to the later dim, so row-major by default), a vector of
//! `min(16 bytes / element, contiguity, divisibility / element)` elements along the fastest dim, and a
//! [`BlockedLayout`] with that many elements per thread along it and threads, then warps, filling the dims in
//! `order`. Memory ops connected by tensor data flow that share shape and order take the widest vector among
//! them (so a load and the store of its result agree), capped at the elements each thread owns; stores and
//! atomics never exceed their own vector (a wider one leaves gaps in each warp's write).
//!
//! `dot` accumulators get the default blocked layout (one element per thread, row-major); TMA-descriptor
//! tiles get a row-major blocked layout with 16-byte vectors along the last dim.
//!
//! In a cluster kernel (`num_ctas` > 1) whose tensors are spread over the CTAs ([`Ctas`]), every blocked layout
//! also splits its tensor among the CTAs ([`cta_split`]), slowest dim first, and the threads fill each CTA's part.

use std::collections::HashMap;

use tessel_layouts::{BlockedLayout, CgaLayout, DistributedLayout, standard::WARP_SIZE};

use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::layout::accelerate;
use crate::layout::axis::AxisAnalysis;
use crate::layout::rules::{L, from_spec};
use crate::ops::Op;
use crate::types::{Elem, Type};

/// How many CTAs share each tensor: 1, or a cluster's `num_ctas` when auto mode spreads its tensors over them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ctas(pub u32);

impl Ctas {
    /// Every tensor held whole by each CTA (a one-CTA kernel, or a cluster whose first CTA runs it alone).
    pub const ONE: Ctas = Ctas(1);
}

/// How `ctas` CTAs share a tensor of `shape` held in vectors of `size_per_thread` (Triton's default CTA layout
/// for `num_ctas` > 1), as Gluon's `cga_layout` bases: the dims are split from the slowest (`order`'s last) to
/// the fastest, each into as many parts as CTAs are left while every part keeps at least one vector along it;
/// CTAs still left over hold copies (zero bases). The split of dim `d` cuts it into contiguous ranges; the
/// rank's low bits go to the fastest dim's split (none when it is not split), then to the copies, then to the
/// slower dims' splits: Triton's legacy arrangement, with the copies on the fastest dim and the CTA order the
/// layout's order.
pub fn cta_split(shape: &[u32], size_per_thread: &[u32], order: &[u32], ctas: Ctas) -> CgaLayout {
    if ctas.0 <= 1 {
        return CgaLayout::Single;
    }
    let rank = shape.len();
    let mut split = vec![1u32; rank];
    let mut left = ctas.0;
    for &d in order.iter().rev() {
        let d = d as usize;
        let vectors = (shape[d] / size_per_thread[d].max(1)).max(1);
        // Powers of two throughout: the largest split that fits both.
        split[d] = left.min(1 << vectors.ilog2());
        left /= split[d];
    }
    let mut bases = Vec::new();
    for (k, &d) in order.iter().enumerate() {
        let d = d as usize;
        for i in 0..split[d].trailing_zeros() {
            let mut b = vec![0; rank];
            b[d] = 1 << i;
            bases.push(b);
        }
        if k == 0 {
            bases.extend((0..left.trailing_zeros()).map(|_| vec![0; rank]));
        }
    }
    CgaLayout::Bases(bases)
}

/// Triton's `BlockedEncodingAttr::get(shape, sizePerThread, order, numWarps, threadsPerWarp, numCTAs)`: the
/// CTAs' split ([`cta_split`]), then lanes and warps fill the dims of each CTA's part in `order`, each dim
/// taking at most as many threads as it has vectors; the slowest dim takes whatever is left.
pub fn blocked(shape: &[u32], size_per_thread: &[u32], order: &[u32], num_warps: u32, ctas: Ctas) -> BlockedLayout {
    blocked_over(shape, size_per_thread, order, num_warps, cta_split(shape, size_per_thread, order, ctas))
}

/// [`blocked`] with the CTAs' arrangement given (a dot operand's, which holds K whole in every CTA).
pub fn blocked_over(
    shape: &[u32],
    size_per_thread: &[u32],
    order: &[u32],
    num_warps: u32,
    cga: CgaLayout,
) -> BlockedLayout {
    let parts = cga.split_per_dim(shape.len()).unwrap_or_else(|_| vec![1; shape.len()]);
    let shape: Vec<u32> = shape.iter().zip(&parts).map(|(&s, &p)| (s / p).max(1)).collect();
    BlockedLayout { cga, ..blocked_in_cta(&shape, size_per_thread, order, num_warps) }
}

/// [`blocked`] for one CTA's part of the tensor, `shape`.
fn blocked_in_cta(shape: &[u32], size_per_thread: &[u32], order: &[u32], num_warps: u32) -> BlockedLayout {
    let rank = shape.len();
    let mut tpw = vec![1u32; rank];
    let mut wpc = vec![1u32; rank];
    let (mut lanes, mut warps, mut threads) = (WARP_SIZE, num_warps, num_warps * WARP_SIZE);
    let (mut prev_lanes, mut prev_warps) = (1, 1);
    for &i in &order[..rank - 1] {
        let i = i as usize;
        let per_cta = threads.clamp(1, (shape[i] / size_per_thread[i]).max(1));
        tpw[i] = per_cta.clamp(1, lanes);
        wpc[i] = (per_cta / tpw[i]).clamp(1, warps);
        warps /= wpc[i];
        lanes /= tpw[i];
        threads /= per_cta;
        prev_lanes *= tpw[i];
        prev_warps *= wpc[i];
    }
    let last = order[rank - 1] as usize;
    tpw[last] = WARP_SIZE / prev_lanes;
    wpc[last] = num_warps / prev_warps;
    BlockedLayout {
        size_per_thread: size_per_thread.to_vec(),
        threads_per_warp: tpw,
        warps_per_cta: wpc,
        order: order.to_vec(),
        cga: CgaLayout::Single,
    }
}

/// Triton's `getDefaultBlockedEncoding`: one element per thread, row-major.
pub fn default_blocked(shape: &[u32], num_warps: u32, ctas: Ctas) -> BlockedLayout {
    let order: Vec<u32> = (0..shape.len() as u32).rev().collect();
    blocked(shape, &vec![1; shape.len()], &order, num_warps, ctas)
}

/// Dims from most to least contiguous; ties go to the later dim (row-major).
pub fn order_from_contiguity(contiguity: &[u64]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..contiguity.len() as u32).rev().collect();
    order.sort_by(|&a, &b| contiguity[b as usize].cmp(&contiguity[a as usize]));
    order
}

/// The widest vector op `o`'s pointer allows along `dim`: bounded by 16 bytes, the contiguity and the
/// alignment (divisibility in bytes over the element size).
fn vector_width(f: &Func, axis: &AxisAnalysis, o: OpId, dim: usize) -> u32 {
    let ptr = f.op(o).operands[0];
    let ty = f.ty(ptr);
    let Some(Elem::Ptr(s, _)) = ty.elem() else { return 1 };
    let bits = s.bits() as u64;
    let bytes = (bits / 8).max(1);
    let Some(info) = axis.get(ptr) else { return 1 };
    let max_multiple = (info.divisibility[dim] / bytes).max(1);
    let max_contig = info.contiguity[dim].min(ty.shape()[dim] as u64);
    let alignment = max_multiple.min(max_contig);
    alignment.min(128 / bits).max(1) as u32
}

fn is_memory_op(f: &Func, o: OpId) -> bool {
    let d = f.op(o);
    matches!(d.op, Op::Load { .. } | Op::Store { .. } | Op::Atomic { .. } | Op::AtomicCas { .. })
        && f.ty(d.operands[0]).is_tensor()
}

/// Ops joined by tensor data flow (and by the regions they sit in): the groups whose memory ops agree.
fn components(f: &Func) -> HashMap<OpId, usize> {
    let ops = f.all_ops();
    let mut parent: Vec<usize> = (0..f.ops.len()).collect();
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        let mut y = x;
        while p[y] != r {
            let n = p[y];
            p[y] = r;
            y = n;
        }
        r
    }
    let union = |p: &mut Vec<usize>, a: usize, b: usize| {
        let (ra, rb) = (find(p, a), find(p, b));
        p[ra] = rb;
    };
    for &o in &ops {
        for &v in &f.op(o).operands {
            if !f.ty(v).is_tensor() {
                continue;
            }
            match f.value(v).def {
                ValueDef::Result(p, _) => union(&mut parent, o.index(), p.index()),
                ValueDef::Arg(r, _) => {
                    if let Some(p) = f.region(r).parent {
                        union(&mut parent, o.index(), p.index());
                    }
                }
            }
        }
        // Yields tie the values they carry to the loop or branch op.
        if f.op(o).op.is_terminator()
            && let Some(r) = f.op(o).parent
            && let Some(p) = f.region(r).parent
        {
            union(&mut parent, o.index(), p.index());
        }
    }
    ops.iter().map(|&o| (o, find(&mut parent, o.index()))).collect()
}

/// The anchor layouts: for each memory op, `dot` and descriptor access, the layout of its tile.
pub fn coalesce(
    f: &Func,
    axis: &AxisAnalysis,
    num_warps: u32,
    ctas: Ctas,
) -> Result<HashMap<OpId, L>, tessel_layouts::LayoutError> {
    // The threads that share a tile's elements: every CTA's, when the CTAs split it.
    let threads = num_warps * WARP_SIZE * ctas.0;
    let comps = components(f);
    let mem: Vec<OpId> = f.all_ops().into_iter().filter(|&o| is_memory_op(f, o)).collect();
    let order_of = |o: OpId| {
        let ptr = f.op(o).operands[0];
        let rank = f.ty(ptr).shape().len();
        axis.get(ptr).map_or_else(|| (0..rank as u32).rev().collect(), |i| order_from_contiguity(&i.contiguity))
    };
    let operands = if ctas.0 > 1 { dot_memory_ops(f, ctas) } else { HashMap::new() };
    let mut out = HashMap::new();
    for &o in &mem {
        let ptr = f.op(o).operands[0];
        let shape = f.ty(ptr).shape().to_vec();
        let order = order_of(o);
        let fastest = order[0] as usize;
        let own = vector_width(f, axis, o, fastest);
        let mut per_thread = mem
            .iter()
            .filter(|&&p| comps[&p] == comps[&o] && f.ty(f.op(p).operands[0]).shape() == shape && order_of(p) == order)
            .map(|&p| vector_width(f, axis, p, fastest))
            .fold(own, u32::max);
        let numel: u32 = shape.iter().product();
        per_thread = per_thread.min((numel / threads).max(1));
        if !matches!(f.op(o).op, Op::Load { .. }) {
            per_thread = per_thread.min(own);
        }
        let mut spt = vec![1; shape.len()];
        spt[fastest] = per_thread;
        let spec = match operands.get(&o) {
            Some(cga) => blocked_over(&shape, &spt, &order, num_warps, cga.clone()),
            None => blocked(&shape, &spt, &order, num_warps, ctas),
        };
        out.insert(o, from_spec(DistributedLayout::Blocked(spec), &shape)?);
    }
    for o in f.all_ops() {
        let d = f.op(o);
        let tile = match d.op {
            Op::Dot { .. } => match crate::layout::accelerate::accumulator_layout(f, o, ctas.0) {
                Some(mma) => Some(mma),
                None => {
                    let shape = f.ty(d.results[0]).shape().to_vec();
                    Some(from_spec(DistributedLayout::Blocked(default_blocked(&shape, num_warps, ctas)), &shape)?)
                }
            },
            // Every `dot_scaled` left after `dot_scaled::fall_back` runs on the block-scaled tcgen05.mma.
            Op::DotScaled { .. } => crate::layout::tcgen05::accumulator_layout(f, o).ok(),
            // A TMA store writes the tile into shared memory from whatever layout it is in (the copy then reads
            // it in the descriptor's layout): converting it first would only add a trip through shared memory,
            // which a fused persistent loop cannot spare while its rings are full.
            // (In a spread kernel, another store through the descriptor of a dot's result, a tile of zeros for an
            // empty K loop, is laid out as the dot's result: `dot_memory_ops`.)
            Op::DescStore if crate::tma::usable(f, d.operands[0]) && !operands.contains_key(&o) => None,
            Op::DescLoad | Op::DescStore => {
                let t: &Type = if matches!(d.op, Op::DescLoad) { f.ty(d.results[0]) } else { f.ty(d.operands[1]) };
                let shape = t.shape().to_vec();
                let bits = t.elem().map_or(32, Elem::bits);
                let last = shape.len() - 1;
                let numel: u32 = shape.iter().product();
                let mut spt = vec![1; shape.len()];
                spt[last] = (128 / bits).min(shape[last]).min((numel / threads).max(1)).max(1);
                let order: Vec<u32> = (0..shape.len() as u32).rev().collect();
                let spec = match operands.get(&o) {
                    Some(cga) => blocked_over(&shape, &spt, &order, num_warps, cga.clone()),
                    None => blocked(&shape, &spt, &order, num_warps, ctas),
                };
                Some(from_spec(DistributedLayout::Blocked(spec), &shape)?)
            }
            _ => None,
        };
        if let Some(t) = tile {
            out.insert(o, t);
        }
    }
    Ok(out)
}

/// In a kernel spread over a cluster's CTAs, the memory ops that meet a dot and the CTA arrangement each needs:
/// the loads of its operands (straight, or through casts, other one-operand elementwise ops and transposes) take the dot's
/// split ([`accelerate::wgmma_split`]) on their rows of A or columns of B, K whole; the stores of its result
/// (through such ops and the loop that carries it) take the accumulator's split, as do other tiles stored through
/// a descriptor the result is stored through. By the default rule instead, B's K would be split and gathered
/// across the CTAs before every dot, and an accumulator split along N would cross the CTAs again before its
/// store.
fn dot_memory_ops(f: &Func, ctas: Ctas) -> HashMap<OpId, CgaLayout> {
    use crate::op_facts::LayoutKind;
    // An elementwise op of one tensor operand (a cast, a scale by a scalar): its result is laid out as it.
    let one_tensor = |o: OpId| {
        let d = f.op(o);
        let t: Vec<ValueId> = d.operands.iter().copied().filter(|&x| f.ty(x).is_tensor()).collect();
        let elementwise =
            d.op.facts().layout == LayoutKind::Same && !matches!(d.op, Op::Scan { .. } | Op::InlineAsm { .. });
        (elementwise && t.len() == 1 && d.results.len() == 1).then(|| t[0])
    };
    let ops = f.all_ops();
    let mut out = HashMap::new();
    // The descriptors dot results are stored through, with the accumulator's split, and those stores.
    let (mut desc_splits, mut stored) = (HashMap::new(), std::collections::HashSet::new());
    for &o in &ops {
        if !matches!(f.op(o).op, Op::Dot { .. }) {
            continue;
        }
        let Some([sm, sn]) = accelerate::wgmma_split(f, o, ctas.0) else { continue };
        for index in 0..2 {
            let mut v = f.op(o).operands[index];
            // The operand's arrangement, carried back through transposes (`tl.trans(b)`: B loaded N-major).
            let mut cga = accelerate::operand_cga(sm, sn, index);
            while let ValueDef::Result(p, _) = f.value(v).def {
                match &f.op(p).op {
                    Op::Load { .. } | Op::DescLoad => {
                        out.insert(p, cga);
                        break;
                    }
                    // Result dim i is operand dim order[i]: the operand's basis along order[i] is the result's
                    // along i.
                    Op::Permute { order } => {
                        let CgaLayout::Bases(bases) = &cga else { break };
                        let back = bases
                            .iter()
                            .map(|b| {
                                let mut x = vec![0; b.len()];
                                for (i, &d) in order.iter().enumerate() {
                                    x[d as usize] = b[i];
                                }
                                x
                            })
                            .collect();
                        cga = CgaLayout::Bases(back);
                        v = f.op(p).operands[0];
                    }
                    _ => match one_tensor(p) {
                        Some(x) => v = x,
                        None => break,
                    },
                }
            }
        }
        // Forward from the result: its stores, through elementwise ops and the loops and branches carrying it.
        let acc = accelerate::split_cga(sm, sn, [true, true]);
        let mut frontier = vec![f.op(o).results[0]];
        let mut seen = std::collections::HashSet::new();
        while let Some(v) = frontier.pop() {
            if !seen.insert(v) {
                continue;
            }
            for &u in &ops {
                let d = f.op(u);
                let Some(i) = d.operands.iter().position(|&x| x == v) else { continue };
                match d.op {
                    Op::Store { .. } if i == 1 => {
                        out.insert(u, acc.clone());
                    }
                    // A TMA store takes the tile in the layout it has; its descriptor's block is split as it is.
                    Op::DescStore if i == 1 => {
                        stored.insert(u);
                        desc_splits.insert(crate::tma::desc_source(f, d.operands[0]), acc.clone());
                    }
                    // A `for`'s or an `if`'s result `i` is what its regions yield at `i` (a `while` passes its
                    // values through `condition` first: not followed).
                    Op::Yield => {
                        let parent = d.parent.and_then(|r| f.region(r).parent);
                        if let Some(p) = parent.filter(|&p| matches!(f.op(p).op, Op::For(_) | Op::If)) {
                            frontier.extend(f.op(p).results.get(i).copied());
                        }
                    }
                    _ if one_tensor(u).is_some() => frontier.push(d.results[0]),
                    _ => {}
                }
            }
        }
    }
    // Other tiles stored through those descriptors (a persistent kernel's zeros for an empty K loop) are split as
    // the dots' results, so that each CTA stores the same part of the block through every store.
    for &u in &ops {
        let d = f.op(u);
        if d.op == Op::DescStore
            && !stored.contains(&u)
            && let Some(cga) = desc_splits.get(&crate::tma::desc_source(f, d.operands[0]))
        {
            out.insert(u, cga.clone());
        }
    }
    out
}
