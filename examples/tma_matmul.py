"""Matrix multiplication through tensor descriptors: C = A @ B for A (M x K), B (K x N) and C (M x N), each passed
as a `TensorDescriptor` that carries its block shape.

On sm_90a the kernel's `desc.load`s become TMA copies (`cp.async.bulk.tensor`): the software pipeliner issues
them `num_stages - 1` iterations ahead into rings of shared-memory buffers, each iteration's copies completing on
one mbarrier, and the wgmma reads the tiles where TMA wrote them (no registers, no address arithmetic per
element). The epilogue's `desc.store` is a TMA store. Edges need no masks: a box reaching past the tensor reads
zeros and writes nothing there, so M, N and K need not be multiples of the blocks.

Programs take their tiles in groups of GROUP_M rows of tiles, so that the programs running together share A's
rows and B's columns in the L2 cache.
"""
import torch

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _tile_offsets(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The first row and column of program `pid`'s tile of C, taking tiles in groups of GROUP_M rows."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group = pid // (GROUP_M * num_pid_n)
    first_m = group * GROUP_M
    group_rows = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_rows)
    pid_n = (pid % (GROUP_M * num_pid_n)) // group_rows
    return pid_m * BLOCK_M, pid_n * BLOCK_N


@triton.jit
def matmul_kernel(a_desc, b_desc, c_desc, M, N, K, GROUP_M: tl.constexpr, WARP_SPECIALIZE: tl.constexpr = False):
    """With WARP_SPECIALIZE, a producer warp issues the K loop's copies and the kernel's warps run its wgmmas."""
    BLOCK_M: tl.constexpr = a_desc.block_shape[0]
    BLOCK_K: tl.constexpr = a_desc.block_shape[1]
    BLOCK_N: tl.constexpr = b_desc.block_shape[1]
    off_m, off_n = _tile_offsets(tl.program_id(axis=0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=WARP_SPECIALIZE):
        a = a_desc.load([off_m, k])
        b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_kernel_bt(a_desc, bt_desc, c_desc, M, N, K, GROUP_M: tl.constexpr):
    """C = A @ B with B given transposed, as an (N x K) matrix: what 8-bit operands need on Hopper, whose wgmma
    reads both operands K-major. The tile of B^T is read transposed by the dot where TMA put it."""
    BLOCK_M: tl.constexpr = a_desc.block_shape[0]
    BLOCK_K: tl.constexpr = a_desc.block_shape[1]
    BLOCK_N: tl.constexpr = bt_desc.block_shape[0]
    off_m, off_n = _tile_offsets(tl.program_id(axis=0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, k])
        bt = bt_desc.load([off_n, k])
        acc = tl.dot(a, bt.T, acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_kernel_persistent(a_desc, b_desc, c_desc, M, N, K, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr,
                             FLATTEN: tl.constexpr, WARP_SPECIALIZE: tl.constexpr = False):
    """The same product with one program per SM walking the tiles (a persistent kernel, launched over NUM_SMS
    programs). With FLATTEN the tile loop and the K loop are fused (`tl.range(..., flatten=True)`): the software
    pipeliner then runs across tile boundaries, issuing the next tile's first loads while this tile's last K
    steps and its store run, and the dot restarts its accumulator through wgmma's scale-d instead of a reset.
    With FLATTEN and WARP_SPECIALIZE a producer warp(group) issues the fused loop's copies, running ahead of the
    kernel's warps across tile boundaries, while they run the wgmmas and each tile's store."""
    BLOCK_M: tl.constexpr = a_desc.block_shape[0]
    BLOCK_K: tl.constexpr = a_desc.block_shape[1]
    BLOCK_N: tl.constexpr = b_desc.block_shape[1]
    num_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(axis=0), num_tiles, NUM_SMS, flatten=FLATTEN,
                         warp_specialize=WARP_SPECIALIZE):
        off_m, off_n = _tile_offsets(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = a_desc.load([off_m, k])
            b = b_desc.load([k, off_n])
            acc = tl.dot(a, b, acc)
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_kernel_device_desc(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BLOCK_M: tl.constexpr,
                              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """The same product from plain pointers and row strides: the kernel makes its descriptors itself. On sm_90a
    each program (each CTA of a cluster, at num_ctas > 1) writes their three tensor maps once into its slot of
    the kernel's global scratch (which the launch allocates), and the loads and the store are TMA copies as above. The strides must be multiples of 16
    bytes and the pointers 16-byte aligned (TMA's rules; the kernel stops with a message otherwise)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_bk, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[stride_cm, 1], block_shape=[BLOCK_M, BLOCK_N])
    off_m, off_n = _tile_offsets(tl.program_id(axis=0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, k])
        b = b_desc.load([k, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(c_ptr.dtype.element_ty))


def matmul(a: torch.Tensor, b: torch.Tensor, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_stages=4,
           num_warps=8):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "inner dimensions differ"
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    a_desc = TensorDescriptor.from_tensor(a, block_shape=[BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(b, block_shape=[BLOCK_K, BLOCK_N])
    c_desc = TensorDescriptor.from_tensor(c, block_shape=[BLOCK_M, BLOCK_N])
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), )
    matmul_kernel[grid](a_desc, b_desc, c_desc, M, N, K, GROUP_M=GROUP_M, num_stages=num_stages,
                        num_warps=num_warps)
    return c


if __name__ == "__main__":
    torch.manual_seed(0)
    # Ragged sizes: neither M, N nor K is a multiple of its block (rows stay 16-byte multiples, TMA's rule).
    a = torch.randn((1000, 520), device="cuda", dtype=torch.float16)
    b = torch.randn((520, 776), device="cuda", dtype=torch.float16)
    c = matmul(a, b)
    ref = a.float() @ b.float()
    print(f"max difference: {torch.max(torch.abs(c.float() - ref)).item():.4f} (max |C| = {ref.abs().max().item():.1f})")
