//! The public Triton tutorials' auto-mode kernels at their Blackwell configurations, on the PTX simulator against
//! the interpreter (`bench/tutorials.sh --arch sm_100a` checks ptxas, the instruction and the interpreter against
//! float64 for every configuration; this is the simulator's part, at small ragged shapes). The tutorials are not
//! part of this repository: set `TESSEL_TUTORIALS` to the directory holding them (python/tutorials of
//! triton-lang/triton); without it each test says so and passes. Kernels whose tensor maps are made on the
//! device (09's `matmul_kernel_descriptor_persistent`) are not simulated: the simulator encodes host
//! descriptors only. Persistent kernels run on fewer programs than tiles (`NUM_SMS` 2), so one program walks
//! several tiles, where the tutorial's 148 programs would each take one at these sizes.

#[path = "sim_common/mod.rs"]
mod sim_common;

use sim_common::{RunOptions, SimAndInterp, V, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, *};
use tessel::tile::Target;

fn tutorial(name: &str) -> Option<(String, String)> {
    sim_common::tutorial("TESSEL_TUTORIALS", name)
}

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

fn int(div16: bool) -> ArgSpec {
    ArgSpec::Int(I32, div16)
}

fn desc(elem: ScalarType, block: &[u32]) -> ArgSpec {
    ArgSpec::TensorDesc { elem, block_shape: block.to_vec(), padding_nan: false, layout: None }
}

fn random(n: usize, seed: u64) -> Vec<f64> {
    tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(seed), n, F16)
}

/// Asserts the simulator and the interpreter wrote every element, the same values (`tol` 0) or within a
/// relative error `tol` (root mean square over the output: attention's reductions and `ex2` run in another
/// order on the two sides, as in `tests/auto_tcgen05.rs`).
fn check(what: &str, tol: f64, outs: Result<Vec<SimAndInterp>, String>) {
    let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
    for (i, (sim, interp)) in outs.iter().enumerate() {
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: output {i} has unwritten elements");
        assert!(sim.iter().all(|x| x.is_finite()), "{what}: output {i}: the simulated PTX left elements unwritten");
        if tol == 0.0 {
            let bad = (0..sim.len()).filter(|&j| sim[j] != interp[j]).count();
            let first = (0..sim.len()).find(|&j| sim[j] != interp[j]);
            assert!(first.is_none(), "{what}: output {i}: {bad} of {} elements differ, first at {first:?}", sim.len());
        } else {
            let num: f64 = sim.iter().zip(interp).map(|(p, q)| (p - q) * (p - q)).sum();
            let den: f64 = interp.iter().map(|q| q * q).sum();
            let err = (num / den).sqrt();
            assert!(err < tol, "{what}: output {i}: simulated PTX against the interpreter {err}");
        }
    }
}

const M: usize = 200;
const N: usize = 144;
const K: usize = 136;

/// 09's host-descriptor kernels, fp16, 128x128x64 on 4 warps at 3 stages, WARP_SPECIALIZE off and on (on:
/// a producer warp and the default partition, `sched/src/ws_mma.rs`; `tests/auto_tcgen05_ws.rs` checks the
/// split's PTX); the persistent one with and without EPILOGUE_SUBTILE, and with it at 128x256 on 8 warps, where
/// the accumulator's `32x32b_splitn` layout keeps each half of the split in every thread's registers.
#[test]
fn tutorial_09_tma_kernels_on_the_simulator() {
    let Some((file, src)) = tutorial("09-persistent-matmul.py") else { return };
    let (bm, bk) = (128u32, 64u32);
    let (a, b) = (random(M * K, 1), random(N * K, 2));
    for (kernel, subtile, ws, bn, warps) in [
        ("matmul_kernel_tma", None, false, 128u32, 4u32),
        ("matmul_kernel_tma", None, true, 128, 4),
        ("matmul_kernel_tma_persistent", Some(false), false, 128, 4),
        ("matmul_kernel_tma_persistent", Some(true), false, 128, 4),
        ("matmul_kernel_tma_persistent", Some(false), true, 128, 4),
        ("matmul_kernel_tma_persistent", Some(true), true, 128, 4),
        ("matmul_kernel_tma_persistent", Some(true), false, 256, 8),
        ("matmul_kernel_tma_persistent", Some(true), true, 256, 8),
    ] {
        let tiles = (M.div_ceil(bm as usize) * N.div_ceil(bn as usize)) as u32;
        let cn = if subtile == Some(true) { bn / 2 } else { bn };
        let mut spec = vec![desc(F16, &[bm, bk]), desc(F16, &[bn, bk]), desc(F16, &[bm, cn])];
        spec.extend([int(false), int(true), int(false)]);
        spec.extend([c(bm as i64), c(bn as i64), c(bk as i64), c(8), cb(false)]);
        let grid = match subtile {
            Some(st) => {
                spec.extend([cb(st), c(2)]);
                2
            }
            None => tiles,
        };
        spec.push(cb(ws));
        let vals = [
            V::Desc(F16, Some(a.clone()), vec![M as u32, K as u32]),
            V::Desc(F16, Some(b.clone()), vec![N as u32, K as u32]),
            V::Desc(F16, None, vec![M as u32, N as u32]),
            V::Int(M as i64),
            V::Int(N as i64),
            V::Int(K as i64),
        ];
        let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: warps, num_stages: 3, poison: true };
        let what = format!("{kernel} 128x{bn} on {warps} warps, subtile {subtile:?} WARP_SPECIALIZE {ws}");
        check(&what, 0.0, run_on(&src, kernel, spec, &opts, &vals, [grid, 1, 1]));
    }
}

