"""Tensor descriptors made on the host: `TensorDescriptor.from_tensor` wraps a tensor with a block shape, and the
kernel moves whole tiles with `desc.load([...])` / `desc.store([...], tile)` (TMA on Hopper and Blackwell).

Each program owns BLOCK_M rows of `x` (M x N). It walks along the rows one BLOCK_M x BLOCK_N tile at a time,
writes each tile scaled and transposed into `y` (N x M), and sums the rows into `row_sum` (M). Neither M nor N
needs to be a multiple of the block: a load that reaches past the tensor's edge reads zeros there (the
descriptor's padding), so the sums are unaffected, and the parts of a store that fall outside are dropped.

The block shapes live in the descriptors: the kernel is specialized on each descriptor's dtype and block shape,
while the tensors' shapes and strides arrive at run time (`x_desc.shape`).
"""
import torch

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def transpose_scale_kernel(x_desc,  # descriptor of the input, M x N, blocks of BLOCK_M x BLOCK_N
                           y_desc,  # descriptor of the output, N x M, blocks of BLOCK_N x BLOCK_M
                           sum_desc,  # descriptor of the row sums, M (float32), blocks of BLOCK_M
                           scale,  # a float32 scalar
                           ):
    BLOCK_M: tl.constexpr = x_desc.block_shape[0]
    BLOCK_N: tl.constexpr = x_desc.block_shape[1]
    tl.static_assert(y_desc.block_shape[0] == BLOCK_N and y_desc.block_shape[1] == BLOCK_M)
    tl.static_assert(sum_desc.block_shape[0] == BLOCK_M)
    n_cols = x_desc.shape[1]  # a runtime value: the descriptor carries the tensor's shape
    off_m = tl.program_id(axis=0) * BLOCK_M
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for off_n in range(0, n_cols, BLOCK_N):
        tile = x_desc.load([off_m, off_n])  # zeros past row M and column N
        acc += tl.sum(tile.to(tl.float32), axis=1)
        out = (tile * scale).to(y_desc.dtype)
        y_desc.store([off_n, off_m], tl.trans(out))  # only the part inside N x M is written
    sum_desc.store([off_m], acc)


@triton.jit
def tile_copy_device_desc(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          PADDING: tl.constexpr):
    """Descriptors made in the kernel: program (i, j) reads tile (i, j) of `x` (M x N) through one, with PADDING
    ("zero" or "nan") past the edges, and writes the whole tile, padding included, into `y`, whose rows and
    columns are rounded up to whole tiles, through another. On sm_90a both are TMA copies through tensor maps the
    program writes into its global scratch."""
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[stride_x, 1], block_shape=[BLOCK_M, BLOCK_N],
                                       padding_option=PADDING)
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[tl.cdiv(M, BLOCK_M) * BLOCK_M, tl.cdiv(N, BLOCK_N) * BLOCK_N],
                                       strides=[stride_y, 1], block_shape=[BLOCK_M, BLOCK_N])
    off_m = tl.program_id(axis=0) * BLOCK_M
    off_n = tl.program_id(axis=1) * BLOCK_N
    y_desc.store([off_m, off_n], x_desc.load([off_m, off_n]))


def transpose_scale(x: torch.Tensor, scale: float, BLOCK_M=16, BLOCK_N=32):
    M, N = x.shape
    y = torch.empty((N, M), device=x.device, dtype=x.dtype)
    row_sum = torch.empty((M, ), device=x.device, dtype=torch.float32)
    x_desc = TensorDescriptor.from_tensor(x, block_shape=[BLOCK_M, BLOCK_N])
    y_desc = TensorDescriptor.from_tensor(y, block_shape=[BLOCK_N, BLOCK_M])
    sum_desc = TensorDescriptor.from_tensor(row_sum, block_shape=[BLOCK_M])
    grid = (triton.cdiv(M, BLOCK_M), )
    transpose_scale_kernel[grid](x_desc, y_desc, sum_desc, scale)
    return y, row_sum


if __name__ == "__main__":
    torch.manual_seed(0)
    # Rows of 16-byte multiples (TMA's rule for strides), neither dim a multiple of its block.
    x = torch.randn((200, 328), device="cuda", dtype=torch.float16)
    y, row_sum = transpose_scale(x, 0.5)
    print(f"max difference (y): {torch.max(torch.abs(y - (x * 0.5).T))}")
    print(f"max difference (row sums): {torch.max(torch.abs(row_sum - x.float().sum(dim=1)))}")
