"""A Hopper matmul written in Gluon with TMA: C = A @ B on wgmma, each operand tile copied by the tensor memory
accelerator into a two-buffer ring and waited for on an mbarrier per buffer.

A, B and C come as host `TensorDescriptor`s whose blocks are the tiles. At step k the program waits on the
barrier of buffer k % 2 (phase (k // 2) % 2: each barrier completes once per use), issues the wgmma of step k
asynchronously, arms the other buffer's barrier with both tiles' bytes and starts the TMA copies of step k + 1
into it (its last reader, the wgmma of step k - 1, was waited for), and only then waits for the wgmma: the copies
of one step overlap the tensor cores' work on the other. TMA reads zeros past the tensors' edges, so M, N and K need no
masks; the epilogue stages the tile in shared memory and stores it with one TMA store, which drops what falls
outside C.
"""
import torch

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                               warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


@gluon.jit
def issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, slot, off_m, off_n, k, pred):
    """Arms the barrier of buffer `slot` and starts the copies of the K block at `k` into it, when `pred`."""
    bar = bars.index(slot)
    mbarrier.expect(bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta, pred=pred)
    tma.async_load(a_desc, [off_m, k], bar, a_bufs.index(slot), pred=pred)
    tma.async_load(b_desc, [k, off_n], bar, b_bufs.index(slot), pred=pred)


@gluon.jit
def matmul_kernel(a_desc, b_desc, c_desc, K):
    BLOCK_M: gl.constexpr = a_desc.block_shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_shape[1]
    num_warps: gl.constexpr = gl.num_warps()
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [num_warps, 1], [16, BLOCK_N, 16])

    off_m = gl.program_id(0) * BLOCK_M
    off_n = gl.program_id(1) * BLOCK_N
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [2, BLOCK_M, BLOCK_K], a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [2, BLOCK_K, BLOCK_N], b_desc.layout)
    bars = mbarrier.allocate_mbarrier(batch=2)
    mbarrier.init(bars.index(0), count=1)
    mbarrier.init(bars.index(1), count=1)
    acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, layout=ACC)

    k_tiles = gl.cdiv(K, BLOCK_K)
    issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, 0, off_m, off_n, 0, k_tiles > 0)
    for ki in range(k_tiles):
        slot = ki % 2
        mbarrier.wait(bars.index(slot), (ki // 2) % 2)
        acc = warpgroup_mma(a_bufs.index(slot), b_bufs.index(slot), acc, is_async=True)
        # While the tensor cores work, copy the next step into the other buffers (their last reader, the previous
        # step's wgmma, was retired at the end of that step). Past the end of K nothing is issued.
        issue_loads(a_desc, b_desc, a_bufs, b_bufs, bars, 1 - slot, off_m, off_n, (ki + 1) * BLOCK_K,
                    ki + 1 < k_tiles)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    mbarrier.invalidate(bars.index(0))
    mbarrier.invalidate(bars.index(1))

    c_buf = gl.allocate_shared_memory(c_desc.dtype, [BLOCK_M, BLOCK_N], c_desc.layout, acc.to(c_desc.dtype))
    fence_async_shared()
    tma.async_store(c_desc, [off_m, off_n], c_buf)
    tma.store_wait(0)


def matmul(a, b, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    layout = lambda block: gl.NVMMASharedLayout.get_default_for(block, gl.float16)  # noqa: E731
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K], layout([BLOCK_M, BLOCK_K]))
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_K, BLOCK_N], layout([BLOCK_K, BLOCK_N]))
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N], layout([BLOCK_M, BLOCK_N]))
    grid = ((M + BLOCK_M - 1) // BLOCK_M, (N + BLOCK_N - 1) // BLOCK_N)
    matmul_kernel[grid](a_desc, b_desc, c_desc, K, num_warps=num_warps)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn((300, 200), device="cuda", dtype=torch.float16)
    b = torch.randn((200, 264), device="cuda", dtype=torch.float16)
    c = matmul(a, b)
    print(f"max difference: {torch.max(torch.abs(c.float() - a.float() @ b.float())).item():.4f}")
