#!/usr/bin/env bash
# TMA in auto mode (issue 10): host TensorDescriptor loads and stores as cp.async.bulk.tensor with mbarriers.
#   check : examples/tma_matmul.py (pipelined TMA rings, 1-5 stages, ragged M/N/K, K < BLOCK_K, K = 0) and
#           examples/descriptor_copy.py (TMA loads/stores waited at once, 1-d and 2-d, zero and NaN padding) on the
#           GPU vs the interpreter (fresh random inputs, NaN-poisoned outputs) under compute-sanitizer memcheck and
#           racecheck
#   time  : tma_matmul fp16/bf16 4096^3 and 8192^3 at three tile configs, tessel bench vs upstream Triton 3.6 on the
#           same kernel source and cuBLAS (bench/anchors_tma.py), in one run
#   devdesc: descriptors made in the kernel (tensor maps in each program's global scratch): tile_copy_device_desc
#           (zero and NaN padding) and matmul_kernel_device_desc (1-5 stages, ragged, K < BLOCK_K, K = 0) on the GPU
#           vs the interpreter under memcheck and racecheck; a misaligned row stride must fail on both; then
#           tessel bench of matmul_kernel_device_desc next to matmul_kernel (host descriptors) at SIZES
#   persistent: matmul_kernel_persistent (one program per SM, NUM_SMS=132) with FLATTEN on and off on the GPU vs
#           the interpreter (2-4 stages, ragged, K < BLOCK_K) under memcheck and racecheck, then tessel bench
#           of both next to matmul_kernel at SIZES
#   fp8   : matmul_kernel_bt (B as N x K) fp8 e4m3 -> fp16 at SIZES (default 8192) over four tile configs, then
#           the same kernel in Triton and cuBLAS's torch._scaled_mm (bench/anchors_tma.py --fp8)
# Needs target/release/tessel. Usage: bash bench/tma.sh [check|time|all|devdesc|persistent|fp8] [SIZES...]
set -uo pipefail
T=${T:-./target/release/tessel}
what=${1:-all}
shift || true
SIZES=${*:-4096 8192}
K=examples/tma_matmul.py::matmul_kernel
MC="compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5"
RC="compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 5"
export TESSEL_CACHE_DIR=${TMPDIR:-/tmp}/tessel-cache-$$
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=$RANDOM
host_bench() { # BM BN BK STAGES N DTYPE LABEL: tessel bench of matmul_kernel (host descriptors), N^3, 8 warps
  timeout 120 $T bench $K --const GROUP_M=8 --num-warps 8 --num-stages $4 --grid $(( ($5 / $1) * ($5 / $2) )) \
    --flops "2 * M * N * K" --arg a=randn:$5x$5:$6 --arg b=randn:$5x$5:$6 --arg c=zeros:$5x$5:$6 \
    --arg a_desc=desc:a:block=$1x$3 --arg b_desc=desc:b:block=$3x$2 --arg c_desc=desc:c:block=$1x$2 --arg M=$5 \
    --arg N=$5 --arg K=$5 2>&1 | grep -E "^bench|^error" | sed "s/^/$7 /"
}
tma() { # BM BN BK WARPS STAGES M N K DTYPE [sanitizer]
  local grid=$(( ($6 + $1 - 1) / $1 * (($7 + $2 - 1) / $2) ))
  step "tma_matmul $9 $6x$7x$8 tile $1x$2x$3 warps $4 stages $5 ${10:-}" ${10:-} $T run $K --const GROUP_M=8 --num-warps $4 \
    --num-stages $5 --grid $grid --seed $S --check --show 0 --arg a=randn:$6x$8:$9 --arg b=randn:$8x$7:$9 \
    --arg c=fill:nan:$6x$7:$9 --arg a_desc=desc:a:block=$1x$3 --arg b_desc=desc:b:block=$3x$2 --arg c_desc=desc:c:block=$1x$2 \
    --arg M=$6 --arg N=$7 --arg K=$8
}
if [[ $what == check || $what == all ]]; then
echo "== correctness: GPU (TMA + wgmma) vs the interpreter"
tma 128 128 64 8 3 333 264 200 fp16 "$MC"
tma 128 128 64 8 4 333 264 200 fp16 "$RC"
tma 64 64 32 4 2 200 96 72 fp16 "$MC"
tma 128 256 64 8 3 300 520 136 bf16 "$MC"
tma 64 128 32 4 5 130 200 264 fp16 "$MC"
tma 128 128 64 8 1 333 264 200 fp16 "$MC"
tma 128 128 64 8 3 333 264 40 fp16 "$MC"
tma 128 128 64 8 3 256 256 256 fp16 "$RC"
step "descriptor copy fp16 200x328 (TMA loads and stores, 1-d and 2-d) $MC" $MC $T run examples/descriptor_copy.py::transpose_scale_kernel \
  --grid 13 --seed $S --check --show 0 --arg x=randn:200x328:fp16 --arg y=fill:nan:328x200:fp16 --arg row_sum=fill:nan:200 \
  --arg x_desc=desc:x:block=16x32 --arg y_desc=desc:y:block=32x16 --arg sum_desc=desc:row_sum:block=16 --arg scale=0.5
