//! Exact checks of the standard layouts beyond the conformance file (bases Triton's own conversion tests fix
//! for NVMMA shared memory and TMEM), the Gluon spelling of every spec type, and the error for each kind of
//! bad parameter.

use super::*;
use crate::linear::LinearLayout;

fn bases(l: &LinearLayout, dim: &str) -> Vec<Vec<u32>> {
    l.bases(dim).iter().map(|b| b.to_vec()).collect()
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

fn nvmma_shared(swizzle: u32, bits: u32, rank: u32, transposed: bool) -> NvmmaSharedLayout {
    NvmmaSharedLayout {
        swizzle_byte_width: swizzle,
        element_bitwidth: bits,
        rank,
        transposed,
        fp4_padded: false,
        cga: CgaLayout::Single,
    }
}

fn tmem(m: u32, n: u32) -> TensorMemoryLayout {
    TensorMemoryLayout { block: [m, n], col_stride: 1, two_ctas: false, cta_split: [1, 1] }
}

fn offsets(layout: NvmmaSharedLayout, shape: &[u32]) -> Vec<Vec<u32>> {
    bases(&SharedLayout::Nvmma(layout).to_linear(shape).unwrap(), "offset")
}

fn err(r: Result<LinearLayout>) -> String {
    r.unwrap_err().0
}

// ----- NVMMA shared: the swizzle atom, boxes, transposition, fp4 padding -----

#[test]
fn nvmma_128b_16bit() {
    let want = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32]];
    assert_eq!(offsets(nvmma_shared(128, 16, 2, false), &[8, 64]), want);
}

#[test]
fn nvmma_64b_16bit() {
    let want = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0], [2, 8], [4, 16]];
    assert_eq!(offsets(nvmma_shared(64, 16, 2, false), &[8, 32]), want);
}

#[test]
fn nvmma_128b_32bit_repeats_the_box_along_n() {
    let want = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 4], [2, 8], [4, 16], [0, 32]];
    assert_eq!(offsets(nvmma_shared(128, 32, 2, false), &[8, 64]), want);
}

#[test]
fn nvmma_128b_transposed() {
    let want = [
        [1, 0],
        [2, 0],
        [4, 0],
        [8, 0],
        [16, 0],
        [4, 1],
        [8, 2],
        [16, 4],
        [0, 8],
        [0, 16],
        [0, 32],
        [0, 64],
        [32, 0],
        [64, 0],
    ];
    assert_eq!(offsets(nvmma_shared(128, 32, 2, true), &[128, 128]), want);
}

#[test]
fn nvmma_rank3_collapses_outer_dims() {
    let want = [
        [0, 0, 1],
        [0, 0, 2],
        [0, 0, 4],
        [0, 0, 8],
        [0, 1, 0],
        [0, 2, 4],
        [1, 0, 8],
        [2, 0, 0],
        [4, 0, 0],
        [8, 0, 0],
        [16, 0, 0],
        [0, 0, 16],
        [0, 0, 32],
    ];
    assert_eq!(offsets(nvmma_shared(64, 32, 3, false), &[32, 4, 64]), want);
}

#[test]
fn nvmma_rank3_transposed() {
    let want = [
        [1, 0, 0],
        [2, 0, 0],
        [4, 0, 0],
        [8, 0, 0],
        [0, 0, 4],
        [4, 0, 8],
        [8, 0, 16],
        [0, 1, 0],
        [0, 2, 0],
        [0, 0, 1],
        [0, 0, 2],
        [16, 0, 0],
        [32, 0, 0],
    ];
    assert_eq!(offsets(nvmma_shared(64, 32, 3, true), &[64, 4, 32]), want);
}

#[test]
fn nvmma_fp4_padded_maps_padding_onto_data() {
    let layout = NvmmaSharedLayout { fp4_padded: true, ..nvmma_shared(128, 8, 2, false) };
    let want = [[0, 1], [0, 2], [0, 4], [0, 0], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32], [8, 0], [16, 0]];
    assert_eq!(offsets(layout, &[32, 64]), want);
}

