"""The kernels of the public Triton tutorials (python/tutorials 01-11), each with the configurations the tutorial
itself launches or autotunes over on an sm_90 GPU (and sm_100 for the Blackwell-only kernel), those it picks on a
capability-10 GPU (`Case.bw`, the harness's `--arch sm_100a`), and a small problem with a NumPy float64 reference. Sizes are small and leave partial tiles where the kernel masks; where a kernel
does not mask (grouped GEMM, attention), sizes are multiples of its blocks, as the tutorial requires.

Configurations Triton's own autotuner would drop on sm_90 are left out, and said so where they are: those whose
`tl.static_assert` fails (attention's BLOCK_N > HEAD_DIM) and those its `prune_configs_by` / `keep` remove.
"""

from __future__ import annotations

import numpy as np

from case_types import Case, Config, Gen, Problem, on_sm100
from cases_gemm import CASES_GEMM
from refs import TOL, cdiv, f64, randn


def next_pow2(n):
    return 1 << (n - 1).bit_length()


# --- 01 vector add ----------------------------------------------------------------------------------------------

def p_add(cfg, rng, n=3000):
    x, y = randn(rng, n, np.float32), randn(rng, n, np.float32)
    args = dict(x_ptr=x, y_ptr=y, output_ptr=np.zeros(n, np.float32), n_elements=n)
    return Problem((cdiv(n, cfg.consts["BLOCK_SIZE"]),), args,
                   lambda b: [("output_ptr", b["output_ptr"], f64(x) + f64(y), TOL["fp32"])])


C01 = Case("01-vector-add", "add_kernel", [Config("BLOCK_SIZE=1024", {"BLOCK_SIZE": 1024}, fast=True)], p_add)


# --- 02 fused softmax -------------------------------------------------------------------------------------------

def softmax_ref(x):
    x = f64(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def p_softmax(cfg, rng):
    n_cols = cfg.consts["BLOCK_SIZE"] * 3 // 4 + 13
    n_rows = 37
    x = randn(rng, (n_rows, n_cols), np.float32)
    args = dict(output_ptr=np.zeros_like(x), input_ptr=x, input_row_stride=n_cols, output_row_stride=n_cols,
                n_rows=n_rows, n_cols=n_cols)
    return Problem((8,), args, lambda b: [("output_ptr", b["output_ptr"], softmax_ref(x), TOL["fp32"])])


# softmax(x) launches BLOCK_SIZE = next_power_of_2(n_cols), num_warps=8, num_stages 4 (an H100's shared memory
# is over 200 KB) both as the constexpr and the launch option; the benchmark's n_cols run 256..25600.
C02 = Case("02-fused-softmax", "softmax_kernel", [
    Config(f"BLOCK_SIZE={bs}", {"BLOCK_SIZE": bs, "num_stages": 4}, num_warps=8, num_stages=4, fast=bs == 1024)
    for bs in (1024, 4096, 16384)  # n_cols = 781 (the test), 4096 and 12672 (the benchmark's largest)
], p_softmax)


# --- 03 matrix multiplication -----------------------------------------------------------------------------------

MATMUL03 = [  # (BM, BN, BK, GROUP_M, stages, warps): get_cuda_autotune_config()
    (128, 256, 64, 8, 3, 8), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4), (128, 64, 32, 8, 4, 4),
    (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4), (64, 32, 32, 8, 5, 2), (32, 64, 32, 8, 5, 2),
    (128, 256, 128, 8, 3, 8), (256, 128, 128, 8, 3, 8), (256, 64, 128, 8, 4, 4), (64, 256, 128, 8, 4, 4),
    (128, 128, 128, 8, 4, 4), (128, 64, 64, 8, 4, 4), (64, 128, 64, 8, 4, 4), (128, 32, 64, 8, 4, 4),
]


def leaky_relu(x):
    return np.where(x >= 0, x, 0.01 * x)


