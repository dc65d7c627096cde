# Auto mode's tl.dot_scaled with the accumulator carried through a K loop, written for tessel's tests: C = (A ·
# a_scale) @ (B · b_scale)^T over BM x BN tiles with ragged edges. A is [M, K / PA] and B [N, K / PB] row-major
# (PA, PB values per byte: 2 for e2m1, packed along K), B used transposed as tutorial 10 passes `b.T`; the
# scales are [M, K / VEC] and [N, K / VEC] (e8m0 bytes, or e4m3 for nvfp4 with VEC 16). On sm_100a the forms
# the block-scaled MMA takes run on it; the others run on the upcast operands and the PTX says why.
import triton
import triton.language as tl


@triton.jit
def mx_matmul(C, A, SA, B, SB, M, N, K: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr, VEC: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    PA: tl.constexpr = 2 if FA == "e2m1" else 1
    PB: tl.constexpr = 2 if FB == "e2m1" else 1
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        ka = k // PA + tl.arange(0, BK // PA)
        kb = k // PB + tl.arange(0, BK // PB)
        ks = k // VEC + tl.arange(0, BK // VEC)
        a = tl.load(A + rm[:, None] * (K // PA) + ka[None, :], mask=rm[:, None] < M, other=0)
        b = tl.load(B + rn[:, None] * (K // PB) + kb[None, :], mask=rn[:, None] < N, other=0)
        sa = tl.load(SA + rm[:, None] * (K // VEC) + ks[None, :], mask=rm[:, None] < M, other=0)
        sb = tl.load(SB + rn[:, None] * (K // VEC) + ks[None, :], mask=rn[:, None] < N, other=0)
        acc = tl.dot_scaled(a, sa, FA, b.T, sb, FB, acc)
    tl.store(C + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
