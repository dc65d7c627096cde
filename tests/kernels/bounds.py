"""Kernels for the CLI's resource bounds (tests/cli_bounds.rs): a store at a 64-bit offset, a loop of dots, a
float scalar."""
import triton
import triton.language as tl


@triton.jit
def store_at(Out, off, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.store(Out + off + r, r)


@triton.jit
def many_dots(Out, n, B: tl.constexpr):
    r = tl.arange(0, B)
    x = (r[:, None] + r[None, :]).to(tl.float32)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for i in range(n):
        acc = tl.dot(x, x, acc)
    tl.store(Out + r[:, None] * B + r[None, :], acc)


@triton.jit
def scale(X, Out, s, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    m = r < n
    tl.store(Out + r, tl.load(X + r, mask=m) * s, mask=m)


@triton.jit
def ignores(Out, v):
    tl.store(Out, 0)
