#!/usr/bin/env bash
# Issue 9's device run: tl.dot on tensor cores (wgmma on sm_90a).
#   check : matmul fp16/bf16/fp8->fp16/fp8->fp32/tf32 and attention forward fp16 (D 64 and 128, causal and not)
#           on the GPU vs the interpreter (fresh random inputs, NaN-poisoned outputs, ragged sizes), under
#           compute-sanitizer memcheck and racecheck; HGMMA in the SASS
#   compile: source -> PTX and ptxas times of the 128x256x64 matmul and attention D=128
#   time  : matmul fp16 4096^3, 128x128x64 and 128x256x64, 8 warps, num_stages 1 (no pipelining) and 3/4
#           (software pipelining), tessel vs Triton 3.6 on the same example kernel (and cuBLAS for context)
# Needs target/release/tessel (cargo build --release). Usage: bash bench/tensor_cores.sh [check|compile|time|all]
set -uo pipefail
T=${T:-./target/release/tessel}
what=${1:-all}
MM=examples/matmul.py::matmul_kernel
AT=examples/flash_attention.py::_attn_fwd
MC="compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5"
RC="compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 5"
export TESSEL_CACHE_DIR=${TMPDIR:-/tmp}/tessel-cache-$$
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=$RANDOM
mm_args() { # M N K DTYPE OUT_DTYPE
  echo "--arg a_ptr=randn:$1x$3:$4 --arg b_ptr=randn:$3x$2:$4 --arg c_ptr=fill:nan:$1x$2:$5 --arg M=$1 --arg N=$2 --arg K=$3" \
       "--arg stride_am=$3 --arg stride_ak=1 --arg stride_bk=$2 --arg stride_bn=1 --arg stride_cm=$2 --arg stride_cn=1"
}
mm() { # BM BN BK WARPS M N K DTYPE OUT [sanitizer]; STAGES (default 1) = num_stages
  local grid=$(( ($5 + $1 - 1) / $1 * (($6 + $2 - 1) / $2) )) s=${STAGES:-1}
  step "matmul $8->$9 $5x$6x$7 tile $1x$2x$3 warps $4 stages $s ${10:-}" ${10:-} $T run $MM --const BLOCK_SIZE_M=$1 --const BLOCK_SIZE_N=$2 \
    --const BLOCK_SIZE_K=$3 --const GROUP_SIZE_M=8 --const 'ACTIVATION=""' --num-warps $4 --num-stages $s --grid $grid \
    --seed $S --check --show 0 $(mm_args $5 $6 $7 $8 $9)
}
attn() { # D BM BN CAUSAL WARPS N_CTX [sanitizer]; STAGES (default 3) = num_stages
  local z=1 h=2 n=$6 d=$1 s=${STAGES:-3}
  step "attention fwd fp16 Z=$z H=$h N_CTX=$n D=$d causal=$4 tile $2x$3 warps $5 stages $s ${7:-}" ${7:-} $T run $AT --const HEAD_DIM=$d \
    --const BLOCK_M=$2 --const BLOCK_N=$3 --const CAUSAL=$4 --num-warps $5 --num-stages $s --grid $(( (n + $2 - 1) / $2 )),$((z * h)) \
    --seed $S --check --show 0 --arg Q=randn:$h"x"$n"x"$d:fp16 --arg K=randn:$h"x"$n"x"$d:fp16 \
    --arg V=randn:$h"x"$n"x"$d:fp16 --arg sm_scale=0.0883883 --arg M=fill:nan:$h"x"$n --arg Out=fill:nan:$h"x"$n"x"$d:fp16 \
    --arg stride_qz=$((h * n * d)) --arg stride_qh=$((n * d)) --arg stride_qm=$d --arg stride_qk=1 \
    --arg stride_kz=$((h * n * d)) --arg stride_kh=$((n * d)) --arg stride_kn=$d --arg stride_kk=1 \
    --arg stride_vz=$((h * n * d)) --arg stride_vh=$((n * d)) --arg stride_vn=$d --arg stride_vk=1 \
    --arg stride_oz=$((h * n * d)) --arg stride_oh=$((n * d)) --arg stride_om=$d --arg stride_ok=1 --arg Z=$z --arg H=$h --arg N_CTX=$n
}

# The benchmark shapes as compile-only specializations: strides of 1 and sizes divisible by 16, as Triton's
# launcher specializes them for 4096^3 and for attention.
MM_SIG=($MM --signature '*fp16,*fp16,*fp16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16' --const stride_ak=1 --const stride_bn=1
  --const stride_cn=1 --const BLOCK_SIZE_M=128 --const BLOCK_SIZE_N=256 --const BLOCK_SIZE_K=64 --const GROUP_SIZE_M=8
  --const 'ACTIVATION=""' --num-warps 8)
