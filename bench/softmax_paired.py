"""Tutorial 02's softmax at 4096 x N, tessel against upstream Triton in one process: the tutorial's own `softmax()`
(host path and kernel) beside its kernel launched alone at the tutorial's persistent grid, so that a gap in the
tutorial's table reads as the host's or the kernel's.

    python3 bench/softmax_paired.py TUTORIALS_DIR [N ...]      (default 4096 4224 4352 6144 8192)

The tutorial runs unmodified under each compiler in its own namespace (`tutorial_paired.load`); each variant is
timed with upstream's `do_bench` (median, L2 cleared), five rounds alternating which compiler goes first, and the
output is checked against torch first. Prints tessel / Triton as speed (> 1: tessel faster) per round.
"""
import math
import os
import statistics
import sys

import torch
from triton.testing import do_bench

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tutorial_paired as tp  # noqa: E402

ROUNDS = 5
VARIANTS = ("softmax()", "kernel alone")


def main():
    directory, sizes = sys.argv[1], [int(a) for a in sys.argv[2:]] or [4096, 4224, 4352, 6144, 8192]
    ns = {}
    for side in tp.SIDES:
        tp.load(os.path.join(directory, "02-fused-softmax.py"), side)
        ns[side] = sys.modules[f"tutorial_02_fused_softmax_{side}"]
    for n in sizes:
        x = torch.randn(4096, n, device="cuda")
        runs = {}
        for side in tp.SIDES:
            m = ns[side]
            y = m.softmax(x)
            torch.testing.assert_close(y, torch.softmax(x, -1))
            blk = m.triton.next_power_of_2(n)
            k = m.softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), 4096, n, BLOCK_SIZE=blk, num_stages=4,
                                        num_warps=8, grid=(1,))
            k._init_handles()
            occupancy = min(m.NUM_REGS // (k.n_regs * 32 * 8), m.SIZE_SMEM // k.metadata.shared)
            grid = (min(m.NUM_SM * occupancy, 4096), 1, 1)
            runs[side] = {
                "softmax()": lambda m=m: m.softmax(x),
                "kernel alone": lambda k=k, grid=grid, y=y, blk=blk: k[grid](y, x, x.stride(0), y.stride(0), 4096, n,
                                                                             blk, 4),
            }
            print(f"N={n} {side}: regs {k.n_regs} shared {k.metadata.shared} grid {grid[0]}", flush=True)
        t = {(s, v): [] for s in tp.SIDES for v in VARIANTS}
        for r in range(ROUNDS):
            for v in VARIANTS:
                for side in tp.SIDES if r % 2 == 0 else tp.SIDES[::-1]:
                    t[(side, v)].append(do_bench(runs[side][v], warmup=25, rep=200, return_mode="median"))
        for v in VARIANTS:
            ratios = [a / b for a, b in zip(t[("triton", v)], t[("tessel", v)])]
            g = math.exp(statistics.fmean(map(math.log, ratios)))
            print(f"N={n:5d} {v:14s} triton {statistics.median(t[('triton', v)]) * 1e3:7.2f} us  tessel "
                  f"{statistics.median(t[('tessel', v)]) * 1e3:7.2f} us  tessel/Triton speed {g:.3f} "
                  f"(rounds {', '.join(f'{x:.3f}' for x in ratios)})", flush=True)


if __name__ == "__main__":
    main()
