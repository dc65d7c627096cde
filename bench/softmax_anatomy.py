"""Where tutorial 02's time goes, per call: its softmax kernel (from the tutorial file, unmodified) under whichever
`triton` this process has (`python bench/softmax_anatomy.py DIR` for Triton, `python -m tessel
bench/softmax_anatomy.py DIR` for tessel).

For each N it prints what the tutorial's host code reads of the warmed-up kernel (n_regs, metadata.shared, the
persistent grid it computes from them), the host time of the tutorial's per-call sequence without the GPU
(warmup, _init_handles, n_regs, metadata.shared, compiled launch), and the GPU time of the kernel alone at that
grid (do_bench, L2 cleared), as GB/s of the 4096 x N fp32 input and output.
"""

import importlib.util
import os
import sys
import time

import torch
import triton

sys.argv = sys.argv[:2]
path = os.path.join(sys.argv[1], "02-fused-softmax.py")
src = open(path).read()
start = src.index("@triton.jit\ndef softmax_kernel")
end = src.index("\n# %%", start)
kernel_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), "softmax_anatomy_kernel.py")
with open(kernel_file, "w") as f:
    f.write("import triton\nimport triton.language as tl\n\n" + src[start:end] + "\n")
spec = importlib.util.spec_from_file_location("softmax_anatomy_kernel", kernel_file)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
kernel_fn = mod.softmax_kernel

props = triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())
NUM_SM, NUM_REGS, SIZE_SMEM = props["multiprocessor_count"], props["max_num_regs"], props["max_shared_mem"]
print(f"triton from {triton.__file__}")
for N in (256, 512, 1024, 2176, 4096):
    x = torch.randn(4096, N, device="cuda")
    y = torch.empty_like(x)
    B = triton.next_power_of_2(N)
    stages = 4 if SIZE_SMEM > 200000 else 2

    def sequence():
        k = kernel_fn.warmup(y, x, x.stride(0), y.stride(0), 4096, N, BLOCK_SIZE=B, num_stages=stages, num_warps=8,
                             grid=(1,))
        k._init_handles()
        occ = min(NUM_REGS // (k.n_regs * 32 * 8), SIZE_SMEM // k.metadata.shared)
        programs = min(NUM_SM * occ, 4096)
        k[(programs, 1, 1)](y, x, x.stride(0), y.stride(0), 4096, N, B, stages)
        return k, programs

    k, programs = sequence()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.softmax(x, dim=1))
    t0 = time.perf_counter()
    for _ in range(200):
        sequence()
    host_us = (time.perf_counter() - t0) / 200 * 1e6
    torch.cuda.synchronize()
    ms = triton.testing.do_bench(lambda: k[(programs, 1, 1)](y, x, x.stride(0), y.stride(0), 4096, N, B, stages))
    gbs = 2 * x.numel() * 4 / ms * 1e-6
    ms_seq = triton.testing.do_bench(sequence)
    print(f"N={N:5d} n_regs={k.n_regs:3d} shared={k.metadata.shared:6d} grid={programs:5d} "
          f"host {host_us:6.1f} us/call  kernel {ms * 1e3:7.1f} us ({gbs:6.0f} GB/s)  "
          f"whole call {ms_seq * 1e3:7.1f} us ({2 * x.numel() * 4 / ms_seq * 1e-6:6.0f} GB/s)")
