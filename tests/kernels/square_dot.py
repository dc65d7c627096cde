"""One `dot` of constexpr-sized blocks, for the compile-cost bound on FMA dots (tests/cli_kernel.rs): f32 with
`input_precision="ieee"` runs on FMAs; tf32 and f16 run on mma.sync on sm_80."""
import triton
import triton.language as tl

@triton.jit
def k(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr = "ieee"):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(A + rm[:, None] * K + rk[None, :])
    b = tl.load(B + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(C + rm[:, None] * N + rn[None, :], c)