def p_matmul03(cfg, rng):
    M, N, K = 300, 200, 176
    fp8 = cfg.consts["_fp8"]
    c = np.zeros((M, N), np.float16)
    if fp8:  # a.to(float8_e5m2); b = b.T.to(float8_e5m2): b is K x N with strides (1, K)
        a, b = Gen(f"randn:{M}x{K}:fp8e5"), Gen(f"randn:{N}x{K}:fp8e5")
        strides_b = (1, K)
    else:
        a, b = (rng.random((M, K)) - 0.5).astype(np.float16), (rng.random((K, N)) - 0.5).astype(np.float16)
        strides_b = (N, 1)
    args = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K, stride_am=K, stride_ak=1, stride_bk=strides_b[0],
                stride_bn=strides_b[1], stride_cm=N, stride_cn=1)

    def check(bufs):
        A = f64(bufs["a_ptr"]).reshape(M, K)
        B = f64(bufs["b_ptr"]).reshape(N, K).T if fp8 else f64(bufs["b_ptr"]).reshape(K, N)
        want = A @ B
        if cfg.consts["ACTIVATION"] == "leaky_relu":
            want = leaky_relu(want)
        return [("c_ptr", bufs["c_ptr"], want, TOL["fp16"])]

    g = cfg.consts
    return Problem((cdiv(M, g["BLOCK_SIZE_M"]) * cdiv(N, g["BLOCK_SIZE_N"]),), args, check)


def matmul03_configs():
    out = []
    for fp8 in (False, True):
        for i, (bm, bn, bk, gm, s, w) in enumerate(MATMUL03):
            for act in ("", "leaky_relu") if (i == 2 and not fp8) else ("",):
                out.append(Config(f"{bm}x{bn}x{bk} s{s} w{w} {'e5m2' if fp8 else 'fp16'}{' ' + act if act else ''}",
                                  {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": gm,
                                   "ACTIVATION": act, "_fp8": fp8}, num_warps=w, num_stages=s,
                                  fast=(i == 2 and act == "leaky_relu")))
    return out


def matmul03_bw():
    """get_cuda_autotune_config() is the same list on every CUDA GPU, fp8 inputs included. Its two-warp
    configurations run on mma.sync in Triton 3.6 for sm_100 too (tcgen05 needs a warpgroup)."""
    out = on_sm100(matmul03_configs())
    for c in out:
        c.tcgen05 = c.num_warps >= 4
    return out


# The tutorial's 512 x 512 x 512 problem: every size and stride a multiple of 16.
C03 = Case("03-matrix-multiplication", "matmul_kernel", matmul03_configs(), p_matmul03,
           tut_ints=dict(M=512, N=512, K=512, stride_am=512, stride_bn=512, stride_cm=512), bw=matmul03_bw(),
           tc="tcgen05.mma")


# --- 04 low-memory dropout --------------------------------------------------------------------------------------

def p_dropout(cfg, rng, n=3000, p=0.5):
    x = randn(rng, n, np.float32)
    keep = (rng.random(n) > p).astype(np.int32)
    args = dict(x_ptr=x, x_keep_ptr=keep, output_ptr=np.zeros(n, np.float32), n_elements=n, p=p)
    want = np.where(keep != 0, f64(x) / (1 - p), 0.0)
    return Problem((cdiv(n, 1024),), args, lambda b: [("output_ptr", b["output_ptr"], want, TOL["fp32"])])


