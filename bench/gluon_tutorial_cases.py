"""The entry kernels of the public Gluon tutorials at their own configurations, for bench/gluon_tutorials.py.

Each case is what the tutorial's test function launches: the constexprs (layouts and classes as the Python the
tutorial passes, evaluated by tessel in the tutorial's module), the signature (a host TensorDescriptor is
`tensordesc<dtype[block]>`), num_warps, the grid, the buffers (`--arg` specs: outputs poisoned with NaN), and a
float64 NumPy reference of the outputs where one is cheap. The tutorials' sources are not copied here.
"""

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Case:
    file: str
    kernel: str
    label: str
    signature: str
    consts: list
    num_warps: int
    grid: str
    args: list
    reference: Callable = field(default=lambda bufs: [])
    has_reference: bool = True
    # More compile flags (`--maxnreg 128` where the tutorial launches with maxnreg=128).
    extra: list = field(default_factory=list)
    # The target the tutorial's kernel is written for: Hopper's tier sm_90a, Blackwell's (06 on) sm_100a.
    arch: str = "sm_90a"
    # Inputs NumPy makes (block-scaled operands and their scales): `inputs(rng)` gives {name: (array, dtype or
    # None)}, each passed as `--arg name=name.npy[:dtype]` (converted to dtype as `.to(dtype)` would).
    inputs: Callable = None
    # More flags for the interpreter run alone (`--clc-policy next` for cluster launch control kernels); `{seed}`
    # is the harness's seed.
    run_extra: list = field(default_factory=list)
    # Where `file` lies: "tutorials" (the harness's first argument) or "examples" (--examples).
    dir: str = "tutorials"
    # Compiled and assembled only, not run: the kernel's inputs come from a package we cannot have (the case's
    # comment says which), so that neither its configuration's data nor a reference can be made here.
    compile_only: bool = False


