//! The public Gluon tutorials' Blackwell entry kernels, and 07's, 08's and 13's Hopper ones, on the PTX simulator
//! against the interpreter (the warp-specialized ones too: 08's and 11's; 13's TMA im2col copy), and the im2col
//! convolutions of the Gluon examples (02's fprop, dgrad and wgrad, from `TESSEL_GLUON_EXAMPLES`). The tutorials are
//! not part of this repository: set `TESSEL_GLUON_TUTORIALS` to the directory holding them (python/tutorials/gluon
//! of triton-lang/triton, as `bench/gluon_tutorials.py` takes it); without it the test says so and passes. Each
//! kernel runs unmodified at the configurations its tests use (the matmuls on 208x416x304, ragged tiles), compiled
//! for sm_100a (07's and 08's add for sm_90a; 13's for sm_90a only), with the outputs poisoned on both sides; the
//! interpreter's results are checked against float64 by `bench/gluon_tutorials.py`.

#[path = "sim_common/mod.rs"]
mod sim_common;

use sim_common::scaled::{FORMATS, nvmma, packed_block, quantized, vec_size};
use sim_common::{RunOptions, SimAndInterp, V, run_edited, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, *};
use tessel::tile::Target;
use tessel_interp::MmaOrder;
use tessel_math::testing::Rng;

fn tutorial(name: &str) -> Option<(String, String)> {
    sim_common::tutorial("TESSEL_GLUON_TUTORIALS", name)
}

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

fn desc(elem: ScalarType, block: &[u32]) -> ArgSpec {
    ArgSpec::TensorDesc { elem, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

fn opts(file: &str, num_warps: u32) -> RunOptions<'_> {
    RunOptions { file, target: Target::Sm100a, num_warps, num_stages: 1, poison: true }
}

/// Asserts the simulator and the interpreter wrote the same, and every element.
fn check(what: &str, outs: Result<Vec<SimAndInterp>, String>) {
    let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
    for (i, (sim, interp)) in outs.iter().enumerate() {
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: output {i} has unwritten elements");
        assert_eq!(sim.len(), interp.len(), "{what}: output {i}, simulated PTX vs interpreter");
        let bad: Vec<usize> = (0..sim.len()).filter(|&j| sim[j] != interp[j]).collect();
        if let Some(&j) = bad.first() {
            panic!(
                "{what}: output {i}, simulated PTX vs interpreter: {} of {} elements differ, first at {j}: {} vs {}",
                bad.len(),
                sim.len(),
                sim[j],
                interp[j]
            );
        }
    }
}

#[test]
fn tcgen05_tutorial_kernels_agree_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("06-tcgen05.py") else { return };
    let ptr = ArgSpec::Pointer(F32, true);
    for m in [64u32, 128, 256] {
        for n in [64u32, 128] {
            for w in [4, 8] {
                let args = vec![ptr.clone(), ptr.clone(), c(m as i64), c(n as i64), c(w)];
                let x = Rng::new((m + n) as u64).vec((m * n) as usize);
                let vals = [V::Buf(F32, x), V::Out(F32, (m * n) as usize)];
                let what = format!("tmem_example_kernel {m}x{n}, {w} warps");
                check(&what, run_on(&src, "tmem_example_kernel", args, &opts(&file, w as u32), &vals, [1, 1, 1]));
            }
        }
    }
    for (m, n, k) in [(128u32, 128u32, 128u32), (64, 128, 128), (64, 256, 256), (256, 64, 64)] {
        for lhs_in_tmem in [false, true] {
            for commit in [false, true] {
                for w in [4u32, 8] {
                    let block = ConstValue::Tuple(vec![ConstValue::Int(m.min(128) as i64), ConstValue::Int(n as i64)]);
                    let args = vec![
                        desc(F16, &[m, k]),
                        desc(F16, &[k, n]),
                        desc(F32, &[m, n]),
                        desc(F32, &[m, n]),
                        ArgSpec::Constexpr(block),
                        cb(lhs_in_tmem),
                        cb(commit),
                        c(w as i64),
                    ];
                    let mut rng = Rng::new((m + n + k) as u64);
                    let vals = [
                        V::Desc(F16, Some(rng.vec((m * k) as usize)), vec![m, k]),
                        V::Desc(F16, Some(rng.vec((k * n) as usize)), vec![k, n]),
                        V::Desc(F32, Some(rng.vec((m * n) as usize)), vec![m, n]),
                        V::Desc(F32, None, vec![m, n]),
                    ];
                    let what = format!(
                        "small_mma_kernel {m}x{n}x{k}, LHS_IN_TMEM={lhs_in_tmem}, USE_COMMIT={commit}, {w} warps"
                    );
                    check(&what, run_on(&src, "small_mma_kernel", args, &opts(&file, w), &vals, [1, 1, 1]));
                }
            }
        }
    }
    let (m, n, k) = (208u32, 416u32, 304u32);
    for b in [64u32, 128] {
        for w in [4u32, 8] {
            for transpose_b in [false, true] {
                let b_shape = if transpose_b { [n, k] } else { [k, n] };
                let args =
                    vec![desc(F16, &[b, b]), desc(F16, &[b, b]), desc(F16, &[b, b]), cb(transpose_b), c(w as i64)];
                let mut rng = Rng::new(b as u64 + transpose_b as u64);
                let vals = [
                    V::Desc(F16, Some(rng.vec((m * k) as usize)), vec![m, k]),
                    V::Desc(F16, Some(rng.vec((k * n) as usize)), b_shape.to_vec()),
                    V::Desc(F16, None, vec![m, n]),
                ];
                let grid = [m.div_ceil(b), n.div_ceil(b), 1];
                let what = format!("blocked_matmul_kernel {b}^3, {w} warps, TRANSPOSE_B={transpose_b}");
                check(&what, run_on(&src, "blocked_matmul_kernel", args, &opts(&file, w), &vals, grid));
            }
            let args = vec![desc(F16, &[b, b]), desc(F16, &[b, b]), desc(F16, &[b, b]), c(w as i64)];
            let mut rng = Rng::new(3 * b as u64);
            let vals = [
                V::Desc(F16, Some(rng.vec((m * k) as usize)), vec![m, k]),
                V::Desc(F16, Some(rng.vec((k * n) as usize)), vec![k, n]),
                V::Desc(F16, None, vec![m, n]),
            ];
            let grid = [m.div_ceil(2 * b), n.div_ceil(b), 1];
            let what = format!("blocked_matmul_pipelined_kernel {b}^3, {w} warps");
            check(&what, run_on(&src, "blocked_matmul_pipelined_kernel", args, &opts(&file, w), &vals, grid));
        }
    }
}

