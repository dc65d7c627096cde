"""Row-wise argmax: for each row of an M x N matrix, the largest value and the first column holding it.

A reduction-heavy kernel: each program owns BLOCK_M rows and walks the columns in BLOCK_N tiles, reducing each
tile with `tl.max` and `tl.argmax` (two reductions over the same axis, one of them carrying indices), then
merging the tile's winners into the running ones. Ties keep the smaller column, as `torch.argmax` does; the
strict `>` in the merge keeps an earlier tile's column when a later tile only equals it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(X, OUT_MAX, OUT_IDX, M, N, stride_xm,  #
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    best = tl.full([BLOCK_M], -float("inf"), tl.float32)
    best_idx = tl.zeros([BLOCK_M], dtype=tl.int32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(X + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=-float("inf"))
        x = x.to(tl.float32)
        tile_max = tl.max(x, axis=1)
        tile_idx = tl.argmax(x, axis=1) + start
        better = tile_max > best
        best_idx = tl.where(better, tile_idx, best_idx)
        best = tl.where(better, tile_max, best)
    tl.store(OUT_MAX + rows, best, mask=row_ok)
    tl.store(OUT_IDX + rows, best_idx, mask=row_ok)


def argmax(x: torch.Tensor, BLOCK_M=4, BLOCK_N=1024):
    M, N = x.shape
    out_max = torch.empty(M, dtype=torch.float32, device=x.device)
    out_idx = torch.empty(M, dtype=torch.int32, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M), )
    argmax_kernel[grid](x, out_max, out_idx, M, N, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
    return out_max, out_idx
