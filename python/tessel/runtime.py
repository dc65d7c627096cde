"""`triton.runtime.driver.active`: which device kernels run on.

With a GPU tessel can use (the CUDA driver found, sm_80 or newer) the target is `cuda` with the device's
architecture and the active torch device is `cuda`; without one, kernels run in the interpreter, the target's
backend is `cpu` and the active device is `cpu`, so scripts that allocate on that device run unmodified.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from . import _tessel


@dataclass(frozen=True)
class GPUTarget:
    backend: str
    arch: object
    warp_size: int


def gpu_target():
    """tessel's target for the GPU (`sm_90a`, ...), or None when kernels run in the interpreter."""
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        return None
    target, _why = _tessel.gpu_target()
    return target


class _ActiveDriver:
    def get_current_target(self):
        t = gpu_target()
        if t is None:
            return GPUTarget("cpu", "interpreter", 32)
        return GPUTarget("cuda", int(t[3:].rstrip("a")), 32)

    def get_active_torch_device(self):
        import torch

        return torch.device("cuda" if gpu_target() is not None else "cpu")

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        import torch

        return torch.cuda.current_stream().cuda_stream

    def is_active(self):
        return True


class _Driver:
    def __init__(self):
        self.active = _ActiveDriver()


driver = _Driver()