/// 10-tcgen05-copy's `tcgen05_copy_kernel` (f32 through NVMMA shared memory into tensor memory by `tcgen05.cp`,
/// read back with `tcgen05.ld`) over M 128 and 256, every swizzle and TMEM block N from 1 to the whole width.
#[test]
fn tcgen05_copy_tutorial_kernels_agree_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("10-tcgen05-copy.py") else { return };
    let ptr = ArgSpec::Pointer(F32, true);
    let int = ArgSpec::Int(tessel::tile::ScalarType::I32, false);
    for (m, n, block_n, swizzle) in
        [(128u32, 16u32, 1u32, 32u32), (128, 64, 16, 128), (128, 256, 256, 64), (256, 64, 8, 32), (256, 128, 128, 128)]
    {
        let layout = |s: String| ArgSpec::Constexpr(ConstValue::Expr(s));
        let args = vec![
            ptr.clone(),
            int.clone(),
            int.clone(),
            ptr.clone(),
            int.clone(),
            int.clone(),
            c(m as i64),
            c(n as i64),
            layout(format!("gl.NVMMASharedLayout(swizzle_byte_width={swizzle}, element_bitwidth=32, rank=2)")),
            layout(format!("TensorMemoryLayout(block=(128, {block_n}), col_stride=1)")),
        ];
        let x = Rng::new((m + n + block_n) as u64).vec((m * n) as usize);
        let vals = [
            V::Buf(F32, x.clone()),
            V::Int(n as i64),
            V::Int(1),
            V::Out(F32, (m * n) as usize),
            V::Int(n as i64),
            V::Int(1),
        ];
        let what = format!("tcgen05_copy_kernel {m}x{n}, TMEM block (128, {block_n}), swizzle {swizzle}");
        let outs = run_on(&src, "tcgen05_copy_kernel", args, &opts(&file, 4), &vals, [1, 1, 1]);
        check(&what, outs.clone());
        let outs = outs.unwrap();
        assert_eq!(outs[0].1, x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>(), "{what}: a copy");
    }
}

/// The descriptor of an operand block `[rows, K]` (`[rows, K / 2]` bytes of e2m1; padded beside fp8).
fn operand(fmt: &str, mixed: bool, rows: u32, block_k: u32) -> ArgSpec {
    if fmt == "mxfp8" {
        return desc(F8E4M3, &[rows, block_k]);
    }
    let layout =
        mixed.then(|| nvmma("NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, rank=2, fp4_padded=True)"));
    ArgSpec::TensorDesc { elem: U8, block_shape: vec![rows, block_k / 2], padding_nan: false, layout }
}

/// A tutorial 11 kernel at one format pair and block shape on `m x n x k`, simulated and interpreted.
///
/// The pipelined and warp-specialized kernels copy each K step's scales (into tensor memory allocated in the
/// loop: the same planned columns each step) while the previous step's MMA may still read them. The PTX ISA
/// orders a `tcgen05.cp` before a later MMA but not an MMA before a later `tcgen05.cp` (9.7.16.6.2), so the
/// interpreter's default (`MmaOrder::Isa`) refuses them, naming the copy and the MMA (`refused`: check that);
/// their values are compared with the interpreter holding the ops to issue order (`MmaOrder::Issue`), which
/// these kernels rely on.
fn scaled_case(src: &str, file: &str, kernel: &str, fmts: (&str, &str), block_n: u32, block_k: u32, mnk: [u32; 3]) {
    scaled_case_refused(src, file, kernel, fmts, block_n, block_k, mnk, false)
}

