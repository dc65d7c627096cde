//! The assertions of `tessel_layouts::testing` pass on good conversions and fail, with a counterexample that
//! names the element and the hardware slots, on bad ones.

use std::panic::{AssertUnwindSafe, catch_unwind};

use tessel_layouts::testing::{
    ConversionFailure, assert_bank_conflict_free, assert_conversion_correct, assert_vectorized, blocked_layout,
    check_plan, corrupt_plan, mma_layout, nvmma_shared_layout,
};
use tessel_layouts::{ConversionPlan, PlanOptions, plan_conversion};

/// The panic message of `f`.
fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("the assertion should fail");
    err.downcast_ref::<String>().cloned().or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string())).unwrap()
}

#[test]
fn correct_conversions_report_their_costs() {
    // Within one warp: shuffles, no shared memory.
    let (one, two) = (blocked_layout(&[1], &[32], &[1], &[0]), blocked_layout(&[2], &[32], &[1], &[0]));
    let r = assert_conversion_correct(&one, &two, &[64], 32);
    assert_eq!(r.plan.kind(), "shuffle");
    assert_eq!((r.shuffles, r.shared_stores, r.shared_loads, r.barriers, r.access_bytes), (2, 0, 0, 0, 0));
    // Across warps: a round trip with one barrier. Rows and columns share only the repetition directions in
    // registers, so each access moves 2 elements (4 bytes at 16 bits).
    let row = blocked_layout(&[1, 8], &[4, 8], &[4, 1], &[1, 0]);
    let col = blocked_layout(&[8, 1], &[8, 4], &[1, 4], &[0, 1]);
    let r = assert_conversion_correct(&row, &col, &[64, 128], 16);
    assert_eq!(r.plan.kind(), "shared");
    assert_eq!((r.barriers, r.store_conflicts, r.load_conflicts, r.access_bytes), (1, 0, 0, 4));
    assert_eq!(r.shared_stores, 128, "64 registers per thread / 2 per store = 32 stores per warp, 4 warps");
    assert_eq!(assert_vectorized(&row, &col, &[64, 128], 16, 4), 4);
    assert_eq!(assert_bank_conflict_free(&row, &col, &[64, 128], 16).len(), 2);
    let msg = panic_message(|| {
        assert_vectorized(&row, &col, &[64, 128], 16, 8);
    });
    assert!(
        msg.contains("move 4 bytes per lane (2 elements), fewer than 8: an 8-byte access needs offsets 0..4"),
        "{msg}"
    );
    assert!(
        msg.contains(
            "\n  in the source, offset 0 holds element (dim0=0, dim1=0) at (block 0, warp 0, lane 0, register 0) and \
             offset 2 holds element (dim0=0, dim1=8) at (block 0, warp 0, lane 1, register 0) (another thread)\n"
        ),
        "{msg}"
    );
    // The same layout: nothing to do, nothing in shared memory.
    let acc = mma_layout(2, &[2, 2], &[16, 8]);
    assert_eq!(assert_conversion_correct(&acc, &acc, &[32, 32], 8).plan, ConversionPlan::NoOp);
    assert!(assert_bank_conflict_free(&acc, &acc, &[32, 32], 8).is_empty());
    assert_eq!(assert_vectorized(&acc, &acc, &[32, 32], 8, 16), 0);
}

#[test]
fn a_broken_plan_fails_with_the_first_wrong_register() {
    let src = blocked_layout(&[1], &[32], &[1], &[0]).to_linear(&[32]).unwrap();
    let dst = blocked_layout(&[1], &[32], &[1], &[0]).to_linear(&[32]).unwrap();
    let plan = plan_conversion(&src, &dst, 32, &PlanOptions::default()).unwrap();
    assert_eq!(plan, ConversionPlan::NoOp);
    // One register per thread: the corruption swaps lanes 0 and 1 with a shuffle.
    let broken = corrupt_plan(&plan, &src, &dst).expect("two lanes to swap");
    let Err(ConversionFailure::WrongElement(w)) = check_plan(&broken, &src, &dst, 32, 3) else {
        panic!("the broken plan passed")
    };
    assert_eq!(
        w.to_string(),
        "element (dim0=1), held in the source by (block 0, warp 0, lane 1, register 0), lands in the destination at \
         (block 0, warp 0, lane 0, register 0)\n  but the destination layout puts it at (block 0, warp 0, lane 1, \
         register 0)\n  and wants element (dim0=0) at (block 0, warp 0, lane 0, register 0) (held in the source by \
         (block 0, warp 0, lane 0, register 0))\n  32 of 32 destination registers are wrong"
    );
}

