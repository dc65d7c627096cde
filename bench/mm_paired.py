"""tessel against upstream Triton on examples/tma_matmul.py's kernels, timed in one process, round by round.

Two processes (one per compiler) see different power and clock histories: on the H100 both matmuls run at the
700 W cap, so a drift of a percent between processes is as large as the difference being measured. Here one
process imports upstream Triton and tessel's package side by side and compiles the same kernel source with each
(`triton.jit` as the module decorates it; `tessel.jit` on the function underneath). Each round times every
variant with both compilers back to back (the order alternating between rounds), with cuBLAS timed at the round's
start and end as a control: its end/start ratio is what this harness reads as a difference where there is none.

Variants: `matmul_kernel` at the tile configs bench/anchors_tma.py sweeps (8 warps) and `matmul_kernel_persistent`
(one program per SM) fused (FLATTEN), nested, and fused with WARP_SPECIALIZE (a producer partition running ahead
across tiles; Triton 3.6 does not split a fused loop on Hopper, so that variant may run under tessel alone); for fp8 (e4m3 in, fp16 out), `matmul_kernel_bt` at the configs
anchors_tma.py --fp8 sweeps, with torch._scaled_mm as the cuBLAS control. Every variant is checked against torch
(NaN-poisoned output; fp8 by the relative error of the norm, as the anchors do) before it is timed. Timing is triton.testing.do_bench (warm-up, L2 cleared before each run, CUDA events, median).

Reported per variant: each compiler's median over the rounds' medians and the geometric mean of the per-round
ratios (Triton's time over tessel's: > 1 means tessel is faster) with a 95% confidence interval; then best against
best, where each side's best is its fastest variant in each round; and cuBLAS (the control's geometric mean of
start and end in each round) over each side's best.

Usage: python3 bench/mm_paired.py [--rounds R] [--rep MS] [--dtypes fp16,bf16,fp8] [SIZES...]   (default 8 rounds,
rep 150 ms, fp16 and bf16, sizes 4096 8192). Needs a GPU, torch, Triton 3.6 and the tessel wheel.
"""
import argparse
import math
import os
import statistics
import sys

import torch
import triton
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor as TritonDescriptor

import tessel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import tma_matmul  # noqa: E402

CONFIGS = [(128, 128, 64, 3), (128, 128, 64, 4), (128, 256, 64, 3)]  # bench/anchors_tma.py's sweep
FP8_CONFIGS = [(128, 128, 128, 3), (128, 128, 128, 4), (128, 256, 128, 3), (128, 256, 128, 4)]  # its --fp8 sweep
PERSISTENT = [(128, 256, 64, 3)]
NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else 132
# Student's t, two-sided 95%, by degrees of freedom.
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 11: 2.20,
       12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12, 19: 2.09, 24: 2.06, 29: 2.05}


def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)]


def variants(n, fp8):
    """(name, kernel attribute, grid, constexpr kwargs, (A's block, B's block, C's block)) for N^3: fp8 runs
    matmul_kernel_bt (B as N x K) at FP8_CONFIGS, the others matmul_kernel and the persistent kernel."""
    out = []
    if fp8:
        for bm, bn, bk, s in FP8_CONFIGS:
            out.append((f"matmul_kernel_bt {bm}x{bn}x{bk} s{s}", "matmul_kernel_bt",
                        (triton.cdiv(n, bm) * triton.cdiv(n, bn),), dict(GROUP_M=8, num_warps=8, num_stages=s),
                        ([bm, bk], [bn, bk], [bm, bn])))
        return out
    for bm, bn, bk, s in CONFIGS:
        out.append((f"matmul_kernel {bm}x{bn}x{bk} s{s}", "matmul_kernel", (triton.cdiv(n, bm) * triton.cdiv(n, bn),),
                    dict(GROUP_M=8, num_warps=8, num_stages=s), ([bm, bk], [bk, bn], [bm, bn])))
    for bm, bn, bk, s in PERSISTENT:
        tiles = triton.cdiv(n, bm) * triton.cdiv(n, bn)
        for flatten, ws in ((True, False), (False, False), (True, True)):
            name = f"persistent {'fused' if flatten else 'nested'}{' ws' if ws else ''} {bm}x{bn}x{bk} s{s}"
            out.append((name, "matmul_kernel_persistent", (min(NUM_SMS, tiles),),
                        dict(GROUP_M=8, NUM_SMS=NUM_SMS, FLATTEN=flatten, WARP_SPECIALIZE=ws, num_warps=8,
                             num_stages=s), ([bm, bk], [bk, bn], [bm, bn])))
    return out


def launcher(kernel, desc_type, a, b, c, grid, kwargs, blocks):
    n = a.shape[0]
    da, db, dc = (desc_type.from_tensor(t, block_shape=blk) for t, blk in zip((a, b, c), blocks))

    def run():
        kernel[grid](da, db, dc, n, n, n, **kwargs)

    return run


def log_stats(ratios):
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def fmt(ratios):
    g, lo, hi = log_stats(ratios)
    return f"{g:.4f} [{lo:.4f}, {hi:.4f}]"


