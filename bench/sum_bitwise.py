#!/usr/bin/env python3
"""`tl.sum` under upstream Triton and under tessel, compared bit for bit (needs a GPU, torch and Triton).

    python bench/sum_bitwise.py

A float sum's rounding depends on the order of its adds; tessel combines a reduction's registers, lanes and warps
in Triton's order, so that the same layout rounds alike (Liger's group_norm test compares a gradient computed by
`tl.sum` with torch's at rtol 1e-4). This runs one set of reductions (rows of 1000-8192 floats at 1, 4 and 8
warps; 2-d tiles along either axis) on inputs spread over e^±6, once in a child process with upstream Triton
(TESSEL_SHIM=0) and once under `python -m tessel`, and prints, per case, how many results are bitwise equal.
Exit status 1 when some case differs.
"""

import os
import subprocess
import sys
import tempfile


def produce(path):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def rowsum(X, Out, N: tl.constexpr, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(X + row * N + offs, mask=offs < N, other=0.0)
        tl.store(Out + row, tl.sum(x, axis=0))

    @triton.jit
    def sum2d(X, Out, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
        om = tl.arange(0, M)
        on = tl.arange(0, N)
        x = tl.load(X + om[:, None] * N + on[None, :])
        s = tl.sum(x, axis=AXIS)
        if AXIS == 0:
            tl.store(Out + on, s)
        else:
            tl.store(Out + om, s)

    res = {}
    g = torch.Generator(device="cuda").manual_seed(1234)

    def spread(*shape):
        return torch.randn(*shape, device="cuda", generator=g) * torch.exp(2 * torch.randn(*shape, device="cuda",
                                                                                            generator=g))

    for n in (1000, 4096, 8192):
        x = spread(64, n)
        for w in (1, 4, 8):
            out = torch.full((64,), float("nan"), device="cuda")
            rowsum[(64,)](x, out, n, triton.next_power_of_2(n), num_warps=w)
            res[f"rowsum n={n} warps={w}"] = (x.cpu(), out.cpu())
    for m, n in ((64, 256), (128, 128), (16, 1024)):
        x = spread(m, n)
        for axis in (0, 1):
            for w in (4, 8):
                out = torch.full((n if axis == 0 else m,), float("nan"), device="cuda")
                sum2d[(1,)](x, out, m, n, axis, num_warps=w)
                res[f"sum2d {m}x{n} axis={axis} warps={w}"] = (x.cpu(), out.cpu())
    torch.save(res, path)
    print(f"{len(res)} cases under the triton of {triton.__file__}", flush=True)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--produce":
        produce(sys.argv[2])
        return 0
    import torch

    with tempfile.TemporaryDirectory() as d:
        paths = {side: os.path.join(d, f"{side}.pt") for side in ("triton", "tessel")}
        me = os.path.abspath(__file__)
        runs = {
            "triton": ([sys.executable, me, "--produce", paths["triton"]], {**os.environ, "TESSEL_SHIM": "0"}),
            "tessel": ([sys.executable, "-m", "tessel", me, "--produce", paths["tessel"]], dict(os.environ)),
        }
        for side, (cmd, env) in runs.items():
            subprocess.run(cmd, env=env, check=True)
        a, b = torch.load(paths["triton"]), torch.load(paths["tessel"])
    equal = 0
    for k in a:
        (xa, oa), (xb, ob) = a[k], b[k]
        if not torch.equal(xa, xb):
            raise SystemExit(f"{k}: the two runs got different inputs")
        same = int((oa.view(torch.int32) == ob.view(torch.int32)).sum())
        equal += same == oa.numel()
        print(f"{k:36s} bitwise equal {same}/{oa.numel()}  max |diff| {float((oa - ob).abs().max()):.3e}")
    print(f"cases bitwise equal: {equal}/{len(a)}")
    return 0 if equal == len(a) else 1


if __name__ == "__main__":
    sys.exit(main())