#[test]
fn bank_conflicts_name_two_lanes_in_one_bank() {
    // Lanes down the rows, 16-byte vectors along them, into an unswizzled row-major buffer: the 8 lanes of a
    // phase all start at word 32 * lane, bank 0.
    let dist = blocked_layout(&[1, 4], &[32, 1], &[1, 1], &[1, 0]);
    let shared = nvmma_shared_layout(0, 32, false);
    let msg = panic_message(|| {
        assert_bank_conflict_free(&dist, &shared, &[32, 32], 32);
    });
    assert!(
        msg.starts_with("bank conflicts in BlockedLayout([1,4],[32,1],[1,1],[1,0]) -> NVMMASharedLayout("),
        "{msg}"
    );
    assert!(msg.contains("st.shared of warp 0 (register 0) takes 32 wavefronts where 4 would do"), "{msg}");
    assert!(
        msg.contains(
            "lane 0 (element (dim0=0, dim1=0), offset 0, word 0) and lane 1 (element (dim0=1, dim1=0), offset 32, \
             word 32) hit bank 0 in the same phase (32-bit elements, 16 bytes per lane)"
        ),
        "{msg}"
    );
    // The NVMMA 128-byte swizzle spreads the same stores over the banks.
    assert_bank_conflict_free(&dist, &nvmma_shared_layout(128, 32, false), &[32, 32], 32);
}

#[test]
fn narrow_accesses_name_the_element_in_another_thread() {
    // Each thread holds a column: along a row-major buffer its elements are 32 offsets apart.
    let dist = blocked_layout(&[1, 1], &[1, 32], &[1, 1], &[1, 0]);
    let shared = nvmma_shared_layout(0, 32, false);
    assert_eq!(assert_vectorized(&dist, &shared, &[32, 32], 32, 4), 4);
    let msg = panic_message(|| {
        assert_vectorized(&dist, &shared, &[32, 32], 32, 8);
    });
    assert!(
        msg.contains("move 4 bytes per lane (1 elements), fewer than 8: an 8-byte access needs offsets 0..2"),
        "{msg}"
    );
    assert!(
        msg.ends_with(
            "offset 0 holds element (dim0=0, dim1=0) at (block 0, warp 0, lane 0, register 0) and offset 1 holds \
             element (dim0=0, dim1=1) at (block 0, warp 0, lane 1, register 0) (another thread)"
        ),
        "{msg}"
    );
    let msg = panic_message(|| {
        assert_vectorized(&dist, &shared, &[32, 32], 32, 32);
    });
    assert!(msg.contains("min_bytes 32 must be a power of two of at most 16"), "{msg}");
}

#[test]
fn bad_inputs_are_clear_panics() {
    let dist = blocked_layout(&[1, 1], &[1, 32], &[1, 1], &[1, 0]);
    let msg = panic_message(|| {
        assert_conversion_correct(&dist, &dist, &[32], 32);
    });
    assert!(msg.starts_with("cannot build BlockedLayout([1,1],[1,32],[1,1],[1,0]) on 32: "), "{msg}");
    let shared = nvmma_shared_layout(0, 32, false);
    let msg = panic_message(|| {
        assert_bank_conflict_free(&shared, &shared, &[32, 32], 32);
    });
    assert!(msg.contains("are both shared layouts"), "{msg}");
}
