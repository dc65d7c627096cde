#!/usr/bin/env bash
# Every kernel of the public Triton tutorials at the tutorial's own configurations: compiled to PTX, assembled
# by ptxas (sm_90a; sm_100a for the Blackwell-only block-scaled matmul) and run in the interpreter against a
# NumPy float64 reference. The tutorials are not in this repository: pass the directory holding them.
#   bash bench/tutorials.sh DIR [--mode fast|full] [--only REGEX] [--jobs N] [-v]
# Needs python3 with numpy; ptxas from $PTXAS or PATH; builds target/release/tessel unless $TESSEL is set.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 ]]; then
  sed -n '2,6p' "$0" >&2
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
