"""Attention forward anchors for bench/attention.sh, on the device (Triton 3.6, PyTorch with cuDNN):

1. both kernels of examples/flash_attention.py (pointers and masks; tensor descriptors) launched by upstream
   Triton over the same configs tessel is timed at (CONFIGS, as in bench/attention.sh: BM,BN,WARPS,STAGES),
   each checked against torch SDPA first;
2. the Triton tutorial's own kernel (06-fused-attention.py, from TUTORIALS, default .tutorials/), autotuned over
   its own config list, with and without warp_specialize where the tutorial enables it on Hopper (non-causal);
3. torch.nn.functional.scaled_dot_product_attention (cuDNN/flash backend).

Z=4, H=32, D=128 fp16; FLOPs 4*Z*H*N^2*D, halved when causal. triton.testing.do_bench (L2 cleared, median).
"""
import importlib.util
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def report(what, n, causal, ms):
    z, h, d = 4, 32, 128
    flops = 4 * z * h * n * n * d / (2 if causal else 1)
    print(f"anchor {what} N={n} causal={causal}: median {ms:.4f} ms, {flops / (ms * 1e-3) / 1e12:.1f} TFLOP/s",
          flush=True)


def tutorial_module(path):
    """The tutorial as published in the mirror asks the target `is_cuda_backend()`, which Triton 3.6's
    GPUTarget does not have yet; everything else runs as written."""
    from triton.backends.compiler import GPUTarget
    if not hasattr(GPUTarget, "is_cuda_backend"):
        GPUTarget.is_cuda_backend = lambda self: self.backend == "cuda"
    return load(path, "tutorial06")


def main():
    import flash_attention
    from triton.tools.tensor_descriptor import TensorDescriptor
    ns = [int(x) for x in sys.argv[1:]] or [4096, 16384]
    configs = os.environ.get("CONFIGS", "128,64,8,3 128,64,8,2 128,64,8,4 128,128,8,3 128,128,8,2").split()
    tut = os.path.join(os.environ.get("TUTORIALS", ".tutorials"), "06-fused-attention.py")
    tutorial = tutorial_module(tut) if os.path.exists(tut) else None
    z, h, d, sm_scale = 4, 32, 128, 0.0883883
    for n in ns:
        q, k, v = (torch.randn((z, h, n, d), device="cuda", dtype=torch.float16) for _ in range(3))
        for causal in [False, True]:
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)
            for cfg in configs:
                bm, bn, w, s = (int(x) for x in cfg.split(","))
                m = torch.empty((z, h, n), device="cuda", dtype=torch.float32)
                o = torch.full_like(q, float("nan"))

                def run():
                    flash_attention._attn_fwd[(triton.cdiv(n, bm), z * h)](
                        q, k, v, sm_scale, m, o, *q.stride(), *k.stride(), *v.stride(), *o.stride(), z, h, n,
                        HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, CAUSAL=causal, num_warps=w, num_stages=s)

                try:
                    run()
                    torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2)
                    report(f"triton example {bm}x{bn} w{w} s{s}", n, causal,
                           triton.testing.do_bench(run, warmup=25, rep=200, return_mode="median"))
                except Exception as e:  # out of resources for a config: say so, go on
                    print(f"anchor triton example {bm}x{bn} w{w} s{s} N={n} causal={causal}: failed: "
                          f"{str(e).splitlines()[0]}", flush=True)
            for cfg in configs:
                bm, bn, w, s = (int(x) for x in cfg.split(","))
                m = torch.empty((z, h, n), device="cuda", dtype=torch.float32)
                o = torch.full_like(q, float("nan"))
                y = z * h * n
                desc = lambda t, rows: TensorDescriptor(t, shape=[y, d], strides=[d, 1], block_shape=[rows, d])
                dq, dk, dv, do = desc(q, bm), desc(k, bn), desc(v, bn), desc(o, bm)

                def run_tma():
                    flash_attention._attn_fwd_tma[(n // bm, z * h)](
                        sm_scale, m, z, h, dq, dk, dv, do, n, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn,
                        STAGE=3 if causal else 1, num_warps=w, num_stages=s)

                try:
                    run_tma()
                    torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2)
                    report(f"triton example tma {bm}x{bn} w{w} s{s}", n, causal,
                           triton.testing.do_bench(run_tma, warmup=25, rep=200, return_mode="median"))
                except Exception as e:
                    print(f"anchor triton example tma {bm}x{bn} w{w} s{s} N={n} causal={causal}: failed: "
                          f"{str(e).splitlines()[0]}", flush=True)
            if tutorial is not None:
                for ws in ([False, True] if not causal else [False]):
                    def run_tut():
                        return tutorial.attention(q, k, v, causal, sm_scale, ws)

                    try:
                        out = run_tut()
                        torch.testing.assert_close(out, ref, atol=2e-2, rtol=2e-2)
                        report(f"triton tutorial 06 autotuned warp_specialize={ws}", n, causal,
                               triton.testing.do_bench(run_tut, warmup=25, rep=200, return_mode="median"))
                        best = tutorial._attn_fwd.best_config
                        print(f"anchor tutorial best config: {best}", flush=True)
                    except Exception as e:
                        print(f"anchor triton tutorial 06 warp_specialize={ws} N={n} causal={causal}: failed: "
                              f"{str(e).splitlines()[0]}", flush=True)
            def run_sdpa():
                return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=sm_scale)
            report("torch SDPA", n, causal, triton.testing.do_bench(run_sdpa, warmup=25, rep=200, return_mode="median"))


if __name__ == "__main__":
    main()
