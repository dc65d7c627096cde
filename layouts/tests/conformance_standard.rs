//! Conformance cases 19–35 of `shared/conformance/layouts.md`: the standard GPU layouts, checked exactly
//! (every basis, in order) against the vectors fixed by Triton/Gluon's definitions.

use tessel_layouts::{
    BlockedLayout, CgaLayout, DistributedLayout, DotOperandLayout, LinearLayout, NvmmaDistributedLayout,
    NvmmaSharedLayout, SharedLayout, SwizzledSharedLayout,
};

/// The bases of in-dim `dim`, one coordinate per out-dim.
fn bases(l: &LinearLayout, dim: &str) -> Vec<Vec<u32>> {
    l.bases(dim).iter().map(|b| b.to_vec()).collect()
}

/// The bases of in-dim `dim` of a rank-1 layout, as plain coordinates.
fn flat(l: &LinearLayout, dim: &str) -> Vec<u32> {
    l.bases(dim).iter().map(|b| b[0]).collect()
}

fn blocked(spt: &[u32], tpw: &[u32], wpc: &[u32], order: &[u32]) -> BlockedLayout {
    BlockedLayout {
        size_per_thread: spt.to_vec(),
        threads_per_warp: tpw.to_vec(),
        warps_per_cta: wpc.to_vec(),
        order: order.to_vec(),
        cga: CgaLayout::Single,
    }
}

fn mma(version: u32, warps: &[u32], instr: &[u32]) -> NvmmaDistributedLayout {
    NvmmaDistributedLayout {
        version: [version, 0],
        warps_per_cta: warps.to_vec(),
        instr_shape: instr.to_vec(),
        cga: CgaLayout::Single,
    }
}

fn dot(operand_index: u32, parent: DistributedLayout, k_width: u32) -> DistributedLayout {
    DistributedLayout::DotOperand(DotOperandLayout { operand_index, parent: Box::new(parent), k_width })
}

/// Every distributed layout comes back with in-dims `register, lane, warp, block` and out-dims `dim0..`.
fn check_dims(l: &LinearLayout, rank: usize) {
    assert_eq!(l.in_dim_names(), ["register", "lane", "warp", "block"]);
    let outs: Vec<String> = l.out_dims().map(|d| d.to_string()).collect();
    let expected: Vec<String> = (0..rank).map(|i| format!("dim{i}")).collect();
    assert_eq!(outs, expected);
}

/// The conformance vectors use warps of 4 lanes; the 32-lane `to_linear` rejects them.
fn blocked_linear(spt: &[u32], tpw: &[u32], wpc: &[u32], order: &[u32], shape: &[u32], cga: CgaLayout) -> LinearLayout {
    let layout = BlockedLayout { cga, ..blocked(spt, tpw, wpc, order) };
    let err = layout.to_linear(shape).unwrap_err();
    assert!(err.0.contains("a warp has 32 threads"), "{err}");
    let l = layout.to_linear_for_warp_size(shape, tpw.iter().product()).unwrap();
    check_dims(&l, shape.len());
    l
}

#[test]
fn case19_blocked_exact_fit() {
    let l = blocked_linear(&[1], &[4], &[4], &[0], &[16], CgaLayout::Single);
    assert_eq!(flat(&l, "register"), Vec::<u32>::new());
    assert_eq!(flat(&l, "lane"), [1, 2]);
    assert_eq!(flat(&l, "warp"), [4, 8]);
    assert_eq!(flat(&l, "block"), Vec::<u32>::new());
}

#[test]
fn case20_blocked_legacy_cga_with_duplicated_ctas() {
    let cga = CgaLayout::Legacy { ctas_per_cga: vec![4], cta_split: vec![2], cta_order: vec![0] };
    let l = blocked_linear(&[1], &[4], &[4], &[0], &[32], cga);
    assert_eq!(flat(&l, "register"), Vec::<u32>::new());
    assert_eq!(flat(&l, "lane"), [1, 2]);
    assert_eq!(flat(&l, "warp"), [4, 8]);
    assert_eq!(flat(&l, "block"), [16, 0]);
}

#[test]
fn case21_blocked_repeats_in_registers() {
    let l = blocked_linear(&[1], &[4], &[4], &[0], &[128], CgaLayout::Single);
    assert_eq!(flat(&l, "register"), [16, 32, 64]);
    assert_eq!(flat(&l, "lane"), [1, 2]);
    assert_eq!(flat(&l, "warp"), [4, 8]);
}

#[test]
fn case22_blocked_broadcasts_lanes_and_warps() {
    let l = blocked_linear(&[4], &[4], &[4], &[0], &[8], CgaLayout::Single);
    assert_eq!(flat(&l, "register"), [1, 2]);
    assert_eq!(flat(&l, "lane"), [4, 0]);
    assert_eq!(flat(&l, "warp"), [0, 0]);
}

#[test]
fn case23_blocked_repeats_after_the_tile() {
    let l = blocked_linear(&[2], &[4], &[1], &[0], &[32], CgaLayout::Single);
    assert_eq!(flat(&l, "register"), [1, 8, 16]);
    assert_eq!(flat(&l, "lane"), [2, 4]);
    assert_eq!(flat(&l, "warp"), Vec::<u32>::new());
}

