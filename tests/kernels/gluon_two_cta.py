# Two-CTA tensor-core MMAs (Blackwell, `cta_group::2`), written for tessel's tests. Each CTA pair multiplies a
# [2 * HALF_M, K] tile of A (the pair splits M: CTA 2i holds the first half) by a [K, N] tile of B (the pair
# splits N) into a [2 * HALF_M, N] accumulator the pair splits along M. `pair_tile` is one K block, its loads
# completing on a barrier shared by the pair; `pair_k_loop` walks K in blocks with multicast loads and a multicast
# completion (more pairs than one share B's blocks); `pair_k_loop` with a `MMA_ARRIVALS` other than 0 initializes
# the MMA barrier with that count instead of the one `tcgen05_mma_barrier_count` gives; `mixed_groups` issues a
# one-CTA MMA after a two-CTA one; `pair_columns` takes a pair's accumulator of COLS columns in each CTA.

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    allocate_tensor_memory,
    tcgen05_commit,
    tcgen05_mma,
    tcgen05_mma_barrier_count,
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