/// 09's pointer kernels, fp16 with B transposed (the tutorial's `b.T`), 128x128x64 on 4 warps at 3 stages.
#[test]
fn tutorial_09_pointer_kernels_on_the_simulator() {
    let Some((file, src)) = tutorial("09-persistent-matmul.py") else { return };
    let (bm, bn, bk) = (128u32, 128u32, 64u32);
    let tiles = (M.div_ceil(bm as usize) * N.div_ceil(bn as usize)) as u32;
    let (a, b) = (random(M * K, 3), random(N * K, 4));
    for (kernel, persistent) in [("matmul_kernel", false), ("matmul_kernel_persistent", true)] {
        let mut spec = vec![ArgSpec::Pointer(F16, true), ArgSpec::Pointer(F16, true), ArgSpec::Pointer(F16, true)];
        // M, N, K, stride_am, stride_ak = 1, stride_bk = 1, stride_bn, stride_cm, stride_cn = 1
        spec.extend([int(false), int(true), int(false), int(false), c(1), c(1), int(false), int(true), c(1)]);
        spec.extend([c(bm as i64), c(bn as i64), c(bk as i64), c(8)]);
        if persistent {
            spec.push(c(2));
        }
        let vals = [
            V::Buf(F16, a.clone()),
            V::Buf(F16, b.clone()),
            V::Out(F16, M * N),
            V::Int(M as i64),
            V::Int(N as i64),
            V::Int(K as i64),
            V::Int(K as i64),
            V::Int(K as i64),
            V::Int(N as i64),
        ];
        let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 3, poison: true };
        let grid = if persistent { 2 } else { tiles };
        check(kernel, 0.0, run_on(&src, kernel, spec, &opts, &vals, [grid, 1, 1]));
    }
}

/// 06's forward attention at a Blackwell configuration (host descriptors, IS_HOPPER false, warp_specialize
/// off; D 64, 128x64 tiles on 4 warps at 3 stages), causal and not.
#[test]
fn tutorial_06_forward_on_the_simulator() {
    let Some((file, src)) = tutorial("06-fused-attention.py") else { return };
    let (h, n_ctx, d, bm, bn) = (2usize, 256usize, 64u32, 128u32, 64u32);
    let y = h * n_ctx;
    for stage in [1, 3] {
        // Z = 1 is a constant in Triton's specialization, as any integer argument equal to 1.
        let mut spec = vec![ArgSpec::Float(F32), ArgSpec::Pointer(F32, true), c(1), int(false)];
        spec.extend([desc(F16, &[bm, d]), desc(F16, &[bn, d]), desc(F16, &[bn, d]), desc(F16, &[bm, d])]);
        spec.push(int(true));
        spec.extend([c(d as i64), c(bm as i64), c(bn as i64), cb(false), c(stage), cb(false), cb(false)]);
        let shape = vec![y as u32, d];
        let vals = [
            V::F32(0.5),
            V::Out(F32, y),
            V::Int(h as i64),
            V::Desc(F16, Some(random(y * d as usize, 5)), shape.clone()),
            V::Desc(F16, Some(random(y * d as usize, 6)), shape.clone()),
            V::Desc(F16, Some(random(y * d as usize, 7)), shape.clone()),
            V::Desc(F16, None, shape),
            V::Int(n_ctx as i64),
        ];
        let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 3, poison: true };
        let grid = [(n_ctx as u32).div_ceil(bm), h as u32, 1];
        check(&format!("_attn_fwd STAGE {stage}"), 1e-3, run_on(&src, "_attn_fwd", spec, &opts, &vals, grid));
    }
}

