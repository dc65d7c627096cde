#!/usr/bin/env bash
# A CPU subset of Liger-Kernel's own op tests (liger-kernel 0.8.5's test/transformers) run unmodified under
# `python -m tessel`: Liger's Triton kernels get CPU tensors, so they run in tessel's interpreter. Nothing of
# Liger's is part of this repository: its sdist is downloaded here (or taken from SDIST_DIR).
#
# Usage: bash .ci/liger_cpu.sh PYTHON [SDIST_DIR]
#        bash .ci/liger_cpu.sh PYTHON --prepare DIR   (download and unpack the sdist into DIR, install the test
#                                                       dependencies, run nothing: what .ci/run does ahead)
#   PYTHON: an interpreter with tessel, torch and pytest installed (CI's venv). Liger's tests also import
#   transformers, tokenizers and packaging: installed here into that environment, pinned below.
#   LIGER_SECONDS: the step's hard limit for the pytest run (default 480). Measured on a 2-core machine shared
#   with other jobs: 324 passed, 117 skipped (bfloat16 on CPU) in 105-170 s of pytest, 2-3.5 minutes in all.
#
# Fails when a selected test fails, when pytest collects nothing or a file of the subset passes no test (a -k
# expression that no longer matches), when the run goes past its limit, or when upstream Triton (installed with
# torch) was imported in the process instead of tessel's stand-in.
set -euo pipefail
py=${1:?usage: bash .ci/liger_cpu.sh PYTHON [SDIST_DIR]}
sdist=${2:-}
seconds=${LIGER_SECONDS:-480}
liger_version=0.8.5
# What Liger's tests import besides torch (pinned: these work with torch 2.11; packaging comes with them).
deps=(transformers==5.24.0 tokenizers==0.23.3 huggingface_hub==2.4.0)

# The subset: FILE|-k expression (within that file). Small shapes only: the interpreter is slow on large ones
# (bfloat16 cases skip themselves on CPU). Left out, and why (bench/liger.py compares every file on the GPU):
#   *dtensor*                      spawn 4-8 processes each (30-90 s apiece; xfail below 8 GPUs anyway)
#   large shapes                   geglu 2x2048x2048x4096 (76 s), group_norm 16x32x4096, llama4_rope/rope 3x423x73,
#                                  rope 8192, jsd and kl_div (every case is 2x1024x3200 or 41x401x1271 or larger)
#   test_layer_norm bfloat16 4-16-128 and 3-7-256, test_group_norm 16-48-12-8192: torch's CPU reference is the
#                                  less accurate side (its bfloat16 LayerNorm and float32 GroupNorm backward
#                                  reductions); tessel's results are nearer a float64 reference
#   test_dyt, test_mlp, test_tvd, test_embedding, test_qwen2vl_mrope: need CUDA (Liger's code or the test's)
subset=(
  "test_rms_norm.py|not dtensor"
  "test_fused_add_rms_norm.py|not dtensor"
  "test_layer_norm.py|not test_liger_layer_norm[dtype1-0.02-0.02-4-16-128] and not test_liger_layer_norm[dtype1-0.02-0.02-3-7-256]"
  "test_group_norm.py|not 16-48-12-8192 and not 16-32-1-4096"
  "test_poly_norm.py|not dtensor"
  "test_softmax.py|not dtensor"
  "test_sparsemax.py|not dtensor"
  "test_relu_squared.py|not dtensor"
  "test_swiglu.py|test_correctness_functional or shape_flexibility or default_multipliers_backward_compat or legacy_function or silumul_with_multipliers"
  "test_geglu.py|not 2-2048-2048-4096 and not 9-41-341-4231"
  "test_rope.py|(test_functional_correctness and not 9-7-41-41-92) or (test_correctness and 128-32-8-64) or (vision_2d_cos_sin and 128-32-64) or (gpt_oss and 1-128-8-8-64) or (partial_rope and 2-128-32-8-64-16)"
  "test_llama4_rope.py|not 423-73"
  "test_cross_entropy.py|test_correctness_functional or predicted_tokens or confident_predictions or structured_output or float32_internal"
  "test_jsd.py|all_indices_ignored or low_probability"
  "test_mhc.py|not dtensor"
  "test_multi_token_attention.py|not dtensor"
  "test_fused_neighborhood_attention.py|not dtensor"
)

