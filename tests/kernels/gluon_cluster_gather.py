# TMA gathers (Blackwell's `tma.async_gather`, gather4) in clusters, written for tessel's tests.
#
# `pair_gather_tile` is example 05's pattern on CTA pairs: C = A @ X[idx, col:col+K]^T, A's tile split along M
# by the pairs, the gathered rows split along theirs in each pair (each CTA gathers its half of the rows from
# its half of the indices; on two pairs, both pairs hold the same rows and, with MULTICAST, share their gather),
# completing on a barrier shared by the pair, then read by the pair's MMA as B (transposed, split along N). `gather_shared` gathers rows into a buffer every CTA of the cluster holds whole, each CTA from the
# same indices: each gathers its own copy, or with MULTICAST the CTAs deal out the gather4s, each landing in
# every CTA; each CTA then writes its copy's rows [rank * ROWS / num_ctas, ...) to `out_ptr` (the rows its
# layout's cga_layout gives it), so every CTA's copy is read back.

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    allocate_tensor_memory,
    tcgen05_mma,
)
from triton.experimental.gluon.language.nvidia.blackwell import mbarrier, tma


@gluon.jit
def pair_gather_tile(a_desc, x_desc, idx_ptr, c_desc, col, ROWS: gl.constexpr, IDX_CGA: gl.constexpr,
                     MULTICAST: gl.constexpr):
    m: gl.constexpr = a_desc.block_shape[0]
    k: gl.constexpr = a_desc.block_shape[1]
    # The indices split over the pair as the gathered rows are (IDX_CGA [[0, 1]]: CTA 1 holds the second half of
    # both; on two pairs, [[0, 1], [0, 0]]: both pairs gather the same rows).
    idx_layout: gl.constexpr = gl.SliceLayout(
        0, gl.BlockedLayout([1, 4], [32, 1], [1, gl.num_warps()], [1, 0], cga_layout=IDX_CGA))
    offs = gl.load(idx_ptr + gl.arange(0, ROWS, idx_layout))
    a_buf = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    x_buf = gl.allocate_shared_memory(x_desc.dtype, [ROWS, k], x_desc.layout)
    loaded = mbarrier.allocate_mbarrier(two_ctas=True)
    done = mbarrier.allocate_mbarrier()
    mbarrier.init(loaded, count=1)
    mbarrier.init(done, count=1)
    mbarrier.expect(loaded, a_desc.nbytes_per_cta + x_desc.block_type.nbytes * (ROWS // 2))
    tma.async_load(a_desc, [0, 0], loaded, a_buf)
    tma.async_gather(x_desc, offs, col, loaded, x_buf, multicast=MULTICAST)
    mbarrier.wait(loaded, phase=0, deps=[a_buf, x_buf])
    acc_layout: gl.constexpr = TensorMemoryLayout(block=(m // gl.num_ctas(), ROWS), col_stride=1,
                                                  cga_layout=c_desc.layout.cga_layout, two_ctas=True)
    acc = allocate_tensor_memory(gl.float32, [m, ROWS], acc_layout)
    tcgen05_mma(a_buf, x_buf.permute((1, 0)), acc, use_acc=False, mbarriers=[done])
    mbarrier.wait(done, phase=0, deps=[a_buf, x_buf])
    mbarrier.invalidate(loaded)
    mbarrier.invalidate(done)
    out = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_shape, c_desc.layout)
    out.store(acc.load().to(c_desc.dtype))
    tma.async_copy_shared_to_global(c_desc, [0, 0], out)


@gluon.jit
def gather_shared(x_desc, idx_ptr, out_ptr, col, ROWS: gl.constexpr, COLS: gl.constexpr, IDX_CGA: gl.constexpr,
                  OUT_CGA: gl.constexpr, MULTICAST: gl.constexpr):
    idx_layout: gl.constexpr = gl.SliceLayout(
        0, gl.BlockedLayout([1, 4], [32, 1], [1, gl.num_warps()], [1, 0], cga_layout=IDX_CGA))
    offs = gl.load(idx_ptr + gl.arange(0, ROWS, idx_layout))
    buf = gl.allocate_shared_memory(x_desc.dtype, [ROWS, COLS], x_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, ROWS * x_desc.block_type.nbytes)
    tma.async_gather(x_desc, offs, col, bar, buf, multicast=MULTICAST)
    mbarrier.wait(bar, 0)
    # Every CTA holds the whole buffer; each reads back the rows its part of this layout names.
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [gl.num_warps(), 1], [1, 0], cga_layout=OUT_CGA)
    rows = gl.convert_layout(buf.load(gl.BlockedLayout([1, 4], [4, 8], [gl.num_warps(), 1], [1, 0])), layout)
    r = gl.arange(0, ROWS, gl.SliceLayout(1, layout))
    c = gl.arange(0, COLS, gl.SliceLayout(0, layout))
    gl.store(out_ptr + r[:, None] * COLS + c[None, :], rows)
