//! Properties of the standard layouts over random parameters and shapes (larger and smaller than each layout's
//! tile): every layout reaches every element of its tensor, and each one places elements where an index
//! formula written independently says it should. The MMA and tcgen05 formulas are the fragment tables of the
//! PTX ISA (`groupID = laneid >> 2`, `threadID_in_group = laneid % 4`, ...); the shared-memory formulas are
//! the XOR swizzles as the hardware defines them on byte addresses.

use std::collections::BTreeSet;

use proptest::prelude::*;
use tessel_layouts::testing::{blocked_nd, blocked_with_shape, permutation, pow2, shape, split_bits};
use tessel_layouts::{
    BlockedLayout, CgaLayout, DistributedLayout, DistributedLinearLayout, DotOperandLayout, LinearLayout,
    NvmmaDistributedLayout, NvmmaSharedLayout, SharedLayout, SliceLayout, SwizzledSharedLayout, TensorMemoryLayout,
    TmemAccess, TmemRegLayout,
};

// ----- helpers -----

/// Every input of a distributed layout: `(register, lane, warp, block)`.
fn inputs(l: &LinearLayout) -> impl Iterator<Item = [u32; 4]> + '_ {
    let [r, la, w, b] = ["register", "lane", "warp", "block"].map(|d| l.in_dim_size(d));
    (0..b).flat_map(move |b| (0..w).flat_map(move |w| (0..la).flat_map(move |la| (0..r).map(move |r| [r, la, w, b]))))
}

fn at(l: &LinearLayout, input: [u32; 4]) -> Vec<u32> {
    l.apply(&input).to_vec()
}

/// The layout reaches every element of `shape` and has the standard dims.
fn assert_covers(l: &LinearLayout, shape: &[u32], in_dims: &[&str]) {
    assert_eq!(l.in_dim_names(), in_dims, "in-dims of\n{l}");
    let sizes: Vec<u32> = l.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
    assert_eq!(sizes, shape, "out-dims of\n{l}");
    let names: Vec<String> = l.out_dims().map(|d| d.to_string()).collect();
    assert_eq!(names, (0..shape.len()).map(|i| format!("dim{i}")).collect::<Vec<_>>());
    assert!(l.is_surjective(), "not surjective onto {shape:?}:\n{l}");
}

const DIST: [&str; 4] = ["register", "lane", "warp", "block"];
const SHARED: [&str; 2] = ["offset", "block"];

/// Splits `x` into digits of the given (power-of-two) extents, visiting dims in `order`.
fn digits(mut x: u32, extents: &[u32], order: &[u32]) -> Vec<u32> {
    let mut out = vec![0; extents.len()];
    for &d in order {
        let e = extents[d as usize];
        out[d as usize] = x % e;
        x /= e;
    }
    out
}

/// Where a blocked layout puts register `r` of lane `lane` of warp `warp`, computed the classic way: the
/// thread id split by `order` over `threads_per_warp` and `warps_per_cta`, the register index split first over
/// the thread's own `size_per_thread` block (cut to the tensor) and then over the repetitions of the CTA tile,
/// both in `order`; coordinates wrap around the tensor (lanes and warps past its end broadcast). `k_dim` is a
/// dim along which lanes and warps do not move (an FMA dot operand).
fn blocked_formula(b: &BlockedLayout, shape: &[u32], k_dim: Option<usize>, [r, lane, warp]: [u32; 3]) -> Vec<u32> {
    let rank = shape.len();
    let spt = &b.size_per_thread;
    let own: Vec<u32> = (0..rank).map(|d| spt[d].min(shape[d])).collect();
    let tile: Vec<u32> = (0..rank).map(|d| spt[d] * b.threads_per_warp[d] * b.warps_per_cta[d]).collect();
    let reps: Vec<u32> = (0..rank).map(|d| (shape[d] / tile[d]).max(1)).collect();
    let elems = digits(r, &own, &b.order);
    let rep = digits(r / own.iter().product::<u32>(), &reps, &b.order);
    let lanes = digits(lane, &b.threads_per_warp, &b.order);
    let warps = digits(warp, &b.warps_per_cta, &b.order);
    (0..rank)
        .map(|d| {
            let spread =
                if Some(d) == k_dim { 0 } else { spt[d] * lanes[d] + spt[d] * b.threads_per_warp[d] * warps[d] };
            (elems[d] + spread + tile[d] * rep[d]) % shape[d]
        })
        .collect()
}

