"""The GPU checks of `python/bench/gpu_check.py` under pytest: skipped (not failed) without torch, without a
CUDA device, or when tessel cannot use it."""

import importlib.util
import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import tessel  # noqa: E402

_target, _why = tessel._tessel.gpu_target()
if _target is None:
    pytest.skip(f"tessel cannot use the GPU: {_why}", allow_module_level=True)

_path = pathlib.Path(__file__).resolve().parent.parent / "bench" / "gpu_check.py"
_spec = importlib.util.spec_from_file_location("tessel_gpu_check", _path)
gpu_check = importlib.util.module_from_spec(_spec)
sys.modules["tessel_gpu_check"] = gpu_check
_spec.loader.exec_module(gpu_check)


@pytest.mark.parametrize("check", gpu_check.CHECKS, ids=lambda f: f.__name__)
def test_gpu(check):
    check()