#[test]
fn swizzled_rank2_with_a_unit_dim_is_the_identity() {
    let layout = SharedLayout::Swizzled(SwizzledSharedLayout {
        vec: 2,
        per_phase: 2,
        max_phase: 4,
        order: vec![1, 0],
        cga: CgaLayout::Single,
    });
    let l = layout.to_linear(&[64, 1]).unwrap();
    assert_eq!(bases(&l, "offset"), (0..6).map(|b| vec![1 << b, 0]).collect::<Vec<_>>());
}

// ----- TMEM -----

#[test]
fn tmem_block_m_64() {
    let t = tmem(64, 64);
    let cols: Vec<Vec<u32>> = (0..6).map(|b| vec![0, 1 << b]).collect();
    let rows = |extra: [u32; 2]| {
        vec![vec![1, 0], vec![2, 0], vec![4, 0], vec![8, 0], extra.to_vec(), vec![16, 0], vec![32, 0]]
    };
    // A second 64-row block takes row bit 16.
    let l = t.to_linear(&[128, 64]).unwrap();
    assert_eq!(l.in_dim_names(), ["row", "col"]);
    assert_eq!((bases(&l, "row"), bases(&l, "col")), (rows([64, 0]), cols.clone()));
    // One block: rows 16..32 of each warp's quarter hold nothing.
    let l = t.to_linear(&[64, 64]).unwrap();
    assert_eq!((bases(&l, "row"), bases(&l, "col")), (rows([0, 0]), cols.clone()));
    // Blocks beyond the second: M first, then N, in columns.
    let l = t.to_linear(&[256, 128]).unwrap();
    let mut more = cols.clone();
    more.extend([vec![128, 0], vec![0, 64]]);
    assert_eq!((bases(&l, "row"), bases(&l, "col")), (rows([64, 0]), more));
    // With one block of M, the second N block takes row bit 16.
    let l = t.to_linear(&[64, 256]).unwrap();
    let mut more = cols;
    more.push(vec![0, 128]);
    assert_eq!((bases(&l, "row"), bases(&l, "col")), (rows([0, 64]), more));
}

#[test]
fn tmem_block_m_128_repeats_m_then_n() {
    let l = tmem(128, 128).to_linear(&[256, 256]).unwrap();
    let want = LinearLayout::identity_1d(128, "row", "dim0")
        * LinearLayout::identity_1d(128, "col", "dim1")
        * LinearLayout::identity_1d(2, "col", "dim0")
        * LinearLayout::identity_1d(2, "col", "dim1");
    assert_eq!(l, want);
}

#[test]
fn tmem_unpacked_columns_skip_every_other_slot() {
    let t = TensorMemoryLayout { col_stride: 2, ..tmem(128, 64) };
    let l = t.to_linear(&[128, 64]).unwrap();
    let mut cols = vec![vec![0, 0]];
    cols.extend((0..6).map(|b| vec![0, 1 << b]));
    assert_eq!(bases(&l, "col"), cols);
}

#[test]
fn tmem_buffers_follow_one_another_in_the_columns() {
    // [2, 128, 64]: buffer 1 is buffer 0's layout 64 columns on.
    let l = tmem(128, 64).to_linear(&[2, 128, 64]).unwrap();
    let one = tmem(128, 64).to_linear(&[128, 64]).unwrap();
    assert_eq!(l.in_dim_size("row"), 128);
    assert_eq!(l.in_dim_size("col"), 128);
    for (row, col) in [(0, 0), (5, 63), (127, 17)] {
        let c = one.apply(&[row, col]);
        assert_eq!(l.apply(&[row, col]).to_vec(), vec![0, c[0], c[1]]);
        assert_eq!(l.apply(&[row, col + 64]).to_vec(), vec![1, c[0], c[1]]);
    }
}

