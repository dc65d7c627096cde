"""A warp-specialized, TMA-fed GEMM for Blackwell written against the Gluon surface.

One loader partition issues TMA copies into a ring of shared-memory stages, one MMA partition issues tcgen05 MMAs
into tensor memory, and the default partition waits for the last MMA and stores the tile. Stage ownership is passed
back and forth through mbarriers whose phases flip every time the ring wraps.
"""

import itertools
from dataclasses import dataclass

import pytest
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    allocate_tensor_memory,
    get_tmem_32x32b_reg_layout,
    tcgen05_commit,
    tcgen05_mma,
)
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


@gluon.constexpr_function
def num_stages_for(block_m, block_n, block_k, dtype_bytes, smem_budget=200 * 1024):
    """As many ring stages as fit next to the epilogue tile."""
    per_stage = (block_m + block_n) * block_k * dtype_bytes
    epilogue = block_m * block_n * dtype_bytes
    return max(2, min(6, (smem_budget - epilogue) // per_stage))


@gluon.constexpr_function
def blocked_for(shape, num_warps):
    """A row-major blocked layout with 16-byte vectors along the last dimension."""
    rows, cols = shape
    vec = min(8, cols)
    lanes_n = min(32, cols // vec)
    return gl.BlockedLayout(size_per_thread=[1, vec], threads_per_warp=[32 // lanes_n, lanes_n],
                            warps_per_cta=[num_warps, 1], order=[1, 0])


@gluon.aggregate
class Ring:
    """`num` shared-memory stages for A and B, with a `ready` and an `empty` barrier per stage."""
    a: gl.shared_memory_descriptor
    b: gl.shared_memory_descriptor
    ready: gl.shared_memory_descriptor
    empty: gl.shared_memory_descriptor
    num: gl.constexpr

    @gluon.jit
    def alloc(a_desc, b_desc, num: gl.constexpr):
        a = gl.allocate_shared_memory(a_desc.dtype, [num] + a_desc.block_type.shape, a_desc.layout)
        b = gl.allocate_shared_memory(b_desc.dtype, [num] + b_desc.block_type.shape, b_desc.layout)
        ready = gl.allocate_shared_memory(gl.int64, [num, 1], mbarrier.MBarrierLayout())
        empty = gl.allocate_shared_memory(gl.int64, [num, 1], mbarrier.MBarrierLayout())
        for i in gl.static_range(num):
            mbarrier.init(ready.index(i), count=1)
            mbarrier.init(empty.index(i), count=1)
        return Ring(a, b, ready, empty, gl.constexpr(num))

    @gluon.jit
    def slot(self, it):
        """The stage and the barrier phase of iteration `it` of the ring."""
        return it % self.num, (it // self.num) & 1


@gluon.aggregate
class Tile:
    pid_m: gl.tensor
    pid_n: gl.tensor
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr

    @gluon.jit
    def offsets(self):
        return self.pid_m * self.BLOCK_M, self.pid_n * self.BLOCK_N


@gluon.jit
def load_partition(a_desc, b_desc, ring: Ring, tile: Tile, k_tiles, BLOCK_K: gl.constexpr):
    off_m, off_n = tile.offsets()
    for it in range(k_tiles):
        s, phase = ring.slot(it)
        # Wait until the MMA has released this stage; the first pass over the ring waits on the opposite phase.
        mbarrier.wait(ring.empty.index(s), phase ^ 1)
        mbarrier.expect(ring.ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(a_desc, [off_m, it * BLOCK_K], ring.ready.index(s), ring.a.index(s))
        tma.async_copy_global_to_shared(b_desc, [off_n, it * BLOCK_K], ring.ready.index(s), ring.b.index(s))


@gluon.jit
def mma_partition(ring: Ring, acc_tmem, acc_bar, k_tiles):
    use_acc = False
    for it in range(k_tiles):
        s, phase = ring.slot(it)
        mbarrier.wait(ring.ready.index(s), phase)
        tcgen05_mma(ring.a.index(s), ring.b.index(s).permute((1, 0)), acc_tmem, use_acc=use_acc)
        tcgen05_commit(ring.empty.index(s))
        use_acc = True
    tcgen05_commit(acc_bar)


@gluon.jit
def epilogue_partition(c_desc, acc_tmem, acc_bar, tile: Tile, num_warps: gl.constexpr):
    mbarrier.wait(acc_bar, 0)
    reg_layout: gl.constexpr = get_tmem_32x32b_reg_layout(tile.BLOCK_M, tile.BLOCK_N, [tile.BLOCK_M, tile.BLOCK_N],
                                                          num_warps)
    acc = acc_tmem.load(reg_layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    c_smem.store(acc.to(c_desc.dtype))
    fence_async_shared()
    off_m, off_n = tile.offsets()
    tma.async_copy_shared_to_global(c_desc, [off_m, off_n], c_smem)
    tma.store_wait(pendings=0)


@gluon.jit
def gemm_kernel(a_desc, b_desc, c_desc, K, num_warps: gl.constexpr):
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = num_stages_for(BLOCK_M, BLOCK_N, BLOCK_K, a_desc.dtype.primitive_bitwidth // 8)
    gl.static_assert(BLOCK_M == 128, "tcgen05 tiles here are 128 rows tall")

    tile = Tile(gl.program_id(0), gl.program_id(1), BLOCK_M, BLOCK_N)
    ring = Ring.alloc(a_desc, b_desc, STAGES)
    tmem_layout: gl.constexpr = TensorMemoryLayout([BLOCK_M, BLOCK_N], col_stride=1)
    acc_tmem = allocate_tensor_memory(gl.float32, [BLOCK_M, BLOCK_N], tmem_layout)
    acc_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(acc_bar, count=1)
    k_tiles = gl.cdiv(K, BLOCK_K)

    gl.warp_specialize(
        (c_desc, acc_tmem, acc_bar, tile, num_warps),
        epilogue_partition,
        (a_desc, b_desc, ring, tile, k_tiles, BLOCK_K),
        [load_partition, mma_partition],
        [1, 1],
        [24, 24],
    )
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ring.ready.index(i))
        mbarrier.invalidate(ring.empty.index(i))
    mbarrier.invalidate(acc_bar)


@dataclass(frozen=True)
class Shape:
    M: int
    N: int
    K: int

    def __str__(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"


def gemm(a: torch.Tensor, b: torch.Tensor, *, block=(128, 128, 64), num_warps: int = 4) -> torch.Tensor:
    (M, K), (N, K2) = a.shape, b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {K} != {K2}")
    BM, BN, BK = block
    c = a.new_empty((M, N))
    dtype = {torch.float16: gl.float16, torch.bfloat16: gl.bfloat16}[a.dtype]
    a_layout = gl.NVMMASharedLayout.get_default_for([BM, BK], dtype)
    b_layout = gl.NVMMASharedLayout.get_default_for([BN, BK], dtype)
    c_layout = gl.NVMMASharedLayout.get_default_for([BM, BN], dtype)
    descs = [
        TensorDescriptor.from_tensor(t, list(shape), layout)
        for t, shape, layout in ((a, (BM, BK), a_layout), (b, (BN, BK), b_layout), (c, (BM, BN), c_layout))
    ]
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    gemm_kernel[grid](*descs, K, num_warps=num_warps)
    return c


SHAPES = [Shape(m, n, k) for m, n, k in itertools.product((128, 256, 1000), (128, 384), (64, 512)) if m * n <= 2**18]


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 10,
                    reason="needs Blackwell")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_gemm(shape: Shape, dtype: torch.dtype):
    torch.manual_seed(shape.M * 31 + shape.N)
    a = torch.randn(shape.M, shape.K, device="cuda", dtype=dtype)
    b = torch.randn(shape.N, shape.K, device="cuda", dtype=dtype)
    ref = (a.float() @ b.float().T).to(dtype)
    out = gemm(a, b)
    rel = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
    assert rel < 1e-2, f"{shape}: relative error {rel:.2e}"
