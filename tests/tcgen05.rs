//! Blackwell tensor memory and tcgen05 MMAs end to end (`tests/kernels/gluon_tcgen05.py`): each kernel compiled
//! for sm_100a, assembled by `ptxas -arch=sm_100a` when there is one (`TESSEL_REQUIRE_PTXAS` makes it required),
//! and run on the PTX simulator against the interpreter on fresh random inputs with the outputs poisoned; and the
//! errors: over-budget tensor memory, tcgen05 on sm_90a.

#[path = "sim_common/mod.rs"]
mod sim_common;

use std::process::Command;

use sim_common::{RunOptions, SimAndInterp, V, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{self, *};
use tessel::tile::{KernelConfig, Target};
use tessel_interp::MmaOrder;
use tessel_math::testing::Rng;

const FILE: &str = "tests/kernels/gluon_tcgen05.py";

fn source() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap()
}

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, true)
}

fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

fn cb(v: bool) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Bool(v))
}

fn ptx_for(src: &str, kernel: &str, args: Vec<ArgSpec>, target: Target) -> Result<String, String> {
    ptx_warps(src, kernel, args, target, 4)
}

fn ptx_warps(src: &str, kernel: &str, args: Vec<ArgSpec>, target: Target, warps: u32) -> Result<String, String> {
    let spec = Specialization::with_config(args, KernelConfig { num_warps: warps, ..KernelConfig::DEFAULT });
    let ks = tessel::KernelSource { file: FILE, source: src, kernel, spec: &spec, module: None };
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => Ok(kernel.ptx),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

/// The ptxas the runtime finds (`PTXAS`, `PATH`, the CUDA toolkit); `.ci/run` sets TESSEL_REQUIRE_PTXAS.
fn ptxas() -> Option<std::path::PathBuf> {
    let found = tessel::runtime::find_ptxas();
    if found.is_none() && std::env::var_os("TESSEL_REQUIRE_PTXAS").is_some() {
        panic!("TESSEL_REQUIRE_PTXAS is set but no ptxas was found (set PTXAS)");
    }
    found
}

/// ptxas (when there is one) accepts `ptx` for sm_100a without a word.
fn assemble(name: &str, ptx: &str) {
    let Some(ptxas) = ptxas() else {
        eprintln!("note: no ptxas here; {name} is not assembled");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tessel-tcgen05-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.ptx"));
    std::fs::write(&path, ptx).unwrap();
    let out =
        Command::new(ptxas).args(["-arch", "sm_100a", "-o"]).arg(path.with_extension("cubin")).arg(&path).output();
    let out = out.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "ptxas -arch sm_100a {name}:\n{stderr}\n{ptx}");
    std::fs::remove_dir_all(dir).ok();
}

fn opts() -> RunOptions<'static> {
    opts_warps(4)
}

fn opts_warps(num_warps: u32) -> RunOptions<'static> {
    RunOptions { file: FILE, target: Target::Sm100a, num_warps, num_stages: 1, poison: true }
}

/// Tensor memory in blocks of 64 rows (16 per warp quarter, moved with `16x32bx2`) and of 128, over one block
/// and several, on 4 and 8 warps: the tutorials' round-trip shapes.
#[test]
fn tensor_memory_blocks_of_64_and_128_rows_round_trip() {
    let src = source();
    for (m, n, bm, bn, warps) in [
        (64usize, 64usize, 64, 64, 4),
        (64, 128, 64, 64, 8),
        (128, 64, 64, 64, 4),
        (256, 128, 64, 64, 8),
        (256, 64, 128, 64, 4),
    ] {
        let args = vec![ptr(F32), ptr(F32), c(m as i64), c(n as i64), c(bm), c(bn)];
        let ptx = ptx_warps(&src, "tmem_blocks", args.clone(), Target::Sm100a, warps).unwrap();
        // A single block of 64 rows leaves rows 16-31 of each quarter empty; more blocks fill them.
        let shape = if m == 64 && n == bn as usize { "16x32bx2" } else { "32x32b" };
        assert!(ptx.contains(&format!("tcgen05.ld.sync.aligned.{shape}")), "{m}x{n} in ({bm}, {bn}):\n{ptx}");
        assemble(&format!("tmem_blocks_{m}_{n}_{bm}_{bn}_{warps}"), &ptx);
        let x: Vec<f64> = Rng::new(m as u64 + n as u64 + bm as u64).vec(m * n);
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, m * n)];
        let outs = run_on(&src, "tmem_blocks", args, &opts_warps(warps), &vals, [1, 1, 1])
            .unwrap_or_else(|e| panic!("{m}x{n} in ({bm}, {bn}), {warps} warps: {e}"));
        let (sim, interp) = &outs[0];
        assert_eq!(sim, interp, "simulated PTX vs interpreter, {m}x{n} in ({bm}, {bn})");
        assert_eq!(*interp, x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
    }
}