/// [`scaled_case`], checking first (`refused`) that the interpreter refuses the pipelined kernels under the ISA's
/// order.
#[allow(clippy::too_many_arguments)]
fn scaled_case_refused(
    src: &str,
    file: &str,
    kernel: &str,
    fmts: (&str, &str),
    block_n: u32,
    block_k: u32,
    mnk: [u32; 3],
    refused: bool,
) {
    let (fa, fb) = fmts;
    let [m, n, k] = mnk;
    let mixed = fa != fb;
    let vec = vec_size(fa);
    let per = |f: &str| if f == "mxfp8" { 1 } else { 2 };
    let mut rng = Rng::new((m + n + k + block_n + block_k) as u64 + fa.len() as u64 * 7 + fb.len() as u64);
    let (av, sa) = quantized(&mut rng, m as usize, k as usize, fa);
    let (bv, sb) = quantized(&mut rng, n as usize, k as usize, fb);
    let (elem_a, elem_b) = (if fa == "mxfp8" { F8E4M3 } else { U8 }, if fb == "mxfp8" { F8E4M3 } else { U8 });
    let scale_t = if fa == "nvfp4" { F8E4M3 } else { U8 };
    let mut args =
        vec![operand(fa, mixed, 128, block_k), operand(fb, mixed, block_n, block_k), desc(F16, &[128, block_n])];
    let mut vals = vec![
        V::Desc(elem_a, Some(av), vec![m, k / per(fa)]),
        V::Desc(elem_b, Some(bv), vec![n, k / per(fb)]),
        V::Desc(F16, None, vec![m, n]),
    ];
    let sk = (k as usize) / vec;
    match kernel {
        "simple_mma_scaled_kernel" => {
            let int = ArgSpec::Int(I32, false);
            args.extend([ArgSpec::Pointer(scale_t, true), int.clone(), int.clone()]);
            args.extend([ArgSpec::Pointer(scale_t, true), int.clone(), int]);
            vals.extend([V::Buf(scale_t, sa), V::Int(sk as i64), V::Int(1), V::Buf(scale_t, sb)]);
            vals.extend([V::Int(sk as i64), V::Int(1)]);
        }
        _ => {
            // Scales as TMA blocks of the packed-block layout, unswizzled for the tcgen05_copy kernels.
            let no_swizzle = kernel != "mma_scaled_packed_block_kernel";
            let block = |rows: u32| vec![1, rows / 128, block_k / (vec as u32 * 4), 2, 256];
            let layout =
                no_swizzle.then(|| nvmma("NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=8, rank=5)"));
            for (rows, block_rows, s) in [(m, 128, &sa), (n, block_n, &sb)] {
                args.push(ArgSpec::TensorDesc {
                    elem: scale_t,
                    block_shape: block(block_rows),
                    padding_nan: false,
                    layout: layout.clone(),
                });
                let shape = vec![1, rows / 128, (sk / 4) as u32, 2, 256];
                vals.push(V::Desc(scale_t, Some(packed_block(s, rows as usize, sk)), shape));
            }
        }
    }
    match kernel {
        "mma_scaled_pipelined_kernel" | "mma_scaled_warp_specialized_kernel" => {
            args.push(c(3));
            args.push(ArgSpec::Constexpr(ConstValue::Expr("t7.GroupedPersistentTileScheduler(8)".into())));
        }
        _ => args.push(c(vec as i64)),
    }
    let grid = match kernel {
        "mma_scaled_pipelined_kernel" | "mma_scaled_warp_specialized_kernel" => [1, 1, 1],
        _ => [m.div_ceil(128), n.div_ceil(block_n), 1],
    };
    let what = format!("{kernel} {fa} x {fb}, BLOCK_N {block_n}, BLOCK_K {block_k}, {m}x{n}x{k}");
    let pipelined = matches!(kernel, "mma_scaled_pipelined_kernel" | "mma_scaled_warp_specialized_kernel");
    if refused {
        assert!(pipelined, "{what}: only the pipelined kernels are refused");
        let err = run_on(src, kernel, args.clone(), &opts(file, 4), &vals, grid)
            .err()
            .unwrap_or_else(|| panic!("{what}: the interpreter ran the copy over scales an MMA in flight reads"));
        assert!(sim_common::refuses_scale_copy_over_mma(&err), "{what}: {err}");
    }
    let order = if pipelined { MmaOrder::Issue } else { MmaOrder::Isa };
    check(&what, sim_common::run_on_ctas_ordered(src, kernel, args, &opts(file, 4), 1, &vals, grid, order));
}

/// Tutorial 11's kernels other than the warp-specialized one (see the next test): every format pair,
/// block-scaled MMAs of kind::mxf8f6f4 (fp4 padded beside fp8), mxf4 and mxf4nvf4 with their scales stored from
/// registers (simple), copied by tcgen05.cp from the unswizzled packed-block TMA blocks, and the pipelined
/// persistent kernel (refused under the ISA's order, then run in issue order: [`scaled_case`]).
#[test]
fn mma_scaled_tutorial_kernels_agree_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("11-tcgen05-mma-scaled.py") else { return };
    for fmts in FORMATS {
        let both_fp4 = fmts.0 != "mxfp8" && fmts.1 != "mxfp8";
        for (block_n, block_k) in [(128, 128), (64, if both_fp4 { 64 } else { 32 }), (32, 256)] {
            if fmts.0 != fmts.1 && block_k < 128 {
                continue;
            }
            scaled_case(
                &src,
                &file,
                "simple_mma_scaled_kernel",
                fmts,
                block_n,
                block_k,
                [128, 2 * block_n, 2 * block_k],
            );
        }
        scaled_case(&src, &file, "mma_scaled_packed_block_kernel", fmts, 128, 256, [128, 256, 512]);
        scaled_case(&src, &file, "mma_scaled_tcgen05_copy_kernel", fmts, 256, 128, [128, 256, 256]);
        let bk = if fmts.0 == "mxfp8" || fmts.1 == "mxfp8" { 128 } else { 256 };
        let first = fmts == FORMATS[0];
        scaled_case_refused(&src, &file, "mma_scaled_pipelined_kernel", fmts, 256, bk, [128, 256, 4 * bk], first);
    }
}

/// Tutorial 11's `mma_scaled_warp_specialized_kernel` (a TMA loader warp, an MMA warp issuing the block-scaled
/// MMAs with their scales copied by tcgen05.cp, the epilogue in the default partition, meeting at mbarriers) on
/// one program walking the tiles of 128x512 (two tiles, so both accumulator buffers turn over) with a K of three
/// blocks (the three-buffer ring wraps at the second tile), for every format pair.
/// Refused under the ISA's order, then run in issue order ([`scaled_case`]).
#[test]
fn warp_specialized_mma_scaled_tutorial_kernel_agrees_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("11-tcgen05-mma-scaled.py") else { return };
    for fmts in FORMATS {
        let bk = if fmts.0 == "mxfp8" || fmts.1 == "mxfp8" { 128 } else { 256 };
        let first = fmts == FORMATS[0];
        let kernel = "mma_scaled_warp_specialized_kernel";
        scaled_case_refused(&src, &file, kernel, fmts, 256, bk, [128, 512, 3 * bk], first);
    }
}

