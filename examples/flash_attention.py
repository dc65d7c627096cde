"""Fused attention (FlashAttention-2 forward): the sixth Triton tutorial's kernel, written for tessel with
plain pointers and masks, so that the sequence length need not be a multiple of the block sizes.

Each program owns BLOCK_M queries of one (batch, head) and streams the keys and values in BLOCK_N blocks,
keeping the running row maximum `m_i` and row sum `l_i` of an online softmax in base 2 (`exp2` of scores
pre-multiplied by log2(e)). With CAUSAL, the blocks left of the diagonal run unmasked (stage 1) and the
diagonal block runs with the causal mask (stage 2); without it, one loop covers all keys (stage 3).

`_attn_fwd_tma` is the tutorial's Hopper form of the same kernel: Q, K, V and O through tensor descriptors,
so the software pipeliner issues K and V as TMA copies into rings (K read transposed by the first dot through
a view of its buffer) and the second dot stays in flight into the next iteration.
"""
import torch

import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,  #
                    K_ptr, V_ptr, stride_kn, stride_kk, stride_vn, stride_vk,  #
                    start_m, qk_scale, N_CTX,  #
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,  #
                    STAGE: tl.constexpr, offs_m, offs_n):
    # Range of keys this stage handles.
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        keys = start_n + offs_n
        key_ok = keys < N_CTX
        # K^T block: [HEAD_DIM, BLOCK_N]
        k = tl.load(K_ptr + offs_d[:, None] * stride_kk + keys[None, :] * stride_kn, mask=key_ok[None, :], other=0.0)
        qk = tl.dot(q, k)
        if STAGE == 2:
            causal = offs_m[:, None] >= keys[None, :]
            qk = qk * qk_scale + tl.where(causal & key_ok[None, :], 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            qk = tl.where(key_ok[None, :], qk, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        # Rescale what was accumulated so far to the new maximum.
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_ptr + keys[:, None] * stride_vn + offs_d[None, :] * stride_vk, mask=key_ok[:, None], other=0.0)
        p = p.to(v.dtype)
        acc = tl.dot(p, v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,  #
              stride_qz, stride_qh, stride_qm, stride_qk,  #
              stride_kz, stride_kh, stride_kn, stride_kk,  #
              stride_vz, stride_vh, stride_vn, stride_vk,  #
              stride_oz, stride_oh, stride_om, stride_ok,  #
              Z, H, N_CTX,  #
              HEAD_DIM: tl.constexpr,  #
              BLOCK_M: tl.constexpr,  #
              BLOCK_N: tl.constexpr,  #
              CAUSAL: tl.constexpr,  #
              ):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    tl.static_assert(BLOCK_M % BLOCK_N == 0 or not CAUSAL, "the diagonal stage needs BLOCK_N to divide BLOCK_M")
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    q_offset = off_z.to(tl.int64) * stride_qz + off_h.to(tl.int64) * stride_qh
    k_offset = off_z.to(tl.int64) * stride_kz + off_h.to(tl.int64) * stride_kh
    v_offset = off_z.to(tl.int64) * stride_vz + off_h.to(tl.int64) * stride_vh
    o_offset = off_z.to(tl.int64) * stride_oz + off_h.to(tl.int64) * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    # Running maximum, running sum, and the output accumulator.
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    # Scores are computed in base 2: exp(x) = exp2(x * log2(e)).
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    q_mask = offs_m[:, None] < N_CTX
    q = tl.load(Q + q_offset + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk, mask=q_mask, other=0.0)
    STAGE: tl.constexpr = 3 if CAUSAL else 1
    # Stage 1: blocks left of the diagonal (causal), or every block (non-causal, inner stage 3).
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K + k_offset, V + v_offset,  #
                                        stride_kn, stride_kk, stride_vn, stride_vk,  #
                                        start_m, qk_scale, N_CTX,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        4 - STAGE, offs_m, offs_n)
    # Stage 2: the diagonal block, with the causal mask.
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K + k_offset, V + v_offset,  #
                                        stride_kn, stride_kk, stride_vn, stride_vk,  #
                                        start_m, qk_scale, N_CTX,  #
                                        BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                        2, offs_m, offs_n)
    # Epilogue: the log-sum-exp for the backward pass, and the normalized output.
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i, mask=offs_m < N_CTX)
    o_ptrs = Out + o_offset + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok
    tl.store(o_ptrs, acc.to(Out.dtype.element_ty), mask=q_mask)


