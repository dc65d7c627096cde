#!/usr/bin/env bash
# One device run for BENCHMARKS.md and issue 4's GPU acceptance: every example kernel from source on the GPU,
# checked against the interpreter on fresh random inputs with NaN-poisoned outputs, under compute-sanitizer
# memcheck (at ragged sizes, and at the full benchmark shapes of softmax and layer norm), compile times, then
# tessel and the Triton/PyTorch anchors timed on the same shapes in the same run.
#
# Needs, built here and carried: target/release/tessel, target/release/examples/gpu_check and
# target/release/examples/vector_add_api:
#   cargo build --release -p tessel -p tessel-runtime --bins --examples
# (naming only --example targets would leave a stale target/release/tessel)
# Usage: bash bench/run_device.sh [check|compile|time|ln|all]   (default all; ln: layer norm forward and its
# Triton anchor alternating 5 times, to separate a small difference from drift). CTAS=N launches every checked
# kernel as clusters of N CTAs.
set -uo pipefail
T=./target/release/tessel
what=${1:-all}
if [[ ${CTAS:-1} != 1 ]]; then
  # CTAS=N: every `run` launches clusters of N CTAs (auto mode: the first CTA runs the program, the others exit).
  W=$(mktemp); printf '#!/bin/sh\nsub=$1; shift\nexec %s "$sub" --num-ctas %s "$@"\n' "$PWD/target/release/tessel" "$CTAS" >"$W"
  chmod +x "$W"; T=$W