/// Tutorial 08's warp-specialized kernels: the Hopper elementwise add (a TMA load warp and a TMA store warp
/// around the default partition's adds, at 1 and 2 buffers each way, 4 and 8 warps, on sm_90a) on 70x200 (ragged
/// rows: three programs, the last partial), exact; and the Blackwell matmul (a load warp, an MMA warp, the
/// epilogue subtiled by 4 in the default partition, each of tutorial 07's schedulers) on 208x416x304 over 3
/// programs, so that every program runs several tiles and both accumulator buffers turn over.
#[test]
fn warp_specialized_tutorial_kernels_agree_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("08-warp-specialization.py") else { return };
    let (xn, yn) = (70u32, 200u32);
    let mut rng = Rng::new(8);
    for nbuf in [1i64, 2] {
        for warps in [4u32, 8] {
            let args = vec![
                desc(F32, &[32, 64]),
                desc(F32, &[32, 64]),
                desc(F32, &[32, 64]),
                ArgSpec::Int(I32, false),
                ArgSpec::Int(I32, false),
                c(32),
                c(64),
                c(nbuf),
                c(nbuf),
                c(warps as i64),
            ];
            let vals = [
                V::Desc(F32, Some(rng.vec((xn * yn) as usize)), vec![xn, yn]),
                V::Desc(F32, Some(rng.vec((xn * yn) as usize)), vec![xn, yn]),
                V::Desc(F32, None, vec![xn, yn]),
                V::Int(xn as i64),
                V::Int(yn as i64),
            ];
            let hopper = RunOptions { target: Target::Sm90a, ..opts(&file, warps) };
            let what = format!("elementwise_add_warp_specialized_kernel {xn}x{yn}, {nbuf} buffers, {warps} warps");
            let grid = [xn.div_ceil(32), 1, 1];
            check(&what, run_on(&src, "elementwise_add_warp_specialized_kernel", args, &hopper, &vals, grid));
        }
    }
    let (m, n, k) = (208u32, 416u32, 304u32);
    let (a, b) = (rng.vec((m * k) as usize), rng.vec((k * n) as usize));
    for (scheduler, nbuf) in [
        ("PersistentTileScheduler", 2),
        ("GroupedPersistentTileScheduler(1)", 3),
        ("GroupedPersistentTileScheduler(8)", 4),
    ] {
        let args = vec![
            desc(F16, &[128, 64]),
            desc(F16, &[64, 256]),
            desc(F16, &[128, 64]),
            ArgSpec::Constexpr(ConstValue::Expr(format!("t7.{scheduler}"))),
            c(nbuf),
            c(4),
            c(4),
        ];
        let vals = [
            V::Desc(F16, Some(a.clone()), vec![m, k]),
            V::Desc(F16, Some(b.clone()), vec![k, n]),
            V::Desc(F16, None, vec![m, n]),
        ];
        let what = format!("matmul_warp_specialized_kernel ({scheduler}, {nbuf} buffers) {m}x{n}x{k}");
        check(&what, run_on(&src, "matmul_warp_specialized_kernel", args, &opts(&file, 4), &vals, [3, 1, 1]));
    }
}

/// Tutorial 12's persistent matmul (tutorial 7's MMAv5, 128x256x64 blocks, 3 buffers) with each scheduler on
/// 296x296x200 (square, as the kernel requires; partial tiles): the CLC scheduler on a grid of one program per
/// tile, whose first program cancels the others and does their tiles (the simulator's and the interpreter's
/// default answer, the next program not started), or, with every request failing on the simulator, each program
/// its own; and the static one on 3 programs.
#[test]
fn cluster_launch_control_tutorial_kernel_agrees_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("12-cluster-launch-control.py") else { return };
    let (m, n, k) = (296u32, 296u32, 200u32);
    let mut rng = Rng::new(12);
    let (a, b) = (rng.vec((m * k) as usize), rng.vec((k * n) as usize));
    let expr = |s: &str| ArgSpec::Constexpr(ConstValue::Expr(s.into()));
    let tiles = m.div_ceil(128) * n.div_ceil(256);
    for (scheduler, grid, cancels) in
        [("ClcTileScheduler", tiles, true), ("ClcTileScheduler", tiles, false), ("StaticTileScheduler", 3, true)]
    {
        let args = vec![
            desc(F16, &[128, 64]),
            desc(F16, &[64, 256]),
            desc(F16, &[128, 256]),
            expr("t7.MMAv5"),
            expr(scheduler),
            c(3),
            c(4),
        ];
        let vals = [
            V::Desc(F16, Some(a.clone()), vec![m, k]),
            V::Desc(F16, Some(b.clone()), vec![k, n]),
            V::Desc(F16, None, vec![m, n]),
        ];
        let what = format!("persistent_matmul_kernel ({scheduler}, requests answered: {cancels}) {m}x{n}x{k}");
        sim_common::ptx_sim::answer_every_request(cancels);
        let outs = run_on(&src, "persistent_matmul_kernel", args, &opts(&file, 4), &vals, [grid, 1, 1]);
        sim_common::ptx_sim::answer_every_request(true);
        check(&what, outs);
    }
}

/// Tutorial 07's Hopper kernels (its `WGMMA` aggregate, whose `use_acc` is a runtime flag: wgmma's scale-d
/// predicate) on sm_90a: the pipelined matmul and the persistent one, 128x256x64 blocks, 3 buffers, 8 warps, on
/// 208x416x304 (ragged tiles; the persistent one on 3 programs, so that each runs several tiles and resets its
/// accumulator between them).
#[test]
fn wgmma_tutorial_kernels_agree_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("07-persistence.py") else { return };
    let (m, n, k) = (208u32, 416u32, 304u32);
    let mut rng = Rng::new(7);
    let (a, b) = (rng.vec((m * k) as usize), rng.vec((k * n) as usize));
    let expr = |s: &str| ArgSpec::Constexpr(ConstValue::Expr(s.into()));
    let hopper = RunOptions { target: Target::Sm90a, ..opts(&file, 8) };
    let tiles = [m.div_ceil(128), n.div_ceil(256), 1];
    for (kernel, grid, scheduler) in [
        ("matmul_pipelined_kernel", tiles, None),
        ("persistent_matmul_kernel", [3, 1, 1], Some("PersistentTileScheduler")),
    ] {
        let mut args = vec![desc(F16, &[128, 64]), desc(F16, &[64, 256]), desc(F16, &[128, 256]), expr("WGMMA")];
        args.extend(scheduler.map(expr));
        args.extend([c(3), c(8)]);
        let vals = [
            V::Desc(F16, Some(a.clone()), vec![m, k]),
            V::Desc(F16, Some(b.clone()), vec![k, n]),
            V::Desc(F16, None, vec![m, n]),
        ];
        let outs = run_on(&src, kernel, args, &hopper, &vals, grid).unwrap_or_else(|e| panic!("{kernel}: {e}"));
        // The simulator adds each K-16 instruction's product to D, the interpreter each K-64 dot's: the fp16
        // results may round one unit apart.
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "{kernel}: unwritten elements");
        let far = (0..sim.len()).filter(|&j| (sim[j] - interp[j]).abs() > 2e-3 * interp[j].abs().max(1.0)).count();
        assert_eq!(far, 0, "{kernel} {m}x{n}x{k}: {far} of {} elements differ by more than an fp16 unit", sim.len());
    }
}

