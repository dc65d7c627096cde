//! Strategies for distributed (register) layouts: blocked, slices, dot operands, the MMA v2/v3 accumulators, the
//! tcgen05 register layouts, user-written linear layouts, and raw linear layouts with XOR-mixed bases.
//!
//! Strategies that take `log_warps` build layouts for exactly `2^log_warps` warps, so that two of them can be
//! converted into each other; rank-2 strategies take the shape they will be used at when it matters.

use proptest::prelude::*;

use super::params::{permutation, pow2, split_bits, split2};
use super::{Ctx, Family};
use crate::linear::LinearLayout;
use crate::standard::{
    BlockedLayout, CgaLayout, DistributedLayout, DistributedLinearLayout, DotOperandLayout, NvmmaDistributedLayout,
    SliceLayout, TensorMemoryLayout, TmemAccess, TmemRegLayout,
};

// ----- constructors -----

/// `BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta, order)` on one CTA.
pub fn blocked_layout(spt: &[u32], tpw: &[u32], wpc: &[u32], order: &[u32]) -> DistributedLayout {
    DistributedLayout::Blocked(BlockedLayout {
        size_per_thread: spt.to_vec(),
        threads_per_warp: tpw.to_vec(),
        warps_per_cta: wpc.to_vec(),
        order: order.to_vec(),
        cga: CgaLayout::Single,
    })
}

/// `NVMMADistributedLayout([version, 0], warps_per_cta, instr_shape)` on one CTA.
pub fn mma_layout(version: u32, warps: &[u32], instr: &[u32]) -> DistributedLayout {
    DistributedLayout::Nvmma(NvmmaDistributedLayout {
        version: [version, 0],
        warps_per_cta: warps.to_vec(),
        instr_shape: instr.to_vec(),
        cga: CgaLayout::Single,
    })
}

/// `DotOperandLayout(operand_index, parent, k_width)`.
pub fn dot_layout(operand_index: u32, parent: DistributedLayout, k_width: u32) -> DistributedLayout {
    DistributedLayout::DotOperand(DotOperandLayout { operand_index, parent: Box::new(parent), k_width })
}

/// Elements per 32 bits: the `k_width` of an MMA operand of `bits`-bit elements.
pub fn mma_k_width(bits: u32) -> u32 {
    (32 / bits).max(1)
}

// ----- blocked -----

/// A blocked layout of rank `1..=max_rank` on one CTA: up to 8 elements per thread per dim, 32 lanes and up to
/// 8 warps split over the dims, any order.
pub fn blocked_nd(max_rank: usize) -> impl Strategy<Value = BlockedLayout> + Clone {
    (1..=max_rank).prop_flat_map(|rank| {
        (prop::collection::vec(pow2(0, 3), rank), split_bits(5, rank), 0..=3usize, permutation(rank)).prop_flat_map(
            move |(spt, tpw, warp_bits, order)| {
                split_bits(warp_bits, rank).prop_map(move |wpc| BlockedLayout {
                    size_per_thread: spt.clone(),
                    threads_per_warp: tpw.clone(),
                    warps_per_cta: wpc,
                    order: order.clone(),
                    cga: CgaLayout::Single,
                })
            },
        )
    })
}

/// [`blocked_nd`] with a shape of its rank (each dim 1 to 128, at most 4096 elements): larger or smaller than
/// the layout's tile.
pub fn blocked_with_shape(max_rank: usize) -> impl Strategy<Value = (BlockedLayout, Vec<u32>)> + Clone {
    blocked_nd(max_rank).prop_flat_map(|b| {
        let rank = b.order.len();
        (Just(b), super::params::shape(rank, 0, 7, 12))
    })
}

/// A rank-2 blocked layout over `2^log_warps` warps: 1 to 8 elements per thread per dim, row- or column-major.
pub fn blocked_2d(log_warps: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    ((0u32..=3, 0u32..=3), split2(5), split2(log_warps), any::<bool>()).prop_map(|((s0, s1), tpw, wpc, row)| {
        blocked_layout(&[1 << s0, 1 << s1], &tpw, &wpc, if row { &[1, 0] } else { &[0, 1] })
    })
}