step "descriptor copy, NaN padding $RC" $RC $T run examples/descriptor_copy.py::transpose_scale_kernel \
  --grid 13 --seed $S --check --show 0 --arg x=randn:200x328:fp16 --arg y=fill:nan:328x200:fp16 --arg row_sum=fill:nan:200 \
  --arg x_desc=desc:x:block=16x32:padding=nan --arg y_desc=desc:y:block=32x16 --arg sum_desc=desc:row_sum:block=16 --arg scale=0.5
n=$($T compile $K --signature 'tensordesc<fp16[128, 64]>,tensordesc<fp16[64, 128]>,tensordesc<fp16[128, 128]>,i32,i32,i32' \
  --const GROUP_M=8 --num-warps 8 --num-stages 4 --emit sass | grep -cE "UTMALDG|UTMASTG")
echo "-- SASS: $n UTMALDG/UTMASTG instructions"; [[ $n -gt 0 ]] || failures=$((failures + 1))
fi
if [[ $what == time || $what == all ]]; then
echo "== timing: tma_matmul, tessel bench (CUDA events, L2 cleared, median of 100)"
for dt in fp16 bf16; do
  for n in $SIZES; do
    for cfg in "128 128 64 3" "128 128 64 4" "128 256 64 3"; do
      set -- $cfg
      host_bench $1 $2 $3 $4 $n $dt "$dt $n^3 $1x$2x$3 stages $4"
    done
  done
done
echo "== anchors: the same kernel source in upstream Triton; cuBLAS"
PYTHONUNBUFFERED=1 python3 bench/anchors_tma.py $SIZES
fi
if [[ $what == devdesc ]]; then
DK=examples/tma_matmul.py::matmul_kernel_device_desc
pad8() { echo $(( ($1 + 7) / 8 * 8 )); }
dd() { # BM BN BK WARPS STAGES M N K [sanitizer]
  local grid=$(( ($6 + $1 - 1) / $1 * (($7 + $2 - 1) / $2) )) lda=$(pad8 $8) ldb=$(pad8 $7) kr=$(( $8 > 0 ? $8 : 1 ))
  step "device-desc matmul fp16 $6x$7x$8 tile $1x$2x$3 warps $4 stages $5 ${9:-}" ${9:-} $T run $DK --const BLOCK_M=$1 \
    --const BLOCK_N=$2 --const BLOCK_K=$3 --const GROUP_M=8 --num-warps $4 --num-stages $5 --grid $grid --seed $S --check \
    --show 0 --arg a_ptr=randn:$6x$lda:fp16 --arg b_ptr=randn:$kr"x"$ldb:fp16 --arg c_ptr=fill:nan:$6x$ldb:fp16 \
    --arg M=$6 --arg N=$7 --arg K=$8 --arg stride_am=$lda --arg stride_bk=$ldb --arg stride_cm=$ldb
}
echo "== correctness: descriptors made in the kernel, GPU (TMA through tensor maps in global scratch) vs the interpreter"
for pad in zero nan; do
  step "tile copy through device descriptors, padding $pad $MC" $MC $T run examples/descriptor_copy.py::tile_copy_device_desc \
    --grid 13,11 --seed $S --check --show 0 --arg x_ptr=randn:200x328:fp16 --arg y_ptr=fill:nan:208x352:fp16 --arg M=200 \
    --arg N=328 --arg stride_x=328 --arg stride_y=352 --const BLOCK_M=16 --const BLOCK_N=32 --const "PADDING=\"$pad\""