#[test]
fn tmem_scales_hold_two_rows_per_lane_and_four_scales_per_column() {
    // [128, 8] of 8-bit scales: lane r holds rows r and r + 32 (the 4 lane quarters hold copies), a 32-bit
    // column (4 slots) 4 scales of a row; rows 64.. and scales 4.. take the following columns.
    let l = TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 }.to_linear(&[128, 8]).unwrap();
    assert_eq!(bases(&l, "row"), [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0], [0, 0]]);
    assert_eq!(bases(&l, "col"), [[0, 1], [0, 2], [32, 0], [64, 0], [0, 4]]);
    // Smaller than one 64 x 4 block: the slots past it hold nothing.
    let small = TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 }.to_linear(&[32, 2]).unwrap();
    assert_eq!(bases(&small, "col"), [[0, 1], [0, 0], [0, 0]]);
    // A CTA split takes the last column bits.
    let split = TensorMemoryScalesLayout { cta_split: [2, 1], broadcast: 1 }.to_linear(&[256, 4]).unwrap();
    assert_eq!(bases(&split, "col").last().unwrap(), &[128, 0]);
}

#[test]
fn tmem_scales_buffers_follow_one_another_in_the_columns() {
    // [2, 128, 4]: buffer 1 starts where buffer 0's 16 byte slots (4 columns) end.
    let s = TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 };
    let one = s.to_linear(&[128, 4]).unwrap();
    let two = s.to_linear(&[2, 128, 4]).unwrap();
    assert_eq!(two.in_dim_size("col"), 2 * one.in_dim_size("col"));
    for (row, col) in [(0, 0), (5, 3), (17, 9), (31, 15)] {
        let c = one.apply(&[row, col]);
        assert_eq!(two.apply(&[row, col]).to_vec(), vec![0, c[0], c[1]]);
        assert_eq!(two.apply(&[row, col + 16]).to_vec(), vec![1, c[0], c[1]]);
    }
}

#[test]
fn tmem_cta_split_takes_the_last_column_bits() {
    let split = TensorMemoryLayout { cta_split: [2, 2], ..tmem(128, 64) };
    let l = split.to_linear(&[256, 128]).unwrap();
    let want = tmem(128, 64).to_linear(&[128, 64]).unwrap()
        * LinearLayout::identity_1d(2, "col", "dim0")
        * LinearLayout::identity_1d(2, "col", "dim1");
    assert_eq!(l, want);
    // Each CTA reads its own part; the block dim says which.
    let regs = DistributedLayout::TmemReg(TmemRegLayout::new(split, TmemAccess::B32x32, 4)).to_linear(&[256, 128]);
    let regs = regs.unwrap();
    assert_eq!(bases(&regs, "block"), [[128, 0], [0, 64]]);
    assert_eq!(bases(&regs, "warp"), [[32, 0], [64, 0]]);
}

#[test]
fn tmem_16bit_packs_pairs_into_registers() {
    let reg = TmemRegLayout { element_bitwidth: 16, ..TmemRegLayout::new(tmem(128, 64), TmemAccess::B32x32, 4) };
    let l = DistributedLayout::TmemReg(reg).to_linear(&[128, 64]).unwrap();
    assert_eq!(bases(&l, "register"), (0..6).map(|b| vec![0, 1 << b]).collect::<Vec<_>>());
    assert_eq!(bases(&l, "lane"), (0..5).map(|b| vec![1 << b, 0]).collect::<Vec<_>>());
}

#[test]
fn tmem_block_m_64_with_32x32b_uses_the_16x32bx2_split() {
    // Lanes 0-15 read rows 0-15 of a warp's quarter; lanes 16-31 read the second half of the columns.
    let reg = TmemRegLayout::new(tmem(64, 64), TmemAccess::B32x32, 4);
    let l = DistributedLayout::TmemReg(reg).to_linear(&[64, 64]).unwrap();
    assert_eq!(bases(&l, "lane"), [[1, 0], [2, 0], [4, 0], [8, 0], [0, 32]]);
    assert_eq!(bases(&l, "register"), (0..5).map(|b| vec![0, 1 << b]).collect::<Vec<_>>());
    assert_eq!(bases(&l, "warp"), [[16, 0], [32, 0]]);
}

// ----- Gluon spelling -----

