//! Unit tests of the planner, the bank model and the executor on hand-built layouts.

use super::*;
use crate::linear::LinearLayout;

/// A 2-D layout from its bases (each `[dim0, dim1]`) over a tensor of `shape`.
fn ll(ins: &[(&str, &[[u32; 2]])], shape: [u32; 2]) -> LinearLayout {
    LinearLayout::new(
        ins.iter().map(|(n, b)| (*n, b.iter().map(|v| v.to_vec()).collect::<Vec<_>>())),
        [("dim0", shape[0]), ("dim1", shape[1])],
    )
    .unwrap()
}

/// A blocked layout built by hand: `order[0]` is the fastest dim; the tile repeats in registers to cover the
/// shape (which must not be smaller than the tile).
fn blocked(spt: [u32; 2], tpw: [u32; 2], wpc: [u32; 2], order: [usize; 2], shape: [u32; 2]) -> LinearLayout {
    fn take(covered: &mut [u32; 2], d: usize, n: u32) -> Vec<Vec<u32>> {
        (0..n.trailing_zeros())
            .map(|_| {
                let mut b = vec![0, 0];
                b[d] = 1 << covered[d];
                covered[d] += 1;
                b
            })
            .collect()
    }
    let mut c = [0u32; 2];
    let mut reg: Vec<Vec<u32>> = order.iter().flat_map(|&d| take(&mut c, d, spt[d])).collect();
    let lane: Vec<Vec<u32>> = order.iter().flat_map(|&d| take(&mut c, d, tpw[d])).collect();
    let warp: Vec<Vec<u32>> = order.iter().flat_map(|&d| take(&mut c, d, wpc[d])).collect();
    for &d in &order {
        let left = shape[d] >> c[d];
        assert!(left >= 1, "shape smaller than the tile");
        reg.extend(take(&mut c, d, left));
    }
    LinearLayout::new(
        [("register", reg), ("lane", lane), ("warp", warp), ("block", vec![])],
        [("dim0", shape[0]), ("dim1", shape[1])],
    )
    .unwrap()
}

/// Plans, runs on tagged data, checks every destination register; returns the plan.
fn plan_and_run(src: &LinearLayout, dst: &LinearLayout, bits: u32, opts: &PlanOptions) -> ConversionPlan {
    let plan = plan_conversion(src, dst, bits, opts).unwrap();
    let tensor: Vec<u32> = (0..src.total_out_size() as u32).map(|i| i.wrapping_mul(2654435761) ^ 0x5bd1e995).collect();
    let regs = distribute(src, &tensor).unwrap();
    let out = run_plan(&plan, src, dst, &regs).unwrap_or_else(|e| panic!("{e}\n{plan}"));
    check(dst, &out, &tensor).unwrap_or_else(|e| panic!("{e}\n{plan}"));
    assert_eq!(gather(dst, &out).unwrap(), tensor);
    plan
}

fn shared(plan: &ConversionPlan) -> &SharedPlan {
    match plan {
        ConversionPlan::SharedRoundTrip(sp) => sp,
        other => panic!("expected a shared-memory round trip, got\n{other}"),
    }
}

#[test]
fn identical_layouts_are_a_noop() {
    let l = blocked([1, 4], [8, 4], [2, 2], [1, 0], [32, 64]);
    assert_eq!(plan_and_run(&l, &l, 16, &PlanOptions::default()), ConversionPlan::NoOp);
}

#[test]
fn reordered_registers_are_a_permutation() {
    let lanes: &[[u32; 2]] = &[[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]];
    let src = ll(&[("register", &[[0, 1], [0, 2], [8, 0]]), ("lane", lanes)], [16, 16]);
    let dst = ll(&[("register", &[[8, 0], [0, 1], [0, 2]]), ("lane", lanes)], [16, 16]);
    let plan = plan_and_run(&src, &dst, 32, &PlanOptions::default());
    // dst register bit 0 = src bit 2, dst bit 1 = src bit 0, dst bit 2 = src bit 1.
    assert_eq!(plan, ConversionPlan::RegisterPermutation { src_register: vec![0, 4, 1, 5, 2, 6, 3, 7] });
}

