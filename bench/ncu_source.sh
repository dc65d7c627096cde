#!/usr/bin/env bash
# Per-instruction stall sampling of tessel's and Triton's 128x128x64 matmul K loops (ncu's source page, SASS):
# where each kernel's warps wait. Output: $OUT/src_tessel.csv and $OUT/src_triton.csv.
MM=examples/matmul.py::matmul_kernel
A="--arg a_ptr=randn:4096x4096:fp16 --arg b_ptr=randn:4096x4096:fp16 --arg c_ptr=zeros:4096x4096:fp16 --arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 --arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1"
N="ncu --section SourceCounters --section WarpStateStats -k matmul_kernel -c 1 --page source --print-source sass --csv"
$N ./target/release/tessel run $MM --const BLOCK_SIZE_M=128 --const BLOCK_SIZE_N=128 --const BLOCK_SIZE_K=64 --const GROUP_SIZE_M=8 \
  --const 'ACTIVATION=""' --num-warps 8 --grid 1024 --show 0 $A > $OUT/src_tessel.csv 2>&1
cat > /tmp/tr1.py <<'PY'
import sys, torch
sys.path.insert(0, "examples")
import matmul
m = n = k = 4096
a = torch.randn((m, k), device="cuda", dtype=torch.float16); b = torch.randn((k, n), device="cuda", dtype=torch.float16)
c = torch.empty((m, n), device="cuda", dtype=torch.float16)
matmul.matmul_kernel[(1024,)](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="", num_warps=8, num_stages=1)
torch.cuda.synchronize()
PY
$N python3 /tmp/tr1.py > $OUT/src_triton.csv 2>&1
ls -la $OUT