#[test]
fn display_gluon_spelling() {
    let b = blocked(&[1, 4], &[8, 4], &[4, 1], &[1, 0]);
    assert_eq!(b.to_string(), "BlockedLayout([1,4],[8,4],[4,1],[1,0])");
    let with_cga = BlockedLayout { cga: CgaLayout::Bases(vec![vec![1, 0]]), ..b.clone() };
    assert_eq!(with_cga.to_string(), "BlockedLayout([1,4],[8,4],[4,1],[1,0],cga_layout=[[1,0]])");
    let legacy = BlockedLayout {
        cga: CgaLayout::Legacy { ctas_per_cga: vec![2, 1], cta_split: vec![2, 1], cta_order: vec![1, 0] },
        ..b.clone()
    };
    assert_eq!(
        legacy.to_string(),
        "BlockedLayout([1,4],[8,4],[4,1],[1,0],ctas_per_cga=[2,1],cta_split_num=[2,1],cta_order=[1,0])"
    );
    let slice = DistributedLayout::Slice(SliceLayout { dim: 0, parent: Box::new(DistributedLayout::Blocked(b)) });
    assert_eq!(slice.to_string(), "SliceLayout(0, BlockedLayout([1,4],[8,4],[4,1],[1,0]))");
    let acc = mma(3, &[4, 1], &[16, 128, 16]);
    assert_eq!(acc.to_string(), "NVMMADistributedLayout([3,0],[4,1],[16,128,16])");
    let dot = DotOperandLayout { operand_index: 0, parent: Box::new(DistributedLayout::Nvmma(acc)), k_width: 2 };
    assert_eq!(dot.to_string(), "DotOperandLayout(0, NVMMADistributedLayout([3,0],[4,1],[16,128,16]), 2)");
    let linear = DistributedLinearLayout {
        reg_bases: vec![vec![0, 1]],
        lane_bases: vec![vec![0, 2], vec![0, 4], vec![1, 0], vec![2, 0], vec![4, 0]],
        warp_bases: vec![],
        block_bases: vec![],
        shape: vec![8, 8],
    };
    assert_eq!(linear.to_string(), "DistributedLinearLayout([[0,1]],[[0,2],[0,4],[1,0],[2,0],[4,0]],[],[],[8,8])");
    let reg = TmemRegLayout::new(tmem(128, 128), TmemAccess::B16x64, 8);
    assert_eq!(reg.to_string(), "TmemRegLayout(TensorMemoryLayout((128,128), 1), \"16x64b\", 8, 32)");

    assert_eq!(nvmma_shared(128, 16, 2, false).to_string(), "NVMMASharedLayout(128, 16)");
    let odd = NvmmaSharedLayout {
        fp4_padded: true,
        cga: CgaLayout::Bases(vec![vec![1, 0, 0]]),
        ..nvmma_shared(64, 8, 3, true)
    };
    assert_eq!(
        odd.to_string(),
        "NVMMASharedLayout(64, 8, rank=3, transposed=True, fp4_padded=True, cga_layout=[[1,0,0]])"
    );
    let sw = SwizzledSharedLayout { vec: 2, per_phase: 2, max_phase: 4, order: vec![1, 0], cga: CgaLayout::Single };
    assert_eq!(sw.to_string(), "SwizzledSharedLayout(2,2,4,[1,0])");
    let sl =
        SharedLinearLayout { offset_bases: vec![vec![0, 1], vec![1, 0]], block_bases: vec![vec![2, 0]], alignment: 32 };
    assert_eq!(sl.to_string(), "SharedLinearLayout([[0,1],[1,0]], block_bases=[[2,0]], alignment=32)");
    assert_eq!(tmem(128, 128).to_string(), "TensorMemoryLayout((128,128), 1)");
    let split = TensorMemoryLayout { col_stride: 2, cta_split: [2, 1], two_ctas: true, ..tmem(64, 256) };
    assert_eq!(split.to_string(), "TensorMemoryLayout((64,256), 2, cta_split_num=(2,1), two_ctas=True)");
    let any = AnyLayout::Shared(SharedLayout::Swizzled(sw));
    assert_eq!(any.to_string(), "SwizzledSharedLayout(2,2,4,[1,0])");
}

// ----- errors -----

