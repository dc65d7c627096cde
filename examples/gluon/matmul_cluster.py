"""The Hopper GEMM of `matmul.py` on thread-block clusters: each program is a cluster of CTAs that computes one
tall output tile together, and the B tile they all need is fetched from global memory once and multicast into
every CTA's shared memory.

The cluster's tile is `TILE_M x BLOCK_N` (256 x 256 with two CTAs). Its layouts say who holds what
(`cga_layout`, one basis per bit of the CTA's rank in the cluster, in units of one CTA's part):

- A (`TILE_M x BLOCK_K` per stage) and C are split along M, `cga_layout=[[1, 0]]`: CTA r holds rows
  `r * TILE_M / 2` on. Each CTA loads and stores only its own rows.
- B (`BLOCK_K x BLOCK_N`) has a zero basis, `[[0, 0]]`: every CTA holds all of it. With `multicast=True` the
  CTAs deal out B's boxes (64 columns each at a 128-byte swizzle), each copying its share into every CTA's
  buffer and completing its bytes on each CTA's own `ready` barrier.
- The accumulator's NVMMA layout is split as A is, so each CTA's two warpgroups compute its 128 rows from its
  rows of A and the shared B, as wgmma has no cross-CTA mode on Hopper.

The ring is `matmul.py`'s, with one change. A slot of B is written by the CTAs into each other's shared memory,
so before a CTA may refill it, every CTA of the cluster must be done reading its copy: each consumer releases
a slot with `mbarrier.arrive(empty, cta_mask=NUM_CTAS - 1)`, an arrival on the `empty` barrier of every CTA of
the cluster (the mask's bits are the rank bits in which the CTAs it reaches differ; Gluon's Rubin `arrive` and
Triton's `arrive_barrier {ctaMask}` spell it the same way), and each `empty` barrier counts `NUM_CTAS` arrivals
per phase. The compiler initializes every CTA's barriers before any CTA's first multicast (a cluster barrier
after the initializations) and keeps every CTA alive until the others are done with its shared memory (a
cluster barrier before the exit).

tessel runs it on sm_90a; the interpreter runs the cluster in its logical view (`tessel run --interpret
--num-ctas 2`).
"""
import torch
import triton

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                               warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from matmul import tile_coords


@gluon.jit
def load_partition(a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K, GROUP_M: gl.constexpr,
                   STAGES: gl.constexpr):
    TILE_M: gl.constexpr = a_desc.block_shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_shape[1]
    num_pid_m = gl.cdiv(M, TILE_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    k_tiles = gl.cdiv(K, BLOCK_K)
    it = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        pid_m, pid_n = tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        for kk in range(k_tiles):
            s = it % STAGES
            # Every CTA has released slot s: this CTA's copy of B may be written into all of theirs.
            mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
            # This CTA's rows of A, and B whole (from whichever CTA multicasts it).
            mbarrier.expect(ready.index(s), a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
            tma.async_load(a_desc, [pid_m * TILE_M, kk * BLOCK_K], ready.index(s), a_bufs.index(s))
            tma.async_load(b_desc, [kk * BLOCK_K, pid_n * BLOCK_N], ready.index(s), b_bufs.index(s), multicast=True)
            it += 1


@gluon.jit
def mma_partition(c_desc, a_bufs, b_bufs, c_smem, ready, empty, M, N, K, GROUP_M: gl.constexpr,
                  STAGES: gl.constexpr):
    TILE_M: gl.constexpr = c_desc.block_shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_shape[1]
    BLOCK_K: gl.constexpr = a_bufs.shape[2]
    ALL_PEERS: gl.constexpr = gl.num_ctas() - 1
    # C's rows split over the CTAs as A's are; within a CTA, one m64nNk16 wgmma per warpgroup.
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [gl.num_warps(), 1], [16, BLOCK_N, 16],
                                                         cga_layout=c_desc.layout.cga_layout)
    num_pid_m = gl.cdiv(M, TILE_M)
    num_pid_n = gl.cdiv(N, BLOCK_N)
    k_tiles = gl.cdiv(K, BLOCK_K)
    it = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        pid_m, pid_n = tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        acc = gl.zeros([TILE_M, BLOCK_N], gl.float32, acc_layout)
        for kk in range(k_tiles):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
            # The previous step's wgmma has retired: this CTA no longer reads its slot; tell every CTA.
            acc = warpgroup_mma_wait(num_outstanding=1, deps=[acc])
            mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), pred=kk > 0, cta_mask=ALL_PEERS)
            it += 1
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
        mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), pred=k_tiles > 0, cta_mask=ALL_PEERS)
        # The previous tile's store has read the staging buffer before it is overwritten.
        tma.store_wait(0)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        # Each CTA stores its rows.
        tma.async_copy_shared_to_global(c_desc, [pid_m * TILE_M, pid_n * BLOCK_N], c_smem)
    tma.store_wait(0)