#[test]
fn duplicated_registers_read_one_copy() {
    // The destination holds every element twice (register bit 1 is a broadcast).
    let lanes: &[[u32; 2]] = &[[0, 2], [0, 4], [0, 8], [0, 16], [1, 0]];
    let src = ll(&[("register", &[[0, 1]]), ("lane", lanes)], [2, 32]);
    let dst = ll(&[("register", &[[0, 1], [0, 0]]), ("lane", lanes)], [2, 32]);
    let plan = plan_and_run(&src, &dst, 16, &PlanOptions::default());
    assert_eq!(plan, ConversionPlan::RegisterPermutation { src_register: vec![0, 1, 0, 1] });
}

#[test]
fn lane_permutation_is_a_uniform_shuffle() {
    let src = ll(&[("register", &[[0, 32]]), ("lane", &[[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]])], [1, 64]);
    let dst = ll(&[("register", &[[0, 32]]), ("lane", &[[0, 2], [0, 1], [0, 8], [0, 4], [0, 16]])], [1, 64]);
    let plan = plan_and_run(&src, &dst, 32, &PlanOptions::default());
    let ConversionPlan::WarpShuffle(sh) = &plan else { panic!("expected a shuffle, got\n{plan}") };
    assert_eq!(sh.rounds.len(), 2);
    assert!(sh.is_uniform(), "{plan}");
    // Lane l reads the lane whose bits 0/1 and 2/3 are swapped.
    let swap = |l: u32| (l & 16) | (l & 1) << 1 | (l & 2) >> 1 | (l & 4) << 1 | (l & 8) >> 1;
    assert_eq!(sh.rounds[0].read_lane, (0..32).map(swap).collect::<Vec<_>>());
}

#[test]
fn register_lane_transpose_needs_selects() {
    // Source: thread holds 2 consecutive columns; destination: those columns are spread over lanes and
    // registers walk what the lanes walked.
    let src = ll(&[("register", &[[0, 1]]), ("lane", &[[0, 2], [1, 0], [2, 0], [4, 0], [8, 0]])], [16, 4]);
    let dst = ll(&[("register", &[[0, 2]]), ("lane", &[[0, 1], [1, 0], [2, 0], [4, 0], [8, 0]])], [16, 4]);
    let plan = plan_and_run(&src, &dst, 16, &PlanOptions::default());
    let ConversionPlan::WarpShuffle(sh) = &plan else { panic!("expected a shuffle, got\n{plan}") };
    assert_eq!(sh.rounds.len(), 2);
    assert!(!sh.is_uniform());
    assert_eq!(sh.lane_to_register, vec![1, 0, 0, 0, 0]);
}

#[test]
fn shuffles_can_be_turned_off() {
    let src = ll(&[("register", &[[0, 1]]), ("lane", &[[0, 2], [1, 0], [2, 0], [4, 0], [8, 0]])], [16, 4]);
    let dst = ll(&[("register", &[[0, 2]]), ("lane", &[[0, 1], [1, 0], [2, 0], [4, 0], [8, 0]])], [16, 4]);
    let opts = PlanOptions { allow_shuffles: false, ..PlanOptions::default() };
    let sp = shared(&plan_and_run(&src, &dst, 16, &opts)).clone();
    assert_eq!(sp.barrier, BarrierKind::Warp);
}

#[test]
fn blocked_to_transposed_blocked_is_conflict_free() {
    for bits in [16, 32] {
        let src = blocked([1, 8], [4, 8], [4, 1], [1, 0], [64, 128]);
        let dst = blocked([8, 1], [8, 4], [1, 4], [0, 1], [64, 128]);
        let plan = plan_and_run(&src, &dst, bits, &PlanOptions::default());
        let sp = shared(&plan);
        assert_eq!(sp.barrier, BarrierKind::Cta);
        assert_eq!(
            (sp.store_conflicts, sp.load_conflicts),
            (0, 0),
            "{bits}-bit: store {} load {} conflicts\n{plan}",
            sp.store_conflicts,
            sp.load_conflicts
        );
        assert_eq!(sp.scratch_bytes, 64 * 128 * bits / 8);
    }
}

