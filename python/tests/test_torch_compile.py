"""torch.compile (inductor) on tessel (issue 29): tiny models compiled by inductor run through tessel's
`triton.compile` and match eager. Each model runs in a child process under `python -m tessel`
(`torch_models/models.py`), so that `triton` there is tessel's and nothing from an installed Triton loads.

On `cpu` inductor's CPU backend is set to Triton and the generated kernels run in tessel's interpreter (the CI
path); on `cuda` (skipped without a GPU) inductor's default backend generates Triton kernels that tessel runs on
the GPU. Every kernel inductor generated must have been compiled by tessel.
"""

import json
import os
import pathlib
import sys

import pytest

from subprocesses import python_m_tessel

torch = pytest.importorskip("torch")

HERE = pathlib.Path(__file__).parent / "torch_models"
MODELS = ["mlp", "rmsnorm_swiglu", "attention", "reductions", "random", "ops", "user_kernel", "train_block", "train_hf"]


def _has_gpu():
    try:
        from tessel import _tessel

        return torch.cuda.is_available() and _tessel.gpu_target()[0] is not None
    except Exception:  # noqa: BLE001 - no usable GPU
        return False


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not _has_gpu(), reason="no GPU tessel can use"))]


def run_model(name, device, tmp_path, compile_threads=1):
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"), "TRITON_CACHE_DIR": str(tmp_path / "triton"),
           "TESSEL_TEST_COMPILE_THREADS": str(compile_threads)}
    r = python_m_tessel("models.py", name, device, cwd=HERE, env=env, timeout=600)
    lines = [line for line in r.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"no result (exit {r.returncode}):\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return json.loads(lines[-1][len("RESULT "):]), r


# Failures of work under way elsewhere, recognised by their message (anything else fails): none at present.
PENDING: dict[str, str] = {}


def _pending(error):
    return next((why for marker, why in PENDING.items() if marker in error), None)


def check(result, proc):
    if result.get("skip"):
        pytest.skip(result["skip"])
    error = result.get("error") or ""
    failed = (result.get("failed_ops") or {"": error}) if error else {}
    reasons = {_pending(e) for e in failed.values()}
    if failed and None not in reasons:
        pytest.xfail("; ".join(sorted(reasons)) + f" ({', '.join(sorted(failed))})")
    assert result["triton_is_tessel"], "triton.compile is not tessel's"
    assert not result["foreign"], f"modules of an installed Triton were loaded: {result['foreign']}"
    assert result["ok"], f"{result['error']}\n{result.get('traceback', '')}\n{proc.stderr[-3000:]}"
    assert result["launchers"], "inductor generated no Triton kernel"
    # Every kernel inductor launches is tessel's compiled kernel, and (compiled in this process) every kernel
    # inductor precompiled went through tessel's triton.compile (one compile per config).
    assert {cls for _, cls in result["launchers"]} == {"tessel.compiled.CompiledKernel"}
    if not result["workers"]:
        assert result["generated"] and sorted(result["compiled"]) == sorted(result["generated"])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("model", MODELS)
def test_model(model, device, tmp_path):
    check(*run_model(model, device, tmp_path))


@pytest.mark.parametrize("device", DEVICES)
def test_compile_workers(device, tmp_path):
    """inductor's compile worker processes (its SubprocPool) compile with tessel too: they get the shim from
    `python -m tessel`, compile the kernels with their module set (torch's triton_helpers), and the compiled
    kernels come back pickled."""
    result, proc = run_model("mlp", device, tmp_path, compile_threads=2)
    assert result["workers"] and not result["compiled"], "the kernels were not compiled in the workers"
    check(result, proc)
