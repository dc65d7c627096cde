"""A Gluon kernel whose tiling is an aggregate: copies an M x N matrix tile by tile and reduces each row.

`TileConfig` is a compile-time aggregate (block sizes and the blocked layout every tile uses, chosen by a
`@gluon.constexpr_function`), with `@gluon.jit` methods that build the row and column offsets in the right
slices of that layout. `RowStats` is an aggregate of runtime tensors (the running sum and maximum of each
row): it is passed to and returned from a jit method and carried by the loop over column tiles.
"""
import torch

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.constexpr_function
def tile_layout(block_n, num_warps):
    """Rows of `block_n` elements: 4-element vectors along a row, lanes across it, warps stacked over rows."""
    vec = 4 if block_n >= 4 else block_n
    lanes_n = min(32, block_n // vec)
    return gl.BlockedLayout([1, vec], [32 // lanes_n, lanes_n], [num_warps, 1], [1, 0])


@gluon.aggregate
class TileConfig:
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr
    layout: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, BLOCK_M, BLOCK_N, num_warps):
        self.BLOCK_M = gl.constexpr(BLOCK_M)
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.layout = gl.constexpr(tile_layout(BLOCK_N, num_warps))

    @gluon.jit
    def rows(self, pid):
        return pid * self.BLOCK_M + gl.arange(0, self.BLOCK_M, layout=gl.SliceLayout(1, self.layout))

    @gluon.jit
    def cols(self, start):
        return start + gl.arange(0, self.BLOCK_N, layout=gl.SliceLayout(0, self.layout))


@gluon.aggregate
class RowStats:
    """The running sum and maximum of each row of the tiles seen so far."""
    total: gl.tensor
    peak: gl.tensor

    @gluon.jit
    def update(self, x, mask):
        total = self.total + gl.sum(x, axis=1)
        peak = gl.maximum(self.peak, gl.max(gl.where(mask, x, -float("inf")), axis=1))
        return RowStats(total, peak)


@gluon.jit
def copy_rows_kernel(X, Y, SUM, MAX, M, N, stride_x, stride_y,  #
                     BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    cfg = TileConfig(BLOCK_M, BLOCK_N, gl.num_warps())
    pid = gl.program_id(0)
    rows = cfg.rows(pid)
    row_ok = rows < M
    row_layout: gl.constexpr = gl.SliceLayout(1, cfg.layout)
    stats = RowStats(gl.zeros([BLOCK_M], gl.float32, layout=row_layout),
                     gl.full([BLOCK_M], -float("inf"), gl.float32, layout=row_layout))
    for start in range(0, N, BLOCK_N):
        cols = cfg.cols(start)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = gl.load(X + rows[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        gl.store(Y + rows[:, None] * stride_y + cols[None, :], x, mask=mask)
        stats = stats.update(x.to(gl.float32), mask)
    gl.store(SUM + rows, stats.total, mask=row_ok)
    gl.store(MAX + rows, stats.peak, mask=row_ok)


def copy_rows(x):
    M, N = x.shape
    y = torch.empty_like(x)
    sums = torch.empty(M, dtype=torch.float32, device=x.device)
    maxs = torch.empty(M, dtype=torch.float32, device=x.device)
    BLOCK_M, BLOCK_N = 16, 64
    grid = (triton_cdiv(M, BLOCK_M), )
    copy_rows_kernel[grid](x, y, sums, maxs, M, N, x.stride(0), y.stride(0), BLOCK_M, BLOCK_N, num_warps=4)
    return y, sums, maxs


def triton_cdiv(a, b):
    return (a + b - 1) // b


if __name__ == "__main__":
    x = torch.randn(37, 150, device="cuda", dtype=torch.float16)
    y, sums, maxs = copy_rows(x)
    assert torch.equal(x, y)
    torch.testing.assert_close(sums, x.float().sum(1), atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(maxs, x.float().amax(1))
