//! Gluon kernels of CTA pairs (`num_ctas=2`, `TensorMemoryLayout(two_ctas=True)`: `cta_group::2`) compiled for
//! sm_100a: the pair's barrier lives in the even CTA (initialized there for both CTAs' arrivals, each CTA
//! announcing its bytes there and its copies completing there: `.cta_group::2` copies at a `mapa` address), the
//! even CTA alone waits on it and issues the pair's MMA, whose commit reaches both CTAs' barriers, and every
//! tcgen05 op of the kernel is `cta_group::2`. On the PTX simulator (which runs pair MMAs from the ISA,
//! `ptx_sim/src/tcgen05_pair.rs`) against the interpreter, the interpreter against float64, and through ptxas:
//! the pair kernels of the interpreter's own tests, tutorial 14's, and example 03's at 2 and 4 CTAs.

mod common;
mod sim_common;

use std::path::Path;

use common::{assemble, c, int};
use sim_common::{RunOptions, V, run_on_ctas, simulate_broken_on_ctas};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::F16;
use tessel::tile::{KernelConfig, Target};
use tessel_interp::MmaOrder;

/// The pair kernels the interpreter's own tests run (`gluon/tests/two_cta.rs`): `pair_tile` (one tile on a
/// pair) and `pair_k_loop` (K blocks on one pair or two, the MMA's completion multicast or committed by hand).
const FILE: &str = "gluon_two_cta.py";

fn source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels").join(FILE)).unwrap()
}

/// A host descriptor of `block` whose block the CTAs split by `cga` (`[[1, 0]]`: along M, `[[0, 1]]`: along N).
fn desc(block: [u32; 2], cga: &str) -> ArgSpec {
    ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: Some(sim_common::scaled::nvmma(&format!(
            "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, cga_layout={cga})"
        ))),
    }
}

/// `pair_k_loop` on `ctas` CTAs (2: one pair; 4: two pairs sharing B's halves) over `k_blocks` blocks of 64,
/// the MMA's completion multicast (`multicast=True`) or committed by hand (`tcgen05_commit(descs=...)`).
fn loop_spec(ctas: u32, k_blocks: i64, by_hand: bool) -> Vec<ArgSpec> {
    let (cga, b_cga) = if ctas == 2 { ("[[1, 0]]", "[[0, 1]]") } else { ("[[1, 0], [2, 0]]", "[[0, 1], [0, 0]]") };
    let cga_tuple = if ctas == 2 { "[[1, 0]]" } else { "[[1, 0], [2, 0]]" };
    let acc = format!("TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout={cga_tuple}, two_ctas=True)");
    let m = 128 * ctas;
    vec![
        desc([m, 64], cga),
        desc([64, 128], b_cga),
        desc([m, 128], cga),
        c(k_blocks),
        ArgSpec::Constexpr(ConstValue::Expr(acc)),
        c(0),
        ArgSpec::Constexpr(ConstValue::Bool(by_hand)),
    ]
}

fn opts() -> RunOptions<'static> {
    RunOptions { file: FILE, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true }
}

fn ptx(kernel: &str, spec: Vec<ArgSpec>, ctas: u32) -> String {
    let src = source();
    let config = KernelConfig { num_warps: 4, num_ctas: ctas, ..KernelConfig::DEFAULT };
    let sp = Specialization::with_config(spec, config);
    let ks = tessel::KernelSource { file: FILE, source: &src, kernel, spec: &sp, module: None };
    match tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => kernel.ptx,
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => panic!("{e}"),
    }
}

/// The descriptors of an `m x n x k` product (fresh random fp16), C poisoned, and the float64 product.
fn inputs(m: usize, n: usize, k: usize, seed: u64) -> (Vec<V>, Vec<f64>) {
    let (descs, want) = sim_common::fp16_matmul_descs(m, n, k, seed);
    (descs.into(), want)
}

