"""Host tensor descriptors: Triton's `triton.tools.tensor_descriptor.TensorDescriptor`.

A descriptor passed to a kernel's `tl.tensor_descriptor` parameter is specialized on its element type, block
shape and padding; its shape and strides are runtime values (tessel's `ArgSpec::TensorDesc`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List


@dataclass
class TensorDescriptor:
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
        if hasattr(tensor, "stride") and callable(tensor.stride):
            strides = list(tensor.stride())
        else:
            strides = [s // tensor.itemsize for s in tensor.strides]
        return TensorDescriptor(tensor, list(tensor.shape), strides, list(block_shape), padding)