/// A tutorial-09 descriptor: block `[1, cols]` staged in the layout of a `[rows, cols]` buffer
/// (`NVMMASharedLayout.get_default_for([rows, cols])`, as the tutorial's host code makes it).
fn gather_desc(elem: ScalarType, rows: u32, cols: u32) -> ArgSpec {
    let layout = Some(tessel::layouts::NvmmaSharedLayout::default_for(&[rows, cols], elem.bits()));
    ArgSpec::TensorDesc { elem, block_shape: vec![1, cols], padding_nan: false, layout }
}

/// `torch.linspace(lo, hi, n, dtype=int32)` shuffled, as tutorial 09's tests make row offsets.
fn shuffled_rows(rng: &mut Rng, lo: f64, hi: f64, n: u32) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n).map(|i| (lo + (hi - lo) * i as f64 / (n - 1) as f64).trunc()).collect();
    for i in (1..v.len()).rev() {
        v.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    v
}

/// Tutorial 09's gather and scatter kernels at every dtype, BLOCK_X and BLOCK_Y of its tests, on a 64x256 tensor:
/// row offsets from negative to past the tensor (the gather reads zeros there, the scatter drops them), column
/// offsets before, inside and across the tensor's end.
#[test]
fn gather_scatter_tutorial_kernels_agree_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("09-tma-gather-scatter.py") else { return };
    let (xm, ym) = (64u32, 256u32);
    let int = ArgSpec::Int(I32, false);
    let mut rng = Rng::new(9);
    for elem in [BF16, F32] {
        for bx in [8u32, 128] {
            for by in [16u32, 128] {
                for y in [-16i64, 0, 48, 200] {
                    let input = rng.vec((xm * ym) as usize);
                    let rows = shuffled_rows(&mut rng, -(xm as f64), 2.0 * xm as f64, bx);
                    let args = vec![
                        ArgSpec::Pointer(elem, true),
                        int.clone(),
                        int.clone(),
                        gather_desc(elem, bx, by),
                        ArgSpec::Pointer(I32, true),
                        int.clone(),
                        c(bx as i64),
                    ];
                    let vals = [
                        V::Out(elem, (bx * by) as usize),
                        V::Int(by as i64),
                        V::Int(1),
                        V::Desc(elem, Some(input), vec![xm, ym]),
                        V::Buf(I32, rows),
                        V::Int(y),
                    ];
                    let what = format!("async_gather_kernel ({elem}, BLOCK_X {bx}, BLOCK_Y {by}, y_offset {y})");
                    check(&what, run_on(&src, "async_gather_kernel", args, &opts(&file, 4), &vals, [1, 1, 1]));
                    if y < 0 {
                        continue;
                    }
                    let input = rng.vec((xm * ym) as usize);
                    let rows = shuffled_rows(&mut rng, 0.0, 2.0 * xm as f64, bx);
                    let args = vec![
                        gather_desc(elem, bx, by),
                        ArgSpec::Pointer(I32, true),
                        int.clone(),
                        ArgSpec::Pointer(elem, true),
                        int.clone(),
                        int.clone(),
                        c(bx as i64),
                    ];
                    let vals = [
                        V::DescInOut(elem, input, vec![xm, ym]),
                        V::Buf(I32, rows),
                        V::Int(y),
                        V::Buf(elem, rng.vec((bx * by) as usize)),
                        V::Int(by as i64),
                        V::Int(1),
                    ];
                    let what = format!("async_scatter_kernel ({elem}, BLOCK_X {bx}, BLOCK_Y {by}, y_offset {y})");
                    check(&what, run_on(&src, "async_scatter_kernel", args, &opts(&file, 4), &vals, [1, 1, 1]));
                }
            }
        }
    }
}

/// Tutorial 09's matmul with a fused gather and scatter (tutorial 7's MMAv5, the grouped scheduler) at each block
/// shape and buffer count of its test, on 256x200x320 (partial N and K tiles) with 3 programs.
#[test]
fn fused_gather_scatter_matmul_tutorial_kernel_agrees_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("09-tma-gather-scatter.py") else { return };
    let (m, n, k) = (256u32, 200u32, 320u32);
    let mut rng = Rng::new(90);
    let perm = |rng: &mut Rng| shuffled_rows(rng, 0.0, (m - 1) as f64, m);
    let expr = |s: &str| ArgSpec::Constexpr(ConstValue::Expr(s.into()));
    for (bm, bn) in [(128u32, 128u32), (128, 64)] {
        for (bk, nbuf) in [(128u32, 2i64), (64, 3)] {
            let args = vec![
                gather_desc(BF16, bm, bk),
                desc(BF16, &[bk, bn]),
                gather_desc(BF16, bm, bn),
                ArgSpec::Pointer(I32, true),
                ArgSpec::Pointer(I32, true),
                c(bm as i64),
                expr("t7.GroupedPersistentTileScheduler(8)"),
                c(nbuf),
            ];
            let vals = [
                V::Desc(BF16, Some(rng.vec((m * k) as usize)), vec![m, k]),
                V::Desc(BF16, Some(rng.vec((k * n) as usize)), vec![k, n]),
                V::Desc(BF16, None, vec![m, n]),
                V::Buf(I32, perm(&mut rng)),
                V::Buf(I32, perm(&mut rng)),
            ];
            let what = format!("matmul_fused_gather_scatter_kernel ({bm}x{bn}x{bk}, bufs={nbuf}) {m}x{n}x{k}");
            let outs = run_on(&src, "matmul_fused_gather_scatter_kernel", args, &opts(&file, 4), &vals, [3, 1, 1]);
            check(&what, outs);
        }
    }
}

