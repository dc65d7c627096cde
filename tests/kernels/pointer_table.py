import triton
import triton.language as tl


@triton.jit
def scale_each(table, out, n, BLOCK: tl.constexpr):
    # Program g reads the buffer whose address is table[g] and writes it, times g + 1, to row g of out.
    g = tl.program_id(0)
    src = tl.load(table + g).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n, other=0.0)
    tl.store(out + g * BLOCK + offs, x * (g + 1), mask=offs < n)
