"""`triton.experimental.gluon.language` (`gl`) on the host: dtypes, `constexpr`, annotations, and the layout
classes (`gl.BlockedLayout(...)`, `gl.NVMMASharedLayout.get_default_for(...)`), which host code builds and passes
to kernels as compile-time arguments (see `_layouts`); `gl.nvidia` holds Gluon's NVIDIA namespaces
(`gl.nvidia.hopper.tma`, ...; see `_namespaces`).

Shared-memory, mbarrier, TMA and wgmma builtins exist only inside kernels, which tessel compiles from source.
"""

import sys as _sys

from ..language import (  # noqa: F401 - re-exported names
    bfloat16,
    constexpr,
    constexpr_function,
    dtype,
    float8e4nv,
    float8e5,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    tensor,
    tensor_descriptor,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ..language import _annotation, _host_only
from ._layouts import (  # noqa: F401 - re-exported names
    AutoLayout,
    BlockedLayout,
    CoalescedLayout,
    DistributedLayout,
    DistributedLinearLayout,
    DotOperandLayout,
    NVMMADistributedLayout,
    NVMMASharedLayout,
    PaddedSharedLayout,
    SharedLayout,
    SharedLinearLayout,
    SliceLayout,
    SwizzledSharedLayout,
)
from . import _namespaces

# Types that appear in annotations (aggregate fields: `bufs: gl.shared_memory_descriptor`).
shared_memory_descriptor = _annotation("triton.experimental.gluon.language", "shared_memory_descriptor")
distributed_type = _annotation("triton.experimental.gluon.language", "distributed_type")
tuple = _annotation("triton.experimental.gluon.language", "tuple")  # noqa: A001 - Gluon's name

_namespaces.register(_sys.modules[__name__])


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    _host_only("triton.experimental.gluon.language", name)
