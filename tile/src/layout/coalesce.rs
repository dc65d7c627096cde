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

use std::collections::HashMap;

use tessel_layouts::{BlockedLayout, CgaLayout, DistributedLayout, standard::WARP_SIZE};

use crate::ir::{Func, OpId, ValueDef};
use crate::layout::axis::AxisAnalysis;
use crate::layout::rules::{L, from_spec};
use crate::ops::Op;
use crate::types::{Elem, Type};

/// Triton's `BlockedEncodingAttr::get(shape, sizePerThread, order, numWarps, threadsPerWarp)`: lanes, then
/// warps, fill the dims in `order`, each dim taking at most as many threads as it has vectors; the slowest
/// dim takes whatever is left.
pub fn blocked(shape: &[u32], size_per_thread: &[u32], order: &[u32], num_warps: u32) -> BlockedLayout {
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
pub fn default_blocked(shape: &[u32], num_warps: u32) -> BlockedLayout {
    let order: Vec<u32> = (0..shape.len() as u32).rev().collect();
    blocked(shape, &vec![1; shape.len()], &order, num_warps)
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
) -> Result<HashMap<OpId, L>, tessel_layouts::LayoutError> {
    let threads = num_warps * WARP_SIZE;
    let comps = components(f);
    let mem: Vec<OpId> = f.all_ops().into_iter().filter(|&o| is_memory_op(f, o)).collect();
    let order_of = |o: OpId| {
        let ptr = f.op(o).operands[0];
        let rank = f.ty(ptr).shape().len();
        axis.get(ptr).map_or_else(|| (0..rank as u32).rev().collect(), |i| order_from_contiguity(&i.contiguity))
    };
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
        let spec = blocked(&shape, &spt, &order, num_warps);
        out.insert(o, from_spec(DistributedLayout::Blocked(spec), &shape)?);
    }
    for o in f.all_ops() {
        let d = f.op(o);
        let tile = match d.op {
            Op::Dot { .. } => match crate::layout::accelerate::accumulator_layout(f, o) {
                Some(mma) => Some(mma),
                None => {
                    let shape = f.ty(d.results[0]).shape().to_vec();
                    Some(from_spec(DistributedLayout::Blocked(default_blocked(&shape, num_warps)), &shape)?)
                }
            },
            // Every `dot_scaled` left after `dot_scaled::fall_back` runs on the block-scaled tcgen05.mma.
            Op::DotScaled { .. } => crate::layout::tcgen05::accumulator_layout(f, o).ok(),
            // A TMA store writes the tile into shared memory from whatever layout it is in (the copy then reads
            // it in the descriptor's layout): converting it first would only add a trip through shared memory,
            // which a fused persistent loop cannot spare while its rings are full.
            Op::DescStore if crate::tma::usable(f, d.operands[0]) => None,
            Op::DescLoad | Op::DescStore => {
                let t: &Type = if matches!(d.op, Op::DescLoad) { f.ty(d.results[0]) } else { f.ty(d.operands[1]) };
                let shape = t.shape().to_vec();
                let bits = t.elem().map_or(32, Elem::bits);
                let last = shape.len() - 1;
                let numel: u32 = shape.iter().product();
                let mut spt = vec![1; shape.len()];
                spt[last] = (128 / bits).min(shape[last]).min((numel / threads).max(1)).max(1);
                let order: Vec<u32> = (0..shape.len() as u32).rev().collect();
                let spec = blocked(&shape, &spt, &order, num_warps);
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
