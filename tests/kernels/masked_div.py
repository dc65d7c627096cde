# Integer division whose divisor is loaded under a mask: the masked-off lanes divide by the load's `other`
# (0). Triton computes them and discards the results; the interpreter must too (issue 14).
import triton
import triton.language as tl


@triton.jit
def masked_div_kernel(x_ptr, y_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    y = tl.load(y_ptr + offs, mask=m, other=0)
    tl.store(q_ptr + offs, x // y, mask=m)
    tl.store(r_ptr + offs, x % y, mask=m)
