"""Blocked matrix multiplication with grouped tile ordering, autotuned over a handful of tile shapes.

Programs are ordered in groups of GROUP_M rows of C tiles so that consecutive programs reuse the same rows of A
and columns of B while they are still in L2.
"""

import itertools

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def is_cuda():
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def cuda_configs():
    shapes = [
        # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps)
        (128, 256, 64, 3, 8),
        (64, 256, 32, 4, 4),
        (128, 128, 32, 4, 4),
        (128, 64, 32, 4, 4),
        (64, 128, 32, 4, 4),
        (128, 32, 32, 4, 4),
        (64, 32, 32, 5, 2),
        (32, 64, 32, 5, 2),
    ]
    return [
        triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
        for m, n, k, s, w in shapes
    ]


def hip_configs():
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g, "waves_per_eu": wpe},
                      num_warps=nw, num_stages=2)
        for (bm, bn, bk), g, wpe, nw in itertools.product([(128, 256, 16), (256, 256, 16), (128, 128, 32)], [1, 4],
                                                          [0, 2], [4, 8])
        if not (bm == 256 and nw == 4)
    ]


def get_autotune_config():
    return cuda_configs() if is_cuda() else hip_configs()


@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,  #
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  #
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    # Tile (tile_m, tile_n) of C for this program, walking GROUP_M tile rows at a time.
    pid = tl.program_id(axis=0)
    tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    group_first_m = (pid // per_group) * GROUP_M
    rows_in_group = min(tiles_m - group_first_m, GROUP_M)
    tile_m = group_first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group
    tl.assume(tile_m >= 0 and tile_n >= 0)
    tl.assume(stride_am > 0)

    rm = (tile_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (tile_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    c = acc.to(tl.float16)

    cm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + stride_cm * cm[:, None] + stride_cn * cn[None, :], c, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


def matmul(a, b, activation=""):
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    assert a.is_contiguous(), "Matrix A must be contiguous"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), )
    matmul_kernel[grid](
        a, b, c,  #
        M, N, K,  #
        a.stride(0), a.stride(1),  #
        b.stride(0), b.stride(1),  #
        c.stride(0), c.stride(1),  #
        ACTIVATION=activation,  #
    )
    return c


torch.manual_seed(0)
a = torch.rand((512, 512), device=DEVICE, dtype=torch.float16) - 0.5
b = torch.rand((512, 512), device=DEVICE, dtype=torch.float16) - 0.5
triton_output = matmul(a, b)
torch_output = torch.matmul(a, b)
rtol = 1e-2 if is_cuda() else 0
if torch.allclose(triton_output, torch_output, atol=1e-2, rtol=rtol):
    print("✅ triton matches torch")
else:
    print(f"❌ max difference {(triton_output - torch_output).abs().max().item():.4f}")

TORCH_HAS_FP8 = hasattr(torch, "float8_e5m2")
ref_lib = "cuBLAS" if is_cuda() else "rocBLAS"

configs = []
for fp8_inputs in [False, True]:
    if fp8_inputs and (not TORCH_HAS_FP8 or not is_cuda()):
        continue
    configs.append(
        triton.testing.Benchmark(
            x_names=["M", "N", "K"],
            x_vals=[128 * i for i in range(2, 33)],
            line_arg="provider",
            line_vals=["triton"] if fp8_inputs else [ref_lib.lower(), "triton"],
            line_names=["Triton"] if fp8_inputs else [ref_lib, "Triton"],
            styles=[("green", "-"), ("blue", "-")],
            ylabel="TFLOPS",
            plot_name="matmul-performance-" + ("fp16" if not fp8_inputs else "fp8"),
            args={"fp8_inputs": fp8_inputs},
        ))


@triton.testing.perf_report(configs)
def benchmark(M, N, K, provider, fp8_inputs):
    a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
    b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
    if TORCH_HAS_FP8 and fp8_inputs:
        a = a.to(torch.float8_e5m2)
        b = b.T
        b = b.to(torch.float8_e5m2)
    quantiles = [0.5, 0.2, 0.8]
    if provider == ref_lib.lower():
        ms, min_ms, max_ms = triton.testing.do_bench(lambda: torch.matmul(a, b), quantiles=quantiles)
    if provider == "triton":
        ms, min_ms, max_ms = triton.testing.do_bench(lambda: matmul(a, b), quantiles=quantiles)
    perf = lambda ms: 2 * M * N * K * 1e-12 / (ms * 1e-3)
    return perf(ms), perf(max_ms), perf(min_ms)


benchmark.run(show_plots=False, print_data=True)
