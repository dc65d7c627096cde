"""Tutorial 03's `matmul_kernel` compiled for sm_80 (the A100's target: `mma.sync`, `cp.async`, `ldmatrix`) by
upstream Triton and by tessel, both PTXs loaded by one ctypes launcher and timed side by side, config by config.

On a Hopper GPU the sm_80 PTX of both compilers is compiled by the driver's JIT for the device, so what this
measures is each compiler's sm_80 code (its pipelining, operand staging and instruction mix) on Hopper's SMs, not
an A100: the ratio between the two compilers is the claim, not the TFLOP/s. Triton's cubin for sm_80 cannot load
on sm_90, so neither side's is used; both go through `cuModuleLoadData` of their PTX, the same launch path
(`cuLaunchKernel` with the kernel's own parameter list; Triton's two scratch pointers get 0), the same grid and
dynamic shared memory as each compiler's metadata says. Every config is checked against torch on NaN-poisoned
outputs before it is timed; timing is `do_bench` medians per round, the two compilers back to back in
alternating order; ratios are Triton's time over tessel's (> 1: tessel faster), geometric mean with a 95% interval.

Usage: python3 bench/sm80_paired.py TUTORIALS_DIR [--rounds R] [--rep MS] [--check-only] [SIZES...] (default 3
rounds, 40 ms, sizes 1024 2048 4096; `--check-only` launches each config once and checks it, for
compute-sanitizer). Needs a GPU, torch, Triton 3.6 and the tessel wheel.
"""
import argparse
import ctypes
import os
import re
import sys

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.testing import do_bench

import tessel
from tessel import _compiler_face as tessel_face
from tessel.runtime import GPUTarget as TesselTarget

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mm03_configs import load_tutorial, print_rows  # noqa: E402
from mm_paired import fmt  # noqa: E402

_cuda = ctypes.CDLL("libcuda.so.1")

SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
             "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
             "stride_cm": "i32", "stride_cn": "constexpr", "BLOCK_SIZE_M": "constexpr", "BLOCK_SIZE_N": "constexpr",
             "BLOCK_SIZE_K": "constexpr", "GROUP_SIZE_M": "constexpr", "ACTIVATION": "constexpr"}


def _check(result, what):
    if result != 0:
        raise RuntimeError(f"{what}: CUresult {result}")


class PtxKernel:
    """One entry of a PTX module, loaded through the driver's JIT and launched with `cuLaunchKernel`."""

    def __init__(self, ptx, name, shared, threads):
        self.module, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        _check(_cuda.cuModuleLoadData(ctypes.byref(self.module), ptx.encode() + b"\0"), f"loading {name}")
        _check(_cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.module, name.encode()), f"finding {name}")
        if shared > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(_cuda.cuFuncSetAttribute(self.fn, 8, shared), f"{name}: {shared} bytes of shared memory")
        entry = ptx[ptx.index(f".entry {name}("):]
        self.params = re.findall(r"\.param\s+\.(\w+)", entry[:entry.index(")")])
        self.shared, self.threads = shared, threads

    def launcher(self, grid, args):
        """A function launching the kernel on `args` (then zeros for the parameters left: Triton's scratch)."""
        values = list(args) + [0] * (len(self.params) - len(args))
        boxed = [(ctypes.c_uint64 if p.endswith("64") else ctypes.c_int32)(v) for p, v in zip(self.params, values)]
        params = (ctypes.c_void_p * len(boxed))(*[ctypes.cast(ctypes.byref(b), ctypes.c_void_p) for b in boxed])

        def launch():
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            _check(_cuda.cuLaunchKernel(self.fn, grid, 1, 1, self.threads, 1, 1, self.shared, stream, params,
                                        None), "launch")
            launch.keep = (boxed, params)

        return launch


