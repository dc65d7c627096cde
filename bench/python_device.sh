#!/usr/bin/env bash
# Issue 12's device run: the Python package on torch CUDA tensors (launch on torch's stream, correctness against
# torch, launch overhead), then unmodified Triton tutorial scripts through `python -m tessel`. The tutorials are
# public upstream files, not part of this repository: pass the directory holding them (e.g. 01-vector-add.py,
# 02-fused-softmax.py, 03-matrix-multiplication.py, 05-layer-norm.py, 06-fused-attention.py).
# Needs the wheel built here and carried: pip wheel --no-deps ./python -w dist/
# Usage: bash bench/python_device.sh TUTORIALS_DIR [SECONDS_PER_TUTORIAL] [GLOB]   (GLOB picks tutorials, e.g. '0[12]*';
# full logs go to $OUT (or /tmp) as tut-NAME.log; the autotuner's progress lines are left out of what is printed)
set -uo pipefail
# ptxas (for the register counts scripts read from warmed-up kernels) lives with the CUDA toolkit.
export PATH=$PATH:/usr/local/cuda/bin
dir=${1:?usage: bash bench/python_device.sh TUTORIALS_DIR [SECONDS] [GLOB]}
secs=${2:-150}
glob=${3:-*}
logs=${OUT:-/tmp}
python -m pip install --quiet --no-deps --no-index --force-reinstall dist/tessel-*.whl 2>&1 | grep -v "as the 'root' user"
python -c "import tessel, torch, triton; print('tessel', tessel.__file__, '| torch', torch.__version__, '| triton', triton.__version__)"
if [[ $glob == "*" ]]; then
  echo "== gpu_check (torch tensors, streams, events)"
  python python/bench/gpu_check.py 2>&1 | tail -20
  echo "== launch overhead"
  python python/bench/launch_overhead.py 2>&1 | tail -14
fi
for t in "$dir"/$glob.py; do
  echo "== python -m tessel $(basename "$t") (at most ${secs}s)"
  start=$(date +%s)
  log="$logs/tut-$(basename "$t" .py).log"
  timeout "$secs" python -m tessel "$t" > "$log" 2>&1
  rc=$?
  tr '\r' '\n' < "$log" | grep -vE '^\s*$|tessel autotune' | tail -40
  echo "-- exit $rc after $(( $(date +%s) - start ))s"
done