// ----- MMA -----

/// An `mma.sync` (MMA v2) accumulator over `2^log_warps` warps.
pub fn mma_v2(log_warps: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    split2(log_warps).prop_map(|w| mma_layout(2, &w, &[16, 8]))
}

/// A `wgmma` (MMA v3) accumulator over `2^log_warps` warps (at least 4: a warpgroup), instruction N 8 to 256,
/// instruction K = 256 / `bits`.
///
/// # Panics
/// If `log_warps < 2` or `bits` is not 8, 16 or 32.
pub fn mma_v3(log_warps: u32, bits: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    assert!(log_warps >= 2, "mma_v3: wgmma needs at least 4 warps (log_warps >= 2), got 2^{log_warps}");
    assert!(matches!(bits, 8 | 16 | 32), "mma_v3: wgmma takes 8-, 16- or 32-bit operands, not {bits}");
    (0..=log_warps - 2, 3u32..=8).prop_map(move |(extra_m, n)| {
        let w = [1 << (2 + extra_m), 1 << (log_warps - 2 - extra_m)];
        mma_layout(3, &w, &[16, 1 << n, 256 / bits])
    })
}

/// An MMA accumulator: v3 when there are at least 4 warps (and the width allows it), else v2.
pub fn mma_accumulator(log_warps: u32, bits: u32) -> BoxedStrategy<DistributedLayout> {
    if log_warps < 2 || !matches!(bits, 8 | 16 | 32) {
        return mma_v2(log_warps).boxed();
    }
    prop_oneof![mma_v2(log_warps), mma_v3(log_warps, bits)].boxed()
}

// ----- slices and dot operands -----

/// A rank-2 slice: of a rank-3 blocked layout, or of a batched (rank-3) `mma.sync` accumulator, along any dim.
pub fn slice(log_warps: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    let spt = prop::collection::vec(0u32..=2, 3);
    let tpw = (0u32..=5).prop_flat_map(|a| (Just(a), 0..=5 - a));
    let wpc = (0..=log_warps).prop_flat_map(move |a| (Just(a), 0..=log_warps - a));
    let blocked = (spt, tpw, wpc.clone(), permutation(3)).prop_map(move |(spt, (t0, t1), (w0, w1), order)| {
        blocked_layout(
            &spt.iter().map(|&s| 1 << s).collect::<Vec<_>>(),
            &[1 << t0, 1 << t1, 1 << (5 - t0 - t1)],
            &[1 << w0, 1 << w1, 1 << (log_warps - w0 - w1)],
            &order,
        )
    });
    let mma = wpc.prop_map(move |(w0, w1)| mma_layout(2, &[1 << w0, 1 << w1, 1 << (log_warps - w0 - w1)], &[1, 16, 8]));
    (prop_oneof![3 => blocked, 1 => mma], 0u32..3)
        .prop_map(|(parent, dim)| DistributedLayout::Slice(SliceLayout { dim, parent: Box::new(parent) }))
}

/// The FMA operand (A or B) of a dot with a blocked accumulator.
pub fn dot_fma(log_warps: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    (blocked_2d(log_warps), 0u32..2).prop_map(|(parent, op)| dot_layout(op, parent, 0))
}

/// Operand A or B of an `mma.sync` accumulator, with 32 bits' worth of K per thread.
pub fn dot_mma_v2(log_warps: u32, bits: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    (mma_v2(log_warps), 0u32..2).prop_map(move |(parent, op)| dot_layout(op, parent, mma_k_width(bits)))
}

/// Operand A of a `wgmma` accumulator held in registers (B always comes from shared memory).
pub fn dot_mma_v3(log_warps: u32, bits: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    mma_v3(log_warps, bits).prop_map(move |parent| dot_layout(0, parent, mma_k_width(bits)))
}

