"""09-tma-gather-scatter (Blackwell, sm_100a) for bench/gluon_tutorial_cases.py: every kernel its tests launch.

- test_async_gather: bf16 and f32, BLOCK_X 8 and 128, BLOCK_Y 16 and 128, y_offset -16, 0, 48 and 1000, over the
  test's 1024x1024 tensor. The row offsets are the test's: evenly spaced from -1024 to 2048 (negative and past
  the tensor, which read zeros), shuffled; columns past the tensor (y_offset 1000) and before it (-16) read zeros.
- test_async_scatter: the same dtypes and blocks, y_offset 0, 48 and 1000, row offsets from 0 to 2048 shuffled
  (rows past the tensor are dropped, and so are columns past it). The tensor's values are k/8 for small
  integers k, exact in bf16, so the reference knows the untouched rows without reading them back.
- test_matmul_fused_gather_scatter: `out[scatter] = X[gather] @ W` in bf16 with tutorial 7's MMAv5 and grouped
  scheduler, every block shape and buffer count of the test, at M=256 (two row tiles: the kernel loads its
  row indices unmasked, so M is a multiple of BLOCK_M as in the test), N=200 (a partial column tile, whose
  columns past N the scatter drops) and K=320 (a partial K block, zero-filled), on 3 programs, so that a
  program runs several tiles (the GPU's grid is min(SMs, tiles)).

Each input array is made by the case from the harness's seed (`inputs`); the references are float64.
"""

import numpy as np

from gluon_tutorial_cases import Case, cdiv

X_MAX = Y_MAX = 1024
DTYPES = {"bf16": 16, "fp32": 32}


def default_swizzle(rows, cols, bits):
    """NVMMASharedLayout.get_default_for([rows, cols])'s swizzle: the widest of 128/64/32 bytes that divides a
    row (none for fewer than 8 rows)."""
    row = cols * bits // 8
    if rows < 8:
        return 0
    return next((s for s in (128, 64, 32) if row >= s and row % s == 0), 0)


def gather_desc(dtype, rows, cols):
    """The signature type of a [1, cols] descriptor staged in the layout of a [rows, cols] buffer, as the
    tutorial's host code makes it."""
    bits = DTYPES[dtype]
    return (f"tensordesc<{dtype}[1, {cols}],NVMMASharedLayout(swizzle_byte_width={default_swizzle(rows, cols, bits)}, "
            f"element_bitwidth={bits}, rank=2)>")


def shuffled_linspace(rng, lo, hi, n):
    """torch.linspace(lo, hi, n, dtype=int32) (truncated toward zero), in a random order."""
    return rng.permutation(np.trunc(np.linspace(lo, hi, n)).astype(np.int32))


def exact_values(rng, shape):
    """Random values k/8, |k| < 256: exact in bf16 and f32."""
    return (rng.integers(-255, 256, size=shape) / 8).astype(np.float32)


def gather_case(dtype, bx, by, y):
    state = {}

    def inputs(rng):
        state["x"] = shuffled_linspace(rng, -X_MAX, 2 * X_MAX, bx)
        return {"x_offsets_ptr": (state["x"], None)}

    def ref(b):
        inp = b["input"].reshape(X_MAX, Y_MAX).astype(np.float64)
        out = np.zeros((bx, by))
        for i, row in enumerate(state["x"]):
            for j in range(by):
                if 0 <= row < X_MAX and 0 <= y + j < Y_MAX:
                    out[i, j] = inp[row, y + j]
        return [("out_ptr", out, 0.0)]

    return Case("09-tma-gather-scatter.py", "async_gather_kernel",
                f"09 async_gather_kernel ({dtype}, BLOCK_X {bx}, BLOCK_Y {by}, y_offset {y})",
                f"*{dtype},i32,i32,{gather_desc(dtype, bx, by)},*i32,i32", [("BLOCK_X", bx)], 4, "1",
                [("input", f"randn:{X_MAX}x{Y_MAX}:{dtype}"), ("out_ptr", f"fill:nan:{bx}x{by}:{dtype}"),
                 ("out_stride_x", by), ("out_stride_y", 1), ("tensor_desc", f"desc:input:block=1x{by}"),
                 ("y_offset", y)],
                ref, arch="sm_100a", inputs=inputs)


