"""`triton.testing.do_bench`: the median (or mean, ...) time of a function in milliseconds.

With a CUDA device in use (torch imported and CUDA available) it times with CUDA events, clearing the L2
between runs, as Triton does; otherwise (the interpreter) it times with `time.perf_counter`.
"""

from __future__ import annotations

import statistics
import sys
import time


def _cuda_in_use():
    torch = sys.modules.get("torch")
    return torch is not None and torch.cuda.is_available()


def _summarize(times, quantiles, return_mode):
    if quantiles is not None:
        s = sorted(times)
        qs = [s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))] for q in quantiles]
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


def _bench_cuda(fn, warmup, rep, grad_to_none, quantiles, return_mode):
    # Untested here (no GPU on the machine this was written on): Triton's method with torch's CUDA events.
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


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    import numpy as np

    def host(v):
        return v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)

    np.testing.assert_allclose(host(x), host(y), atol=atol or 0, rtol=rtol or 1e-7, err_msg=err_msg)