/// Any dot operand: FMA, `mma.sync`, or (with at least 4 warps) `wgmma`.
pub fn dot_operand(log_warps: u32, bits: u32) -> BoxedStrategy<DistributedLayout> {
    if log_warps < 2 || !matches!(bits, 8 | 16 | 32) {
        return prop_oneof![dot_fma(log_warps), dot_mma_v2(log_warps, bits)].boxed();
    }
    prop_oneof![dot_fma(log_warps), dot_mma_v2(log_warps, bits), dot_mma_v3(log_warps, bits)].boxed()
}

// ----- tcgen05 -----

/// Every tcgen05 register layout (`tcgen05.ld/st` of a tensor-memory layout, Gluon's `get_tmem_reg_layout`) of
/// `bits`-bit elements that builds at `ctx.shape` with `2^ctx.log_warps` warps: block M 64 or 128, block N 8 to
/// 256, packed or unpacked columns, each access shape. Empty when none does (fewer than 4 warps, fewer than 64
/// rows, or a width other than 8, 16 or 32 bits).
pub fn tmem_reg_choices(ctx: &Ctx) -> Vec<DistributedLayout> {
    let mut out = Vec::new();
    if ctx.log_warps < 2 || !matches!(ctx.bits, 8 | 16 | 32) {
        return out;
    }
    for tmem in tmem_choices(ctx) {
        for access in [TmemAccess::B32x32, TmemAccess::B16x64, TmemAccess::B16x128, TmemAccess::B16x256] {
            let reg = TmemRegLayout {
                tmem: tmem.clone(),
                access,
                num_warps: 1 << ctx.log_warps,
                element_bitwidth: ctx.bits,
                split_n: false,
            };
            let layout = DistributedLayout::TmemReg(reg);
            if layout.to_linear(&ctx.shape).is_ok() {
                out.push(layout);
            }
        }
    }
    out
}

