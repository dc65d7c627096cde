#!/usr/bin/env bash
# The Gluon Hopper GEMM of examples/gluon/matmul.py (persistent tiles, a warp-specialized TMA loader, an
# mbarrier ring, asynchronous wgmma; issue 11) on the device:
#   check : GPU vs the interpreter (fresh random inputs, NaN-poisoned C) on ragged sizes with fewer programs than
#           tiles, under compute-sanitizer memcheck, racecheck and synccheck
#   time  : tessel bench at SIZES (default 4096 8192) fp16 over CONFIGS ("BM,BN,BK,STAGES,WARPS ..."), one
#           program per SM; then bench/anchors_gluon_gemm.py: cuBLAS (torch.matmul) and upstream Triton 3.6
#           running the same kernel source, in the same run
# T=path/to/tessel picks the binary. CTAS=2 (or 4) runs examples/gluon/matmul_cluster.py instead: programs are
# clusters of CTAS CTAs, each CTA BM rows of a CTAS*BM-row tile, B multicast to all of them; one cluster per
# CTAS SMs (GRID=N overrides). Usage: [CTAS=N] [GRID=N] bash bench/gluon_gemm.sh [check|time|all] [SIZES...]
set -uo pipefail
set -f  # the signatures hold [ ]: no globbing of the word-split argument lists
cd "$(dirname "$0")/.."
source bench/lib.sh
T=${T:-target/release/tessel}
what=${1:-all}
shift || true
SIZES=${*:-4096 8192}
CONFIGS=${CONFIGS:-"128,256,64,3,8 128,128,64,4,8 128,128,64,4,4"}
CTAS=${CTAS:-1}
K=examples/gluon/matmul.py::matmul_kernel
[[ $CTAS -gt 1 ]] && K=examples/gluon/matmul_cluster.py::matmul_cluster_kernel
SMS=$(python3 -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)" 2>/dev/null)
[[ $SMS =~ ^[0-9]+$ ]] || SMS=132
# Programs: one per SM, or one cluster per CTAS SMs, unless GRID says (a cluster's CTAs share a GPC, so fewer
# clusters may fit at once: on the H200, 30 of 4 CTAs, ncu's "Max Active Clusters"; `matmul_cluster` asks CUDA).
SMS=${GRID:-$((SMS / CTAS))}
export TESSEL_CACHE_DIR=${TMPDIR:-/tmp}/tessel-cache-$$
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=$RANDOM
# gemm BM BN BK STAGES WARPS M N K GRID DTYPE MODE... : `tessel run --check` or `tessel bench` arguments.
gemm_args() {
  local bm=$1 bn=$2 bk=$3 s=$4 w=$5 m=$6 n=$7 k=$8 grid=$9 dt=${10} cinit=${11}
  local sig="tensordesc<$dt[$bm,$bk]>,tensordesc<$dt[$bk,$bn]>,tensordesc<$dt[$bm,$bn]>,i32,i32,i32" split="" whole=""
  local ctas="--num-ctas $CTAS"
  if [[ $CTAS -gt 1 ]]; then
    # A and C split along M over the cluster's CTAs, B held whole by each (16-bit blocks: 128-byte swizzle).
    bm=$((bm * CTAS))
    # (No spaces: the arguments are word-split.)
    for ((i = 1; i < CTAS; i *= 2)); do split+="${split:+,}[$i,0]"; whole+="${whole:+,}[0,0]"; done
    local nv="NVMMASharedLayout(swizzle_byte_width=128,element_bitwidth=16,rank=2,cga_layout="
    sig="tensordesc<$dt[$bm,$bk],$nv[$split])>,tensordesc<$dt[$bk,$bn],$nv[$whole])>"
    sig+=",tensordesc<$dt[$bm,$bn],$nv[$split])>,i32,i32,i32"
  fi
  echo $K --signature "$sig" $ctas \
    --const GROUP_M=8 --const STAGES=$s --num-warps $w --grid $grid --arg a=randn:$m"x"$k:$dt \
    --arg b=randn:$k"x"$n:$dt --arg c=$cinit:$m"x"$n:$dt --arg a_desc=desc:a:block=$bm"x"$bk \
    --arg b_desc=desc:b:block=$bk"x"$bn --arg c_desc=desc:c:block=$bm"x"$bn --arg M=$m --arg N=$n --arg K=$k
}
if [[ $what == check || $what == all ]]; then
  echo "== correctness: GPU vs the interpreter"
  for tool in memcheck racecheck synccheck; do
    SAN="compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5"
    step "gluon gemm fp16 520x392x304 128x256x64 s3 w8 grid 2 ($tool)" $SAN $T run $(gemm_args 128 256 64 3 8 520 392 304 2 fp16 fill:nan) --seed $S --check --show 0
    step "gluon gemm bf16 300x264x200 128x128x64 s4 w4 grid 3 ($tool)" $SAN $T run $(gemm_args 128 128 64 4 4 300 264 200 3 bf16 fill:nan) --seed $S --check --show 0
  done
  step "gluon gemm fp16 1000x1096x520 128x256x64 s3 w8 grid $SMS" $T run $(gemm_args 128 256 64 3 8 1000 1096 520 $SMS fp16 fill:nan) --seed $S --check --show 0
  step "gluon gemm fp16 256x256x40 128x128x64 s2 w8 grid 1 (K < BLOCK_K)" $T run $(gemm_args 128 128 64 2 8 256 256 40 1 fp16 fill:nan) --seed $S --check --show 0
fi
if [[ $what == time || $what == all ]]; then
  echo "== timing: tessel bench (CUDA events, L2 cleared, median of 100), $SMS programs"
  for n in $SIZES; do
    for cfg in $CONFIGS; do
      IFS=, read -r bm bn bk s w <<<"$cfg"
      timeout 180 $T bench $(gemm_args $bm $bn $bk $s $w $n $n $n $SMS fp16 zeros) --flops "2 * M * N * K" 2>&1 \
        | grep -E "^bench|^error" | sed "s/^/fp16 $n^3 ${bm}x${bn}x${bk} stages $s warps $w /"
    done
  done
  echo "== anchors: cuBLAS, and the same kernel source in upstream Triton"
  PYTHONUNBUFFERED=1 CONFIGS="$CONFIGS" python3 bench/anchors_gluon_gemm.py $SIZES
fi
echo "failures: $failures"
exit $((failures > 0))
