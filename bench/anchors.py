"""Anchors for BENCHMARKS.md, measured in the same device run as tessel's own numbers.

The kernels are the ones in examples/ (they are plain Triton modules), launched by upstream Triton with the same
grid and num_warps that bench/run_device.sh gives tessel. GB/s = bytes of every buffer read or written once /
median time (triton.testing.do_bench: CUDA events, warm-up, median). Each result is checked against PyTorch
before it is timed; inputs are random.
"""
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import fused_softmax  # noqa: E402
import layer_norm  # noqa: E402
import vector_add  # noqa: E402


def bench(name, fn, nbytes):
    ms = triton.testing.do_bench(fn, warmup=100, rep=1000, return_mode="median")
    print(f"anchor {name}: median {ms:.4f} ms, {nbytes / (ms * 1e-3) / 1e9:.0f} GB/s")


def main():
    if sys.argv[1:] == ["layer_norm"]:
        return layer_norm_anchor()
    n = 1 << 28
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    add = lambda: vector_add.add_kernel[(n // 1024,)](x, y, out, n, BLOCK_SIZE=1024, num_warps=4)  # noqa: E731
    add()
    torch.testing.assert_close(out, x + y)
    bench("triton vector_add fp32 n=2^28", add, 12 * n)
    dst = torch.empty_like(x)
    bench("torch copy fp32 n=2^28", lambda: dst.copy_(x), 8 * n)
    del x, y, out, dst

    for rows, cols, grid in [(32768, 4096, 528), (4096, 1000, 528)]:
        x = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
        y = torch.full_like(x, float("nan"))
        block = triton.next_power_of_2(cols)
        warps = 8 if block >= 2048 else 4
        run = lambda: fused_softmax.softmax_kernel[(grid,)](  # noqa: E731
            y, x, x.stride(0), y.stride(0), rows, cols, block, 4, num_warps=warps)
        run()
        torch.testing.assert_close(y, torch.softmax(x.float(), dim=1).half(), atol=1e-3, rtol=1e-2)
        bench(f"triton softmax fp16 {rows}x{cols} grid={grid} warps={warps}", run, 2 * 2 * rows * cols)

    layer_norm_anchor()
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")


def layer_norm_anchor():
    rows, cols = 32768, 4096
    x = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
    w = torch.rand(cols, device="cuda", dtype=torch.float16)
    b = torch.rand(cols, device="cuda", dtype=torch.float16)
    y = torch.full_like(x, float("nan"))
    mean = torch.empty(rows, device="cuda", dtype=torch.float32)
    rstd = torch.empty(rows, device="cuda", dtype=torch.float32)
    run = lambda: layer_norm._layer_norm_fwd_fused[(rows,)](  # noqa: E731
        x, y, w, b, mean, rstd, x.stride(0), cols, 1e-5, BLOCK_SIZE=4096, num_warps=8)
    run()
    ref = torch.nn.functional.layer_norm(x.float(), (cols,), w.float(), b.float(), 1e-5).half()
    torch.testing.assert_close(y, ref, atol=1e-2, rtol=1e-2)
    bench(f"triton layer_norm fwd fp16 {rows}x{cols}", run, 2 * (2 * rows * cols + 2 * cols) + 2 * 4 * rows)


if __name__ == "__main__":
    sys.exit(main())
