# Kernels whose results must equal their inputs bit for bit: the CLI's buffers, .npy files and the interpreter
# keep every dtype exact (64-bit integers over their whole range, NaN payloads).
import triton
import triton.language as tl


@triton.jit
def add_zero_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x + 0, mask=m)


@triton.jit
def bitcast_round_trip_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    i = x.to(tl.int32, bitcast=True)
    tl.store(y_ptr + offs, i.to(tl.float32, bitcast=True), mask=m)
