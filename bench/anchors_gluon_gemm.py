"""Anchors for the Gluon GEMM (bench/gluon_gemm.sh time): cuBLAS fp16 through torch.matmul, and upstream Triton 3.6
running examples/gluon/matmul.py's kernel source unmodified over the same CONFIGS (BM,BN,BK,STAGES,WARPS), one
program per SM. TFLOP/s = 2*N^3 / median time (triton.testing.do_bench: warm-up, CUDA events, L2 cleared, median).
Each Triton result is checked against torch.matmul first. Usage: python3 bench/anchors_gluon_gemm.py [SIZE...]
"""
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "gluon"))
import matmul as gluon_matmul  # noqa: E402


def tflops(ms, n):
    return 2 * n**3 / (ms * 1e-3) / 1e12


def main(sizes):
    torch.manual_seed(0)
    configs = [tuple(int(x) for x in c.split(",")) for c in os.environ.get("CONFIGS", "128,256,64,3,8").split()]
    for n in sizes:
        a = torch.randn((n, n), device="cuda", dtype=torch.float16)
        b = torch.randn((n, n), device="cuda", dtype=torch.float16)
        ref = a @ b
        ms = triton.testing.do_bench(lambda: a @ b, warmup=100, rep=1000, return_mode="median")
        print(f"anchor cublas fp16 {n}^3: median {ms:.4f} ms, {tflops(ms, n):.1f} TFLOP/s", flush=True)
        for bm, bn, bk, stages, warps in configs:
            try:
                run = lambda: gluon_matmul.matmul(a, b, bm, bn, bk, stages, 8, warps)  # noqa: E731
                err = ((run().float() - ref.float()).norm() / ref.float().norm()).item()
                assert err < 1e-2, f"relative error {err}"
                ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
                print(f"anchor triton gluon/matmul.py fp16 {n}^3 {bm}x{bn}x{bk} stages {stages} warps {warps}: "
                      f"median {ms:.4f} ms, {tflops(ms, n):.1f} TFLOP/s", flush=True)
            except Exception as e:  # report and go on: the cuBLAS anchor is the acceptance's
                print(f"anchor triton gluon/matmul.py {bm}x{bn}x{bk} s{stages} w{warps}: failed: "
                      f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [4096, 8192])
