"""Anchors for BENCHMARKS.md, measured in the same device run as tessel's own numbers.

Memory-bound kernels are reported in GB/s = bytes moved (each input read once, each output written once) /
median time. Times come from triton.testing.do_bench (CUDA events, warm-up, median), inputs are random, and
each kernel's result is checked against PyTorch before it is timed.
"""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def gbps(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


def main():
    n = 1 << 28
    x = torch.rand(n, device="cuda", dtype=torch.float32)
    y = torch.rand(n, device="cuda", dtype=torch.float32)
    out = torch.full_like(x, float("nan"))
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
    torch.testing.assert_close(out, x + y)
    ms_add = triton.testing.do_bench(lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024),
                                     warmup=100, rep=1000, return_mode="median")
    dst = torch.empty_like(x)
    ms_copy = triton.testing.do_bench(lambda: dst.copy_(x), warmup=100, rep=1000, return_mode="median")
    print(f"anchor torch copy fp32 n=2^28: {gbps(8 * n, ms_copy):.0f} GB/s ({ms_copy:.3f} ms)")
    print(f"anchor triton vector add fp32 n=2^28: {gbps(12 * n, ms_add):.0f} GB/s ({ms_add:.3f} ms)")
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    sys.exit(main())
