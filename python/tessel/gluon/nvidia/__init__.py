"""`triton.experimental.gluon.nvidia`: Gluon's host-side NVIDIA objects (tensor descriptors, in `hopper`; `blackwell`
has the same `TensorDescriptor`)."""

from . import blackwell, hopper

__all__ = ["blackwell", "hopper"]