fn config() -> ProptestConfig {
    ProptestConfig::default() // 256 cases, or PROPTEST_CASES
}

// ----- blocked, slice, FMA operands, user-written layouts -----

proptest! {
    #![proptest_config(config())]

    #[test]
    fn blocked_matches_thread_decomposition((b, shape) in blocked_with_shape(3)) {
        let l = DistributedLayout::Blocked(b.clone()).to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &DIST);
        let own: u32 = (0..shape.len()).map(|d| b.size_per_thread[d].min(shape[d])).product();
        let reps: u32 = (0..shape.len())
            .map(|d| (shape[d] / (b.size_per_thread[d] * b.threads_per_warp[d] * b.warps_per_cta[d])).max(1))
            .product();
        prop_assert_eq!(l.in_dim_size("register"), own * reps);
        for input in inputs(&l) {
            let expected = blocked_formula(&b, &shape, None, [input[0], input[1], input[2]]);
            prop_assert_eq!(at(&l, input), expected, "input {:?}", input);
        }
    }

    #[test]
    fn slice_of_blocked_drops_the_dim((b, shape, dim) in blocked_with_shape(3)
        .prop_filter("rank >= 2", |(b, _)| b.order.len() >= 2)
        .prop_flat_map(|(b, s)| { let r = b.order.len(); (Just(b), Just(s), 0..r) }))
    {
        let mut slice_shape = shape.clone();
        slice_shape.remove(dim);
        let slice = DistributedLayout::Slice(SliceLayout { dim: dim as u32, parent: Box::new(DistributedLayout::Blocked(b.clone())) });
        let l = slice.to_linear(&slice_shape).unwrap();
        assert_covers(&l, &slice_shape, &DIST);
        let mut parent_shape = slice_shape.clone();
        parent_shape.insert(dim, 1);
        for input in inputs(&l) {
            let mut expected = blocked_formula(&b, &parent_shape, None, [input[0], input[1], input[2]]);
            expected.remove(dim);
            prop_assert_eq!(at(&l, input), expected, "input {:?}", input);
        }
    }

    #[test]
    fn fma_operands_hold_whole_k((b, shape, operand) in blocked_with_shape(3)
        .prop_filter("rank >= 2", |(b, _)| b.order.len() >= 2)
        .prop_flat_map(|(b, s)| (Just(b), Just(s), 0..2u32)))
    {
        let rank = shape.len();
        let k_dim = if operand == 0 { rank - 1 } else { rank - 2 };
        let dot = DistributedLayout::DotOperand(DotOperandLayout {
            operand_index: operand, parent: Box::new(DistributedLayout::Blocked(b.clone())), k_width: 0,
        });
        let l = dot.to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &DIST);
        let mut per_thread = b.clone();
        per_thread.size_per_thread[k_dim] = shape[k_dim];
        for input in inputs(&l) {
            let expected = blocked_formula(&per_thread, &shape, Some(k_dim), [input[0], input[1], input[2]]);
            prop_assert_eq!(at(&l, input), expected, "input {:?}", input);
        }
    }

    #[test]
    fn written_bases_stretch_like_the_blocked_layout((b, shape) in blocked_with_shape(3)
        .prop_map(|(mut b, s)| { for x in &mut b.size_per_thread { *x = (*x).max(2); } (b, s) }))
    {
        // With at least two registers along every dim, the registers visit the dims in `order`, so the written
        // layout repeats and shrinks in the same order as the blocked layout it was read from.
        let rank = shape.len();
        let tile: Vec<u32> = (0..rank).map(|d| b.size_per_thread[d] * b.threads_per_warp[d] * b.warps_per_cta[d]).collect();
        let written = DistributedLayout::Blocked(b.clone()).to_linear(&tile).unwrap();
        let grab = |d: &str| written.bases(d).iter().map(|v| v.to_vec()).collect::<Vec<_>>();
        let linear = DistributedLayout::Linear(DistributedLinearLayout {
            reg_bases: grab("register"), lane_bases: grab("lane"), warp_bases: grab("warp"),
            block_bases: grab("block"), shape: tile,
        });
        prop_assert_eq!(linear.to_linear(&shape).unwrap(), DistributedLayout::Blocked(b).to_linear(&shape).unwrap());
    }

    #[test]
    fn legacy_cga_tiles_the_ctas(
        (b, split_log, dup_log, shape) in blocked_nd(2)
            .prop_flat_map(|b| {
                let rank = b.order.len();
                (Just(b), proptest::collection::vec(0..=2u32, rank), proptest::collection::vec(0..=1u32, rank))
            })
            .prop_flat_map(|(b, split, dup)| {
                let rank = b.order.len();
                let lo = *split.iter().max().unwrap();
                (Just(b), Just(split), Just(dup), shape(rank, lo, 7, 12))
            })
    ) {
        let rank = shape.len();
        let split: Vec<u32> = split_log.iter().map(|&s| 1 << s).collect();
        let ctas: Vec<u32> = (0..rank).map(|d| split[d] << dup_log[d]).collect();
        let order: Vec<u32> = (0..rank as u32).rev().collect();
        let cga = CgaLayout::Legacy { ctas_per_cga: ctas.clone(), cta_split: split.clone(), cta_order: order.clone() };
        let l = DistributedLayout::Blocked(BlockedLayout { cga, ..b.clone() }).to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &DIST);
        let per_cta: Vec<u32> = (0..rank).map(|d| shape[d] / split[d]).collect();
        let one = DistributedLayout::Blocked(b).to_linear(&per_cta).unwrap();
        prop_assert_eq!(l.in_dim_size("block"), ctas.iter().product::<u32>());
        for input in inputs(&l) {
            // Block ids enumerate the CTA grid in `cta_order`; a CTA beyond the split repeats an earlier tile.
            let cta = digits(input[3], &ctas, &order);
            let base = at(&one, [input[0], input[1], input[2], 0]);
            let expected: Vec<u32> = (0..rank).map(|d| base[d] + (cta[d] % split[d]) * per_cta[d]).collect();
            prop_assert_eq!(at(&l, input), expected, "input {:?}", input);
        }
    }
}

