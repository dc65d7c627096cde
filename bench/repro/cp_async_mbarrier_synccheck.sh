#!/usr/bin/env bash
# Does compute-sanitizer's synccheck accept cp.async.mbarrier.arrive's incrementing form? Builds the three kernels
# of cp_async_mbarrier_synccheck.cu with nvcc (no tessel involved) and runs each under synccheck in its own
# process: the incrementing form (what Gluon's async_copy.mbarrier_arrive(bar) emits, and tessel with it)
# computes the right result and is reported as "Barrier overflow" by every thread; the .noinc form is clean.
# Needs a GPU of sm_90 and a CUDA toolkit. Usage: bash bench/repro/cp_async_mbarrier_synccheck.sh
set -u
cd "$(dirname "$0")"
out=${TMPDIR:-/tmp}/cp_async_mbarrier_synccheck
nvcc -arch=sm_90a -O2 -o "$out" cp_async_mbarrier_synccheck.cu || exit 1
"$out"
for k in 0 1 2; do
  echo "== kernel $k under synccheck"
  compute-sanitizer --tool synccheck "$out" $k 2>&1 | grep -E "^(libcu|incr|noinc):|Barrier error|ERROR SUMMARY" | sort | uniq -c
done
