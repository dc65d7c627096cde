"""Gluon's NVIDIA namespaces on the host: `triton.experimental.gluon.language.nvidia.{ampere,hopper,blackwell}`
and their submodules (`hopper.tma`, `hopper.mbarrier`, `ampere.async_copy`, ...), also importable as
`tessel.gluon.language.nvidia....`.

Host code imports names from them at module level (`from ...nvidia.hopper import tma, mbarrier,
warpgroup_mma`) and uses a few in annotations (`acc: warpgroup_mma_accumulator`, `a_desc: tma.tensor_descriptor`)
before any kernel is compiled. Each module here therefore has every public name Gluon's has (the names, not the
implementations):

* builtins of the kernel language exist and raise when called on the host; tessel compiles them from the
  kernel's source, and a builtin tessel does not implement (Blackwell's `tcgen05_mma`, ...) is a compile error
  with a span where a kernel uses it, not an ImportError in the script;
* types are classes for annotations (see `tessel.language._annotation`);
* layout classes are the host layouts of `_layouts` (`mbarrier.MBarrierLayout()`,
  `blackwell.TensorMemoryLayout(...)`), built and checked by tessel's binder.

A name Gluon does not have is an AttributeError (an ImportError in `from ... import`), as with Gluon.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types

from ..language import _annotation, _kernel_only
from . import _layouts

ROOT = "triton.experimental.gluon.language"
TESSEL_ROOT = "tessel.gluon.language"

_MBARRIER = ["allocate_mbarrier", "init", "invalidate", "wait", "arrive", "expect"]
_TMA = ["async_load", "async_load_im2col", "async_store", "async_copy_global_to_shared",
        "async_copy_global_to_shared_im2col", "async_copy_shared_to_global", "async_atomic_add", "async_atomic_min",
        "async_atomic_max", "async_atomic_and", "async_atomic_or", "async_atomic_xor", "store_wait",
        "make_tensor_descriptor"]

# Module (relative to ROOT) -> (kernel builtins, annotation types, host layout classes, submodules it re-exports:
# attribute -> module relative to ROOT). Modules are built in this order, so a module's submodules come first.
TABLE = {
    "nvidia.ampere.async_copy": (
        ["async_copy_global_to_shared", "async_load", "mbarrier_arrive", "commit_group", "wait_group"], [], [], {}),
    "nvidia.ampere.mbarrier": (_MBARRIER, [], [_layouts.MBarrierLayout], {}),
    "nvidia.ampere": (["mma_v2"], [], [], {"async_copy": "nvidia.ampere.async_copy",
                                         "mbarrier": "nvidia.ampere.mbarrier"}),
    "nvidia.hopper.mbarrier": (_MBARRIER, [], [_layouts.MBarrierLayout], {}),
    "nvidia.hopper.tma": (_TMA, ["tensor_descriptor", "tensor_descriptor_im2col"], [], {}),
    "nvidia.hopper.cluster": (["barrier"], [], [], {}),
    "nvidia.hopper": (
        ["fence_async_shared", "warpgroup_mma_init", "warpgroup_mma", "warpgroup_mma_wait"],
        ["warpgroup_mma_accumulator"], [],
        {"async_copy": "nvidia.ampere.async_copy", "mbarrier": "nvidia.hopper.mbarrier", "tma": "nvidia.hopper.tma",
         "cluster": "nvidia.hopper.cluster"}),
    "nvidia.blackwell.tma": (_TMA + ["async_gather", "async_scatter"],
                             ["tensor_descriptor", "tensor_descriptor_im2col", "tensor_descriptor_type"], [], {}),
    "nvidia.blackwell.clc": (["try_cancel", "load_result"], ["clc_result"], [], {}),
    "nvidia.blackwell": (
        ["allocate_tensor_memory", "tcgen05_mma", "tcgen05_mma_scaled", "tcgen05_commit", "tcgen05_copy",
         "tcgen05_mma_barrier_count", "fence_async_shared", "mma_v2", "add2", "sub2", "mul2", "fma2", "min2", "max2",
         "get_tmem_reg_layout", "get_tmem_32x32b_reg_layout"],
        ["tensor_memory_descriptor"], [_layouts.TensorMemoryLayout, _layouts.TensorMemoryScalesLayout],
        {"async_copy": "nvidia.ampere.async_copy", "mbarrier": "nvidia.hopper.mbarrier", "tma": "nvidia.blackwell.tma",
         "clc": "nvidia.blackwell.clc", "cluster": "nvidia.hopper.cluster"}),
    "nvidia": ([], [], [], {"ampere": "nvidia.ampere", "hopper": "nvidia.hopper", "blackwell": "nvidia.blackwell"}),
}


class _Loader:
    """The loader named by these modules' specs: they are created complete (see `shim._ShimLoader`)."""

    @staticmethod
    def create_module(spec):
        return sys.modules.get(spec.name)

    @staticmethod
    def exec_module(module):
        pass


def _package(name: str, doc: str) -> types.ModuleType:
    m = types.ModuleType(name, doc)
    m.__path__ = []
    m.__spec__ = importlib.machinery.ModuleSpec(name, _Loader, is_package=True)
    m.__loader__ = _Loader
    m.__package__ = name
    return m


def _build() -> dict:
    """The modules of TABLE, by name relative to ROOT."""
    built = {}
    for rel, (builtins, types_, layouts, submodules) in TABLE.items():
        full = f"{ROOT}.{rel}"
        m = _package(f"{TESSEL_ROOT}.{rel}", f"{full} on the host: names for imports and annotations (kernels are "
                                              "compiled from their source by tessel)")
        for name in builtins:
            setattr(m, name, _kernel_only(full, name))
        for name in types_:
            setattr(m, name, _annotation(full, name))
        for cls in layouts:
            setattr(m, cls.__name__, cls)
        for attr, sub in submodules.items():
            setattr(m, attr, built[sub])
        m.__all__ = sorted(builtins + types_ + [c.__name__ for c in layouts] + list(submodules))
        built[rel] = m
    return built


MODULES = _build()


def register(language_module) -> None:
    """Makes the modules importable under `tessel.gluon.language` (`language_module`), whose `nvidia` they
    become."""
    for rel, m in MODULES.items():
        sys.modules.setdefault(f"{TESSEL_ROOT}.{rel}", m)
    language_module.nvidia = MODULES["nvidia"]
