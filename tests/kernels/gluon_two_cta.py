# Two-CTA tensor-core MMAs (Blackwell, `cta_group::2`), written for tessel's tests. Each CTA pair multiplies a
# [2 * HALF_M, K] tile of A (the pair splits M: CTA 2i holds the first half) by a [K, N] tile of B (the pair
# splits N) into a [2 * HALF_M, N] accumulator the pair splits along M. `pair_tile` is one K block, its loads
# completing on a barrier shared by the pair; `pair_k_loop` walks K in blocks with multicast loads and a multicast
# completion (more pairs than one share B's blocks); `pair_k_loop` with a `MMA_ARRIVALS` other than 0 initializes
# the MMA barrier with that count instead of the one `tcgen05_mma_barrier_count` gives; `mixed_groups` issues a
# one-CTA MMA after a two-CTA one; `pair_columns` takes a pair's accumulator of COLS columns in each CTA;
# `pair_chain` is attention's two chained MMAs on a pair: S = Q K^T (K's buffer split along N, seen through its
# transposed view), P = S as fp16, O = P V with P from tensor memory (aliasing S) or from shared memory;
# `pair_column_slices` reads a pair's buffer back by column slices, each CTA's part of a slice within its part.

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    allocate_tensor_memory,
    tcgen05_commit,
    tcgen05_mma,
    tcgen05_mma_barrier_count,
    get_tmem_reg_layout,
)
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma


@gluon.jit
def store_tile(acc, c_desc):
    # Each CTA's rows of the accumulator, through its part of the C tile, to global memory.
    out = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_shape, c_desc.layout)
    out.store(acc.load().to(c_desc.dtype))
    tma.async_copy_shared_to_global(c_desc, [0, 0], out)


