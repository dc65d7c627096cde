//! Layout conversions as properties: every plan, run by the executor on tagged data, lands every element where
//! the destination layout says; and the shared layouts chosen for the classic conversions are free of bank
//! conflicts on both the stores and the loads.

use proptest::prelude::*;
use tessel_layouts::convert::{
    BarrierKind, ConversionPlan, PlanOptions, SharedPlan, bank_conflicts_with_vec, plan_conversion,
};
use tessel_layouts::testing::{
    self, Family, assert_bank_conflict_free, blocked_layout as blocked, check_conversion, conversion_case, gather,
    linear_layout, mma_layout as mma,
};
use tessel_layouts::{DistributedLayout, LinearLayout};

// ----- running a plan -----

/// Plans, executes on random data, and checks every destination register. Returns the plan.
fn convert(src: &LinearLayout, dst: &LinearLayout, bits: u32, opts: &PlanOptions, seed: u64) -> ConversionPlan {
    match check_conversion(src, dst, bits, opts, seed, 1) {
        Ok(report) => {
            // Every element is held somewhere, and copies agree.
            let tensor: Vec<u32> = (0..src.total_out_size() as u32).collect();
            let regs = testing::distribute(src, &tensor).unwrap();
            let out = testing::run_plan(&report.plan, src, dst, &regs).unwrap();
            assert_eq!(gather(dst, &out).unwrap(), tensor);
            report.plan
        }
        Err(failure) => panic!("{failure}\n{src}\n{dst}"),
    }
}

fn shared_plan(plan: &ConversionPlan) -> &SharedPlan {
    match plan {
        ConversionPlan::SharedRoundTrip(sp) => sp,
        other => panic!("expected a shared-memory round trip, got\n{other}"),
    }
}

/// The classic conversions: a shared round trip whose stores and loads have zero bank conflicts.
fn assert_conflict_free(name: &str, src: &DistributedLayout, dst: &DistributedLayout, shape: &[u32]) {
    for bits in [16, 32] {
        for (a, b, dir) in [(src, dst, "->"), (dst, src, "<-")] {
            let (la, lb) = (a.to_linear(shape).unwrap(), b.to_linear(shape).unwrap());
            let plan = convert(&la, &lb, bits, &PlanOptions::default(), 7);
            let sp = shared_plan(&plan);
            let reports = assert_bank_conflict_free(a, b, shape, bits);
            assert_eq!(reports.len(), 2, "{name} ({dir}, {bits}-bit): a store and a load report");
            // The independent bank model over the chosen shared layout agrees on both sides (at the plan's width).
            let store = bank_conflicts_with_vec(&la, &sp.shared, bits, sp.vec).unwrap();
            let load = bank_conflicts_with_vec(&lb, &sp.shared, bits, sp.vec).unwrap();
            assert_eq!((store.conflicts, load.conflicts), (0, 0), "{name} {dir} {bits}: stores/loads recounted");
            assert_eq!((store.wavefronts, load.wavefronts), (sp.store_report.wavefronts, sp.load_report.wavefronts));
        }
    }
}

#[test]
fn blocked_transposed_is_conflict_free() {
    let row = blocked(&[1, 8], &[4, 8], &[4, 1], &[1, 0]);
    let col = blocked(&[8, 1], &[8, 4], &[1, 4], &[0, 1]);
    assert_conflict_free("blocked/transposed blocked", &row, &col, &[64, 128]);
    assert_conflict_free("blocked/transposed blocked", &row, &col, &[128, 128]);
    let row4 = blocked(&[1, 4], &[2, 16], &[8, 1], &[1, 0]);
    let col4 = blocked(&[4, 1], &[16, 2], &[1, 8], &[0, 1]);
    assert_conflict_free("blocked/transposed blocked (4 per thread, 8 warps)", &row4, &col4, &[128, 64]);
}

#[test]
fn mma_v2_accumulator_blocked_is_conflict_free() {
    let acc = mma(2, &[2, 2], &[16, 8]);
    assert_conflict_free("mma v2 [2,2] / blocked", &acc, &blocked(&[1, 8], &[4, 8], &[4, 1], &[1, 0]), &[64, 128]);
    assert_conflict_free("mma v2 [2,2] / blocked", &acc, &blocked(&[1, 4], &[2, 16], &[4, 1], &[1, 0]), &[128, 64]);
    let acc8 = mma(2, &[4, 2], &[16, 8]);
    assert_conflict_free("mma v2 [4,2] / blocked", &acc8, &blocked(&[1, 8], &[2, 16], &[8, 1], &[1, 0]), &[128, 128]);
}

