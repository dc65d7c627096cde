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
use sim_common::{RunOptions, V, run_on, simulate_broken};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{self, BF16, F8E4M3, F8E5M2, F16, F32, I32};
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
/// 16 when it is one (`div16`: M, N, K and the three non-unit strides), unit strides constant. `b_t`: B is the
/// transpose of a contiguous `[N, K]` tensor (the tutorial's fp8 inputs, `b.T`): `stride_bk` is the unit one.
fn spec(t: ScalarType, (bm, bn, bk): (u32, u32, u32), div16: [bool; 6], b_t: bool) -> Vec<ArgSpec> {
    let [m, n, k, am, bs, cm] = div16;
    let mut s = vec![ptr(t), ptr(t), ptr(F16), int(m), int(n), int(k)];
    let (stride_bk, stride_bn) = if b_t { (c(1), int(bs)) } else { (int(bs), c(1)) };
    s.extend([int(am), c(1), stride_bk, stride_bn, int(cm), c(1)]);
    s.extend([c(bm as i64), c(bn as i64), c(bk as i64), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    s
}

fn ptx(t: ScalarType, tile: (u32, u32, u32), warps: u32, stages: u32) -> String {
    ptx_of(t, tile, warps, stages, false)
}

/// [`ptx`], with B the transpose of a contiguous tensor when `b_t`.
fn ptx_of(t: ScalarType, tile: (u32, u32, u32), warps: u32, stages: u32, b_t: bool) -> String {
    let (path, file) = matmul_file();
    let source = std::fs::read_to_string(path).unwrap();
    let spec = Specialization::with_config(
        spec(t, tile, [true; 6], b_t),
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
fn run_case(t: ScalarType, shape: (usize, usize, usize), tile: (u32, u32, u32), warps: u32) -> (f64, f64) {
    run_case_of(t, shape, tile, warps, false)
}

/// [`run_case`], with B stored as the transpose of a contiguous `[N, K]` tensor when `b_t`.
fn run_case_of(
    t: ScalarType,
    (m, n, k): (usize, usize, usize),
    tile: (u32, u32, u32),
    warps: u32,
    b_t: bool,
) -> (f64, f64) {
    let (path, file) = matmul_file();
    let source = std::fs::read_to_string(path).unwrap();
    let seed = (m * 31 + n * 7 + k + tile.0 as usize + warps as usize) as u64;
    let (a, b) = (random(m * k, seed, t), random(k * n, seed + 1, t));
    // B[kk][j] at `kk * n + j`, or at `j * k + kk` when stored transposed.
    let b_mem: Vec<f64> = if b_t { (0..n * k).map(|i| b[i % k * n + i / k]).collect() } else { b.clone() };
    let b_stride = if b_t { k } else { n };
    let vals: Vec<V> = [V::Buf(t, a.clone()), V::Buf(t, b_mem), V::Out(F16, m * n)]
        .into_iter()
        .chain([m, n, k, k, b_stride, n].map(|x| V::Int(x as i64)))
        .collect();
    let div16 = [m, n, k, k, b_stride, n].map(|x| x % 16 == 0);
    let opts = RunOptions { file, target: Target::Sm100a, num_warps: warps, num_stages: 3, poison: true };
    let grid = [(m.div_ceil(tile.0 as usize) * n.div_ceil(tile.1 as usize)) as u32, 1, 1];
    let outs = run_on(&source, "matmul_kernel", spec(t, tile, div16, b_t), &opts, &vals, grid).unwrap();
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
/// committed to one of a pair of mbarriers, the previous K step's MMA waited for once per K step after this
/// one issues (one MMA in flight across iterations) and the last drained after the loop, the accumulator stored
/// into tensor memory once before the loop and loaded once after it; the rings have a buffer per stage (the
/// MMA in flight reads one); ptxas accepts the PTX.
#[test]
fn tutorial_configs_compile_to_tcgen05() {
    for ((bm, bn, bk), warps, stages) in
        [((128, 128, 64), 4, 3), ((128, 128, 64), 8, 4), ((128, 256, 64), 4, 3), ((128, 256, 64), 8, 4)]
    {
        let p = ptx(F16, (bm, bn, bk), warps, stages);
        let name = format!("mm{bm}x{bn}x{bk}w{warps}s{stages}");
        assert_eq!(count(&p, "tcgen05.mma.cta_group::1.kind::f16"), (bk / 16) as usize, "{name}");
        assert_eq!(count(&p, "tcgen05.commit"), 1, "{name}");
        assert_eq!(count(&p, "mbarrier.try_wait"), 2, "{name}");
        let body = &p[p.find("\n$L_for_head").unwrap()..p.find("\n$L_for_end").unwrap()];
        let (commit, wait) = (body.find("tcgen05.commit").unwrap(), body.find("mbarrier.try_wait").unwrap());
        assert!(commit < wait && wait < body.find("cp.async.c").unwrap(), "{name}: MMA, wait for the previous, refill");
        let (a_ring, b_ring) = (bm * bk * 2 * stages, bk * bn * 2 * stages);
        assert!(
            p.contains(&format!("%a_ring {a_ring} bytes")) && p.contains(&format!("%b_ring {b_ring} bytes")),
            "{name}"
        );
        assert!(p.contains("%mma_bars 16 bytes"), "{name}");
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
            spec(F16, tile, [m, n, k, k, n, n].map(|x| x % 16 == 0), false),
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
/// tcgen05 (QK^T into a buffer read back every iteration for the softmax, P stored from registers into tensor
/// memory, where P V reads it as operand A, P V into the accumulator the loop carries), on the simulator against
/// the interpreter (one head of 192 x 64, 128 x 64 tiles, eight warps, causal and not).
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
        // P V reads P from tensor memory (P is S's 32x32b registers cast to f16); Q, K and V from shared memory.
        let a_tmem = f
            .all_ops()
            .into_iter()
            .filter(|&o| f.op(o).op.name() == "tcgen05_mma" && f.ty(f.op(o).operands[0]).is_tmem())
            .count();
        assert_eq!(a_tmem, mmas / 2, "P V's operand A in tensor memory (causal = {causal})");
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

/// Tutorial 03's fp8 inputs (e5m2, B the transpose of a contiguous tensor, as the tutorial's fp8 run passes it)
/// at its Blackwell tiles: `tcgen05.mma kind::f8f6f4`, K 64 in two steps of 32, both operands K-major (the
/// layout the kind reads; B arrives K-contiguous); ptxas accepts the PTX.
#[test]
fn tutorial_fp8_configs_compile_to_kind_f8f6f4() {
    for ((bm, bn, bk), warps, stages) in
        [((128, 128, 64), 4, 3), ((128, 128, 64), 8, 4), ((128, 256, 64), 4, 3), ((128, 256, 64), 8, 3)]
    {
        let p = ptx_of(F8E5M2, (bm, bn, bk), warps, stages, true);
        let name = format!("mm_e5m2_{bm}x{bn}x{bk}w{warps}s{stages}");
        assert_eq!(count(&p, "tcgen05.mma.cta_group::1.kind::f8f6f4"), (bk / 32) as usize, "{name}");
        assert_eq!(count(&p, "tcgen05.mma.cta_group::1.kind::f16"), 0, "{name}");
        assert_eq!(count(&p, "mma.sync"), 0, "{name}");
        // e5m2 x e5m2 into f32, both K-major: A and B format 1.
        let idesc = 0x10 | (1 << 7) | (1 << 10) | ((bn.min(256) >> 3) << 17) | ((bm.min(128) >> 4) << 24);
        assert!(p.contains(&format!("idesc {idesc:#010x}")), "{name}: idesc {idesc:#010x}");
        assert!(p.contains("(A K-major, B K-major)"), "{name}");
        assemble(&name, &p, "sm_100a");
    }
}

/// Each new kind on ragged shapes (masked partial tiles on every edge): fp8 (e5m2 with B transposed, e4m3 with
/// B as it is, staged K-major), tf32 (the tutorial's kernel on f32 inputs: `tl.dot`'s default precision is tf32)
/// on the simulator against the interpreter, and the interpreter against float64; outputs poisoned, fresh
/// inputs per shape.
#[test]
fn fp8_and_tf32_matmul_on_tcgen05_match_the_interpreter_and_float64() {
    let cases = [
        (F8E5M2, (130, 140, 72), (128, 128, 64), 4, true),
        (F8E5M2, (150, 270, 100), (128, 256, 64), 8, true),
        (F8E4M3, (100, 70, 48), (64, 64, 32), 4, false),
        (F8E4M3, (260, 100, 40), (256, 128, 32), 8, true),
        (F32, (130, 100, 72), (128, 64, 32), 4, false),
        (F32, (70, 90, 40), (64, 128, 16), 4, true),
    ];
    for (t, shape, tile, warps, b_t) in cases {
        let (sim, f64_err) = run_case_of(t, shape, tile, warps, b_t);
        let what = format!("{t} {shape:?} tile {tile:?} on {warps} warps (B transposed: {b_t})");
        assert!(sim < 1e-6, "{what}: simulator against interpreter {sim}");
        // The output is f16; tf32 drops 13 bits of each operand.
        let tol = if t == F32 { 5e-3 } else { 1e-3 };
        assert!(f64_err < tol, "{what}: interpreter against float64 {f64_err}");
    }
}

/// The new kinds with the specialization real shapes get (K and the leading dims multiples of 16): the loads
/// go through cp.async rings and, where both operands arrive K-contiguous, the MMA stays in flight across
/// iterations; ragged M and N, on the simulator against the interpreter and the interpreter against float64.
#[test]
fn pipelined_fp8_and_tf32_matmul_keep_one_mma_in_flight() {
    // B N-contiguous in memory is staged K-major (the layout these kinds read) through registers, into one
    // buffer the next iteration overwrites: that MMA is waited for at once.
    for (t, shape, tile, warps, b_t, in_flight) in [
        (F8E5M2, (130, 144, 208), (128, 128, 64), 4, true, true),
        (F8E4M3, (150, 272, 176), (128, 256, 64), 8, true, true),
        (F8E4M3, (150, 272, 176), (128, 256, 64), 8, false, false),
        (F32, (130, 144, 208), (128, 64, 32), 4, true, true),
    ] {
        let (sim, f64_err) = run_case_of(t, shape, tile, warps, b_t);
        let what = format!("{t} {shape:?} tile {tile:?} on {warps} warps (B transposed: {b_t})");
        assert!(sim < 1e-6, "{what}: simulator against interpreter {sim}");
        let tol = if t == F32 { 5e-3 } else { 1e-3 };
        assert!(f64_err < tol, "{what}: interpreter against float64 {f64_err}");
        let p = ptx_of(t, tile, warps, 3, b_t);
        let waits = if in_flight { 2 } else { 1 };
        assert_eq!(p.contains("%mma_bars"), in_flight, "{what}: one MMA in flight");
        assert_eq!(count(&p, "mbarrier.try_wait"), waits, "{what}");
    }
}

/// The compiled kernels of those kinds: the PTX names the kind, and K steps by 32 bytes.
#[test]
fn each_kind_s_ptx_names_it() {
    for (t, tile, b_t, kind, steps) in [
        (F8E4M3, (128, 128, 64), false, "f8f6f4", 2),
        (F32, (128, 64, 32), false, "tf32", 4),
        (F16, (128, 64, 32), false, "f16", 2),
    ] {
        let p = ptx_of(t, tile, 4, 3, b_t);
        assert_eq!(count(&p, &format!("tcgen05.mma.cta_group::1.kind::{kind}")), steps, "{t}");
        assemble(&format!("mm_{t}_kind"), &p, "sm_100a");
    }
}

/// An int8 matmul with an int32 accumulator (`kind::i8`): B stored `[N, K]` (K-major) or `[K, N]`.
const IMM: &str = r#"
@triton.jit
def imm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_bk, stride_bn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
"#;

/// `kind::i8` on ragged shapes: the simulator equals the interpreter, which equals the exact integer product;
/// the PTX names the kind and ptxas accepts it.
#[test]
fn int8_matmul_on_tcgen05_is_exact() {
    use tessel::tile::ScalarType::I8;
    let source = format!("import triton\nimport triton.language as tl\n{IMM}");
    // The last case's K and strides are multiples of 16 (specialized so, as Triton's launcher does): its loads
    // go through cp.async rings and its MMA stays in flight across iterations (`%mma_bars`).
    for ((m, n, k), (bm, bn, bk), warps, b_t, in_flight) in [
        ((130, 140, 72), (128, 128, 64), 4, true, false),
        ((100, 70, 96), (64, 64, 32), 4, false, false),
        ((140, 200, 40), (128, 256, 32), 8, true, false),
        ((130, 150, 192), (128, 128, 64), 4, true, true),
    ] {
        let mut rng = tessel_math::testing::Rng::new((m * 3 + n + k) as u64);
        let mut ints = |len: usize| -> Vec<f64> { (0..len).map(|_| rng.below(256) as f64 - 128.0).collect() };
        let (a, b) = (ints(m * k), ints(k * n));
        let (b_mem, sbk, sbn) =
            if b_t { ((0..n * k).map(|i| b[i % k * n + i / k]).collect::<Vec<_>>(), 1, k) } else { (b.clone(), n, 1) };
        // As Triton's launcher specializes them: a stride of 1 is a constant.
        let d16 = |x: usize| int(in_flight && x % 16 == 0);
        let stride = |x: usize| if x == 1 { c(1) } else { d16(x) };
        let mut spec = vec![ptr(I8), ptr(I8), ptr(I32), d16(m), d16(n), d16(k)];
        spec.extend([stride(sbk), stride(sbn), c(bm as i64), c(bn as i64), c(bk as i64)]);
        let mut vals = vec![
            V::Buf(I8, a.clone()),
            V::Buf(I8, b_mem),
            V::Out(I32, m * n),
            V::Int(m as i64),
            V::Int(n as i64),
            V::Int(k as i64),
        ];
        vals.extend([sbk, sbn].into_iter().filter(|&x| x != 1).map(|x| V::Int(x as i64)));
        let opts = RunOptions { file: "imm.py", target: Target::Sm100a, num_warps: warps, num_stages: 3, poison: true };
        let grid = [m.div_ceil(bm as usize) as u32, n.div_ceil(bn as usize) as u32, 1];
        let what = format!("{m}x{n}x{k} tile {bm}x{bn}x{bk} on {warps} warps (B transposed: {b_t})");
        let outs = run_on(&source, "imm_kernel", spec.clone(), &opts, &vals, grid).unwrap_or_else(|e| panic!("{e}"));
        let (got, interp) = &outs[0];
        assert_eq!(got, interp, "{what}: simulator against interpreter");
        let want: Vec<f64> =
            (0..m * n).map(|i| (0..k).map(|j| a[i / n * k + j] * b[j * n + i % n]).sum::<f64>()).collect();
        assert_eq!(interp, &want, "{what}: interpreter against the exact product");

        let sp = Specialization::with_config(
            spec,
            KernelConfig { num_warps: warps, num_stages: 3, ..KernelConfig::DEFAULT },
        );
        let ks =
            tessel::KernelSource { file: "imm.py", source: &source, kernel: "imm_kernel", spec: &sp, module: None };
        let Ok(Output::Ptx { kernel, .. }) =
            tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default())
        else {
            panic!("{what}: does not compile");
        };
        assert_eq!(count(&kernel.ptx, "tcgen05.mma.cta_group::1.kind::i8"), (bk / 32) as usize, "{what}");
        assert_eq!(count(&kernel.ptx, "mma.sync"), 0, "{what}");
        assert_eq!(kernel.ptx.contains("%mma_bars"), in_flight, "{what}: an MMA in flight across iterations");
        assemble(&format!("imm{bm}x{bn}x{bk}w{warps}k{k}"), &kernel.ptx, "sm_100a");
    }
}

/// Dots no tcgen05 form takes stay where they ran before, and the PTX says why: f32 operands at ieee precision
/// (tcgen05 reads f32 as tf32 only; FMAs) and fp8 on a 32-row tile (mma.sync). (The kinds' K and N steps are
/// never short of what `tl.dot` accepts; `tile/tests/filetests/dot_tcgen05_kinds.tir` shows those refusals.)
#[test]
fn dots_without_a_tcgen05_kind_say_why() {
    let ieee = r#"
@triton.jit
def k(a_ptr, c_ptr, BLOCK: tl.constexpr, BK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    kk = tl.arange(0, BK)
    a = tl.load(a_ptr + r[:, None] * BK + kk[None, :])
    b = tl.load(a_ptr + kk[:, None] * BLOCK + r[None, :])
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], c)
"#;
    let source = format!("import triton\nimport triton.language as tl\n{ieee}");
    let sp = Specialization::with_config(
        vec![ptr(F32), ptr(F32), c(128), c(32)],
        KernelConfig { num_warps: 4, ..KernelConfig::DEFAULT },
    );
    let ks = tessel::KernelSource { file: "ieee.py", source: &source, kernel: "k", spec: &sp, module: None };
    let Ok(Output::Ptx { kernel, .. }) =
        tessel::pipeline::run(&ks, Target::Sm100a, Stage::Ptx, None, &mut Default::default())
    else {
        panic!("the ieee dot does not compile");
    };
    assert_eq!(count(&kernel.ptx, "tcgen05.mma"), 0);
    // mma.sync has no ieee f32 form either: the dot runs on FMAs.
    assert!(kernel.ptx.contains("// FMA dot, not tcgen05: f32 operands with input_precision ieee"), "{}", kernel.ptx);
    let p = ptx_of(F8E4M3, (32, 64, 32), 4, 3, true);
    assert_eq!(count(&p, "tcgen05.mma"), 0);
    assert!(p.contains("// mma.sync, not tcgen05: block M 32"), "{p}");
    assemble("mm_e4m3_m32", &p, "sm_100a");
}

/// The simulator refuses what the MMA's wait protects: with the `mbarrier.try_wait` on the MMA's commit made to
/// succeed at once, a K loop of one iteration reads the accumulator (`tcgen05.ld`) while the MMA may still
/// write it, one of several iterations stores the next operands over the shared bytes the MMA in flight reads,
/// and a pipelined loop refills (`cp.async`) the ring slot it reads. A pipelined loop keeps the last MMA in
/// flight past its end: without the drain's wait, the accumulator's read is refused. The unbroken PTX runs.
#[test]
fn the_simulator_refuses_an_mma_not_waited_for() {
    let (path, file) = matmul_file();
    let source = std::fs::read_to_string(path).unwrap();
    // Every `mbarrier.try_wait.parity` (the MMA's: cp.async rings wait on groups, not barriers) answers "done".
    let skip_waits = |ptx: &str| -> String {
        ptx.lines()
            .map(|l| match l.trim_start().strip_prefix("mbarrier.try_wait.parity.shared::cta.b64 ") {
                Some(rest) => format!("    setp.eq.u32 {}, 1, 1;", rest.split(',').next().unwrap()),
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    // Only the last `try_wait` (with an MMA in flight across iterations, the drain after the loop).
    let skip_drain = |ptx: &str| -> String {
        let at = ptx.rfind("mbarrier.try_wait.parity.shared::cta.b64 ").unwrap();
        let end = at + ptx[at..].find(';').unwrap();
        let p = ptx[at..end].split_whitespace().nth(1).unwrap().trim_end_matches(',');
        format!("{}setp.eq.u32 {p}, 1, 1{}", &ptx[..at], &ptx[end..])
    };
    for (k, stages, drain_only, want) in [
        (32, 1, false, "`tcgen05.ld.sync.aligned.32x32b.x64.b32`: tcgen05.ld reads lane"),
        (96, 1, false, "`st.shared.v4.b32`: thread 0's store overwrites shared byte"),
        (96, 3, false, "`cp.async.cg.shared.global`: thread 0's store overwrites shared byte"),
        (96, 3, true, "`tcgen05.ld.sync.aligned.32x32b.x64.b32`: tcgen05.ld reads lane"),
    ] {
        let (m, n, tile) = (128, 64, (128, 64, 32));
        let (a, b) = (random(m * k, 5, F16), random(k * n, 6, F16));
        let vals: Vec<V> = [V::Buf(F16, a), V::Buf(F16, b), V::Out(F16, m * n)]
            .into_iter()
            .chain([m, n, k, k, n, n].map(|x| V::Int(x as i64)))
            .collect();
        let spec = spec(F16, tile, [true; 6], false);
        let opts = RunOptions { file, target: Target::Sm100a, num_warps: 4, num_stages: stages, poison: true };
        let what = format!("K {k}, {stages} stage(s)");
        let run = |edit: &dyn Fn(&str) -> String| {
            simulate_broken(&source, "matmul_kernel", spec.clone(), &opts, &vals, [1, 1, 1], edit)
        };
        assert_eq!(run(&|p| p.to_string()), Ok(()), "{what}: the unbroken PTX");
        let err = if drain_only { run(&skip_drain) } else { run(&skip_waits) }.unwrap_err();
        assert!(err.contains(want) && err.contains("no wait has observed a commit tracking it"), "{what}: {err}");
    }
}
