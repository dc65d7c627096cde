#!/usr/bin/env bash
# ncu profiles of tessel's and Triton's 128x128x64 fp16 4096^3 matmul (the same examples/matmul.py kernel,
# num_warps 8, num_stages 1), one launch each.
#   bash bench/ncu_matmul.sh sections   speed of light, occupancy, launch and warp-state statistics
#                                       -> $OUT/ncu_tessel.txt, $OUT/ncu_triton.txt
#   bash bench/ncu_matmul.sh source     per-SASS-instruction stall sampling (ncu's source page, CSV)
#                                       -> $OUT/src_tessel.csv, $OUT/src_triton.csv
what=${1:-sections}
MM=examples/matmul.py::matmul_kernel
A="--arg a_ptr=randn:4096x4096:fp16 --arg b_ptr=randn:4096x4096:fp16 --arg c_ptr=zeros:4096x4096:fp16 --arg M=4096 --arg N=4096
  --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 --arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1"
if [[ $what == source ]]; then
  N="ncu --section SourceCounters --section WarpStateStats -k matmul_kernel -c 1 --page source --print-source sass --csv"
  ext=csv prefix=src
else
  N="ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats -k matmul_kernel -c 1"
  ext=txt prefix=ncu
fi
$N ./target/release/tessel run $MM --const BLOCK_SIZE_M=128 --const BLOCK_SIZE_N=128 --const BLOCK_SIZE_K=64 --const GROUP_SIZE_M=8 \
  --const 'ACTIVATION=""' --num-warps 8 --grid 1024 --show 0 $A > $OUT/${prefix}_tessel.$ext 2>&1
cat > /tmp/tr1.py <<'PY'
import sys, torch
sys.path.insert(0, "examples")
import matmul
m = n = k = 4096
a = torch.randn((m, k), device="cuda", dtype=torch.float16); b = torch.randn((k, n), device="cuda", dtype=torch.float16)
c = torch.empty((m, n), device="cuda", dtype=torch.float16)
matmul.matmul_kernel[(1024,)](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                              BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION="",
                              num_warps=8, num_stages=1)
torch.cuda.synchronize()
PY
$N python3 /tmp/tr1.py > $OUT/${prefix}_triton.$ext 2>&1
