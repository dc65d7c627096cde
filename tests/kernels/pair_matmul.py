"""A CTA pair's GEMM on Blackwell (num_ctas=2, cta_group::2): C = A @ B, one [BM, BN] tile of C per cluster.

The accumulator is `TensorMemoryLayout(two_ctas=True)`: each CTA of the pair holds BM / 2 rows of it in its own
tensor memory. A's descriptor splits its block along M and B's along N over the pair (their `cga_layout`), so
each CTA loads its rows of A and half of B's columns; the copies complete on the pair's barrier
(`allocate_mbarrier(two_ctas=True)`, in the even CTA, which counts both CTAs' bytes), the even CTA waits for it
and issues the pair's MMA over both CTAs' operands, and its commit reaches the `done` barrier of both CTAs.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, allocate_tensor_memory,
                                                                 mbarrier, tcgen05_mma, tma)


@gluon.jit
def pair_matmul(a_desc, b_desc, c_desc, K):
    BM: gl.constexpr = a_desc.block_shape[0]
    BK: gl.constexpr = a_desc.block_shape[1]
    BN: gl.constexpr = b_desc.block_shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN

    a_smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    ready = mbarrier.allocate_mbarrier(two_ctas=True)
    done = mbarrier.allocate_mbarrier()
    mbarrier.init(ready, count=1)
    mbarrier.init(done, count=1)

    acc_layout: gl.constexpr = TensorMemoryLayout(block=(BM // 2, BN), col_stride=1,
                                                  cga_layout=c_desc.layout.cga_layout, two_ctas=True)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], acc_layout)

    phase = 0
    for k in range(0, K, BK):
        # Each CTA announces and loads its own part; the pair's barrier completes when both have landed.
        mbarrier.expect(ready, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_load(a_desc, [off_m, k], ready, a_smem)
        tma.async_load(b_desc, [k, off_n], ready, b_smem)
        mbarrier.wait(ready, phase)
        tcgen05_mma(a_smem, b_smem, acc, use_acc=k > 0, mbarriers=[done])
        # Both CTAs learn that the MMA no longer reads their buffers before refilling them.
        mbarrier.wait(done, phase)
        phase ^= 1
    mbarrier.invalidate(ready)
    mbarrier.invalidate(done)

    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_shape, c_desc.layout)
    c_smem.store(acc.load().to(c_desc.dtype))
    tma.async_copy_shared_to_global(c_desc, [off_m, off_n], c_smem)
    tma.store_wait(0)