/// A pair's tile (256x128x64), and K loops of three blocks on one pair and on two pairs (512 rows; B's halves
/// multicast to both pairs, each destination's bytes on its own pair's barrier), the MMA's completion multicast
/// to every CTA holding an operand's copy or committed by hand: the simulator equals the interpreter bit for bit,
/// and the interpreter the float64 product.
#[test]
fn pair_gemms_match_the_interpreter_and_float64() {
    let tile = vec![desc([256, 64], "[[1, 0]]"), desc([64, 128], "[[0, 1]]"), desc([256, 128], "[[1, 0]]")];
    let mut cases = vec![("pair_tile".to_string(), "pair_tile", tile, 2u32, 64usize)];
    for (ctas, by_hand) in [(2u32, false), (2, true), (4, false), (4, true)] {
        let what = format!("pair_k_loop, {ctas} CTAs{}", if by_hand { ", committed by hand" } else { "" });
        cases.push((what, "pair_k_loop", loop_spec(ctas, 3, by_hand), ctas, 192));
    }
    for (i, (what, kernel, spec, ctas, k)) in cases.into_iter().enumerate() {
        let (vals, want) = inputs(128 * ctas as usize, 128, k, 70 + i as u64);
        let outs = run_on_ctas(&source(), kernel, spec, &opts(), ctas, &vals, [1, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        sim_common::check_fp16_product(&what, sim, interp, &want, false);
    }
}

/// The PTX of a pair's K loop: every tcgen05 op is `cta_group::2`; the pair's barrier is initialized by the even
/// CTA for two arrivals, each CTA's expectation and copies go to it through `mapa`; the MMA's commit reaches both
/// CTAs; the CTAs meet after the initializations. ptxas accepts it, and the two-pair loop too.
#[test]
fn a_pair_gemm_ptx_is_cta_group_2_throughout() {
    let p = ptx("pair_k_loop", loop_spec(2, 3, false), 2);
    let code = |s: &str| p.lines().filter(|l| !l.trim_start().starts_with("//") && l.contains(s)).count();
    assert_eq!(code("cta_group::1"), 0, "{p}");
    for form in [
        "tcgen05.alloc.cta_group::2",
        "tcgen05.dealloc.cta_group::2",
        "tcgen05.mma.cta_group::2.kind::f16",
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
        "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster",
        "mbarrier.arrive.expect_tx.shared::cluster.b64",
        "mapa.shared::cluster.u32",
    ] {
        assert!(code(form) > 0, "no {form}");
    }
    assert!(p.contains("mbarrier.init.shared.b64 [%r") && p.contains("], 2;"), "the pair's count");
    let init = p.find("], 2;").unwrap();
    let meet = p.find("barrier.cluster.arrive").expect("a cluster barrier");
    assert!(init < meet && meet < p.find("mbarrier.arrive.expect_tx").unwrap(), "the CTAs meet after the inits");
    assemble("pair_k_loop", &p, "sm_100a");
    let four = ptx("pair_k_loop", loop_spec(4, 3, false), 4);
    assert!(four.contains(".cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"));
    assemble("pair_k_loop_4ctas", &four, "sm_100a");
}

/// The pair's PTX broken: the even CTA's wait for the pair's barrier skipped (its MMA reads operands whose
/// copies nothing ordered it after), and the commit's mask reaching the even CTA only (the odd CTA waits forever).
#[test]
fn a_broken_pair_gemm_is_refused() {
    let (vals, _) = inputs(256, 128, 128, 9);
    let run = |edit: &dyn Fn(&str) -> String| {
        simulate_broken_on_ctas(&source(), "pair_k_loop", loop_spec(2, 2, false), &opts(), 2, &vals, [1, 1, 1], edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    let err = run(&|p| sim_common::skip_wait(p, "$L_mbar_wait", 0)).unwrap_err();
    assert!(
        err.contains("tcgen05.mma.cta_group::2")
            && err.contains("reads what an asynchronous copy completing on the mbarrier at shared")
            && err.contains("without a barrier between"),
        "no wait: {err}"
    );
    // The commit's mask is `1 << (rank ^ 0) | 1 << (rank ^ 1)`: the second offset made 0 leaves the issuer only.
    let one_cta = |p: &str| {
        let at = p.rfind("tcgen05.commit").unwrap();
        let xor = p[..at].rfind(", 1;").unwrap();
        assert!(p[..xor].rsplit('\n').next().unwrap().contains("xor.b32"), "the pair offset's xor");
        format!("{}, 0;{}", &p[..xor], &p[xor + 4..])
    };
    let err = run(&one_cta).unwrap_err();
    assert!(err.contains("deadlock") && err.contains("CTA 1"), "commit to one CTA: {err}");
}

/// Tutorial 14's `two_cta_tcgen05_kernel` (python/tutorials/gluon of triton-lang/triton, from the directory
/// `TESSEL_GLUON_TUTORIALS` names; skipped without it) at its test's configuration: one 256x128x64 fp16 tile on
/// a CTA pair. The simulator equals the interpreter bit for bit, the interpreter float64; ptxas accepts it.
#[test]
fn tutorial_14_two_cta_tcgen05_kernel_matches_the_interpreter() {
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_TUTORIALS", "14-multicta.py") else { return };
    let spec = vec![desc([256, 64], "[[1, 0]]"), desc([64, 128], "[[0, 1]]"), desc([256, 128], "[[1, 0]]")];
    let (vals, want) = inputs(256, 128, 64, 3);
    let opts = RunOptions { file: &file, ..opts() };
    let outs = run_on_ctas(&src, "two_cta_tcgen05_kernel", spec.clone(), &opts, 2, &vals, [1, 1, 1])
        .unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    assert!(sim.iter().zip(interp).all(|(x, y)| x.to_bits() == y.to_bits()), "the simulator differs");
    for (j, (&got, &w)) in interp.iter().zip(&want).enumerate() {
        assert!((got - w).abs() <= 1e-3 * w.abs() + 2e-3, "C[{j}] = {got}, float64 {w}");
    }
    let config = KernelConfig { num_warps: 4, num_ctas: 2, ..KernelConfig::DEFAULT };
    let sp = Specialization::with_config(spec, config);
    let ks =
        tessel::KernelSource { file: &file, source: &src, kernel: "two_cta_tcgen05_kernel", spec: &sp, module: None };
    match tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => assemble("two_cta_tcgen05_kernel", &kernel.ptx, "sm_100a"),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => panic!("{e}"),
    }
}

/// The public Gluon example 03's `_matmul_kernel` (python/examples/gluon of triton-lang/triton, from the directory
/// `TESSEL_GLUON_EXAMPLES` names; skipped without it) on a CTA pair and on two pairs (its `CGA_LAYOUT=((1, 0),)` and
/// `((1, 0), (2, 0))` cases: 100x200x200 in 128x128x64 blocks per CTA, 2 stages, 2 clusters): `cta_group::2` MMAs
/// issued by each pair's even CTA over both CTAs' operands, the two-CTA barriers of the loads and the
/// accumulators, B's halves multicast to both pairs at 4 CTAs, and cluster launch control answered to every CTA
/// (`.multicast::cluster::all`). The simulator (which runs pair MMAs from the ISA) writes every element the
/// interpreter does, bit for bit.
#[test]
fn gluon_example_matmul_on_cta_pairs_matches_the_interpreter() {
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_EXAMPLES", "03-matmul-multicta.py") else { return };
    let (m, n, k) = (100u32, 200u32, 200u32);
    // `NVMMASharedLayout.get_default_for(block, fp16, cga_layout=...)`: the swizzle of one CTA's part.
    let desc = |block: [u32; 2], cga: &[[u32; 2]]| {
        let split = |d: usize| cga.iter().filter(|b| b[d] != 0).count();
        let part = [block[0] >> split(0), block[1] >> split(1)];
        let mut layout = tessel::layouts::NvmmaSharedLayout::default_for(&part, 16);
        layout.cga = tessel::layouts::CgaLayout::Bases(cga.iter().map(|b| b.to_vec()).collect());
        ArgSpec::TensorDesc { elem: F16, block_shape: block.to_vec(), padding_nan: false, layout: Some(layout) }
    };
    let random =
        |len: u32, s: u64| tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(s), len as usize, F16);
    let int_tuple = |b: &[u32; 2]| ConstValue::Tuple(b.iter().map(|&x| ConstValue::Int(x as i64)).collect());
    // (C's and A's cga_layout, B's): a pair splits B along N; at four CTAs the pairs hold the same halves.
    type Bases = &'static [[u32; 2]];
    let cases: [(Bases, Bases); 2] = [(&[[1, 0]], &[[0, 1]]), (&[[1, 0], [2, 0]], &[[0, 1], [0, 0]])];
    for (cga, b_cga) in cases {
        let ctas = 1u32 << cga.len();
        let tile_m = 128 * ctas;
        let mut spec = vec![desc([tile_m, 64], cga), desc([64, 128], b_cga), desc([tile_m, 32], cga)];
        spec.extend([int(false), int(false), int(false)]);
        spec.extend([c(128), c(128), c(64), c(0), c(8), c(2), c(2)]);
        let layout = ConstValue::Tuple(cga.iter().map(int_tuple).collect());
        spec.extend([ArgSpec::Constexpr(layout), c(32), c(4)]);
        let vals = [
            V::Desc(F16, Some(random(m * k, 41)), vec![m, k]),
            V::Desc(F16, Some(random(k * n, 42)), vec![k, n]),
            V::Desc(F16, None, vec![m, n]),
            V::Int(m as i64),
            V::Int(n as i64),
            V::Int(k as i64),
        ];
        let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
        let outs = run_on_ctas(&src, "_matmul_kernel", spec, &opts, ctas, &vals, [2, 1, 1])
            .unwrap_or_else(|e| panic!("example 03 on {ctas} CTAs: {e}"));
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "{ctas} CTAs: the interpreter left elements unwritten");
        let differ = (0..sim.len()).filter(|&j| sim[j].to_bits() != interp[j].to_bits()).count();
        assert_eq!(differ, 0, "{ctas} CTAs: {differ} elements differ between the simulator and the interpreter");
    }
}

/// Tutorial 14's `tma_tcgen05_kernel` at its test's configuration: a 512x128x128 tile on 4 CTAs (two pairs), in two
/// K blocks of 64; each pair's B halves multicast to both pairs (`.cta_group::2.multicast::cluster`: each
/// destination's bytes complete on its own pair's barrier), the MMAs' completion multicast. The simulator equals the
/// interpreter bit for bit, the interpreter float64; without the wait for the MMAs it refuses the next block's
/// copies.
#[test]
fn tutorial_14_tma_tcgen05_kernel_on_two_pairs_matches_the_interpreter() {
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_TUTORIALS", "14-multicta.py") else { return };
    let layout = "TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout=((1, 0), (2, 0)), two_ctas=True)";
    let spec = vec![
        desc([512, 64], "[[1, 0], [2, 0]]"),
        desc([64, 128], "[[0, 1], [0, 0]]"),
        desc([512, 128], "[[1, 0], [2, 0]]"),
        c(2),
        ArgSpec::Constexpr(ConstValue::Expr(layout.into())),
    ];
    let (vals, want) = inputs(512, 128, 128, 8);
    let opts = RunOptions { file: &file, ..opts() };
    // Without the wait for the MMAs (the loop's second wait), the next K block's copies overwrite what the MMAs may
    // still read, with nothing ordering them after the last block's copies.
    let skip = |p: &str| sim_common::skip_wait(p, "$L_mbar_wait", 1);
    let err = simulate_broken_on_ctas(&src, "tma_tcgen05_kernel", spec.clone(), &opts, 4, &vals, [1, 1, 1], &skip)
        .unwrap_err();
    let refused = err.contains("still reads") || err.contains("write different values without a barrier between");
    assert!(err.contains("cp.async.bulk.tensor") && refused, "no MMA wait: {err}");
    let outs =
        run_on_ctas(&src, "tma_tcgen05_kernel", spec, &opts, 4, &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    let differ = (0..sim.len()).filter(|&j| sim[j].to_bits() != interp[j].to_bits()).count();
    assert_eq!(differ, 0, "{differ} elements differ between the simulator and the interpreter");
    for (j, (&got, &w)) in interp.iter().zip(&want).enumerate() {
        assert!((got - w).abs() <= 1e-3 * w.abs() + 2e-3, "C[{j}] = {got}, float64 {w}");
    }
}

/// The public Gluon example 04's `mma_scaled_warp_specialized_kernel` on a CTA pair (its `CGA_LAYOUT=((1, 0),)`
/// mxfp8 cases, `bench/gluon_example_cases.py`'s: 256x256x640 in 256x128x128 blocks per pair, an epilogue 64 wide,
/// 6 buffers, 2 accumulators, 2 clusters), under cluster launch control's scheduler and the static one: each
/// pair's even CTA copies both CTAs' scales into their tensor memory (`tcgen05.cp.cta_group::2`: A's split with A,
/// `TensorMemoryScalesLayout(cga_layout=[[1, 0]])`, B's whole in each CTA, `[[0, 0]]`) and issues the pair's
/// block-scaled MMA. Each K step copies its scales over those the previous step's MMA may still read (the
/// scales' tensor memory is allocated in the loop: the same planned columns each step); the PTX ISA does not
/// order an MMA before a later `tcgen05.cp`, so the interpreter's default (`MmaOrder::Isa`) refuses that, naming
/// both, and the values are compared with the interpreter holding the ops to issue order (`MmaOrder::Issue`,
/// which the example relies on). The simulator (`ptx_sim/src/tcgen05_pair.rs`: each CTA's half of the data path
/// reads its own scales) writes every element the interpreter does, bit for bit, and the interpreter equals
/// float64.
#[test]
fn gluon_example_mma_scaled_on_a_cta_pair_matches_the_interpreter() {
    use sim_common::scaled::{nvmma, packed_block, quantized};
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_EXAMPLES", "04-2cta-block-scale-matmul.py") else {
        return;
    };
    let (m, n, k) = (256u32, 256u32, 640u32);
    let (bm, bn, bk, epi_n, vec) = (256u32, 128u32, 128u32, 64u32, 32u32);
    let (rep_k, sk) = (bk / (vec * 4), k / vec);
    let f8 = tessel::tile::ScalarType::F8E4M3;
    let u8t = tessel::tile::ScalarType::U8;
    // `NVMMASharedLayout.get_default_for(block, dtype, cga_layout=((1, 0),))`: one CTA's part's swizzle.
    let desc = |elem: tessel::tile::ScalarType, block: [u32; 2]| {
        let mut layout = tessel::layouts::NvmmaSharedLayout::default_for(&[block[0] / 2, block[1]], elem.bits());
        layout.cga = tessel::layouts::CgaLayout::Bases(vec![vec![1, 0]]);
        ArgSpec::TensorDesc { elem, block_shape: block.to_vec(), padding_nan: false, layout: Some(layout) }
    };
    let scales = |rows: u32, cga: &str| ArgSpec::TensorDesc {
        elem: u8t,
        block_shape: vec![1, rows / 128, rep_k, 2, 256],
        padding_nan: false,
        layout: Some(nvmma(&format!(
            "NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=8, rank=5, cga_layout={cga})"
        ))),
    };
    let mut rng = tessel_math::testing::Rng::new(4242);
    let (av, sa) = quantized(&mut rng, m as usize, k as usize, "mxfp8");
    let (bv, sb) = quantized(&mut rng, n as usize, k as usize, "mxfp8");
    // float64: A dequantized times B dequantized, transposed.
    let deq = |v: &[f64], s: &[f64], i: usize, kk: usize| {
        v[i * k as usize + kk] * 2f64.powi(s[i * sk as usize + kk / 32] as i32 - 127)
    };
    let want: Vec<f64> = (0..(m * n) as usize)
        .map(|e| (0..k as usize).map(|kk| deq(&av, &sa, e / n as usize, kk) * deq(&bv, &sb, e % n as usize, kk)).sum())
        .collect();
    let scale_vals = |s: &[f64], rows: u32| {
        let shape = vec![1, rows / 128, sk.div_ceil(4), 2, 256];
        V::Desc(u8t, Some(packed_block(s, rows as usize, sk as usize)), shape)
    };
    for scheduler in ["SCHEDULER_CLC", "SCHEDULER_SPS"] {
        let mut spec = vec![desc(f8, [bm, bk]), desc(f8, [bn, bk]), desc(F16, [bm, epi_n])];
        spec.extend([scales(bm, "[[0, 1, 0, 0, 0]]"), scales(bn, "[[0, 0, 0, 0, 0]]")]);
        spec.extend([int(false), int(false), int(false), int(false)]);
        spec.extend([c(6), c(bm as i64), c(bn as i64), c(bk as i64), c(epi_n as i64), c(2), c(0), c(4)]);
        let one_zero = ConstValue::Tuple(vec![ConstValue::Int(1), ConstValue::Int(0)]);
        spec.extend([
            ArgSpec::Constexpr(ConstValue::Tuple(vec![one_zero])),
            ArgSpec::Constexpr(ConstValue::Expr(scheduler.into())),
        ]);
        let vals = [
            V::Desc(f8, Some(av.clone()), vec![m, k]),
            V::Desc(f8, Some(bv.clone()), vec![n, k]),
            V::Desc(F16, None, vec![m, n]),
            scale_vals(&sa, m),
            scale_vals(&sb, n),
            V::Int(m as i64),
            V::Int(n as i64),
            V::Int(k as i64),
            V::Int(1),
        ];
        let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
        let what = format!("example 04 on a CTA pair ({scheduler})");
        if scheduler == "SCHEDULER_CLC" {
            let err = run_on_ctas(&src, "mma_scaled_warp_specialized_kernel", spec.clone(), &opts, 2, &vals, [2, 1, 1])
                .err()
                .unwrap_or_else(|| panic!("{what}: the interpreter ran the copy over scales an MMA in flight reads"));
            assert!(sim_common::refuses_scale_copy_over_mma(&err), "{what}: {err}");
        }
        let kernel = "mma_scaled_warp_specialized_kernel";
        let outs = sim_common::run_on_ctas_ordered(&src, kernel, spec, &opts, 2, &vals, [2, 1, 1], MmaOrder::Issue)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: the interpreter left elements unwritten");
        let differ = (0..sim.len()).filter(|&j| sim[j].to_bits() != interp[j].to_bits()).count();
        assert_eq!(differ, 0, "{what}: {differ} elements differ between the simulator and the interpreter");
        let worst = interp.iter().zip(&want).map(|(x, w)| (x - w).abs() / (1.0 + w.abs())).fold(0.0, f64::max);
        assert!(worst < 2e-3, "{what}: the interpreter is {worst} from float64 (fp16 output)");
    }
}

/// The public Gluon example 01's `attention_kernel` on a CTA pair (`bench/gluon_example_cases.py`'s case: Z=H=1,
/// N_CTX=1024, D=64, fp16, BLOCK_M 512 per pair, 6 K/V buffers, `CGA_LAYOUT=((1, 0),)`, 2 clusters): S = Q K^T and
/// O += P V as pair MMAs (P read from each CTA's tensor memory), K split along the keys and its ring read again
/// as V split along the head dim (a reinterpret between differently split buffers: each CTA the same bytes),
/// buffers carried through loops, the softmax and correction partitions on each CTA's rows. The simulator writes
/// every element of `o` the interpreter does, bit for bit (and the rows of `M` the example writes), with the
/// interpreter holding the MMAs to issue order (`MmaOrder::Issue`: the example relies on it; the ISA's order
/// refuses it).
#[test]
fn gluon_example_attention_on_a_cta_pair_matches_the_interpreter() {
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_EXAMPLES", "01-attention-forward.py") else { return };
    let (n, d) = (1024u32, 64u32);
    let desc = |block: [u32; 2], cga: &[[u32; 2]]| {
        let split = |i: usize| cga.iter().filter(|b| b[i] != 0).count();
        let part = [block[0] >> split(0), block[1] >> split(1)];
        let mut layout = tessel::layouts::NvmmaSharedLayout::default_for(&part, 16);
        layout.cga = tessel::layouts::CgaLayout::Bases(cga.iter().map(|b| b.to_vec()).collect());
        ArgSpec::TensorDesc { elem: F16, block_shape: block.to_vec(), padding_nan: false, layout: Some(layout) }
    };
    let mut spec = vec![ArgSpec::Float(tessel::tile::ScalarType::F32), common::ptr(tessel::tile::ScalarType::F32)];
    spec.extend([int(false), int(false), int(false)]);
    // Q and O split along M with the pair, K along the keys, V along the head dim.
    spec.extend([desc([256, d], &[[1, 0]]), desc([128, d], &[[1, 0]]), desc([128, d], &[[0, 1]])]);
    spec.push(desc([256, d], &[[1, 0]]));
    spec.extend([c(512), c(128), c(d as i64), c(1), c(74), c(1), c(4)]);
    spec.extend([ArgSpec::Constexpr(ConstValue::Dtype(F16)), c(4), ArgSpec::Constexpr(ConstValue::Bool(false))]);
    let one_zero = ConstValue::Tuple(vec![ConstValue::Int(1), ConstValue::Int(0)]);
    spec.extend([
        c(6),
        ArgSpec::Constexpr(ConstValue::Bool(true)),
        ArgSpec::Constexpr(ConstValue::Tuple(vec![one_zero])),
    ]);
    let random = |s: u64| tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(s), (n * d) as usize, F16);
    let qkv = |seed| V::Desc(F16, Some(random(seed)), vec![n, d]);
    let vals = [V::F32(0.5), V::Out(tessel::tile::ScalarType::F32, n as usize), V::Int(1), V::Int(1), V::Int(n as i64)];
    let vals: Vec<V> = vals.into_iter().chain([qkv(71), qkv(72), qkv(73), V::Desc(F16, None, vec![n, d])]).collect();
    let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
    // The next S goes over the P an earlier P V may still read, with no wait between: refused under the ISA's
    // order, and checked under issue order, which the example relies on and the simulator runs.
    let err = run_on_ctas(&src, "attention_kernel", spec.clone(), &opts, 2, &vals, [2, 1, 1]).unwrap_err();
    assert!(err.contains("writes tensor-memory cells that the earlier tcgen05_mma into"), "{err}");
    let outs =
        sim_common::run_on_ctas_ordered(&src, "attention_kernel", spec, &opts, 2, &vals, [2, 1, 1], MmaOrder::Issue)
            .unwrap_or_else(|e| panic!("example 01 on a CTA pair: {e}"));
    let [(m_sim, m_interp), (o_sim, o_interp)] = [&outs[0], &outs[1]];
    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
    assert!(m_interp.iter().any(|x| x.is_finite()), "no row of `M` written");
    assert!(m_sim.iter().zip(m_interp).all(|(&a, &b)| same(a, b)), "`M` differs from the interpreter's");
    assert!(o_interp.iter().all(|x| x.is_finite()), "unwritten elements of `o`");
    let bad = o_sim.iter().zip(o_interp).filter(|(a, b)| a != b).count();
    assert_eq!(bad, 0, "{bad} of {} elements of `o` differ from the interpreter's", o_sim.len());
}