/// The comparison catches a gather whose rows are out of order: the gather kernel with the first two row
/// coordinates of every `gather4` swapped in its PTX lands rows in the wrong places, and the simulated output
/// differs from the interpreter's.
#[test]
fn a_gather_with_its_rows_swapped_disagrees_with_the_interpreter() {
    let Some((file, src)) = tutorial("09-tma-gather-scatter.py") else { return };
    let (xm, ym, bx, by) = (64u32, 256u32, 8u32, 16u32);
    let int = ArgSpec::Int(I32, false);
    let mut rng = Rng::new(19);
    let args = vec![
        ArgSpec::Pointer(F32, true),
        int.clone(),
        int.clone(),
        gather_desc(F32, bx, by),
        ArgSpec::Pointer(I32, true),
        int,
        c(bx as i64),
    ];
    let rows: Vec<f64> = (0..bx).map(|i| (i * 7) as f64).collect();
    let vals = [
        V::Out(F32, (bx * by) as usize),
        V::Int(by as i64),
        V::Int(1),
        V::Desc(F32, Some(rng.vec((xm * ym) as usize)), vec![xm, ym]),
        V::Buf(I32, rows),
        V::Int(0),
    ];
    let swap_rows = |ptx: &str| -> String {
        let lines = ptx.lines().map(|l| {
            let Some(open) = l.find('{').filter(|_| l.contains("tile::gather4")) else { return l.to_string() };
            let close = l[open..].find('}').expect("a coordinate vector") + open;
            let mut c: Vec<&str> = l[open + 1..close].split(", ").collect();
            c.swap(1, 2);
            format!("{}{{{}}}{}", &l[..open], c.join(", "), &l[close + 1..])
        });
        lines.collect::<Vec<_>>().join("\n")
    };
    let opts = opts(&file, 4);
    let good = run_on(&src, "async_gather_kernel", args.clone(), &opts, &vals, [1, 1, 1]).unwrap();
    assert_eq!(good[0].0, good[0].1, "the unbroken kernel agrees");
    let bad = run_edited(&src, "async_gather_kernel", args, &opts, &vals, [1, 1, 1], &swap_rows).unwrap();
    assert_ne!(bad[0].0, bad[0].1, "rows swapped in the PTX must show in the simulated output");
}

/// An im2col load of tutorial 13's kernel: the `[n, h, w, c]` image, the pixel box's corners `[h, w]`, the load's
/// coordinates `[n, h, w, c]` and offsets `[h, w]`, and how many elements of the block read padding (zeros).
struct Im2colCase {
    name: &'static str,
    image: [u32; 4],
    lower: [i32; 2],
    upper: [i32; 2],
    coord: [i64; 4],
    offsets: [i64; 2],
    zeros: usize,
}

const fn im2col_case(
    name: &'static str,
    image: [u32; 4],
    box_corners: [[i32; 2]; 2],
    coord: [i64; 4],
    offsets: [i64; 2],
    zeros: usize,
) -> Im2colCase {
    Im2colCase { name, image, lower: box_corners[0], upper: box_corners[1], coord, offsets, zeros }
}

/// Tutorial 13's five examples (`bench/gluon_tutorial_cases.py` runs them against float64): no padding, a padded
/// box (7 of the 16 pixels outside the image), the same shifted back by offsets, and two across images (the second
/// padded too); then three of ours: an offset along H alone (the W column before the image stays padding), the
/// channels from 16 on of a 32-channel image (the last 16 of each pixel past the tensor), and a walk that runs past
/// the last image.
const IM2COL_CASES: [Im2colCase; 8] = [
    im2col_case("basic", [1, 4, 4, 32], [[0, 0], [0, 0]], [0, 0, 0, 0], [0, 0], 0),
    im2col_case("padded", [1, 4, 4, 32], [[-1, -1], [-1, -1]], [0, -1, -1, 0], [0, 0], 7 * 32),
    im2col_case("offset", [1, 4, 4, 32], [[-1, -1], [-1, -1]], [0, -1, -1, 0], [1, 1], 0),
    im2col_case("multi-batch", [2, 4, 4, 32], [[0, 0], [0, 0]], [0, 1, 3, 0], [0, 0], 0),
    im2col_case("multi-batch padded", [2, 4, 4, 32], [[-1, -1], [-1, -1]], [0, 1, 2, 0], [0, 0], 7 * 32),
    im2col_case("offset along H only", [1, 4, 4, 32], [[-1, -1], [-1, -1]], [0, -1, -1, 0], [1, 0], 4 * 32),
    im2col_case("channels past the image", [1, 4, 4, 32], [[0, 0], [0, 0]], [0, 0, 0, 16], [0, 0], 16 * 16),
    im2col_case("past the last image", [2, 4, 4, 32], [[0, 0], [0, 0]], [1, 2, 0, 0], [0, 0], 8 * 32),
];

