"""Host tensor descriptors: Triton's `triton.tools.tensor_descriptor.TensorDescriptor`.

A descriptor passed to a kernel's `tl.tensor_descriptor` parameter is specialized on its element type, block
shape and padding; its shape and strides are runtime values (tessel's `ArgSpec::TensorDesc`).

Every host descriptor (this one, and Gluon's in `tessel.gluon.nvidia.hopper`) is a `HostDescriptor`: the
launcher asks it for its specialization (`_tessel_spec`) and for the integers that follow its base address among
the kernel's runtime arguments (`_tessel_runtime_ints`), and the autotuner for a copy (`_tessel_copy`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, List


class HostDescriptor:
    """A tensor descriptor built on the host: a view of `base` (a numpy array or torch tensor)."""

    base: Any

    def _tessel_spec(self) -> tuple:
        """The specialization, as `tessel._tessel.compile` takes it: `("desc", dtype, block_shape, padding_nan,
        ...)`."""
        raise NotImplementedError

    def _tessel_runtime_ints(self) -> List[int]:
        """The kernel's runtime arguments after the base address: shape, strides, and what the kind adds."""
        raise NotImplementedError

    def _tessel_copy(self):
        """A copy whose lists are copies (an autotuner pre-hook may change the copy's `block_shape`)."""
        lists = {f.name: list(getattr(self, f.name)) for f in dataclasses.fields(self)
                 if isinstance(getattr(self, f.name), list)}
        return dataclasses.replace(self, **lists)


@dataclass
class TensorDescriptor(HostDescriptor):
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self):
        rank = len(self.shape)
        if not (len(self.strides) == len(self.block_shape) == rank):
            raise ValueError("shape, strides and block_shape must have the same rank")
        if rank and self.strides[-1] != 1:
            raise ValueError("the last dimension of a tensor descriptor must be contiguous (stride 1)")
        if self.padding not in ("zero", "nan"):
            raise ValueError("padding must be 'zero' or 'nan'")
        self.shape = [int(d) for d in self.shape]
        self.strides = [int(s) for s in self.strides]
        self.block_shape = [int(b) for b in self.block_shape]

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding="zero"):
        """A descriptor over all of `tensor` (numpy array or torch tensor; strides in elements)."""
        return TensorDescriptor(tensor, list(tensor.shape), element_strides(tensor), list(block_shape), padding)

    def _tessel_spec(self) -> tuple:
        from ._memory import tensor_dtype_name

        return ("desc", tensor_dtype_name(self.base), list(self.block_shape), self.padding == "nan")

    def _tessel_runtime_ints(self) -> List[int]:
        return [int(d) for d in self.shape] + [int(s) for s in self.strides]


def element_strides(tensor) -> List[int]:
    """The strides of a numpy array or torch tensor, in elements."""
    if hasattr(tensor, "stride") and callable(tensor.stride):
        return [int(s) for s in tensor.stride()]
    return [s // tensor.itemsize for s in tensor.strides]
