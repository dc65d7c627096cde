#!/usr/bin/env bash
# Attention forward on the device (Z=4 H=32 D=128 fp16; FLOPs 4*Z*H*N^2*D, halved when causal):
#   bash bench/attention.sh check            GPU vs the interpreter (NaN-poisoned outputs), under compute-sanitizer
#   bash bench/attention.sh time [N...]      tessel timings over CONFIGS ("BM,BN,WARPS,STAGES ...") of both
#                                            kernels of examples/flash_attention.py (KERNELS="ptr tma")
#   bash bench/attention.sh anchors [N...]   bench/anchors_attention.py: the same kernels in Triton 3.6 over the
#                                            same CONFIGS, the tutorial's own autotuned kernel, torch SDPA
# T=path/to/tessel picks the binary.
set -u
cd "$(dirname "$0")/.."
source bench/lib.sh
T=${T:-target/release/tessel}
FA=examples/flash_attention.py
mode=${1:-time}; shift || true
NS=${*:-4096 16384}
export CONFIGS=${CONFIGS:-"128,64,8,2 128,64,8,3 128,64,8,4 128,128,8,2 128,128,8,3"}
KERNELS=${KERNELS:-"ptr tma"}

# attn_args KERNEL Z H N D BM BN WARPS STAGES CAUSAL: the kernel, its constants, grid and arguments for
# `tessel run` or `tessel bench`.
attn_args() {
  local kern=$1 z=$2 h=$3 n=$4 d=$5 bm=$6 bn=$7 w=$8 s=$9 causal=${10}
  local y=$((z * h * n)) grid="$(((n + bm - 1) / bm)),$((z * h))"
  if [[ $kern == tma ]]; then
    local st=1; [[ $causal == True ]] && st=3
    echo $FA::_attn_fwd_tma --const HEAD_DIM=$d --const BLOCK_M=$bm --const BLOCK_N=$bn --const STAGE=$st \
      --num-warps $w --num-stages $s --grid $grid --arg sm_scale=0.0883883 --arg M=fill:nan:$y --arg Z=$z --arg H=$h \
      --arg N_CTX=$n --arg q=randn:$y"x"$d:fp16 --arg k=randn:$y"x"$d:fp16 --arg v=randn:$y"x"$d:fp16 \
      --arg o=fill:nan:$y"x"$d:fp16 --arg desc_q=desc:q:block=$bm"x"$d --arg desc_k=desc:k:block=$bn"x"$d \
      --arg desc_v=desc:v:block=$bn"x"$d --arg desc_o=desc:o:block=$bm"x"$d
  else
    echo $FA::_attn_fwd --const HEAD_DIM=$d --const BLOCK_M=$bm --const BLOCK_N=$bn --const CAUSAL=$causal \
      --num-warps $w --num-stages $s --grid $grid --arg Q=randn:$((z*h))x$n"x"$d:fp16 \
      --arg K=randn:$((z*h))x$n"x"$d:fp16 --arg V=randn:$((z*h))x$n"x"$d:fp16 --arg sm_scale=0.0883883 \
      --arg M=fill:nan:$((z*h))x$n --arg Out=fill:nan:$((z*h))x$n"x"$d:fp16 \
      --arg stride_qz=$((h*n*d)) --arg stride_qh=$((n*d)) --arg stride_qm=$d --arg stride_qk=1 \
      --arg stride_kz=$((h*n*d)) --arg stride_kh=$((n*d)) --arg stride_kn=$d --arg stride_kk=1 \
      --arg stride_vz=$((h*n*d)) --arg stride_vh=$((n*d)) --arg stride_vn=$d --arg stride_vk=1 \
      --arg stride_oz=$((h*n*d)) --arg stride_oh=$((n*d)) --arg stride_om=$d --arg stride_ok=1 \
      --arg Z=$z --arg H=$h --arg N_CTX=$n
  fi
}

case $mode in
check)
  MC="compute-sanitizer --tool memcheck" RC="compute-sanitizer --tool racecheck" SC="compute-sanitizer --tool synccheck"
  for causal in False True; do
    step "tma attention D=128 N=256 causal=$causal 128x64 w8 s3" $T run $(attn_args tma 1 2 256 128 128 64 8 3 $causal) --seed 3 --check --show 0
    step "tma attention D=64 N=384 causal=$causal 64x32 w4 s2 memcheck" $MC $T run $(attn_args tma 1 2 384 64 64 32 4 2 $causal) --seed 4 --check --show 0
    step "tma attention D=128 N=256 causal=$causal 128x128 w8 s2 racecheck" $RC $T run $(attn_args tma 1 2 256 128 128 128 8 2 $causal) --seed 5 --check --show 0
    step "tma attention D=128 N=256 causal=$causal 128x64 w8 s4 synccheck" $SC $T run $(attn_args tma 1 2 256 128 128 64 8 4 $causal) --seed 6 --check --show 0
    step "ptr attention D=128 N=300 causal=$causal 128x64 w8 s3 racecheck" $RC $T run $(attn_args ptr 1 2 300 128 128 64 8 3 $causal) --seed 7 --check --show 0
    step "ptr attention D=128 N=300 causal=$causal 128x128 w8 s2 memcheck" $MC $T run $(attn_args ptr 1 2 300 128 128 128 8 2 $causal) --seed 8 --check --show 0
  done
  echo "== $failures failing step(s)"; exit $((failures > 0)) ;;
time)
  for n in $NS; do
    for causal in False True; do
      f=4; [[ $causal == True ]] && f=2
      for kern in $KERNELS; do
        for cfg in $CONFIGS; do
          IFS=, read -r bm bn w s <<<"$cfg"
          timeout 300 $T bench $(attn_args $kern 4 32 $n 128 $bm $bn $w $s $causal) --flops "$f * 4 * 32 * $n * $n * 128" 2>&1 \
            | grep -E "TFLOP|median|error" | tr '\n' ' ' | sed "s/^/tessel $kern N=$n causal=$causal ${bm}x${bn} w$w s$s: /"; echo
        done
      done
    done
  done ;;
anchors)
  PYTHONUNBUFFERED=1 python3 bench/anchors_attention.py $NS ;;
esac
