"""torch's cuDNN scaled-dot-product attention as a library column beside tutorial 06's rows.

`tutorial_paired.py --cudnn` calls `tflops(kwargs)` for every fp16 row of 06-fused-attention's tables (the row's
own arguments: BATCH, H, N_CTX, HEAD_DIM, causal, mode) in every round, between the two compilers' runs. It times
`torch.nn.functional.scaled_dot_product_attention` pinned to the cuDNN backend on fp16 inputs of the row's shape
with upstream Triton's `do_bench`, as the tutorial times its own providers: the forward call, or for "bwd" the
backward of one forward output (`retain_graph`). The FLOP count is the tutorial's (4 B H N^2 D, halved when causal,
times 2.5 for the backward's recompute), so the column reads in the tutorial's TFLOP/s.

The tutorial's sm_scale (1.3) is passed as `scale`. If the cuDNN backend refuses a row (no cuDNN, or a shape it
does not take), the row's column is left empty and the reason printed once.
"""

from __future__ import annotations

_refused: set[str] = set()


def tflops(kwargs) -> float | None:
    """The cuDNN SDPA's TFLOP/s at one row of 06's tables, or None where cuDNN does not run it."""
    import torch
    import triton
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b, h, n, d = kwargs["BATCH"], kwargs["H"], kwargs["N_CTX"], kwargs["HEAD_DIM"]
    causal, mode = kwargs["causal"], kwargs["mode"]
    q, k, v = (torch.randn((b, h, n, d), dtype=torch.float16, device="cuda", requires_grad=True) for _ in range(3))
    try:
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            fn = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=1.3)  # noqa: E731
            if mode == "bwd":
                o = fn()
                do = torch.randn_like(o)
                fn = lambda: o.backward(do, retain_graph=True)  # noqa: E731
            ms = triton.testing.do_bench(fn)
    except RuntimeError as e:
        why = str(e).splitlines()[0]
        if why not in _refused:
            _refused.add(why)
            print(f"cuDNN SDPA refused a row ({b}x{h}x{n}x{d}, causal={causal}, {mode}): {why}", flush=True)
        return None
    flops = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0) * (2.5 if mode == "bwd" else 1.0)
    return flops * 1e-12 / (ms * 1e-3)