@gluon.jit
def matmul_cluster_kernel(a_desc, b_desc, c_desc, M, N, K, GROUP_M: gl.constexpr, STAGES: gl.constexpr):
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    # Each CTA's own barriers. `empty` counts one release from every CTA of the cluster.
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=gl.num_ctas())
    gl.warp_specialize([
        (mma_partition, (c_desc, a_bufs, b_bufs, c_smem, ready, empty, M, N, K, GROUP_M, STAGES)),
        (load_partition, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K, GROUP_M, STAGES)),
    ], [1], [24])


# Clusters the GPU holds at once, per device and kernel configuration (`matmul_cluster`).
_resident_clusters = {}


def matmul_cluster(a, b, num_ctas=2, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, STAGES=3, GROUP_M=8, num_warps=8,
                   num_sms=None):
    """C = A @ B with clusters of `num_ctas` CTAs, each CTA computing BLOCK_M rows of a cluster tile of
    `num_ctas * BLOCK_M x BLOCK_N`."""
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    dt = gl.float16 if a.dtype == torch.float16 else gl.bfloat16
    tile_m = num_ctas * BLOCK_M
    split = [[1 << i, 0] for i in range(num_ctas.bit_length() - 1)]  # along M
    whole = [[0, 0]] * len(split)  # every CTA holds all of it
    layout = lambda block, cga: gl.NVMMASharedLayout.get_default_for(block, dt, cga_layout=cga)  # noqa: E731
    a_desc = TensorDescriptor.from_tensor(a, [tile_m, BLOCK_K], layout([tile_m, BLOCK_K], split))
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_K, BLOCK_N], layout([BLOCK_K, BLOCK_N], whole))
    c_desc = TensorDescriptor.from_tensor(c, [tile_m, BLOCK_N], layout([tile_m, BLOCK_N], split))
    tiles = triton.cdiv(M, tile_m) * triton.cdiv(N, BLOCK_N)
    args = (a_desc, b_desc, c_desc, M, N, K, GROUP_M, STAGES)
    if num_sms is None:
        # As many clusters as the GPU holds at once. A cluster's CTAs share a GPC, so this can be fewer than the
        # SMs divided by num_ctas (on the H200, 30 clusters of 4 of these CTAs, not 33), and a cluster launched
        # beyond it waits for a whole cluster to finish. Asked once per device and configuration.
        key = (a.device, a.dtype, num_ctas, BLOCK_M, BLOCK_N, BLOCK_K, STAGES, GROUP_M, num_warps)
        if key not in _resident_clusters:
            k = matmul_cluster_kernel.warmup(*args, num_warps=num_warps, num_ctas=num_ctas, grid=(1, ))
            _resident_clusters[key] = triton.runtime.driver.active.utils.cuOccupancyMaxActiveClusters(
                k.function, k.metadata.shared, num_ctas)
        programs = _resident_clusters[key]
    else:
        programs = num_sms // num_ctas
    grid = (min(programs, tiles), )
    matmul_cluster_kernel[grid](*args, num_warps=num_warps, num_ctas=num_ctas)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn((1000, 520), device="cuda", dtype=torch.float16)
    b = torch.randn((520, 1096), device="cuda", dtype=torch.float16)
    for num_ctas in (2, 4):
        c = matmul_cluster(a, b, num_ctas=num_ctas)
        print(f"{num_ctas} CTAs: max difference: {torch.max(torch.abs(c.float() - a.float() @ b.float())).item():.4f}")