// ----- MMA: mma.sync m16n8k16 and wgmma m64nNk16 -----

fn mma(version: u32, warps: Vec<u32>, instr: Vec<u32>) -> NvmmaDistributedLayout {
    NvmmaDistributedLayout { version: [version, 0], warps_per_cta: warps, instr_shape: instr, cga: CgaLayout::Single }
}

/// `(groupID, threadID_in_group)` of the PTX ISA fragment tables.
fn group(lane: u32) -> (u32, u32) {
    (lane >> 2, lane % 4)
}

/// mma.m16n8k16 accumulator C/D (f32): `c_i` at row `groupID + 8 * (i >= 2)`, column
/// `2 * threadID_in_group + (i & 1)`. Warps tile the CTA row-major; the CTA tile repeats along N, then M.
fn mma_v2_acc(warps: [u32; 2], shape: [u32; 2], [r, lane, warp]: [u32; 3]) -> Vec<u32> {
    let (g, t) = group(lane);
    let i = r % 4;
    let (wm, wn) = (warp / warps[1], warp % warps[1]);
    let reps_n = shape[1] / (8 * warps[1]);
    let (rep_m, rep_n) = ((r / 4) / reps_n, (r / 4) % reps_n);
    let row = g + 8 * (i >> 1) + 16 * wm + 16 * warps[0] * rep_m;
    let col = 2 * t + (i & 1) + 8 * wn + 8 * warps[1] * rep_n;
    vec![row, col]
}