def cdiv(a, b):
    return -(-a // b)


def same(out, src, tol=0.0):
    return lambda b: [(out, b[src].astype(np.float64), tol)]


def add2d(a, b_, c, shape):
    # In the inputs' dtype, as the kernel adds (the tutorials compare with atol=rtol=0).
    return lambda b: [(c, (b[a] + b[b_]).reshape(shape).astype(np.float64), 0.0)]


BLOCKED_ROWS = "gl.BlockedLayout([1, 1], [1, 32], [1, 4], [1, 0])"
BLOCKED_COLS = "gl.BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1])"
SWIZZLED_ROWS = "gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])"

CASES = []

# 01-intro: test_copy_scalar, test_memcpy (XBLOCK 64, xnumel 500), the autotuned copy at its first config.
CASES += [
    Case("01-intro.py", "copy_scalar_kernel", "01 copy_scalar_kernel", "*fp32,*fp32", [], 1, "1",
         [("in_ptr", "rand:1"), ("out_ptr", "fill:nan:1")], same("out_ptr", "in_ptr")),
    Case("01-intro.py", "memcpy_kernel", "01 memcpy_kernel", "*fp32,*fp32,i32", [("XBLOCK", 64)], 1,
         str(cdiv(500, 64)), [("in_ptr", "randn:500"), ("out_ptr", "fill:nan:500"), ("xnumel", 500)],
         same("out_ptr", "in_ptr")),
    Case("01-intro.py", "memcpy_kernel_autotune", "01 memcpy_kernel_autotune", "*fp32,*fp32,i32", [("XBLOCK", 256)],
         1, str(cdiv(1000, 256)), [("in_ptr", "randn:1000"), ("out_ptr", "fill:nan:1000"), ("xnumel", 1000)],
         same("out_ptr", "in_ptr")),
]

# 02-layouts: test_memcpy_1d (XBLOCK 128, xnumel 1000), test_memcpy_2d (128x256 blocks over 100x2000, plain and
# transposed), test_memcpy_2d_inout (300x400, input transposed).
CASES += [
    Case("02-layouts.py", "memcpy_1d_kernel", "02 memcpy_1d_kernel", "*fp32,*fp32,i32",
         [("XBLOCK", 128), ("layout", "gl.BlockedLayout([1], [32], [4], [0])")], 4, str(cdiv(1000, 128)),
         [("in_ptr", "randn:1000"), ("out_ptr", "fill:nan:1000"), ("xnumel", 1000)], same("out_ptr", "in_ptr")),
    Case("02-layouts.py", "memcpy_2d_kernel", "02 memcpy_2d_kernel", "*fp32,*fp32,i32,i32,i32,i32,i32,i32",
         [("layout", BLOCKED_ROWS), ("XBLOCK", 128), ("YBLOCK", 256)], 4, f"1,{cdiv(2000, 256)}",
         [("in_ptr", "randn:100x2000"), ("out_ptr", "fill:nan:100x2000"), ("xnumel", 100), ("ynumel", 2000),
          ("xstride_in", 2000), ("ystride_in", 1), ("xstride_out", 2000), ("ystride_out", 1)],
         same("out_ptr", "in_ptr")),
    # transposed=True: the tensors are the .T views of 100x2000 row-major buffers.
    Case("02-layouts.py", "memcpy_2d_kernel", "02 memcpy_2d_kernel (transposed)", "*fp32,*fp32,i32,i32,i32,i32,i32,i32",
         [("layout", BLOCKED_ROWS), ("XBLOCK", 256), ("YBLOCK", 128)], 4, f"{cdiv(2000, 256)},1",
         [("in_ptr", "randn:100x2000"), ("out_ptr", "fill:nan:100x2000"), ("xnumel", 2000), ("ynumel", 100),
          ("xstride_in", 1), ("ystride_in", 2000), ("xstride_out", 1), ("ystride_out", 2000)],
         same("out_ptr", "in_ptr")),
    Case("02-layouts.py", "memcpy_2d_inout_kernel", "02 memcpy_2d_inout_kernel", "*fp32,*fp32,i32,i32,i32,i32,i32,i32",
         [("layout_in", BLOCKED_COLS), ("layout_out", BLOCKED_ROWS), ("XBLOCK", 128), ("YBLOCK", 128)], 4,
         f"{cdiv(300, 128)},{cdiv(400, 128)}",
         [("in_ptr", "randn:400x300"), ("out_ptr", "fill:nan:300x400"), ("xnumel", 300), ("ynumel", 400),
          ("xstride_in", 1), ("ystride_in", 300), ("xstride_out", 400), ("ystride_out", 1)],
         lambda b: [("out_ptr", b["in_ptr"].reshape(400, 300).T.astype(np.float64), 0.0)]),
]

# 03-async-copy: test_memcpy_1d_cpasync (1000, 256), the adds over 1000x2000 (32x32 blocks; the pipelined one
# at 32x64 with 2 and 3 buffers).
ADD_ARGS = [("a_ptr", "randn:1000x2000"), ("b_ptr", "randn:1000x2000"), ("c_ptr", "fill:nan:1000x2000"),
            ("xnumel", 1000), ("ynumel", 2000)] + [(f"{d}stride_{t}", s) for t in "abc" for d, s in (("x", 2000), ("y", 1))]
ADD_SIG = "*fp32,*fp32,*fp32" + ",i32" * 8
CASES += [
    Case("03-async-copy.py", "memcpy_1d_cpasync_kernel", "03 memcpy_1d_cpasync_kernel", "*fp32,*fp32,i32",
         [("XBLOCK", 256)], 4, str(cdiv(1000, 256)),
         [("in_ptr", "randn:1000"), ("out_ptr", "fill:nan:1000"), ("xnumel", 1000)], same("out_ptr", "in_ptr")),
    Case("03-async-copy.py", "elementwise_add_kernel", "03 elementwise_add_kernel", ADD_SIG,
         [("XBLOCK", 32), ("YBLOCK", 32)], 4, str(cdiv(1000, 32)), ADD_ARGS,
         add2d("a_ptr", "b_ptr", "c_ptr", (1000, 2000))),
    Case("03-async-copy.py", "elementwise_add_cpasync_kernel", "03 elementwise_add_cpasync_kernel", ADD_SIG,
         [("XBLOCK", 32), ("YBLOCK", 32), ("smem_layout", SWIZZLED_ROWS)], 4, str(cdiv(1000, 32)), ADD_ARGS,
         add2d("a_ptr", "b_ptr", "c_ptr", (1000, 2000))),
] + [
    Case("03-async-copy.py", "elementwise_add_pipelined_kernel", f"03 elementwise_add_pipelined_kernel (bufs={n})",
         ADD_SIG, [("XBLOCK", 32), ("YBLOCK", 64), ("smem_layout", SWIZZLED_ROWS), ("num_buffers", n)], 4,
         str(cdiv(1000, 32)), ADD_ARGS, add2d("a_ptr", "b_ptr", "c_ptr", (1000, 2000)))
    for n in (1, 2, 3)
]

# 04-tma: test_memcpy_1d_tma (XBLOCK 64, xnumel 500, 1 warp), test_tma_message_passing (16 int32, 2 programs,
# 1 warp), test_elementwise_add_pipelined (1000x2000, 32x64 blocks, 2 buffers).
TMA_ADD_ARGS = [("a", "randn:1000x2000"), ("b", "randn:1000x2000"), ("c", "fill:nan:1000x2000"),
                ("a_desc", "desc:a:block=32x64"), ("b_desc", "desc:b:block=32x64"), ("c_desc", "desc:c:block=32x64"),
                ("xnumel", 1000), ("ynumel", 2000)]
CASES += [
    Case("04-tma.py", "memcpy_1d_tma_kernel", "04 memcpy_1d_tma_kernel", "tensordesc<fp32[64]>,tensordesc<fp32[64]>",
         [("XBLOCK", 64)], 1, str(cdiv(500, 64)),
         [("x", "randn:500"), ("y", "fill:nan:500"), ("in_desc", "desc:x:block=64"), ("out_desc", "desc:y:block=64")],
         same("y", "x")),
    Case("04-tma.py", "tma_message_passing_kernel", "04 tma_message_passing_kernel", "tensordesc<i32[16]>,*i32,*i32",
         [("MESSAGE_SIZE", 16)], 1, "2",
         [("message", "fill:-1:16:i32"), ("message_desc", "desc:message:block=16"), ("ready", "zeros:1:i32"),
          ("output", "fill:-1:16:i32")],
         lambda b: [("output", np.arange(16, dtype=np.float64) + 1000, 0.0)]),
] + [
    Case("04-tma.py", "elementwise_add_tma_kernel", f"04 elementwise_add_tma_kernel (bufs={n})",
         "tensordesc<fp32[32, 64]>,tensordesc<fp32[32, 64]>,tensordesc<fp32[32, 64]>,i32,i32",
         [("XBLOCK", 32), ("YBLOCK", 64), ("num_buffers", n)], 4, str(cdiv(1000, 32)), TMA_ADD_ARGS,
         add2d("a", "b", "c", (1000, 2000)))
    for n in (1, 2, 3)
]


# 05-wgmma: test_small_mma (64x32x32, INSTR_SHAPE_N 16, A in shared memory and in registers), the blocked matmuls at
# 208x416x304 with 64^3 blocks (B plain and transposed), and the pipelined one (4 and 8 warps, 128^3 blocks too).
def matmul_ref(a, b, c, shape_a, shape_b, transpose_b=False, bias=None, tol=1e-2):
    def ref(bufs):
        A = bufs[a].reshape(shape_a).astype(np.float64)
        B = bufs[b].reshape(shape_b).astype(np.float64)
        D = A @ (B.T if transpose_b else B)
        if bias is not None:
            D = D + bufs[bias].reshape(D.shape).astype(np.float64)
        return [(c, D, tol)]

    return ref


def small_mma(lhs_in_reg):
    return Case("05-wgmma.py", "small_mma_kernel", f"05 small_mma_kernel (LHS_IN_REG={lhs_in_reg})",
                "tensordesc<fp16[64, 32]>,tensordesc<fp16[32, 32]>,tensordesc<fp32[64, 32]>,tensordesc<fp32[64, 32]>",
                [("LHS_IN_REG", lhs_in_reg), ("INSTR_SHAPE_N", 16), ("num_warps", 4)], 4, "1",
                [("A", "randn:64x32:fp16"), ("B", "randn:32x32:fp16"), ("C", "randn:64x32"), ("D", "fill:nan:64x32"),
                 ("a_desc", "desc:A:block=64x32"), ("b_desc", "desc:B:block=32x32"), ("c_desc", "desc:C:block=64x32"),
                 ("d_desc", "desc:D:block=64x32")],
                matmul_ref("A", "B", "D", (64, 32), (32, 32), bias="C", tol=1e-3))


def blocked_matmul(kernel, bm, bn, bk, warps, transpose_b=None, M=208, N=416, K=304):
    b_shape = (N, K) if transpose_b else (K, N)
    b_block = (bn, bk) if transpose_b else (bk, bn)
    consts = ([("TRANSPOSE_B", transpose_b)] if transpose_b is not None else []) + [("num_warps", warps)]
    tb = f", TRANSPOSE_B={transpose_b}" if transpose_b is not None else ""
    return Case("05-wgmma.py", kernel, f"05 {kernel} ({bm}x{bn}x{bk}, {warps} warps{tb})",
                f"tensordesc<fp16[{bm}, {bk}]>,tensordesc<fp16[{b_block[0]}, {b_block[1]}]>,tensordesc<fp16[{bm}, {bn}]>",
                consts, warps, f"{cdiv(M, bm)},{cdiv(N, bn)}",
                [("A", f"randn:{M}x{K}:fp16"), ("B", f"randn:{b_shape[0]}x{b_shape[1]}:fp16"),
                 ("C", f"fill:nan:{M}x{N}:fp16"), ("a_desc", f"desc:A:block={bm}x{bk}"),
                 ("b_desc", f"desc:B:block={b_block[0]}x{b_block[1]}"), ("c_desc", f"desc:C:block={bm}x{bn}")],
                matmul_ref("A", "B", "C", (M, K), b_shape, bool(transpose_b)))


CASES += [small_mma(False), small_mma(True)]
CASES += [blocked_matmul("blocked_matmul_kernel", 64, 64, 64, 4, t) for t in (False, True)]
CASES += [blocked_matmul("blocked_matmul_kernel", 128, 128, 128, 8, False)]
CASES += [blocked_matmul("blocked_matmul_pipelined_kernel", 64, 64, 64, 4),
          blocked_matmul("blocked_matmul_pipelined_kernel", 128, 128, 128, 8)]


# 06-tcgen05 (Blackwell, sm_100a: compiled and assembled, run in the interpreter): test_tmem_example_kernel (every
# M, N, num_warps), test_small_mma (every shape, A in shared or tensor memory, with and without tcgen05_commit, 4
# and 8 warps), test_blocked_matmul and test_blocked_matmul_pipelined at 208x416x304 (the GPU's 2000x1000x2000 is
# too big for the interpreter) with each block shape, B plain and transposed, 4 and 8 warps.
def tmem_example(m, n, warps):
    return Case("06-tcgen05.py", "tmem_example_kernel", f"06 tmem_example_kernel ({m}x{n}, {warps} warps)",
                "*fp32,*fp32", [("M", m), ("N", n), ("num_warps", warps)], warps, "1",
                [("in_ptr", f"randn:{m}x{n}"), ("out_ptr", f"fill:nan:{m}x{n}")], same("out_ptr", "in_ptr"),
                arch="sm_100a")


def small_mma_06(m, n, k, lhs_in_tmem, use_commit, warps):
    block = (min(128, m), n)
    return Case("06-tcgen05.py", "small_mma_kernel",
                f"06 small_mma_kernel ({m}x{n}x{k}, LHS_IN_TMEM={lhs_in_tmem}, USE_COMMIT={use_commit}, {warps} warps)",
                f"tensordesc<fp16[{m}, {k}]>,tensordesc<fp16[{k}, {n}]>,tensordesc<fp32[{m}, {n}]>,"
                f"tensordesc<fp32[{m}, {n}]>",
                [("tmem_block", f"({block[0]}, {block[1]})"), ("LHS_IN_TMEM", lhs_in_tmem), ("USE_COMMIT", use_commit),
                 ("num_warps", warps)], warps, "1",
                [("A", f"randn:{m}x{k}:fp16"), ("B", f"randn:{k}x{n}:fp16"), ("C", f"randn:{m}x{n}"),
                 ("D", f"fill:nan:{m}x{n}"), ("a_desc", f"desc:A:block={m}x{k}"), ("b_desc", f"desc:B:block={k}x{n}"),
                 ("c_desc", f"desc:C:block={m}x{n}"), ("d_desc", f"desc:D:block={m}x{n}")],
                matmul_ref("A", "B", "D", (m, k), (k, n), bias="C", tol=1e-3), arch="sm_100a")


def blocked_matmul_06(kernel, bm, bn, bk, warps, transpose_b=None, M=208, N=416, K=304):
    c = blocked_matmul(kernel, bm, bn, bk, warps, transpose_b, M, N, K)
    c.file, c.label, c.arch = "06-tcgen05.py", c.label.replace("05 ", "06 ", 1), "sm_100a"
    if kernel == "blocked_matmul_pipelined_kernel":
        c.grid = f"{cdiv(M, 2 * bm)},{cdiv(N, bn)}"
    return c


CASES += [tmem_example(m, n, w) for m in (64, 128, 256) for n in (64, 128) for w in (4, 8)]
CASES += [small_mma_06(m, n, k, lhs, commit, w) for (m, n, k) in ((128, 128, 128), (64, 128, 128), (64, 256, 256),
                                                                   (256, 64, 64))
          for lhs in (False, True) for commit in (False, True) for w in (4, 8)]
CASES += [blocked_matmul_06("blocked_matmul_kernel", b, b, b, w, t) for b in (64, 128) for w in (4, 8)
          for t in (False, True)]
CASES += [blocked_matmul_06("blocked_matmul_pipelined_kernel", b, b, b, w) for b in (64, 128) for w in (4, 8)]


# 07-persistence: the pipelined matmul (128x256x64 blocks, 2-4 buffers, 4 and 8 warps), the persistent one (with
# each scheduler) and the persistent pipelined one (3 buffers; 4 buffers steal B's buffers for the epilogue, at
# 64^3 blocks too). The tests' 2000x1000x2000 is the GPU's; the interpreter here runs 208x416x304 (the pipelined
# persistent test's other shape). The persistent grids are 3 programs, not min(SMs, tiles), so that every program
# runs several tiles (at min(132, tiles) each runs one).
def mm07(kernel, label, bm, bn, bk, warps, consts, grid=None, half=False, M=208, N=416, K=304):
    sig = f"tensordesc<fp16[{bm}, {bk}]>,tensordesc<fp16[{bk}, {bn}]>,tensordesc<fp16[{bm}, {bn}]>"
    args = [("A", f"randn:{M}x{K}:fp16"), ("B", f"randn:{K}x{N}:fp16"), ("C", f"fill:nan:{M}x{N}:fp16"),
            ("a_desc", f"desc:A:block={bm}x{bk}"), ("b_desc", f"desc:B:block={bk}x{bn}"),
            ("c_desc", f"desc:C:block={bm}x{bn}")]
    if half:
        sig += f",tensordesc<fp16[{bm}, {bn // 2}]>"
        args.append(("c_half_desc", f"desc:C:block={bm}x{bn // 2}"))
    return Case("07-persistence.py", kernel, f"07 {kernel} ({bm}x{bn}x{bk}, {warps} warps, {label})", sig,
                [("MMAImpl", "WGMMA")] + consts + [("num_warps", warps)], warps,
                grid or f"{cdiv(M, bm)},{cdiv(N, bn)}", args, matmul_ref("A", "B", "C", (M, K), (K, N)))


SCHEDULERS = ["PersistentTileScheduler", "GroupedPersistentTileScheduler(1)", "GroupedPersistentTileScheduler(8)"]
CASES += [mm07("matmul_pipelined_kernel", f"bufs={n}", 128, 256, 64, w, [("num_buffers", n)])
          for n in (2, 3, 4) for w in (4, 8)]
CASES += [mm07("persistent_matmul_kernel", f"bufs={n}, {s}", 128, 256, 64, w,
               [("SchedulerImpl", s), ("num_buffers", n)], grid="3")
          for s in SCHEDULERS for n, w in ((2, 4), (3, 8), (4, 8))]
CASES += [mm07("persistent_matmul_pipelined_kernel", f"bufs={n}, {s}", bm, bn, bk, w,
               [("SchedulerImpl", s), ("num_buffers", n), ("STEALB", n == 4)], grid="3", half=True)
          for s in SCHEDULERS for (bm, bn, bk) in ((64, 64, 64), (128, 256, 64)) for n, w in ((3, 4), (4, 8))]


# 08-warp-specialization: the Hopper kernel (the matmul there is Blackwell's): test_elementwise_add_warp_specialized
# at 1000x2000 and 4000x120, 32x64 blocks, 1 and 2 buffers each way, 4 and 8 warps, maxnreg=128 as launched.
def ws_add(xnumel, ynumel, nbuf, warps):
    args = [("a", f"randn:{xnumel}x{ynumel}"), ("b", f"randn:{xnumel}x{ynumel}"), ("c", f"fill:nan:{xnumel}x{ynumel}"),
            ("a_desc", "desc:a:block=32x64"), ("b_desc", "desc:b:block=32x64"), ("c_desc", "desc:c:block=32x64"),
            ("xnumel", xnumel), ("ynumel", ynumel)]
    return Case("08-warp-specialization.py", "elementwise_add_warp_specialized_kernel",
                f"08 elementwise_add_warp_specialized_kernel ({xnumel}x{ynumel}, bufs={nbuf}, {warps} warps)",
                "tensordesc<fp32[32, 64]>,tensordesc<fp32[32, 64]>,tensordesc<fp32[32, 64]>,i32,i32",
                [("XBLOCK", 32), ("YBLOCK", 64), ("num_load_buffers", nbuf), ("num_store_buffers", nbuf),
                 ("num_warps", warps)], warps, str(cdiv(xnumel, 32)), args,
                add2d("a", "b", "c", (xnumel, ynumel)), extra=["--maxnreg", "128"])


CASES += [ws_add(x, y, n, w) for (x, y) in ((1000, 2000), (4000, 120)) for n in (1, 2) for w in (4, 8)]


# 08's Blackwell matmul: test_matmul_warp_specialized (128x256x64 blocks, 2-4 buffers, an epilogue subtiled by 4,
# 4 warps, each of 07's schedulers, which 08 imports as the sibling module t7). The interpreter runs 208x416x304
# with 3 programs, so that every program runs several tiles and both accumulator buffers turn over.
def mm08_ws(nbuf, sched, M=208, N=416, K=304):
    bm, bn, bk, sub = 128, 256, 64, 4
    sig = f"tensordesc<fp16[{bm}, {bk}]>,tensordesc<fp16[{bk}, {bn}]>,tensordesc<fp16[{bm}, {bn // sub}]>"
    args = [("A", f"randn:{M}x{K}:fp16"), ("B", f"randn:{K}x{N}:fp16"), ("C", f"fill:nan:{M}x{N}:fp16"),
            ("a_desc", f"desc:A:block={bm}x{bk}"), ("b_desc", f"desc:B:block={bk}x{bn}"),
            ("c_desc", f"desc:C:block={bm}x{bn // sub}")]
    return Case("08-warp-specialization.py", "matmul_warp_specialized_kernel",
                f"08 matmul_warp_specialized_kernel ({bm}x{bn}x{bk}, bufs={nbuf}, {sched})", sig,
                [("SchedulerImpl", f"t7.{sched}"), ("num_buffers", nbuf), ("SUBTILE_FACTOR", sub), ("num_warps", 4)],
                4, "3", args, matmul_ref("A", "B", "C", (M, K), (K, N)), arch="sm_100a")


CASES += [mm08_ws(n, s) for s in SCHEDULERS for n in (2, 3, 4)]

# 13-conv-im2col: the im2col copy of the tutorial's five examples (a 1x4x4x32 or 2x4x4x32 fp32 image, 16x32
# block, 1 warp) and the convolution (N=1, 16x16, Ci=Co=64, 3x3, stride 1, padding 1, 64^3 blocks), through
# `desc_im2col` arguments (the pixel box's corners as TensorDescriptorIm2Col.from_tensor takes them).
# The convolution races as the tutorial writes it, and tessel says so (a compile warning: "this TMA load
# overwrites shared memory that an asynchronous warpgroup_mma may still be reading"): one A and one B buffer, and
# each iteration issues its TMA loads into them before `mma.wait_num_outstanding(0)` retires the previous
# iteration's asynchronous wgmma, which may still be reading them (upstream Triton's PTX for that loop shape has
# no wgmma.wait_group between the commit and the next cp.async.bulk.tensor either). gluon/tests/wgmma_loop.rs
# has the same loop shape, both ways.
def im2col_ref(x, lower, upper, coord, offsets, pixels):
    """The block of a TMA im2col load, by listing the pixel box's positions (batch-major, then h, then w) from the
    coordinates on, shifting each by the offsets; zero outside the image or past the channels."""
    n_img, h_img, w_img, c_img = x.shape
    box = [(n, h, w) for n in range(coord[0], n_img + 1) for h in range(lower[0], h_img + upper[0])
           for w in range(lower[1], w_img + upper[1])]
    start = box.index(tuple(coord[:3]))
    out = np.zeros((pixels, 32))
    for p, (n, h, w) in enumerate(box[start:start + pixels]):
        h, w = h + offsets[0], w + offsets[1]
        if 0 <= n < n_img and 0 <= h < h_img and 0 <= w < w_img:
            c = x[n, h, w, coord[3]:coord[3] + 32].astype(np.float64)
            out[p, :len(c)] = c
    return out


def im2col_case(example, shape, lower, upper, coord, offsets):
    image = "x".join(map(str, shape))
    box = f"lower={lower[0]}x{lower[1]}:upper={upper[0]}x{upper[1]}"
    return Case("13-conv-im2col.py", "tma_im2col_kernel", f"13 tma_im2col_kernel ({example})",
                "tensordesc_im2col<fp32[16, 32]>,tensordesc<fp32[16, 32]>,i32,i32,i32,i32",
                [("offset_h", offsets[0]), ("offset_w", offsets[1])], 1, "1",
                [("inp", f"randn:{image}"), ("out", "fill:nan:16x32"), ("in_desc", f"desc_im2col:inp:block=16x32:{box}"),
                 ("out_desc", "desc:out:block=16x32"), ("coord_n", coord[0]), ("coord_h", coord[1]),
                 ("coord_w", coord[2]), ("coord_c", coord[3])],
                lambda b: [("out", im2col_ref(b["inp"].reshape(shape), lower, upper, coord, offsets, 16), 0.0)])


def conv_ref(b):
    x = b["x"].reshape(1, 16, 16, 64).astype(np.float64)
    w = b["w"].reshape(64, 3, 3, 64).astype(np.float64)
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    y = sum(np.einsum("nhwc,oc->nhwo", xp[:, r:r + 16, s:s + 16, :], w[:, r, s, :]) for r in range(3) for s in range(3))
    return [("y", y.reshape(256, 64), 1e-2)]


CASES += [
    im2col_case("basic", (1, 4, 4, 32), (0, 0), (0, 0), (0, 0, 0, 0), (0, 0)),
    im2col_case("padded", (1, 4, 4, 32), (-1, -1), (-1, -1), (0, -1, -1, 0), (0, 0)),
    im2col_case("offset", (1, 4, 4, 32), (-1, -1), (-1, -1), (0, -1, -1, 0), (1, 1)),
    im2col_case("multi-batch", (2, 4, 4, 32), (0, 0), (0, 0), (0, 1, 3, 0), (0, 0)),
    im2col_case("multi-batch padded", (2, 4, 4, 32), (-1, -1), (-1, -1), (0, 1, 2, 0), (0, 0)),
    Case("13-conv-im2col.py", "conv2d_im2col_kernel", "13 conv2d_im2col_kernel",
         "tensordesc_im2col<fp16[64, 64]>,tensordesc<fp16[64, 64]>,tensordesc<fp16[64, 64]>,i32,i32,i32,i32,i32,i32,i32",
         [("stride_h", 1), ("stride_w", 1), ("MMAImpl", "t7.WGMMA"), ("BLOCK_M", 64), ("BLOCK_N", 64), ("BLOCK_K", 64),
          ("num_warps", 4)], 4, "4,1",
         [("x", "randn:1x16x16x64:fp16"), ("w", "randn:64x3x3x64:fp16"), ("y", "fill:nan:256x64:fp16"),
          ("in_desc", "desc_im2col:x:block=64x64:lower=-1x-1:upper=-1x-1"),
          ("weight_desc", "desc:w:64x576:block=64x64"), ("out_desc", "desc:y:block=64x64"), ("R", 3), ("S", 3),
          ("Ci", 64), ("out_h", 16), ("out_w", 16), ("pad_h", 1), ("pad_w", 1)], conv_ref),
]


# 14-multicta: the multi-CTA softmax at the tutorial's own configuration picker (warps and CTAs per cluster from
# the row length): its test's shapes, then rows long enough for clusters of 2, 4 and 8 CTAs; and the multicast TMA
# copy (test_tma_multicast_copy: one 128x128 fp16 block, two CTAs, descriptors in a broadcast cga_layout). The
# other kernels of 14 are Blackwell's (tcgen05, CLC).
def multicta_config(n_cols):
    warps = next((v for limit, v in [(3072, 1), (6144, 2)] if n_cols <= limit), 4)
    ctas = next((v for limit, v in [(16 * 1024, 1), (32 * 1024, 2), (64 * 1024, 4), (128 * 1024, 8)] if n_cols <= limit),
                16)
    return warps, ctas


def softmax_ref(m, n):
    def ref(b):
        x = b["x_ptr"].reshape(m, n).astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return [("out_ptr", e / e.sum(axis=1, keepdims=True), 1e-5)]
    return ref


def multicta_case(m, n):
    warps, ctas = multicta_config(n)
    return Case("14-multicta.py", "multicta_softmax_kernel", f"14 multicta_softmax_kernel ({m}x{n}, {ctas} CTAs)",
                "*fp32,*fp32,i32,i32", [("BLOCK_N", n)], warps, str(m),
                [("x_ptr", f"randn:{m}x{n}"), ("out_ptr", f"fill:nan:{m}x{n}"), ("x_row_stride", n),
                 ("out_row_stride", n)], softmax_ref(m, n), extra=["--num-ctas", str(ctas)])


CASES += [multicta_case(m, n) for (m, n) in ((64, 64), (64, 256), (4, 2**15), (16, 2**16), (2, 2**17))]

MULTICAST_DESC = ("tensordesc<fp16[128, 128],NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, "
                  "cga_layout=[[0, 0]])>")
CASES += [
    Case("14-multicta.py", "tma_multicast_copy_kernel", "14 tma_multicast_copy_kernel (128x128 fp16, 2 CTAs)",
         f"{MULTICAST_DESC},{MULTICAST_DESC}", [], 4, "1",
         [("inp", "randn:128x128:fp16"), ("out", "fill:nan:128x128:fp16"), ("in_desc", "desc:inp:block=128x128"),
          ("out_desc", "desc:out:block=128x128")], same("out", "inp"), extra=["--num-ctas", "2"]),
]

# 14-multicta's Blackwell kernels at their tests' configurations: two_cta_tcgen05_kernel (test_two_cta_tcgen05: one
# 256x128x64 fp16 tile on a CTA pair, A split along M, B along N, the C tile along M) and tma_tcgen05_kernel
# (test_tma_tcgen05 through tma_tcgen05_example: 512x128x128 in two K blocks of 64 on 4 CTAs, two pairs, B's halves
# multicast to both pairs, the MMAs' completion multicast).
def nvmma16(block, cga):
    return (f"tensordesc<fp16[{block[0]}, {block[1]}],NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, "
            f"rank=2, cga_layout={cga})>")


CASES += [
    Case("14-multicta.py", "two_cta_tcgen05_kernel", "14 two_cta_tcgen05_kernel (256x128x64 fp16, 2 CTAs)",
         ",".join([nvmma16((256, 64), "[[1, 0]]"), nvmma16((64, 128), "[[0, 1]]"), nvmma16((256, 128), "[[1, 0]]")]),
         [], 4, "1",
         [("a", "randn:256x64:fp16"), ("b", "randn:64x128:fp16"), ("c", "fill:nan:256x128:fp16"),
          ("a_desc", "desc:a:block=256x64"), ("b_desc", "desc:b:block=64x128"), ("c_desc", "desc:c:block=256x128")],
         matmul_ref("a", "b", "c", (256, 64), (64, 128)), extra=["--num-ctas", "2"], arch="sm_100a"),
    Case("14-multicta.py", "tma_tcgen05_kernel", "14 tma_tcgen05_kernel (512x128x128 fp16, 4 CTAs)",
         ",".join([nvmma16((512, 64), "[[1, 0], [2, 0]]"), nvmma16((64, 128), "[[0, 1], [0, 0]]"),
                   nvmma16((512, 128), "[[1, 0], [2, 0]]")]),
         [("NUM_K_TILES", 2),
          ("acc_tmem_layout", "TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout=((1, 0), (2, 0)), "
                              "two_ctas=True)")], 4, "1",
         [("a", "randn:512x128:fp16"), ("b", "randn:128x128:fp16"), ("c", "fill:nan:512x128:fp16"),
          ("a_desc", "desc:a:block=512x64"), ("b_desc", "desc:b:block=64x128"), ("out_desc", "desc:c:block=512x128")],
         matmul_ref("a", "b", "c", (512, 128), (128, 128)), extra=["--num-ctas", "4"], arch="sm_100a"),
]

# 10-tcgen05-copy (Blackwell): test_tcgen05_copy_nvmma_shared at every configuration it runs (f32, TMEM block M
# 128, every block N, M and N, every swizzle, with the test's skips), and test_matmul_accumulate's kernel (D = A @
# B + C with C copied into tensor memory by tcgen05_copy, warp-specialized) at 256x256x256 (the GPU's
# 1024x1024x2048 is the interpreter's minutes) on grids of 2 programs, so that each runs two tiles.
def tcgen05_copy_case(m, n, block_n, swizzle):
    return Case("10-tcgen05-copy.py", "tcgen05_copy_kernel",
                f"10 tcgen05_copy_kernel ({m}x{n}, TMEM block (128, {block_n}), swizzle {swizzle})",
                "*fp32,i32,i32,*fp32,i32,i32",
                [("M", m), ("N", n),
                 ("smem_layout", f"gl.NVMMASharedLayout(swizzle_byte_width={swizzle}, element_bitwidth=32, rank=2)"),
                 ("tmem_layout", f"TensorMemoryLayout(block=(128, {block_n}), col_stride=1)")], 4, "1",
                [("in_ptr", f"randn:{m}x{n}"), ("in_stride0", n), ("in_stride1", 1), ("out_ptr", f"fill:nan:{m}x{n}"),
                 ("out_stride0", n), ("out_stride1", 1)], same("out_ptr", "in_ptr"), arch="sm_100a")


def tcgen05_copy_configs():
    for block_n in [1, 2, 4, 8, 16, 32, 64, 128, 256]:
        for m in [128, 256]:
            for n in [16, 32, 64, 128, 256]:
                if n < block_n or m * n * 4 > 228 * 1024:
                    continue
                for swizzle in [32, 64, 128]:
                    if m == 256 and swizzle // block_n >= 8:
                        continue
                    if n < swizzle // 4:
                        continue
                    yield m, n, block_n, swizzle


def matmul_accumulate_case(bm, bn, bk=64, M=256, N=256, K=256):
    def ref(b):
        A = b["A"].reshape(M, K).astype(np.float64)
        B = b["B"].reshape(K, N).astype(np.float64)
        return [("d_ptr", A @ B + b["C"].reshape(M, N).astype(np.float64), 1e-3)]

    return Case("10-tcgen05-copy.py", "matmul_accumulate_kernel",
                f"10 matmul_accumulate_kernel ({bm}x{bn}x{bk}, 3 buffers)",
                f"tensordesc<fp16[{bm}, {bk}]>,tensordesc<fp16[{bk}, {bn}]>,tensordesc<fp32[{bm}, {bn}]>,*fp32,i32,i32",
                [("SchedulerImpl", "t7.GroupedPersistentTileScheduler(8)"), ("num_buffers", 3)], 4, "2",
                [("A", f"randn:{M}x{K}:fp16"), ("B", f"randn:{K}x{N}:fp16"), ("C", f"randn:{M}x{N}"),
                 ("a_desc", f"desc:A:block={bm}x{bk}"), ("b_desc", f"desc:B:block={bk}x{bn}"),
                 ("c_desc", f"desc:C:block={bm}x{bn}"), ("d_ptr", f"fill:nan:{M}x{N}"), ("d_stride_m", N),
                 ("d_stride_n", 1)], ref, arch="sm_100a")


CASES += [tcgen05_copy_case(*c) for c in tcgen05_copy_configs()]
CASES += [matmul_accumulate_case(128, bn) for bn in (128, 64)]


# 11-tcgen05-mma-scaled (Blackwell): every kernel its tests launch, at every block shape and format pair they run
# (with their skips), on small problems the interpreter runs in seconds: the simple and contiguous-scale kernels
# at M = 128, N = 2 blocks, K = 2 blocks (two iterations); the packed-block and tcgen05_copy kernels likewise; the
# pipelined and warp-specialized ones (128x256 blocks, 3 buffers, the tests' grouped persistent scheduler) over
# the tests' K values at 128x128, and ragged 500x600 on two programs. The operands hold random e2m1 values
# (exactly representable in e4m3, as the tutorial's random_quantized_tensor makes them), the scales random
# powers of two in [2^-7, 2^1] (e8m0 in a u8, or e4m3 for nvfp4). The reference decodes the buffers the
# interpreter read (e2m1 nibbles, e8m0 exponents, e4m3 values; the scale layouts undone) and multiplies in
# float64; the output is fp16, as the tutorial's. The pipelined and warp-specialized kernels allocate the scales'
# tensor memory in `async_mma_scaled_impl` (each inlined call its own planned columns, the same each time that
# call runs) and copy a K step's scales into it while the previous step's MMA through the same call may still
# read them: the PTX ISA runs a tcgen05.cp before a later MMA in issue order, but not an MMA before a later
# tcgen05.cp, so the interpreter's default (`--mma-order isa`) refuses that, naming the copy and the MMA. That
# happens when one call runs twice with no wait between: in the warp-specialized kernel's K loop from the second
# K step of a tile on; in the pipelined kernel's steady-state loop (K steps 3 on; the first two and the drain
# are other calls) from its second iteration, i.e. with 4 K steps or more. Those cases rely on the tensor cores
# running one thread's tcgen05 ops in issue order, and run with `--mma-order issue`, which allows that and checks
# the rest (the label says so); the others run under `isa`.
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float64)
FORMATS = [("mxfp8", "mxfp8"), ("mxfp8", "mxfp4"), ("mxfp4", "mxfp8"), ("mxfp4", "mxfp4"), ("nvfp4", "nvfp4")]