def scatter_case(dtype, bx, by, y):
    state = {}

    def inputs(rng):
        state["x"] = shuffled_linspace(rng, 0, 2 * X_MAX, bx)
        state["input"] = exact_values(rng, (X_MAX, Y_MAX))
        state["src"] = exact_values(rng, (bx, by))
        return {"x_offsets_ptr": (state["x"], None), "input": (state["input"], dtype), "src_ptr": (state["src"], dtype)}

    def ref(b):
        out = state["input"].astype(np.float64)
        for i, row in enumerate(state["x"]):
            if row < X_MAX:
                hi = min(y + by, Y_MAX)
                out[row, y:hi] = state["src"][i, :hi - y]
        return [("input", out, 0.0)]

    return Case("09-tma-gather-scatter.py", "async_scatter_kernel",
                f"09 async_scatter_kernel ({dtype}, BLOCK_X {bx}, BLOCK_Y {by}, y_offset {y})",
                f"{gather_desc(dtype, bx, by)},*i32,i32,*{dtype},i32,i32", [("BLOCK_X", bx)], 4, "1",
                [("tensor_desc", f"desc:input:{X_MAX}x{Y_MAX}:block=1x{by}"), ("y_offset", y), ("src_stride_x", by),
                 ("src_stride_y", 1)],
                ref, arch="sm_100a", inputs=inputs)


def matmul_case(bm, bn, bk, nbuf, M=256, N=200, K=320):
    state = {}

    def inputs(rng):
        state["g"], state["s"] = rng.permutation(M).astype(np.int32), rng.permutation(M).astype(np.int32)
        state["X"], state["W"] = exact_values(rng, (M, K)) / 4, exact_values(rng, (K, N)) / 4
        return {"X_gather_indx_ptr": (state["g"], None), "out_scatter_indx_ptr": (state["s"], None),
                "X": (state["X"], "bf16"), "W": (state["W"], "bf16")}

    def ref(b):
        out = np.empty((M, N))
        out[state["s"], :] = state["X"].astype(np.float64)[state["g"], :] @ state["W"].astype(np.float64)
        return [("out", out, 1e-2)]

    sig = (f"{gather_desc('bf16', bm, bk)},tensordesc<bf16[{bk}, {bn}]>,{gather_desc('bf16', bm, bn)},*i32,*i32")
    return Case("09-tma-gather-scatter.py", "matmul_fused_gather_scatter_kernel",
                f"09 matmul_fused_gather_scatter_kernel ({bm}x{bn}x{bk}, bufs={nbuf}, {M}x{N}x{K})", sig,
                [("BLOCK_M", bm), ("SchedulerImpl", "t7.GroupedPersistentTileScheduler(8)"), ("num_buffers", nbuf)],
                4, "3",
                [("out", f"fill:nan:{M}x{N}:bf16"), ("X_desc", f"desc:X:{M}x{K}:block=1x{bk}"),
                 ("W_desc", f"desc:W:{K}x{N}:block={bk}x{bn}"), ("out_desc", f"desc:out:block=1x{bn}")],
                ref, arch="sm_100a", inputs=inputs)


CASES_09 = [gather_case(d, bx, by, y) for d in DTYPES for bx in (8, 128) for by in (16, 128)
            for y in (-16, 0, 48, 1000)]
CASES_09 += [scatter_case(d, bx, by, y) for d in DTYPES for bx in (8, 128) for by in (16, 128) for y in (0, 48, 1000)]
CASES_09 += [matmul_case(bm, bn, bk, nbuf) for (bm, bn) in ((128, 128), (128, 64)) for (bk, nbuf) in ((128, 2), (64, 3))]