@gluon.jit
def pair_tile(a_desc, b_desc, c_desc):
    rows: gl.constexpr = a_desc.block_shape[0]
    cols: gl.constexpr = b_desc.block_shape[1]
    a_buf = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    b_buf = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    # The pair's lead waits for both CTAs' halves before it issues the MMA over them.
    loaded = mbarrier.allocate_mbarrier(two_ctas=True)
    done = mbarrier.allocate_mbarrier()
    mbarrier.init(loaded, count=1)
    mbarrier.init(done, count=1)
    mbarrier.expect(loaded, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
    tma.async_load(a_desc, [0, 0], loaded, a_buf)
    tma.async_load(b_desc, [0, 0], loaded, b_buf)
    mbarrier.wait(loaded, phase=0, deps=[a_buf, b_buf])
    acc_layout: gl.constexpr = TensorMemoryLayout(block=(rows // 2, cols), col_stride=1,
                                                  cga_layout=c_desc.layout.cga_layout, two_ctas=True)
    acc = allocate_tensor_memory(gl.float32, [rows, cols], acc_layout)
    tcgen05_mma(a_buf, b_buf, acc, use_acc=False, mbarriers=[done])
    mbarrier.wait(done, phase=0, deps=[a_buf, b_buf])
    mbarrier.invalidate(loaded)
    mbarrier.invalidate(done)
    store_tile(acc, c_desc)


@gluon.jit
def pair_k_loop(a_desc, b_desc, c_desc, K_BLOCKS: gl.constexpr, ACC: gl.constexpr, MMA_ARRIVALS: gl.constexpr,
                BY_HAND: gl.constexpr):
    # BY_HAND: the MMA's completion committed by `tcgen05_commit(descs=...)`, which must reach every CTA holding a
    # copy of the operands, as `multicast=True` does.
    bk: gl.constexpr = a_desc.block_shape[1]
    a_buf = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    b_buf = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    acc = allocate_tensor_memory(gl.float32, [a_desc.block_shape[0], b_desc.block_shape[1]], ACC)
    loaded = mbarrier.allocate_mbarrier(two_ctas=True)
    mma_done = mbarrier.allocate_mbarrier()
    mbarrier.init(loaded, count=1)
    if MMA_ARRIVALS == 0:
        mbarrier.init(mma_done, count=tcgen05_mma_barrier_count([a_buf, b_buf], multicast=True, two_ctas=True))
    else:
        mbarrier.init(mma_done, count=MMA_ARRIVALS)
    for k in range(K_BLOCKS):
        parity = k % 2
        mbarrier.expect(loaded, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_load(a_desc, [0, k * bk], loaded, a_buf, multicast=True)
        tma.async_load(b_desc, [k * bk, 0], loaded, b_buf, multicast=True)
        mbarrier.wait(loaded, phase=parity, deps=[a_buf, b_buf])
        if BY_HAND:
            tcgen05_mma(a_buf, b_buf, acc, use_acc=k > 0)
            tcgen05_commit(mma_done, descs=[a_buf, b_buf])
        else:
            tcgen05_mma(a_buf, b_buf, acc, use_acc=k > 0, multicast=True, mbarriers=[mma_done])
        mbarrier.wait(mma_done, phase=parity, deps=[a_buf, b_buf])
    mbarrier.invalidate(loaded)
    mbarrier.invalidate(mma_done)
    store_tile(acc, c_desc)


@gluon.jit
def mixed_groups(a_desc, b_desc, PAIR: gl.constexpr, SINGLE: gl.constexpr):
    a_buf = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    b_buf = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    shape: gl.constexpr = [a_desc.block_shape[0], b_desc.block_shape[1]]
    pair_acc = allocate_tensor_memory(gl.float32, shape, PAIR)
    single_acc = allocate_tensor_memory(gl.float32, shape, SINGLE)
    tcgen05_mma(a_buf, b_buf, pair_acc, use_acc=False)
    tcgen05_mma(a_buf, b_buf, single_acc, use_acc=False)


@gluon.jit
def pair_columns(out_ptr, COLS: gl.constexpr):
    # A [256, COLS] accumulator over a CTA pair: each CTA holds 128 rows of COLS columns.
    layout: gl.constexpr = TensorMemoryLayout(block=(128, 256), col_stride=1, cga_layout=[[1, 0]], two_ctas=True)
    acc = allocate_tensor_memory(gl.float32, [256, COLS], layout)
    acc.store(gl.full([256, COLS], 1.0, gl.float32, acc.get_reg_layout()))
    gl.store(out_ptr, gl.sum(gl.sum(acc.load(), axis=1), axis=0))


@gluon.jit
def pair_chain(q_desc, k_desc, v_desc, o_desc, P_FROM_TMEM: gl.constexpr):
    M: gl.constexpr = q_desc.block_shape[0]
    N: gl.constexpr = k_desc.block_shape[0]
    D: gl.constexpr = v_desc.block_shape[1]
    cga: gl.constexpr = o_desc.layout.cga_layout
    q_buf = gl.allocate_shared_memory(q_desc.dtype, q_desc.block_shape, q_desc.layout)
    k_buf = gl.allocate_shared_memory(k_desc.dtype, k_desc.block_shape, k_desc.layout)
    v_buf = gl.allocate_shared_memory(v_desc.dtype, v_desc.block_shape, v_desc.layout)
    loaded = mbarrier.allocate_mbarrier(two_ctas=True)
    done = mbarrier.allocate_mbarrier()
    mbarrier.init(loaded, count=1)
    mbarrier.init(done, count=1)
    mbarrier.expect(loaded, q_desc.nbytes_per_cta + k_desc.nbytes_per_cta + v_desc.nbytes_per_cta)
    tma.async_load(q_desc, [0, 0], loaded, q_buf)
    tma.async_load(k_desc, [0, 0], loaded, k_buf)
    tma.async_load(v_desc, [0, 0], loaded, v_buf)
    mbarrier.wait(loaded, phase=0, deps=[q_buf, k_buf, v_buf])
    s_tmem = allocate_tensor_memory(gl.float32, [M, N],
                                    TensorMemoryLayout(block=(M // 2, N), col_stride=1, cga_layout=cga, two_ctas=True))
    tcgen05_mma(q_buf, k_buf.permute((1, 0)), s_tmem, use_acc=False, mbarriers=[done])
    mbarrier.wait(done, phase=0)
    p = s_tmem.load().to(gl.float16)
    o_tmem = allocate_tensor_memory(gl.float32, [M, D],
                                    TensorMemoryLayout(block=(M // 2, D), col_stride=1, cga_layout=cga, two_ctas=True))
    if P_FROM_TMEM:
        p_tmem = s_tmem._reinterpret(
            gl.float16, [M, N], TensorMemoryLayout(block=(M // 2, N), col_stride=2, cga_layout=cga, two_ctas=True))
        p_tmem.store(p)
        tcgen05_mma(p_tmem, v_buf, o_tmem, use_acc=False, mbarriers=[done])
    else:
        p_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([M, N], gl.float16, cga_layout=cga)
        p_buf = gl.allocate_shared_memory(gl.float16, [M, N], p_layout, p)
        tcgen05_mma(p_buf, v_buf, o_tmem, use_acc=False, mbarriers=[done])
    mbarrier.wait(done, phase=1)
    store_tile(o_tmem, o_desc)


@gluon.jit
def pair_column_slices(x_ptr, out_ptr, HALVES: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0], cga_layout=[[1, 0]])
    r = gl.arange(0, 256, gl.SliceLayout(1, L))
    c = gl.arange(0, 128, gl.SliceLayout(0, L))
    layout: gl.constexpr = TensorMemoryLayout(block=(128, 128), col_stride=1, cga_layout=[[1, 0]], two_ctas=True)
    x = gl.convert_layout(gl.load(x_ptr + r[:, None] * 128 + c[None, :]),
                          get_tmem_reg_layout(gl.float32, [256, 128], layout, gl.num_warps()))
    t = allocate_tensor_memory(gl.float32, [256, 128], layout, x)
    W: gl.constexpr = 128 // HALVES
    cw = gl.arange(0, W, gl.SliceLayout(0, L))
    for i in gl.static_range(HALVES):
        part = gl.convert_layout(t.slice(i * W, W).load(), L)
        gl.store(out_ptr + r[:, None] * 128 + i * W + cw[None, :], part)