/// 10's `block_scaled_matmul_kernel` at its Blackwell configurations (128x256 tiles on 4 warps, BLOCK_K 128 for
/// mxfp8 and mixed, 256 for the fp4 formats, 4 stages): on the block-scaled tcgen05.mma, a K loop of two steps
/// over two tiles (M 256: the scales' 5-D blocks hold whole 128-row groups). The output is fp16, bit for bit.
/// Then each format with its K loop asked to warp-specialize (`warp_specialize=True` added to the tutorial's
/// `tl.range`): a producer warp loads, the MMA stays in flight, and the scales are copied into a tensor-memory
/// buffer per ring slot; five K steps wrap the ring. The simulator refuses a scale copy over scales an MMA in
/// flight may still read (`check_copy_order`).
#[test]
fn tutorial_10_block_scaled_on_the_simulator() {
    let Some((file, src)) = tutorial("10-block-scaled-matmul.py") else { return };
    // Auto mode's scale buffers (doubled, or one per ring slot) keep every copy off scales an MMA in flight may
    // read, which the ISA does not order: the simulator checks that here.
    sim_common::ptx_sim::check_copy_order(true);
    let asked = "num_stages=NUM_STAGES, warp_specialize=True)";
    let split = src.replace("num_stages=NUM_STAGES)", asked);
    assert!(split.contains(asked), "tutorial 10's K loop");
    let (m, n) = (256usize, 256usize);
    let (bm, bn) = (128u32, 256u32);
    let mut rng = tessel_math::testing::Rng::new(10);
    let kinds = ["mxfp8", "mxfp4", "nvfp4", "mixed"];
    for (kind, ws) in kinds.iter().map(|&k| (k, false)).chain(kinds.iter().map(|&k| (k, true))) {
        // Values per byte of A and B (2: e2m1 pairs).
        let (pa, pb) = match kind {
            "mxfp8" => (1usize, 1usize),
            "mixed" => (1, 2),
            _ => (2, 2),
        };
        let bk: u32 = if kind.contains("fp4") { 256 } else { 128 };
        let vec: u32 = if kind == "nvfp4" { 16 } else { 32 };
        let k = if ws { 5 } else { 2 } * bk as usize;
        let elem = |per_byte: usize| if per_byte == 2 { U8 } else { F8E4M3 };
        let scale_elem = if kind == "nvfp4" { F8E4M3 } else { U8 };
        let mut operand = |rows: usize, per_byte: usize| -> Vec<f64> {
            let count = rows * k / per_byte;
            if per_byte == 2 {
                (0..count).map(|_| rng.below(256) as f64).collect()
            } else {
                tessel::tile::testing::vec_of(&mut rng, count, F8E4M3)
            }
        };
        let (a, b) = (operand(m, pa), operand(n, pb));
        let rep_k = bk / vec / 4;
        let mut scales = |rows: usize| -> (Vec<f64>, Vec<u32>) {
            let shape = vec![1, (rows / 128) as u32, k as u32 / vec / 4, 2, 256];
            let count = shape.iter().product::<u32>() as usize;
            let data = if kind == "nvfp4" {
                let v = tessel::tile::testing::vec_of(&mut rng, count, F32);
                v.into_iter().map(|x| tessel::tile::eval::value::round_float(0.25 + 2.0 * x, F8E4M3)).collect()
            } else {
                // 2^-3 .. 2^0: the fp16 output stays finite.
                (0..count).map(|_| (124 + rng.below(4)) as f64).collect()
            };
            (data, shape)
        };
        let ((sa, sa_shape), (sb, sb_shape)) = (scales(m), scales(n));
        let mut spec = vec![
            desc(elem(pa), &[bm, bk / pa as u32]),
            desc(scale_elem, &[1, 1, rep_k, 2, 256]),
            desc(elem(pb), &[bn, bk / pb as u32]),
            desc(scale_elem, &[1, 2, rep_k, 2, 256]),
            desc(F16, &[bm, bn]),
        ];
        spec.extend([c(m as i64), c(n as i64), c(k as i64), c(1), c(pa as i64), c(pb as i64)]);
        spec.extend([c(vec as i64), c(bm as i64), c(bn as i64), c(bk as i64), c(1), c(2), c(rep_k as i64), c(4)]);
        let vals = [
            V::Desc(elem(pa), Some(a), vec![m as u32, (k / pa) as u32]),
            V::Desc(scale_elem, Some(sa), sa_shape),
            V::Desc(elem(pb), Some(b), vec![n as u32, (k / pb) as u32]),
            V::Desc(scale_elem, Some(sb), sb_shape),
            V::Desc(F16, None, vec![m as u32, n as u32]),
        ];
        let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 3, poison: true };
        let grid = [(m as u32 / bm) * (n as u32 / bn), 1, 1];
        let what = format!("{kind} warp_specialize {ws}");
        let src = if ws { &split } else { &src };
        check(&what, 0.0, run_on(src, "block_scaled_matmul_kernel", spec, &opts, &vals, grid));
    }
}
