# Thread-block clusters (num_ctas > 1), written for tessel's tests. LAYOUT is the caller's: its cga_layout
# spreads a tile over the CTAs of the cluster, and reductions along a spread dim combine across the CTAs.
# `cluster_row_softmax` is one row per program, masked to `n_cols` (a partial tile); `cluster_row_sums` sums
# each row of a [BM, BN] tile; `cluster_multicast_tile` loads one block into every CTA with a multicast TMA
# copy; the others exercise conversions, atomics, scans and what code generation refuses in a cluster.

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma


@gluon.jit
def cluster_row_softmax(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: gl.constexpr, LAYOUT: gl.constexpr):
    row = gl.program_id(0)
    cols = gl.arange(0, BLOCK, LAYOUT)
    keep = cols < n_cols
    x = gl.load(x_ptr + row * x_stride + cols, mask=keep, other=-float("inf"))
    shifted = x - gl.max(x, axis=0)
    e = gl.exp(shifted)
    total = gl.sum(e, axis=0)
    gl.store(out_ptr + row * out_stride + cols, e / total, mask=keep)


@gluon.jit
def cluster_online_softmax(x_ptr, out_ptr, n_cols, BLOCK: gl.constexpr, LAYOUT: gl.constexpr):
    # Rows longer than the cluster's tile: a running max and sum over chunks (reductions across the CTAs inside a
    # loop), then a second pass that writes; and the index of each row's maximum (a two-operand reduction).
    row = gl.program_id(0)
    base = x_ptr + row * n_cols
    m = -float("inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + gl.arange(0, BLOCK, LAYOUT)
        x = gl.load(base + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = gl.maximum(m, gl.max(x, axis=0))
        s = s * gl.exp(m - m_new) + gl.sum(gl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        cols = start + gl.arange(0, BLOCK, LAYOUT)
        x = gl.load(base + cols, mask=cols < n_cols, other=-float("inf"))
        gl.store(out_ptr + row * (n_cols + 1) + cols, gl.exp(x - m) / s, mask=cols < n_cols)
    cols = gl.arange(0, BLOCK, LAYOUT)
    x = gl.load(base + cols, mask=cols < n_cols, other=-float("inf"))
    at = gl.argmax(x, axis=0)
    gl.store(out_ptr + row * (n_cols + 1) + n_cols, at.to(gl.float32))


@gluon.jit
def cluster_row_sums(x_ptr, out_ptr, n_rows, n_cols, BM: gl.constexpr, BN: gl.constexpr, LAYOUT: gl.constexpr):
    r0 = gl.program_id(0) * BM
    rows = r0 + gl.arange(0, BM, gl.SliceLayout(1, LAYOUT))
    cols = gl.arange(0, BN, gl.SliceLayout(0, LAYOUT))
    inside = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = gl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=inside, other=0.0)
    gl.store(out_ptr + rows, gl.sum(x, axis=1), mask=rows < n_rows)


@gluon.jit
def cluster_row_sums_to(x_ptr, out_ptr, n_rows, n_cols, BM: gl.constexpr, BN: gl.constexpr, LAYOUT: gl.constexpr,
                        OUT: gl.constexpr):
    # The sums as above, converted to OUT before the store: a layout whose CTAs split the rows.
    r0 = gl.program_id(0) * BM
    rows = r0 + gl.arange(0, BM, gl.SliceLayout(1, LAYOUT))
    cols = gl.arange(0, BN, gl.SliceLayout(0, LAYOUT))
    inside = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = gl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=inside, other=0.0)
    sums = gl.convert_layout(gl.sum(x, axis=1), OUT)
    rows_out = r0 + gl.arange(0, BM, OUT)
    gl.store(out_ptr + rows_out, sums, mask=rows_out < n_rows)


@gluon.jit
def cluster_staged_copy(x_ptr, out_ptr, BLOCK: gl.constexpr, WHOLE: gl.constexpr, SPLIT: gl.constexpr):
    # Every CTA stages the whole block in its own shared memory (cp.async on a layout every CTA holds alike), then
    # doubles and stores its own part of it: each CTA must have made its own copy.
    smem = gl.allocate_shared_memory(gl.float32, [BLOCK], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    cp.async_copy_global_to_shared(smem, x_ptr + gl.arange(0, BLOCK, WHOLE))
    cp.commit_group()
    cp.wait_group(0)
    y = gl.convert_layout(smem.load(WHOLE), SPLIT)
    gl.store(out_ptr + gl.arange(0, BLOCK, SPLIT), y * 2.0)


@gluon.jit
def cluster_fetch_add(x_ptr, old_ptr, BLOCK: gl.constexpr, LAYOUT: gl.constexpr):
    offs = gl.arange(0, BLOCK, LAYOUT)
    gl.store(old_ptr + offs, gl.atomic_add(x_ptr + offs, 1.0))


@gluon.jit
def cluster_spread_smem(x_ptr, out_ptr, BLOCK: gl.constexpr, LAYOUT: gl.constexpr, SHARED: gl.constexpr):
    # SHARED spreads the buffer over the CTAs as LAYOUT spreads the tensor: each CTA stages its own part.
    offs = gl.arange(0, BLOCK, LAYOUT)
    smem = gl.allocate_shared_memory(gl.float32, [BLOCK], SHARED, gl.load(x_ptr + offs))
    gl.store(out_ptr + offs, smem.load(LAYOUT) + 1.0)


@gluon.jit
def cluster_cumsum(x_ptr, out_ptr, BLOCK: gl.constexpr, LAYOUT: gl.constexpr):
    cols = gl.arange(0, BLOCK, LAYOUT)
    gl.store(out_ptr + cols, gl.cumsum(gl.load(x_ptr + cols), axis=0))


@gluon.jit
def cluster_row_cumsum(x_ptr, out_ptr, BM: gl.constexpr, BN: gl.constexpr, LAYOUT: gl.constexpr):
    # Rows split over the CTAs, each row's prefix sums in its CTA.
    rows = gl.arange(0, BM, gl.SliceLayout(1, LAYOUT))
    cols = gl.arange(0, BN, gl.SliceLayout(0, LAYOUT))
    offs = rows[:, None] * BN + cols[None, :]
    gl.store(out_ptr + offs, gl.cumsum(gl.load(x_ptr + offs), axis=1))


@gluon.jit
def cluster_transpose_ctas(x_ptr, out_ptr, BM: gl.constexpr, BN: gl.constexpr, SRC: gl.constexpr, DST: gl.constexpr):
    rows = gl.arange(0, BM, gl.SliceLayout(1, SRC))
    cols = gl.arange(0, BN, gl.SliceLayout(0, SRC))
    x = gl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    y = gl.convert_layout(x, DST)
    rows_d = gl.arange(0, BM, gl.SliceLayout(1, DST))
    cols_d = gl.arange(0, BN, gl.SliceLayout(0, DST))
    gl.store(out_ptr + rows_d[:, None] * BN + cols_d[None, :], y)


@gluon.jit
def cluster_multicast_tile(in_desc, out_ptr, out_stride, WHOLE: gl.constexpr, LAYOUT: gl.constexpr):
    # One multicast TMA copy gives every CTA of the cluster the program's [BM, BN] block. Each CTA reads its copy
    # whole (WHOLE has no CTA bases), keeps the rows LAYOUT's cga bases give it and stores them doubled, so every
    # CTA's copy is checked.
    BM: gl.constexpr = in_desc.block_shape[0]
    BN: gl.constexpr = in_desc.block_shape[1]
    smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_shape, in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    row0 = gl.program_id(0) * BM
    mbarrier.expect(bar, in_desc.nbytes_per_cta)
    tma.async_load(in_desc, [row0, 0], bar, smem, multicast=True)
    mbarrier.wait(bar, phase=0)
    x = gl.convert_layout(smem.load(WHOLE), LAYOUT)
    rows = row0 + gl.arange(0, BM, gl.SliceLayout(1, LAYOUT))
    cols = gl.arange(0, BN, gl.SliceLayout(0, LAYOUT))
    gl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], x * 2)
    mbarrier.invalidate(bar)


@gluon.jit
def cluster_multicast_rounds(in_desc, out_ptr, out_stride, ROUNDS: gl.constexpr, WHOLE: gl.constexpr,
                             LAYOUT: gl.constexpr):
    # ROUNDS blocks stacked along dim 0, each multicast into the one buffer every CTA holds and summed: a CTA may
    # only copy the next block over it once every CTA has read the last one (gl.barrier(cluster=True)).
    BM: gl.constexpr = in_desc.block_shape[0]
    BN: gl.constexpr = in_desc.block_shape[1]
    smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_shape, in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    acc = gl.zeros([BM, BN], gl.float32, LAYOUT)
    for r in range(ROUNDS):
        mbarrier.expect(bar, in_desc.nbytes_per_cta)
        tma.async_load(in_desc, [r * BM, 0], bar, smem, multicast=True)
        mbarrier.wait(bar, phase=r % 2)
        acc += gl.convert_layout(smem.load(WHOLE), LAYOUT).to(gl.float32)
        gl.barrier(cluster=True)
    rows = gl.arange(0, BM, gl.SliceLayout(1, LAYOUT))
    cols = gl.arange(0, BN, gl.SliceLayout(0, LAYOUT))
    gl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], acc)
    mbarrier.invalidate(bar)