/// wgmma.m64nNk16 accumulator D (f32): warp `w % 4` of the warpgroup owns rows `16 * (w % 4)..`; `d_i` at row
/// `groupID + 8 * ((i >> 1) & 1)`, column `8 * (i >> 2) + 2 * threadID_in_group + (i & 1)`. Warps go down M
/// first; the CTA tile repeats along N, then M.
fn mma_v3_acc(warps: [u32; 2], n: u32, shape: [u32; 2], [r, lane, warp]: [u32; 3]) -> Vec<u32> {
    let (g, t) = group(lane);
    let i = r % (n / 2);
    let (wm, wn) = (warp % warps[0], warp / warps[0]);
    let reps_n = shape[1] / (n * warps[1]);
    let (rep_m, rep_n) = ((r / (n / 2)) / reps_n, (r / (n / 2)) % reps_n);
    let row = g + 8 * ((i >> 1) & 1) + 16 * wm + 16 * warps[0] * rep_m;
    let col = 8 * (i >> 2) + 2 * t + (i & 1) + n * wn + n * warps[1] * rep_n;
    vec![row, col]
}

/// The A fragment of mma.m16n8k{8,16,32} (`kw` = 1, 2, 4 elements per 32-bit register; for f16, `a0..a7` at
/// row `groupID + 8 * (i in {2,3,6,7})`, column `2 * threadID_in_group + (i & 1) + 8 * (i >= 4)`). The same
/// fragment, per warp of a warpgroup, is wgmma's register A. `warp_m` picks the warp's 16-row block; the tile
/// repeats along K, then M.
fn mma_a(kw: u32, warps_m: u32, warp_m: u32, shape: [u32; 2], r: u32, lane: u32) -> Vec<u32> {
    let (g, t) = group(lane);
    let i = r % (4 * kw);
    let reps_k = shape[1] / (8 * kw);
    let (rep_m, rep_k) = ((r / (4 * kw)) / reps_k, (r / (4 * kw)) % reps_k);
    let row = g + 8 * ((i / kw) & 1) + 16 * warp_m + 16 * warps_m * rep_m;
    let col = t * kw + i % kw + 4 * kw * (i / (2 * kw)) + 8 * kw * rep_k;
    vec![row, col]
}

/// The B fragment of mma.m16n8k{8,16,32}: for f16 `b0..b3` at row `2 * threadID_in_group + (i & 1) +
/// 8 * (i >= 2)`, column `groupID`. Warps split N row-major (those along M hold the same B); the tile repeats
/// along K, then N.
fn mma_b(kw: u32, warps: [u32; 2], shape: [u32; 2], [r, lane, warp]: [u32; 3]) -> Vec<u32> {
    let (g, t) = group(lane);
    let i = r % (2 * kw);
    let reps_k = shape[0] / (8 * kw);
    let (rep_n, rep_k) = ((r / (2 * kw)) / reps_k, (r / (2 * kw)) % reps_k);
    let wn = warp % warps[1];
    let row = t * kw + i % kw + 4 * kw * (i / kw) + 8 * kw * rep_k;
    let col = g + 8 * wn + 8 * warps[1] * rep_n;
    vec![row, col]
}

/// Checks `l` (at `shape`) against `formula` (at `full`, a multiple of the CTA tile no smaller than `shape`):
/// exactly when `shape == full`, otherwise per thread, as the set of elements it holds wrapped onto `shape`.
fn check_against(
    l: &LinearLayout,
    shape: &[u32],
    full: &[u32],
    full_regs: u32,
    formula: impl Fn([u32; 3]) -> Vec<u32>,
) -> Result<(), TestCaseError> {
    assert_covers(l, shape, &DIST);
    if shape == full {
        prop_assert_eq!(l.in_dim_size("register"), full_regs);
        for input in inputs(l) {
            prop_assert_eq!(at(l, input), formula([input[0], input[1], input[2]]), "input {:?}", input);
        }
        return Ok(());
    }
    for warp in 0..l.in_dim_size("warp") {
        for lane in 0..32 {
            let got: BTreeSet<Vec<u32>> = (0..l.in_dim_size("register")).map(|r| at(l, [r, lane, warp, 0])).collect();
            let want: BTreeSet<Vec<u32>> = (0..full_regs)
                .map(|r| formula([r, lane, warp]).iter().zip(shape).map(|(x, s)| x % s).collect())
                .collect();
            prop_assert_eq!(&got, &want, "lane {} warp {}", lane, warp);
        }
    }
    Ok(())
}

