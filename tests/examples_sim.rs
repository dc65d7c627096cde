//! Example kernels compiled the whole way to PTX (auto-mode layouts, FMA dots, reductions, shape ops, layout
//! conversions) and run on the CPU with the PTX simulator of `ptx_sim`, against the
//! interpreter on the same inputs: what the offline ptxas check cannot see (wrong values) shows up here
//! without a GPU. Warp-specialized kernels too: the auto-mode TMA matmul, and (with `TESSEL_GLUON_EXAMPLES` set
//! to python/examples/gluon of triton-lang/triton, which this repository does not hold) the public Gluon
//! examples' one-CTA cases (01, 03, 04).

mod common;
mod sim_common;

use std::path::Path;

use common::{c, int, ptr};
use sim_common::{RunOptions, V, run_on, simulate_broken, skip_wait};
use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, F16, F32};
use tessel::tile::Target;
use tessel_interp::MmaOrder;

fn random(n: usize, seed: u64, t: ScalarType) -> Vec<f64> {
    tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(seed), n, t)
}

/// Compiles `kernel` of `file` for `spec`, runs it on the simulator and in the interpreter over `grid`, and
/// returns the worst relative error of the outputs.
fn compare(
    file: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    warps: u32,
    vals: &[V],
    grid: [u32; 3],
    target: Target,
) -> f64 {
    compare_stages(file, kernel, spec, warps, 3, vals, grid, target)
}

/// [`compare`] with `num_stages` given: the worst relative error over the outputs (each poisoned first, so an
/// element nobody writes fails).
#[allow(clippy::too_many_arguments)]
fn compare_stages(
    file: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    warps: u32,
    num_stages: u32,
    vals: &[V],
    grid: [u32; 3],
    target: Target,
) -> f64 {
    // `file` is in `examples/`, or in `tests/kernels/` when it starts with `kernels/`.
    let dir = if file.starts_with("kernels/") { "tests" } else { "examples" };
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(file)).unwrap();
    let opts = RunOptions { file, target, num_warps: warps, num_stages, poison: true };
    let outs = run_on(&source, kernel, spec, &opts, vals, grid).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut worst: f64 = 0.0;
    for (got, want) in outs {
        let (mut num, mut den, mut n) = (0.0, 0.0, 0);
        for (i, (&g, &r)) in got.iter().zip(&want).enumerate() {
            if g.is_nan() && r.is_nan() {
                continue;
            }
            assert!(!g.is_nan() && !r.is_nan(), "{kernel}: output element {i}: simulated {g}, interpreter {r}");
            num += (g - r) * (g - r);
            den += r * r;
            n += 1;
        }
        assert!(n > 0, "{kernel}: an output nobody wrote");
        worst = worst.max((num / den.max(f64::MIN_POSITIVE)).sqrt());
    }
    worst
}

/// Dots no tensor-core instruction takes run on the FMA path: fp8 operands on sm_80 (mma.sync has no fp8 form
/// before sm_89). On two warps of sm_90a (wgmma needs a warpgroup) the tutorial matmul's two-warp fp8
/// configurations run `mma.sync` m16n8k32 (e4m3, e5m2).
#[test]
fn matmul_on_cuda_cores_matches_the_interpreter() {
    for t in [ScalarType::F8E5M2, ScalarType::F8E4M3] {
        let err = matmul_case(t, (64, 32, 32), 4, Target::Sm80);
        assert!(err < 1e-4, "{t} matmul on 4 warps, sm_80: {err}");
    }
}

#[test]
fn fp8_matmul_on_mma_sync_matches_the_interpreter() {
    for t in [ScalarType::F8E5M2, ScalarType::F8E4M3] {
        for tile in [(64, 32, 32), (32, 64, 64)] {
            let err = matmul_case(t, tile, 2, Target::Sm90a);
            assert!(err < 1e-4, "{t} matmul {tile:?} on 2 warps, sm_90a (mma.sync): {err}");
        }
    }
}