@triton.jit
def _attn_fwd_inner_tma(acc, l_i, m_i, q, desc_k, desc_v,  #
                        offset_y, dtype: tl.constexpr, start_m, qk_scale,  #
                        BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,  #
                        STAGE: tl.constexpr, offs_m, offs_n, N_CTX, WARP_SPECIALIZE: tl.constexpr = False):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offsetk_y = offset_y + lo
    offsetv_y = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        # K is stored [N_CTX, HEAD_DIM]; the dot reads the tile transposed where TMA put it.
        k = desc_k.load([offsetk_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offsetv_y, 0])
        p = p.to(dtype)
        acc = tl.dot(p, v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offsetk_y += BLOCK_N
        offsetv_y += BLOCK_N
    return acc, l_i, m_i


@triton.jit
def _attn_fwd_tma(sm_scale, M,  #
                  Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX,  #
                  HEAD_DIM: tl.constexpr,  #
                  BLOCK_M: tl.constexpr,  #
                  BLOCK_N: tl.constexpr,  #
                  STAGE: tl.constexpr,  #
                  WARP_SPECIALIZE: tl.constexpr = False,  #
                  ):
    """The same computation through tensor descriptors, as the tutorial writes it for Hopper: Q, K, V and O are
    (Z * H * N_CTX, HEAD_DIM) matrices whose blocks are loaded and stored by TMA. N_CTX must be a multiple of
    BLOCK_M (a block never reaches into the next head's rows). STAGE is 3 for causal attention, else 1. With
    WARP_SPECIALIZE (non-causal), a producer warp issues K's and V's copies and the kernel's warps run the rest."""
    dtype = tl.float16
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    q = desc_q.load([qo_offset_y, 0])
    # Stage 1: blocks left of the diagonal (causal), or every block (non-causal, inner stage 3).
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner_tma(acc, l_i, m_i, q, desc_k, desc_v,  #
                                            offset_y, dtype, start_m, qk_scale,  #
                                            BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                            4 - STAGE, offs_m, offs_n, N_CTX, WARP_SPECIALIZE)
    # Stage 2: the diagonal block, with the causal mask.
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner_tma(acc, l_i, m_i, q, desc_k, desc_v,  #
                                            offset_y, dtype, start_m, qk_scale,  #
                                            BLOCK_M, HEAD_DIM, BLOCK_N,  #
                                            2, offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(dtype))


def attention(q, k, v, causal, sm_scale):
    Z, H, N_CTX, HEAD_DIM = q.shape
    o = torch.empty_like(q)
    M = torch.empty((Z, H, N_CTX), device=q.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N = 128, 64 if not causal else 128
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H, 1)
    _attn_fwd[grid](q, k, v, sm_scale, M, o,  #
                    q.stride(0), q.stride(1), q.stride(2), q.stride(3),  #
                    k.stride(0), k.stride(1), k.stride(2), k.stride(3),  #
                    v.stride(0), v.stride(1), v.stride(2), v.stride(3),  #
                    o.stride(0), o.stride(1), o.stride(2), o.stride(3),  #
                    Z, H, N_CTX, HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, CAUSAL=causal,
                    num_warps=8, num_stages=3)
    return o


def attention_tma(q, k, v, causal, sm_scale, BLOCK_M=128, BLOCK_N=64, num_stages=3):
    Z, H, N_CTX, HEAD_DIM = q.shape
    assert N_CTX % BLOCK_M == 0, "the descriptor kernel needs N_CTX to be a multiple of BLOCK_M"
    o = torch.empty_like(q)
    M = torch.empty((Z, H, N_CTX), device=q.device, dtype=torch.float32)
    y = Z * H * N_CTX
    desc = lambda t, rows: TensorDescriptor(t, shape=[y, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[rows, HEAD_DIM])
    grid = (N_CTX // BLOCK_M, Z * H, 1)
    _attn_fwd_tma[grid](sm_scale, M, Z, H, desc(q, BLOCK_M), desc(k, BLOCK_N), desc(v, BLOCK_N), desc(o, BLOCK_M),
                        N_CTX, HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGE=3 if causal else 1,
                        num_warps=8, num_stages=num_stages)
    return o


if __name__ == "__main__":
    torch.manual_seed(20)
    Z, H, N_CTX, HEAD_DIM = 2, 4, 1000, 64
    q = torch.randn((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16, device="cuda")
    k = torch.randn((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16, device="cuda")
    v = torch.randn((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16, device="cuda")
    for causal in (False, True):
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        tri = attention(q, k, v, causal, q.shape[-1]**-0.5)
        assert torch.allclose(ref, tri, atol=1e-2, rtol=0)
        qs, ks, vs = (t[:, :, :896].contiguous() for t in (q, k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=causal)
        assert torch.allclose(ref, attention_tma(qs, ks, vs, causal, HEAD_DIM**-0.5), atol=1e-2, rtol=0)