/// Every single-CTA tensor-memory layout for `ctx.bits`-bit elements that builds at `ctx.shape`.
pub fn tmem_choices(ctx: &Ctx) -> Vec<TensorMemoryLayout> {
    let mut out = Vec::new();
    let strides = if ctx.bits < 32 { vec![1, 32 / ctx.bits] } else { vec![1] };
    for block_m in [64, 128] {
        for n_log in 3..=8 {
            for &col_stride in &strides {
                let t =
                    TensorMemoryLayout { block: [block_m, 1 << n_log], col_stride, two_ctas: false, cta_split: [1, 1] };
                if t.to_linear(&ctx.shape).is_ok() {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// A tcgen05 register layout from [`tmem_reg_choices`].
///
/// # Panics
/// If no tcgen05 register layout builds at `ctx` (see [`Family::TmemReg`]'s requirements).
pub fn tmem_reg(ctx: &Ctx) -> impl Strategy<Value = DistributedLayout> + Clone + use<> {
    let choices = tmem_reg_choices(ctx);
    assert!(!choices.is_empty(), "tmem_reg: no tcgen05 register layout builds at {ctx:?}");
    prop::sample::select(choices)
}

// ----- linear layouts -----

/// `(register, lane, warp)` bases.
type DealtBases = (Vec<Vec<u32>>, Vec<Vec<u32>>, Vec<Vec<u32>>);

/// Bases of a random layout over `shape`: the tensor bits permuted (and, with `mix`, combined by XORs), dealt out
/// to lanes, warps and registers; lanes and warps left over broadcast, and with `dup` a register does.
fn dealt_bases(shape: [u32; 2], log_warps: u32, mix: bool, dup: bool) -> impl Strategy<Value = DealtBases> + Clone {
    let bits = shape[0].trailing_zeros() + shape[1].trailing_zeros();
    let n = bits as usize;
    prop::collection::vec((0..n.max(1), 0..n.max(1), any::<bool>()), 0..24).prop_map(move |ops| {
        let cols = mixed_columns(bits, &ops, mix);
        let lb1 = shape[1].trailing_zeros();
        let coords = |c: u32| vec![c >> lb1, c & ((1 << lb1) - 1)];
        let mut it = cols.into_iter();
        let mut deal = |k: u32| (0..k).map(|_| it.next().map_or(vec![0, 0], coords)).collect::<Vec<_>>();
        let lane_bases = deal(5);
        let warp_bases = deal(log_warps);
        let mut reg_bases = deal(bits.saturating_sub(5 + log_warps));
        if dup {
            reg_bases.insert(reg_bases.len() / 2, vec![0, 0]);
        }
        (reg_bases, lane_bases, warp_bases)
    })
}

/// The columns of an invertible `bits × bits` matrix over F2: the unit vectors, swapped (and with `mix`, added
/// to each other) by `ops`.
pub(crate) fn mixed_columns(bits: u32, ops: &[(usize, usize, bool)], mix: bool) -> Vec<u32> {
    let mut cols: Vec<u32> = (0..bits).map(|i| 1 << i).collect();
    for &(a, b, swap) in ops {
        if a != b && a < cols.len() && b < cols.len() {
            if swap || !mix { cols.swap(a, b) } else { cols[a] ^= cols[b] }
        }
    }
    cols
}

/// A `DistributedLinearLayout` over `shape` (each basis a power of two along one dim, as Gluon requires); lanes
/// and warps beyond the tensor's bits broadcast, and one time in five a register does too.
pub fn distributed_linear(shape: [u32; 2], log_warps: u32) -> impl Strategy<Value = DistributedLayout> + Clone {
    prop::bool::weighted(0.2).prop_flat_map(move |dup| dealt_bases(shape, log_warps, false, dup)).prop_map(
        move |(reg_bases, lane_bases, warp_bases)| {
            DistributedLayout::Linear(DistributedLinearLayout {
                reg_bases,
                lane_bases,
                warp_bases,
                block_bases: vec![],
                shape: shape.to_vec(),
            })
        },
    )
}

/// A raw linear layout with XOR-mixed bases (swizzle-like, beyond what Gluon lets a user write) over `2^blocks`
/// CTAs that split dim0 in halves (`[shape0 / 2, 0]` per block bit). With `broadcast`, one register bit is zero
/// (every element is held twice); without, every element is held once, which needs at least `5 + log_warps`
/// tensor bits per CTA.
///
/// # Panics
/// Without `broadcast`, if one CTA's part of `shape` has fewer than `2^(5 + log_warps)` elements.
pub fn linear_layout(
    shape: [u32; 2],
    log_warps: u32,
    blocks: u32,
    broadcast: bool,
) -> impl Strategy<Value = LinearLayout> + Clone {
    let cta_shape = [shape[0] >> blocks, shape[1]];
    let cta_bits = cta_shape[0].trailing_zeros() + cta_shape[1].trailing_zeros();
    assert!(
        broadcast || cta_bits >= 5 + log_warps,
        "linear_layout: a CTA's {cta_shape:?} has too few elements for 32 lanes and 2^{log_warps} warps without broadcast"
    );
    dealt_bases(cta_shape, log_warps, true, broadcast).prop_map(move |(reg, lane, warp)| {
        let block = (0..blocks).map(|i| vec![cta_shape[0] << i, 0]).collect::<Vec<_>>();
        LinearLayout::new(
            [("register", reg), ("lane", lane), ("warp", warp), ("block", block)],
            [("dim0", shape[0]), ("dim1", shape[1])],
        )
        .expect("dealt bases stay inside the shape")
    })
}

/// Any distributed layout that builds at `ctx`, from every family [`Family::available`] there.
pub fn distributed(ctx: &Ctx) -> BoxedStrategy<DistributedLayout> {
    let strategies: Vec<BoxedStrategy<DistributedLayout>> =
        Family::DISTRIBUTED.iter().filter(|f| f.available(ctx)).map(|f| f.distributed_strategy(ctx)).collect();
    prop::strategy::Union::new(strategies).boxed()
}
