"""Tutorial 06's own `attention()` forward, unmodified, checked case by case: fp16 and fp8, head dims 64 and 128,
causal and not, with `warp_specialize` on and off, against a float64 reference, and (with `--compare`) against the
outputs another run saved: upstream Triton's, or another tessel wheel's, bit for bit.

    python -m tessel bench/attn06_check.py TUTORIALS_DIR --save tessel.npz [--seed S]   # under tessel
    python3 bench/attn06_check.py TUTORIALS_DIR --save triton.npz [--seed S]            # under upstream Triton
    python3 bench/attn06_check.py --compare A.npz B.npz [--bitwise]

The inputs are random normal values from `--seed` (the same in every run, so runs can be compared), fp16 with
Z=2, H=3; fp8 with Z=H=1 (below), rounded to e5m2 as the tutorial's benchmark makes them (V transposed in memory). The reference is the attention of
those rounded inputs in float64: fp16 outputs must be within 5e-3 of it (relative L2), fp8 ones within 0.15 (the
kernel rounds P and the output to e5m2, two mantissa bits: about 0.07 from the output's rounding alone). Two runs
under different compilers or wheels may autotune to different tiles, so `--compare` without `--bitwise` reports
the largest difference rather than requiring none. A case the compiler refuses (upstream Triton does not build the causal
kernel warp-specialized on Hopper) is reported and saved as missing. Needs a GPU, torch, and the tutorial file.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

import numpy as np


def cases():
    for dtype in ("fp16", "fp8"):
        for d in (64, 128):
            # Causal first: the tutorial's autotuner keys its cache by N_CTX, HEAD_DIM, FP8_OUTPUT and
            # warp_specialize, not by causality, and prunes BLOCK_N > BLOCK_M (invalid for its causal loops) only
            # when it tunes; a causal call after a non-causal one would reuse a config it never checked.
            for causal in (True, False):
                for ws in (False, True):
                    yield dtype, d, causal, ws


def key(dtype, d, causal, ws):
    return f"{dtype}-d{d}-{'causal' if causal else 'full'}-{'ws' if ws else 'one'}"


def reference(q, k, v, causal, sm_scale):
    """softmax(q kᵀ · scale) v in float64, on the CPU; q, k, v as [Z, H, N, D]."""
    import torch

    q, k, v = (t.double().cpu() for t in (q, k, v))
    s = (q @ k.transpose(-1, -2)) * sm_scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(~torch.ones((n, n), dtype=torch.bool).tril(), float("-inf"))
    return (s.softmax(-1) @ v).numpy()


def run(args):
    import torch

    spec = importlib.util.spec_from_file_location("fused_attention_06", os.path.join(args.tutorials,
                                                                                    "06-fused-attention.py"))
    tut = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tut)
    n, sm_scale = args.n_ctx, 0.5
    saved, failed = {}, 0
    for dtype, d, causal, ws in cases():
        name = key(dtype, d, causal, ws)
        # fp8: one head. The tutorial's fp8 V descriptor ([HEAD_DIM, Z * H * N_CTX] with row stride N_CTX) reads
        # the transposed V of head 0 only as it is laid out; other heads read a mix of heads, under Triton as under
        # tessel, so a float64 reference of the inputs' attention holds for Z = H = 1 only.
        z, h = (2, 3) if dtype == "fp16" else (1, 1)
        gen = torch.Generator().manual_seed(args.seed * 1000 + d)
        q, k, v = (torch.randn((z, h, n, d), generator=gen, dtype=torch.float32).to("cuda", torch.float16)
                   for _ in range(3))
        if dtype == "fp8":
            q, k = q.to(torch.float8_e5m2), k.to(torch.float8_e5m2)
            # As the tutorial's benchmark: V laid out transposed in memory, then seen as [Z, H, N, D] again.
            v = v.permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2).to(torch.float8_e5m2)
        want = reference(q.float(), k.float(), v.float(), causal, sm_scale)
        try:
            o = tut.attention(q, k, v, causal, sm_scale, ws)
            torch.cuda.synchronize()
        except Exception as e:  # the compiler refused the case: reported, not fatal
            print(f"{name:24} refused: {type(e).__name__}: {str(e).splitlines()[0][:100]}", flush=True)
            continue
        got = o.float().cpu().numpy().astype(np.float64)
        rel = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        finite = bool(np.isfinite(got).all())
        bound = 5e-3 if dtype == "fp16" else 0.15
        ok = finite and rel < bound
        failed += not ok
        print(f"{name:24} rel L2 {rel:.2e} (bound {bound:g}) {'ok' if ok else 'FAIL'}", flush=True)
        saved[name] = o.view(torch.uint8).cpu().numpy() if dtype == "fp8" else o.cpu().numpy()
    if args.save:
        np.savez(args.save, **saved)
    print(f"{len(saved)} cases ran, {failed} outside their bound")
    return 1 if failed else 0


def compare(paths, bitwise):
    a, b = (np.load(p) for p in paths)
    differ = 0
    for name in sorted(set(a.files) | set(b.files)):
        if name not in a.files or name not in b.files:
            print(f"{name:24} only in {paths[0] if name in a.files else paths[1]}")
            continue
        x, y = a[name], b[name]
        if bitwise:
            n = int((x.view(np.uint8) != y.view(np.uint8)).sum())
            differ += n > 0
            print(f"{name:24} {'bit-identical' if n == 0 else f'{n} bytes differ'}")
        else:
            x, y = x.astype(np.float64), y.astype(np.float64)
            print(f"{name:24} max |a - b| {float(np.abs(x - y).max()):.3e}")
    return 1 if differ else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tutorials", nargs="?")
    p.add_argument("--save")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--n-ctx", type=int, default=1024)
    p.add_argument("--compare", nargs=2, metavar=("A", "B"))
    p.add_argument("--bitwise", action="store_true")
    args = p.parse_args()
    if args.compare:
        sys.exit(compare(args.compare, args.bitwise))
    if not args.tutorials:
        p.error("give the tutorials' directory (or --compare A B)")
    sys.exit(run(args))


if __name__ == "__main__":
    main()
