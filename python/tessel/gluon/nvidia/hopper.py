"""`triton.experimental.gluon.nvidia.hopper`: Gluon's host tensor descriptors, which carry the shared-memory layout
of their block (an `NVMMASharedLayout`: the layout the TMA unit writes shared memory in, and the one a kernel
reads back as `desc.layout`).

    layout = gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    desc = TensorDescriptor.from_tensor(x, [64, 64], layout)
    im2col = TensorDescriptorIm2Col.from_tensor(x_nhwc, [64, 64], layout, pixel_box_lower_corner=[-1, -1],
                                                pixel_box_upper_corner=[-1, -1])

A descriptor is checked when built (Gluon's rules: rank, 16-byte alignment of the base and strides, a contiguous
last dimension, the layout's element width against the tensor's, the block against the swizzle), with a
ValueError or TypeError that says which rule.

Launched, a descriptor specializes the kernel on its element type, block shape, padding and layout (what
Triton's signature spells `tensordesc<fp16[64, 64],NVMMASharedLayout(...)>`), and passes its base, shape and
strides (an im2col one adds its pixel box's corners and element strides) as runtime arguments. tessel's compiler
gives a descriptor's block the layout `NVMMASharedLayout.get_default_for(block_shape, dtype)`; it cannot take
another one yet, so a descriptor built with a different layout is refused at launch with a NotImplementedError
that names both layouts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, List, Optional

from ... import language as _tl
from ..._memory import data_ptr, tensor_dtype_name
from ...tools import HostDescriptor, element_strides as _strides_of
from .._layouts import NVMMASharedLayout

__all__ = ["TensorDescriptor", "TensorDescriptorIm2Col"]

# torch's names of the fp8 types, as the kernel language names them.
_TL_NAMES = {"float8_e4m3fn": "float8e4nv", "float8_e5m2": "float8e5"}
# The pixel box's corners fit the tensor map's signed fields: 16 bits for 3-d tensors, 8 for 4-d, 5 for 5-d.
_CORNER_RANGE = {3: (-32768, 32767), 4: (-128, 127), 5: (-16, 15)}


def _dtype_of(base) -> _tl.dtype:
    name = tensor_dtype_name(base)
    try:
        return _tl.from_name(_TL_NAMES.get(name, name))
    except KeyError:
        raise TypeError(f"a tensor descriptor cannot view a tensor of {name}") from None


@functools.lru_cache(maxsize=None)
def _default_layout(block_shape: tuple, dtype_name: str) -> NVMMASharedLayout:
    return NVMMASharedLayout.get_default_for(list(block_shape), _tl.from_name(dtype_name))


def _check_common(d, where: str, dtype: _tl.dtype):
    """Gluon's checks of a descriptor, shared by both kinds."""
    rank = len(d.shape)
    if not 0 < rank <= 5:
        raise ValueError(f"{where}: a tensor descriptor has 1 to 5 dimensions, got shape {d.shape}")
    if len(d.strides) != rank:
        raise ValueError(f"{where}: strides {d.strides} and shape {d.shape} differ in rank")
    if any(s <= 0 for s in d.shape):
        raise ValueError(f"{where}: the shape {d.shape} must be positive")
    if d.strides[-1] != 1:
        raise ValueError(f"{where}: the last dimension must be contiguous (stride 1), got strides {d.strides}")
    nbytes = dtype.primitive_bitwidth // 8
    if nbytes == 0 or any(s * nbytes % 16 for s in d.strides[:-1]):
        raise ValueError(f"{where}: the strides {d.strides} of {dtype.name} must be multiples of 16 bytes")
    if data_ptr(d.base) % 16:
        raise ValueError(f"{where}: the tensor's address must be 16-byte aligned")
    if not isinstance(d.layout, NVMMASharedLayout):
        raise TypeError(f"{where}: the layout of a tensor descriptor must be an NVMMASharedLayout, got {d.layout!r}")
    if d.layout.element_bitwidth != dtype.primitive_bitwidth:
        raise ValueError(f"{where}: the layout {d.layout!r} is for {d.layout.element_bitwidth}-bit elements, the "
                         f"tensor's are {dtype.name}")
    if d.padding not in ("zero", "nan"):
        raise ValueError(f"{where}: padding must be 'zero' or 'nan', got {d.padding!r}")
    if d.padding == "nan" and not dtype.is_floating():
        raise ValueError(f"{where}: padding='nan' needs a floating-point tensor, got {dtype.name}")
    if d.round_f32_to_tf32:
        raise NotImplementedError(f"{where}: round_f32_to_tf32=True is not supported by tessel yet")
    # A block split over the CTAs of a cluster (the layout's cga_layout) is copied as each CTA's part: the box
    # is the part, at most 256 along each dimension.
    cga = getattr(d.layout, "cga_layout", None) or []
    parts = [1 << sum(1 for basis in cga if dim < len(basis) and basis[dim] != 0) for dim in range(len(d.block_shape))]
    if any(b <= 0 or b & (b - 1) or b // p > 256 for b, p in zip(d.block_shape, parts)):
        raise ValueError(f"{where}: block dimensions are powers of 2 up to 256 (per CTA of a cluster), got "
                         f"{d.block_shape}")
    least = d.layout.swizzle_byte_width // (nbytes * (2 if d.layout.fp4_padded else 1))
    if d.block_shape[-1] < least:
        raise ValueError(f"{where}: the layout's {d.layout.swizzle_byte_width}-byte swizzle needs a block of at least "
                         f"{least} elements in its last dimension, got {d.block_shape}")


@dataclass
class _GluonDescriptor(HostDescriptor):
    """The fields both kinds of Gluon descriptor have, in Gluon's order."""

    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    layout: NVMMASharedLayout
    padding: str = "zero"
    round_f32_to_tf32: bool = False

    def _layout_spelling(self) -> str:
        """The layout's spelling, after checking that it is the one tessel's compiler gives the block: Gluon's
        default for it, with any `cga_layout` (zero bases: every CTA of a cluster holds the whole block, as a
        multicast load delivers it; nonzero ones: each CTA holds and copies its part, as a cluster GEMM's
        operand split along M is)."""
        dtype = _dtype_of(self.base)
        default = _default_layout(tuple(self.block_shape), dtype.name)
        cga = getattr(self.layout, "cga_layout", None) or []
        if cga:
            default = NVMMASharedLayout.get_default_for(list(self.block_shape), _tl.from_name(dtype.name),
                                                        cga_layout=cga)
        if self.layout != default:
            raise NotImplementedError(
                f"{type(self).__name__} with layout {self.layout!r}: tessel's compiler gives a descriptor of a "
                f"{list(self.block_shape)} block of {dtype.name} the layout {default!r} "
                f"(NVMMASharedLayout.get_default_for), and cannot take another one yet")
        return self.layout._tessel_const_expr


@dataclass
class TensorDescriptor(_GluonDescriptor):
    def __post_init__(self):
        self.shape, self.strides = [int(s) for s in self.shape], [int(s) for s in self.strides]
        self.block_shape = [int(b) for b in self.block_shape]
        _check_common(self, "TensorDescriptor", _dtype_of(self.base))
        if len(self.block_shape) != len(self.shape):
            raise ValueError(f"TensorDescriptor: the block {self.block_shape} and the shape {self.shape} differ in "
                             "rank")

    @property
    def mode(self) -> str:
        return "tiled"

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], layout: NVMMASharedLayout, padding="zero",
                    round_f32_to_tf32=False):
        """A descriptor over all of `tensor` (a numpy array or torch tensor)."""
        return TensorDescriptor(tensor, list(tensor.shape), _strides_of(tensor), list(block_shape), layout,
                                padding, round_f32_to_tf32)

    def _tessel_spec(self) -> tuple:
        return ("desc", tensor_dtype_name(self.base), list(self.block_shape), self.padding == "nan",
                self._layout_spelling())

    def _tessel_runtime_ints(self) -> List[int]:
        return self.shape + self.strides


