"""A Hopper matmul written in Gluon: C = A @ B on wgmma, fed by a hand-written double-buffered cp.async ring.

Each program computes one BLOCK_M x BLOCK_N tile of C (fp16 in, fp32 accumulation, fp16 out). Both operands
have two shared-memory buffers in NVMMA-swizzled layouts. At step k the program waits for the cp.async copies
of step k, issues the wgmma of step k asynchronously, starts the copies of step k + 1 into the other buffers and
only then waits for the wgmma: the copies of one step overlap the tensor cores' work on the previous one. Edges
are masked (masked-off elements land as zeros and add nothing); cp.async moves at least 4 bytes, so K and N
must be multiples of 16 (as Triton's launcher specializes them) for the copies to vectorize.
"""
import torch

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, warpgroup_mma, warpgroup_mma_wait


@gluon.jit
def issue_copies(a_bufs, b_bufs, slot, a_ptr, b_ptr, rows, ks_a, ks_b, cols, k0, M, N, K, stride_am, stride_bk):
    """Starts the copies of the K block at `k0` into buffer `slot` of both rings, as one commit group."""
    a_mask = (rows[:, None] < M) & (ks_a[None, :] + k0 < K)
    a_src = a_ptr + rows[:, None] * stride_am + (ks_a[None, :] + k0)
    async_copy.async_copy_global_to_shared(a_bufs.index(slot), a_src, mask=a_mask)
    b_mask = (ks_b[:, None] + k0 < K) & (cols[None, :] < N)
    b_src = b_ptr + (ks_b[:, None] + k0) * stride_bk + cols[None, :]
    async_copy.async_copy_global_to_shared(b_bufs.index(slot), b_src, mask=b_mask)
    async_copy.commit_group()


@gluon.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,  #
                  BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr):
    num_warps: gl.constexpr = gl.num_warps()
    # 8 halves (16 bytes) per thread and copy, lanes along the contiguous dim first.
    A_REG: gl.constexpr = gl.BlockedLayout([1, 8], [32 // (BLOCK_K // 8), BLOCK_K // 8], [num_warps, 1], [1, 0])
    B_REG: gl.constexpr = gl.BlockedLayout([1, 8], [32 // (BLOCK_N // 8), BLOCK_N // 8], [num_warps, 1], [1, 0])
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [num_warps, 1], [16, BLOCK_N, 16])
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_M, BLOCK_K], gl.float16)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_K, BLOCK_N], gl.float16)

    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)
    rows = pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, A_REG))
    ks_a = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(0, A_REG))
    ks_b = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(1, B_REG))
    cols = pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, B_REG))

    a_bufs = gl.allocate_shared_memory(gl.float16, [2, BLOCK_M, BLOCK_K], a_layout)
    b_bufs = gl.allocate_shared_memory(gl.float16, [2, BLOCK_K, BLOCK_N], b_layout)
    acc = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, layout=ACC)

    issue_copies(a_bufs, b_bufs, 0, a_ptr, b_ptr, rows, ks_a, ks_b, cols, 0, M, N, K, stride_am, stride_bk)
    for ki in range(gl.cdiv(K, BLOCK_K)):
        slot = ki % 2
        # The copies of this step (the only group in flight) have landed.
        async_copy.wait_group(num_outstanding=0)
        fence_async_shared()
        acc = warpgroup_mma(a_bufs.index(slot), b_bufs.index(slot), acc, is_async=True)
        # While the tensor cores work, copy the next step into the other buffers (their last reader, the wgmma
        # of the previous step, is retired). Past the end of K the copies are masked off entirely.
        k_next = (ki + 1) * BLOCK_K
        issue_copies(a_bufs, b_bufs, 1 - slot, a_ptr, b_ptr, rows, ks_a, ks_b, cols, k_next, M, N, K, stride_am,
                     stride_bk)
        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    async_copy.wait_group(num_outstanding=0)

    rows_c = pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, ACC))
    cols_c = pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, ACC))
    c_mask = (rows_c[:, None] < M) & (cols_c[None, :] < N)
    gl.store(c_ptr + rows_c[:, None] * stride_cm + cols_c[None, :], acc.to(gl.float16), mask=c_mask)


def matmul(a, b, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and a.is_contiguous() and b.is_contiguous()
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = ((M + BLOCK_M - 1) // BLOCK_M, (N + BLOCK_N - 1) // BLOCK_N)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M, BLOCK_N, BLOCK_K,
                        num_warps=4)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    a = torch.randn(300, 208, device="cuda", dtype=torch.float16)
    b = torch.randn(208, 272, device="cuda", dtype=torch.float16)
    c = matmul(a, b)
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), atol=2e-2, rtol=1e-2)
    print("ok")
