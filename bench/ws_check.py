"""Auto-mode warp specialization (`tl.range(..., warp_specialize=True)`) on the GPU: correctness against float64 and
time against the same kernel in one partition.

    python -m tessel bench/ws_check.py [--quick] [--only matmul|attention]

Runs `examples/tma_matmul.py::matmul_kernel`, its `matmul_kernel_persistent` fused (`flatten=True`) and
`examples/flash_attention.py::_attn_fwd_tma` with WARP_SPECIALIZE on and off: each output starts poisoned (NaN), inputs are fresh random data, sizes are ragged where
the kernel allows, and the result is compared with a float64 reference. Then, unless `--quick` (what the
compute-sanitizer runs use), each pair is timed with `triton.testing.do_bench` at sizes where the loop is long,
beside cuBLAS for the matmul. Needs a GPU, torch and the tessel wheel.
"""

import argparse
import os
import sys

import torch

import triton
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import flash_attention  # noqa: E402
import tma_matmul  # noqa: E402


def matmul(a, b, ws, BM=128, BN=256, BK=64, stages=3, warps=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.full((M, N), float("nan"), device=a.device, dtype=a.dtype)
    descs = [TensorDescriptor.from_tensor(t, block_shape=s) for t, s in ((a, [BM, BK]), (b, [BK, BN]), (c, [BM, BN]))]
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN), )
    tma_matmul.matmul_kernel[grid](*descs, M, N, K, GROUP_M=8, WARP_SPECIALIZE=ws, num_stages=stages, num_warps=warps)
    return c


def persistent(a, b, ws, programs=132, BM=128, BN=256, BK=64, stages=3, warps=8):
    """`matmul_kernel_persistent` fused (`flatten=True`) over `programs` programs, split with `ws`."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.full((M, N), float("nan"), device=a.device, dtype=a.dtype)
    descs = [TensorDescriptor.from_tensor(t, block_shape=s) for t, s in ((a, [BM, BK]), (b, [BK, BN]), (c, [BM, BN]))]
    tma_matmul.matmul_kernel_persistent[(programs, )](*descs, M, N, K, GROUP_M=8, NUM_SMS=programs, FLATTEN=True,
                                                      WARP_SPECIALIZE=ws, num_stages=stages, num_warps=warps)
    return c


def attention(q, k, v, ws, BM=128, stages=3, kernel=None):
    """`kernel` (default `_attn_fwd_tma`, non-causal) takes `_attn_fwd_tma`'s arguments but STAGE."""
    Z, H, N, D = q.shape
    BN = min(D, 128)
    o = torch.full_like(q, float("nan"))
    M = torch.full((Z, H, N), float("nan"), device=q.device, dtype=torch.float32)
    y = Z * H * N
    desc = lambda t, rows: TensorDescriptor(t, shape=[y, D], strides=[D, 1], block_shape=[rows, D])
    grid = (N // BM, Z * H, 1)
    extra = {"STAGE": 1} if kernel is None else {}
    (kernel or flash_attention._attn_fwd_tma)[grid](D**-0.5, M, Z, H, desc(q, BM), desc(k, BN), desc(v, BN),
                                                    desc(o, BM), N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN,
                                                    WARP_SPECIALIZE=ws, num_warps=8, num_stages=stages, **extra)
    return o


def attention_ref(q, k, v):
    q, k, v = (t.double() for t in (q, k, v))
    p = torch.softmax(q @ k.transpose(-1, -2) * q.shape[-1]**-0.5, dim=-1)
    return p @ v


def check(name, got, want, atol, rtol):
    bad = ~torch.isclose(got.double(), want, atol=atol, rtol=rtol)
    n = int(bad.sum())
    err = (got.double() - want).abs().max().item()
    print(f"{name}: max |error| {err:.3e}, {n} elements off" + ("" if n == 0 else "  FAILED"))
    return n == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes, no timing")
    ap.add_argument("--profile", type=int, metavar="HEAD_DIM",
                    help="for ncu: attention at N=8192 once in one partition, then once warp-specialized")
    ap.add_argument("--only", choices=("matmul", "attention"), help="check and time one of the two kernels")
    args = ap.parse_args()
    torch.manual_seed(1)
    if args.profile:
        q, k, v = (torch.randn((4, 32, 8192, args.profile), device="cuda", dtype=torch.float16) for _ in range(3))
        for ws in (False, True):
            attention(q, k, v, ws)
        torch.cuda.synchronize()
        return
    ok = True
    sizes = [(1000, 776, 520), (136, 264, 8)] if args.quick else [(1000, 776, 520), (136, 264, 8), (2048, 2048, 4104)]
    for M, N, K in sizes if args.only != "attention" else []:
        a = torch.randn((M, K), device="cuda", dtype=torch.float16)
        b = torch.randn((K, N), device="cuda", dtype=torch.float16)
        want = a.double() @ b.double()
        for ws in (False, True):
            ok &= check(f"matmul {M}x{N}x{K} ws={ws}", matmul(a, b, ws), want, 2e-2, 1e-2)
        # Persistent and fused: few programs, so each walks several tiles (the producer crossing tile boundaries).
        for ws in (False, True):
            for programs in (3, 132):
                ok &= check(f"persistent fused {M}x{N}x{K} {programs} programs ws={ws}",
                            persistent(a, b, ws, programs), want, 2e-2, 1e-2)
    shapes = [(1, 2, 256, 64), (1, 2, 384, 128)] if args.quick else [(1, 2, 256, 64), (1, 2, 384, 128), (2, 4, 2048, 128)]
    for Z, H, N, D in shapes if args.only != "matmul" else []:
        q, k, v = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) for _ in range(3))
        want = attention_ref(q, k, v)
        for ws in (False, True):
            ok &= check(f"attention Z{Z} H{H} N{N} D{D} ws={ws}", attention(q, k, v, ws), want, 1e-2, 1e-2)
    if not ok:
        sys.exit("some results differ from float64")
    if args.quick:
        return
    for n in (4096, 8192) if args.only != "attention" else []:
        a = torch.randn((n, n), device="cuda", dtype=torch.float16)
        b = torch.randn((n, n), device="cuda", dtype=torch.float16)
        flops = 2 * n**3
        row = [f"matmul {n}^3 TFLOP/s"]
        for name, fn in (("cuBLAS", lambda: a @ b), ("one partition", lambda: matmul(a, b, False)),
                         ("warp-specialized", lambda: matmul(a, b, True)),
                         ("persistent fused", lambda: persistent(a, b, False)),
                         ("persistent fused, warp-specialized", lambda: persistent(a, b, True))):
            ms = triton.testing.do_bench(fn, warmup=100, rep=500)
            row.append(f"{name} {flops / ms * 1e-9:.0f}")
        print(" | ".join(row))
    for D in (64, 128) if args.only != "matmul" else []:
        Z, H, N = 4, 32, 8192
        q, k, v = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) for _ in range(3))
        flops = 4 * Z * H * N * N * D
        row = [f"attention fwd N{N} D{D} TFLOP/s"]
        for name, ws in (("one partition", False), ("warp-specialized", True)):
            ms = triton.testing.do_bench(lambda: attention(q, k, v, ws), warmup=100, rep=500)
            row.append(f"{name} {flops / ms * 1e-9:.0f}")
        print(" | ".join(row))


if __name__ == "__main__":
    main()