/// `A @ B + C` over grids of MMA instructions: M 64 (block M 64, the data path's 16 lanes per quarter), M 256
/// as two M-128 instructions, N in blocks; A from shared or tensor memory. The simulator against the
/// interpreter, the interpreter against float64.
#[test]
fn mma_grids_of_m64_and_m128_agree_with_the_interpreter_and_float64() {
    let src = source();
    for (m, n, k, bm, bn, a_in_tmem, warps) in [
        (64usize, 64usize, 32usize, 64, 64, false, 4),
        (64, 64, 32, 64, 64, true, 4),
        (64, 256, 32, 64, 256, false, 8),
        (256, 64, 32, 128, 64, false, 4),
        (256, 64, 32, 128, 64, true, 8),
        (128, 128, 32, 128, 64, true, 4),
    ] {
        let args = vec![
            ptr(F16),
            ptr(F16),
            ptr(F32),
            ptr(F32),
            c(m as i64),
            c(n as i64),
            c(k as i64),
            c(bm),
            c(bn),
            cb(a_in_tmem),
        ];
        let what = format!("{m}x{n}x{k} in ({bm}, {bn}), A in {}", if a_in_tmem { "TMEM" } else { "SMEM" });
        let ptx = ptx_warps(&src, "mma_grid", args.clone(), Target::Sm100a, warps).unwrap();
        let tiles = (m / bm as usize) * (n / bn as usize);
        assert_eq!(ptx.matches("tcgen05.mma.cta_group::1.kind::f16").count(), tiles * k / 16, "{what}:\n{ptx}");
        assemble(&format!("mma_grid_{m}_{n}_{bm}_{bn}_{a_in_tmem}"), &ptx);
        let mut rng = Rng::new((m + n + k) as u64 + a_in_tmem as u64);
        let (a, b, cc) = (rng.vec(m * k), rng.vec(k * n), rng.vec(m * n));
        let vals = [V::Buf(F16, a.clone()), V::Buf(F16, b.clone()), V::Buf(F32, cc.clone()), V::Out(F32, m * n)];
        let outs = run_on(&src, "mma_grid", args, &opts_warps(warps), &vals, [1, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (sim, interp) = &outs[0];
        assert_eq!(sim, interp, "simulated PTX vs interpreter, {what}");
        let h = |x: f64| half::f16::from_f64(x).to_f64();
        let reference: Vec<f64> = (0..m * n)
            .map(|i| (cc[i] as f32 as f64) + (0..k).map(|p| h(a[i / n * k + p]) * h(b[p * n + i % n])).sum::<f64>())
            .collect();
        let err = interp.iter().zip(&reference).map(|(x, r)| (x - r).abs()).fold(0.0, f64::max);
        assert!(err <= 1e-5 * reference.iter().map(|r| r.abs()).fold(1.0, f64::max), "{what}: max error {err}");
    }
}

/// Buffer 1 of a two-buffer allocation, reread as P in f16 (unpacked, the older spelling) and as two f32
/// columns: views of the same cells in the simulator and the interpreter.
#[test]
fn tensor_memory_views_index_and_reinterpret_agree_with_the_interpreter() {
    let (m, n) = (128usize, 64usize);
    let args = vec![ptr(F32), ptr(F16), ptr(F32), c(m as i64), c(n as i64)];
    let ptx = ptx_for(&source(), "tmem_views", args.clone(), Target::Sm100a).unwrap();
    assert!(ptx.contains("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32"), "{ptx}");
    assemble("tmem_views", &ptx);
    let x: Vec<f64> = Rng::new(77).vec(m * n);
    let vals = [V::Buf(F32, x.clone()), V::Out(F16, m * n), V::Out(F32, m * 2)];
    let outs = run_on(&source(), "tmem_views", args, &opts(), &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    for (i, (sim, interp)) in outs.iter().enumerate() {
        assert_eq!(sim, interp, "simulated PTX vs interpreter, output {i}");
    }
    assert_eq!(outs[0].1, x.iter().map(|&v| half::f16::from_f64(v as f32 as f64).to_f64()).collect::<Vec<_>>());
    let first_two: Vec<f64> = (0..m * 2).map(|i| x[i / 2 * n + i % 2] as f32 as f64).collect();
    assert_eq!(outs[1].1, first_two);
}

#[test]
fn a_tensor_memory_round_trip_assembles_and_agrees_with_the_interpreter() {
    let src = source();
    for init in [false, true] {
        let (m, n) = (128usize, 64usize);
        let args = vec![ptr(F32), ptr(F32), c(m as i64), c(n as i64), cb(init)];
        let ptx = ptx_for(&src, "tmem_round_trip", args.clone(), Target::Sm100a).unwrap();
        for needle in [
            "tcgen05.alloc",
            "tcgen05.relinquish_alloc_permit",
            "tcgen05.st.sync.aligned.32x32b.x64.b32",
            "tcgen05.ld.sync.aligned.32x32b.x64.b32",
            "tcgen05.wait::ld",
            "tcgen05.dealloc",
        ] {
            assert!(ptx.contains(needle), "{needle}:\n{ptx}");
        }
        assemble(&format!("tmem_round_trip_{init}"), &ptx);
        let mut rng = Rng::new(100 + init as u64);
        let x: Vec<f64> = rng.vec(m * n);
        let outs =
            run_on(&src, "tmem_round_trip", args, &opts(), &[V::Buf(F32, x.clone()), V::Out(F32, m * n)], [1, 1, 1])
                .unwrap_or_else(|e| panic!("{e}"));
        let (sim, interp) = &outs[0];
        assert_eq!(sim, interp, "simulated PTX vs interpreter");
        assert_eq!(*interp, x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
    }
}

#[test]
fn tensor_memory_slices_agree_with_the_interpreter() {
    let (m, n) = (128usize, 64usize);
    let args = vec![ptr(F32), ptr(F32), c(m as i64), c(n as i64)];
    let ptx = ptx_for(&source(), "tmem_slices", args.clone(), Target::Sm100a).unwrap();
    assert_eq!(ptx.matches("tcgen05.ld.sync.aligned.32x32b.x32.b32").count(), 2, "{ptx}");
    assemble("tmem_slices", &ptx);
    let x: Vec<f64> = Rng::new(4).vec(m * n);
    let vals = [V::Buf(F32, x.clone()), V::Out(F32, m * n)];
    let outs = run_on(&source(), "tmem_slices", args, &opts(), &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    assert_eq!(sim, interp, "simulated PTX vs interpreter");
    assert_eq!(*interp, x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
}

fn mma_args(m: i64, n: i64, k: i64, a_in_tmem: bool, use_acc: bool, commit: bool) -> Vec<ArgSpec> {
    vec![ptr(F16), ptr(F16), ptr(F32), ptr(F32), c(m), c(n), c(k), cb(a_in_tmem), cb(use_acc), cb(commit)]
}

#[test]
fn tcgen05_mma_tiles_assemble_and_agree_with_the_interpreter() {
    let src = source();
    let (m, n, k) = (128usize, 64usize, 32usize);
    for (a_in_tmem, use_acc, commit) in
        [(false, false, true), (false, true, false), (false, true, true), (true, false, false), (true, true, true)]
    {
        let args = mma_args(m as i64, n as i64, k as i64, a_in_tmem, use_acc, commit);
        let ptx = ptx_for(&src, "mma_tile", args.clone(), Target::Sm100a).unwrap();
        assert!(ptx.contains("tcgen05.mma.cta_group::1.kind::f16"), "{ptx}");
        assert!(ptx.contains("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64"), "{ptx}");
        assemble(&format!("mma_tile_{a_in_tmem}_{use_acc}_{commit}"), &ptx);
        let mut rng = Rng::new(7 + 4 * a_in_tmem as u64 + 2 * use_acc as u64 + commit as u64);
        let a: Vec<f64> = rng.vec(m * k).into_iter().map(|x| x as f32 as f64).collect();
        let b: Vec<f64> = rng.vec(k * n);
        let cc: Vec<f64> = rng.vec(m * n);
        let vals = [V::Buf(F16, a), V::Buf(F16, b), V::Buf(F32, cc), V::Out(F32, m * n)];
        let outs = run_on(&src, "mma_tile", args, &opts(), &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
        let (sim, interp) = &outs[0];
        assert!(interp.iter().all(|x| x.is_finite()), "the interpreter wrote every element");
        assert_eq!(
            sim, interp,
            "simulated PTX vs interpreter (a_in_tmem {a_in_tmem}, use_acc {use_acc}, commit {commit})"
        );
    }
}

/// `tmem_reuse`: `later` on the columns of `a_t` (A read back after the MMA that reads it), in the compiled kernel
/// as in the interpreter. Stored after the wait for that MMA, the simulator and the interpreter agree; stored
/// before it, the simulator refuses the `tcgen05.st` over lanes the MMA in flight still reads (the compiled kernel
/// really puts `later` there).
#[test]
fn a_buffer_on_the_columns_an_mma_in_flight_reads_agrees_with_the_interpreter() {
    let src = source();
    let (m, n, k) = (128usize, 64usize, 32usize);
    for wait in [true, false] {
        let args = vec![ptr(F16), ptr(F16), ptr(F32), ptr(F16), c(m as i64), c(n as i64), c(k as i64), cb(wait)];
        let ptx = ptx_for(&src, "tmem_reuse", args.clone(), Target::Sm100a).unwrap();
        assemble(&format!("tmem_reuse_{wait}"), &ptx);
        let mut rng = Rng::new(13);
        let a: Vec<f64> = rng.vec(m * k).into_iter().map(|x| x as f32 as f64).collect();
        let b: Vec<f64> = rng.vec(k * n);
        let vals = [V::Buf(F16, a), V::Buf(F16, b), V::Out(F32, m * n), V::Out(F16, m * k)];
        let outs = run_on(&src, "tmem_reuse", args, &opts(), &vals, [1, 1, 1]);
        if wait {
            let outs = outs.unwrap_or_else(|e| panic!("{e}"));
            for (sim, interp) in &outs {
                assert!(interp.iter().all(|x| x.is_finite()), "the interpreter wrote every element");
                assert_eq!(sim, interp, "simulated PTX vs interpreter");
            }
        } else {
            let Err(err) = outs else { panic!("the simulator ran the store over lanes an MMA in flight reads") };
            assert!(
                err.contains("simulator") && err.contains("tcgen05.st writes lane") && err.contains("still reads"),
                "{err}"
            );
        }
    }
}

/// A K loop over a ring of shared-memory slots, each refilled once the MMA that read it arrived on its barrier:
/// on the simulator against the interpreter, and the interpreter against float64, on ragged sizes over 2x2
/// programs.
#[test]
fn a_ring_matmul_agrees_with_the_interpreter_and_float64() {
    let (m, n, k) = (200usize, 100usize, 88usize);
    let int = || ArgSpec::Int(I32, false);
    let args = vec![ptr(F16), ptr(F16), ptr(F32), int(), int(), int(), c(128), c(64), c(32), c(2)];
    let ptx = ptx_for(&source(), "ring_matmul", args.clone(), Target::Sm100a).unwrap();
    assemble("ring_matmul", &ptx);
    let mut rng = Rng::new(21);
    let a: Vec<f64> = rng.vec(m * k);
    let b: Vec<f64> = rng.vec(k * n);
    let vals = [
        V::Buf(F16, a.clone()),
        V::Buf(F16, b.clone()),
        V::Out(F32, m * n),
        V::Int(m as i64),
        V::Int(n as i64),
        V::Int(k as i64),
    ];
    let outs = run_on(&source(), "ring_matmul", args, &opts(), &vals, [2, 2, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    assert_eq!(sim, interp, "simulated PTX vs interpreter");
    let h = |x: f64| {
        tessel::tile::eval::value::from_bits(
            tessel::tile::eval::value::to_bits(tessel::tile::eval::value::Val::Float(x), F16),
            F16,
        )
        .as_f64()
    };
    let reference: Vec<f64> =
        (0..m * n).map(|i| (0..k).map(|p| h(a[i / n * k + p]) * h(b[p * n + i % n])).sum()).collect();
    let err = interp.iter().zip(&reference).map(|(x, r)| (x - r).abs()).fold(0.0, f64::max);
    let scale = reference.iter().map(|r| r.abs()).fold(0.0, f64::max);
    assert!(err <= 1e-5 * scale, "max error {err} of {scale}");
}

/// The ring matmul whose slots TMA fills, on ragged sizes over a grid of programs: the simulator (TMA from the
/// tensor maps the launch encodes) against the interpreter, and ptxas.
#[test]
fn a_tma_ring_matmul_agrees_with_the_interpreter() {
    let desc = |block: &[u32]| ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let int = || ArgSpec::Int(I32, false);
    let args = vec![desc(&[128, 32]), desc(&[32, 64]), ptr(F32), int(), int(), int(), c(3)];
    let ptx = ptx_for(&source(), "tma_ring_matmul", args.clone(), Target::Sm100a).unwrap();
    for needle in
        ["cp.async.bulk.tensor.2d", "tcgen05.mma.cta_group::1.kind::f16", "tcgen05.commit", "mbarrier.try_wait"]
    {
        assert!(ptx.contains(needle), "{needle}:\n{ptx}");
    }
    assemble("tma_ring_matmul", &ptx);
    let (m, n, k) = (200usize, 72usize, 168usize);
    let mut rng = Rng::new(23);
    let vals = [
        V::Desc(F16, Some(rng.vec(m * k)), vec![m as u32, k as u32]),
        V::Desc(F16, Some(rng.vec(k * n)), vec![k as u32, n as u32]),
        V::Out(F32, m * n),
        V::Int(m as i64),
        V::Int(n as i64),
        V::Int(k as i64),
    ];
    let outs = run_on(&source(), "tma_ring_matmul", args, &opts(), &vals, [2, 2, 1]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    assert!(interp.iter().all(|x| x.is_finite()), "the interpreter wrote every element");
    assert_eq!(sim, interp, "simulated PTX vs interpreter");
}

#[test]
fn tcgen05_on_sm_90a_is_refused_at_the_call() {
    let err = ptx_for(&source(), "mma_tile", mma_args(128, 64, 32, false, true, true), Target::Sm90a).unwrap_err();
    assert!(err.contains("needs sm_100a"), "{err}");
    assert!(err.contains("allocate_tensor_memory(gl.float32, [M, N], acc_layout, value=c)"), "the span: {err}");
}

#[test]
fn tensor_memory_over_512_columns_is_refused_naming_the_buffers() {
    let src = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import TensorMemoryLayout, allocate_tensor_memory
from triton.experimental.gluon.language.nvidia.blackwell import get_tmem_32x32b_reg_layout

@gluon.jit
def too_big(Y):
    regs: gl.constexpr = get_tmem_32x32b_reg_layout(128, 256, [128, 256], 4)
    big = allocate_tensor_memory(gl.float32, [128, 256], TensorMemoryLayout((128, 256), col_stride=1))
    bigger = allocate_tensor_memory(gl.float32, [128, 512], TensorMemoryLayout((128, 256), col_stride=1))
    y = big.load(regs)
    gl.store(Y + gl.arange(0, 128, layout=gl.SliceLayout(1, regs))[:, None] * 256
             + gl.arange(0, 256, layout=gl.SliceLayout(0, regs))[None, :], y)
"#;
    let err = ptx_for(src, "too_big", vec![ptr(F32)], Target::Sm100a).unwrap_err();
    assert!(err.contains("needs 768 tensor-memory columns, more than the 512 of a CTA"), "{err}");
    assert!(err.contains("%big (memdesc<128x256xf32") && err.contains("%bigger (memdesc<128x512xf32"), "{err}");
    // At the allocation that does not fit (buffers are placed largest first).
    assert!(err.contains("big = allocate_tensor_memory(gl.float32, [128, 256]"), "the span: {err}");
}

const SCALED: &str = "tests/kernels/gluon_tcgen05_scaled.py";

fn scaled_source() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SCALED)).unwrap()
}

fn layout_const(spelling: &str) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Expr(spelling.to_string()))
}

fn nvmma(spelling: &str) -> tessel::layouts::NvmmaSharedLayout {
    match tessel::layouts::expr::parse_layout(spelling).unwrap() {
        tessel::layouts::AnyLayout::Shared(tessel::layouts::SharedLayout::Nvmma(l)) => l,
        other => panic!("{other}"),
    }
}

/// f32 through NVMMA shared memory into tensor memory by `tcgen05.cp` (128x256b, or 128x128b where the TMEM
/// blocks of M 256 leave 4 columns per row block) and back.
#[test]
fn tcgen05_copies_assemble_and_agree_with_the_interpreter() {
    let src = scaled_source();
    for (m, n, swizzle, block_n, shape) in
        [(128u32, 64u32, 128u32, 64u32, "128x256b"), (128, 32, 32, 1, "128x256b"), (256, 32, 32, 4, "128x128b")]
    {
        let args = vec![
            ptr(F32),
            ptr(F32),
            c(m as i64),
            c(n as i64),
            layout_const(&format!("gl.NVMMASharedLayout({swizzle}, 32)")),
            layout_const(&format!("TensorMemoryLayout(({}, {block_n}), col_stride=1)", 128)),
        ];
        let what = format!("{m}x{n}, swizzle {swizzle}, TMEM block N {block_n}");
        let ptx =
            ptx_for(&src, "copy_round_trip", args.clone(), Target::Sm100a).unwrap_or_else(|e| panic!("{what}: {e}"));
        let cps = ptx.matches(&format!("tcgen05.cp.cta_group::1.{shape}")).count() as u32;
        assert_eq!(cps * if shape == "128x256b" { 8 } else { 4 }, m / 128 * n, "{what}:\n{ptx}");
        assemble(&format!("copy_round_trip_{m}_{n}_{swizzle}_{block_n}"), &ptx);
        let x: Vec<f64> = Rng::new((m + n + swizzle) as u64).vec((m * n) as usize);
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, (m * n) as usize)];
        let outs = run_on(&src, "copy_round_trip", args, &opts_file(SCALED), &vals, [1, 1, 1])
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(outs[0].0, outs[0].1, "simulated PTX vs interpreter, {what}");
        assert_eq!(outs[0].1, x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>(), "{what}");
    }
}

fn opts_file(file: &'static str) -> RunOptions<'static> {
    RunOptions { file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true }
}

const E2M1: [f64; 16] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0];

/// The unswizzled packed-block layout of `[128, SK]` scales that tcgen05_copy reads (tutorial 11's view of its
/// TMA block): 4 scales of a row, the rows 32 and 64 apart, 32 rows of 16 bytes, then the next 4 scales.
fn scales_smem(sk: u32) -> String {
    let mut bases: Vec<String> = ["[0,1]", "[0,2]", "[32,0]", "[64,0]", "[1,0]", "[2,0]", "[4,0]", "[8,0]", "[16,0]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut k = 4;
    while k < sk {
        bases.push(format!("[0,{k}]"));
        k *= 2;
    }
    format!("gl.SharedLinearLayout(offset_bases=[{}], block_bases=[], alignment=128)", bases.join(","))
}

/// One scaled tile of `steps` K blocks of `k`: (ptx, interpreter's output or error, reference).
fn scaled_tile(
    fa: &str,
    fb: &str,
    [n, k, steps]: [u32; 3],
    copy: bool,
    broken: i64,
) -> (String, Result<Vec<SimAndInterp>, String>, Vec<f64>) {
    let m = 128u32;
    let vec = if fa == "nvfp4" { 16 } else { 32 };
    let mixed = fa != fb;
    let fmt = |f: &str| if f == "mxfp8" { "e4m3" } else { "e2m1" };
    let desc = |f: &str, rows: u32| {
        let (elem, cols) = if f == "mxfp8" { (F8E4M3, k) } else { (U8, k / 2) };
        let layout = (mixed && f != "mxfp8")
            .then(|| nvmma("NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, rank=2, fp4_padded=True)"));
        ArgSpec::TensorDesc { elem, block_shape: vec![rows, cols], padding_nan: false, layout }
    };
    let scale_t = if fa == "nvfp4" { F8E4M3 } else { U8 };
    let args = vec![
        desc(fa, m),
        desc(fb, n),
        ptr(scale_t),
        ptr(scale_t),
        ptr(F32),
        c(vec),
        ArgSpec::Constexpr(ConstValue::Str(fmt(fa).into())),
        ArgSpec::Constexpr(ConstValue::Str(fmt(fb).into())),
        cb(copy),
        layout_const(&scales_smem(k / vec as u32)),
        c(broken),
        c(steps as i64),
    ];
    let mut rng = Rng::new((n + k) as u64 + copy as u64 + 3 * fa.len() as u64 + fb.len() as u64);
    let kt = k * steps;
    let mut operand = |rows: u32, f: &str| {
        let k = kt;
        let nib: Vec<usize> = (0..rows * k).map(|_| rng.below(16) as usize).collect();
        let dense: Vec<f64> = nib.iter().map(|&x| E2M1[x]).collect();
        let stored =
            if f == "mxfp8" { dense.clone() } else { nib.chunks(2).map(|p| (p[0] | p[1] << 4) as f64).collect() };
        let exps: Vec<u64> = (0..rows * k / vec as u32).map(|_| 120 + rng.below(9)).collect();
        let scale = |e: u64| 2f64.powi(e as i32 - 127);
        let stored_scales: Vec<f64> = exps.iter().map(|&e| if f == "nvfp4" { scale(e) } else { e as f64 }).collect();
        let scaled: Vec<f64> = (0..(rows * k) as usize).map(|i| dense[i] * scale(exps[i / vec as usize])).collect();
        (stored, stored_scales, scaled)
    };
    let (a, sa, ad) = operand(m, fa);
    let (b, sb, bd) = operand(n, fb);
    let reference: Vec<f64> = (0..(m * n) as usize)
        .map(|i| {
            let (r, c) = (i / n as usize * kt as usize, i % n as usize * kt as usize);
            (0..kt as usize).map(|p| ad[r + p] * bd[c + p]).sum()
        })
        .collect();
    let cols = |f: &str| if f == "mxfp8" { kt } else { kt / 2 };
    let (ea, eb) = (if fa == "mxfp8" { F8E4M3 } else { U8 }, if fb == "mxfp8" { F8E4M3 } else { U8 });
    let src = scaled_source();
    let ptx = ptx_for(&src, "scaled_tile", args.clone(), Target::Sm100a).unwrap_or_else(|e| panic!("{fa} x {fb}: {e}"));
    let vals = [
        V::Desc(ea, Some(a), vec![m, cols(fa)]),
        V::Desc(eb, Some(b), vec![n, cols(fb)]),
        V::Buf(scale_t, sa),
        V::Buf(scale_t, sb),
        V::Out(F32, (m * n) as usize),
    ];
    (ptx, run_on(&src, "scaled_tile", args, &opts_file(SCALED), &vals, [1, 1, 1]), reference)
}

/// Block-scaled MMAs of every kind (mxf8f6f4 with fp8 and padded fp4 operands, mxf4, mxf4nvf4) with their scales
/// stored from registers or copied by tcgen05.cp: the instruction and PTX version, ptxas, the simulator against
/// the interpreter, and the interpreter against float64.
#[test]
fn block_scaled_mmas_assemble_and_agree_with_the_interpreter_and_float64() {
    for (fa, fb, kind, version) in [
        ("mxfp8", "mxfp8", "mxf8f6f4.block_scale.scale_vec::1X", "8.6"),
        ("mxfp8", "mxfp4", "mxf8f6f4.block_scale.scale_vec::1X", "8.6"),
        ("mxfp4", "mxfp8", "mxf8f6f4.block_scale.scale_vec::1X", "8.6"),
        ("mxfp4", "mxfp4", "mxf4.block_scale.scale_vec::2X", "8.6"),
        ("nvfp4", "nvfp4", "mxf4nvf4.block_scale.scale_vec::4X", "8.7"),
    ] {
        for copy in [false, true] {
            let what = format!("{fa} x {fb}, scales {}", if copy { "copied" } else { "stored" });
            let (ptx, outs, reference) = scaled_tile(fa, fb, [128, 128, 1], copy, 0);
            assert!(ptx.contains(&format!("tcgen05.mma.cta_group::1.kind::{kind} ")), "{what}:\n{ptx}");
            assert!(ptx.contains(&format!(".version {version}")), "{what}");
            assert_eq!(ptx.contains("tcgen05.cp.cta_group::1.32x128b.warpx4"), copy, "{what}");
            assemble(&format!("scaled_tile_{fa}_{fb}_{copy}"), &ptx);
            agrees_with_float64(&what, outs, &reference);
        }
    }
}

/// A narrow N (16 and 32, the MMA's smallest): B's scales are a buffer of 16 or 32 rows, each row at lane
/// `n % 32` of every lane quarter (16 rows leave lanes 16-31 of each quarter unread), stored from registers. As
/// Gluon example 05's activations' scales are, on the B side of a swapped product.
#[test]
fn block_scaled_mmas_with_a_narrow_n_agree_with_the_interpreter_and_float64() {
    for (fa, fb) in [("mxfp8", "mxfp8"), ("mxfp4", "mxfp4")] {
        for n in [16, 32] {
            let what = format!("{fa} x {fb}, N {n}, scales stored");
            let (ptx, outs, reference) = scaled_tile(fa, fb, [n, 128, 1], false, 0);
            assemble(&format!("scaled_tile_{fa}_{fb}_n{n}"), &ptx);
            agrees_with_float64(&what, outs, &reference);
        }
    }
}

/// The simulated PTX wrote what the interpreter did, bit for bit, and that is the float64 reference within
/// 1e-6 of its largest magnitude.
fn agrees_with_float64(what: &str, outs: Result<Vec<SimAndInterp>, String>, reference: &[f64]) {
    let outs = outs.unwrap_or_else(|e| panic!("{what}: {e}"));
    let (sim, interp) = &outs[0];
    assert_eq!(sim, interp, "simulated PTX vs interpreter, {what}");
    let err = interp.iter().zip(reference).map(|(x, r)| (x - r).abs()).fold(0.0, f64::max);
    let scale = reference.iter().map(|r| r.abs()).fold(0.0, f64::max);
    assert!(err <= 1e-6 * scale, "{what}: max error {err} of {scale}");
}

/// Two K blocks through a ring of two operand buffers: the second block's TMA coordinate is a byte offset into
/// packed e2m1, which a padded (`16U4_ALIGN16B`) map counts in 4-bit elements, and the second buffer of a padded
/// ring starts a padded buffer's bytes after the first. The interpreter does not see either (it has no shared
/// layouts); the simulator of the emitted PTX does.
#[test]
fn padded_fp4_operands_over_several_k_blocks_agree_with_the_interpreter_and_float64() {
    for (fa, fb) in [("mxfp8", "mxfp4"), ("mxfp4", "mxfp8"), ("mxfp4", "mxfp4")] {
        for n in [128, 256] {
            let what = format!("{fa} x {fb}, N {n}, two K blocks");
            let (ptx, outs, reference) = scaled_tile(fa, fb, [n, 128, 2], false, 0);
            assemble(&format!("scaled_tile_{fa}_{fb}_{n}_two_steps"), &ptx);
            agrees_with_float64(&what, outs, &reference);
        }
    }
}

/// The scales read before a commit tracking their copy is waited for, or overwritten while the MMA reading them
/// is in flight: refused, naming the op in flight, by the simulator (it runs first): a `tcgen05.ld` of cells the
/// copy in flight writes, and a `tcgen05.st` over cells the MMA in flight reads (the interpreter's own check of
/// the overwrite comes after the simulator's, so it is not reached here).
#[test]
fn scales_read_early_or_overwritten_in_flight_are_refused() {
    let (_, outs, _) = scaled_tile("mxfp8", "mxfp8", [128, 128, 1], true, 1);
    let err = outs.unwrap_err();
    assert!(
        err.contains("simulator") && err.contains("tcgen05.ld reads lane") && err.contains("which tcgen05 op #"),
        "{err}"
    );
    let (_, outs, _) = scaled_tile("mxfp8", "mxfp8", [128, 128, 1], false, 2);
    let err = outs.unwrap_err();
    assert!(
        err.contains("simulator") && err.contains("tcgen05.st writes lane") && err.contains("still reads"),
        "{err}"
    );
}

/// `scaled_loop`'s unswizzled packed-block layout of a ring of two `[128, sk]` buffers of scales: each buffer as
/// [`scales_smem`] lays out one, the second after the first.
fn scales_ring(sk: u32) -> String {
    let one = scales_smem(sk);
    let bases = one.split("offset_bases=[").nth(1).unwrap().split("], block_bases").next().unwrap();
    let lifted: Vec<String> = bases.split("],[").map(|b| format!("[0,{}]", b.trim_matches(['[', ']']))).collect();
    format!("gl.SharedLinearLayout(offset_bases=[{},[1,0,0]], block_bases=[], alignment=128)", lifted.join(","))
}

/// `scaled_loop` (mxfp8, 128x128, K 128, `steps` K steps of other scales): the interpreter's run under `order`
/// (after the simulator's, which refuses a copy over scales an MMA in flight reads when the test thread asks:
/// `check_copy_order`), or its error, and the float64 reference.
fn scaled_loop(steps: u32, wait: bool, order: MmaOrder) -> (Result<Vec<SimAndInterp>, String>, Vec<f64>) {
    let (m, n, k, vec) = (128u32, 128u32, 128u32, 32u32);
    let sk = k / vec;
    let desc =
        |rows: u32| ArgSpec::TensorDesc { elem: F8E4M3, block_shape: vec![rows, k], padding_nan: false, layout: None };
    let args = vec![
        desc(m),
        desc(n),
        ptr(U8),
        ptr(U8),
        ptr(F32),
        c(vec as i64),
        layout_const(&scales_ring(sk)),
        c(steps as i64),
        cb(wait),
    ];
    let mut rng = Rng::new(31 + steps as u64);
    let mut operand = |rows: u32| -> (Vec<f64>, Vec<f64>) {
        let values: Vec<f64> = (0..rows * k).map(|_| E2M1[rng.below(16) as usize]).collect();
        let exps: Vec<f64> = (0..rows * sk * steps).map(|_| (120 + rng.below(9)) as f64).collect();
        (values, exps)
    };
    let (a, sa) = operand(m);
    let (b, sb) = operand(n);
    let scale = |e: f64| 2f64.powi(e as i32 - 127);
    let reference: Vec<f64> = (0..(m * n) as usize)
        .map(|i| {
            let (r, col) = (i / n as usize, i % n as usize);
            let mut sum = 0.0;
            for s in 0..steps as usize {
                for p in 0..k as usize {
                    let blk = s * sk as usize + p / vec as usize;
                    let x = a[r * k as usize + p] * scale(sa[r * (sk * steps) as usize + blk]);
                    let y = b[col * k as usize + p] * scale(sb[col * (sk * steps) as usize + blk]);
                    sum += x * y;
                }
            }
            sum
        })
        .collect();
    let vals = [
        V::Desc(F8E4M3, Some(a), vec![m, k]),
        V::Desc(F8E4M3, Some(b), vec![n, k]),
        V::Buf(U8, sa),
        V::Buf(U8, sb),
        V::Out(F32, (m * n) as usize),
    ];
    let src = scaled_source();
    let outs =
        sim_common::run_on_ctas_ordered(&src, "scaled_loop", args, &opts_file(SCALED), 1, &vals, [1, 1, 1], order);
    (outs, reference)
}

/// Scales copied each K step into tensor memory allocated in the loop: the plan gives the allocation the same
/// columns every step, in the compiled kernel and in the interpreter, so a copy over the scales the previous
/// step's MMA may still read is seen. The PTX ISA orders a `tcgen05.cp` before a later MMA but not an MMA before a
/// later `tcgen05.cp` (9.7.16.6.2): without the wait for that MMA the interpreter refuses the copy (`--mma-order
/// isa`, the default), naming both ops, and so does the simulator when asked (`check_copy_order`); with it both
/// run and agree with float64. Under `MmaOrder::Issue` the variant without the wait runs too, with the same
/// values as the simulator's (which runs the pipe in issue order).
#[test]
fn scales_copied_in_a_loop_over_those_an_mma_in_flight_reads_are_refused() {
    sim_common::ptx_sim::check_copy_order(true);
    let (outs, reference) = scaled_loop(4, true, MmaOrder::Isa);
    agrees_with_float64("scales copied after the wait", outs, &reference);
    let (outs, _) = scaled_loop(4, false, MmaOrder::Isa);
    let Err(err) = outs else { panic!("the simulator ran the copies over scales an MMA in flight reads") };
    assert!(
        err.contains("simulator") && err.contains("tcgen05.cp writes lane") && err.contains("still reads"),
        "{err}"
    );
    sim_common::ptx_sim::check_copy_order(false);
    let (outs, _) = scaled_loop(4, false, MmaOrder::Isa);
    let Err(err) = outs else { panic!("the interpreter ran the copies over scales an MMA in flight reads") };
    assert!(
        err.contains("interpreter")
            && err.contains(
                "the tcgen05_copy into `sa_t` writes tensor-memory cells that the earlier tcgen05_mma_scaled into \
                 `acc`, still in flight, reads"
            ),
        "{err}"
    );
    let (outs, reference) = scaled_loop(4, false, MmaOrder::Issue);
    agrees_with_float64("scales copied before the wait, in issue order", outs, &reference);
}

/// The block-scaled spelling of PTX 8.8 (`.block16`/`.block32`) assembles where 8.7's `scale_vec::4X` does: the
/// nvfp4 tile's PTX respelt.
#[test]
fn the_block_scale_spellings_of_both_ptx_versions_assemble() {
    let (ptx, _, _) = scaled_tile("nvfp4", "nvfp4", [128, 128, 1], false, 0);
    let respelt = ptx.replace(".version 8.7", ".version 8.8").replace("scale_vec::4X", "block16");
    assert!(respelt.contains("kind::mxf4nvf4.block_scale.block16"), "{respelt}");
    assemble("scaled_tile_block16", &respelt);
}