def vec_size(fmt):
    return 16 if fmt == "nvfp4" else 32


def quantized(rng, rows, k, fmt):
    """Operand values (rows x k) as the kernel's buffer holds them, with their dtype, and the scales
    (rows x k // VEC) as e8m0 exponents (uint8) or e4m3 values (float32, converted to fp8e4nv)."""
    nib = rng.integers(0, 16, size=(rows, k))
    if fmt == "mxfp8":
        values = (E2M1[nib].astype(np.float32), "fp8e4nv")
    else:
        values = (((nib[:, 1::2] << 4) | nib[:, 0::2]).astype(np.uint8), None)
    exps = rng.integers(120, 129, size=(rows, k // vec_size(fmt)))
    if fmt == "nvfp4":
        scales = ((2.0 ** (exps - 127)).astype(np.float32), "fp8e4nv")
    else:
        scales = (exps.astype(np.uint8), None)
    return values, scales


def dequantized(values, scales, rows, k, fmt):
    """The float64 matrix an operand's buffer and scales (as the interpreter wrote them back) stand for."""
    if fmt == "mxfp8":
        v = values.reshape(rows, k).astype(np.float64)
    else:
        packed = values.reshape(rows, k // 2).astype(np.uint8)
        v = np.empty((rows, k))
        v[:, 0::2], v[:, 1::2] = E2M1[packed & 0xF], E2M1[packed >> 4]
    s = scales.reshape(rows, k // vec_size(fmt)).astype(np.float64)
    if fmt != "nvfp4":
        s = 2.0 ** (s - 127)
    return v * np.repeat(s, vec_size(fmt), axis=1)


def contiguous_scales(s, block_mn, block_k, vec):
    """relayout_scales_contiguous: [MN // BLOCK_MN, SCALE_K // SBK, BLOCK_MN, SBK], contiguous."""
    mn, sk = s.shape
    sbk = block_k // vec
    return s.reshape(mn // block_mn, block_mn, sk // sbk, sbk).transpose(0, 2, 1, 3).copy()


def packed_block_scales(s):
    """swizzle_scales_packed_block: [REP_MN, REP_K, 32, 4, 4] (padded to 128 x 4), contiguous."""
    mn, sk = s.shape
    pad_mn, pad_k = -mn % 128, -sk % 4
    s = np.pad(s, ((0, pad_mn), (0, pad_k)))
    rep_mn, rep_k = s.shape[0] // 128, s.shape[1] // 4
    return s.reshape(rep_mn, 4, 32, rep_k, 4).transpose(0, 3, 2, 1, 4).copy()


def unpacked_block_scales(s, mn, sk):
    """The inverse of packed_block_scales, cut back to mn x sk."""
    rep_mn, rep_k = s.shape[0], s.shape[1]
    return s.transpose(0, 3, 2, 1, 4).reshape(rep_mn * 128, rep_k * 4)[:mn, :sk]


def operand_spec(fmt, mixed, block_mn, block_k):
    """The signature type of an operand's descriptor: fp8 [MN, K], or u8 [MN, K / 2] (padded beside fp8)."""
    if fmt == "mxfp8":
        return f"tensordesc<fp8e4nv[{block_mn}, {block_k}]>"
    spec = f"tensordesc<u8[{block_mn}, {block_k // 2}]"
    if mixed:
        spec += ",NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, rank=2, fp4_padded=True)"
    return spec + ">"


NO_SWIZZLE_5D = "NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=8, rank=5)"


def scale_desc(name, fmt, block_mn, block_k, rows, k, no_swizzle):
    """make_scales_descriptor: a 5-D [1, REP_MN, REP_K, 2, 256] view of the packed-block scales, block
    [1, BLOCK_MN // 128, BLOCK_K // (4 VEC), 2, 256]; the tcgen05_copy kernels replace its layout by an
    unswizzled one."""
    vec = vec_size(fmt)
    rep_mn, rep_k = -(-rows // 128), -(-(k // vec) // 4)
    block = [1, block_mn // 128, block_k // (vec * 4), 2, 256]
    dtype = "fp8e4nv" if fmt == "nvfp4" else "u8"
    spec = f"tensordesc<{dtype}[{', '.join(map(str, block))}]" + (f",{NO_SWIZZLE_5D}" if no_swizzle else "") + ">"
    arg = f"desc:{name}:1x{rep_mn}x{rep_k}x2x256:block={'x'.join(map(str, block))}"
    return spec, arg


def scaled_matmul_case(kernel, fmts, block_n, block_k, M, N, K, grid, extra_consts=(), scales="strided",
                       label_extra="", run_extra=()):
    fa, fb = fmts
    mixed = fa != fb
    vec = vec_size(fa)
    per = lambda f: 1 if f == "mxfp8" else 2
    a_spec, b_spec = operand_spec(fa, mixed, 128, block_k), operand_spec(fb, mixed, block_n, block_k)
    sig = [a_spec, b_spec, f"tensordesc<fp16[128, {block_n}]>"]
    args = [("C", f"fill:nan:{M}x{N}:fp16"), ("a_desc", f"desc:A:{M}x{K // per(fa)}:block=128x{block_k // per(fa)}"),
            ("b_desc", f"desc:B:{N}x{K // per(fb)}:block={block_n}x{block_k // per(fb)}"),
            ("c_desc", f"desc:C:block=128x{block_n}")]
    consts = list(extra_consts)
    if scales == "strided":
        sig += ["*fp8e4nv" if fa == "nvfp4" else "*u8", "i32", "i32"] * 2
        args += [("a_scale_stride_m", K // vec), ("a_scale_stride_k", 1), ("b_scale_stride_n", K // vec),
                 ("b_scale_stride_k", 1)]
        names = ("a_scale_ptr", "b_scale_ptr")
    elif scales == "contiguous":
        sig += ["*fp8e4nv" if fa == "nvfp4" else "*u8"] * 2
        names = ("a_scale_ptr", "b_scale_ptr")
    else:
        no_swizzle = scales == "tmem_copy"
        (sa, aa), (sb, ab) = (scale_desc("SA", fa, 128, block_k, M, K, no_swizzle),
                              scale_desc("SB", fb, block_n, block_k, N, K, no_swizzle))
        sig += [sa, sb]
        args += [("a_scale_desc", aa), ("b_scale_desc", ab)]
        names = ("SA", "SB")
    if kernel in ("simple_mma_scaled_kernel", "mma_scaled_contig_kernel", "mma_scaled_packed_block_kernel",
                  "mma_scaled_tcgen05_copy_kernel"):
        consts = [("VEC_SIZE", vec)] + consts

    def inputs(rng):
        (av, sa_), (bv, sb_) = quantized(rng, M, K, fa), quantized(rng, N, K, fb)
        lay = lambda s, bmn: (contiguous_scales(s[0], bmn, block_k, vec) if scales == "contiguous"
                              else packed_block_scales(s[0]) if scales in ("packed", "tmem_copy") else s[0], s[1])
        return {"A": av, "B": bv, names[0]: lay(sa_, 128), names[1]: lay(sb_, block_n)}

    def ref(b):
        def scales_of(name, rows, bmn):
            s = b[name]
            sk = K // vec
            if scales == "contiguous":
                s = s.reshape(rows // bmn, sk // (block_k // vec), bmn, block_k // vec).transpose(0, 2, 1, 3)
                return s.reshape(rows, sk)
            if scales in ("packed", "tmem_copy"):
                return unpacked_block_scales(s.reshape(-1, -(-sk // 4), 32, 4, 4), rows, sk)
            return s.reshape(rows, sk)
        a = dequantized(b["A"], scales_of(names[0], M, 128), M, K, fa)
        bm = dequantized(b["B"], scales_of(names[1], N, block_n), N, K, fb)
        return [("C", a @ bm.T, 1e-3)]

    label = f"11 {kernel} ({fa} x {fb}, BLOCK_N {block_n}, BLOCK_K {block_k}{label_extra})"
    return Case("11-tcgen05-mma-scaled.py", kernel, label, ",".join(sig), consts, 4, grid, args, ref,
                arch="sm_100a", inputs=inputs, run_extra=list(run_extra))


def simple_configs(block_ns, block_ks):
    for fa, fb in FORMATS:
        for bn in block_ns:
            for bk in block_ks:
                if fa in ("mxfp4", "nvfp4") and fb in ("mxfp4", "nvfp4") and bk <= 32:
                    continue
                if fa != fb and bk < 128:
                    continue
                yield (fa, fb), bn, bk


for kernel, scales in (("simple_mma_scaled_kernel", "strided"), ("mma_scaled_contig_kernel", "contiguous")):
    CASES += [scaled_matmul_case(kernel, f, bn, bk, 128, 2 * bn, 2 * bk, "1,2", scales=scales)
              for f, bn, bk in simple_configs([32, 64, 128, 256], [32, 64, 128, 256, 512])]
for kernel, scales in (("mma_scaled_packed_block_kernel", "packed"), ("mma_scaled_tcgen05_copy_kernel", "tmem_copy")):
    CASES += [scaled_matmul_case(kernel, f, bn, bk, 128, 2 * bn, 2 * bk, "1,2", scales=scales)
              for f in FORMATS for bn in (128, 256) for bk in (128, 256, 512)]


def pipelined_case(kernel, fmts, K, M, N, grid):
    bk = 128 if "mxfp8" in fmts else 256
    consts = [("num_buffers", 3), ("SchedulerImpl", "t7.GroupedPersistentTileScheduler(8)")]
    # A copy over the scales an MMA in flight reads (see above): refused under the ISA's order.
    steps = cdiv(K, bk)
    in_issue_order = steps >= (4 if kernel == "mma_scaled_pipelined_kernel" else 2)
    return scaled_matmul_case(kernel, fmts, 256, bk, M, N, K, grid, consts, scales="tmem_copy",
                              label_extra=f", {M}x{N}x{K}" + ("; copies in issue order" if in_issue_order else ""),
                              run_extra=["--mma-order", "issue"] if in_issue_order else [])


for kernel in ("mma_scaled_pipelined_kernel", "mma_scaled_warp_specialized_kernel"):
    for f in FORMATS:
        for K in (128, 640, 704, 1152, 4096):
            if f[0] != f[1] and K % 128 != 0:
                continue
            CASES.append(pipelined_case(kernel, f, K, 128, 128, "1"))
        CASES.append(pipelined_case(kernel, f, 640, 500, 600, "2"))


# 12-cluster-launch-control (Blackwell): test_op's persistent matmul with tutorial 7's MMAv5, 128x256x64 blocks, 3
# buffers, 4 warps. With the CLC scheduler the grid is one program per tile, and each program steals the tiles of
# programs not yet started; its interpreter run is repeated under each answer cluster launch control may give
# (`--clc-policy`: the next program, none, random ones), since the result must not depend on it. The static
# scheduler's grid is the GPU's SM count; 3 programs here, so that each runs several tiles. The kernel reads
# `N = c_desc.shape[0]` and `M = c_desc.shape[1]`, so it is correct for square C only, as the tutorial's tests
# are: 296x296 (partial tiles both ways; rows of 16-byte multiples, as TMA needs) by K 200 (a partial K block).
def clc12(scheduler, grid, label, run_extra=()):
    M = N = 296
    K = 200
    sig = "tensordesc<fp16[128, 64]>,tensordesc<fp16[64, 256]>,tensordesc<fp16[128, 256]>"
    args = [("A", f"randn:{M}x{K}:fp16"), ("B", f"randn:{K}x{N}:fp16"), ("C", f"fill:nan:{M}x{N}:fp16"),
            ("a_desc", "desc:A:block=128x64"), ("b_desc", "desc:B:block=64x256"), ("c_desc", "desc:C:block=128x256")]
    consts = [("MMAImpl", "t7.MMAv5"), ("SchedulerImpl", scheduler), ("num_buffers", 3), ("num_warps", 4)]
    return Case("12-cluster-launch-control.py", "persistent_matmul_kernel",
                f"12 persistent_matmul_kernel ({M}x{N}x{K}, {label})", sig, consts, 4, grid, args,
                matmul_ref("A", "B", "C", (M, K), (K, N)), arch="sm_100a", run_extra=list(run_extra))


CLC_POLICIES = ["next", "none", "random:{seed}"]
CASES += [clc12("ClcTileScheduler", str(cdiv(296, 128) * cdiv(296, 256)), f"ClcTileScheduler, clc {p.split(':')[0]}",
                ["--clc-policy", p]) for p in CLC_POLICIES]
CASES.append(clc12("StaticTileScheduler", "3", "StaticTileScheduler"))