#[test]
fn scratch_limit_splits_into_repetitions() {
    let src = blocked([1, 8], [4, 8], [4, 1], [1, 0], [64, 128]);
    let dst = blocked([8, 1], [8, 4], [1, 4], [0, 1], [64, 128]);
    // Lanes and warps of both sides reach every direction but dim1 = 64: one repetition bit at most.
    let opts = PlanOptions { max_scratch_bytes: Some(8192), ..PlanOptions::default() };
    let plan = plan_and_run(&src, &dst, 16, &opts);
    let sp = shared(&plan);
    assert_eq!((sp.reps, sp.vec, sp.scratch_bytes), (2, 1, 8192), "{plan}");
    assert_eq!(sp.rep_bases, vec![crate::linear::Basis::from_slice(&[0, 64])]);
    assert_eq!((sp.store_conflicts, sp.load_conflicts), (0, 0), "{plan}");
    let tight = PlanOptions { max_scratch_bytes: Some(4096), ..PlanOptions::default() };
    let err = plan_conversion(&src, &dst, 16, &tight).unwrap_err();
    assert!(err.0.contains("8192 bytes") && err.0.contains("max_scratch_bytes"), "{err}");
}

#[test]
fn mismatched_and_cross_cta_conversions_are_errors() {
    let a = blocked([1, 4], [8, 4], [4, 1], [1, 0], [32, 64]);
    let b = blocked([1, 4], [8, 4], [4, 1], [1, 0], [64, 64]);
    assert!(plan_conversion(&a, &b, 16, &PlanOptions::default()).unwrap_err().0.contains("mismatched shapes"));
    // Two CTAs splitting dim0 versus dim1.
    let lanes: &[[u32; 2]] = &[[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]];
    let s = ll(&[("register", &[[0, 8]]), ("lane", lanes), ("block", &[[4, 0]])], [8, 16]);
    let d = ll(&[("register", &[[4, 0]]), ("lane", lanes), ("block", &[[0, 8]])], [8, 16]);
    let err = plan_conversion(&s, &d, 16, &PlanOptions::default()).unwrap_err();
    assert!(err.0.contains("not supported") && err.0.contains("across CTAs"), "{err}");
    assert!(plan_conversion(&s, &s, 12, &PlanOptions::default()).unwrap_err().0.contains("12 bits"));
}

#[test]
fn same_cta_split_converts_per_cta() {
    let lanes: &[[u32; 2]] = &[[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]];
    let s = ll(&[("register", &[[0, 8], [4, 0]]), ("lane", lanes), ("block", &[[8, 0]])], [16, 16]);
    let lanes_t: &[[u32; 2]] = &[[1, 0], [2, 0], [4, 0], [0, 1], [0, 2]];
    let d = ll(&[("register", &[[0, 4], [0, 8]]), ("lane", lanes_t), ("block", &[[8, 0]])], [16, 16]);
    let plan = plan_and_run(&s, &d, 32, &PlanOptions { allow_shuffles: false, ..PlanOptions::default() });
    assert_eq!(shared(&plan).scratch_bytes, 8 * 16 * 4);
}