/// `matmul_kernel` on `t` operands at ragged M, N, K (masks on every edge) with `bm x bn x bk` tiles: the worst
/// relative error against the interpreter.
fn matmul_case(t: ScalarType, (bm, bn, bk): (i64, i64, i64), warps: u32, target: Target) -> f64 {
    let (m, n, k) = (130usize, 100usize, 72usize);
    let mut spec = vec![ptr(t), ptr(t), ptr(F16), int(false), int(false), int(false)];
    spec.extend([int(false), int(false), int(false), int(false), int(false), int(false)]);
    spec.extend([c(bm), c(bn), c(bk), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    let mut vals = vec![V::Buf(t, random(m * k, 1, t)), V::Buf(t, random(k * n, 2, t)), V::Out(F16, m * n)];
    vals.extend([m, n, k, k, 1, n, 1, n, 1].map(|x| V::Int(x as i64)));
    let grid = [(m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32, 1, 1];
    compare("matmul.py", "matmul_kernel", spec, warps, &vals, grid, target)
}

/// On sm_80 (and on sm_100a for tiles tcgen05 cannot take: 32 rows) the kernel runs `mma.sync` from registers
/// (operands converted to dot-operand layouts through shared memory), for each operand type it has a form for;
/// so does sm_90a on two warps, where wgmma (a warpgroup's instruction) cannot run: tutorial 03's 2-warp
/// configs. (`tests/auto_tcgen05.rs` runs the tiles tcgen05 takes.)
#[test]
fn matmul_on_mma_sync_matches_the_interpreter() {
    let cases = [(F16, (64, 64, 32), 4, Target::Sm80), (ScalarType::BF16, (128, 64, 32), 8, Target::Sm80)];
    let cases = cases.into_iter().chain([(F32, (64, 32, 16), 4, Target::Sm80), (F16, (32, 64, 32), 4, Target::Sm100a)]);
    let cases = cases.chain([(F16, (64, 32, 32), 2, Target::Sm90a), (F16, (32, 64, 32), 2, Target::Sm90a)]);
    for (t, tile, warps, target) in cases {
        let err = matmul_case(t, tile, warps, target);
        // tf32 operands keep 10 mantissa bits: the output (fp16) differs from the interpreter's rounding.
        assert!(err < 2e-3, "mma.sync matmul {t} {tile:?}: {err}");
    }
}

/// The same kernel on sm_90a runs `wgmma` (operands staged through NVMMA-swizzled shared memory); two
/// warpgroups and 128-row tiles exercise the warpgroup offsets.
#[test]
fn matmul_on_wgmma_matches_the_interpreter() {
    for (t, tile, warps) in [(F16, (64, 64, 32), 4), (F16, (128, 64, 64), 8), (ScalarType::BF16, (64, 128, 16), 4)] {
        let err = matmul_case(t, tile, warps, Target::Sm90a);
        assert!(err < 1e-3, "wgmma matmul {t} {tile:?}: {err}");
    }
}

/// With the specialization Triton's launcher gives real shapes (K and the leading dims divisible by 16, unit
/// strides constant), the loads are 16-byte vectors and the software pipeliner takes the loop: cp.async copies
/// two or three iterations ahead into rings, the wgmma asynchronous across iterations. Ragged M and N, K with a
/// partial last block, and a K of one block (fewer iterations than stages in flight). The simulator lands each
/// copy as it is issued, so a missing wait cannot show here: the interpreter's pipeline test catches those.
#[test]
fn pipelined_matmul_on_wgmma_matches_the_interpreter() {
    for (k, stages, tile, warps) in
        [(208, 3, (64, 64, 32), 4), (32, 3, (64, 64, 32), 4), (160, 2, (64, 64, 32), 4), (176, 4, (128, 64, 32), 8)]
    {
        let err = pipelined_matmul_case(F16, (130, 100, k), stages, tile, warps, Target::Sm90a);
        assert!(err < 1e-3, "pipelined wgmma matmul K={k} stages {stages} tile {tile:?}: {err}");
    }
}

/// The same specialization where the dot runs on `mma.sync` (sm_80, and two warps on sm_90a): the pipeliner
/// copies each operand tile into a ring swizzled for `ldmatrix`, and the dot reads its operands from there
/// (`ldmatrix`, `.trans` for B) instead of converting the loaded registers through shared memory. 16-bit types
/// take `ldmatrix`; tf32 and fp8 operands read the same rings with shared loads.
#[test]
fn pipelined_matmul_on_mma_sync_matches_the_interpreter() {
    let cases = [
        (F16, 208, 3, (64, 64, 32), 4, Target::Sm80),
        (ScalarType::BF16, 176, 4, (128, 64, 32), 8, Target::Sm80),
        (F16, 32, 3, (64, 64, 64), 4, Target::Sm80),
        (F32, 80, 3, (64, 32, 16), 4, Target::Sm80),
        (F16, 160, 5, (64, 32, 32), 2, Target::Sm90a),
        (F16, 96, 5, (32, 64, 32), 2, Target::Sm90a),
        (ScalarType::F8E4M3, 160, 3, (64, 32, 32), 2, Target::Sm90a),
    ];
    for (t, k, stages, tile, warps, target) in cases {
        let err = pipelined_matmul_case(t, (130, 112, k), stages, tile, warps, target);
        // tf32 operands keep 10 mantissa bits: the output (fp16) differs from the interpreter's rounding.
        assert!(err < 2e-3, "pipelined mma.sync matmul {t} K={k} stages {stages} tile {tile:?} on {target}: {err}");
    }
}

/// `matmul_kernel` on `t` operands of `m x k` and `k x n` specialized as Triton's launcher specializes real
/// shapes (K and the leading dims divisible by 16, unit strides constant; N too where it is): M and N ragged
/// against the tiles, K with a partial last block where `k` is not a multiple of `bk`. B's tiles are 16-byte
/// vectors (and so copied ahead) only where N is known divisible, as the kernel wraps its columns `% N`. Returns
/// the worst relative error against the interpreter.
fn pipelined_matmul_case(
    t: ScalarType,
    (m, n, k): (usize, usize, usize),
    stages: u32,
    (bm, bn, bk): (i64, i64, i64),
    warps: u32,
    target: Target,
) -> f64 {
    let (lda, ldb) = (k, n.next_multiple_of(16));
    let mut spec = vec![ptr(t), ptr(t), ptr(F16), int(false), int(n % 16 == 0), int(true)];
    spec.extend([int(true), c(1), int(true), c(1), int(true), c(1)]);
    spec.extend([c(bm), c(bn), c(bk), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    let mut vals = vec![V::Buf(t, random(m * lda, 1, t)), V::Buf(t, random(k * ldb, 2, t))];
    vals.push(V::Out(F16, m * ldb));
    vals.extend([m, n, k, lda, ldb, ldb].map(|x| V::Int(x as i64)));
    let grid = [(m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32, 1, 1];
    compare_stages("matmul.py", "matmul_kernel", spec, warps, stages, &vals, grid, target)
}

/// The gluon matmul (`examples/gluon_matmul.py`): a hand-written double-buffered cp.async ring feeding an
/// asynchronous `warpgroup_mma`, its layouts and shared memory as the author wrote them. One 64x64x32 step
/// (one warpgroup), then ragged M with several K steps, and two warpgroups on 128x128x64 tiles.
#[test]
fn gluon_matmul_on_wgmma_matches_the_interpreter() {
    for (m, n, k, (bm, bn, bk), warps) in
        [(64, 64, 32, (64, 64, 32), 4), (100, 64, 160, (64, 64, 32), 4), (130, 128, 192, (128, 128, 64), 8)]
    {
        let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), int(false)];
        spec.extend((0..5).map(|_| int(true)));
        spec.extend([c(bm), c(bn), c(bk)]);
        let mut vals = vec![V::Buf(F16, random(m * k, 4, F16)), V::Buf(F16, random(k * n, 5, F16))];
        vals.push(V::Out(F16, m * n));
        vals.extend([m, n, k, k, n, n].map(|x| V::Int(x as i64)));
        let grid = [m.div_ceil(bm as usize) as u32, n.div_ceil(bn as usize) as u32, 1];
        let err = compare("gluon_matmul.py", "matmul_kernel", spec, warps, &vals, grid, Target::Sm90a);
        assert!(err < 1e-3, "gluon matmul {m}x{n}x{k}, tile {bm}x{bn}x{bk}: {err}");
    }
}

/// `_attn_fwd` on f16 (one batch, `h` heads of `n_ctx` x `d`, `bm` x `bn` tiles, `warps` warps) on sm_90a: the
/// worst relative error against the interpreter.
fn attention_case(h: usize, n_ctx: usize, d: usize, tiles: (usize, usize), causal: bool, warps: u32, seed: u64) -> f64 {
    attention_typed((F16, F16), h, n_ctx, d, tiles, causal, warps, seed)
}

/// [`attention_case`] with Q, K, V of type `t` and the output of type `out`.
#[allow(clippy::too_many_arguments)]
fn attention_typed(
    (t, out): (ScalarType, ScalarType),
    h: usize,
    n_ctx: usize,
    d: usize,
    (bm, bn): (usize, usize),
    causal: bool,
    warps: u32,
    seed: u64,
) -> f64 {
    let z = 1usize;
    let mut spec = vec![ptr(t), ptr(t), ptr(t), ArgSpec::Float(F32), ptr(F32), ptr(out)];
    spec.extend((0..16 + 3).map(|_| int(false)));
    spec.extend([c(d as i64), c(bm as i64), c(bn as i64), ArgSpec::Constexpr(ConstValue::Bool(causal))]);
    let len = z * h * n_ctx * d;
    let mut vals = vec![
        V::Buf(t, random(len, seed, t)),
        V::Buf(t, random(len, seed + 1, t)),
        V::Buf(t, random(len, seed + 2, t)),
        V::F32(0.125),
        V::Out(F32, z * h * n_ctx),
        V::Out(out, len),
    ];
    for _ in 0..4 {
        vals.extend([h * n_ctx * d, n_ctx * d, d, 1].map(|s| V::Int(s as i64)));
    }
    vals.extend([z, h, n_ctx].map(|x| V::Int(x as i64)));
    let grid = [n_ctx.div_ceil(bm) as u32, (z * h) as u32, 1];
    compare("flash_attention.py", "_attn_fwd", spec, warps, &vals, grid, Target::Sm90a)
}

/// At the tutorial's tile shapes both attention dots run on wgmma: Q and K from shared memory, P from registers
/// (in the dot-operand layout of the QK accumulator) with V from shared memory.
#[test]
fn flash_attention_on_wgmma_matches_the_interpreter() {
    let err = attention_case(1, 192, 64, (128, 64), true, 8, 7);
    assert!(err < 1e-3, "attention on wgmma: {err}");
}

/// fp8 (e5m2) attention on wgmma: P, cast to fp8 in the QK accumulator's layout, reaches the second dot's
/// register operand (four K elements to a register) through warp shuffles that carry four bytes each, its
/// words built from the pairs the f32 -> fp8 conversions produce; V is staged K-major for fp8's wgmma.
#[test]
fn fp8_flash_attention_on_wgmma_matches_the_interpreter() {
    use ScalarType::F8E5M2 as E5;
    for (causal, seed) in [(false, 21), (true, 22)] {
        let err = attention_typed((E5, F32), 1, 192, 64, (128, 64), causal, 8, seed);
        assert!(err < 1e-3, "fp8 attention on wgmma (causal = {causal}): {err}");
    }
}

/// Below 64 rows per program wgmma does not apply: both dots run on CUDA cores.
#[test]
fn flash_attention_matches_the_interpreter() {
    for causal in [false, true] {
        let err = attention_case(2, 64, 32, (32, 16), causal, 4, 3);
        // Multiply-add contraction (Triton's default) rounds `qk * qk_scale - m_ij` once instead of twice,
        // which moves a few fp16 outputs by one ulp (2^-11 relative): ~1e-5 overall, not an indexing error.
        assert!(err < 1e-4, "attention (causal = {causal}): {err}");
    }
}

/// Attention backward's inner loops (`tests/kernels/attn_bwd.py`) at head dim 64 on one warpgroup, pipelined with
/// 3 and 5 stages: the dk/dv loop with its row vectors in rings and four asynchronous wgmmas (the causal one too,
/// its mask's row offsets taken back from the ones stage 0 carries ahead), the dq loop with three. Two barriers per iteration (after the copy wait, before
/// the refill), every other access ordered by them: a missing one is a race here.
#[test]
fn attention_backward_on_wgmma_matches_the_interpreter() {
    let (heads, n_ctx) = (1usize, 128usize);
    let inputs = |seed: u64| {
        let len = heads * n_ctx * 64;
        let mut vals: Vec<V> = (0..4).map(|i| V::Buf(F16, random(len, seed + i, F16))).collect();
        let rows = random(heads * n_ctx, seed + 4, F32);
        vals.push(V::Buf(F32, rows.iter().map(|x| 16.0 + 4.0 * x).collect()));
        vals.push(V::Buf(F32, random(heads * n_ctx, seed + 5, F32)));
        vals
    };
    let grid = [(n_ctx / 64) as u32, heads as u32, 1];
    for stages in [3, 5] {
        for mask in [false, true] {
            let spec = common::attn_bwd_dkdv_spec(mask);
            let mut vals = inputs(21);
            vals.extend([V::Out(F16, heads * n_ctx * 64), V::Out(F16, heads * n_ctx * 64), V::F32(0.125)]);
            vals.push(V::Int(n_ctx as i64));
            let err =
                compare_stages("kernels/attn_bwd.py", "attn_bwd_dkdv", spec, 4, stages, &vals, grid, Target::Sm90a);
            assert!(err < 1e-3, "dk/dv (mask {mask}, {stages} stages): {err}");
        }
        let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(F32), ptr(F32), ptr(F16)];
        spec.extend([int(true), c(64), c(64), c(32)]);
        let mut vals = inputs(27);
        vals.extend([V::Out(F16, heads * n_ctx * 64), V::Int(n_ctx as i64)]);
        let err = compare_stages("kernels/attn_bwd.py", "attn_bwd_dq", spec, 4, stages, &vals, grid, Target::Sm90a);
        assert!(err < 1e-3, "dq ({stages} stages): {err}");
    }
}

#[test]
fn descriptor_transpose_matches_the_interpreter() {
    // x: M x N inside rows of LDX; y: N x M inside rows of LDY; ragged edges at both block sizes.
    let (m, n, ldx, ldy) = (37usize, 100usize, 104usize, 40usize);
    let desc = |t: ScalarType, block: &[u32]| ArgSpec::TensorDesc {
        elem: t,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let spec = vec![desc(F16, &[16, 32]), desc(F16, &[32, 16]), desc(F32, &[16]), ArgSpec::Float(F32)];
    let vals = vec![
        V::Buf(F16, random(m.div_ceil(16) * 16 * ldx, 6, F16)),
        V::Int(m as i64),
        V::Int(n as i64),
        V::Int(ldx as i64),
        V::Int(1),
        V::Out(F16, n * ldy),
        V::Int(n as i64),
        V::Int(m as i64),
        V::Int(ldy as i64),
        V::Int(1),
        V::Out(F32, m),
        V::Int(m as i64),
        V::Int(1),
        V::F32(0.5),
    ];
    let err = compare(
        "descriptor_copy.py",
        "transpose_scale_kernel",
        spec,
        4,
        &vals,
        [m.div_ceil(16) as u32, 1, 1],
        // The pointer lowering of descriptor accesses (sm_80). On sm_90a they are TMA copies, which the simulator
        // does not model: bench/tma.sh checks those against the interpreter on the H100.
        Target::Sm80,
    );
    assert!(err < 1e-6, "transpose_scale: {err}");
}

/// Gluon's `warpgroup_mma` with A in registers (a tensor in `DotOperandLayout(0, <the accumulator>, 2)`) and B
/// in NVMMA-swizzled shared memory: `wgmma` with A as four packed registers per thread, against the interpreter.
const GLUON_RS: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma

@gluon.jit
def rs_kernel(a_ptr, b_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr):
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, N, 16])
    A_OP: gl.constexpr = gl.DotOperandLayout(0, ACC, 2)
    LOAD: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, M, layout=gl.SliceLayout(1, LOAD))
    k = gl.arange(0, K, layout=gl.SliceLayout(0, LOAD))
    a = gl.convert_layout(gl.load(a_ptr + r[:, None] * K + k[None, :]) * 2.0, A_OP)
    kb = gl.arange(0, K, layout=gl.SliceLayout(1, LOAD))
    n = gl.arange(0, N, layout=gl.SliceLayout(0, LOAD))
    b = gl.load(b_ptr + kb[:, None] * N + n[None, :])
    b_smem = gl.allocate_shared_memory(gl.float16, [K, N], gl.NVMMASharedLayout.get_default_for([K, N], gl.float16), b)
    fence_async_shared()
    acc = warpgroup_mma(a, b_smem, gl.zeros([M, N], gl.float32, ACC))
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, ACC))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, ACC))
    gl.store(c_ptr + rc[:, None] * N + nc[None, :], acc)
