"""Attention forward, tessel against upstream Triton's tutorial kernel, in one process on the same inputs.

`bench/attention.sh` times tessel with `tessel bench` (the CLI's own random inputs) and Triton in another process
on torch's; on the power-capped H100 the inputs and the process history move the clock by a few percent. Here one
process holds both: examples/flash_attention.py's `_attn_fwd_tma` compiled by tessel (`tessel.jit` on the function
the module decorates with `triton.jit`) at the configs in CONFIGS, and the Triton tutorial's own kernel
(06-fused-attention.py from TUTORIALS, default .tutorials/, autotuned over its own configs; with and without
warp_specialize when not causal, as the tutorial runs it on Hopper), on the same q, k, v.

Every output is checked against torch SDPA first. Each round then times every variant (do_bench: L2 cleared,
median), alternating the order between rounds. Reported: per-variant medians and the geometric mean of the
per-round ratios of Triton's best to tessel's best (> 1: tessel faster) with a 95% interval (bench/mm_paired.py's
statistics). Z=4, H=32, D=128 fp16; FLOPs 4*Z*H*N^2*D, halved when causal.

Usage: python3 bench/attn_paired.py [--rounds R] [SIZES...]   (default 5 rounds, sizes 16384 4096; env CONFIGS as
in bench/attention.sh, default "128,128,8,3"). Needs a GPU, torch, Triton 3.6, the tessel wheel and the tutorial.
"""
import argparse
import os
import statistics
import sys

import torch
import triton
from triton.testing import do_bench

import tessel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
import anchors_attention  # noqa: E402  (loads the tutorial as anchors do)
import flash_attention  # noqa: E402
import mm_paired  # noqa: E402  (the interval)

Z, H, D, SM_SCALE = 4, 32, 128, 0.0883883


def tessel_run(kernel, q, k, v, causal, bm, bn, warps, stages):
    n = q.shape[2]
    y = Z * H * n
    m = torch.empty((Z, H, n), device="cuda", dtype=torch.float32)
    o = torch.full_like(q, float("nan"))
    desc = lambda t, rows: tessel.TensorDescriptor(t, shape=[y, D], strides=[D, 1], block_shape=[rows, D])  # noqa: E731
    dq, dk, dv, do = desc(q, bm), desc(k, bn), desc(v, bn), desc(o, bm)

    def run():
        kernel[(triton.cdiv(n, bm), Z * H)](SM_SCALE, m, Z, H, dq, dk, dv, do, n, HEAD_DIM=D, BLOCK_M=bm, BLOCK_N=bn,
                                            STAGE=3 if causal else 1, num_warps=warps, num_stages=stages)
        return o

    return run


def workload(n, causal, tutorial, configs, rounds):
    torch.manual_seed(n + causal)
    q, k, v = (torch.randn((Z, H, n, D), device="cuda", dtype=torch.float16) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=SM_SCALE)
    kernel = tessel.jit(flash_attention._attn_fwd_tma.fn)
    runs = []
    for cfg in configs:
        bm, bn, w, s = (int(x) for x in cfg.split(","))
        run = tessel_run(kernel, q, k, v, causal, bm, bn, w, s)
        torch.testing.assert_close(run(), ref, atol=2e-2, rtol=2e-2)
        runs.append(("tessel", f"tessel {bm}x{bn} w{w} s{s}", run))
    for ws in ([False, True] if not causal else [False]):
        run = lambda ws=ws: tutorial.attention(q, k, v, causal, SM_SCALE, ws)  # noqa: E731
        torch.testing.assert_close(run(), ref, atol=2e-2, rtol=2e-2)  # autotunes on the first call
        runs.append(("triton", f"triton tutorial 06 ws={ws} ({tutorial._attn_fwd.best_config})", run))
    times = {name: [] for _, name, _ in runs}
    for r in range(rounds):
        for _, name, run in (runs if r % 2 == 0 else runs[::-1]):
            times[name].append(do_bench(run, warmup=25, rep=200, return_mode="median"))
    flops = 4 * Z * H * n * n * D / (2 if causal else 1)
    print(f"== N={n} causal={causal}, {rounds} rounds", flush=True)
    for _, name, _ in runs:
        ms = statistics.median(times[name])
        print(f"  {name}: {ms:.4f} ms, {flops / ms / 1e9:.1f} TFLOP/s", flush=True)
    best = {who: [min(times[name][r] for w, name, _ in runs if w == who) for r in range(rounds)]
            for who in ("tessel", "triton")}
    ratios = [t / s for t, s in zip(best["triton"], best["tessel"])]
    print(f"  best vs best: triton {statistics.median(best['triton']):.4f} ms, tessel "
          f"{statistics.median(best['tessel']):.4f} ms, ratio {mm_paired.fmt(ratios)}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sizes", nargs="*", type=int, default=[16384, 4096])
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    configs = os.environ.get("CONFIGS", "128,128,8,3").split()
    tut = os.path.join(os.environ.get("TUTORIALS", ".tutorials"), "06-fused-attention.py")
    tutorial = anchors_attention.tutorial_module(tut)
    print(f"triton {triton.__version__}, torch {torch.__version__}, tessel {tessel.__file__}, "
          f"{torch.cuda.get_device_name()}", flush=True)
    for n in args.sizes:
        for causal in (False, True):
            workload(n, causal, tutorial, configs, args.rounds)


if __name__ == "__main__":
    main()
