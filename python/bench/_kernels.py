"""Kernels for the GPU check and the launch-overhead benchmark (tessel compiles the whole file a kernel is
defined in, so they live in a file of their own)."""

import tessel
import tessel.language as tl
from tessel import gluon
from tessel.gluon import language as gl


@tessel.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@tessel.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_row_stride + offs, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + offs, num / tl.sum(num, axis=0), mask=mask)


@tessel.jit
def axpby_kernel(x_ptr, out_ptr, n, stride, alpha, beta, BLOCK: tl.constexpr):
    # out[i] = alpha * x[i * stride] + beta * i: an f32 scalar, an int that may be specialized to 1, and a
    # 64-bit index when n does not fit in 32 bits.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask)
    tl.store(out_ptr + offs, alpha * x + beta * offs.to(tl.float32), mask=mask)


@gluon.jit
def staged_scale_kernel(x_ptr, out_ptr, M: gl.constexpr, N: gl.constexpr, layout: gl.constexpr,
                        SHARED: gl.constexpr):
    # A [M, N] tile per program, in the host's register layout, through shared memory in the host's shared layout.
    rows = gl.program_id(0) * M + gl.arange(0, M, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    offs = rows[:, None] * N + cols[None, :]
    smem = gl.allocate_shared_memory(gl.float16, [M, N], SHARED, gl.load(x_ptr + offs))
    gl.store(out_ptr + offs, smem.load(layout) * 2)


@tessel.autotune(configs=[tessel.Config({"BLOCK_SIZE": 512}), tessel.Config({"BLOCK_SIZE": 1024})], key=["n_elements"])
@tessel.jit
def add_tuned_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@gluon.jit
def scale_layout_kernel(x_ptr, out_ptr, n, BLOCK: gl.constexpr, layout: gl.constexpr):
    # A layout constexpr built by the host around every launch (as Gluon tutorials build theirs).
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offs < n
    gl.store(out_ptr + offs, gl.load(x_ptr + offs, mask=mask) * 2, mask=mask)
