import triton
import triton.language as tl


@triton.jit
def staged_twice(k_ptr, q_ptr, o_ptr, n, BLOCK: tl.constexpr, D: tl.constexpr):
    # Attention backward's shape: each loaded tile feeds two dots, once as loaded (qT, D x BLOCK) and once
    # transposed (tl.trans(qT)), so the pipeliner stages it once and the second dot reads a permuted view.
    offs_d = tl.arange(0, D)
    offs_b = tl.arange(0, BLOCK)
    k = tl.load(k_ptr + offs_b[:, None] * D + offs_d[None, :])
    acc = tl.zeros([BLOCK, D], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        qT = tl.load(q_ptr + (start + offs_b)[None, :] * D + offs_d[:, None])
        s = tl.dot(k, qT)
        p = s.to(tl.float16)
        acc += tl.dot(p, tl.trans(qT))
    tl.store(o_ptr + offs_b[:, None] * D + offs_d[None, :], acc)
