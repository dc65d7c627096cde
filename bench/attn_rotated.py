"""FlashAttention-3's overlap of the softmax with the warpgroup's own `P V`, written into the source: the loop is
rotated by hand so that block j's `S = Q Kᵀ` is issued, then block j-1's `P V` (left in flight across the back edge),
then block j's softmax runs while the tensor cores do that `P V`. The first block's S and softmax are peeled before
the loop and the last block's `P V` after it. An experiment: it measures what the pipeliner would gain by making
this rotation itself (BENCHMARKS.md, twenty-seventh session).

    python -m tessel bench/attn_rotated.py [--quick]

Checks against float64 with NaN-poisoned outputs, then times the rotated kernel and `examples/flash_attention.py`'s
`_attn_fwd_tma` (the loop as the tutorial writes it), each in one partition and warp-specialized. Non-causal only.
"""

import argparse
import os
import sys

import torch

import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import flash_attention  # noqa: E402
import ws_check  # noqa: E402


@triton.jit
def _attn_fwd_rotated(sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX,  #
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,  #
                       WARP_SPECIALIZE: tl.constexpr = False):
    dtype = tl.float16
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    # Iteration 0, peeled: its S and softmax; its P V is issued by the loop's first iteration.
    k = desc_k.load([offset_y, 0]).T
    qk = tl.dot(q, k)
    m_i = tl.max(qk, 1) * qk_scale
    p = tl.math.exp2(qk * qk_scale - m_i[:, None])
    l_i = tl.sum(p, 1)
    p_prev = p.to(dtype)
    alpha_prev = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in tl.range(BLOCK_N, N_CTX, BLOCK_N, warp_specialize=WARP_SPECIALIZE):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offset_y + start_n, 0]).T
        qk = tl.dot(q, k)
        # The previous block's P V, issued after this block's S: it runs while the softmax below does.
        v = desc_v.load([offset_y + start_n - BLOCK_N, 0])
        acc = acc * alpha_prev[:, None]
        acc = tl.dot(p_prev, v, acc)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_ij
        p_prev = p.to(dtype)
        alpha_prev = alpha
    v = desc_v.load([offset_y + N_CTX - BLOCK_N, 0])
    acc = acc * alpha_prev[:, None]
    acc = tl.dot(p_prev, v, acc)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(dtype))


def run(kernel, q, k, v, ws):
    return ws_check.attention(q, k, v, ws, kernel=None if kernel is flash_attention._attn_fwd_tma else kernel)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sizes, no timing")
    args = ap.parse_args()
    torch.manual_seed(1)
    kernels = (("as written", flash_attention._attn_fwd_tma), ("rotated", _attn_fwd_rotated))
    ok = True
    for Z, H, N, D in [(1, 2, 128, 64), (1, 2, 384, 128), (2, 3, 1024, 64)]:
        q, k, v = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) for _ in range(3))
        qd, kd, vd = (t.double() for t in (q, k, v))
        want = torch.softmax(qd @ kd.transpose(-1, -2) * D**-0.5, dim=-1) @ vd
        for name, kern in kernels:
            for ws in (False, True):
                got = run(kern, q, k, v, ws).double()
                bad = int((~torch.isclose(got, want, atol=1e-2, rtol=1e-2)).sum())
                print(f"{name} ws={ws} Z{Z} H{H} N{N} D{D}: max |error| {(got - want).abs().max().item():.3e}, "
                      f"{bad} elements off" + ("" if bad == 0 else "  FAILED"))
                ok &= bad == 0
    if not ok:
        sys.exit("some results differ from float64")
    if args.quick:
        return
    for D in (64, 128):
        Z, H, N = 4, 32, 8192
        q, k, v = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) for _ in range(3))
        flops = 4 * Z * H * N * N * D
        row = [f"attention fwd N{N} D{D} TFLOP/s"]
        for name, kern in kernels:
            for ws in (False, True):
                ms = triton.testing.do_bench(lambda: run(kern, q, k, v, ws), warmup=100, rep=500)
                row.append(f"{name}{' ws' if ws else ''} {flops / ms * 1e-9:.0f}")
        print(" | ".join(row))


if __name__ == "__main__":
    main()
