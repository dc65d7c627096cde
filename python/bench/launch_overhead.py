"""Host costs from Python: microseconds per launch-path operation on an already compiled kernel, tessel and
Triton in one process.

    python python/bench/launch_overhead.py [--iters 2000] [--reps 25] [--size 1024]

Times the host side of a vector add (grid of one program, so the GPU is never the bottleneck) on torch CUDA
tensors, for tessel (`tessel.jit`) and, when `triton` imports, upstream Triton on the same kernels: a launch with
a grid tuple and with a grid lambda, `warmup` of a compiled specialization, `compiled[grid](*args)`, tutorial 02's
per-call sequence (warmup, `_init_handles`, `n_regs`, `metadata.shared`, then the compiled kernel's launch), a
tuned autotuner's dispatch, a Gluon launch whose layout constexpr is built per call, and `CompiledKernel.run` with
Triton's launcher arguments (what torch inductor calls); and torch's own `torch.add(x, y, out=out)` for scale. Each repetition runs --iters launches
back to back and divides the host time by --iters; the GPU is synchronized before and after each repetition, not
between launches (no launch waits for the GPU: the queue never fills, since each kernel is a few microseconds).
Prints the median and the spread over --reps repetitions; the two implementations take turns, repetition by
repetition, so that a drifting clock weighs on both. tessel's goal: at most 5 us per launch on an H100.

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


def _versions(dry=False):
    import tessel

    parts = [f"python {platform.python_version()}", f"tessel {getattr(tessel, '__version__', '(source)')}"]
    if dry:
        return ", ".join(parts)
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


def _host_rows(ns, x, y, out, n, block, stream_of):
    """The host operations timed, for one implementation (`ns`: its kernels module and its gluon language), by
    name: each a function of no arguments doing one operation on an already compiled kernel."""
    k, gl = ns.add_kernel, ns.gl
    grid = (triton_cdiv(n, block),)
    lam = lambda meta: (triton_cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)  # noqa: E731
    compiled = k.warmup(x, y, out, n, BLOCK_SIZE=block, grid=(1,))
    compiled._init_handles()
    g3 = (grid[0], 1, 1)

    def tutorial02():
        kernel = k.warmup(x, y, out, n, BLOCK_SIZE=block, grid=(1,))
        kernel._init_handles()
        regs, smem = kernel.n_regs, kernel.metadata.shared  # noqa: F841 - read as the tutorial reads them
        kernel[g3](x, y, out, n, block)

    def layout_per_call():
        layout = gl.BlockedLayout(size_per_thread=[4], threads_per_warp=[32], warps_per_cta=[4], order=[0])
        ns.scale_layout_kernel[grid](x, out, n, BLOCK=block, layout=layout)

    rows = {
        "kernel[grid](...), grid tuple": lambda: k[grid](x, y, out, n, BLOCK_SIZE=block),
        "kernel[grid](...), grid lambda": lambda: k[lam](x, y, out, n, BLOCK_SIZE=block),
        "kernel.warmup(...) (compiled before)": lambda: k.warmup(x, y, out, n, BLOCK_SIZE=block, grid=(1,)),
        "compiled[grid](*args)": lambda: compiled[g3](x, y, out, n, block),
        "tutorial 02's sequence (warmup, handles, compiled[grid])": tutorial02,
        "autotuned kernel[grid](...), once tuned": lambda: ns.add_tuned_kernel[grid](x, y, out, n),
        "gluon kernel[grid](...), layout built per call": layout_per_call,
    }
    if hasattr(compiled, "packed_metadata") and hasattr(compiled, "function"):
        def run_abi():
            stream = stream_of()
            compiled.run(g3[0], 1, 1, stream, compiled.function, compiled.packed_metadata,
                         compiled.launch_metadata(g3, stream, x, y, out, n, block), None, None, x, y, out, n, block)

        rows["CompiledKernel.run(grid, stream, function, ..., *args)"] = run_abi
    return rows


def bench_cuda(args):
    import types

    import torch

    import _kernels
    from tessel.gluon import language as tessel_gl
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
    sync = torch.cuda.synchronize
    stream_of = lambda: torch.cuda.current_stream(dev).cuda_stream  # noqa: E731

    def kernels(module, gl):
        return types.SimpleNamespace(**{k: v for k, v in vars(module).items() if k != "gl"}, gl=gl)

    impls = {"tessel": kernels(_kernels, tessel_gl)}
    try:
        import _triton_kernels
        from triton.experimental.gluon import language as triton_gl
    except ImportError as e:
        print(f"  (Triton not measured: {e})")
    else:
        impls["triton"] = kernels(_triton_kernels, triton_gl)
    fns = {}
    for name, ns in impls.items():
        ns.add_kernel[(triton_cdiv(n, block),)](x, y, out, n, BLOCK_SIZE=block)  # compile and load
        sync()
        torch.testing.assert_close(out, x + y, rtol=0, atol=0)
        for op, fn in _host_rows(ns, x, y, out, n, block, stream_of).items():
            out.fill_(float("nan"))
            try:
                fn()  # compile what the row needs, then check it
            except Exception as e:  # noqa: BLE001 - reported as the row's result
                print(f"  {op} [{name}]: fails: {type(e).__name__}: {str(e).splitlines()[0]}")
                continue
            sync()
            want = 2 * x if "gluon" in op else x + y
            torch.testing.assert_close(out, want, rtol=0, atol=0) if "warmup" not in op else None
            fns.setdefault(op, {})[name] = fn
    # The sides take turns, repetition by repetition and in alternating order, so that a clock drifting over the
    # run weighs on both alike (timing one side's rows, then the other's, let it favour one).
    samples = {op: {name: [] for name in by_impl} for op, by_impl in fns.items()}
    for rep in range(args.reps):
        for op, by_impl in fns.items():
            names = list(by_impl) if rep % 2 == 0 else list(by_impl)[::-1]
            for name in names:
                samples[op][name].append(_median_us(by_impl[name], args.iters, 1, sync)[0])
    rows = {op: {name: (statistics.median(v), min(v), max(v)) for name, v in by_impl.items()}
            for op, by_impl in samples.items()}
    results = {}
    for op, by_impl in rows.items():
        for name, stats in by_impl.items():
            results[f"{op} [{name}]"] = stats
        if len(by_impl) == 2:
            ratio = by_impl["triton"][0] / by_impl["tessel"][0]
            print(f"  {op:<58} tessel {by_impl['tessel'][0]:7.2f} us  triton {by_impl['triton'][0]:7.2f} us  "
                  f"triton/tessel {ratio:5.2f}")
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


    print("device: none (dry run: tessel's Python side up to the native launch call, which is a no-op here)")
    x, y, out = (_Tensor(0x7F0000000000 + i * 4096, fake.float32) for i in range(3))
    n, block = args.size, 1024
    grid = (triton_cdiv(n, block),)
    sys.modules["tessel._launcher"]._current_stream = lambda device: 0
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
    results["tessel (Python side), warmup"] = _median_us(
        lambda: add_kernel.warmup(x, y, out, n, BLOCK_SIZE=block, grid=(1,)), args.iters, args.reps, lambda: None)
    g3 = (grid[0], 1, 1)
    results["tessel (Python side), compiled[grid](*args)"] = _median_us(
        lambda: compiled[g3](x, y, out, n, block), args.iters, args.reps, lambda: None)
    assert compiled.native.launches == 3 * args.iters * args.reps, compiled.native.launches
    return results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=2000, help="launches per repetition (default 2000)")
    p.add_argument("--reps", type=int, default=25, help="repetitions; the median is reported (default 25)")
    p.add_argument("--size", type=int, default=1024, help="vector length (default 1024: one program)")
    p.add_argument("--dry", action="store_true", help="measure tessel's Python side only (no GPU needed)")
    args = p.parse_args(argv)
    print(_versions(args.dry))
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
        med = results["kernel[grid](...), grid tuple [tessel]"][0]
        print(f"tessel goal (<= 5 us per launch, grid tuple): {'met' if med <= 5.0 else 'NOT met'} ({med:.2f} us)")


if __name__ == "__main__":
    main()
