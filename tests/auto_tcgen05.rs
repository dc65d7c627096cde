//! Auto-mode dots on Blackwell (`tile::layout::tcgen05`): tutorial 03's `matmul_kernel` (`examples/matmul.py`,
//! the tutorial's kernel; `TESSEL_TUTORIALS=DIR` runs `DIR/03-matrix-multiplication.py` itself instead) compiled
//! for sm_100a runs `tcgen05.mma` into a tensor-memory accumulator. Each configuration is assembled by ptxas when
//! there is one, run on the PTX simulator against the interpreter (ragged M, N and K: masked partial tiles on
//! every edge; outputs poisoned, fresh random inputs), and the interpreter against a float64 product. The layout
//! IR itself runs in the interpreter too, which enforces the tensor-memory rules (no read of an accumulator an
//! MMA may still write, no overwrite of an operand it may still read). Dots no tcgen05 instruction takes stay
//! on `mma.sync`, and the PTX says why.

mod common;
mod sim_common;

use std::path::{Path, PathBuf};

use common::{assemble, c, int, ptr};
use sim_common::{RunOptions, V, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{self, BF16, F16};
use tessel::tile::{KernelConfig, Target};

/// The file holding tutorial 03's `matmul_kernel`, and the name diagnostics give it.
fn matmul_file() -> (PathBuf, &'static str) {
    match std::env::var_os("TESSEL_TUTORIALS") {
        Some(dir) => (Path::new(&dir).join("03-matrix-multiplication.py"), "03-matrix-multiplication.py"),
        None => (Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/matmul.py"), "matmul.py"),
    }
}

fn random(n: usize, seed: u64, t: ScalarType) -> Vec<f64> {
    tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(seed), n, t)
}

/// The specialization Triton's launcher gives `matmul_kernel` on contiguous tensors: every integer a multiple of
/// 16 when it is one (`div16`), unit strides constant.
fn spec(t: ScalarType, (bm, bn, bk): (u32, u32, u32), div16: [bool; 6]) -> Vec<ArgSpec> {
    let [m, n, k, am, bk_, cm] = div16;
    let mut s = vec![ptr(t), ptr(t), ptr(F16), int(m), int(n), int(k)];
    s.extend([int(am), c(1), int(bk_), c(1), int(cm), c(1)]);
    s.extend([c(bm as i64), c(bn as i64), c(bk as i64), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    s
}

fn ptx(t: ScalarType, tile: (u32, u32, u32), warps: u32, stages: u32) -> String {
    let (path, file) = matmul_file();
    let source = std::fs::read_to_string(path).unwrap();
    let spec = Specialization::with_config(
        spec(t, tile, [true; 6]),
        KernelConfig { num_warps: warps, num_stages: stages, ..KernelConfig::DEFAULT },
    );
    let ks = tessel::KernelSource { file, source: &source, kernel: "matmul_kernel", spec: &spec, module: None };
    match tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => kernel.ptx,
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => panic!("{tile:?} on {warps} warps: {e}"),
    }
}

fn count(ptx: &str, what: &str) -> usize {
    ptx.lines().filter(|l| !l.trim_start().starts_with("//") && l.contains(what)).count()
}

/// `m x n x k` with `tile` on `warps` warps: the simulator against the interpreter, and the interpreter against
/// the float64 product; returns both relative errors (root mean square over the output).
fn run_case(t: ScalarType, (m, n, k): (usize, usize, usize), tile: (u32, u32, u32), warps: u32) -> (f64, f64) {
    let (path, file) = matmul_file();
    let source = std::fs::read_to_string(path).unwrap();
    let seed = (m * 31 + n * 7 + k + tile.0 as usize + warps as usize) as u64;
    let (a, b) = (random(m * k, seed, t), random(k * n, seed + 1, t));
    let vals: Vec<V> = [V::Buf(t, a.clone()), V::Buf(t, b.clone()), V::Out(F16, m * n)]
        .into_iter()
        .chain([m, n, k, k, n, n].map(|x| V::Int(x as i64)))
        .collect();
    let div16 = [m, n, k, k, n, n].map(|x| x % 16 == 0);
    let opts = RunOptions { file, target: Target::Sm100a, num_warps: warps, num_stages: 3, poison: true };
    let grid = [(m.div_ceil(tile.0 as usize) * n.div_ceil(tile.1 as usize)) as u32, 1, 1];
    let outs = run_on(&source, "matmul_kernel", spec(t, tile, div16), &opts, &vals, grid).unwrap();
    let (got, interp) = &outs[0];
    let reference: Vec<f64> =
        (0..m * n).map(|i| (0..k).map(|j| a[i / n * k + j] * b[j * n + i % n]).sum::<f64>()).collect();
    let rel = |x: &[f64], y: &[f64]| {
        let mut num = 0.0;
        let mut den = 0.0;
        for (i, (&p, &q)) in x.iter().zip(y).enumerate() {
            assert!(p.is_finite() && q.is_finite(), "{tile:?}: element {i}: {p} against {q}");
            num += (p - q) * (p - q);
            den += q * q;
        }
        (num / den).sqrt()
    };
    (rel(got, interp), rel(interp, &reference))
}

/// Tutorial 03's Blackwell tiles (128x128x64 and 128x256x64 on 4 and 8 warps), a 64-row tile (tcgen05's M 64
/// data path), two 128-row instruction tiles (M 256) and bf16, on shapes with partial tiles on every edge.
#[test]
fn matmul_on_tcgen05_matches_the_interpreter_and_float64() {
    let cases = [
        (F16, (130, 140, 72), (128, 128, 64), 4),
        (F16, (150, 200, 136), (128, 128, 64), 8),
        (F16, (130, 260, 72), (128, 256, 64), 8),
        (F16, (100, 70, 48), (64, 64, 32), 4),
        (F16, (260, 100, 40), (256, 128, 32), 8),
        (BF16, (130, 100, 72), (128, 64, 32), 4),
    ];
    for (t, shape, tile, warps) in cases {
        let (sim, f64_err) = run_case(t, shape, tile, warps);
        assert!(sim < 1e-3, "{t} {shape:?} tile {tile:?} on {warps} warps: simulator against interpreter {sim}");
        let tol = if t == BF16 { 8e-3 } else { 1e-3 };
        assert!(f64_err < tol, "{t} {shape:?} tile {tile:?} on {warps} warps: interpreter against float64 {f64_err}");
    }
}

/// With the specialization Triton's launcher gives real shapes (K and the leading dims multiples of 16), the
/// pipeliner copies A and B through cp.async rings two or three iterations ahead of the MMA: ragged M and N, K
/// with a partial last block and a K of one block (fewer iterations than stages), on the simulator against the
/// interpreter and the interpreter against float64.
#[test]
fn pipelined_matmul_on_tcgen05_matches_the_interpreter_and_float64() {
    for (shape, tile, warps) in
        [((130, 144, 208), (128, 128, 64), 4), ((150, 272, 176), (128, 256, 64), 8), ((100, 96, 32), (64, 64, 32), 4)]
    {
        let (sim, f64_err) = run_case(F16, shape, tile, warps);
        assert!(sim < 1e-3, "{shape:?} tile {tile:?} on {warps} warps: simulator against interpreter {sim}");
        assert!(f64_err < 1e-3, "{shape:?} tile {tile:?} on {warps} warps: interpreter against float64 {f64_err}");
    }
}

/// The tutorial's Blackwell configurations compile to `tcgen05.mma` (K 64 is four K steps of 16 per tile),
/// committed to an mbarrier and waited for once per K step, the accumulator stored into tensor memory once
/// before the loop and loaded once after it; ptxas accepts the PTX.
#[test]
fn tutorial_configs_compile_to_tcgen05() {
    for ((bm, bn, bk), warps, stages) in
        [((128, 128, 64), 4, 3), ((128, 128, 64), 8, 4), ((128, 256, 64), 4, 3), ((128, 256, 64), 8, 4)]
    {
        let p = ptx(F16, (bm, bn, bk), warps, stages);
        let name = format!("mm{bm}x{bn}x{bk}w{warps}s{stages}");
        assert_eq!(count(&p, "tcgen05.mma.cta_group::1.kind::f16"), (bk / 16) as usize, "{name}");
        assert_eq!(count(&p, "tcgen05.commit"), 1, "{name}");
        assert_eq!(count(&p, "mbarrier.try_wait"), 1, "{name}");
        // Each thread moves its row's share of the columns (the second warpgroup takes the other half), at
        // most 128 columns per instruction.
        let moves = (bn / (warps / 4)).div_ceil(128) as usize;
        assert_eq!(count(&p, "tcgen05.st."), moves, "{name}");
        assert_eq!(count(&p, "tcgen05.ld."), moves, "{name}");
        assert_eq!(count(&p, "mma.sync"), 0, "{name}");
        assemble(&name, &p, "sm_100a");
    }
}

/// A dot no tcgen05 instruction takes (32-row tiles; f32 operands) stays on `mma.sync`, and the PTX says why.
#[test]
fn dots_tcgen05_cannot_run_stay_on_mma_sync_and_say_why() {
    let p = ptx(F16, (32, 64, 32), 4, 3);
    assert!(count(&p, "mma.sync") > 0 && count(&p, "tcgen05.mma") == 0);
    assert!(p.contains("// mma.sync, not tcgen05: block M 32"), "{p}");
    assemble("mm32x64x32", &p, "sm_100a");
}

/// The layout IR and the scheduled IR of each configuration run in the interpreter with the same bits as the
/// tile IR: the interpreter refuses a tensor-memory read before the MMA's barrier wait, an operand overwritten
/// while an MMA may read it and a ring slot read before its copy landed, so a missing or misplaced wait fails
/// here. With K, the leading dims and the strides multiples of 16, the pipeliner copies the operands through
/// cp.async rings (`pipelined` says whether it should have).
#[test]
fn layout_and_scheduled_ir_on_tcgen05_keep_the_interpreter_s_bits() {
    let (path, file) = matmul_file();
    let source = std::fs::read_to_string(path).unwrap();
    let cases = [
        ((130, 140, 200), (128, 128, 64), 4, 3, false),
        ((70, 60, 40), (64, 64, 16), 4, 3, false),
        ((130, 144, 208), (128, 128, 64), 4, 3, true),
        ((100, 96, 160), (128, 64, 32), 8, 4, true),
        ((64, 64, 32), (64, 64, 32), 4, 3, true),
    ];
    for ((m, n, k), tile, warps, stages, pipelined) in cases {
        let spec = Specialization::with_config(
            spec(F16, tile, [m, n, k, k, n, n].map(|x| x % 16 == 0)),
            KernelConfig { num_warps: warps, num_stages: stages, ..KernelConfig::DEFAULT },
        );
        let ks = tessel::KernelSource { file, source: &source, kernel: "matmul_kernel", spec: &spec, module: None };
        let run = |stage| match tessel::pipeline::run(&ks, Target::Sm100a, stage, None, &mut Default::default()) {
            Ok(Output::Layout(f)) | Ok(Output::Tile(f)) | Ok(Output::Sched { func: f, .. }) => f,
            Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
            Err(e) => panic!("{e}"),
        };
        let (tile_ir, layout_ir, sched_ir) = (run(Stage::Tile), run(Stage::Layout), run(Stage::Sched));
        let has = |f: &tessel::tile::Func, name| f.all_ops().iter().any(|&o| f.op(o).op.name() == name);
        assert!(has(&layout_ir, "tcgen05_mma") && has(&sched_ir, "tcgen05_mma"), "{tile:?}");
        assert_eq!(has(&sched_ir, "async_copy"), pipelined, "{tile:?} {m}x{n}x{k}: pipelined");
        let (a, b) = (random(m * k, 11, F16), random(k * n, 12, F16));
        let outs = |f: &tessel::tile::Func| {
            let mut mem = tessel::interp::memory::Memory::new();
            let out = mem.alloc_from("c", F16, &vec![f64::NAN; m * n]);
            let mut args = vec![
                tessel::interp::Arg::Buffer(mem.alloc_from("a", F16, &a)),
                tessel::interp::Arg::Buffer(mem.alloc_from("b", F16, &b)),
                tessel::interp::Arg::Buffer(out),
            ];
            args.extend([m, n, k, k, n, n].map(|x| tessel::interp::Arg::Int(x as i64)));
            let grid = [(m.div_ceil(tile.0 as usize) * n.div_ceil(tile.1 as usize)) as u32, 1, 1];
            tessel::interp::run(f, &args, grid, &mut mem).unwrap_or_else(|e| panic!("{}: {e}", f.name));
            mem.buffer(out).bytes.clone()
        };
        let want = outs(&tile_ir);
        assert_eq!(outs(&layout_ir), want, "{tile:?}: layout IR against tile IR");
        assert_eq!(outs(&sched_ir), want, "{tile:?}: scheduled IR against tile IR");
    }
}

/// Tutorial 06's forward attention (`examples/flash_attention.py`, `_attn_fwd`) on sm_100a: both dots on
/// tcgen05 (QK^T into a buffer read back every iteration for the softmax, P staged from registers, P V into the
/// accumulator the loop carries), on the simulator against the interpreter (one head of 192 x 64, 128 x 64
/// tiles, causal and not).
#[test]
fn flash_attention_on_tcgen05_matches_the_interpreter() {
    use tessel::tile::ScalarType::F32;
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/flash_attention.py"));
    let source = source.unwrap();
    let (h, n_ctx, d, (bm, bn), warps) = (1usize, 192usize, 64usize, (128usize, 64usize), 8u32);
    for causal in [false, true] {
        let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), ArgSpec::Float(F32), ptr(F32), ptr(F16)];
        spec.extend((0..16 + 3).map(|_| int(false)));
        spec.extend([c(d as i64), c(bm as i64), c(bn as i64), ArgSpec::Constexpr(ConstValue::Bool(causal))]);
        let len = h * n_ctx * d;
        let mut vals = vec![
            V::Buf(F16, random(len, 21, F16)),
            V::Buf(F16, random(len, 22, F16)),
            V::Buf(F16, random(len, 23, F16)),
            V::F32(0.125),
            V::Out(F32, h * n_ctx),
            V::Out(F16, len),
        ];
        for _ in 0..4 {
            vals.extend([h * n_ctx * d, n_ctx * d, d, 1].map(|s| V::Int(s as i64)));
        }
        vals.extend([1, h, n_ctx].map(|x| V::Int(x as i64)));
        let grid = [n_ctx.div_ceil(bm) as u32, h as u32, 1];
        let opts = RunOptions {
            file: "flash_attention.py",
            target: Target::Sm100a,
            num_warps: warps,
            num_stages: 3,
            poison: true,
        };
        let config = KernelConfig { num_warps: warps, num_stages: 3, ..KernelConfig::DEFAULT };
        let sp = Specialization::with_config(spec.clone(), config);
        let ks = tessel::KernelSource {
            file: "flash_attention.py",
            source: &source,
            kernel: "_attn_fwd",
            spec: &sp,
            module: None,
        };
        let Ok(Output::Layout(f)) =
            tessel::pipeline::run(&ks, Target::Sm100a, Stage::Layout, None, &mut Default::default())
        else {
            panic!("attention does not compile for sm_100a");
        };
        let mmas = f.all_ops().iter().filter(|&&o| f.op(o).op.name() == "tcgen05_mma").count();
        assert_eq!(mmas, if causal { 4 } else { 2 }, "both dots of each loop on tcgen05 (causal = {causal})");
        let outs = run_on(&source, "_attn_fwd", spec, &opts, &vals, grid).unwrap();
        for (i, (got, want)) in outs.iter().enumerate() {
            let (mut num, mut den) = (0.0, 0.0);
            for (&g, &w) in got.iter().zip(want) {
                assert!(g.is_finite() && w.is_finite(), "attention output {i}: {g} against {w}");
                num += (g - w) * (g - w);
                den += w * w;
            }
            let err = (num / den).sqrt();
            assert!(err < 1e-3, "attention (causal = {causal}) output {i}: simulator against interpreter {err}");
        }
    }
}