"#;

/// The same with fp8: A in `DotOperandLayout(0, <the accumulator>, 4)` (four K elements to a register), B staged
/// K-major as [N, K] and read through a permuted view, as fp8 wgmma needs.
const GLUON_RS8: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma

@gluon.jit
def rs8_kernel(a_ptr, bt_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr):
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, N, 32])
    A_OP: gl.constexpr = gl.DotOperandLayout(0, ACC, 4)
    LOAD: gl.constexpr = gl.BlockedLayout([1, 16], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, M, layout=gl.SliceLayout(1, LOAD))
    k = gl.arange(0, K, layout=gl.SliceLayout(0, LOAD))
    a = gl.convert_layout(gl.load(a_ptr + r[:, None] * K + k[None, :]), A_OP)
    nb = gl.arange(0, N, layout=gl.SliceLayout(1, LOAD))
    bt = gl.load(bt_ptr + nb[:, None] * K + k[None, :])
    layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([N, K], gl.float8e5)
    bt_smem = gl.allocate_shared_memory(gl.float8e5, [N, K], layout, bt)
    fence_async_shared()
    acc = warpgroup_mma(a, bt_smem.permute((1, 0)), gl.zeros([M, N], gl.float32, ACC))
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, ACC))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, ACC))
    gl.store(c_ptr + rc[:, None] * N + nc[None, :], acc)