fn at_least(shape: &[u32], tile: [u32; 2]) -> [u32; 2] {
    [shape[0].max(tile[0]), shape[1].max(tile[1])]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mma_v2_accumulator_is_the_m16n8_fragment(
        warps in (0..=3usize).prop_flat_map(|n| split_bits(n, 2)),
        shape in shape(2, 2, 7, 12),
    ) {
        let l = DistributedLayout::Nvmma(mma(2, warps.clone(), vec![16, 8])).to_linear(&shape).unwrap();
        let w = [warps[0], warps[1]];
        let full = at_least(&shape, [16 * w[0], 8 * w[1]]);
        let regs = full[0] * full[1] / (32 * w[0] * w[1]);
        check_against(&l, &shape, &full, regs, |i| mma_v2_acc(w, full, i))?;
    }

    #[test]
    fn wgmma_accumulator_is_the_m64nnk16_fragment(
        warps in prop_oneof![Just([4u32, 1]), Just([4, 2]), Just([8, 1]), Just([4, 4])],
        n in pow2(3, 8),
        shape in shape(2, 4, 9, 14),
    ) {
        let layout = mma(3, warps.to_vec(), vec![16, n, 16]);
        let l = DistributedLayout::Nvmma(layout).to_linear(&shape).unwrap();
        let full = at_least(&shape, [16 * warps[0], n * warps[1]]);
        let regs = full[0] * full[1] / (32 * warps[0] * warps[1]);
        check_against(&l, &shape, &full, regs, |i| mma_v3_acc(warps, n, full, i))?;
    }

    #[test]
    fn mma_v2_operands_are_the_m16n8k_fragments(
        warps in (0..=2usize).prop_flat_map(|n| split_bits(n, 2)),
        kw in prop_oneof![Just(1u32), Just(2), Just(4)],
        shape in shape(2, 3, 7, 12),
    ) {
        let w = [warps[0], warps[1]];
        let parent = || Box::new(DistributedLayout::Nvmma(mma(2, warps.clone(), vec![16, 8])));
        let a = DistributedLayout::DotOperand(DotOperandLayout { operand_index: 0, parent: parent(), k_width: kw });
        let l = a.to_linear(&shape).unwrap();
        let full = at_least(&shape, [16 * w[0], 8 * kw]);
        let regs = full[0] * full[1] / (32 * w[0]);
        check_against(&l, &shape, &full, regs, |[r, lane, warp]| mma_a(kw, w[0], warp / w[1], full, r, lane))?;

        let b = DistributedLayout::DotOperand(DotOperandLayout { operand_index: 1, parent: parent(), k_width: kw });
        let l = b.to_linear(&shape).unwrap();
        let full = at_least(&shape, [8 * kw, 8 * w[1]]);
        let regs = full[0] * full[1] / (32 * w[1]);
        check_against(&l, &shape, &full, regs, |i| mma_b(kw, w, full, i))?;
    }

    #[test]
    fn wgmma_register_a_is_the_m64k16_fragment(
        warps in prop_oneof![Just([4u32, 1]), Just([4, 2]), Just([8, 1])],
        kw in prop_oneof![Just(1u32), Just(2), Just(4)],
        shape in shape(2, 3, 8, 13),
    ) {
        let parent = Box::new(DistributedLayout::Nvmma(mma(3, warps.to_vec(), vec![16, 64, 8 * kw])));
        let a = DistributedLayout::DotOperand(DotOperandLayout { operand_index: 0, parent, k_width: kw });
        let l = a.to_linear(&shape).unwrap();
        let full = at_least(&shape, [16 * warps[0], 8 * kw]);
        let regs = full[0] * full[1] / (32 * warps[0]);
        check_against(&l, &shape, &full, regs, |[r, lane, warp]| mma_a(kw, warps[0], warp % warps[0], full, r, lane))?;
    }

    #[test]
    fn slices_of_mma_cover_their_shapes(
        version in 2u32..=3,
        dim in 0usize..2,
        shape in shape(2, 0, 8, 12),
    ) {
        let parent = if version == 2 { mma(2, vec![2, 2], vec![16, 8]) } else { mma(3, vec![4, 2], vec![16, 32, 16]) };
        let slice = DistributedLayout::Slice(SliceLayout { dim: dim as u32, parent: Box::new(DistributedLayout::Nvmma(parent)) });
        let l = slice.to_linear(&shape[..1]).unwrap();
        assert_covers(&l, &shape[..1], &DIST);
        prop_assert!(l.bases("register").iter().all(|b| b.iter().any(|&c| c != 0)), "zero register basis left in\n{}", l);
    }
}

