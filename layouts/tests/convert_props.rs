//! Layout conversions as properties: every plan, run by the executor on tagged data, lands every element where
//! the destination layout says; and the shared layouts chosen for the classic conversions are free of bank
//! conflicts on both the stores and the loads.

use proptest::prelude::*;
use tessel_layouts::convert::{
    BarrierKind, ConversionPlan, PlanOptions, SharedPlan, bank_conflicts_with_vec, check, distribute, gather,
    plan_conversion, run_plan,
};
use tessel_layouts::{
    BlockedLayout, CgaLayout, DistributedLayout, DistributedLinearLayout, DotOperandLayout, LinearLayout,
    NvmmaDistributedLayout, SliceLayout,
};

// ----- layouts -----

fn blocked(spt: &[u32], tpw: &[u32], wpc: &[u32], order: &[u32]) -> DistributedLayout {
    DistributedLayout::Blocked(BlockedLayout {
        size_per_thread: spt.to_vec(),
        threads_per_warp: tpw.to_vec(),
        warps_per_cta: wpc.to_vec(),
        order: order.to_vec(),
        cga: CgaLayout::Single,
    })
}

fn mma(version: u32, warps: &[u32], instr: &[u32]) -> DistributedLayout {
    DistributedLayout::Nvmma(NvmmaDistributedLayout {
        version: [version, 0],
        warps_per_cta: warps.to_vec(),
        instr_shape: instr.to_vec(),
        cga: CgaLayout::Single,
    })
}

/// Elements per 32 bits: the `k_width` of an MMA operand.
fn k_width(bits: u32) -> u32 {
    32 / bits
}

// ----- running a plan -----

