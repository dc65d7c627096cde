"""`triton.experimental.gluon.language` (`gl`) on the host: dtypes, `constexpr`, annotations.

Layout classes, shared-memory and TMA builtins exist only inside kernels, which tessel compiles from source.
Host code that builds layouts (to pass them to a kernel as constexpr arguments) is not supported yet: a layout
cannot be passed as a compile-time argument through tessel's launcher; write it in the kernel or as a
module-level constant the kernel reads.
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


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    _host_only("triton.experimental.gluon.language", name)
