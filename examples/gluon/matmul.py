"""A Hopper GEMM written in Gluon: persistent tiles, a warp-specialized TMA producer, an mbarrier ring and
asynchronous wgmma. C = A @ B with A (M x K), B (K x N) and C (M x N) as host TensorDescriptors whose blocks are
the tiles; fp16 or bf16 in, fp32 accumulation, C in the inputs' type.

The grid is persistent: program p takes output tiles p, p + P, p + 2P, ... (P programs, one per SM), in grouped
order (GROUP_M tile rows walked column by column, so consecutive programs share the A rows and B columns they
load while those are still in L2). Each program is two partitions on disjoint warps:

- the **loader** (one worker warp, few registers) walks the same tiles and K blocks and keeps the ring full: for
  load number `it` it takes slot `it % STAGES`, waits until the consumer has released it (`empty`, whose phase
  flips every STAGES loads; the first wait on a fresh barrier passes), arms `ready` with both tiles' bytes and
  starts the two TMA copies, which complete the barrier when they land. It runs ahead across tile boundaries:
  while the consumer stores one tile, the next tile's first K blocks are already arriving.
- the **consumer** (the default partition, the kernel's warps: two warpgroups at num_warps=8, each computing 64
  rows of the tile) waits for `ready`, issues the wgmma asynchronously and retires the previous one
  (`warpgroup_mma_wait(1)`), which means that one's buffers are no longer read: it releases their slot to the
  loader. After the last K block it waits for every wgmma, converts the accumulator, stages it in shared memory
  and stores it with one TMA store; the store of one tile overlaps the next tile's main loop and is waited for
  only before the staging buffer is written again.

TMA reads zeros past the tensors' edges and drops writes past C's, so M, N and K need no masks (TMA needs the
rows 16-byte aligned: K and N multiples of 8).
"""
import torch
import triton

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                               warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


@gluon.jit
def tile_coords(tile, num_pid_m, num_pid_n, GROUP_M: gl.constexpr):
    """The (row, column) of output tile number `tile` in grouped order: GROUP_M tile rows (fewer in the last
    group) are walked column by column."""
    per_group = GROUP_M * num_pid_n
    first_m = (tile // per_group) * GROUP_M
    rows = min(num_pid_m - first_m, GROUP_M)
    in_group = tile % per_group
    return first_m + in_group % rows, in_group // rows


@gluon.jit
def load_partition(a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K, GROUP_M: gl.constexpr,
                   STAGES: gl.constexpr):
    BLOCK_M: gl.constexpr = a_desc.block_shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_shape[1]
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    k_tiles = gl.cdiv(K, BLOCK_K)
    it = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        pid_m, pid_n = tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        for kk in range(k_tiles):
            s = it % STAGES
            mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
            tma.async_copy_global_to_shared(a_desc, [pid_m * BLOCK_M, kk * BLOCK_K], ready.index(s), a_bufs.index(s))
            tma.async_copy_global_to_shared(b_desc, [kk * BLOCK_K, pid_n * BLOCK_N], ready.index(s), b_bufs.index(s))
            it += 1


@gluon.jit
def mma_partition(c_desc, a_bufs, b_bufs, c_smem, ready, empty, M, N, K, GROUP_M: gl.constexpr,
                  STAGES: gl.constexpr):
    BLOCK_M: gl.constexpr = c_desc.block_shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_shape[1]
    BLOCK_K: gl.constexpr = a_bufs.shape[2]
    # One m64nNk16 wgmma per warpgroup: warps_per_cta [num_warps, 1] gives each warpgroup 64 rows.
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, BLOCK_N, 16])
    num_pid_m = gl.cdiv(M, BLOCK_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    k_tiles = gl.cdiv(K, BLOCK_K)
    it = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        pid_m, pid_n = tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, acc_layout)
        for kk in range(k_tiles):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
            # The previous step's wgmma has retired: nothing reads its slot any more.
            acc = warpgroup_mma_wait(num_outstanding=1, deps=[acc])
            mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), pred=kk > 0)
            it += 1
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
        mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), pred=k_tiles > 0)
        # The previous tile's store has read the staging buffer before it is overwritten.
        tma.store_wait(0)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        tma.async_copy_shared_to_global(c_desc, [pid_m * BLOCK_M, pid_n * BLOCK_N], c_smem)
    tma.store_wait(0)


@gluon.jit
def matmul_kernel(a_desc, b_desc, c_desc, M, N, K, GROUP_M: gl.constexpr, STAGES: gl.constexpr):
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    gl.warp_specialize([
        (mma_partition, (c_desc, a_bufs, b_bufs, c_smem, ready, empty, M, N, K, GROUP_M, STAGES)),
        (load_partition, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K, GROUP_M, STAGES)),
    ], [1], [24])


def matmul(a, b, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, STAGES=3, GROUP_M=8, num_warps=8, num_sms=None):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    dt = gl.float16 if a.dtype == torch.float16 else gl.bfloat16
    layout = lambda block: gl.NVMMASharedLayout.get_default_for(block, dt)  # noqa: E731
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K], layout([BLOCK_M, BLOCK_K]))
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_K, BLOCK_N], layout([BLOCK_K, BLOCK_N]))
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N], layout([BLOCK_M, BLOCK_N]))
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    if num_sms is None:
        num_sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    matmul_kernel[(min(num_sms, tiles), )](a_desc, b_desc, c_desc, M, N, K, GROUP_M, STAGES, num_warps=num_warps)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn((1000, 520), device="cuda", dtype=torch.float16)
    b = torch.randn((520, 1096), device="cuda", dtype=torch.float16)
    c = matmul(a, b)
    print(f"max difference: {torch.max(torch.abs(c.float() - a.float() @ b.float())).item():.4f}")