done
step "tile copy through device descriptors, padding nan $RC" $RC $T run examples/descriptor_copy.py::tile_copy_device_desc \
  --grid 13,11 --seed $S --check --show 0 --arg x_ptr=randn:200x328:fp16 --arg y_ptr=fill:nan:208x352:fp16 --arg M=200 \
  --arg N=328 --arg stride_x=328 --arg stride_y=352 --const BLOCK_M=16 --const BLOCK_N=32 --const 'PADDING="nan"'
dd 128 128 64 8 3 333 264 200 "$MC"
dd 128 128 64 8 4 333 264 200 "$RC"
dd 64 64 32 4 2 200 96 72 "$MC"
dd 64 128 32 4 5 130 200 264 "$MC"
dd 128 256 64 8 3 300 520 136 "$MC"
dd 128 128 64 8 1 333 264 200 "$MC"
dd 128 128 64 8 3 333 264 40 "$MC"
dd 128 128 64 8 3 256 256 0 "$MC"
echo "-- a row stride of 100 halves (200 bytes, no TMA stride): the GPU run and the interpreter must both refuse"
for mode in "" "--interpret"; do
  out=$($T run $DK $mode --const BLOCK_M=128 --const BLOCK_N=128 --const BLOCK_K=64 --const GROUP_M=8 --num-warps 8 \
    --grid 4 --arg a_ptr=randn:256x100:fp16 --arg b_ptr=randn:100x256:fp16 --arg c_ptr=zeros:256x256:fp16 --arg M=256 \
    --arg N=256 --arg K=100 --arg stride_am=100 --arg stride_bk=256 --arg stride_cm=256 --show 0 2>&1)
  rc=$?
  echo "${mode:-gpu}: rc=$rc: $(echo "$out" | grep -iE "error|illegal|stride" | head -2 | tr '\n' ' ')"
  [[ $rc -ne 0 ]] || failures=$((failures + 1))
done
echo "== timing: device descriptors vs host descriptors, tessel bench (CUDA events, L2 cleared, median of 100)"
for n in $SIZES; do
  for cfg in "128 128 64 4" "128 256 64 3"; do
    set -- $cfg
    grid=$(( (n / $1) * (n / $2) ))
    timeout 120 $T bench $DK --const BLOCK_M=$1 --const BLOCK_N=$2 --const BLOCK_K=$3 --const GROUP_M=8 --num-warps 8 \
      --num-stages $4 --grid $grid --flops "2 * M * N * K" --arg a_ptr=randn:$n"x"$n:fp16 --arg b_ptr=randn:$n"x"$n:fp16 \
      --arg c_ptr=zeros:$n"x"$n:fp16 --arg M=$n --arg N=$n --arg K=$n --arg stride_am=$n --arg stride_bk=$n \
      --arg stride_cm=$n 2>&1 | grep -E "^bench|^error" | sed "s/^/device-desc fp16 $n^3 $1x$2x$3 stages $4 /"
    host_bench $1 $2 $3 $4 $n fp16 "host-desc   fp16 $n^3 $1x$2x$3 stages $4"
  done