#[test]
fn mma_v3_accumulator_blocked_is_conflict_free() {
    for (bits_k, n) in [(16u32, 128u32), (8, 64)] {
        let acc = mma(3, &[4, 1], &[16, n, bits_k]);
        let dst = blocked(&[1, 8], &[4, 8], &[4, 1], &[1, 0]);
        assert_conflict_free(&format!("mma v3 [16,{n},{bits_k}] / blocked"), &acc, &dst, &[64, 128]);
    }
    let acc8 = mma(3, &[8, 1], &[16, 256, 16]);
    assert_conflict_free("mma v3 8 warps / blocked", &acc8, &blocked(&[1, 8], &[2, 16], &[8, 1], &[1, 0]), &[128, 256]);
}

#[test]
fn classic_plans_print_their_numbers() {
    let acc = mma(2, &[2, 2], &[16, 8]).to_linear(&[64, 128]).unwrap();
    let dst = blocked(&[1, 8], &[4, 8], &[4, 1], &[1, 0]).to_linear(&[64, 128]).unwrap();
    let plan = plan_conversion(&acc, &dst, 16, &PlanOptions::default()).unwrap();
    let text = plan.to_string();
    assert!(text.contains("conflicts: store 0, load 0"), "{text}");
    assert_eq!(shared_plan(&plan).barrier, BarrierKind::Cta);
}

// ----- random layouts -----

proptest! {
    #![proptest_config(ProptestConfig::default())]

    /// Every plan, executed thread by thread, puts every element where the destination layout says; a
    /// shared-memory plan also runs split into repetitions when the scratch space is halved, and its bank
    /// numbers agree with the independent bank model.
    #[test]
    fn every_plan_lands_every_element(case in conversion_case(&Family::DISTRIBUTED)) {
        let (shape, bits) = (case.ctx.shape, case.ctx.bits);
        let src = case.src.to_linear(&shape).unwrap_or_else(|e| panic!("{e}: {}", case.src));
        let dst = case.dst.to_linear(&shape).unwrap_or_else(|e| panic!("{e}: {}", case.dst));
        let opts = PlanOptions { allow_shuffles: case.allow_shuffles, ..PlanOptions::default() };
        let plan = convert(&src, &dst, bits, &opts, case.seed);
        if src == dst {
            prop_assert_eq!(&plan, &ConversionPlan::NoOp);
        }
        if let ConversionPlan::SharedRoundTrip(sp) = &plan {
            prop_assert!(sp.vec * bits <= 128);
            if sp.reps == 1 && sp.store_mask.lane == 0 && sp.store_mask.warp == 0 {
                let store = bank_conflicts_with_vec(&src, &sp.shared, bits, sp.vec).unwrap();
                prop_assert_eq!(store.wavefronts, sp.store_report.wavefronts);
            }
            if sp.reps == 1 {
                let load = bank_conflicts_with_vec(&dst, &sp.shared, bits, sp.vec).unwrap();
                prop_assert_eq!(load.wavefronts, sp.load_report.wavefronts);
            }
            let halved = PlanOptions { max_scratch_bytes: Some(sp.scratch_bytes / 2), ..opts };
            match plan_conversion(&src, &dst, bits, &halved) {
                Ok(_) => {
                    let plan = convert(&src, &dst, bits, &halved, case.seed);
                    let sp2 = shared_plan(&plan);
                    prop_assert!(sp2.reps >= 2 && sp2.scratch_bytes <= sp.scratch_bytes / 2);
                }
                Err(e) => prop_assert!(e.0.contains("max_scratch_bytes"), "{}", e),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    /// Raw layouts with XOR-mixed bases, with and without broadcast, over one or two CTAs (split the same way on
    /// both sides).
    #[test]
    fn random_linear_layouts_convert(
        (bits, src, dst, allow_shuffles, seed) in (4u32..=7, 4u32..=7, 0u32..=3, 0u32..=1, prop::sample::select(vec![8u32, 16, 32]))
            .prop_filter("at most 8K elements", |(m, n, ..)| m + n <= 13)
            .prop_flat_map(|(m, n, lw, blocks, bits)| {
                let shape = [1u32 << m, 1 << n];
                // Without broadcast each lane and warp bit needs a tensor bit of its own.
                let must_broadcast = m - blocks + n < 5 + lw;
                (Just(bits), any::<bool>(), any::<bool>()).prop_flat_map(move |(bits, bs, bd)| {
                    let (bs, bd) = (bs || must_broadcast, bd || must_broadcast);
                    (Just(bits), linear_layout(shape, lw, blocks, bs), linear_layout(shape, lw, blocks, bd),
                     prop::bool::weighted(0.8), any::<u64>())
                })
            })
    ) {
        let opts = PlanOptions { allow_shuffles, ..PlanOptions::default() };
        let plan = convert(&src, &dst, bits, &opts, seed);
        if let ConversionPlan::SharedRoundTrip(sp) = &plan {
            let halved = PlanOptions { max_scratch_bytes: Some(sp.scratch_bytes / 2), ..opts };
            if plan_conversion(&src, &dst, bits, &halved).is_ok() {
                convert(&src, &dst, bits, &halved, seed);
            }
        }
    }
}