#[test]
fn case25_fma_dot_operand_of_blocked() {
    let parent = DistributedLayout::Blocked(blocked(&[2, 4], &[8, 4], &[2, 4], &[1, 0]));
    let l = dot(0, parent, 0).to_linear(&[32, 16]).unwrap();
    check_dims(&l, 2);
    assert_eq!(bases(&l, "register"), [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]);
    assert_eq!(bases(&l, "lane"), [[0, 0], [0, 0], [2, 0], [4, 0], [8, 0]]);
    assert_eq!(bases(&l, "warp"), [[0, 0], [0, 0], [16, 0]]);
    assert!(bases(&l, "block").is_empty());
}

const MMA_LANES: [[u32; 2]; 5] = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]];

#[test]
fn case26_mma_v2_accumulator() {
    let l = DistributedLayout::Nvmma(mma(2, &[1, 1], &[16, 8])).to_linear(&[16, 16]).unwrap();
    check_dims(&l, 2);
    assert_eq!(bases(&l, "register"), [[0, 1], [8, 0], [0, 8]]);
    assert_eq!(bases(&l, "lane"), MMA_LANES);
    assert!(bases(&l, "warp").is_empty());
}

#[test]
fn case27_mma_v2_accumulator_repeats_n_then_m() {
    let l = DistributedLayout::Nvmma(mma(2, &[1, 1], &[16, 8])).to_linear(&[32, 32]).unwrap();
    assert_eq!(bases(&l, "register"), [[0, 1], [8, 0], [0, 8], [0, 16], [16, 0]]);
    assert_eq!(bases(&l, "lane"), MMA_LANES);
}

#[test]
fn case28_mma_v3_accumulator() {
    let l = DistributedLayout::Nvmma(mma(3, &[4, 1], &[16, 16, 8])).to_linear(&[64, 16]).unwrap();
    check_dims(&l, 2);
    assert_eq!(bases(&l, "register"), [[0, 1], [8, 0], [0, 8]]);
    assert_eq!(bases(&l, "lane"), MMA_LANES);
    assert_eq!(bases(&l, "warp"), [[16, 0], [32, 0]]);
}

#[test]
fn case30_mma_v2_dot_operands() {
    let parent = || DistributedLayout::Nvmma(mma(2, &[1, 1], &[16, 8]));
    let a = dot(0, parent(), 8).to_linear(&[16, 64]).unwrap();
    check_dims(&a, 2);
    assert_eq!(bases(&a, "register"), [[0, 1], [0, 2], [0, 4], [8, 0], [0, 32]]);
    assert_eq!(bases(&a, "lane"), [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]]);
    let b = dot(1, parent(), 8).to_linear(&[64, 8]).unwrap();
    check_dims(&b, 2);
    assert_eq!(bases(&b, "register"), [[1, 0], [2, 0], [4, 0], [32, 0]]);
    assert_eq!(bases(&b, "lane"), [[8, 0], [16, 0], [0, 1], [0, 2], [0, 4]]);
}

#[test]
fn case31_mma_v3_register_a_operand() {
    let parent = || DistributedLayout::Nvmma(mma(3, &[4, 1], &[16, 16, 8]));
    let small = dot(0, parent(), 2).to_linear(&[64, 16]).unwrap();
    let acc = DistributedLayout::Nvmma(mma(3, &[4, 1], &[16, 16, 8])).to_linear(&[64, 16]).unwrap();
    assert_eq!(small, acc);
    let large = dot(0, parent(), 2).to_linear(&[128, 32]).unwrap();
    assert_eq!(bases(&large, "register"), [[0, 1], [8, 0], [0, 8], [0, 16], [64, 0]]);
    assert_eq!(bases(&large, "lane"), MMA_LANES);
    assert_eq!(bases(&large, "warp"), [[16, 0], [32, 0]]);
}

#[test]
fn case33_unswizzled_shared() {
    let layout = SharedLayout::Swizzled(SwizzledSharedLayout {
        vec: 1,
        per_phase: 1,
        max_phase: 1,
        order: vec![1, 0],
        cga: CgaLayout::Single,
    });
    let l = layout.to_linear(&[128, 128]).unwrap();
    assert_eq!(l.in_dim_names(), ["offset", "block"]);
    let expected: Vec<Vec<u32>> = (0..7).map(|b| vec![0, 1 << b]).chain((0..7).map(|b| vec![1 << b, 0])).collect();
    assert_eq!(bases(&l, "offset"), expected);
    assert!(bases(&l, "block").is_empty());
}

#[test]
fn case35_nvmma_shared_32_byte_swizzle() {
    let layout = SharedLayout::Nvmma(NvmmaSharedLayout {
        swizzle_byte_width: 32,
        element_bitwidth: 16,
        rank: 2,
        transposed: false,
        fp4_padded: false,
        cga: CgaLayout::Single,
    });
    let l = layout.to_linear(&[8, 16]).unwrap();
    assert_eq!(l.in_dim_names(), ["offset", "block"]);
    assert_eq!(bases(&l, "offset"), [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 8]]);
}