#[test]
fn naive_column_access_of_a_row_major_buffer_conflicts() {
    // 32 lanes walk dim0 of a 32x32 fp32 tile stored row-major: all 32 lanes hit bank 0.
    let dist = ll(
        &[
            ("register", &[[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]),
            ("lane", &[[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]),
        ],
        [32, 32],
    );
    let row_major = LinearLayout::new(
        [("offset", (0..10).map(|i| if i < 5 { vec![0, 1 << i] } else { vec![1 << (i - 5), 0] }).collect())],
        [("dim0", 32), ("dim1", 32)],
    )
    .unwrap();
    let r = bank_conflicts(&dist, &row_major, 32).unwrap();
    assert_eq!(r.vec, 4);
    assert_eq!(r.instructions.len(), 8);
    // 16-byte accesses: 4 phases of 8 lanes, each phase 8 rows apart = the same 4 banks → 8 wavefronts.
    assert_eq!(r.instructions[0].wavefronts, 32, "{r:?}");
    assert_eq!(r.conflicts, 8 * (32 - 4));
    // The same pattern through a swizzle that XORs the row into the 16-byte column group is conflict-free.
    let swizzled = LinearLayout::new(
        [(
            "offset",
            vec![
                vec![0, 1],
                vec![0, 2],
                vec![0, 4],
                vec![0, 8],
                vec![0, 16],
                vec![1, 4],
                vec![2, 8],
                vec![4, 16],
                vec![8, 0],
                vec![16, 0],
            ],
        )],
        [("dim0", 32), ("dim1", 32)],
    )
    .unwrap();
    assert_eq!(bank_conflicts(&dist, &swizzled, 32).unwrap().conflicts, 0);
}

#[test]
fn sub_word_accesses_share_words() {
    // 16-bit elements, consecutive lanes on consecutive elements: 32 lanes touch 16 words, one per bank.
    let dist = ll(&[("lane", &[[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]), ("register", &[[1, 0]])], [2, 32]);
    let row_major = LinearLayout::new(
        [("offset", (0..6).map(|i| if i < 5 { vec![0, 1 << i] } else { vec![1, 0] }).collect())],
        [("dim0", 2), ("dim1", 32)],
    )
    .unwrap();
    let r = bank_conflicts(&dist, &row_major, 16).unwrap();
    assert_eq!((r.vec, r.bytes_per_access, r.instructions.len(), r.conflicts), (1, 2, 2, 0), "{r:?}");
}

#[test]
fn global_vectors_follow_registers_contiguity_and_alignment() {
    let l = blocked([1, 8], [4, 8], [4, 1], [1, 0], [64, 128]);
    assert_eq!(global_vector_width(&l, 16, 1, 128, 128), 8);
    assert_eq!(global_vector_width(&l, 32, 1, 128, 128), 4);
    assert_eq!(global_vector_width(&l, 16, 1, 6, 128), 4);
    assert_eq!(global_vector_width(&l, 16, 1, 128, 2), 2);
    assert_eq!(global_vector_width(&l, 16, 0, 128, 128), 1);
}

#[test]
fn executor_catches_broken_plans() {
    let src = ll(&[("register", &[[0, 32]]), ("lane", &[[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]])], [1, 64]);
    let dst = ll(&[("register", &[[0, 32]]), ("lane", &[[0, 2], [0, 1], [0, 8], [0, 4], [0, 16]])], [1, 64]);
    let tensor: Vec<u32> = (0..64).collect();
    let regs = distribute(&src, &tensor).unwrap();
    let ConversionPlan::WarpShuffle(mut sh) = plan_conversion(&src, &dst, 32, &PlanOptions::default()).unwrap() else {
        panic!()
    };
    // A missing round leaves a register unwritten.
    let mut short = sh.clone();
    short.rounds.pop();
    let err = run_plan(&ConversionPlan::WarpShuffle(short), &src, &dst, &regs).unwrap_err();
    assert!(err.0.contains("never writes"), "{err}");
    // A wrong source lane delivers the wrong element.
    sh.rounds[0].read_lane[3] ^= 1;
    let out = run_plan(&ConversionPlan::WarpShuffle(sh), &src, &dst, &regs).unwrap();
    assert!(check(&dst, &out, &tensor).is_err());
    // A shared plan with a warp barrier where warps exchange data is rejected.
    let s = blocked([1, 8], [4, 8], [4, 1], [1, 0], [64, 128]);
    let d = blocked([8, 1], [8, 4], [1, 4], [0, 1], [64, 128]);
    let mut sp = shared(&plan_conversion(&s, &d, 16, &PlanOptions::default()).unwrap()).clone();
    sp.barrier = BarrierKind::Warp;
    let regs = distribute(&s, &(0..64 * 128).collect::<Vec<u32>>()).unwrap();
    let err = run_plan(&ConversionPlan::SharedRoundTrip(Box::new(sp)), &s, &d, &regs).unwrap_err();
    assert!(err.0.contains("warp barrier"), "{err}");
}

#[test]
fn plans_print_their_summary() {
    let s = blocked([1, 8], [4, 8], [4, 1], [1, 0], [64, 128]);
    let d = blocked([8, 1], [8, 4], [1, 4], [0, 1], [64, 128]);
    let text = plan_conversion(&s, &d, 16, &PlanOptions::default()).unwrap().to_string();
    assert!(text.starts_with("shared memory round trip: vec "), "{text}");
    assert!(text.contains("conflicts: store 0, load 0") && text.contains("offset: [") && text.contains("CTA barrier"));
    assert!(ConversionPlan::NoOp.to_string().starts_with("no-op"));
}
