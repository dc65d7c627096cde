import triton
import triton.language as tl


@triton.jit
def last_offsets(a_ptr, b_ptr, out_ptr, off_ptr, K, BLOCK: tl.constexpr):
    # `offs` is computed from the loop variable for the pipelined load, and carried out of the loop: after it
    # holds the last iteration's offsets.
    rows = tl.arange(0, BLOCK)
    b = tl.load(b_ptr + rows[:, None] * BLOCK + rows[None, :])
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    offs = tl.arange(0, BLOCK)
    for k in range(0, K, BLOCK):
        offs = k + tl.arange(0, BLOCK)
        a = tl.load(a_ptr + rows[:, None] * K + offs[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + rows[:, None] * BLOCK + rows[None, :], acc)
    tl.store(off_ptr + rows, offs)


@triton.jit
def last_offsets_counted(a_ptr, b_ptr, out_ptr, off_ptr, K, BLOCK: tl.constexpr):
    # The same with the offsets advanced by a counter the loop carries: stage 0 computes them from the counter,
    # ahead; the counter grows by the same amount every iteration, so the last stage takes it back to its own.
    rows = tl.arange(0, BLOCK)
    b = tl.load(b_ptr + rows[:, None] * BLOCK + rows[None, :])
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    offs = tl.arange(0, BLOCK)
    curr = 0
    for _ in range(0, K, BLOCK):
        offs = curr + tl.arange(0, BLOCK)
        a = tl.load(a_ptr + rows[:, None] * K + offs[None, :])
        acc = tl.dot(a, b, acc)
        curr += BLOCK
    tl.store(out_ptr + rows[:, None] * BLOCK + rows[None, :], acc)
    tl.store(off_ptr + rows, offs)


@triton.jit
def last_offsets_wrapped(a_ptr, b_ptr, out_ptr, off_ptr, K, BLOCK: tl.constexpr):
    # The same with a counter that wraps around (the last iteration's offsets are 0 again): not advanced by a
    # constant step, the last iteration's cannot be computed again, and the loop runs as written.
    rows = tl.arange(0, BLOCK)
    b = tl.load(b_ptr + rows[:, None] * BLOCK + rows[None, :])
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    offs = tl.arange(0, BLOCK)
    curr = 0
    for _ in range(0, K, BLOCK):
        offs = curr + tl.arange(0, BLOCK)
        a = tl.load(a_ptr + rows[:, None] * K + offs[None, :])
        acc = tl.dot(a, b, acc)
        curr = (curr + BLOCK) % K
    tl.store(out_ptr + rows[:, None] * BLOCK + rows[None, :], acc)
    tl.store(off_ptr + rows, offs)