def compile_both(autotuned, meta, num_warps, num_stages):
    consts = dict(stride_ak=1, stride_bn=1, stride_cn=1, GROUP_SIZE_M=8, ACTIVATION="")
    consts.update(meta)
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(SIGNATURE) if SIGNATURE[n] != "constexpr"}
    options = {"num_warps": num_warps, "num_stages": num_stages}
    up = triton.compile(ASTSource(autotuned.fn, SIGNATURE, consts, attrs), target=GPUTarget("cuda", 80, 32),
                        options=options)
    fn = tessel.jit(autotuned.fn.fn)
    index = {n: i for i, n in enumerate(SIGNATURE)}
    ts = tessel_face.compile(tessel_face.ASTSource(fn, SIGNATURE, {(index[k],): v for k, v in consts.items()}, attrs),
                             target=TesselTarget("cuda", 80, 32), options=options)
    threads = 32 * num_warps
    return {"triton": PtxKernel(up.asm["ptx"], up.metadata.name, up.metadata.shared, threads),
            "tessel": PtxKernel(ts.asm["ptx"], ts.metadata.name, ts.metadata.shared, threads)}


def workload(autotuned, n, rounds, rep, check_only):
    torch.manual_seed(n)
    a = torch.randn((n, n), device="cuda", dtype=torch.float16)
    b = torch.randn((n, n), device="cuda", dtype=torch.float16)
    ref = a @ b
    runs = []
    for cfg in autotuned.configs:
        meta = dict(cfg.kwargs)
        label = f"{meta['BLOCK_SIZE_M']}x{meta['BLOCK_SIZE_N']}x{meta['BLOCK_SIZE_K']} w{cfg.num_warps} s{cfg.num_stages}"
        grid = triton.cdiv(n, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"])
        try:
            kernels = compile_both(autotuned, meta, cfg.num_warps, cfg.num_stages)
        except Exception as e:  # a config one side cannot build is reported, not timed
            print(f"  {label}: cannot build: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)
            continue
        pair = {}
        for who, k in kernels.items():
            c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16)
            run = k.launcher(grid, [a.data_ptr(), b.data_ptr(), c.data_ptr(), n, n, n, n, n, n])
            run()
            torch.cuda.synchronize()
            torch.testing.assert_close(c, ref, atol=2e-1, rtol=2e-2, msg=lambda m, who=who: f"{who} {label}: {m}")
            pair[who] = run
        runs.append((label, pair))
    if check_only:
        print(f"== sm_80 PTX, fp16 {n}^3: {len(runs)} configs checked against torch on both sides", flush=True)
        return
    times = {label: {"triton": [], "tessel": []} for label, _ in runs}
    for r in range(rounds):
        order = ("triton", "tessel") if r % 2 == 0 else ("tessel", "triton")
        for label, pair in runs:
            for who in order:
                times[label][who].append(do_bench(pair[who], warmup=10, rep=rep, return_mode="median"))
    flops = 2 * n**3
    print(f"== sm_80 PTX on {torch.cuda.get_device_name()}, fp16 {n}^3, {rounds} rounds (µs: median of the rounds' "
          f"medians; ratio: Triton / tessel, geometric mean [95% CI])", flush=True)
    if not runs:
        return
    best = print_rows(runs, times, flops)
    t, s = times[best["triton"]]["triton"], times[best["tessel"]]["tessel"]
    print(f"  best against best (what each autotuner would pick): ratio {fmt([x / y for x, y in zip(t, s)])}",
          flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tutorials")
    p.add_argument("sizes", nargs="*", type=int, default=[1024, 2048, 4096])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rep", type=int, default=40, help="do_bench's rep (ms) per measurement")
    p.add_argument("--check-only", action="store_true", help="launch and check each config once, no timing")
    args = p.parse_args()
    print(f"triton {triton.__version__}, torch {torch.__version__}, tessel {tessel.__file__}, "
          f"{torch.cuda.get_device_name()}", flush=True)
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the primary context, current in this thread for the driver calls
    autotuned = load_tutorial(args.tutorials)
    for n in args.sizes:
        workload(autotuned, n, args.rounds, args.rep, args.check_only)


if __name__ == "__main__":
    main()
