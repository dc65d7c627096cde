"""device_print and device_assert: each program prints its block of `x` (and the offsets in hex) and asserts
that the offsets stay inside the buffer.

On a GPU the lines come from vprintf in no particular order; with --interpret they come from the interpreter in
element order. Sorted, the two agree (floats are spelled differently: %.17g on the GPU).
"""
import triton
import triton.language as tl


@triton.jit
def debug_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.device_assert(offsets < n + BLOCK, "offsets stay within one block of the end")
    x = tl.load(x_ptr + offsets, mask=mask, other=-1.0)
    tl.device_print("x", x)
    tl.device_print("offsets", offsets, hex=True)