// ----- tcgen05.ld / st -----

fn tmem(block: [u32; 2]) -> TensorMemoryLayout {
    TensorMemoryLayout { block, col_stride: 1, two_ctas: false, cta_split: [1, 1] }
}

/// Where element `(m, n)` of an `[M, N]` tensor sits in TMEM with a block-M-128 layout of block N `bn`: row
/// `m % 128`, column `n % bn` of block `(m / 128, n / bn)`, blocks placed side by side M-major.
fn tmem_element(shape: [u32; 2], bn: u32, row: u32, col: u32) -> Vec<u32> {
    let bn = bn.min(shape[1]);
    let (blk, n_in) = (col / bn, col % bn);
    let blocks_m = shape[0] / 128;
    vec![(blk % blocks_m) * 128 + row, (blk / blocks_m) * bn + n_in]
}

proptest! {
    #![proptest_config(config())]

    /// tcgen05.ld.32x32b: warp `w` reaches TMEM lanes `32 * (w % 4)..`, thread `t` reads lane `32 * (w % 4) + t`
    /// and register `r` column `r`; a second warpgroup reads the second half of the columns.
    #[test]
    fn tcgen05_32x32b_reads_rows_by_lane_and_columns_by_register(
        bn in pow2(3, 8), num_warps in prop_oneof![Just(4u32), Just(8)],
        shape in (0u32..=1, 0u32..=9).prop_map(|(m, n)| [128u32 << m, 1 << n]),
    ) {
        let reg = TmemRegLayout::new(tmem([128, bn]), TmemAccess::B32x32, num_warps);
        let l = DistributedLayout::TmemReg(reg).to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &DIST);
        let cols = shape[0] * shape[1] / 128;
        prop_assert_eq!(l.in_dim_size("register"), if num_warps == 8 { (cols / 2).max(1) } else { cols });
        for [r, lane, warp, _] in inputs(&l) {
            let row = 32 * (warp % 4) + lane;
            let col = r + (warp / 4) * (cols / 2);
            prop_assert_eq!(at(&l, [r, lane, warp, 0]), tmem_element(shape, bn, row, col));
        }
    }

    /// tcgen05.ld.16x64b: a warp reads 16 lanes of 64 bits; thread `t` reads lane `(t >> 2) + 8 * (t & 1)`,
    /// 32-bit column `(t >> 1) & 1`, and repetitions step two columns. Rows 16..32 of each warp's quarter come
    /// from a last register (4 warps) or from the second warpgroup (8 warps).
    #[test]
    fn tcgen05_16x64b_reads_the_isa_fragment(
        bn in pow2(3, 8), num_warps in prop_oneof![Just(4u32), Just(8)],
        shape in (0u32..=1, 1u32..=9).prop_map(|(m, n)| [128u32 << m, 1 << n]),
    ) {
        let reg = TmemRegLayout::new(tmem([128, bn]), TmemAccess::B16x64, num_warps);
        let l = DistributedLayout::TmemReg(reg).to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &DIST);
        let pairs = shape[0] * shape[1] / 128 / 2;
        for [r, lane, warp, _] in inputs(&l) {
            let (j, half) = if num_warps == 4 { (r % pairs, r / pairs) } else { (r, warp / 4) };
            let row = 32 * (warp % 4) + 16 * half + (lane >> 2) + 8 * (lane & 1);
            let col = 2 * j + ((lane >> 1) & 1);
            prop_assert_eq!(at(&l, [r, lane, warp, 0]), tmem_element(shape, bn, row, col));
        }
    }

    #[test]
    fn tmem_layouts_cover_their_shapes(
        block_m in prop_oneof![Just(64u32), Just(128)], bn in pow2(3, 8), col_stride in pow2(0, 1),
        bits in prop_oneof![Just(16u32), Just(32)], num_warps in prop_oneof![Just(4u32), Just(8)],
        access in prop_oneof![Just(TmemAccess::B32x32), Just(TmemAccess::B16x64), Just(TmemAccess::B16x128), Just(TmemAccess::B16x256)],
        shape in (0u32..=2, 3u32..=9).prop_map(|(m, n)| [64u32 << m, 1 << n]),
    ) {
        let t = TensorMemoryLayout { col_stride, ..tmem([block_m, bn]) };
        if shape[0] < block_m {
            prop_assert!(t.to_linear(&shape).is_err());
            return Ok(());
        }
        let ll = t.to_linear(&shape).unwrap();
        prop_assert_eq!(ll.in_dim_names(), ["row", "col"]);
        prop_assert_eq!(ll.in_dim_size("row"), 128);
        assert_covers(&ll, &shape, &["row", "col"]);
        let reg = TmemRegLayout { tmem: t, access, num_warps, element_bitwidth: bits, split_n: false };
        // Not every combination can be read with every instruction; those that can must cover the tensor.
        if let Ok(l) = DistributedLayout::TmemReg(reg).to_linear(&shape) {
            assert_covers(&l, &shape, &DIST);
        } else {
            prop_assert!(access != TmemAccess::B32x32 || block_m != 128 || col_stride != 1, "32x32b of a packed 128-row layout failed");
        }
    }
}

