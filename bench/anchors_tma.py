"""TMA matmul anchors for BENCHMARKS.md, measured in the same device run as tessel's numbers.

examples/tma_matmul.py's kernel (host TensorDescriptors; Triton lowers its desc.load/store to TMA too) launched by
upstream Triton on fp16 and bf16 M=N=K=4096 and 8192 at the tile configs tessel is timed at, num_warps 8, plus
torch.matmul (cuBLAS). TFLOP/s = 2*M*N*K / median time (do_bench: warm-up, CUDA events, L2 cleared, median).
Each result is checked against torch.matmul first. Usage: python3 bench/anchors_tma.py [SIZE...]

With --fp8: fp8 e4m3 inputs, fp16 output, through `matmul_kernel_bt` (B given as an N x K matrix, read transposed
by the dot: Hopper's 8-bit wgmma reads both operands K-major) at FP8_CONFIGS, plus cuBLAS through
torch._scaled_mm (unit scales, fp16 output); checked against the float32 product of the same fp8 values.
"""
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import tma_matmul  # noqa: E402

CONFIGS = [(128, 128, 64, 3), (128, 128, 64, 4), (128, 256, 64, 3)]


def tflops(ms, n):
    return 2 * n**3 / (ms * 1e-3) / 1e12


FP8_CONFIGS = [(128, 128, 128, 3), (128, 128, 128, 4), (128, 256, 128, 3), (128, 256, 128, 4)]


def fp8(sizes):
    from triton.tools.tensor_descriptor import TensorDescriptor
    torch.manual_seed(0)
    for n in sizes:
        a = torch.randn((n, n), device="cuda").to(torch.float8_e4m3fn)
        bt = torch.randn((n, n), device="cuda").to(torch.float8_e4m3fn)
        ref = a.float() @ bt.float().T
        c = torch.empty((n, n), device="cuda", dtype=torch.float16)
        for bm, bn, bk, stages in FP8_CONFIGS:
            da = TensorDescriptor.from_tensor(a, block_shape=[bm, bk])
            db = TensorDescriptor.from_tensor(bt, block_shape=[bn, bk])
            dc = TensorDescriptor.from_tensor(c, block_shape=[bm, bn])
            grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn), )

            def run():
                tma_matmul.matmul_kernel_bt[grid](da, db, dc, n, n, n, GROUP_M=8, num_warps=8, num_stages=stages)

            c.fill_(float("nan"))
            run()
            # Triton accumulates fp8 products with the tensor cores' reduced-precision adds (its default
            # max_num_imprecise_acc), so elements can be off by more than fp16 rounding: compare norms.
            err = ((c.float() - ref).norm() / ref.norm()).item()
            assert err < 1e-2, f"relative error {err}"
            ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
            print(f"anchor triton matmul_kernel_bt fp8e4m3->fp16 {n}^3 {bm}x{bn}x{bk} stages {stages}: "
                  f"median {ms:.4f} ms, {tflops(ms, n):.1f} TFLOP/s", flush=True)
        one = torch.ones((), device="cuda")
        mm = lambda: torch._scaled_mm(a, bt.T, scale_a=one, scale_b=one, out_dtype=torch.float16)  # noqa: E731
        err = ((mm().float() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, f"relative error {err}"
        ms = triton.testing.do_bench(mm, warmup=100, rep=1000, return_mode="median")
        print(f"anchor cublas torch._scaled_mm fp8e4m3->fp16 {n}^3: median {ms:.4f} ms, {tflops(ms, n):.1f} TFLOP/s")


def main():
    if "--fp8" in sys.argv:
        return fp8([int(s) for s in sys.argv[1:] if s != "--fp8"] or [8192])
    sizes = [int(s) for s in sys.argv[1:]] or [4096, 8192]
    torch.manual_seed(0)
    for dtype in (torch.float16, torch.bfloat16):
        name = "fp16" if dtype == torch.float16 else "bf16"
        for n in sizes:
            a = torch.randn((n, n), device="cuda", dtype=dtype)
            b = torch.randn((n, n), device="cuda", dtype=dtype)
            ref = torch.matmul(a, b)
            for bm, bn, bk, stages in CONFIGS:
                run = lambda: tma_matmul.matmul(a, b, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=stages)  # noqa: E731
                torch.testing.assert_close(run(), ref, atol=2e-1, rtol=2e-2)
                ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
                print(f"anchor triton tma_matmul {name} {n}^3 {bm}x{bn}x{bk} stages {stages}: median {ms:.4f} ms, "
                      f"{tflops(ms, n):.1f} TFLOP/s")
            ms = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=100, rep=1000, return_mode="median")
            print(f"anchor cublas {name} {n}^3: median {ms:.4f} ms, {tflops(ms, n):.1f} TFLOP/s")
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