@dataclass
class TensorDescriptorIm2Col(_GluonDescriptor):
    """An im2col descriptor over a channels-last tensor (`[N, spatial..., C]`, 3 to 5 dims): each TMA load
    (`tma.async_load_im2col`) gathers a `[pixels, channels]` block, walking the pixel box (each spatial dim from
    `pixel_box_lower_corner` to its size plus `pixel_box_upper_corner`, in steps of `element_strides`)."""

    element_strides: Optional[List[int]] = None
    pixel_box_lower_corner: Optional[List[int]] = None
    pixel_box_upper_corner: Optional[List[int]] = None

    def __post_init__(self):
        where = "TensorDescriptorIm2Col"
        self.shape, self.strides = [int(s) for s in self.shape], [int(s) for s in self.strides]
        self.block_shape = [int(b) for b in self.block_shape]
        _check_common(self, where, _dtype_of(self.base))
        rank = len(self.shape)
        if rank not in _CORNER_RANGE:
            raise ValueError(f"{where}: im2col views a tensor of 3 to 5 dimensions, got shape {self.shape}")
        if len(self.block_shape) != 2:
            raise ValueError(f"{where}: the block is [pixels, channels], got {self.block_shape}")
        if self.element_strides is not None:
            self.element_strides = [int(s) for s in self.element_strides]
            if len(self.element_strides) != rank or any(not 0 < s <= 8 for s in self.element_strides):
                raise ValueError(f"{where}: element_strides has one stride from 1 to 8 per dimension of the tensor, "
                                 f"got {self.element_strides} for shape {self.shape}")
            if self.element_strides[-1] != 1:
                raise ValueError(f"{where}: the channels' element stride must be 1, got {self.element_strides}")
        lo, hi = _CORNER_RANGE[rank]
        for name in ("pixel_box_lower_corner", "pixel_box_upper_corner"):
            corner = getattr(self, name)
            if corner is None:
                raise ValueError(f"{where}: {name} is required (one offset per spatial dimension)")
            corner = [int(c) for c in corner]
            if len(corner) != rank - 2 or any(not lo <= c <= hi for c in corner):
                raise ValueError(f"{where}: {name} has {rank - 2} offsets in [{lo}, {hi}] for a {rank}-d tensor, "
                                 f"got {corner}")
            setattr(self, name, corner)

    @property
    def mode(self) -> str:
        return "im2col"

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], layout: NVMMASharedLayout, padding="zero",
                    round_f32_to_tf32=False, element_strides=None, pixel_box_lower_corner=None,
                    pixel_box_upper_corner=None):
        """An im2col descriptor over all of `tensor` (a channels-last numpy array or torch tensor)."""
        return TensorDescriptorIm2Col(tensor, list(tensor.shape), _strides_of(tensor),
                                      list(block_shape), layout, padding, round_f32_to_tf32, element_strides,
                                      pixel_box_lower_corner, pixel_box_upper_corner)

    def _tessel_spec(self) -> tuple:
        return ("desc_im2col", tensor_dtype_name(self.base), list(self.block_shape), len(self.shape),
                self.padding == "nan", self._layout_spelling())

    def _tessel_runtime_ints(self) -> List[int]:
        steps = self.element_strides or [1] * len(self.shape)
        return self.shape + self.strides + self.pixel_box_lower_corner + self.pixel_box_upper_corner + steps
