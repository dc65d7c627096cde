"""`examples/tma_matmul.py`'s `matmul_kernel` (host `TensorDescriptor`s, TMA copies into a pipelined ring,
wgmma, a TMA store; with WARP_SPECIALIZE a producer warp issues the copies) at num_ctas = 1, 2 and 4, beside
torch.matmul (cuBLAS).

A tile is the program's: at num_ctas = 2 a 256x256 tile is two CTAs' 128x256 parts (A's rows and C split, B
whole in each CTA), a 128x256 tile two 128x128 parts (each CTA's part as square as the tile allows: B and
C split, A whole in each CTA). Each result is checked against torch's float64 product (C
NaN-poisoned first) and timed with triton.testing.do_bench (median, ms). Run it once per compiler in the same
device call: `python3 -m tessel bench/auto_clusters_tma.py tessel` for tessel, `python3
bench/auto_clusters_tma.py triton` for upstream Triton (the first argument labels the lines). A configuration a
compiler refuses is printed with its error and counted as a failure.
"""
import os
import sys

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from tma_matmul import matmul_kernel  # noqa: E402

label = sys.argv[1] if len(sys.argv) > 1 else "?"
torch.manual_seed(0)
fails = 0

# (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages, num_ctas, WARP_SPECIALIZE): the program's tile.
CONFIGS = [
    (128, 256, 64, 8, 3, 1, False),
    (128, 256, 64, 8, 3, 2, False),
    (256, 256, 64, 8, 3, 2, False),
    (128, 128, 64, 4, 4, 1, False),
    (256, 128, 64, 4, 4, 2, False),
    (256, 128, 64, 4, 4, 4, False),
    (128, 256, 64, 8, 3, 1, True),
    (256, 256, 64, 8, 3, 2, True),
    (256, 128, 64, 4, 4, 2, True),
]
SIZES = [(4096, 4096, 4096), (8192, 8192, 4096), (8192, 8192, 8192), (1000, 528, 320)]


def run_config(M, N, K, cfg, a, b, ref):
    global fails
    bm, bn, bk, warps, stages, ctas, ws = cfg
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    a_d = TensorDescriptor.from_tensor(a, [bm, bk])
    b_d = TensorDescriptor.from_tensor(b, [bk, bn])
    c_d = TensorDescriptor.from_tensor(c, [bm, bn])
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    run = lambda: matmul_kernel[grid](a_d, b_d, c_d, M, N, K, GROUP_M=8, WARP_SPECIALIZE=ws, num_warps=warps,
                                      num_stages=stages, num_ctas=ctas)
    run()
    torch.cuda.synchronize()
    ok = ((c.double() - ref).abs() / (1 + ref.abs())).max().item() < 1e-2
    ms = triton.testing.do_bench(run, warmup=50, rep=300)
    fails += 0 if ok else 1
    name = f"{M}x{N}x{K} {bm}x{bn}x{bk} w{warps} s{stages}{' ws' if ws else ''}"
    print(f"{label:8s} {name:37s} ctas={ctas} {'ok   ' if ok else 'WRONG'} {ms:8.4f} ms "
          f"{2 * M * N * K / ms * 1e-9:7.1f} TFLOP/s", flush=True)


for M, N, K in SIZES:
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    ms = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=50, rep=300)
    print(f"{label:8s} {f'{M}x{N}x{K} cuBLAS':37s}        {'':5s} {ms:8.4f} ms {2 * M * N * K / ms * 1e-9:7.1f} TFLOP/s",
          flush=True)
    for cfg in CONFIGS:
        try:
            run_config(M, N, K, cfg, a, b, ref)
        except Exception as e:  # upstream Triton may refuse a cluster configuration
            msg = str(e).strip().splitlines()
            print(f"{label:8s} {M}x{N}x{K} {cfg} {type(e).__name__}: {(msg[-1] if msg else '')[:160]}", flush=True)
            fails += 1
print(label, "FAILURES", fails)
