#!/usr/bin/env bash
# A CPU subset of Liger-Kernel's own op tests (liger-kernel 0.8.5's test/transformers) run unmodified under
# `python -m tessel`: Liger's Triton kernels get CPU tensors, so they run in tessel's interpreter. Nothing of
# Liger's is part of this repository: its sdist is downloaded here (or taken from SDIST_DIR).
#
# Usage: bash .ci/liger_cpu.sh PYTHON [SDIST_DIR]
#   PYTHON: an interpreter with tessel, torch and pytest installed (CI's venv). Liger's tests also import
#   transformers, tokenizers and packaging: installed here into that environment, pinned below.
#   LIGER_SECONDS: the step's hard limit for the pytest run (default 480; the subset takes about 2.5 minutes on
#   CI's 2 cores).
#
# Fails when a selected test fails, when pytest collects nothing or a file of the subset passes no test (a -k
# expression that no longer matches), when the run goes past its limit, or when upstream Triton (installed with torch) was imported in the process instead of
# tessel's stand-in.
set -euo pipefail
py=${1:?usage: bash .ci/liger_cpu.sh PYTHON [SDIST_DIR]}
sdist=${2:-}
seconds=${LIGER_SECONDS:-480}
liger_version=0.8.5
# What Liger's tests import besides torch (pinned: these work with torch 2.11; packaging comes with them).
deps=(transformers==5.24.0 tokenizers==0.23.3 huggingface_hub==2.4.0)

# The subset: FILE|-k expression (within that file). Small shapes and float32 only: the interpreter is slow on
# large ones, and bfloat16 cases skip on CPU anyway. Measured on a 2-core machine (see bench/liger.py for the
# device comparison of every file).
subset=(
  "test_rms_norm.py|not dtensor"
  "test_layer_norm.py|not dtensor"
)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessel-liger.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [[ -z $sdist ]]; then
  echo "== liger-kernel $liger_version sdist (pip download)"
  "$py" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
    "liger-kernel==$liger_version" -d "$tmp/dl"
  tar xzf "$tmp"/dl/liger_kernel-*.tar.gz -C "$tmp"
  sdist=$(echo "$tmp"/liger_kernel-*/)
fi
sdist=$(cd "$sdist" && pwd)
[[ -d $sdist/test/transformers ]] || { echo "no test/transformers in $sdist" >&2; exit 1; }

echo "== Liger's test dependencies: ${deps[*]}"
"$py" -m pip install --quiet --disable-pip-version-check "${deps[@]}" 2>&1 | grep -v "as the 'root' user" || true
"$py" -c "import transformers, tokenizers, packaging" # fails the step if the install did not take

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
