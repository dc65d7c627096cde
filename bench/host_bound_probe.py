#!/usr/bin/env python3
"""Whether a tutorial's `do_bench` row measures the kernel or the host: tutorial 03's `matmul`, timed the ways its
benchmark times it.

    python bench/host_bound_probe.py TUTORIALS_DIR [--sizes 256,512,896,1408] [--profile]          (upstream Triton)
    python -m tessel bench/host_bound_probe.py TUTORIALS_DIR [...]                                  (tessel)

It runs the public 03-matrix-multiplication.py (not part of this repository) up to its benchmark section, then per
size and dtype (fp16, fp8 as the tutorial makes them), after the autotuner has tuned:

- host µs per `matmul()` call, in a loop;
- host µs per iteration of `do_bench`'s own loop (`cache.zero_()`, event, `matmul`, event) and the GPU's µs per
  iteration of it (events around the whole loop), with the 256 MB zeroing alone beside it;
- the median of the per-iteration event times (what `do_bench` reports) and `do_bench` itself;
- the same loop without `matmul` (what torch's own calls cost this process).

`do_bench` hides the host only while the host's iteration is shorter than the GPU's (the cache clear plus the
kernel). Where it is longer the row shows the host's time up to the launch plus the kernel: compare the two
"per iteration" numbers. `--profile` adds a cProfile of 300 `matmul()` calls at 512.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import time

import torch
import triton


def load_matmul(tutorials):
    path = os.path.abspath(os.path.join(tutorials, "03-matrix-multiplication.py"))
    with open(path) as f:
        src = f.read()
    scope = {"__name__": "host_bound_probe"}
    # The kernels must come from a file for both compilers (they read its source): compile under the file's name.
    exec(compile(src[: src.index("benchmark.run(")], path, "exec"), scope)  # noqa: S102 - the tutorial's own code
    return scope["matmul"]


def probe(matmul, cache, side, m, fp8, n=300):
    a = torch.randn((m, m), device="cuda", dtype=torch.float16)
    b = torch.randn((m, m), device="cuda", dtype=torch.float16)
    if fp8:
        a, b = a.to(torch.float8_e5m2), b.T.to(torch.float8_e5m2)
    for _ in range(20):
        matmul(a, b)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        matmul(a, b)
    host_call = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()

    def event():
        return torch.cuda.Event(enable_timing=True)

    starts, ends = [event() for _ in range(n)], [event() for _ in range(n)]
    whole = event(), event()
    whole[0].record()
    t = time.perf_counter()
    for i in range(n):
        cache.zero_()
        starts[i].record()
        matmul(a, b)
        ends[i].record()
    host_iter = (time.perf_counter() - t) / n * 1e6
    whole[1].record()
    torch.cuda.synchronize()
    gpu_iter = whole[0].elapsed_time(whole[1]) / n * 1e3
    measured = statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3
    zero = event(), event()
    zero[0].record()
    for _ in range(50):
        cache.zero_()
    zero[1].record()
    torch.cuda.synchronize()
    zeroing = zero[0].elapsed_time(zero[1]) / 50 * 1e3
    bench = triton.testing.do_bench(lambda: matmul(a, b), quantiles=[0.5]) * 1e3
    t = time.perf_counter()
    for i in range(n):
        cache.zero_()
        starts[i].record()
        ends[i].record()
    bare = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    print(f"{side} M={m:5d} {'fp8 ' if fp8 else 'fp16'}: host/call {host_call:6.1f} us, host/iter {host_iter:6.1f}, "
          f"gpu/iter {gpu_iter:6.1f} (zeroing {zeroing:5.1f}), measured median {measured:6.1f}, do_bench "
          f"{bench:6.1f}; loop without matmul {bare:5.1f}", flush=True)
    return a, b


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tutorials")
    p.add_argument("--sizes", default="256,512,896,1408")
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    side = "tessel" if "tessel" in triton.__file__ else "triton"
    print(side, "on cores", sorted(os.sched_getaffinity(0)), flush=True)
    matmul = load_matmul(args.tutorials)
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
    for m in (int(x) for x in args.sizes.split(",")):
        for fp8 in (False, True):
            probe(matmul, cache, side, m, fp8)
    if args.profile:
        a, b = probe(matmul, cache, side, 512, False)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(300):
            matmul(a, b)
        prof.disable()
        torch.cuda.synchronize()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(18)
        print(out.getvalue())


if __name__ == "__main__":
    main()
