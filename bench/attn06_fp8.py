"""Tutorial 06's forward fp8 cells at head dim 128 (Z=4, H=32, warp_specialize off), timed by the tutorial's own
`bench_flash_attention` (do_bench median, autotuned over the tutorial's configs), under whichever Triton runs it:

    python3 bench/attn06_fp8.py [--tutorials DIR] [--repeat R] [--causal no|yes|both] [--ws] [SIZES...]
    python3 -m tessel bench/attn06_fp8.py [same arguments]        # tessel standing in for Triton

Defaults: .tutorials/, 5 repeats, non-causal, sizes 4096 8192 16384. One line per cell: the median TFLOP/s of the
repeats, their spread, and the config the autotuner picked (where the runtime says). The ratio of the two runs'
lines is the cell of `bench/tutorial_sweeps.py 06 --compare` for the "Triton [FP8]" column of
fused-attention-batch4-head32-d128-fwd-causal=False-warp_specialize=False, without the other 190 cells. Run the
two sides one after the other on one GPU, or at once on two GPUs (CUDA_VISIBLE_DEVICES) of one host. The tutorial
is a public upstream file, not part of this repository.
"""
import argparse
import importlib.util
import os
import statistics
import sys


def load(path):
    spec = importlib.util.spec_from_file_location("tutorial06", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tutorial06"] = mod
    spec.loader.exec_module(mod)
    return mod


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sizes", nargs="*", type=int, default=[4096, 8192, 16384])
    p.add_argument("--tutorials", default=os.environ.get("TUTORIALS", ".tutorials"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--causal", choices=["no", "yes", "both"], default="no")
    p.add_argument("--ws", action="store_true", help="warp_specialize=True instead")
    a = p.parse_args()
    import torch
    import triton

    try:  # a later upstream copy asks the target `is_cuda_backend()`, which Triton 3.6's GPUTarget lacks
        from triton.backends.compiler import GPUTarget
        if not hasattr(GPUTarget, "is_cuda_backend"):
            GPUTarget.is_cuda_backend = lambda self: self.backend == "cuda"
    except ImportError:
        pass
    t = load(os.path.join(a.tutorials, "06-fused-attention.py"))
    bench = t.bench_flash_attention.fn
    print(f"triton {getattr(triton, '__version__', '?')} from {triton.__file__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}", flush=True)
    causals = {"no": [False], "yes": [True], "both": [False, True]}[a.causal]
    for causal in causals:
        for n in a.sizes:
            runs = [bench(4, 32, n, 128, causal, a.ws, "fwd", "triton-fp8") for _ in range(a.repeat)]
            best = getattr(t._attn_fwd, "best_config", None)
            print(f"fp8 fwd D128 causal={causal} ws={a.ws} N={n}: {statistics.median(runs):.1f} TFLOP/s "
                  f"(min {min(runs):.1f}, max {max(runs):.1f}) config {best}", flush=True)


if __name__ == "__main__":
    main()
