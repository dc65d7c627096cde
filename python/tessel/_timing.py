"""Timing a function as `triton.testing` does: `do_bench` (warm-up, then timed runs: CUDA events with the L2
cleared between runs when a CUDA device is in use, else `time.perf_counter`) and `do_bench_cudagraph` (the
launch overheads removed by a CUDA graph). `tessel.testing` re-exports both, and `driver.active.get_benchmarker()`
returns `do_bench`; this module imports nothing of the package.
"""

from __future__ import annotations

import math
import statistics
import sys
import time


def _cuda_in_use():
    torch = sys.modules.get("torch")
    return torch is not None and torch.cuda.is_available()


def _quantile(sorted_times, q):
    """The `q` quantile, interpolated linearly between the closest ranks (`torch.quantile`'s default)."""
    pos = q * (len(sorted_times) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_times) - 1)
    return sorted_times[lo] + (sorted_times[hi] - sorted_times[lo]) * (pos - lo)


def _summarize(times, quantiles, return_mode):
    if quantiles is not None:
        s = sorted(times)
        qs = [_quantile(s, float(q)) for q in quantiles]
        return qs[0] if len(qs) == 1 else qs
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.mean, "median": statistics.median}[return_mode](times)


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Runs `fn` for about `warmup` ms, then times it over about `rep` ms of runs (at least one)."""
    assert return_mode in ("min", "max", "mean", "median", "all")
    if _cuda_in_use():
        return _bench_cuda(fn, warmup, rep, grad_to_none, quantiles, return_mode)
    start = time.perf_counter()
    fn()
    estimate = max((time.perf_counter() - start) * 1e3, 1e-6)
    n_warmup = min(1000, int(warmup / estimate))
    n_rep = max(1, min(1000, int(rep / estimate)))
    for _ in range(n_warmup):
        fn()
    times = []
    for _ in range(n_rep):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return _summarize(times, quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    """`triton.testing.do_bench_cudagraph`: the time of one `fn` with the launch overheads removed. `fn` is
    captured in a CUDA graph as many times as fit in about `rep` ms, the graph replayed ten times, and each
    replay's time divided by the number of captured calls. Needs CUDA (torch); on the CPU there are no graphs."""
    assert return_mode in ("min", "max", "mean", "median", "all")
    if not _cuda_in_use():
        raise RuntimeError("do_bench_cudagraph needs CUDA (torch.cuda): use do_bench on the CPU")
    import torch

    with torch.cuda.stream(torch.cuda.Stream()):
        fn()  # compile and load outside the graph
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        torch.cuda.synchronize()
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        n = max(1, int(rep / max(start.elapsed_time(end), 1e-3)))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(n):
                if grad_to_none is not None:
                    for x in grad_to_none:
                        x.grad = None
                fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(10):
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / n)
    return _summarize(times, quantiles, return_mode)


def _bench_cuda(fn, warmup, rep, grad_to_none, quantiles, return_mode):
    # Triton's method with torch's CUDA events: the L2 cleared (256 MB zeroed) before each timed call.
    import torch

    fn()
    torch.cuda.synchronize()
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        cache.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-6)
    n_warmup, n_rep = max(1, int(warmup / estimate)), max(1, int(rep / estimate))
    for _ in range(n_warmup):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    for i in range(n_rep):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        cache.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return _summarize(times, quantiles, return_mode)
