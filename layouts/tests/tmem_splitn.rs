//! `DistributedLinearLayout::split_n`: the `32x32b_splitn` register layout of Gluon's `get_reg_layout`, derived
//! from the `32x32b` one by moving the column half `[0, N / 2]` into the last register basis.

use tessel_layouts::{DistributedLayout, DistributedLinearLayout, TensorMemoryLayout, TmemAccess, TmemRegLayout};

/// The `32x32b` register layout of a `shape` f32 tensor in a `TensorMemoryLayout((m, n), 1)` buffer, as bases.
fn reg_32x32b(m: u32, n: u32, warps: u32, shape: &[u32]) -> DistributedLinearLayout {
    let tmem = TensorMemoryLayout { block: [m, n], col_stride: 1, two_ctas: false, cta_split: [1, 1] };
    let l = DistributedLayout::TmemReg(TmemRegLayout::new(tmem, TmemAccess::B32x32, warps)).to_linear(shape).unwrap();
    let bases = |d: &str| l.bases(d).iter().map(|b| b.to_vec()).collect::<Vec<Vec<u32>>>();
    DistributedLinearLayout {
        reg_bases: bases("register"),
        lane_bases: bases("lane"),
        warp_bases: bases("warp"),
        block_bases: bases("block"),
        shape: shape.to_vec(),
    }
}

#[test]
fn the_last_register_already_picking_the_half_is_kept() {
    // 128 rows over 4 warps: every column is a register, the last one picks the column half.
    let l = reg_32x32b(128, 128, 4, &[128, 128]);
    assert_eq!(l.reg_bases.last(), Some(&vec![0, 64]));
    assert_eq!(l.clone().split_n(128, 32).unwrap(), l);
}

#[test]
fn a_lane_holding_the_half_trades_places_with_the_last_register() {
    // Block M 64: lanes 16-31 hold the second half of the columns (the 16x32bx2 split).
    let l = reg_32x32b(64, 64, 4, &[64, 64]);
    assert_eq!(l.lane_bases.last(), Some(&vec![0, 32]));
    let s = l.clone().split_n(64, 32).unwrap();
    assert_eq!(s.reg_bases.last(), Some(&vec![0, 32]));
    assert_eq!(s.lane_bases.last(), Some(&vec![0, 16]));
    assert_eq!(s.reg_bases[..4], l.reg_bases[..4]);
    assert_eq!((s.warp_bases, s.block_bases, s.shape), (l.warp_bases, l.block_bases, l.shape));
}

#[test]
fn a_warp_past_the_first_four_holding_the_half_trades_places() {
    // 8 warps on 128 rows: warps 4-7 take the second half of the columns.
    let l = reg_32x32b(128, 64, 8, &[128, 64]);
    assert_eq!(l.warp_bases.last(), Some(&vec![0, 32]));
    let s = l.clone().split_n(64, 32).unwrap();
    assert_eq!(s.reg_bases.last(), Some(&vec![0, 32]));
    assert_eq!(s.warp_bases[2], vec![0, 16]);
    assert_eq!(s.warp_bases[..2], l.warp_bases[..2]);
}

#[test]
fn too_few_registers_or_no_half_basis_is_an_error() {
    // 8 warps on [128, 2]: the warps split the two columns, no register is left.
    let l = reg_32x32b(128, 2, 8, &[128, 2]);
    assert!(l.reg_bases.is_empty());
    let err = l.split_n(2, 32).unwrap_err();
    assert!(err.contains("needs the last lane basis to be [0, 1]"), "{err}");
    // 16-bit elements two to a register: one 32-bit register's worth is not enough for two accesses.
    let l = reg_32x32b(128, 4, 8, &[128, 4]);
    assert_eq!(l.reg_bases.len(), 1);
    let err = l.split_n(4, 16).unwrap_err();
    assert!(err.contains("needs more than 2 16-bit registers"), "{err}");
}
