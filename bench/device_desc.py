"""Descriptors made in the kernel (`tl.make_tensor_descriptor`), end to end through the Python launcher.

Run it twice in one device call, the same way: `python3 bench/device_desc.py` (upstream Triton) and
`python3 -m tessel bench/device_desc.py` (tessel: `triton` resolves to tessel, the kernels compile for the GPU and
the launcher allocates each launch's global scratch, where every program writes its tensor maps).

1. examples/tma_matmul.py's `matmul_kernel_device_desc` on ragged fp16 shapes (row strides padded to 16 bytes),
   NaN-poisoned output, checked against torch.matmul in float32; a misaligned row stride must fail loudly.
2. Tutorial 09's `matmul_descriptor_persistent` and `matmul_tma_persistent` (persistent, `flatten=True`; their
   own autotuned configs; `triton.set_allocator` as the tutorial sets it), checked against torch, then timed with do_bench (median, L2 cleared) at SIZES (default 4096 8192),
   fp16, next to `matmul_kernel_device_desc` at 128x256x64, 3 stages, and torch.matmul (cuBLAS), which the same
   command times in both runs.
3. Last, a row stride that is no TMA stride (200 bytes): the run must fail loudly, not compute silently.

Usage: python3 [-m tessel] bench/device_desc.py TUTORIALS_DIR [SIZE...]
"""
import importlib.util
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import tma_matmul  # noqa: E402

WHO = "tessel" if "tessel" in sys.modules else f"triton {triton.__version__}"


def tflops(ms, m, n, k):
    return 2 * m * n * k / (ms * 1e-3) / 1e12


def device_desc(a, b, c, bm, bn, bk, stages, stride_am=None):
    m, k = a.shape
    n = c.shape[1]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn), )
    tma_matmul.matmul_kernel_device_desc[grid](a, b, c, m, n, k, stride_am or a.stride(0), b.stride(0), c.stride(0),
                                               BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=8,
                                               num_stages=stages)


def ragged(m, n, k, cfg):
    """A (m x k) @ B (k x n) through views of padded buffers: row strides are 16-byte multiples, shapes are not
    multiples of the blocks."""
    pad = lambda x: (x + 7) // 8 * 8  # noqa: E731
    a = torch.randn((m, pad(k)), device="cuda", dtype=torch.float16)[:, :k]
    b = torch.randn((max(k, 1), pad(n)), device="cuda", dtype=torch.float16)[:k, :n]
    c = torch.full((m, pad(n)), float("nan"), device="cuda", dtype=torch.float16)[:, :n]
    device_desc(a, b, c, *cfg)
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    torch.testing.assert_close(c.float(), ref, atol=5e-2, rtol=1e-2)
    print(f"[{WHO}] device-desc matmul {m}x{n}x{k} tile {cfg[:3]} stages {cfg[3]}: ok", flush=True)


def main():
    tutorials = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2:]] or [4096, 8192]
    torch.manual_seed(0)
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    for m, n, k, cfg in [(333, 264, 200, (128, 128, 64, 3)), (200, 96, 72, (64, 64, 32, 2)),
                         (130, 200, 264, (64, 128, 32, 5)), (300, 520, 136, (128, 256, 64, 4)),
                         (333, 264, 40, (128, 128, 64, 3)), (256, 256, 0, (128, 128, 64, 3))]:
        ragged(m, n, k, cfg)
    spec = importlib.util.spec_from_file_location("t09", os.path.join(tutorials, "09-persistent-matmul.py"))
    t09 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(t09)
    for n in sizes:
        a = torch.randn((n, n), device="cuda", dtype=torch.float16)
        bt = torch.randn((n, n), device="cuda", dtype=torch.float16)  # the tutorial's B is N x K
        ref = torch.matmul(a, bt.T)
        for name, fn, kernel in [
            ("matmul_descriptor_persistent", t09.matmul_descriptor_persistent, t09.matmul_kernel_descriptor_persistent),
            ("matmul_tma_persistent", t09.matmul_tma_persistent, t09.matmul_kernel_tma_persistent),
        ]:
            run = lambda: fn(a, bt, False)  # noqa: E731
            torch.testing.assert_close(run(), ref, atol=2e-1, rtol=2e-2)
            ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
            best = getattr(kernel, "best_config", None)
            print(f"[{WHO}] 09 {name} fp16 {n}^3: median {ms:.4f} ms, {tflops(ms, n, n, n):.1f} TFLOP/s "
                  f"(config {best})", flush=True)
        b = bt.T.contiguous()
        c = torch.empty((n, n), device="cuda", dtype=torch.float16)
        run = lambda: device_desc(a, b, c, 128, 256, 64, 3)  # noqa: E731
        run()
        torch.testing.assert_close(c, torch.matmul(a, b), atol=2e-1, rtol=2e-2)
        ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
        print(f"[{WHO}] matmul_kernel_device_desc fp16 {n}^3 128x256x64 stages 3: median {ms:.4f} ms, "
              f"{tflops(ms, n, n, n):.1f} TFLOP/s", flush=True)
        ms = triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=100, rep=1000, return_mode="median")
        print(f"[{WHO}] torch.matmul (cuBLAS) fp16 {n}^3: median {ms:.4f} ms, {tflops(ms, n, n, n):.1f} TFLOP/s",
              flush=True)
    # Last (a failed launch poisons the CUDA context): a row stride of 100 halves (200 bytes) is no TMA stride,
    # and the kernel must not run silently.
    a = torch.randn((256, 100), device="cuda", dtype=torch.float16)
    b = torch.randn((100, 256), device="cuda", dtype=torch.float16)
    c = torch.empty((256, 256), device="cuda", dtype=torch.float16)
    try:
        c.fill_(float("nan"))
        device_desc(a, b, c, 128, 128, 64, 3)
        torch.cuda.synchronize()
        err = (c.float() - a.float() @ b.float()).abs().max().item()
        print(f"[{WHO}] misaligned stride: ran without an error; max |error| {err}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"[{WHO}] misaligned stride: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)


if __name__ == "__main__":
    main()
