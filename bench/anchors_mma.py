"""Tensor-core anchors for BENCHMARKS.md, measured in the same device run as tessel's numbers.

examples/matmul.py's kernel launched by upstream Triton on fp16 4096^3 with the tile configs tessel is timed at,
num_warps 8, num_stages 1 (no software pipelining: the apples-to-apples comparison until tessel pipelines) and 3
(Triton's tutorial default), plus torch.matmul (cuBLAS). TFLOP/s = 2*M*N*K / median time (do_bench: warm-up,
CUDA events, L2 cleared, median). Each result is checked against torch.matmul first.
"""
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import matmul  # noqa: E402


def tflops(ms, m, n, k):
    return 2 * m * n * k / (ms * 1e-3) / 1e12


def main():
    m = n = k = 4096
    torch.manual_seed(0)
    a = torch.randn((m, k), device="cuda", dtype=torch.float16)
    b = torch.randn((k, n), device="cuda", dtype=torch.float16)
    ref = torch.matmul(a, b)
    for bm, bn, bk in [(128, 128, 64), (128, 256, 64)]:
        for stages in [1, 3]:
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)

            def run():
                return matmul.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                           c.stride(0), c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                                           BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION="", num_warps=8,
                                           num_stages=stages)

            compiled = run()
            torch.testing.assert_close(c, ref, atol=1e-1, rtol=1e-2)
            dump = os.environ.get("TESSEL_DUMP_TRITON")
            if dump and compiled is not None:
                # Triton's PTX and cubin, to read its SASS beside tessel's (nvdisasm -c).
                base = os.path.join(dump, f"triton_mm_{bm}x{bn}x{bk}_s{stages}")
                with open(base + ".ptx", "w") as fh:
                    fh.write(compiled.asm["ptx"])
                with open(base + ".cubin", "wb") as fh:
                    fh.write(compiled.asm["cubin"])
            ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
            print(f"anchor triton matmul fp16 4096^3 {bm}x{bn}x{bk} warps 8 stages {stages}: "
                  f"median {ms:.4f} ms, {tflops(ms, m, n, k):.1f} TFLOP/s")
    ms = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=100, rep=1000, return_mode="median")
    print(f"anchor cublas (torch.matmul) fp16 4096^3: median {ms:.4f} ms, {tflops(ms, m, n, k):.1f} TFLOP/s")
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    sys.exit(main())