/// `tma_im2col_kernel`'s arguments and values at `case` (fp32, a 16x32 block, a fresh random image from `seed`).
fn im2col_run(case: &Im2colCase, seed: u64) -> (Vec<ArgSpec>, Vec<V>) {
    let block = vec![16u32, 32];
    let int = ArgSpec::Int(I32, false);
    let im2col = ArgSpec::TensorDescIm2col { elem: F32, block_shape: block.clone(), rank: 4, padding_nan: false };
    let mut args = vec![im2col, desc(F32, &block)];
    args.extend(std::iter::repeat_n(int, 4));
    args.extend(case.offsets.map(c));
    let n: u32 = case.image.iter().product();
    let mut vals = vec![
        V::Im2col {
            elem: F32,
            data: Rng::new(seed).vec(n as usize),
            shape: case.image.to_vec(),
            lower: case.lower.to_vec(),
            upper: case.upper.to_vec(),
            strides: vec![1; 4],
        },
        V::Desc(F32, None, block),
    ];
    vals.extend(case.coord.map(V::Int));
    (args, vals)
}

/// Tutorial 13's `tma_im2col_kernel` (one TMA im2col load of a 16-pixel by 32-channel fp32 block, stored back by
/// TMA) at the five examples of the tutorial and three more ([`IM2COL_CASES`]), for sm_90a with one warp: the
/// simulator's im2col load (`ptx_sim/src/tma_im2col.rs`, from the PTX ISA) against the interpreter's, element for
/// element, on a fresh random image, the output poisoned on both sides; and the elements read outside the tensor
/// (zeros) counted. The tutorial's convolution (`conv2d_im2col_kernel`) is not here: as the tutorial writes it, its
/// TMA loads overwrite the operands of a wgmma that may still be reading them (`bench/gluon_tutorial_cases.py`).
#[test]
fn im2col_tutorial_kernel_agrees_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = tutorial("13-conv-im2col.py") else { return };
    let hopper = RunOptions { target: Target::Sm90a, ..opts(&file, 1) };
    for (i, case) in IM2COL_CASES.iter().enumerate() {
        let (args, vals) = im2col_run(case, 130 + i as u64);
        let outs = run_on(&src, "tma_im2col_kernel", args, &hopper, &vals, [1, 1, 1]);
        let what = format!("tma_im2col_kernel ({})", case.name);
        check(&what, outs.clone());
        let zeros = outs.unwrap()[0].1.iter().filter(|&&x| x == 0.0).count();
        assert_eq!(zeros, case.zeros, "{what}: the elements outside the tensor read zeros");
    }
}

/// The comparison catches a wrong im2col offset: the padded example with the W offset of its load changed from 0
/// to 1 in the PTX reads every pixel one column to the right, and the simulated output differs from the
/// interpreter's.
#[test]
fn an_im2col_load_with_a_wrong_offset_disagrees_with_the_interpreter() {
    let Some((file, src)) = tutorial("13-conv-im2col.py") else { return };
    let hopper = RunOptions { target: Target::Sm90a, ..opts(&file, 1) };
    let (args, vals) = im2col_run(&IM2COL_CASES[1], 139);
    // The offsets are the last `{..}` of the load, innermost (W) first.
    let shift_w = |ptx: &str| -> String {
        let lines = ptx.lines().map(|l| {
            if !l.contains(".im2col") {
                return l.to_string();
            }
            let open = l.rfind('{').expect("an offset vector");
            let close = l[open..].find(',').expect("two offsets") + open;
            format!("mov.b16 %rs_w_offset, 1;\n{}{{%rs_w_offset{}", &l[..open], &l[close..])
        });
        lines.collect::<Vec<_>>().join("\n")
    };
    let good = run_on(&src, "tma_im2col_kernel", args.clone(), &hopper, &vals, [1, 1, 1]).unwrap();
    assert_eq!(good[0].0, good[0].1, "the unbroken kernel agrees");
    let bad = run_edited(&src, "tma_im2col_kernel", args, &hopper, &vals, [1, 1, 1], &shift_w).unwrap();
    assert_ne!(bad[0].0, bad[0].1, "an offset changed in the PTX must show in the simulated output");
}

/// Example 02's problem (`bench/gluon_example_cases.py`'s `CONV`): images of 1x8 pixels by 96 channels, 128
/// filters of 1x2, stride (1, 2), no padding; the output is 1x4.
struct Conv {
    h: u32,
    w: u32,
    ci: u32,
    co: u32,
    r: u32,
    s: u32,
    sw: u32,
}

const CONV: Conv = Conv { h: 1, w: 8, ci: 96, co: 128, r: 1, s: 2, sw: 2 };

impl Conv {
    /// The output's height and width.
    fn out(&self) -> (u32, u32) {
        (self.h - self.r + 1, (self.w - self.s) / self.sw + 1)
    }

    /// `n` fresh random bf16 images behind an im2col descriptor whose pixel box walks the output pixels: the
    /// corners the example's host code computes and a traversal stride of `sw` along W.
    fn image(&self, rng: &mut Rng, n: u32) -> V {
        let (oh, ow) = self.out();
        V::Im2col {
            elem: BF16,
            data: rng.vec((n * self.h * self.w * self.ci) as usize),
            shape: vec![n, self.h, self.w, self.ci],
            lower: vec![0, 0],
            upper: vec![oh as i32 - self.h as i32, ((ow - 1) * self.sw) as i32 + 1 - self.w as i32],
            strides: vec![1, 1, self.sw, 1],
        }
    }
}

