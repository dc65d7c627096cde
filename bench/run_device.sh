#!/usr/bin/env bash
# One device run: tessel's GPU results checked against the interpreter (small ragged sizes), then tessel and the
# Triton/PyTorch anchors timed on the same shapes. Needs target/release/tessel and
# target/release/examples/gpu_check built here (cargo build --release -p tessel -p tessel-codegen --example
# gpu_check) and carried.
set -uo pipefail
T=./target/release/tessel
SM=examples/fused_softmax.py::softmax_kernel
LN=examples/layer_norm.py::_layer_norm_fwd_fused
VA=examples/vector_add.py::add_kernel
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== correctness: tessel on the GPU vs the interpreter (fresh random inputs, outputs poisoned with NaN)"
$T run $VA --const BLOCK_SIZE=1024 --grid 3 --seed $RANDOM --check --show 0 \
  --arg x_ptr=rand:3000 --arg y_ptr=rand:3000 --arg output_ptr=fill:nan:3001 --arg n_elements=3000
$T run $SM --signature '*fp16,*fp16,i32,i32,i32,i32' --const BLOCK_SIZE=1024 --const num_stages=4 --grid 8 \
  --seed $RANDOM --check --show 0 --arg output_ptr=fill:nan:37x1003:fp16 --arg input_ptr=randn:37x1003:fp16 \
  --arg input_row_stride=1003 --arg output_row_stride=1003 --arg n_rows=37 --arg n_cols=1000
$T run $LN --signature '*fp16,*fp16,*fp16,*fp16,*fp32,*fp32,i32,i32,fp32' --const BLOCK_SIZE=512 --grid 33 \
  --seed $RANDOM --check --show 0 --arg X=randn:33x500:fp16 --arg Y=fill:nan:33x500:fp16 --arg W=rand:500:fp16 \
  --arg B=rand:500:fp16 --arg Mean=fill:nan:33 --arg Rstd=fill:nan:33 --arg stride=500 --arg N=500 --arg eps=1e-5

echo "== timing: tessel (CUDA events, 10 warm-up, median of 100); signatures inferred from the values as Triton's launcher does"
$T run $VA --const BLOCK_SIZE=1024 --grid 262144 --bench --show 0 \
  --arg x_ptr=rand:268435456 --arg y_ptr=rand:268435456 --arg output_ptr=zeros:268435456 --arg n_elements=268435456
$T run $SM --num-warps 8 --const BLOCK_SIZE=4096 --const num_stages=4 \
  --grid 528 --bench --show 0 --arg output_ptr=zeros:32768x4096:fp16 --arg input_ptr=randn:32768x4096:fp16 \
  --arg input_row_stride=4096 --arg output_row_stride=4096 --arg n_rows=32768 --arg n_cols=4096
$T run $SM --const BLOCK_SIZE=1024 --const num_stages=4 \
  --grid 528 --bench --show 0 --arg output_ptr=zeros:4096x1000:fp16 --arg input_ptr=randn:4096x1000:fp16 \
  --arg input_row_stride=1000 --arg output_row_stride=1000 --arg n_rows=4096 --arg n_cols=1000
$T run $LN --num-warps 8 --const BLOCK_SIZE=4096 \
  --grid 32768 --bench --show 0 --arg X=randn:32768x4096:fp16 --arg Y=zeros:32768x4096:fp16 --arg W=rand:4096:fp16 \
  --arg B=rand:4096:fp16 --arg Mean=zeros:32768 --arg Rstd=zeros:32768 --arg stride=4096 --arg N=4096 --arg eps=1e-5

echo "== anchors (the same example kernels in upstream Triton, and a PyTorch copy)"
PYTHONUNBUFFERED=1 python3 bench/anchors.py
echo "== gpu_check (hand-written layout IR kernels vs the interpreter) under compute-sanitizer memcheck"
compute-sanitizer --tool memcheck ./target/release/examples/gpu_check --no-timing 2>&1 | tail -3