/// Plans, executes on distinct values, and checks every destination register. Returns the plan.
fn convert(src: &LinearLayout, dst: &LinearLayout, bits: u32, opts: &PlanOptions, seed: u32) -> ConversionPlan {
    let plan = plan_conversion(src, dst, bits, opts).unwrap_or_else(|e| panic!("planning failed: {e}\n{src}\n{dst}"));
    // Distinct values in a random order: a misplaced element cannot go unnoticed.
    let tensor: Vec<u32> = (0..src.total_out_size() as u32).map(|i| (i ^ seed).wrapping_mul(0x9e37_79b1)).collect();
    let regs = distribute(src, &tensor).unwrap();
    let out =
        run_plan(&plan, src, dst, &regs).unwrap_or_else(|e| panic!("execution failed: {e}\n{plan}\n{src}\n{dst}"));
    check(dst, &out, &tensor).unwrap_or_else(|e| panic!("wrong result: {e}\n{plan}\n{src}\n{dst}"));
    assert_eq!(gather(dst, &out).unwrap(), tensor);
    plan
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
            assert!(
                sp.store_conflicts == 0 && sp.load_conflicts == 0,
                "{name} ({dir}, {bits}-bit, {shape:?}): vec {} store conflicts {} ({} wavefronts, ideal {}), load \
                 conflicts {} ({} wavefronts, ideal {})\n{plan}",
                sp.vec,
                sp.store_conflicts,
                sp.store_report.wavefronts,
                sp.store_report.ideal_wavefronts,
                sp.load_conflicts,
                sp.load_report.wavefronts,
                sp.load_report.ideal_wavefronts
            );
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

/// Powers of two `2^a, 2^(total - a)` splitting `2^total` over two dims.
fn split2(total: u32) -> impl Strategy<Value = [u32; 2]> {
    (0..=total).prop_map(move |a| [1 << a, 1 << (total - a)])
}

fn arb_blocked(log_warps: u32) -> impl Strategy<Value = DistributedLayout> {
    ((0u32..=3, 0u32..=3), split2(5), split2(log_warps), any::<bool>()).prop_map(|((s0, s1), tpw, wpc, row)| {
        blocked(&[1 << s0, 1 << s1], &tpw, &wpc, if row { &[1, 0] } else { &[0, 1] })
    })
}

fn arb_mma_v2(log_warps: u32) -> impl Strategy<Value = DistributedLayout> {
    split2(log_warps).prop_map(|w| mma(2, &w, &[16, 8]))
}

/// wgmma needs a multiple of 4 warps along M; with fewer warps this falls back to `mma.sync`.
fn arb_mma_v3(log_warps: u32, bits: u32) -> BoxedStrategy<DistributedLayout> {
    if log_warps < 2 {
        return arb_mma_v2(log_warps).boxed();
    }
    (0..=log_warps - 2, 3u32..=8)
        .prop_map(move |(extra_m, n)| {
            let w = [1 << (2 + extra_m), 1 << (log_warps - 2 - extra_m)];
            mma(3, &w, &[16, 1 << n, 256 / bits])
        })
        .boxed()
}

/// A slice of a rank-3 blocked layout.
fn arb_slice(log_warps: u32) -> impl Strategy<Value = DistributedLayout> {
    let spt = prop::collection::vec(0u32..=2, 3);
    let tpw = (0u32..=5).prop_flat_map(|a| (Just(a), 0..=5 - a));
    let wpc = (0..=log_warps).prop_flat_map(move |a| (Just(a), 0..=log_warps - a));
    (spt, tpw, wpc, Just([0u32, 1, 2]).prop_shuffle(), 0u32..3).prop_map(
        move |(spt, (t0, t1), (w0, w1), order, dim)| {
            let parent = blocked(
                &spt.iter().map(|&s| 1 << s).collect::<Vec<_>>(),
                &[1 << t0, 1 << t1, 1 << (5 - t0 - t1)],
                &[1 << w0, 1 << w1, 1 << (log_warps - w0 - w1)],
                &order,
            );
            DistributedLayout::Slice(SliceLayout { dim, parent: Box::new(parent) })
        },
    )
}

/// An operand of a dot: from an `mma.sync` or `wgmma` accumulator (with `k_width` 32 bits' worth of K), or
/// the FMA operand of a blocked accumulator.
fn arb_dot_operand(log_warps: u32, bits: u32) -> impl Strategy<Value = DistributedLayout> {
    let parents = prop_oneof![
        arb_mma_v2(log_warps).prop_map(move |p| (p, k_width(bits))),
        arb_mma_v3(log_warps, bits).prop_map(move |p| (p, k_width(bits))),
        arb_blocked(log_warps).prop_map(|p| (p, 0)),
    ];
    (parents, 0u32..2).prop_map(|((parent, k), op)| {
        let hopper = matches!(&parent, DistributedLayout::Nvmma(m) if m.version[0] == 3);
        DistributedLayout::DotOperand(DotOperandLayout {
            operand_index: if hopper { 0 } else { op },
            parent: Box::new(parent),
            k_width: k,
        })
    })
}

/// Bases of a random layout over `shape`: the tensor bits permuted (and, with `mix`, combined by XORs), dealt
/// out to lanes, warps and registers; lanes and warps left over broadcast, and with `dup` a register does.
#[allow(clippy::type_complexity)]
fn arb_bases(
    shape: [u32; 2],
    log_warps: u32,
    mix: bool,
) -> impl Strategy<Value = (Vec<Vec<u32>>, Vec<Vec<u32>>, Vec<Vec<u32>>)> {
    let bits = shape[0].trailing_zeros() + shape[1].trailing_zeros();
    let n = bits as usize;
    (prop::collection::vec((0..n, 0..n, any::<bool>()), 0..24), prop::bool::weighted(0.2)).prop_map(
        move |(ops, dup)| {
            // Columns of an invertible matrix over the flat tensor index (dim1 in the low bits).
            let mut cols: Vec<u32> = (0..bits).map(|i| 1 << i).collect();
            for (a, b, swap) in ops {
                if a != b {
                    if swap || !mix { cols.swap(a, b) } else { cols[a] ^= cols[b] }
                }
            }
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
        },
    )
}

/// A random `DistributedLinearLayout` (each basis a power of two along one dim, as Gluon requires).
fn arb_linear(shape: [u32; 2], log_warps: u32) -> impl Strategy<Value = DistributedLayout> {
    arb_bases(shape, log_warps, false).prop_map(move |(reg_bases, lane_bases, warp_bases)| {
        DistributedLayout::Linear(DistributedLinearLayout {
            reg_bases,
            lane_bases,
            warp_bases,
            block_bases: vec![],
            shape: shape.to_vec(),
        })
    })
}

/// A raw linear layout with XOR-mixed bases (swizzle-like, beyond what Gluon lets a user write), over
/// `blocks` CTAs that split dim0 in halves (`[shape0 / 2, 0]` per block bit).
fn arb_raw(shape: [u32; 2], log_warps: u32, blocks: u32) -> impl Strategy<Value = LinearLayout> {
    let cta_shape = [shape[0] >> blocks, shape[1]];
    arb_bases(cta_shape, log_warps, true).prop_map(move |(reg, lane, warp)| {
        let block = (0..blocks).map(|i| vec![cta_shape[0] << i, 0]).collect::<Vec<_>>();
        LinearLayout::new(
            [("register", reg), ("lane", lane), ("warp", warp), ("block", block)],
            [("dim0", shape[0]), ("dim1", shape[1])],
        )
        .unwrap()
    })
}

fn arb_any(shape: [u32; 2], log_warps: u32, bits: u32) -> BoxedStrategy<DistributedLayout> {
    prop_oneof![
        3 => arb_blocked(log_warps).boxed(),
        2 => arb_mma_v2(log_warps).boxed(),
        2 => arb_mma_v3(log_warps, bits),
        2 => arb_slice(log_warps).boxed(),
        2 => arb_dot_operand(log_warps, bits).boxed(),
        2 => arb_linear(shape, log_warps).boxed(),
    ]
    .boxed()
}

#[derive(Debug, Clone)]
struct Case {
    shape: [u32; 2],
    bits: u32,
    src: DistributedLayout,
    dst: DistributedLayout,
    allow_shuffles: bool,
    seed: u32,
}

fn arb_case() -> impl Strategy<Value = Case> {
    (4u32..=7, 4u32..=7, 0u32..=3, prop::sample::select(vec![8u32, 16, 32]))
        .prop_filter("at most 8K elements", |(m, n, _, _)| m + n <= 13)
        .prop_flat_map(|(m, n, lw, bits)| {
            let shape = [1 << m, 1 << n];
            (
                Just(shape),
                Just(bits),
                arb_any(shape, lw, bits),
                arb_any(shape, lw, bits),
                prop::bool::weighted(0.8),
                any::<u32>(),
            )
        })
        .prop_map(|(shape, bits, src, dst, allow_shuffles, seed)| Case { shape, bits, src, dst, allow_shuffles, seed })
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    /// Every plan, executed thread by thread, puts every element where the destination layout says; a
    /// shared-memory plan also runs split into repetitions when the scratch space is halved, and its bank
    /// numbers agree with the independent bank model.
    #[test]
    fn every_plan_lands_every_element(case in arb_case()) {
        let src = case.src.to_linear(&case.shape).unwrap_or_else(|e| panic!("{e}: {}", case.src));
        let dst = case.dst.to_linear(&case.shape).unwrap_or_else(|e| panic!("{e}: {}", case.dst));
        let opts = PlanOptions { allow_shuffles: case.allow_shuffles, ..PlanOptions::default() };
        let plan = convert(&src, &dst, case.bits, &opts, case.seed);
        if src == dst {
            prop_assert_eq!(&plan, &ConversionPlan::NoOp);
        }
        if let ConversionPlan::SharedRoundTrip(sp) = &plan {
            prop_assert!(sp.vec * case.bits <= 128);
            if sp.reps == 1 && sp.store_mask.lane == 0 && sp.store_mask.warp == 0 {
                let store = bank_conflicts_with_vec(&src, &sp.shared, case.bits, sp.vec).unwrap();
                prop_assert_eq!(store.wavefronts, sp.store_report.wavefronts);
            }
            if sp.reps == 1 {
                let load = bank_conflicts_with_vec(&dst, &sp.shared, case.bits, sp.vec).unwrap();
                prop_assert_eq!(load.wavefronts, sp.load_report.wavefronts);
            }
            let halved = PlanOptions { max_scratch_bytes: Some(sp.scratch_bytes / 2), ..opts };
            match plan_conversion(&src, &dst, case.bits, &halved) {
                Ok(_) => {
                    let plan = convert(&src, &dst, case.bits, &halved, case.seed);
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

    /// Raw layouts with XOR-mixed bases, broadcasts and one or two CTAs (split the same way on both sides).
    #[test]
    fn random_linear_layouts_convert(
        (shape, bits, src, dst, allow_shuffles, seed) in (4u32..=7, 4u32..=7, 0u32..=3, 0u32..=1, prop::sample::select(vec![8u32, 16, 32]))
            .prop_filter("at most 8K elements", |(m, n, ..)| m + n <= 13)
            .prop_flat_map(|(m, n, lw, blocks, bits)| {
                let shape = [1u32 << m, 1 << n];
                (Just(shape), Just(bits), arb_raw(shape, lw, blocks), arb_raw(shape, lw, blocks),
                 prop::bool::weighted(0.8), any::<u32>())
            })
    ) {
        let _ = shape;
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