/// Example 02's `conv2d_fprop_kernel` (`python/examples/gluon`, from `TESSEL_GLUON_EXAMPLES`) at one CTA, at
/// `bench/gluon_example_cases.py`'s problem: a 1x1x8x96 bf16 image, 128 filters of 1x2, stride (1, 2), so the
/// load partition's im2col copies step along W by a traversal stride of 2 (an implicit GEMM of 4 x 128 x 192 in
/// 128x128x64 blocks, three ring buffers, two accumulators in tensor memory). The simulator's im2col loads and
/// tcgen05 MMAs against the interpreter, every element.
#[test]
fn conv_fprop_example_agrees_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_EXAMPLES", "02-conv-fprop.py") else { return };
    let Conv { h, w, ci, co, r, s, sw } = CONV;
    let (oh, ow) = CONV.out();
    let block = [128u32, 64];
    let im2col = ArgSpec::TensorDescIm2col { elem: BF16, block_shape: block.to_vec(), rank: 4, padding_nan: false };
    let mut args = vec![im2col, desc(BF16, &block), ArgSpec::Pointer(BF16, true)];
    args.extend(std::iter::repeat_n(ArgSpec::Int(I32, false), 16));
    args.extend([128, 128, 64, 4, 3, 2, 4].map(c));
    let mut rng = Rng::new(150);
    let mut vals = vec![
        CONV.image(&mut rng, 1),
        V::Desc(BF16, Some(rng.vec((co * r * s * ci) as usize)), vec![co, r * s * ci]),
        V::Out(BF16, (oh * ow * co) as usize),
    ];
    let ints = [1, h, w, ci, co, r, s, oh, ow, oh * ow * co, ow * co, co, 1, sw, 0, 0];
    vals.extend(ints.map(|x| V::Int(x as i64)));
    let outs = run_on(&src, "conv2d_fprop_kernel", args, &opts(&file, 4), &vals, [1, 1, 1]);
    check("example 02 conv2d_fprop_kernel, 1 CTA", outs);
}

/// Example 02's `conv2d_wgrad_kernel` at one CTA, at `bench/gluon_example_cases.py`'s problem (16 images of 1x8x96
/// bf16, 128 filters of 1x2, stride (1, 2); grad_W = grad_outᵀ im2col(x), 128 x 192 over K = 64 pixels): the
/// im2col boxes are 256 channels wide over 96 (the rest reads zeros), in boxes of 64, two programs.
#[test]
fn conv_wgrad_example_agrees_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_EXAMPLES", "02-conv-wgrad.py") else { return };
    let (n, Conv { ci, co, r, s, sw, .. }) = (16u32, CONV);
    let (oh, ow) = CONV.out();
    let k_gemm = r * s * ci;
    let im2col = ArgSpec::TensorDescIm2col { elem: BF16, block_shape: vec![64, 256], rank: 4, padding_nan: false };
    let mut args = vec![im2col, desc(BF16, &[64, 128]), ArgSpec::Pointer(F32, true)];
    args.extend(std::iter::repeat_n(ArgSpec::Int(I32, false), 13));
    args.extend([128, 256, 64, 1, 2, 2, 4].map(c));
    let mut rng = Rng::new(160);
    let mut vals = vec![
        CONV.image(&mut rng, n),
        V::Desc(BF16, Some(rng.vec((n * oh * ow * co) as usize)), vec![n * oh * ow, co]),
        V::Out(F32, (co * k_gemm) as usize),
    ];
    vals.extend([n, ci, co, r, s, oh, ow, 1, sw, 0, 0, k_gemm, k_gemm].map(|x| V::Int(x as i64)));
    let outs = run_on(&src, "conv2d_wgrad_kernel", args, &opts(&file, 4), &vals, [2, 1, 1]);
    check("example 02 conv2d_wgrad_kernel, 1 CTA", outs);
}

/// Example 02's `conv2d_dgrad_kernel` at one CTA, both launches of its stride phases along W (`sub_b` 0 and 1:
/// each writes the input gradient's columns of its phase, the others stay poisoned on both sides) at
/// `bench/gluon_example_cases.py`'s problem: grad_y of 16 images of 1x4x128 bf16 through im2col boxes of 128
/// pixels by 64 channels, the rotated weights as a 96 x 256 matrix in 256-row blocks (rows past 96 read zeros).
#[test]
fn conv_dgrad_example_agrees_with_the_interpreter_on_the_simulator() {
    let Some((file, src)) = sim_common::tutorial("TESSEL_GLUON_EXAMPLES", "02-conv-dgrad.py") else { return };
    let (n, Conv { w, ci, co, sw, .. }, (_, ow)) = (16u32, CONV, CONV.out());
    for (sub_b, s0) in [(0u32, 1u32), (1, 0)] {
        let im2col = ArgSpec::TensorDescIm2col { elem: BF16, block_shape: vec![128, 64], rank: 4, padding_nan: false };
        let mut args = vec![im2col, desc(BF16, &[256, 64]), ArgSpec::Pointer(BF16, true)];
        args.extend(std::iter::repeat_n(ArgSpec::Int(I32, false), 21));
        args.push(cb(false));
        args.extend([128, 256, 64, 4, 1, 2, 2, 4].map(c));
        let mut rng = Rng::new(170 + sub_b as u64);
        let dy = V::Im2col {
            elem: BF16,
            data: rng.vec((n * ow * co) as usize),
            shape: vec![n, 1, ow, co],
            lower: vec![0, 0],
            upper: vec![0, 0],
            strides: vec![1; 4],
        };
        let w_rot = V::Desc(BF16, Some(rng.vec((ci * 2 * co) as usize)), vec![ci, 2 * co]);
        let mut vals = vec![dy, w_rot, V::Out(BF16, (n * w * ci) as usize)];
        let ints = [n, co, ci, 2, 1, w / sw, 1, w, w * ci, w * ci, ci, 1, sw, 0, sub_b, 0, s0, 1, 1, 0, 0];
        vals.extend(ints.map(|x| V::Int(x as i64)));
        let what = format!("example 02 conv2d_dgrad_kernel (sub_b {sub_b}), 1 CTA");
        let outs = run_on(&src, "conv2d_dgrad_kernel", args, &opts(&file, 4), &vals, [1, 1, 1]);
        let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        // Column j of every row is this launch's when j ≡ sub_b (mod 2).
        let mine = |i: usize| (i / ci as usize) % w as usize % sw as usize == sub_b as usize;
        assert!((0..interp.len()).all(|i| interp[i].is_finite() == mine(i)), "{what}: written where the phase is");
        let bad = (0..sim.len()).filter(|&i| !(sim[i] == interp[i] || sim[i].is_nan() && interp[i].is_nan())).count();
        assert_eq!(bad, 0, "{what}: {bad} of {} elements differ from the interpreter's", sim.len());
    }
}
