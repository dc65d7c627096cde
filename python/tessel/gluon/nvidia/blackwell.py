"""`triton.experimental.gluon.nvidia.blackwell`: the same host `TensorDescriptor` as `hopper`'s, as in Gluon."""

from .hopper import TensorDescriptor

__all__ = ["TensorDescriptor"]