done
fi
if [[ $what == persistent ]]; then
PK=examples/tma_matmul.py::matmul_kernel_persistent
pm() { # BM BN BK WARPS STAGES M N K FLATTEN [sanitizer]  (rows of 16-byte multiples: N and K multiples of 8)
  step "persistent matmul fp16 $6x$7x$8 tile $1x$2x$3 warps $4 stages $5 flatten $9 ${10:-}" ${10:-} $T run $PK \
    --const GROUP_M=8 --const NUM_SMS=132 --const FLATTEN=$9 --num-warps $4 --num-stages $5 --grid 132 --seed $S --check \
    --show 0 --arg a=randn:$6x$8:fp16 --arg b=randn:$8x$7:fp16 --arg c=fill:nan:$6x$7:fp16 \
    --arg a_desc=desc:a:block=$1x$3 --arg b_desc=desc:b:block=$3x$2 --arg c_desc=desc:c:block=$1x$2 \
    --arg M=$6 --arg N=$7 --arg K=$8
}
echo "== correctness: persistent matmul, fused (flatten=True) and nested, GPU vs the interpreter"
echo "   (K = 0 is the interpreter's: a host descriptor of an empty tensor has no tensor map)"
pm 128 128 64 8 3 1000 1096 200 True "$MC"
pm 128 128 64 8 4 1000 1096 200 True "$RC"
pm 128 128 64 8 3 1000 1096 200 False "$MC"
pm 64 64 32 4 2 700 904 72 True "$MC"
pm 128 256 64 8 3 1200 1304 136 True "$MC"
pm 128 128 64 8 3 700 600 40 True "$MC"
echo "== timing: persistent matmul, tessel bench (CUDA events, L2 cleared, median of 100)"
for n in $SIZES; do
  for cfg in "128 128 64 4" "128 256 64 3"; do
    set -- $cfg
    for fl in True False; do
      timeout 120 $T bench $PK --const GROUP_M=8 --const NUM_SMS=132 --const FLATTEN=$fl --num-warps 8 --num-stages $4 \
        --grid 132 --flops "2 * M * N * K" --arg a=randn:$n"x"$n:fp16 --arg b=randn:$n"x"$n:fp16 --arg c=zeros:$n"x"$n:fp16 \
        --arg a_desc=desc:a:block=$1x$3 --arg b_desc=desc:b:block=$3x$2 --arg c_desc=desc:c:block=$1x$2 --arg M=$n \
        --arg N=$n --arg K=$n 2>&1 | grep -E "^bench|^error" | sed "s/^/persistent flatten=$fl fp16 $n^3 $1x$2x$3 stages $4 /"
    done
    host_bench $1 $2 $3 $4 $n fp16 "one tile per program fp16 $n^3 $1x$2x$3 stages $4"
  done
done
fi
if [[ $what == fp8 ]]; then
BT=examples/tma_matmul.py::matmul_kernel_bt
echo "== timing: matmul_kernel_bt fp8e4m3 -> fp16, tessel bench (CUDA events, L2 cleared, median of 100)"
for n in $SIZES; do
  step "fp8 check 520x392x304 128x128x128 stages 3" $T run $BT --const GROUP_M=8 --num-warps 8 --num-stages 3 --grid 20 \
    --check --show 0 --arg a=randn:520x304:fp8e4nv --arg bt=randn:392x304:fp8e4nv --arg c=fill:nan:520x392:fp16 \
    --arg a_desc=desc:a:block=128x128 --arg bt_desc=desc:bt:block=128x128 --arg c_desc=desc:c:block=128x128 \
    --arg M=520 --arg N=392 --arg K=304
  for cfg in "128 128 128 3" "128 128 128 4" "128 256 128 3" "128 256 128 4"; do
    set -- $cfg
    timeout 120 $T bench $BT --const GROUP_M=8 --num-warps 8 --num-stages $4 --grid $(( (n / $1) * (n / $2) )) --flops "2 * M * N * K" \
      --arg a=randn:$n"x"$n:fp8e4nv --arg bt=randn:$n"x"$n:fp8e4nv --arg c=zeros:$n"x"$n:fp16 --arg a_desc=desc:a:block=$1x$3 \
      --arg bt_desc=desc:bt:block=$2x$3 --arg c_desc=desc:c:block=$1x$2 --arg M=$n --arg N=$n --arg K=$n 2>&1 \
      | grep -E "^bench|TFLOP|^error" | tr '\n' ' ' | sed "s/^/fp8e4m3 $n^3 $1x$2x$3 stages $4 /"; echo
  done
done
echo "== anchors: the same kernel source in upstream Triton; cuBLAS"
PYTHONUNBUFFERED=1 python3 bench/anchors_tma.py --fp8 $SIZES
fi
echo "== $failures failing step(s)"
exit $((failures > 0))
