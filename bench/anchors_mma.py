"""Tensor-core anchors for BENCHMARKS.md, measured in the same device run as tessel's numbers.

examples/matmul.py's kernel launched by upstream Triton on fp16 4096^3 with the tile configs tessel is timed at,
num_warps 8, num_stages 1 (no software pipelining), 3 (Triton's tutorial default) and 4, plus torch.matmul (cuBLAS). TFLOP/s = 2*M*N*K / median time (do_bench: warm-up,
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
        for stages in [1, 3, 4]:
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
    attention_anchor()
    ms = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=100, rep=1000, return_mode="median")
    print(f"anchor cublas (torch.matmul) fp16 4096^3: median {ms:.4f} ms, {tflops(ms, m, n, k):.1f} TFLOP/s")
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")


def attention_anchor():
    import flash_attention
    z, h, n, d = 4, 32, 4096, 128
    q, k, v = (torch.randn((z, h, n, d), device="cuda", dtype=torch.float16) for _ in range(3))
    sm_scale = 0.0883883
    for causal in [False, True]:
        for stages in [1, 3]:
            m = torch.empty((z, h, n), device="cuda", dtype=torch.float32)
            o = torch.full_like(q, float("nan"))

            def run():
                flash_attention._attn_fwd[(n // 128, z * h)](
                    q, k, v, sm_scale, m, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(), z, h, n,
                    HEAD_DIM=d, BLOCK_M=128, BLOCK_N=64, CAUSAL=causal, num_warps=8, num_stages=stages)

            run()
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)
            torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2)
            ms = triton.testing.do_bench(run, warmup=25, rep=200, return_mode="median")
            flops = 4 * z * h * n * n * d / (2 if causal else 1)
            print(f"anchor triton attention fwd fp16 Z={z} H={h} N={n} D={d} causal={causal} 128x64 warps 8 "
                  f"stages {stages}: median {ms:.4f} ms, {flops / (ms * 1e-3) / 1e12:.1f} TFLOP/s")


if __name__ == "__main__":
    sys.exit(main())