// ----- shared memory -----

fn swizzled(vec: u32, per_phase: u32, max_phase: u32, order: Vec<u32>) -> SwizzledSharedLayout {
    SwizzledSharedLayout { vec, per_phase, max_phase, order, cga: CgaLayout::Single }
}

fn nvmma_shared(swizzle: u32, bits: u32, transposed: bool) -> NvmmaSharedLayout {
    NvmmaSharedLayout {
        swizzle_byte_width: swizzle,
        element_bitwidth: bits,
        rank: 2,
        transposed,
        fp4_padded: false,
        cga: CgaLayout::Single,
    }
}

/// CUTLASS's `Swizzle<B, 4, 3>` on a byte address: the 16-byte chunk index (bits 4..4+B) XORed with bits 7..7+B.
fn swizzle_bytes(addr: u32, b: u32) -> u32 {
    let mask = ((1 << b) - 1) << 7;
    addr ^ ((addr & mask) >> 3)
}

proptest! {
    #![proptest_config(config())]

    /// The generic swizzle: offset `row * cols + c` holds column `c ^ ((vec * ((row / per_phase) % max_phase)) %
    /// cols)` of that row.
    #[test]
    fn swizzled_shared_xors_columns_by_row_phase(
        vec in pow2(0, 3), per_phase in pow2(0, 2), max_phase in pow2(0, 3),
        order in permutation(2), shape in shape(2, 0, 7, 12),
    ) {
        let l = SharedLayout::Swizzled(swizzled(vec, per_phase, max_phase, order.clone())).to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &SHARED);
        prop_assert!(l.is_invertible());
        let (col_dim, row_dim) = (order[0] as usize, order[1] as usize);
        let cols = shape[col_dim];
        for o in 0..shape[0] * shape[1] {
            let (row, c) = (o / cols, o % cols);
            let mut want = vec![0; 2];
            want[row_dim] = row;
            want[col_dim] = c ^ ((vec * ((row / per_phase) % max_phase)) % cols);
            prop_assert_eq!(l.apply(&[o, 0]).to_vec(), want, "offset {}", o);
        }
    }

    #[test]
    fn swizzled_shared_of_any_rank_is_a_bijection(
        (order, shape) in (1usize..=4).prop_flat_map(|r| (permutation(r), shape(r, 0, 5, 12))),
        vec in pow2(0, 3), per_phase in pow2(0, 2), max_phase in pow2(0, 3),
    ) {
        let l = SharedLayout::Swizzled(swizzled(vec, per_phase, max_phase, order)).to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &SHARED);
        prop_assert!(l.is_invertible());
    }

    /// NVMMA swizzles: the element at offset `o` of a TMA box `[rows, 8 * swizzle / bits]` is the one whose
    /// row-major byte address the hardware swizzle sends to `o * bits / 8`; boxes follow along M, then along N.
    #[test]
    fn nvmma_shared_is_the_hardware_swizzle(
        swizzle in prop_oneof![Just(32u32), Just(64), Just(128)],
        bits in prop_oneof![Just(8u32), Just(16), Just(32)],
        shape in shape(2, 3, 9, 14),
    ) {
        let width = 8 * swizzle / bits;
        let layout = SharedLayout::Nvmma(nvmma_shared(swizzle, bits, false));
        if shape[1] < width {
            prop_assert!(layout.to_linear(&shape).is_err());
            return Ok(());
        }
        let l = layout.to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &SHARED);
        prop_assert!(l.is_invertible());
        let b = swizzle.trailing_zeros() - 4;
        let box_rows = shape[0].min(256);
        let box_size = box_rows * width;
        for o in 0..shape[0] * shape[1] {
            let (boxi, inner) = (o / box_size, o % box_size);
            let logical = swizzle_bytes(inner * bits / 8, b);
            let (row, col) = (logical / swizzle, (logical % swizzle) * 8 / bits);
            let boxes_m = shape[0] / box_rows;
            let want = vec![(boxi % boxes_m) * box_rows + row, (boxi / boxes_m) * width + col];
            prop_assert_eq!(l.apply(&[o, 0]).to_vec(), want, "offset {}", o);
        }
    }

    #[test]
    fn nvmma_unswizzled_is_row_major_boxes(bits in prop_oneof![Just(8u32), Just(16), Just(32), Just(64)], shape in shape(2, 0, 10, 14)) {
        let l = SharedLayout::Nvmma(nvmma_shared(0, bits, false)).to_linear(&shape).unwrap();
        assert_covers(&l, &shape, &SHARED);
        let (br, bc) = (shape[0].min(256), shape[1].min(256));
        for o in 0..shape[0] * shape[1] {
            let (boxi, inner) = (o / (br * bc), o % (br * bc));
            let boxes_n = shape[1] / bc;
            let want = vec![(boxi / boxes_n) * br + inner / bc, (boxi % boxes_n) * bc + inner % bc];
            prop_assert_eq!(l.apply(&[o, 0]).to_vec(), want, "offset {}", o);
        }
    }

    /// Transposed, one box: the same swizzle with dim0 as the contiguous dim.
    #[test]
    fn nvmma_transposed_box_is_the_swapped_swizzle(
        swizzle in prop_oneof![Just(32u32), Just(64), Just(128)],
        bits in prop_oneof![Just(8u32), Just(16), Just(32)],
        rows in pow2(3, 8),
    ) {
        let width = 8 * swizzle / bits;
        let t = SharedLayout::Nvmma(nvmma_shared(swizzle, bits, true)).to_linear(&[width, rows]).unwrap();
        let n = SharedLayout::Nvmma(nvmma_shared(swizzle, bits, false)).to_linear(&[rows, width]).unwrap();
        assert_covers(&t, &[width, rows], &SHARED);
        prop_assert_eq!(t, n.transpose_outs(&["dim1", "dim0"]).unwrap().rename_out_dim("dim0", "x").rename_out_dim("dim1", "dim0").rename_out_dim("x", "dim1"));
    }

    #[test]
    fn nvmma_shared_of_rank_3_is_a_bijection(
        swizzle in prop_oneof![Just(0u32), Just(32), Just(64), Just(128)],
        bits in prop_oneof![Just(8u32), Just(16)],
        transposed in any::<bool>(),
        shape in shape(3, 0, 8, 14),
    ) {
        let layout = SharedLayout::Nvmma(NvmmaSharedLayout { rank: 3, ..nvmma_shared(swizzle, bits, transposed) });
        match layout.to_linear(&shape) {
            Ok(l) => {
                assert_covers(&l, &shape, &SHARED);
                prop_assert!(l.is_invertible());
            }
            Err(e) => {
                // Too narrow for one swizzle row, or fewer than the 8 rows of a swizzle atom.
                let b: Vec<u32> = shape.iter().map(|&s| s.min(256)).collect();
                let (contig, rows) = if transposed { (b[0], b[2]) } else { (b[2], b[0] * b[1]) };
                prop_assert!(swizzle != 0 && (contig < 8 * swizzle / bits || rows < 8), "{}", e);
            }
        }
    }
}
