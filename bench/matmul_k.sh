#!/usr/bin/env bash
# Where the time goes: tessel and Triton (num_stages=1) on fp16 4096x4096xK, 128x128x64 tiles, 8 warps, for a
# K 4x longer: a gap that stays the same per launch is in the prologue/epilogue, one that grows is in the loop.
T=${T:-./target/release/tessel}
for K in ${KS:-4096 16384}; do
  $T bench examples/matmul.py::matmul_kernel --const BLOCK_SIZE_M=128 --const BLOCK_SIZE_N=128 --const BLOCK_SIZE_K=64 \
    --const GROUP_SIZE_M=8 --const 'ACTIVATION=""' --num-warps 8 --num-stages 1 --grid 1024 --flops "2 * M * N * K" \
    --arg a_ptr=randn:4096x$K:fp16 --arg b_ptr=randn:${K}x4096:fp16 --arg c_ptr=zeros:4096x4096:fp16 --arg M=4096 --arg N=4096 \
    --arg K=$K --arg stride_am=$K --arg stride_ak=1 --arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1 2>&1 \
    | grep -E "^bench" | sed "s/^/K=$K tessel /"
  python3 - $K <<'PY'
import sys, torch, triton
sys.path.insert(0, "examples")
import matmul
m = n = 4096; k = int(sys.argv[1])
a = torch.randn((m, k), device="cuda", dtype=torch.float16); b = torch.randn((k, n), device="cuda", dtype=torch.float16)
c = torch.empty((m, n), device="cuda", dtype=torch.float16)
run = lambda: matmul.matmul_kernel[(1024,)](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="", num_warps=8, num_stages=1)
run()
ms = triton.testing.do_bench(run, warmup=100, rep=1000, return_mode="median")
print(f"K={k} triton median {ms:.4f} ms")
PY
done