AT_SIG=($AT --signature '*fp16,*fp16,*fp16,fp32,*fp32,*fp16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32,i32:16'
  --const stride_qk=1 --const stride_kk=1 --const stride_vk=1 --const stride_ok=1 --const HEAD_DIM=128 --const BLOCK_M=128
  --const BLOCK_N=64 --const CAUSAL=True --num-warps 8)

if [[ $what == check || $what == all ]]; then
echo "== correctness: GPU (wgmma) vs the interpreter, ragged sizes, NaN-poisoned outputs"
mm 128 128 64 8 333 257 190 fp16 fp16 "$MC"
mm 128 256 64 8 300 520 136 fp16 fp16 "$MC"
mm 64 64 32 4 200 100 72 fp16 fp16 "$RC"
mm 128 128 64 8 256 256 128 fp16 fp16 "$RC"
mm 128 128 64 8 333 257 190 bf16 bf16 "$MC"
mm 128 128 64 8 333 257 190 fp8e4nv fp16 "$MC"
mm 128 128 64 8 333 257 190 fp8e4nv fp32 "$MC"
mm 64 64 32 4 200 136 100 fp32 fp32 "$MC"
step "matmul int8->int32 333x257x190 tile 128x128x64 warps 8 $MC" $MC $T run examples/int8_matmul.py::int8_matmul_kernel \
  --const BLOCK_M=128 --const BLOCK_N=128 --const BLOCK_K=64 --num-warps 8 --grid 3,3 --seed $S --check --show 0 \
  --arg a_ptr=randn:333x190:i8 --arg b_ptr=randn:190x257:i8 --arg c_ptr=fill:0x7fffffff:333x257:i32 --arg M=333 --arg N=257 \
  --arg K=190 --arg stride_am=190 --arg stride_ak=1 --arg stride_bk=257 --arg stride_bn=1 --arg stride_cm=257 --arg stride_cn=1
attn 64 128 64 False 8 300 "$MC"
attn 64 128 64 True 8 300 "$MC"
attn 128 128 64 False 8 300 "$MC"
attn 128 128 64 True 8 300 "$MC"
attn 128 128 64 True 8 256 "$RC"
STAGES=1 attn 128 128 64 True 8 300 "$MC"
echo "== software pipelining (cp.async rings, asynchronous wgmma): K a multiple of 16 so the loads are 16-byte copies"
STAGES=3 mm 128 128 64 8 333 320 208 fp16 fp16 "$MC"
STAGES=4 mm 128 128 64 8 333 320 208 fp16 fp16 "$MC"
STAGES=2 mm 64 64 32 4 200 96 80 fp16 fp16 "$MC"
STAGES=3 mm 128 256 64 8 300 528 144 bf16 bf16 "$MC"
STAGES=3 mm 128 128 64 8 256 256 256 fp16 fp16 "$RC"
STAGES=4 mm 64 64 32 4 128 128 160 fp16 fp16 "$RC"
STAGES=3 mm 128 128 64 8 333 320 16 fp16 fp16 "$MC"
STAGES=3 mm 128 128 64 8 333 320 208 fp8e4nv fp32 "$MC"
STAGES=5 mm 64 64 32 4 200 96 240 fp16 fp16 "$MC"
STAGES=3 mm 64 64 32 4 200 96 240 fp32 fp32 "$MC"
echo "== sm_80 code (mma.sync) on this GPU through the driver's JIT"
MMA80="--arch sm_80"
for cfg in "128 128 32 4 fp16" "64 64 32 4 bf16" "64 64 32 4 fp32"; do
  set -- $cfg
  step "matmul $5 sm_80 mma.sync 333x257x190 tile $1x$2x$3 warps $4 $MC" $MC $T run $MM $MMA80 --const BLOCK_SIZE_M=$1 \
    --const BLOCK_SIZE_N=$2 --const BLOCK_SIZE_K=$3 --const GROUP_SIZE_M=8 --const 'ACTIVATION=""' --num-warps $4 \
    --grid $(( (333 + $1 - 1) / $1 * ((257 + $2 - 1) / $2) )) --seed $S --check --show 0 $(mm_args 333 257 190 $5 fp16)
