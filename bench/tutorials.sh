#!/usr/bin/env bash
# Every kernel of the public Triton tutorials at the tutorial's own configurations: compiled to PTX, assembled
# by ptxas and run in the interpreter against a NumPy float64 reference. The tutorials are not in this
# repository: pass the directory holding them.
#   bash bench/tutorials.sh DIR [--arch sm_90a|sm_100a] [--mode fast|full] [--only REGEX] [--jobs N] [-v]
#     [--triton PYTHON]
# --arch sm_90a (default): the configurations each tutorial picks on an sm_90 GPU (sm_100a for 10's
# Blackwell-only kernel). --arch sm_100a: those its own code picks on a capability-10 GPU (06 with
# warp_specialize on and off, 09 with WARP_SPECIALIZE on and off, the B200's SM count...), compiled for
# sm_100a, and a kernel with a dot must have tcgen05.mma in its PTX (a block-scaled one for tl.dot_scaled).
# The PTX simulator's part of that check is `TESSEL_TUTORIALS=DIR cargo test --test auto_tcgen05_tutorials`.
# Needs python3 with numpy; ptxas from $PTXAS or PATH; builds target/release/tessel unless $TESSEL is set.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 ]]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
dir=$1
shift
if [[ -z "${TESSEL:-}" ]]; then
  cargo build --release --quiet -p tessel --bin tessel
  TESSEL="${CARGO_TARGET_DIR:-target}/release/tessel"
fi
export TESSEL
exec python3 bench/tutorials/harness.py "$dir" "$@"