#[test]
fn bad_parameters_are_errors_not_panics() {
    let dist = |l: BlockedLayout, shape: &[u32]| err(DistributedLayout::Blocked(l).to_linear(shape));
    let ok = blocked(&[1, 4], &[8, 4], &[4, 1], &[1, 0]);
    assert!(dist(blocked(&[1], &[8, 4], &[4, 1], &[1, 0]), &[16, 16]).contains("size_per_thread [1] has 1 entries"));
    assert!(dist(blocked(&[1, 3], &[8, 4], &[4, 1], &[1, 0]), &[16, 16]).contains("3, which is not a power of two"));
    assert!(dist(blocked(&[1, 4], &[8, 8], &[4, 1], &[1, 0]), &[16, 16]).contains("multiplies out to 64"));
    assert!(dist(blocked(&[1, 4], &[8, 4], &[4, 1], &[1, 1]), &[16, 16]).contains("1 appears twice"));
    assert!(dist(blocked(&[1, 4], &[8, 4], &[4, 1], &[2, 0]), &[16, 16]).contains("2 is out of range"));
    assert!(dist(ok.clone(), &[16, 12]).contains("12, which is not a power of two"));
    assert!(dist(ok.clone(), &[16]).contains("has rank 2 but the shape [16] has rank 1"));
    assert!(dist(ok.clone(), &[1 << 30, 1 << 30]).contains("at most 2^48"));
    let bad_cga = BlockedLayout { cga: CgaLayout::Bases(vec![vec![1]]), ..ok.clone() };
    assert!(dist(bad_cga, &[16, 16]).contains("has 1 coordinates but the layout has rank 2"));
    let hole = BlockedLayout { cga: CgaLayout::Bases(vec![vec![2, 0]]), ..ok.clone() };
    assert!(dist(hole, &[16, 16]).contains("leaves some CTA tiles"));

    let nv = |l: NvmmaDistributedLayout| err(DistributedLayout::Nvmma(l).to_linear(&[64, 64]));
    assert!(nv(mma(1, &[4, 1], &[16, 8])).contains("not supported"));
    assert!(nv(mma(2, &[4, 1], &[16, 16])).contains("is not the mma.sync tile [16, 8]"));
    assert!(nv(mma(3, &[4, 1], &[16, 24, 16])).contains("is not [16, N, K]"));
    assert!(nv(mma(3, &[4, 1], &[16, 64])).contains("is not [16, N, K]"));
    assert!(nv(mma(3, &[2, 2], &[16, 64, 16])).contains("multiple of 4 warps along M"));

    let operand = |index: u32, parent: DistributedLayout, k_width: u32| {
        err(DistributedLayout::DotOperand(DotOperandLayout { operand_index: index, parent: Box::new(parent), k_width })
            .to_linear(&[64, 64]))
    };
    let hopper = || DistributedLayout::Nvmma(mma(3, &[4, 1], &[16, 64, 16]));
    assert!(operand(1, hopper(), 2).contains("operand B from shared memory"));
    assert!(operand(0, hopper(), 0).contains("k_width 0 must be a power of two"));
    assert!(operand(2, hopper(), 2).contains("must be 0 (A) or 1 (B)"));
    assert!(operand(0, DistributedLayout::Blocked(ok.clone()), 2).contains("k_width must be 0 for a BlockedLayout"));
    let slice = DistributedLayout::Slice(SliceLayout { dim: 0, parent: Box::new(hopper()) });
    assert!(operand(0, slice, 2).contains("must be a BlockedLayout or an NVMMADistributedLayout, not SliceLayout"));

    let slice = |dim: u32| SliceLayout { dim, parent: Box::new(DistributedLayout::Blocked(ok.clone())) };
    assert!(err(slice(2).to_linear(&[16])).contains("dim 2 is out of range"));

    let linear = |reg: Vec<Vec<u32>>, shape: Vec<u32>| {
        let lanes = vec![vec![0, 1], vec![0, 2], vec![0, 4], vec![1, 0], vec![2, 0]];
        let l = DistributedLinearLayout {
            reg_bases: reg,
            lane_bases: lanes,
            warp_bases: vec![],
            block_bases: vec![],
            shape,
        };
        err(DistributedLayout::Linear(l).to_linear(&[4, 8]))
    };
    assert!(linear(vec![vec![1, 1]], vec![8, 8]).contains("moves along more than one dim"));
    assert!(linear(vec![vec![0, 3]], vec![8, 8]).contains("not 0 or a power of two"));
    assert!(linear(vec![vec![0, 16]], vec![8, 8]).contains("which has size 8"));
    assert!(linear(vec![vec![2, 0]], vec![8, 8]).contains("do not reach every element"));

    let tm = |t: TensorMemoryLayout, shape: &[u32]| err(t.to_linear(shape));
    assert!(tm(tmem(32, 64), &[128, 64]).contains("block M must be 64 or 128"));
    assert!(tm(tmem(128, 64), &[64, 64]).contains("smaller than one TMEM block"));
    assert!(tm(TensorMemoryLayout { col_stride: 3, ..tmem(128, 64) }, &[128, 64]).contains("col_stride"));
    let reg = |access, warps, shape: &[u32]| {
        err(DistributedLayout::TmemReg(TmemRegLayout::new(tmem(128, 64), access, warps)).to_linear(shape))
    };
    assert!(reg(TmemAccess::B32x32, 2, &[128, 64]).contains("num_warps must be a power of two, at least 4"));
    assert!(reg(TmemAccess::B16x256, 4, &[128, 4]).contains("fewer than one .16x256b access"));

    let sh = |l: SharedLayout, shape: &[u32]| err(l.to_linear(shape));
    assert!(
        sh(SharedLayout::Nvmma(nvmma_shared(128, 16, 2, false)), &[64, 32])
            .contains("fewer than one 128-byte swizzle row")
    );
    assert!(
        sh(SharedLayout::Nvmma(nvmma_shared(128, 16, 2, false)), &[4, 64])
            .contains("smaller than one 8x64 swizzle atom")
    );
    assert!(sh(SharedLayout::Nvmma(nvmma_shared(48, 16, 2, false)), &[64, 64]).contains("must be 0, 32, 64 or 128"));
    assert!(sh(SharedLayout::Nvmma(nvmma_shared(128, 16, 1, false)), &[64]).contains("needs rank at least 2"));
    let fp4 = NvmmaSharedLayout { fp4_padded: true, ..nvmma_shared(64, 8, 2, false) };
    assert!(sh(SharedLayout::Nvmma(fp4), &[64, 64]).contains("fp4_padded requires"));
    let sw = SwizzledSharedLayout { vec: 3, per_phase: 1, max_phase: 1, order: vec![1, 0], cga: CgaLayout::Single };
    assert!(sh(SharedLayout::Swizzled(sw), &[64, 64]).contains("vec must be a power of two"));
    let sl = SharedLinearLayout { offset_bases: vec![vec![0, 1], vec![1, 0]], block_bases: vec![], alignment: 16 };
    assert!(sh(SharedLayout::Linear(sl.clone()), &[4, 2]).contains("span the shape [2, 2]"));
    assert_eq!(bases(&SharedLayout::Linear(sl).to_linear(&[2, 2]).unwrap(), "offset"), [[0, 1], [1, 0]]);
}

#[test]
fn tmem_scales_move_four_scales_per_register_in_every_lane_quarter() {
    let s = TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 };
    // [128, 8]: lane l of warp w holds rows l, l + 32, l + 64, l + 96 (one register of 4 scales each), scales 0-3
    // then 4-7; the warps hold copies.
    let l = s.reg_layout(&[128, 8], TmemAccess::B32x32, 4).unwrap();
    assert_eq!(bases(&l, "register"), [[0, 1], [0, 2], [32, 0], [64, 0], [0, 4]]);
    assert_eq!(bases(&l, "lane"), [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]);
    assert_eq!(bases(&l, "warp"), [[0, 0], [0, 0]]);
    // [32, 4] (B scales of N 32): one register of 4 scales, and the empty column's register repeats it.
    let l = s.reg_layout(&[32, 4], TmemAccess::B32x32, 4).unwrap();
    assert_eq!(bases(&l, "lane"), [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]);
    assert_eq!(bases(&l, "register"), [[0, 1], [0, 2], [0, 0]]);
}
