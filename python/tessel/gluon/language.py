"""`triton.experimental.gluon.language` (`gl`) on the host: dtypes, `constexpr`, annotations, and the layout
classes (`gl.BlockedLayout(...)`, `gl.NVMMASharedLayout.get_default_for(...)`), which host code builds and passes
to kernels as compile-time arguments (see `_layouts`).

Shared-memory, mbarrier, TMA and wgmma builtins exist only inside kernels, which tessel compiles from source.
"""

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
from ..language import _host_only
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


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    _host_only("triton.experimental.gluon.language", name)
