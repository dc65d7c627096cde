#!/usr/bin/env bash
# Offline PTX check: assembles every test kernel of codegen/tests/ir for sm_80, sm_90a and sm_100a with ptxas
# and fails on any error or warning (the `ptxas_accepts_every_kernel` test in codegen/tests/compile.rs).
#
# ptxas comes from the `nvidia-cuda-nvcc` wheel:  pip install nvidia-cuda-nvcc==13.0.88
# The 13.x wheel puts it at  <site-packages>/nvidia/cu13/bin/ptxas  (not nvidia/cuda_nvcc/bin as in 12.x).
# Lookup order: $PTXAS, `ptxas` on PATH, then that path under every site-packages python3 knows.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ -z "${PTXAS:-}" ]]; then
  if command -v ptxas >/dev/null 2>&1; then
    PTXAS=$(command -v ptxas)
  else
    PTXAS=$(python3 - <<'PY'
import site, sys, os, glob
dirs = site.getsitepackages() + [site.getusersitepackages()] + sys.path
for d in dirs:
    for p in glob.glob(os.path.join(d, "nvidia", "cu*", "bin", "ptxas")) + glob.glob(os.path.join(d, "nvidia", "cuda_nvcc", "bin", "ptxas")):
        if os.access(p, os.X_OK):
            print(p); sys.exit(0)
PY
)
  fi
fi
if [[ -z "${PTXAS:-}" ]]; then
  echo "ptxas_check: ptxas not found; install it with: pip install nvidia-cuda-nvcc==13.0.88" >&2
  exit 1
fi
echo "ptxas_check: using $PTXAS ($("$PTXAS" --version | tail -1))"
# Arguments go to cargo (default `-p tessel-codegen`); CI passes the flags of its test build (`--workspace
# --release`) so that the binary built there is the one run.
(($#)) || set -- -p tessel-codegen
PTXAS="$PTXAS" TESSEL_REQUIRE_PTXAS=1 cargo test "$@" --test compile ptxas_accepts_every_kernel -- --nocapture
