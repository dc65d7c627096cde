import triton
import triton.language as tl


@triton.jit
def attn_bwd_dkdv(Q, K, V, DO, M, D, DK, DV, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    # dK and dV of one block of keys of one head (program axis 1), attention backward's first inner loop: over
    # the query blocks, two tiles (qT, dO) and two row vectors (M, the rows' log-sum-exp in base 2; D, their
    # rowsum(dO * O)) per iteration, four dots. MASK applies the causal mask (queries before the key masked off).
    head = tl.program_id(1) * N_CTX * HEAD_DIM
    rows = tl.program_id(1) * N_CTX
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, HEAD_DIM)
    k = tl.load(K + head + offs_n[:, None] * HEAD_DIM + offs_k[None, :])
    v = tl.load(V + head + offs_n[:, None] * HEAD_DIM + offs_k[None, :])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    offs_m = tl.arange(0, BLOCK_M)
    qT_ptrs = Q + head + offs_m[None, :] * HEAD_DIM + offs_k[:, None]
    do_ptrs = DO + head + offs_m[:, None] * HEAD_DIM + offs_k[None, :]
    curr_m = 0
    for _ in range(N_CTX // BLOCK_M):
        qT = tl.load(qT_ptrs)
        offs_m = curr_m + tl.arange(0, BLOCK_M)
        m = tl.load(M + rows + offs_m)
        pT = tl.math.exp2(tl.dot(k, qT) - m[None, :])
        if MASK:
            pT = tl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        do = tl.load(do_ptrs)
        dv += tl.dot(pT.to(tl.float16), do)
        delta = tl.load(D + rows + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = (pT * (dpT - delta[None, :])).to(tl.float16)
        dk += tl.dot(dsT, tl.trans(qT))
        curr_m += BLOCK_M
        qT_ptrs += BLOCK_M * HEAD_DIM
        do_ptrs += BLOCK_M * HEAD_DIM
    out = head + offs_n[:, None] * HEAD_DIM + offs_k[None, :]
    tl.store(DV + out, dv.to(tl.float16))
    tl.store(DK + out, (dk * sm_scale).to(tl.float16))


@triton.jit
def attn_bwd_dq(Q, K, V, DO, M, D, DQ, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
    # dQ of one block of queries of one head, attention backward's second inner loop: over the key blocks, two
    # tiles (kT, vT) per iteration, three dots; the rows' statistics are loaded once, before it.
    head = tl.program_id(1) * N_CTX * HEAD_DIM
    rows = tl.program_id(1) * N_CTX
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + head + offs_m[:, None] * HEAD_DIM + offs_k[None, :])
    do = tl.load(DO + head + offs_m[:, None] * HEAD_DIM + offs_k[None, :])
    m = tl.load(M + rows + offs_m)[:, None]
    delta = tl.load(D + rows + offs_m)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    offs_n = tl.arange(0, BLOCK_N)
    kT_ptrs = K + head + offs_n[None, :] * HEAD_DIM + offs_k[:, None]
    vT_ptrs = V + head + offs_n[None, :] * HEAD_DIM + offs_k[:, None]
    for _ in range(N_CTX // BLOCK_N):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        p = tl.math.exp2(tl.dot(q, kT) - m)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = (p * (dp - delta[:, None])).to(tl.float16)
        dq += tl.dot(ds, tl.trans(kT))
        kT_ptrs += BLOCK_N * HEAD_DIM
        vT_ptrs += BLOCK_N * HEAD_DIM
    tl.store(DQ + head + offs_m[:, None] * HEAD_DIM + offs_k[None, :], dq.to(tl.float16))