def check(c, ref, fp8, what):
    if fp8:
        # Triton accumulates fp8 products with the tensor cores' reduced-precision adds (its default
        # max_num_imprecise_acc), so elements can be off by more than fp16 rounding: compare norms.
        err = ((c.float() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, f"{what}: relative error {err}"
    else:
        torch.testing.assert_close(c, ref, atol=2e-1, rtol=2e-2, msg=lambda m: f"{what}: {m}")


def workload(name, n, rounds, rep):
    fp8 = name == "fp8"
    torch.manual_seed(n)
    if fp8:
        # e4m3 inputs, B given as N x K (what 8-bit wgmma reads), fp16 output; cuBLAS through torch._scaled_mm.
        a = torch.randn((n, n), device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn((n, n), device="cuda").to(torch.float8_e4m3fn)
        ref = a.float() @ b.float().T
        one = torch.ones((), device="cuda")
        cublas = lambda: torch._scaled_mm(a, b.T, scale_a=one, scale_b=one, out_dtype=torch.float16)  # noqa: E731
        c_tri = torch.empty((n, n), device="cuda", dtype=torch.float16)
    else:
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[name]
        a = torch.randn((n, n), device="cuda", dtype=dtype)
        b = torch.randn((n, n), device="cuda", dtype=dtype)
        ref = torch.matmul(a, b)
        cublas = lambda: torch.matmul(a, b)  # noqa: E731
        c_tri = torch.empty_like(ref)
    c_tes = torch.empty_like(c_tri)
    runs = []
    for vname, attr, grid, kwargs, block in variants(n, fp8):
        tri_kernel = getattr(tma_matmul, attr)
        tes_kernel = tessel.jit(tri_kernel.fn)
        pair = {}
        for who, kernel, desc, c in (("triton", tri_kernel, TritonDescriptor, c_tri),
                                     ("tessel", tes_kernel, tessel.TensorDescriptor, c_tes)):
            run = launcher(kernel, desc, a, b, c, grid, kwargs, block)
            c.fill_(float("nan"))
            try:
                run()
                torch.cuda.synchronize()
                check(c, ref, fp8, f"{who} {vname}")
            except Exception as e:
                # Triton 3.6 does not warp-specialize a fused loop on Hopper ("Hopper warpspec doesn't work with
                # flatten", its tutorial 09 says): a variant one compiler cannot run is timed for the other alone.
                if who == "tessel" or not kwargs.get("WARP_SPECIALIZE"):
                    raise
                print(f"{who} {vname}: not run ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
                continue
            pair[who] = run
        # The kernel is deterministic: repeated launches give the same bits (a race, or a missed wait, shows as a
        # launch that differs).
        first = c_tes.clone()
        for _ in range(20):
            c_tes.fill_(float("nan"))
            pair["tessel"]()
            torch.cuda.synchronize()
            assert torch.equal(c_tes, first), f"tessel {vname}: a repeated launch gave different bits"
        runs.append((vname, pair))
    times = {v: {"triton": [], "tessel": []} for v, _ in runs}
    control, cublas_ms = [], []
    for r in range(rounds):
        first = do_bench(cublas, warmup=25, rep=rep, return_mode="median")
        order = ("triton", "tessel") if r % 2 == 0 else ("tessel", "triton")
        for vname, pair in runs:
            for who in order:
                if who in pair:
                    times[vname][who].append(do_bench(pair[who], warmup=25, rep=rep, return_mode="median"))
        last = do_bench(cublas, warmup=25, rep=rep, return_mode="median")
        control.append(first / last)
        cublas_ms.append(math.sqrt(first * last))
    flops = 2 * n**3
    print(f"== {name} {n}^3, {rounds} rounds (ms: median of the rounds' medians; ratio: Triton / tessel, "
          f"geometric mean [95% CI])", flush=True)
    for vname, _ in runs:
        t, s = times[vname]["triton"], times[vname]["tessel"]
        tessel_col = f"tessel {statistics.median(s):.4f} ms ({flops / statistics.median(s) / 1e9:.0f} TFLOP/s)"
        if not t:
            print(f"{vname:34s} triton (not run)  {tessel_col}  tessel vs cuBLAS "
                  f"{fmt([x / y for x, y in zip(cublas_ms, s)])}")
            continue
        ratios = [x / y for x, y in zip(t, s)]
        print(f"{vname:34s} triton {statistics.median(t):.4f} ms ({flops / statistics.median(t) / 1e9:.0f} TFLOP/s)  "
              f"{tessel_col}  ratio {fmt(ratios)}")
    best_t = [min(times[v]["triton"][r] for v, _ in runs if times[v]["triton"]) for r in range(rounds)]
    best_s = [min(times[v]["tessel"][r] for v, _ in runs) for r in range(rounds)]
    print(f"{'best vs best':34s} triton {statistics.median(best_t):.4f} ms  tessel {statistics.median(best_s):.4f} ms  "
          f"ratio {fmt([x / y for x, y in zip(best_t, best_s)])}")
    print(f"{'cuBLAS (torch.matmul / _scaled_mm)':34s} {statistics.median(cublas_ms):.4f} ms  "
          f"cuBLAS / tessel best {fmt([x / y for x, y in zip(cublas_ms, best_s)])}  "
          f"cuBLAS / Triton best {fmt([x / y for x, y in zip(cublas_ms, best_t)])}")
    print(f"{'control: cuBLAS start / end':34s} ratio {fmt(control)}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sizes", nargs="*", type=int, default=[4096, 8192])
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--rep", type=int, default=150, help="do_bench's rep (ms) per measurement")
    p.add_argument("--dtypes", default="fp16,bf16", help="any of fp16, bf16, fp8 (e4m3 in, fp16 out)")
    args = p.parse_args()
    print(f"triton {triton.__version__}, torch {torch.__version__}, tessel {tessel.__file__}, "
          f"{torch.cuda.get_device_name()}", flush=True)
    for d in args.dtypes.split(","):
        for n in args.sizes:
            workload(d, n, args.rounds, args.rep)


if __name__ == "__main__":
    main()
