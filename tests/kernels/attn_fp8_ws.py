# Attention forward with fp8 (e5m2) Q, K and V through tensor descriptors, its first loop warp-specialized: the
# shape of tutorial 06's Hopper fp8 forward, written for the simulator's tests of the split loop (a producer warp
# or warpgroup for K's and V's copies, two consumer warpgroups running the dots and the softmax). V comes transposed
# (`[Z * H * HEAD_DIM, N_CTX]`, each head's HEAD_DIM x N_CTX block) so that both operands of the 8-bit `P V` dot
# are K-major. With CAUSAL, the first loop runs over the blocks left of the diagonal (none for the first row
# block) and a second, masked loop over the diagonal block runs after the split one.
import triton
import triton.language as tl


@triton.jit
def _blocks(acc, l_i, m_i, q, desc_k, desc_vt, row0, off_hz, lo, hi, qk_scale, offs_m, offs_n,
            HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr, SPLIT: tl.constexpr):
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=SPLIT):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([row0 + start_n, 0]).T
        qk = tl.dot(q, k)
        if MASKED:
            qk = qk * qk_scale + tl.where(offs_m[:, None] >= start_n + offs_n[None, :], 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_vt.load([off_hz * HEAD_DIM, start_n]).T
        acc = tl.dot(p.to(tl.float8e5), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fp8_ws(sm_scale, M, H, desc_q, desc_k, desc_vt, desc_o, N_CTX,  #
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    row0 = off_hz * N_CTX
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([row0 + start_m * BLOCK_M, 0])
    hi = start_m * BLOCK_M if CAUSAL else N_CTX
    acc, l_i, m_i = _blocks(acc, l_i, m_i, q, desc_k, desc_vt, row0, off_hz, 0, hi, qk_scale, offs_m, offs_n,
                            HEAD_DIM, BLOCK_N, False, True)
    if CAUSAL:
        acc, l_i, m_i = _blocks(acc, l_i, m_i, q, desc_k, desc_vt, row0, off_hz, start_m * BLOCK_M,
                                (start_m + 1) * BLOCK_M, qk_scale, offs_m, offs_n, HEAD_DIM, BLOCK_N, True, False)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    desc_o.store([row0 + start_m * BLOCK_M, 0], acc.to(tl.float16))