done
step "int8 sm_80 mma.sync 333x257x190 $MC" $MC $T run examples/int8_matmul.py::int8_matmul_kernel $MMA80 \
  --const BLOCK_M=64 --const BLOCK_N=64 --const BLOCK_K=64 --num-warps 4 --grid 6,5 --seed $S --check --show 0 \
  --arg a_ptr=randn:333x190:i8 --arg b_ptr=randn:190x257:i8 --arg c_ptr=fill:0x7fffffff:333x257:i32 --arg M=333 --arg N=257 \
  --arg K=190 --arg stride_am=190 --arg stride_ak=1 --arg stride_bk=257 --arg stride_bn=1 --arg stride_cm=257 --arg stride_cn=1
echo "== SASS: HGMMA in the matmul and attention kernels"
for k in MM_SIG AT_SIG; do
  declare -n args=$k
  n=$($T compile "${args[@]}" --emit sass | grep -c HGMMA); echo "-- $k: $n HGMMA instructions"
  [[ $n -gt 0 ]] || failures=$((failures + 1))
done
fi

if [[ $what == compile || $what == all ]]; then
echo "== compile times (source -> PTX, then ptxas -arch sm_90a)"
for k in MM_SIG AT_SIG; do
  declare -n args=$k
  $T compile "${args[@]}" --emit ptx --timings >/tmp/$k.ptx 2>/tmp/$k.t; echo "$k: $(grep total /tmp/$k.t)"
  /usr/bin/time -f "$k: ptxas -arch sm_90a %e s" ptxas -arch sm_90a -o /tmp/$k.cubin /tmp/$k.ptx
done
fi

if [[ $what == time || $what == all ]]; then
echo "== timing: matmul fp16 4096^3, num_stages=1 (tessel bench: CUDA events, L2 cleared, median of 100)"
for rep in 1 2; do
  for cfg in "128 128 64 1" "128 256 64 1" "128 128 64 3" "128 128 64 4" "128 256 64 3"; do
    set -- $cfg
    $T bench $MM --const BLOCK_SIZE_M=$1 --const BLOCK_SIZE_N=$2 --const BLOCK_SIZE_K=$3 --const GROUP_SIZE_M=8 \
      --const 'ACTIVATION=""' --num-warps 8 --num-stages $4 --grid $(( (4096 / $1) * (4096 / $2) )) --flops '2 * M * N * K' \
      $(mm_args 4096 4096 4096 fp16 fp16) 2>&1 | grep -E "^bench" | sed "s/^/$1x$2x$3 stages $4 /"
  done
done
echo "== timing: attention forward fp16 Z=4 H=32 N_CTX=4096 D=128, tile 128x64, 8 warps (FLOPs 4*Z*H*N^2*D, halved causal)"
for cs in "False 1" "False 3" "True 1" "True 3"; do
  set -- $cs; causal=$1 stages=$2
  f=4; [[ $causal == True ]] && f=2
  n=4096 z=4 h=32 d=128
  $T bench $AT --const HEAD_DIM=$d --const BLOCK_M=128 --const BLOCK_N=64 --const CAUSAL=$causal --num-warps 8 --num-stages $stages --grid $((n / 128)),$((z * h)) \
    --flops "$f * $z * $h * $n * $n * $d" --arg Q=randn:$((z*h))x$n"x"$d:fp16 --arg K=randn:$((z*h))x$n"x"$d:fp16 \
    --arg V=randn:$((z*h))x$n"x"$d:fp16 --arg sm_scale=0.0883883 --arg M=zeros:$((z*h))x$n --arg Out=zeros:$((z*h))x$n"x"$d:fp16 \
    --arg stride_qz=$((h*n*d)) --arg stride_qh=$((n*d)) --arg stride_qm=$d --arg stride_qk=1 --arg stride_kz=$((h*n*d)) \
    --arg stride_kh=$((n*d)) --arg stride_kn=$d --arg stride_kk=1 --arg stride_vz=$((h*n*d)) --arg stride_vh=$((n*d)) \
    --arg stride_vn=$d --arg stride_vk=1 --arg stride_oz=$((h*n*d)) --arg stride_oh=$((n*d)) --arg stride_om=$d --arg stride_ok=1 \
    --arg Z=$z --arg H=$h --arg N_CTX=$n 2>&1 | grep -E "^bench|TFLOP" | sed "s/^/causal=$causal stages $stages /"
done
echo "== anchors (the same example kernels in upstream Triton, num_stages=1 and its default 3; cuBLAS)"
PYTHONUNBUFFERED=1 python3 bench/anchors_mma.py
fi
echo "== $failures failing step(s)"
exit $((failures > 0))