def philox_uniform(seed: int, offsets: np.ndarray) -> np.ndarray:
    """tl.rand(seed, offsets): philox4x32-10 keyed by the seed, counter (offset, 0, 0, 0), first word, mapped to
    [0, 1) as Triton's uint_to_uniform_float does."""
    m32 = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.uint64) & m32
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0 = np.uint64(seed & 0xFFFFFFFF)
    k1 = np.uint64((seed >> 32) & 0xFFFFFFFF)
    ra, rb = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    ka, kb = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
    for _ in range(10):
        p0, p2 = c0, c2
        hi_b, lo_b = (rb * p2) >> np.uint64(32), (rb * p2) & m32
        hi_a, lo_a = (ra * p0) >> np.uint64(32), (ra * p0) & m32
        c0 = hi_b ^ c1 ^ k0
        c2 = hi_a ^ c3 ^ k1
        c1, c3 = lo_b, lo_a
        k0, k1 = (k0 + ka) & m32, (k1 + kb) & m32
    x = c0.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def p_seeded_dropout(cfg, rng, n=3000, p=0.5, seed=123):
    x = randn(rng, n, np.float32)
    args = dict(x_ptr=x, output_ptr=np.zeros(n, np.float32), n_elements=n, p=p, seed=seed)
    keep = philox_uniform(seed, np.arange(n)) > np.float32(p)
    want = np.where(keep, f64(x) / (1 - p), 0.0)
    return Problem((cdiv(n, 1024),), args, lambda b: [("output_ptr", b["output_ptr"], want, TOL["fp32"])])


C04a = Case("04-low-memory-dropout", "_dropout", [Config("BLOCK_SIZE=1024", {"BLOCK_SIZE": 1024}, fast=True)],
            p_dropout)
C04b = Case("04-low-memory-dropout", "_seeded_dropout",
            [Config("BLOCK_SIZE=1024", {"BLOCK_SIZE": 1024}, fast=True)], p_seeded_dropout)


# --- 05 layer norm ----------------------------------------------------------------------------------------------