# The sdist, downloaded and unpacked into directory $1; prints the unpacked tree's path.
fetch_sdist() {
  echo "== liger-kernel $liger_version sdist (pip download)" >&2
  "$py" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
    "liger-kernel==$liger_version" -d "$1/dl"
  tar xzf "$1"/dl/liger_kernel-*.tar.gz -C "$1"
  echo "$1"/liger_kernel-*/
}

install_deps() {
  echo "== Liger's test dependencies: ${deps[*]}"
  "$py" -m pip install --quiet --disable-pip-version-check "${deps[@]}" 2>&1 | grep -v "as the 'root' user" || true
  "$py" -c "import transformers, tokenizers, packaging" # fails the step if the install did not take
}

if [[ $sdist == --prepare ]]; then
  dest=${3:?usage: bash .ci/liger_cpu.sh PYTHON --prepare DIR}
  mkdir -p "$dest"
  fetch_sdist "$dest"
  install_deps
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-liger.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [[ -z $sdist ]]; then
  sdist=$(fetch_sdist "$tmp")
fi
sdist=$(cd "$sdist" && pwd)
[[ -d $sdist/test/transformers ]] || { echo "no test/transformers in $sdist" >&2; exit 1; }

install_deps

# Where upstream Triton lives (found without importing it): none of its modules may be loaded in the run.
upstream=$(TESSEL_SHIM=0 "$py" -c 'import importlib.util as u, os; s = u.find_spec("triton"); print(os.path.dirname(os.path.abspath(s.origin)) if s and s.origin else "")')

files=()
kexpr=""
for entry in "${subset[@]}"; do
  file=${entry%%|*}
  sel=${entry#*|}
  files+=("test/transformers/$file")
  # a file's own tests: its module name is one of each of its tests' keywords
  kexpr+="${kexpr:+ or }(${file%.py} and ($sel))"
done

echo "== python -m tessel -m pytest: ${#files[@]} files of Liger-Kernel $liger_version on CPU (at most ${seconds}s)"
cd "$sdist"
start=$(date +%s)
rc=0
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 UPSTREAM_TRITON="$upstream" timeout --signal=INT --kill-after=30 "$seconds" \
  "$py" -m tessel -c '
import os, sys
import pytest
import tessel

class PassedPerFile:
    def __init__(self):
        self.n = {}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            f = report.nodeid.split("::")[0]
            self.n[f] = self.n.get(f, 0) + 1


count = PassedPerFile()
rc = int(pytest.main(sys.argv[1:], plugins=[count]))
none = [a for a in sys.argv[1:] if a.endswith(".py") and not count.n.get(a)]
if none and rc in (0, 1):
    print(f"liger_cpu: no test of {none} passed: is its -k selection stale?", file=sys.stderr)
    rc = 1
pkg = os.path.dirname(os.path.abspath(tessel.__file__))
upstream = os.environ.get("UPSTREAM_TRITON", "")
t = sys.modules.get("triton")
where = os.path.abspath(getattr(t, "__file__", "") or "") if t else ""
bad = sorted(n for n, m in list(sys.modules.items())
             if (n == "triton" or n.startswith("triton.")) and upstream
             and os.path.abspath(getattr(m, "__file__", None) or "").startswith(upstream + os.sep))
if t is None or not where.startswith(pkg + os.sep):
    print(f"liger_cpu: `triton` in this process is {where or t!r}, not tessel'"'"'s ({pkg})", file=sys.stderr)
    rc = rc or 1
elif bad:
    print(f"liger_cpu: upstream Triton modules were imported: {bad[:5]}", file=sys.stderr)
    rc = rc or 1
else:
    print(f"liger_cpu: triton -> {where} (tessel); no module of upstream Triton ({upstream or '"'"'not installed'"'"'}) loaded")
    print("liger_cpu: passed per file: " + ", ".join(f"{os.path.basename(f)[5:-3]} {n}" for f, n in count.n.items()))
sys.exit(rc)
' "${files[@]}" -k "$kexpr" -q -p no:cacheprovider -o log_cli=false --durations=10 \
  || rc=$?
echo "-- pytest exit $rc after $(( $(date +%s) - start ))s"
if [[ $rc -eq 5 ]]; then
  echo "liger_cpu: pytest collected no tests" >&2
  exit 1
elif [[ $rc -eq 124 || $rc -eq 130 || $rc -eq 137 ]]; then
  echo "liger_cpu: the subset ran past ${seconds}s" >&2
  exit 1
fi
exit "$rc"