fi
SM=examples/fused_softmax.py::softmax_kernel
LN=examples/layer_norm.py
VA=examples/vector_add.py::add_kernel
MC=${MC-compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 5}
export TESSEL_CACHE_DIR=${TMPDIR:-/tmp}/tessel-cache-$$
failures=0
report() { # NAME RC LOG: prints a step's check lines and the sanitizer verdict, counts failures
  local name=$1 rc=$2 log=$3
  echo "-- $name (exit $rc)"
  grep -E "^check |ERROR SUMMARY|^error|^Error|wrong|PASS|FAIL|note: cannot" <<<"$log"
  # On the GPU machine every kernel must run on the GPU: a fallback to the interpreter is a failure too.
  if [[ $rc -ne 0 ]] || grep -qE "MISMATCH|in the interpreter over" <<<"$log"; then
    failures=$((failures + 1)); echo "$log" | tail -20
  fi
}
step() { # NAME CMD...: runs CMD and reports it
  local name=$1; shift
  local log; log=$("$@" 2>&1); report "$name" $? "$log"
}
# Full-size checks spend minutes in the (single-threaded) interpreter after one GPU launch: they run in the
# background, on other cores, and are reported at the end.
bg_names=(); bg_pids=(); bg_logs=()
bg_step() { # NAME CMD...
  local name=$1; shift
  local log; log=$(mktemp)
  ( "$@" >"$log" 2>&1; echo "exit status $?" >>"$log" ) &
  bg_names+=("$name"); bg_pids+=($!); bg_logs+=("$log")
}
bg_wait() {
  for i in "${!bg_pids[@]}"; do
    wait "${bg_pids[$i]}"
    local log; log=$(cat "${bg_logs[$i]}")
    report "${bg_names[$i]} (background)" "$(sed -n 's/^exit status //p' <<<"$log")" "$log"
  done
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

if [[ $what == check || $what == all ]]; then
echo "== correctness: GPU vs interpreter (fresh random inputs, NaN-poisoned outputs), memcheck at ragged sizes"
S=$RANDOM
bg_step "layer norm fwd fp16 32768x4096, full size" $MC $T run $LN::_layer_norm_fwd_fused --num-warps 8 --const BLOCK_SIZE=4096 \
  --grid 32768 --seed $S --check --show 0 --arg X=randn:32768x4096:fp16 --arg Y=fill:nan:32768x4096:fp16 \
  --arg W=rand:4096:fp16 --arg B=rand:4096:fp16 --arg Mean=fill:nan:32768 --arg Rstd=fill:nan:32768 --arg stride=4096 \
  --arg N=4096 --arg eps=1e-5
bg_step "softmax fp16 32768x4096, full size" $MC $T run $SM --num-warps 8 --const BLOCK_SIZE=4096 --const num_stages=4 \
  --grid 528 --seed $S --check --show 0 --arg output_ptr=fill:nan:32768x4096:fp16 --arg input_ptr=randn:32768x4096:fp16 \
  --arg input_row_stride=4096 --arg output_row_stride=4096 --arg n_rows=32768 --arg n_cols=4096
bg_step "softmax fp16 4096x1000, full size" $MC $T run $SM --const BLOCK_SIZE=1024 --const num_stages=4 \
  --grid 528 --seed $S --check --show 0 --arg output_ptr=fill:nan:4096x1000:fp16 --arg input_ptr=randn:4096x1000:fp16 \
  --arg input_row_stride=1000 --arg output_row_stride=1000 --arg n_rows=4096 --arg n_cols=1000
step "vector add n=3000" $MC $T run $VA --const BLOCK_SIZE=1024 --grid 3 --seed $S --check --show 0 \
  --arg x_ptr=rand:3000 --arg y_ptr=rand:3000 --arg output_ptr=fill:nan:3001 --arg n_elements=3000
step "softmax fp16 37x1000 (stride 1003)" $MC $T run $SM --signature '*fp16,*fp16,i32,i32,i32,i32' --const BLOCK_SIZE=1024 \
  --const num_stages=4 --grid 8 --seed $S --check --show 0 --arg output_ptr=fill:nan:37x1003:fp16 \
  --arg input_ptr=randn:37x1003:fp16 --arg input_row_stride=1003 --arg output_row_stride=1003 --arg n_rows=37 --arg n_cols=1000
step "layer norm fwd fp16 33x500" $MC $T run $LN::_layer_norm_fwd_fused --signature '*fp16,*fp16,*fp16,*fp16,*fp32,*fp32,i32,i32,fp32' \
  --const BLOCK_SIZE=512 --grid 33 --seed $S --check --show 0 --arg X=randn:33x500:fp16 --arg Y=fill:nan:33x500:fp16 \
  --arg W=rand:500:fp16 --arg B=rand:500:fp16 --arg Mean=fill:nan:33 --arg Rstd=fill:nan:33 --arg stride=500 --arg N=500 --arg eps=1e-5
step "layer norm bwd dX fp16 37x500 (8 locked groups)" $MC $T run $LN::_layer_norm_bwd_dx_fused --const GROUP_SIZE_M=8 \
  --const BLOCK_SIZE_N=512 --grid 37 --seed $S --check --show 0 --arg DX=fill:nan:37x500:fp16 --arg DY=randn:37x500:fp16 \
  --arg DW=fill:nan:8x500:fp16 --arg DB=fill:nan:8x500:fp16 --arg X=randn:37x500:fp16 --arg W=rand:500:fp16 \
  --arg Mean=randn:37 --arg Rstd=rand:37 --arg Lock=zeros:16:i32 --arg stride=500 --arg N=500
step "layer norm bwd dW/dB 8x500" $MC $T run $LN::_layer_norm_bwd_dwdb --const BLOCK_SIZE_M=32 --const BLOCK_SIZE_N=128 \
  --grid 4 --seed $S --check --show 0 --arg DW=randn:8x500 --arg DB=randn:8x500 --arg FINAL_DW=fill:nan:500:fp16 \
  --arg FINAL_DB=fill:nan:500:fp16 --arg M=8 --arg N=500
step "argmax fp16 37x3000 (stride 3001, ties)" $MC $T run examples/argmax.py::argmax_kernel --const BLOCK_M=4 --const BLOCK_N=1024 \
  --grid 10 --seed $S --check --show 0 --arg X=randn:37x3001:fp16 --arg OUT_MAX=fill:nan:37 --arg OUT_IDX=fill:-1:37:i32 \
  --arg M=37 --arg N=3000 --arg stride_xm=3001
step "matmul fp16 100x70x90 (FMA dot)" $MC $T run examples/matmul.py::matmul_kernel --const BLOCK_SIZE_M=32 --const BLOCK_SIZE_N=32 \
  --const BLOCK_SIZE_K=32 --const GROUP_SIZE_M=8 --const 'ACTIVATION=""' --grid 12 --seed $S --check --show 0 \
  --arg a_ptr=randn:100x90:fp16 --arg b_ptr=randn:90x70:fp16 --arg c_ptr=fill:nan:100x70:fp16 --arg M=100 --arg N=70 --arg K=90 \
  --arg stride_am=90 --arg stride_ak=1 --arg stride_bk=70 --arg stride_bn=1 --arg stride_cm=70 --arg stride_cn=1
step "attention fwd fp16 Z=1 H=2 N_CTX=100 D=32 causal" $MC $T run examples/flash_attention.py::_attn_fwd --const HEAD_DIM=32 \
  --const BLOCK_M=32 --const BLOCK_N=16 --const CAUSAL=True --grid 4,2 --seed $S --check --show 0 \
  --arg Q=randn:2x100x32:fp16 --arg K=randn:2x100x32:fp16 --arg V=randn:2x100x32:fp16 --arg sm_scale=0.17677669 \
  --arg M=fill:nan:2x100 --arg Out=fill:nan:2x100x32:fp16 \
  --arg stride_qz=6400 --arg stride_qh=3200 --arg stride_qm=32 --arg stride_qk=1 \
  --arg stride_kz=6400 --arg stride_kh=3200 --arg stride_kn=32 --arg stride_kk=1 \
  --arg stride_vz=6400 --arg stride_vh=3200 --arg stride_vn=32 --arg stride_vk=1 \
  --arg stride_oz=6400 --arg stride_oh=3200 --arg stride_om=32 --arg stride_ok=1 --arg Z=1 --arg H=2 --arg N_CTX=100
step "descriptor copy fp16 40x104" $MC $T run examples/descriptor_copy.py::transpose_scale_kernel --grid 3 --seed $S --check --show 0 \
  --arg x=randn:40x104:fp16 --arg y=fill:nan:104x40:fp16 --arg s=fill:nan:40 --arg x_desc=desc:x:block=16x32 \
  --arg y_desc=desc:y:block=32x16 --arg sum_desc=desc:s:block=16 --arg scale=0.5
step "gluon aggregate rows fp32 37x300" $MC $T run examples/gluon_aggregate.py::copy_rows_kernel --const BLOCK_M=16 --const BLOCK_N=64 \
  --grid 3 --seed $S --check --show 0 --arg X=randn:37x301 --arg Y=fill:nan:37x300 --arg SUM=fill:nan:37 --arg MAX=fill:nan:37 \
  --arg M=37 --arg N=300 --arg stride_x=301 --arg stride_y=300
bg_step "vector add n=2^28, full size" $MC $T run $VA --const BLOCK_SIZE=1024 --grid 262144 --seed $S --check --show 0 \
  --arg x_ptr=rand:268435456 --arg y_ptr=rand:268435456 --arg output_ptr=fill:nan:268435456 --arg n_elements=268435456
step "gpu_check (hand-written layout IR kernels)" ./target/release/examples/gpu_check --no-timing
step "gpu_check under memcheck (the print/assert children, which trap on purpose, unchecked)" \
  ${MC:+$MC --target-processes application-only} ./target/release/examples/gpu_check --no-timing
DP="examples/device_print.py::debug_kernel --const BLOCK=64 --grid 3 --arg x_ptr=arange:150 --arg n=150 --show 0"
diff <($T run $DP 2>/dev/null | grep '^pid' | sort) <($T run $DP --interpret 2>/dev/null | grep '^pid' | sort) >/dev/null \
  && echo "-- device_print: GPU lines == interpreter lines ($($T run $DP 2>/dev/null | grep -c '^pid') lines)" \
  || { echo "-- device_print: GPU and interpreter lines differ"; failures=$((failures + 1)); }
step "Rust API, first run (compiles)" ./target/release/examples/vector_add_api
./target/release/examples/vector_add_api | grep -E "total|wrong"
fi

if [[ $what == compile || $what == all ]]; then
echo "== compile times: source -> loaded module, cold (no cache) and from the cache"
for i in 1 2 3; do
  $T run $VA --const BLOCK_SIZE=1024 --grid 1 --show 0 --no-cache --timings \
    --arg x_ptr=rand:1024 --arg y_ptr=rand:1024 --arg output_ptr=zeros:1024 --arg n_elements=1024 2>&1 | grep -E "^  "
done
for i in 1 2; do  # the first stores the kernel in the cache, the second loads its cubin
  $T run $VA --const BLOCK_SIZE=1024 --grid 1 --show 0 --timings \
    --arg x_ptr=rand:1024 --arg y_ptr=rand:1024 --arg output_ptr=zeros:1024 --arg n_elements=1024 2>&1 | grep -E "total"
done
$T run $LN::_layer_norm_fwd_fused --num-warps 8 --const BLOCK_SIZE=4096 --grid 1 --show 0 --no-cache --timings \
  --arg X=randn:1x4096:fp16 --arg Y=zeros:1x4096:fp16 --arg W=rand:4096:fp16 --arg B=rand:4096:fp16 --arg Mean=zeros:1 \
  --arg Rstd=zeros:1 --arg stride=4096 --arg N=4096 --arg eps=1e-5 2>&1 | grep -E "timings|  "
fi

if [[ $what == time || $what == all ]]; then
echo "== timing: tessel bench (CUDA events, 10 warm-up, median of 100); signatures inferred as Triton's launcher does"
for rep in 1 2; do
$T bench $VA --const BLOCK_SIZE=1024 --grid 262144 --bytes '12 * n_elements' \
  --arg x_ptr=rand:268435456 --arg y_ptr=rand:268435456 --arg output_ptr=zeros:268435456 --arg n_elements=268435456
$T bench $SM --num-warps 8 --const BLOCK_SIZE=4096 --const num_stages=4 --grid 528 --bytes '2 * 2 * n_rows * n_cols' \
  --arg output_ptr=zeros:32768x4096:fp16 --arg input_ptr=randn:32768x4096:fp16 \
  --arg input_row_stride=4096 --arg output_row_stride=4096 --arg n_rows=32768 --arg n_cols=4096
$T bench $SM --const BLOCK_SIZE=1024 --const num_stages=4 --grid 528 --bytes '2 * 2 * n_rows * n_cols' \
  --arg output_ptr=zeros:4096x1000:fp16 --arg input_ptr=randn:4096x1000:fp16 \
  --arg input_row_stride=1000 --arg output_row_stride=1000 --arg n_rows=4096 --arg n_cols=1000
$T bench $LN::_layer_norm_fwd_fused --num-warps 8 --const BLOCK_SIZE=4096 --grid 32768 \
  --bytes '2 * (2 * 32768 * N + 2 * N) + 2 * 4 * 32768' --arg X=randn:32768x4096:fp16 --arg Y=zeros:32768x4096:fp16 \
  --arg W=rand:4096:fp16 --arg B=rand:4096:fp16 --arg Mean=zeros:32768 --arg Rstd=zeros:32768 --arg stride=4096 --arg N=4096 --arg eps=1e-5
done 2>&1 | grep -E "^bench|bytes"
echo "== anchors (the same example kernels in upstream Triton, and a PyTorch copy)"
PYTHONUNBUFFERED=1 python3 bench/anchors.py
fi
if [[ $what == ln ]]; then
echo "== layer norm forward fp16 32768x4096: tessel and Triton alternating"
for rep in 1 2 3 4 5; do
  $T bench $LN::_layer_norm_fwd_fused --num-warps 8 --const BLOCK_SIZE=4096 --grid 32768 \
    --bytes '2 * (2 * 32768 * N + 2 * N) + 2 * 4 * 32768' --arg X=randn:32768x4096:fp16 --arg Y=zeros:32768x4096:fp16 \
    --arg W=rand:4096:fp16 --arg B=rand:4096:fp16 --arg Mean=zeros:32768 --arg Rstd=zeros:32768 --arg stride=4096 \
    --arg N=4096 --arg eps=1e-5 2>&1 | grep -E "^bench"
  PYTHONUNBUFFERED=1 python3 bench/anchors.py layer_norm
done
fi
bg_wait
echo "== $failures failing step(s)"
exit $((failures > 0))
