"""Tutorial 03's `matmul_kernel` at every config of its own autotuning list, tessel against upstream Triton in one
process, round by round: which config each compiler's autotuner would pick at a size, and how far apart the two
compilers are at each config.

The tutorial's sweep shows one number per size, the time of whatever config each side's autotuner chose in that
process. When a row sits a few percent behind, this harness says whether the same config is slower under tessel
or tessel's autotuner chose another one. The kernel source is the tutorial's, unmodified (its module is executed
up to `benchmark.run(`); upstream Triton compiles it as the tutorial decorates it, tessel compiles the function
underneath (`tessel.jit(matmul_kernel.fn.fn)`). Every config is checked against torch on NaN-poisoned outputs
before it is timed. Timing and statistics are bench/mm_paired.py's: do_bench medians per round, the two
compilers back to back in alternating order, Triton's time over tessel's as a geometric mean with a 95% interval
(> 1: tessel faster), cuBLAS at each round's start and end as the control.

Usage: python3 bench/mm03_configs.py TUTORIALS_DIR [--rounds R] [--rep MS] [--dtypes fp16,fp8] [SIZES...]
(default 6 rounds, rep 60 ms, fp16, sizes 1152 1280). Needs a GPU, torch, Triton 3.6 and the tessel wheel.
"""
import argparse
import os
import statistics
import sys

import torch
import triton
from triton.testing import do_bench

import tessel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mm_paired import fmt  # noqa: E402


def load_tutorial(directory):
    path = os.path.join(directory, "03-matrix-multiplication.py")
    src = open(path).read()
    ns = {"__name__": "tutorial03", "__file__": path}
    exec(compile(src[:src.index("benchmark.run(")], path, "exec"), ns)
    return ns["matmul_kernel"]


def operands(name, n):
    torch.manual_seed(n)
    a = torch.randn((n, n), device="cuda", dtype=torch.float16)
    b = torch.randn((n, n), device="cuda", dtype=torch.float16)
    if name == "fp8":  # as the tutorial's fp8 table: e5m2, B transposed in memory
        a, b = a.to(torch.float8_e5m2), b.T.to(torch.float8_e5m2)
    return a, b


def print_rows(runs, times, flops):
    """One line per config (each side's median time and TFLOP/s, the ratio Triton / tessel over the rounds) and
    each side's fastest config, which it returns ({"triton": label, "tessel": label})."""
    for label, _ in runs:
        t, s = times[label]["triton"], times[label]["tessel"]
        print(f"{label:22s} triton {statistics.median(t) * 1e3:8.2f} µs ({flops / statistics.median(t) / 1e9:4.0f} "
              f"TFLOP/s)  tessel {statistics.median(s) * 1e3:8.2f} µs ({flops / statistics.median(s) / 1e9:4.0f})  "
              f"ratio {fmt([x / y for x, y in zip(t, s)])}")
    best = {}
    for who in ("triton", "tessel"):
        best[who] = min(runs, key=lambda run: statistics.median(times[run[0]][who]))[0]
        print(f"  fastest under {who}: {best[who]} ({statistics.median(times[best[who]][who]) * 1e3:.2f} µs)")
    return best


def workload(autotuned, name, n, rounds, rep):
    a, b = operands(name, n)
    ref = (a.float() @ b.float()).half()
    cublas = (lambda: torch.matmul(a, b)) if name == "fp16" else None
    kernels = {"triton": autotuned.fn, "tessel": tessel.jit(autotuned.fn.fn)}
    outs = {who: torch.empty((n, n), device="cuda", dtype=torch.float16) for who in kernels}
    runs = []
    for cfg in autotuned.configs:
        meta = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages, ACTIVATION="")
        bm, bn = meta["BLOCK_SIZE_M"], meta["BLOCK_SIZE_N"]
        grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)
        label = f"{bm}x{bn}x{meta['BLOCK_SIZE_K']} w{cfg.num_warps} s{cfg.num_stages}"
        pair = {}
        for who, kernel in kernels.items():
            c = outs[who]

            def run(kernel=kernel, c=c, grid=grid, meta=meta):  # bound now: the loop rebinds grid and meta
                kernel[grid](a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                             c.stride(1), **meta)

            c.fill_(float("nan"))
            try:
                run()
                torch.cuda.synchronize()
            except Exception as e:  # a config one side cannot run (shared memory) is reported, not timed
                print(f"  {label}: {who} cannot run it: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
                pair = None
                break
            err = ((c.float() - ref.float()).norm() / ref.float().norm()).item()
            assert err < 2e-2, f"{who} {label}: relative error {err}"
            pair[who] = run
        if pair:
            runs.append((label, pair))
    times = {label: {"triton": [], "tessel": []} for label, _ in runs}
    control = []
    for r in range(rounds):
        first = do_bench(cublas, warmup=10, rep=rep, return_mode="median") if cublas else 1.0
        order = ("triton", "tessel") if r % 2 == 0 else ("tessel", "triton")
        for label, pair in runs:
            for who in order:
                times[label][who].append(do_bench(pair[who], warmup=10, rep=rep, return_mode="median"))
        last = do_bench(cublas, warmup=10, rep=rep, return_mode="median") if cublas else 1.0
        control.append(first / last)
    flops = 2 * n**3
    print(f"== {name} {n}^3, {rounds} rounds (µs: median of the rounds' medians; ratio: Triton / tessel, geometric "
          f"mean [95% CI])", flush=True)
    print_rows(runs, times, flops)
    if cublas:
        print(f"  control, cuBLAS start / end: {fmt(control)}", flush=True)
    # What each compiler's own autotuner picks here, as the tutorial's matmul() would (a fresh autotuner per size:
    # the tutorial's process tunes each size once).
    tuners = {"triton": triton.autotune(configs=autotuned.configs, key=list(autotuned.keys))(autotuned.fn),
              "tessel": tessel.autotune(configs=autotuned.configs, key=list(autotuned.keys))(kernels["tessel"])}
    for who, tuner in tuners.items():
        c = outs[who]
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)  # noqa: E731
        tuner[grid](a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                    ACTIVATION="")
        cfg = tuner.best_config
        print(f"  {who}'s autotuner picks {cfg.kwargs['BLOCK_SIZE_M']}x{cfg.kwargs['BLOCK_SIZE_N']}x"
              f"{cfg.kwargs['BLOCK_SIZE_K']} w{cfg.num_warps} s{cfg.num_stages}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tutorials")
    p.add_argument("sizes", nargs="*", type=int, default=[1152, 1280])
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--rep", type=int, default=60, help="do_bench's rep (ms) per measurement")
    p.add_argument("--dtypes", default="fp16", help="fp16 and/or fp8 (e5m2, as the tutorial's second table)")
    args = p.parse_args()
    print(f"triton {triton.__version__}, torch {torch.__version__}, tessel {tessel.__file__}, "
          f"{torch.cuda.get_device_name()}", flush=True)
    autotuned = load_tutorial(args.tutorials)
    for name in args.dtypes.split(","):
        for n in args.sizes:
            workload(autotuned, name, n, args.rounds, args.rep)


if __name__ == "__main__":
    main()