"#;

#[test]
fn gluon_wgmma_with_a_in_registers_matches_the_interpreter() {
    for (m, n, k, warps) in [(64, 64, 32, 4), (128, 64, 64, 8)] {
        let spec = vec![ptr(F16), ptr(F16), ptr(F32), c(m as i64), c(n as i64), c(k as i64)];
        let vals = [V::Buf(F16, random(m * k, 8, F16)), V::Buf(F16, random(k * n, 9, F16)), V::Out(F32, m * n)];
        let opts = RunOptions { file: "rs.py", target: Target::Sm90a, num_warps: warps, num_stages: 3, poison: true };
        let outs = run_on(GLUON_RS, "rs_kernel", spec, &opts, &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(outs.len(), 1);
        for (got, want) in outs {
            assert_eq!(got.len(), m * n);
            let err = tessel::tile::testing::rel_err(&got, &want);
            assert!(err < 1e-6, "{m}x{n}x{k} on {warps} warps: {err}");
        }
    }
    // fp8 (e5m2) A in registers, packed four to a register; B from [N, K] through a permuted view.
    use ScalarType::F8E5M2 as E5;
    for (m, n, k, warps) in [(64, 64, 32, 4), (128, 128, 64, 8)] {
        let spec = vec![ptr(E5), ptr(E5), ptr(F32), c(m as i64), c(n as i64), c(k as i64)];
        let vals = [V::Buf(E5, random(m * k, 10, E5)), V::Buf(E5, random(n * k, 11, E5)), V::Out(F32, m * n)];
        let opts = RunOptions { file: "rs8.py", target: Target::Sm90a, num_warps: warps, num_stages: 3, poison: true };
        let outs = run_on(GLUON_RS8, "rs8_kernel", spec, &opts, &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
        for (got, want) in outs {
            let err = tessel::tile::testing::rel_err(&got, &want);
            assert!(err < 1e-6, "fp8 {m}x{n}x{k} on {warps} warps: {err}");
        }
    }
}

/// Shared-memory views in gluon: a transposed, a sliced and a reshaped view of one NVMMA-swizzled buffer read
/// back into registers, and a K-major buffer permuted into wgmma's B (C = A @ Bt^T), against the interpreter.
const GLUON_VIEWS: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma

@gluon.jit
def views_kernel(x_ptr, t_ptr, s_ptr, q_ptr, b_ptr, M: gl.constexpr, N: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))
    x = gl.load(x_ptr + r[:, None] * N + c[None, :])
    smem = gl.allocate_shared_memory(gl.float16, [M, N], gl.NVMMASharedLayout.get_default_for([M, N], gl.float16), x)
    tr = gl.arange(0, N, layout=gl.SliceLayout(1, L))
    tc = gl.arange(0, M, layout=gl.SliceLayout(0, L))
    gl.store(t_ptr + tr[:, None] * M + tc[None, :], smem.permute((1, 0)).load(L))
    h = gl.arange(0, M // 2, layout=gl.SliceLayout(1, L))
    gl.store(s_ptr + h[:, None] * N + c[None, :], smem.slice(M // 2, M // 2).load(L))
    gl.store(q_ptr + h[:, None] * N + c[None, :], smem.reshape([2, M // 2, N]).index(1).load(L))
    b = smem._reinterpret(gl.int16, [M, N], gl.SwizzledSharedLayout(1, 1, 1, [1, 0])).load(L)
    gl.store(b_ptr + r[:, None] * N + c[None, :], b)

@gluon.jit
def bt_kernel(a_ptr, bt_ptr, c_ptr, M: gl.constexpr, N: gl.constexpr, K: gl.constexpr):
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, N, 16])
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    r = gl.arange(0, M, layout=gl.SliceLayout(1, L))
    n = gl.arange(0, N, layout=gl.SliceLayout(1, L))
    k = gl.arange(0, K, layout=gl.SliceLayout(0, L))
    a = gl.load(a_ptr + r[:, None] * K + k[None, :])
    bt = gl.load(bt_ptr + n[:, None] * K + k[None, :])
    a_smem = gl.allocate_shared_memory(gl.float16, [M, K], gl.NVMMASharedLayout.get_default_for([M, K], gl.float16), a)
    bt_smem = gl.allocate_shared_memory(gl.float16, [N, K], gl.NVMMASharedLayout.get_default_for([N, K], gl.float16), bt)
    fence_async_shared()
    acc = warpgroup_mma(a_smem, bt_smem.permute((1, 0)), gl.zeros([M, N], gl.float32, ACC))
    rc = gl.arange(0, M, layout=gl.SliceLayout(1, ACC))
    nc = gl.arange(0, N, layout=gl.SliceLayout(0, ACC))
    gl.store(c_ptr + rc[:, None] * N + nc[None, :], acc)
"#;

#[test]
fn gluon_shared_memory_views_match_the_interpreter() {
    let opts =
        |warps| RunOptions { file: "views.py", target: Target::Sm90a, num_warps: warps, num_stages: 3, poison: true };
    let (m, n) = (64usize, 64usize);
    let spec = vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(ScalarType::I16), c(m as i64), c(n as i64)];
    let vals = [
        V::Buf(F16, random(m * n, 3, F16)),
        V::Out(F16, m * n),
        V::Out(F16, m * n / 2),
        V::Out(F16, m * n / 2),
        V::Out(ScalarType::I16, m * n),
    ];
    let outs = run_on(GLUON_VIEWS, "views_kernel", spec, &opts(4), &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outs.len(), 4);
    for (got, want) in outs {
        assert_eq!(got, want, "a view read other bytes than the interpreter's");
    }
    for (m, n, k, warps) in [(64, 64, 64, 4), (128, 128, 64, 8)] {
        let spec = vec![ptr(F16), ptr(F16), ptr(F32), c(m as i64), c(n as i64), c(k as i64)];
        let vals = [V::Buf(F16, random(m * k, 6, F16)), V::Buf(F16, random(n * k, 7, F16)), V::Out(F32, m * n)];
        let outs =
            run_on(GLUON_VIEWS, "bt_kernel", spec, &opts(warps), &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
        for (got, want) in outs {
            let err = tessel::tile::testing::rel_err(&got, &want);
            assert!(err < 1e-6, "A @ Bt^T {m}x{n}x{k}: {err}");
        }
    }
}

/// An asynchronous wgmma's result entering a loop in flight, and a tile loop carrying the accumulator that each
/// tile's first K step discards through a runtime `use_acc` (wgmma's scale-d predicate, which the simulator must
/// honour: accumulating instead leaves every tile but the first wrong) (`tests/kernels/gluon_wgmma_loop.py`;
/// `examples_ptx` checks that no copy reads it): 3 tiles of 4 K steps.
#[test]
fn an_in_flight_wgmma_entering_a_loop_matches_the_interpreter() {
    let (m, n, k) = (64usize, 128usize, 32usize);
    let spec = vec![ptr(F16), ptr(F16), ptr(F32), int(false), int(false), c(m as i64), c(n as i64), c(k as i64)];
    let vals = [
        V::Buf(F16, random(m * k, 21, F16)),
        V::Buf(F16, random(k * n, 22, F16)),
        V::Out(F32, 3 * m * n),
        V::Int(3),
        V::Int(4),
    ];
    let err = compare("kernels/gluon_wgmma_loop.py", "wgmma_into_loop", spec, 4, &vals, [1, 1, 1], Target::Sm90a);
    assert!(err < 1e-6, "{err}");
}

/// The attention example's register shuffles, compiled the whole way: halves split along N, given a layout of
/// their own, joined back (the new dim in the first register bit) and renamed into the original register order
/// (`convert_layout(..., assert_trivial=True)`); and its row sums, a reduction of two tensors whose combine packs
/// the scalar pairs into a `[2]` tensor for `add2` and splits the sums back into scalars.
const GLUON_SPLIT_JOIN: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia import blackwell as bw

@gluon.jit
def _combine_add2(a, b, c, d):
    parent: gl.constexpr = gl.BlockedLayout([1, 2], [1, 32], [1, gl.num_warps()], [1, 0])
    lanes = gl.arange(0, 2, layout=gl.SliceLayout(0, parent))
    lhs = gl.where(lanes == 0, a, b)
    rhs = gl.where(lanes == 0, c, d)
    return gl.split(bw.add2(lhs, rhs))

@gluon.jit
def split_join(X, Y, S):
    L: gl.constexpr = gl.BlockedLayout([1, 64], [32, 1], [4, 1], [1, 0])
    HL: gl.constexpr = gl.BlockedLayout([1, 32], [32, 1], [4, 1], [1, 0])
    r = gl.arange(0, 128, layout=gl.SliceLayout(1, L))
    c = gl.arange(0, 64, layout=gl.SliceLayout(0, L))
    x = gl.load(X + r[:, None] * 64 + c[None, :])
    lo, hi = x.reshape([128, 2, 32]).permute(0, 2, 1).split()
    lo = gl.convert_layout(lo, HL, assert_trivial=True) * 2.0
    hi = gl.convert_layout(hi, HL, assert_trivial=True)
    y = gl.join(lo, hi).permute(0, 2, 1).reshape([128, 64])
    gl.store(Y + r[:, None] * 64 + c[None, :], gl.convert_layout(y, L, assert_trivial=True))
    s0, s1 = gl.reduce((x, x * 3.0), axis=1, combine_fn=_combine_add2)
    gl.store(S + r, s0)
    gl.store(S + 128 + r, s1)
"#;

#[test]
fn gluon_split_join_and_pair_sums_match_the_interpreter() {
    let spec = vec![ptr(F32), ptr(F32), ptr(F32)];
    let vals = [V::Buf(F32, random(128 * 64, 12, F32)), V::Out(F32, 128 * 64), V::Out(F32, 256)];
    let opts = RunOptions { file: "split_join.py", target: Target::Sm90a, num_warps: 4, num_stages: 3, poison: true };
    let outs = run_on(GLUON_SPLIT_JOIN, "split_join", spec, &opts, &vals, [1, 1, 1]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outs.len(), 2);
    let (y, sums) = (&outs[0], &outs[1]);
    assert_eq!(y.0, y.1, "the register renaming moves every element exactly");
    let err = tessel::tile::testing::rel_err(&sums.0, &sums.1);
    assert!(err < 1e-5, "row sums (the simulator adds in another order): {err}");
}

/// `tma_matmul.py`'s `matmul_kernel` with `WARP_SPECIALIZE=True` on sm_90a (auto-mode warp specialization, as
/// `bench/ws_check.py` launches it: 8 warps, 3 stages): a producer issues the K loop's TMA copies into a ring of
/// mbarrier-tracked buffers, the kernel's warps run the wgmmas and release each slot, and the partitions meet
/// at named barriers. 128x128x64 tiles (a one-warp producer) and 128x256x64 (a producer warpgroup with register
/// reallocation), ragged M, N and K (16-byte rows, TMA's rule), a K loop that wraps the ring, several programs.
#[test]
fn warp_specialized_tma_matmul_matches_the_interpreter() {
    for (m, n, k, (bm, bn, bk), grid_tiles) in
        [(130, 200, 328, (128u32, 128u32, 64u32), 4), (70, 264, 136, (128, 256, 64), 2)]
    {
        let desc = |block: [u32; 2]| ArgSpec::TensorDesc {
            elem: F16,
            block_shape: block.to_vec(),
            padding_nan: false,
            layout: None,
        };
        let mut spec = vec![desc([bm, bk]), desc([bk, bn]), desc([bm, bn]), int(false), int(false), int(false), c(4)];
        spec.push(ArgSpec::Constexpr(ConstValue::Bool(true)));
        let vals = [
            V::Desc(F16, Some(random(m * k, 11, F16)), vec![m as u32, k as u32]),
            V::Desc(F16, Some(random(k * n, 12, F16)), vec![k as u32, n as u32]),
            V::Desc(F16, None, vec![m as u32, n as u32]),
            V::Int(m as i64),
            V::Int(n as i64),
            V::Int(k as i64),
        ];
        assert_eq!(grid_tiles, m.div_ceil(bm as usize) * n.div_ceil(bn as usize));
        let err = compare("tma_matmul.py", "matmul_kernel", spec, 8, &vals, [grid_tiles as u32, 1, 1], Target::Sm90a);
        assert!(err < 1e-3, "warp-specialized TMA matmul {m}x{n}x{k}, {bm}x{bn}x{bk}: {err}");
    }
}

/// The warp-specialized TMA matmul's PTX broken two ways, each refused by the simulator: the default
/// partition's first wait for a filled ring slot taken out (its wgmma reads what the producer's copy wrote with
/// nothing ordering the two: a race naming the copy's mbarrier), and the join's named barrier counting a warp
/// more than the CTA has (a deadlock naming the waiting warps, the barrier and who arrived).
#[test]
fn a_broken_warp_specialized_tma_matmul_is_refused() {
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tma_matmul.py")).unwrap();
    let desc = |block: [u32; 2]| ArgSpec::TensorDesc {
        elem: F16,
        block_shape: block.to_vec(),
        padding_nan: false,
        layout: None,
    };
    let mut spec = vec![desc([128, 64]), desc([64, 128]), desc([128, 128]), int(false), int(false), int(false), c(4)];
    spec.push(ArgSpec::Constexpr(ConstValue::Bool(true)));
    let (m, n, k) = (128u32, 128u32, 192u32);
    let vals = [
        V::Desc(F16, Some(random((m * k) as usize, 21, F16)), vec![m, k]),
        V::Desc(F16, Some(random((k * n) as usize, 22, F16)), vec![k, n]),
        V::Desc(F16, None, vec![m, n]),
        V::Int(m as i64),
        V::Int(n as i64),
        V::Int(k as i64),
    ];
    let opts = RunOptions { file: "tma_matmul.py", target: Target::Sm90a, num_warps: 8, num_stages: 3, poison: true };
    let run = |edit: &dyn Fn(&str) -> String| {
        simulate_broken(&source, "matmul_kernel", spec.clone(), &opts, &vals, [1, 1, 1], edit)
    };
    assert_eq!(run(&|p| p.to_string()), Ok(()), "the unbroken PTX");
    // The default partition's first `try_wait` answers true at once.
    let no_wait = |ptx: &str| skip_wait(ptx, "\n$L_ws_default", 0);
    let err = run(&no_wait).unwrap_err();
    assert!(err.contains("reads what an asynchronous copy completing on the mbarrier at shared"), "{err}");
    assert!(err.contains("without a barrier between"), "{err}");
    // The join (the last `bar.arrive ID, COUNT`, the workers' arrival) and its `bar.sync` count 32 threads more.
    let overcount = |ptx: &str| {
        let at = ptx.rfind("bar.arrive ").expect("the workers' arrival at the join") + "bar.arrive ".len();
        let join = &ptx[at..at + ptx[at..].find(';').unwrap()];
        let (id, count) = join.split_once(", ").unwrap();
        let more = format!("{id}, {}", count.parse::<u32>().unwrap() + 32);
        ptx.replace(&format!("bar.arrive {join};"), &format!("bar.arrive {more};"))
            .replace(&format!("bar.sync {join};"), &format!("bar.sync {more};"))
    };
    let err = run(&overcount).unwrap_err();
    assert!(err.contains("deadlock"), "{err}");
    assert!(
        err.contains("warps 0-7 at line")
            && err.contains("named barrier 3 (`bar.sync`), which counts 320 threads; 288 arrived (warps 0-8)"),
        "{err}"
    );
}

/// A public Gluon example (`python/examples/gluon` of triton-lang/triton, which this repository does not hold):
/// its path and source from the directory `TESSEL_GLUON_EXAMPLES` names, or `None` with a note when unset.
fn gluon_example(name: &str) -> Option<(String, String)> {
    sim_common::tutorial("TESSEL_GLUON_EXAMPLES", name)
}

/// A descriptor of `block` with `NVMMASharedLayout.get_default_for(block, elem)`, as the examples' host code
/// makes it.
fn nvmma_desc(elem: ScalarType, block: &[u32]) -> ArgSpec {
    let layout = Some(tessel::layouts::NvmmaSharedLayout::default_for(block, elem.bits()));
    ArgSpec::TensorDesc { elem, block_shape: block.to_vec(), padding_nan: false, layout }
}

/// Runs `kernel` of a Gluon example on sm_100a (4 warps, outputs poisoned) and asserts the simulator wrote every
/// output element the interpreter did, bit for bit.
fn example_agrees(file: &str, src: &str, kernel: &str, spec: Vec<ArgSpec>, vals: &[V], grid: u32, what: &str) {
    example_agrees_ordered(file, src, kernel, spec, vals, grid, what, MmaOrder::Isa)
}

/// [`example_agrees`] with the interpreter holding the kernel's tcgen05 ops to `order`.
#[allow(clippy::too_many_arguments)]
fn example_agrees_ordered(
    file: &str,
    src: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    vals: &[V],
    grid: u32,
    what: &str,
    order: MmaOrder,
) {
    let opts = RunOptions { file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
    let outs = sim_common::run_on_ctas_ordered(src, kernel, spec, &opts, 1, vals, [grid, 1, 1], order)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    for (i, (sim, interp)) in outs.iter().enumerate() {
        assert!(interp.iter().all(|x| x.is_finite()), "{what}: output {i} has unwritten elements");
        let bad = (0..sim.len()).filter(|&j| sim[j] != interp[j]).count();
        assert_eq!(bad, 0, "{what}: output {i}: {bad} of {} elements differ from the interpreter's", sim.len());
    }
}

/// Example 01's `attention_kernel` at one CTA (`bench/gluon_example_cases.py`'s case: Z=H=1, N_CTX=1024, D=64,
/// fp16, BLOCK_M 256, 6 K/V buffers, 4 programs): a TMA load warp, an MMA warp, two softmax partitions, a
/// correction partition and the epilogue, S and O in tensor memory. Every element equal: the interpreter reduces
/// the row sums in the kernel's order (before it did, 6 of `o` and 35 of `M` were one unit in the last place apart,
/// measured by hand in the twenty-seventh session). The interpreter holds the MMAs to issue order
/// (`MmaOrder::Issue`), which the example relies on and the ISA does not promise (its default refuses it).
#[test]
fn warp_specialized_gluon_example_attention_matches_the_interpreter() {
    let Some((file, src)) = gluon_example("01-attention-forward.py") else { return };
    let (n, d) = (1024u32, 64u32);
    let mut spec = vec![ArgSpec::Float(F32), ptr(F32), int(false), int(false), int(false)];
    spec.extend([[128, d], [128, d], [128, d], [128, d]].map(|b| nvmma_desc(F16, &b)));
    spec.extend([c(256), c(128), c(d as i64), c(1), c(148), c(1), c(4)]);
    spec.extend([ArgSpec::Constexpr(ConstValue::Dtype(F16)), c(4), ArgSpec::Constexpr(ConstValue::Bool(false))]);
    spec.extend([c(6), ArgSpec::Constexpr(ConstValue::Bool(true)), ArgSpec::Constexpr(ConstValue::Tuple(vec![]))]);
    let qkv = |seed| V::Desc(F16, Some(random((n * d) as usize, seed, F16)), vec![n, d]);
    let vals = [V::F32(0.5), V::Out(F32, n as usize), V::Int(1), V::Int(1), V::Int(n as i64)];
    let vals: Vec<V> = vals.into_iter().chain([qkv(61), qkv(62), qkv(63), V::Desc(F16, None, vec![n, d])]).collect();
    let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
    // Its MMA warp issues the next S over the P an earlier P V may still read, with no wait between: the ISA
    // orders two MMAs only into one accumulator, and the interpreter says so by default.
    let err = run_on(&src, "attention_kernel", spec.clone(), &opts, &vals, [4, 1, 1]).unwrap_err();
    assert!(err.contains("writes tensor-memory cells that the earlier tcgen05_mma into"), "{err}");
    // The example relies on the tensor cores running one thread's MMAs in issue order, as the simulator does.
    let outs =
        sim_common::run_on_ctas_ordered(&src, "attention_kernel", spec, &opts, 1, &vals, [4, 1, 1], MmaOrder::Issue)
            .unwrap_or_else(|e| panic!("{e}"));
    // The example stores the row statistics `M` of the first 128 rows of each 256-row tile only (both correction
    // calls store `arange(0, SPLIT_M)`), so half of `M` stays poisoned: on both sides at the same elements.
    let [(m_sim, m_interp), (o_sim, o_interp)] = [&outs[0], &outs[1]];
    assert_eq!(m_interp.iter().filter(|x| x.is_finite()).count(), n as usize / 2, "the rows of `M` written");
    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
    assert!(m_sim.iter().zip(m_interp).all(|(&a, &b)| same(a, b)), "`M` differs from the interpreter's");
    assert!(o_interp.iter().all(|x| x.is_finite()), "unwritten elements of `o`");
    let bad = o_sim.iter().zip(o_interp).filter(|(a, b)| a != b).count();
    assert_eq!(bad, 0, "{bad} of {} elements of `o` differ from the interpreter's", o_sim.len());
}

/// Example 03's `_matmul_kernel` at one CTA (`bench/gluon_example_cases.py`'s case: 100x200x200, 128x128x64
/// blocks, 2 stages, an epilogue 32 columns wide, 2 programs): a TMA load warp, an MMA warp, the epilogue
/// partitions and cluster launch control's scheduler, meeting at mbarriers.
#[test]
fn warp_specialized_gluon_example_matmul_matches_the_interpreter() {
    let Some((file, src)) = gluon_example("03-matmul-multicta.py") else { return };
    let (m, n, k) = (100u32, 200u32, 200u32);
    let mut spec = vec![nvmma_desc(F16, &[128, 64]), nvmma_desc(F16, &[64, 128]), nvmma_desc(F16, &[128, 32])];
    spec.extend([int(false), int(false), int(false)]);
    spec.extend([c(128), c(128), c(64), c(0), c(8), c(2), c(2)]);
    spec.extend([ArgSpec::Constexpr(ConstValue::Tuple(vec![])), c(32), c(4)]);
    let vals = [
        V::Desc(F16, Some(random((m * k) as usize, 31, F16)), vec![m, k]),
        V::Desc(F16, Some(random((k * n) as usize, 32, F16)), vec![k, n]),
        V::Desc(F16, None, vec![m, n]),
        V::Int(m as i64),
        V::Int(n as i64),
        V::Int(k as i64),
    ];
    example_agrees(&file, &src, "_matmul_kernel", spec, &vals, 2, "example 03 _matmul_kernel, 1 CTA");
}

/// Example 04's `mma_scaled_warp_specialized_kernel` at one CTA (`bench/gluon_example_cases.py`'s cases: 256x256x640,
/// BLOCK_N 128, an epilogue 64 wide, 5 buffers, 4 programs): mxfp8 under cluster launch control's scheduler and
/// the static persistent one, mxfp4 and nvfp4 under the static one. A TMA load warp, an MMA warp issuing
/// block-scaled MMAs whose scales tcgen05.cp copies into tensor memory, the epilogue in the default partition.
/// Each K step copies its scales into the columns the previous step's MMA reads (the scales' tensor memory is
/// allocated in the loop: the same planned columns each step), with no wait between: the PTX ISA does not order
/// an MMA before a later `tcgen05.cp` (9.7.16.6.2), and the simulator says so when asked
/// (`check_copy_order(true)`), as does the interpreter under its default `MmaOrder::Isa`, naming the copy and the
/// MMA. Then, without those checks (the simulator's default, the interpreter's `MmaOrder::Issue`: the example
/// relies on the tensor cores running one thread's tcgen05 ops in issue order), the values equal.
#[test]
fn warp_specialized_gluon_example_mma_scaled_matches_the_interpreter() {
    use sim_common::scaled::{nvmma, packed_block, quantized, vec_size};
    let Some((file, src)) = gluon_example("04-2cta-block-scale-matmul.py") else { return };
    let (m, n, k) = (256u32, 256u32, 640u32);
    let cases = [
        ("mxfp8", "SCHEDULER_CLC"),
        ("mxfp8", "SCHEDULER_SPS"),
        ("mxfp4", "SCHEDULER_SPS"),
        ("nvfp4", "SCHEDULER_SPS"),
    ];
    for (fmt, scheduler) in cases {
        let (bn, epi_n, nbuf) = (128u32, 64u32, 5i64);
        let bk = if fmt == "mxfp8" { 128 } else { 256 };
        let per = if fmt == "mxfp8" { 1 } else { 2 };
        let vec = vec_size(fmt) as u32;
        let elem = if fmt == "mxfp8" { ScalarType::F8E4M3 } else { ScalarType::U8 };
        let scale_t = if fmt == "nvfp4" { ScalarType::F8E4M3 } else { ScalarType::U8 };
        let mut rng = tessel_math::testing::Rng::new(40 + bk as u64 + fmt.len() as u64);
        let (av, sa) = quantized(&mut rng, m as usize, k as usize, fmt);
        let (bv, sb) = quantized(&mut rng, n as usize, k as usize, fmt);
        let (rep_k, sk) = (bk / (vec * 4), k / vec);
        let unswizzled = nvmma("NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=8, rank=5)");
        let scales = |rows: u32| ArgSpec::TensorDesc {
            elem: scale_t,
            block_shape: vec![1, rows / 128, rep_k, 2, 256],
            padding_nan: false,
            layout: Some(unswizzled.clone()),
        };
        let mut spec = vec![nvmma_desc(elem, &[128, bk / per]), nvmma_desc(elem, &[bn, bk / per])];
        spec.extend([nvmma_desc(F16, &[128, epi_n]), scales(128), scales(bn)]);
        spec.extend([int(false), int(false), int(false), int(false)]);
        spec.extend([c(nbuf), c(128), c(bn as i64), c(bk as i64), c(epi_n as i64), c(2), c(0), c(4)]);
        spec.extend([
            ArgSpec::Constexpr(ConstValue::Tuple(vec![])),
            ArgSpec::Constexpr(ConstValue::Expr(scheduler.into())),
        ]);
        let scale_vals = |s: &[f64], rows: u32| {
            let shape = vec![1, rows / 128, sk.div_ceil(4), 2, 256];
            V::Desc(scale_t, Some(packed_block(s, rows as usize, sk as usize)), shape)
        };
        let vals = [
            V::Desc(elem, Some(av), vec![m, k / per]),
            V::Desc(elem, Some(bv), vec![n, k / per]),
            V::Desc(F16, None, vec![m, n]),
            scale_vals(&sa, m),
            scale_vals(&sb, n),
            V::Int(m as i64),
            V::Int(n as i64),
            V::Int(k as i64),
            V::Int(per as i64),
        ];
        let what = format!("example 04 mma_scaled_warp_specialized_kernel ({fmt}, {scheduler}), 1 CTA");
        sim_common::ptx_sim::check_copy_order(true);
        let opts = RunOptions { file: &file, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
        let err = run_on(&src, "mma_scaled_warp_specialized_kernel", spec.clone(), &opts, &vals, [4, 1, 1])
            .expect_err("the copy over scales an MMA in flight reads is reported");
        assert!(err.contains("tcgen05.cp writes lane") && err.contains("still reads"), "{what}: {err}");
        sim_common::ptx_sim::check_copy_order(false);
        let err = run_on(&src, "mma_scaled_warp_specialized_kernel", spec.clone(), &opts, &vals, [4, 1, 1])
            .err()
            .unwrap_or_else(|| panic!("{what}: the interpreter ran the copy over scales an MMA in flight reads"));
        assert!(sim_common::refuses_scale_copy_over_mma(&err), "{what}: {err}");
        example_agrees_ordered(
            &file,
            &src,
            "mma_scaled_warp_specialized_kernel",
            spec,
            &vals,
            4,
            &what,
            MmaOrder::Issue,
        );
    }
}
