"""Layer normalization with a hand-written backward pass, exposed to autograd.

Forward: one program per row computes the row's mean and reciprocal standard deviation and writes the normalized,
scaled and shifted row. Backward: one program per row computes dx; the per-column weight and bias gradients are
summed first into GROUPS partial buffers (each behind a spin lock) and then reduced by a second kernel.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

import triton
import triton.language as tl

try:
    import apex  # a fused CUDA implementation to compare against
except ImportError as err:
    apex = None
    print(f"apex unavailable ({err!s}); skipping its benchmark line")

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def ln_forward(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, row_stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * row_stride
    y_ptr += row * row_stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        centered = tl.where(cols < n_cols, tl.load(x_ptr + cols, mask=cols < n_cols, other=0.) - mean, 0.)
        acc += centered * centered
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n_cols
        x = tl.load(x_ptr + cols, mask=m, other=0.).to(tl.float32)
        w, b = tl.load(w_ptr + cols, mask=m), tl.load(b_ptr + cols, mask=m)
        tl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=m)


@triton.jit
def ln_backward_dx(dx_ptr, dy_ptr, dw_part, db_part, x_ptr, w_ptr, mean_ptr, rstd_ptr, locks, row_stride, n_cols,
                   GROUPS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=m, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * row_stride + cols, mask=m, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=m).to(tl.float32)
    xhat = tl.where(m, (x - tl.load(mean_ptr + row)) * tl.load(rstd_ptr + row), 0.)
    wdy = tl.where(m, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    tl.store(dx_ptr + row * row_stride + cols, (wdy - (xhat * c1 + c2)) * tl.load(rstd_ptr + row), mask=m)

    group = row % GROUPS
    lock = locks + group
    seen = locks + GROUPS + group
    dw_ptrs = dw_part + group * n_cols + cols
    db_ptrs = db_part + group * n_cols + cols
    dw = (dy * xhat).to(w.dtype)
    db = dy.to(w.dtype)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(seen) == 0:
        tl.atomic_xchg(seen, 1)
    else:
        dw += tl.load(dw_ptrs, mask=m)
        db += tl.load(db_ptrs, mask=m)
    tl.store(dw_ptrs, dw, mask=m)
    tl.store(db_ptrs, db, mask=m)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def ln_backward_dwdb(dw_part, db_part, dw_ptr, db_ptr, n_groups, n_cols, BLOCK_G: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros((BLOCK_G, BLOCK_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_G, BLOCK_N), dtype=tl.float32)
    for g in range(0, n_groups, BLOCK_G):
        groups = g + tl.arange(0, BLOCK_G)
        m = (groups[:, None] < n_groups) & (cols[None, :] < n_cols)
        offs = groups[:, None] * n_cols + cols[None, :]
        dw += tl.load(dw_part + offs, mask=m, other=0.)
        db += tl.load(db_part + offs, mask=m, other=0.)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0), mask=cols < n_cols)
    tl.store(db_ptr + cols, tl.sum(db, axis=0), mask=cols < n_cols)


def groups_for(n_cols: int) -> int:
    """More partial buffers for narrow rows, where the lock is contended more often."""
    if n_cols <= 1024: return 256
    if n_cols <= 4096: return 128
    if n_cols <= 8192: return 96
    return 64


class LayerNorm(torch.autograd.Function):
    """`y = (x - mean) / sqrt(var + eps) * weight + bias` over the last dimension."""

    MAX_ROW_BYTES: int = 65536

    @staticmethod
    def forward(ctx, x: torch.Tensor, shape: Tuple[int, ...], weight: torch.Tensor, bias: torch.Tensor,
                eps: float = 1e-5) -> torch.Tensor:
        y = torch.empty_like(x)
        rows = x.reshape(-1, x.shape[-1])
        n_rows, n_cols = rows.shape
        mean, rstd = (torch.empty((n_rows, ), dtype=torch.float32, device=x.device) for _ in range(2))
        BLOCK = min(LayerNorm.MAX_ROW_BYTES // x.element_size(), triton.next_power_of_2(n_cols))
        if n_cols > BLOCK:
            raise RuntimeError(f"rows wider than {LayerNorm.MAX_ROW_BYTES} bytes are not supported")
        num_warps = min(max(BLOCK // 256, 1), 8)
        ln_forward[(n_rows, )](rows, y, weight, bias, mean, rstd, rows.stride(0), n_cols, eps, BLOCK=BLOCK,
                               num_warps=num_warps)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.BLOCK, ctx.num_warps, ctx.eps = BLOCK, num_warps, eps
        return y

    @staticmethod
    def backward(ctx, dy: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        x, w, _, mean, rstd = ctx.saved_tensors
        n_cols = w.shape[0]
        groups = groups_for(n_cols)
        locks = torch.zeros(2 * groups, dtype=torch.int32, device=w.device)
        dw_part = torch.zeros((groups, n_cols), dtype=x.dtype, device=w.device)
        db_part = torch.zeros_like(dw_part)
        dw, db = torch.empty((n_cols, ), dtype=w.dtype, device=w.device), torch.empty_like(w)
        dx = torch.empty_like(dy)
        rows = x.reshape(-1, x.shape[-1])
        n_rows = rows.shape[0]
        ln_backward_dx[(n_rows, )](dx, dy, dw_part, db_part, x, w, mean, rstd, locks, rows.stride(0), n_cols,
                                   GROUPS=groups, BLOCK=ctx.BLOCK, num_warps=ctx.num_warps)
        grid = lambda meta: [triton.cdiv(n_cols, meta["BLOCK_N"])]
        ln_backward_dwdb[grid](dw_part, db_part, dw, db, min(groups, n_rows), n_cols, BLOCK_G=32, BLOCK_N=128)
        return dx, None, dw, db, None


layer_norm = LayerNorm.apply


def check(n_rows, n_cols, dtype, eps=1e-5, device=DEVICE):
    shape = (n_cols, )
    weight, bias = (torch.rand(shape, dtype=dtype, device=device, requires_grad=True) for _ in "wb")
    x = (-2.3 + 0.5 * torch.randn((n_rows, n_cols), dtype=dtype, device=device)).requires_grad_()
    dy = .1 * torch.randn_like(x)
    results = {}
    for name, fn in [("triton", layer_norm), ("torch", torch.nn.functional.layer_norm)]:
        y = fn(x, shape, weight, bias, eps)
        y.backward(dy, retain_graph=True)
        results[name] = [y, *(t.grad.clone() for t in (x, weight, bias))]
        x.grad = weight.grad = bias.grad = None
    for ours, theirs in zip(*results.values(), strict=True):
        torch.testing.assert_close(ours, theirs, atol=1e-2, rtol=0)


if __name__ == "__main__":
    check(1151, 8192, torch.float16)
