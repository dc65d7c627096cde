"""Launch overhead from Python: microseconds per `kernel[grid](...)` of an already compiled kernel.

    python python/bench/launch_overhead.py [--iters 2000] [--reps 25] [--size 1024]

Times the host side of launching a vector add (grid of one program, so the GPU is never the bottleneck) on torch
CUDA tensors: tessel (`tessel.jit`) with a grid tuple and with a grid lambda, Triton's launch of the same kernel
when `triton` imports, and torch's own `torch.add(x, y, out=out)` for scale. Each repetition runs --iters launches
back to back and divides the host time by --iters; the GPU is synchronized before and after each repetition, not
between launches (no launch waits for the GPU: the queue never fills, since each kernel is a few microseconds).
Prints the median and the spread over --reps repetitions. tessel's goal: at most 5 us per launch on an H100.

Without CUDA (no torch, or no GPU) it still measures tessel's Python side with a stand-in for the native launch
(`--dry`, implied), so the cost of binding, the specialization key and the argument packing can be followed on
any machine; that number leaves out the driver call.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _median_us(fn, iters, reps, sync):
    """Median (and min, max) over `reps` of the host time per call of `fn` over `iters` calls, in us."""
    per_call = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            fn()
        t1 = time.perf_counter_ns()
        sync()
        per_call.append((t1 - t0) / iters / 1e3)
    return statistics.median(per_call), min(per_call), max(per_call)


def _row(name, stats):
    med, lo, hi = stats
    print(f"  {name:<44} {med:8.2f} us/launch  (min {lo:.2f}, max {hi:.2f})")


def _versions():
    import tessel

    parts = [f"python {platform.python_version()}", f"tessel {getattr(tessel, '__version__', '(source)')}"]
    try:
        import torch

        parts.append(f"torch {torch.__version__}")
        if torch.cuda.is_available():
            parts.append(f"CUDA {torch.version.cuda}")
    except ImportError:
        parts.append("torch: not installed")
    try:
        import triton

        parts.append(f"triton {triton.__version__}")
    except ImportError:
        parts.append("triton: not installed")
    return ", ".join(parts)


def bench_cuda(args):
    import torch

    from _kernels import add_kernel
    from tessel.runtime import gpu_target

    dev = torch.device("cuda", torch.cuda.current_device())
    props = torch.cuda.get_device_properties(dev)
    print(f"device: {props.name} (cuda:{dev.index}, sm_{props.major}{props.minor}); tessel target "
          f"{gpu_target()}")
    n = args.size
    x = torch.randn(n, device=dev)
    y = torch.randn(n, device=dev)
    out = torch.empty_like(x)
    block = 1024
    grid = (triton_cdiv(n, block),)
    sync = torch.cuda.synchronize
    results = {}

    add_kernel[grid](x, y, out, n, BLOCK_SIZE=block)  # compile and load
    sync()
    torch.testing.assert_close(out, x + y, rtol=0, atol=0)
    results["tessel, grid tuple"] = _median_us(lambda: add_kernel[grid](x, y, out, n, BLOCK_SIZE=block),
                                               args.iters, args.reps, sync)
    lam = lambda meta: (triton_cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # noqa: E731
    results["tessel, grid lambda"] = _median_us(lambda: add_kernel[lam](x, y, out, n, BLOCK_SIZE=block),
                                                args.iters, args.reps, sync)
    try:
        import triton  # noqa: F401
        from _triton_kernels import add_kernel as triton_add
    except ImportError as e:
        print(f"  (Triton not measured: {e})")
    else:
        triton_add[grid](x, y, out, n, BLOCK_SIZE=block)
        sync()
        results["triton, grid tuple"] = _median_us(lambda: triton_add[grid](x, y, out, n, BLOCK_SIZE=block),
                                                   args.iters, args.reps, sync)
        results["triton, grid lambda"] = _median_us(lambda: triton_add[lam](x, y, out, n, BLOCK_SIZE=block),
                                                    args.iters, args.reps, sync)
    results["torch.add(x, y, out=out) (for scale)"] = _median_us(lambda: torch.add(x, y, out=out),
                                                                 args.iters, args.reps, sync)
    return results


def triton_cdiv(a, b):
    return (a + b - 1) // b


class _Tensor:
    """A stand-in for a CUDA tensor: what the launcher reads of one."""

    def __init__(self, ptr, dtype):
        self._ptr, self.dtype, self.is_cuda = ptr, dtype, True

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return 0


def bench_dry(args):
    """tessel's Python side only: a stand-in torch module and a native launch that does nothing."""
    import types

    if "torch" in sys.modules:
        sys.exit("--dry replaces torch with a stand-in: run it without CUDA, or without --dry")
    fake = types.ModuleType("torch")
    fake.Tensor = _Tensor
    fake.float32 = "torch.float32"
    sys.modules["torch"] = fake
    import tessel  # noqa: F401
    from _kernels import add_kernel

    tj = sys.modules["tessel.jit"]  # the module (`tessel.jit` is the decorator)

    print("device: none (dry run: tessel's Python side up to the native launch call, which is a no-op here)")
    x, y, out = (_Tensor(0x7F0000000000 + i * 4096, fake.float32) for i in range(3))
    n, block = args.size, 1024
    grid = (triton_cdiv(n, block),)
    tj._current_stream = lambda device: 0
    compiled = add_kernel.warmup(x, y, out, n, BLOCK_SIZE=block, grid=grid)

    class NoLaunch:
        def __init__(self, native):
            self.native, self.launches = native, 0

        def load(self, device):
            pass

        def launch(self, device, stream, grid, args):
            self.launches += 1

    compiled.native = NoLaunch(compiled.native)
    results = {}
    results["tessel (Python side), grid tuple"] = _median_us(
        lambda: add_kernel[grid](x, y, out, n, BLOCK_SIZE=block), args.iters, args.reps, lambda: None)
    lam = lambda meta: (triton_cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # noqa: E731
    results["tessel (Python side), grid lambda"] = _median_us(
        lambda: add_kernel[lam](x, y, out, n, BLOCK_SIZE=block), args.iters, args.reps, lambda: None)
    assert compiled.native.launches == 2 * args.iters * args.reps, compiled.native.launches
    return results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=2000, help="launches per repetition (default 2000)")
    p.add_argument("--reps", type=int, default=25, help="repetitions; the median is reported (default 25)")
    p.add_argument("--size", type=int, default=1024, help="vector length (default 1024: one program)")
    p.add_argument("--dry", action="store_true", help="measure tessel's Python side only (no GPU needed)")
    args = p.parse_args(argv)
    print(_versions())
    cuda = False
    if not args.dry:
        try:
            import torch

            cuda = torch.cuda.is_available()
        except ImportError:
            pass
        if not cuda:
            print("no torch with CUDA here: measuring tessel's Python side only (--dry)")
    print(f"{args.iters} launches per repetition, {args.reps} repetitions, vector of {args.size} floats; "
          "median host time per launch:")
    results = bench_cuda(args) if cuda else bench_dry(args)
    for name, stats in results.items():
        _row(name, stats)
    if cuda:
        med = results["tessel, grid tuple"][0]
        print(f"tessel goal (<= 5 us per launch, grid tuple): {'met' if med <= 5.0 else 'NOT met'} ({med:.2f} us)")


if __name__ == "__main__":
    main()