def ln_block(N, elem_bytes=2):
    return min(65536 // elem_bytes, next_pow2(N))


def ln_warps(block):
    return min(max(block // 256, 1), 8)


def ln_inputs(rng, M, N):
    x = (-2.3 + 0.5 * rng.standard_normal((M, N))).astype(np.float16)
    w = rng.random(N).astype(np.float16)
    b = rng.random(N).astype(np.float16)
    return x, w, b


def ln_forward(x, w, b, eps=1e-5):
    x = f64(x)
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + eps)
    return (x - mean[:, None]) * rstd[:, None] * f64(w) + f64(b), mean, rstd


def p_ln_fwd(cfg, rng):
    N = cfg.consts["_N"]
    M = 5
    x, w, b = ln_inputs(rng, M, N)
    y, mean, rstd = ln_forward(x, w, b)
    args = dict(X=x, Y=np.zeros_like(x), W=w, B=b, Mean=np.zeros(M, np.float32), Rstd=np.zeros(M, np.float32),
                stride=N, N=N, eps=1e-5)
    return Problem((M,), args, lambda bf: [("Y", bf["Y"], y, TOL["fp16"]), ("Mean", bf["Mean"], mean, TOL["fp32"]),
                                           ("Rstd", bf["Rstd"], rstd, 1e-4)])


def ln_group(N):
    g = 64
    if N <= 8192:
        g = 96
    if N <= 4096:
        g = 128
    if N <= 1024:
        g = 256
    return g


def ln_bwd_math(x, w, dy, mean, rstd):
    xhat = (f64(x) - f64(mean)[:, None]) * f64(rstd)[:, None]
    wdy = f64(w) * f64(dy)
    c1 = (xhat * wdy).mean(axis=1, keepdims=True)
    c2 = wdy.mean(axis=1, keepdims=True)
    dx = (wdy - (xhat * c1 + c2)) * f64(rstd)[:, None]
    return xhat, dx


def p_ln_bwd_dx(cfg, rng):
    N = cfg.consts["_N"]
    M = 300  # more rows than GROUP_SIZE_M: some partial-sum rows take two rows through the lock
    G = cfg.consts["GROUP_SIZE_M"]
    x, w, _ = ln_inputs(rng, M, N)
    dy = (0.1 * rng.standard_normal((M, N))).astype(np.float16)
    _, mean, rstd = ln_forward(x, w, w)
    mean, rstd = mean.astype(np.float32), rstd.astype(np.float32)
    xhat, dx = ln_bwd_math(x, w, dy, mean, rstd)
    dw = np.zeros((G, N))
    db = np.zeros((G, N))
    for r in range(M):
        dw[r % G] += f64(dy[r]) * xhat[r]
        db[r % G] += f64(dy[r])
    args = dict(DX=np.zeros_like(x), DY=dy, DW=np.zeros((G, N), np.float16), DB=np.zeros((G, N), np.float16), X=x,
                W=w, Mean=mean, Rstd=rstd, Lock=np.zeros(2 * G, np.int32), stride=N, N=N)
    return Problem((M,), args, lambda b: [("DX", b["DX"], dx, TOL["fp16"]), ("DW", b["DW"], dw, 5e-3),
                                          ("DB", b["DB"], db, 5e-3)])


def p_ln_bwd_dwdb(cfg, rng):
    N = cfg.consts["_N"]
    G = min(ln_group(N), 300)
    dw = (0.1 * rng.standard_normal((G, N))).astype(np.float16)
    db = (0.1 * rng.standard_normal((G, N))).astype(np.float16)
    args = dict(DW=dw, DB=db, FINAL_DW=np.zeros(N, np.float16), FINAL_DB=np.zeros(N, np.float16), M=G, N=N)
    return Problem((cdiv(N, 128),), args, lambda b: [("FINAL_DW", b["FINAL_DW"], f64(dw).sum(0), TOL["fp16"]),
                                                     ("FINAL_DB", b["FINAL_DB"], f64(db).sum(0), TOL["fp16"])])


# test_layer_norm(1151, 8192, fp16) and the benchmark's N = 512 * i, i in 2..31; shown: N = 1000 and 8192.
LN_N = (1000, 8192)
C05a = Case("05-layer-norm", "_layer_norm_fwd_fused", [
    Config(f"N={n} BLOCK_SIZE={ln_block(n)} w{ln_warps(ln_block(n))}", {"BLOCK_SIZE": ln_block(n), "_N": n},
           num_warps=ln_warps(ln_block(n)), fast=n == 1000) for n in LN_N], p_ln_fwd, tut_ints=dict(stride=8192, N=8192))
C05b = Case("05-layer-norm", "_layer_norm_bwd_dx_fused", [
    Config(f"N={n} BLOCK_SIZE_N={ln_block(n)} G={ln_group(n)} w{ln_warps(ln_block(n))}",
           {"BLOCK_SIZE_N": ln_block(n), "GROUP_SIZE_M": ln_group(n), "_N": n}, num_warps=ln_warps(ln_block(n)),
           fast=n == 1000) for n in LN_N], p_ln_bwd_dx, tut_ints=dict(stride=8192, N=8192))
C05c = Case("05-layer-norm", "_layer_norm_bwd_dwdb", [
    Config(f"N={n} 32x128", {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128, "_N": n}, fast=n == 1000) for n in LN_N],
    p_ln_bwd_dwdb)


# --- 07 extern functions ----------------------------------------------------------------------------------------

def p_asin(cfg, rng, n=3000):
    x = rng.random(n).astype(np.float32)
    args = dict(x_ptr=x, y_ptr=np.zeros(n, np.float32), n_elements=n)
    return Problem((cdiv(n, 1024),), args, lambda b: [("y_ptr", b["y_ptr"], np.arcsin(f64(x)), TOL["fp32"])])


C07 = Case("07-extern-functions", "asin_kernel", [Config("BLOCK_SIZE=1024", {"BLOCK_SIZE": 1024}, fast=True)],
           p_asin)


# --- 11 programmatic dependent launch ---------------------------------------------------------------------------

C11 = Case("11-programmatic-dependent-launch", "add_kernel", [
    Config(f"BLOCK_SIZE=1024 USE_GDC={g}", {"BLOCK_SIZE": 1024, "USE_GDC": g}, fast=g) for g in (True, False)],
    p_add)


# In tutorial order (the sort is stable: each tutorial's kernels keep their order).
CASES = sorted([C01, C02, C03, C04a, C04b, C05a, C05b, C05c, C07, C11] + CASES_GEMM, key=lambda c: c.tutorial)
