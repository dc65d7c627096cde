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


@triton.jit
def mx_matmul_tma(C, a_desc, sa_desc, b_desc, sb_desc, N, K: tl.constexpr, VEC: tl.constexpr, BM: tl.constexpr,
                  BN: tl.constexpr, BK: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr, PA: tl.constexpr,
                  PB: tl.constexpr):
    # The scales come as TMA blocks [1, BM // 128, BK // VEC // 4, 2, 256]: each 512-byte chunk holds 4 scales of
    # each of 128 rows, stored as 32 groups of 16 bytes (rows r, r + 32, r + 64, r + 96), the layout block-scaled
    # MMAs read their scale factors in. The kernel unpacks them into [rows, BK // VEC] before the dot.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    RK: tl.constexpr = BK // VEC // 4
    for k in tl.range(0, K // BK, num_stages=3):
        a = a_desc.load([pid_m * BM, k * (BK // PA)])
        b = b_desc.load([pid_n * BN, k * (BK // PB)])
        sa = sa_desc.load([0, pid_m * (BM // 128), k * RK, 0, 0])
        sb = sb_desc.load([0, pid_n * (BN // 128), k * RK, 0, 0])
        sa = sa.reshape(BM // 128, RK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BM, BK // VEC)
        sb = sb.reshape(BN // 128, RK, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BN, BK // VEC)
        acc = tl.dot_scaled(a, sa, FA, b.T, sb, FB, acc)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    tl.store(C + rm[:, None] * N + rn[None, :], acc)
