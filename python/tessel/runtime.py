"""`triton.runtime.driver.active`: which device kernels run on.

With a GPU tessel can use (the CUDA driver found, sm_80 or newer) the target is `cuda` with the device's
architecture and the active torch device is `cuda`; without one, kernels run in the interpreter, the target's
backend is `cpu` and the active device is `cpu`, so scripts that allocate on that device run unmodified.

`driver.active.utils.get_device_properties(device)` answers as Triton's does (the same keys), from torch's view
of the device when torch sees CUDA, else from the nominal figures of the architecture tessel targets
(`NOMINAL_PROPERTIES`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from . import _tessel
from ._timing import do_bench


@dataclass(frozen=True)
class GPUTarget:
    """Triton's `GPUTarget`: `backend` ("cuda", or "cpu" for tessel's interpreter), `arch` (the compute capability
    as an int, 90 for sm_90a; "interpreter" for the interpreter), `warp_size`."""

    backend: str
    arch: object
    warp_size: int

    def is_cuda_backend(self) -> bool:
        return self.backend == "cuda"

    def is_hip_backend(self) -> bool:
        return self.backend == "hip"


# The values of a boolean environment variable that mean on, as Triton's knobs read them (`TRITON_INTERPRET=false`
# is off).
TRUE_VALUES = frozenset({"1", "true", "on", "yes"})


def interpret_requested() -> bool:
    """Whether `TRITON_INTERPRET` asks for the interpreter."""
    return os.environ.get("TRITON_INTERPRET", "").strip().lower() in TRUE_VALUES


def gpu_target():
    """tessel's target for the GPU (`sm_90a`, ...), or None when kernels run in the interpreter."""
    if interpret_requested():
        return None
    target, _why = _tessel.gpu_target()
    return target


# What Triton's `get_device_properties` reports for the flagship part of each architecture tessel targets, used
# when torch cannot be asked (no torch, or no CUDA: the interpreter). max_shared_mem is the opt-in maximum per
# block (227 KiB on the H100, of its 228 KiB per SM), as Triton reports it; clocks in kHz, bus width in bits.
NOMINAL_PROPERTIES = {
    # A100 SXM
    80: dict(max_shared_mem=166912, max_num_regs=65536, multiprocessor_count=108, warpSize=32, sm_clock_rate=1410000,
             mem_clock_rate=1593000, mem_bus_width=5120),
    # H100 SXM
    90: dict(max_shared_mem=232448, max_num_regs=65536, multiprocessor_count=132, warpSize=32, sm_clock_rate=1980000,
             mem_clock_rate=2619000, mem_bus_width=5120),
    # B200
    100: dict(max_shared_mem=232448, max_num_regs=65536, multiprocessor_count=148, warpSize=32,
              sm_clock_rate=1965000, mem_clock_rate=3996000, mem_bus_width=8192),
}


def _arch_of(target):
    """90 for `sm_90a`, 80 for `sm_80`."""
    return int(target[3:].rstrip("a"))


def _torch_cuda():
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError:
            return None
    try:
        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - a torch without CUDA support
        return None


class _Utils:
    """`driver.active.utils`."""

    def get_device_properties(self, device=None):
        """The properties Triton's CUDA driver reports: max_shared_mem (opt-in bytes per block), max_num_regs
        (per block), multiprocessor_count, warpSize, sm_clock_rate and mem_clock_rate (kHz), mem_bus_width
        (bits)."""
        torch = _torch_cuda()
        if torch is not None:
            index = device if device is not None else torch.cuda.current_device()
            p = torch.cuda.get_device_properties(index)
            nominal = NOMINAL_PROPERTIES.get(p.major * 10, NOMINAL_PROPERTIES[90])

            def prop(name, fallback):
                v = getattr(p, name, None)
                return int(v) if v is not None else fallback

            return {
                "max_shared_mem": prop("shared_memory_per_block_optin", nominal["max_shared_mem"]),
                "max_num_regs": prop("regs_per_multiprocessor", nominal["max_num_regs"]),
                "multiprocessor_count": int(p.multi_processor_count),
                "warpSize": prop("warp_size", 32),
                "sm_clock_rate": prop("clock_rate", nominal["sm_clock_rate"]),
                "mem_clock_rate": prop("memory_clock_rate", nominal["mem_clock_rate"]),
                "mem_bus_width": prop("memory_bus_width", nominal["mem_bus_width"]),
            }
        target = gpu_target()
        arch = _arch_of(target) if target is not None else 90
        return dict(NOMINAL_PROPERTIES.get(arch, NOMINAL_PROPERTIES[90]))


    def cuOccupancyMaxActiveClusters(self, func, shared, cluster_dim):  # noqa: N802 - Triton's name
        """How many clusters of `cluster_dim` CTAs of kernel `func` (a compiled kernel's `function`) the current
        device holds at once: the grid of a persistent cluster kernel, which can be less than the SMs divided by
        `cluster_dim` (a cluster's CTAs share a GPC). Triton's signature; `shared` is the kernel's own dynamic
        shared memory, and `cluster_dim` must be the `num_ctas` it was compiled for."""
        native = getattr(func, "native", func)
        want = getattr(native, "num_ctas", None)
        if want is not None and cluster_dim != want:
            raise ValueError(f"cuOccupancyMaxActiveClusters: the kernel's clusters are {want} CTAs, not {cluster_dim}")
        torch = _torch_cuda()
        if torch is None:
            raise RuntimeError("cuOccupancyMaxActiveClusters needs a CUDA device")
        return native.max_active_clusters(torch.cuda.current_device())


class _ActiveDriver:
    def __init__(self):
        self.utils = _Utils()

    def get_current_target(self):
        t = gpu_target()
        if t is None:
            return GPUTarget("cpu", "interpreter", 32)
        return GPUTarget("cuda", _arch_of(t), 32)

    def get_active_torch_device(self):
        import torch

        if gpu_target() is None:
            return torch.device("cpu")
        return torch.device("cuda", torch.cuda.current_device())

    def get_device_interface(self):
        import torch

        return torch.cuda

    def get_current_device(self):
        torch = _torch_cuda()
        return torch.cuda.current_device() if torch is not None else 0

    def set_current_device(self, device):
        import torch

        torch.cuda.set_device(device)

    def get_current_stream(self, device=None):
        import torch

        return torch.cuda.current_stream(device).cuda_stream

    def get_benchmarker(self):
        return do_bench

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")

    def clear_cache(self, cache):
        cache.zero_()

    def is_active(self):
        return True


class _Driver:
    def __init__(self):
        self.active = _ActiveDriver()
        self.default = self.active

    def set_active(self, driver):
        self.active = driver

    def reset_active(self):
        self.active = self.default


driver = _Driver()
