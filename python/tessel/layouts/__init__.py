"""F2 linear layouts from Python: build a layout from its Gluon spelling and a tensor shape, evaluate, compose and
invert it, plan a conversion between two layouts, run the plan on data, and count shared-memory bank conflicts.

    from tessel.layouts import BlockedLayout, Layout, check_conversion, plan_conversion

    row = Layout(BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]), shape=[64, 128])
    col = Layout("BlockedLayout([8,1],[8,4],[1,4],[0,1])", shape=[64, 128])
    row.apply(register=1, lane=2)        # (0, 17): the coordinates (dim0, dim1) of that element
    plan = plan_conversion(row, col, 16)  # plan.kind == "shared", plan.store_conflicts == plan.load_conflicts == 0
    check_conversion(row, col, 16).ok    # True: every element lands where `col` puts it

`tessel.layouts.strategies` has Hypothesis strategies for layouts and their parameters (Hypothesis is needed only
there). Errors are `LayoutError` (a `ValueError`) with the layout library's message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .. import _tessel
from .._tessel import LayoutError

__all__ = [
    "BankReport", "BlockedLayout", "ConversionCheck", "ConversionPlan", "DotOperandLayout", "Layout", "LayoutError",
    "NVMMADistributedLayout", "NVMMASharedLayout", "SliceLayout", "SwizzledSharedLayout", "bank_conflicts",
    "check_conversion", "plan_conversion", "transposed_blocked",
]


# ----- spellings -----


def _render(v: Any) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_render(x) for x in v) + "]"
    if isinstance(v, str):  # a nested layout's spelling, or a name such as `gl.float16`
        return v
    if isinstance(v, int):
        return str(v)
    raise TypeError(f"cannot spell {v!r} in a layout expression")


def _spell(name: str, *args: Any, **kwargs: Any) -> str:
    parts = [_render(a) for a in args] + [f"{k}={_render(v)}" for k, v in kwargs.items() if v is not None]
    return f"{name}({','.join(parts)})"


def BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta, order, **kwargs) -> str:  # noqa: N802
    """The spelling of Gluon's `BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta, order)`."""
    return _spell("BlockedLayout", size_per_thread, threads_per_warp, warps_per_cta, order, **kwargs)


def SliceLayout(dim, parent) -> str:  # noqa: N802
    """The spelling of Gluon's `SliceLayout(dim, parent)` (`parent` a spelling)."""
    return _spell("SliceLayout", dim, parent)


def DotOperandLayout(operand_index, parent, k_width) -> str:  # noqa: N802
    """The spelling of Gluon's `DotOperandLayout(operand_index, parent, k_width)`."""
    return _spell("DotOperandLayout", operand_index, parent, k_width)


def NVMMADistributedLayout(version, warps_per_cta, instr_shape, **kwargs) -> str:  # noqa: N802
    """The spelling of Gluon's `NVMMADistributedLayout(version, warps_per_cta, instr_shape)`."""
    return _spell("NVMMADistributedLayout", version, warps_per_cta, instr_shape, **kwargs)


def SwizzledSharedLayout(vec, per_phase, max_phase, order, **kwargs) -> str:  # noqa: N802
    """The spelling of Gluon's `SwizzledSharedLayout(vec, per_phase, max_phase, order)`."""
    return _spell("SwizzledSharedLayout", vec, per_phase, max_phase, order, **kwargs)


def NVMMASharedLayout(swizzle_byte_width, element_bitwidth, rank=None, transposed=None, **kwargs) -> str:  # noqa: N802
    """The spelling of Gluon's `NVMMASharedLayout(swizzle_byte_width, element_bitwidth, rank=2, transposed=False)`."""
    return _spell("NVMMASharedLayout", swizzle_byte_width, element_bitwidth, rank=rank, transposed=transposed,
                  **kwargs)


def transposed_blocked(size_per_thread, threads_per_warp, warps_per_cta, order=None) -> str:
    """The spelling of the blocked layout that is `BlockedLayout(...)` with its dims swapped (rank 2): every
    parameter list reversed, and the order reversed too, so that the other dim is contiguous."""
    order = list(order) if order is not None else [1, 0]
    return BlockedLayout(list(size_per_thread)[::-1], list(threads_per_warp)[::-1], list(warps_per_cta)[::-1],
                         [1 - o for o in order])


# ----- layouts -----


class Layout:
    """An F2 linear layout: named in-dims (`register`, `lane`, `warp`, `block`, or `offset` for shared memory) to
    the tensor's dims (`dim0`, `dim1`, ...).

    `Layout("BlockedLayout([1,4],[8,4],[4,1],[1,0])", shape=[64, 128])` is the layout a Gluon spelling gives a
    tensor of `shape` (which may be left out when the spelling implies one, e.g. a `DistributedLinearLayout`).
    """

    __slots__ = ("_native", "spelling")

    def __init__(self, spelling: str, shape: Sequence[int] | None = None):
        self.spelling = spelling
        self._native = _tessel.LinearLayout.parse(spelling, None if shape is None else [int(s) for s in shape])

    @classmethod
    def _of(cls, native, spelling: str | None = None) -> Layout:
        layout = cls.__new__(cls)
        layout._native = native
        layout.spelling = spelling
        return layout

    @classmethod
    def from_bases(cls, bases: Mapping[str, Sequence[Sequence[int]]], out_dims: Mapping[str, int]) -> Layout:
        """The layout with these bases (in-dim → list of basis vectors, one coordinate per out-dim) and out-dims
        (name → size, a power of two)."""
        native = _tessel.LinearLayout.from_bases(
            [(k, [list(b) for b in v]) for k, v in bases.items()], list(out_dims.items()))
        return cls._of(native)

    # -- structure --

    def bases(self) -> dict[str, list[list[int]]]:
        """In-dim → its basis vectors: basis `i` is where bit `i` of that index goes (one coordinate per out-dim)."""
        return dict(self._native.bases())

    @property
    def in_dims(self) -> dict[str, int]:
        """In-dim → size."""
        return dict(self._native.in_dims())

    @property
    def out_dims(self) -> dict[str, int]:
        """Out-dim → size."""
        return dict(self._native.out_dims())

    @property
    def shape(self) -> tuple[int, ...]:
        """The sizes of the out-dims (the tensor's shape for a layout built from a spelling)."""
        return tuple(n for _, n in self._native.out_dims())

    # -- evaluation and algebra --

    def apply(self, **indices: int) -> tuple[int, ...]:
        """The coordinates (one per out-dim) of the element at these indices, e.g. `apply(register=1, lane=5)`;
        in-dims left out are 0."""
        return tuple(self._native.apply([(k, int(v)) for k, v in indices.items()]))

    __call__ = apply

    def compose(self, outer: Layout) -> Layout:
        """`outer ∘ self`: this layout's out-dims must be `outer`'s in-dims."""
        return Layout._of(self._native.compose(outer._native))

    def invert(self) -> Layout:
        """The inverse of a bijective layout (out-dims become in-dims)."""
        return Layout._of(self._native.invert())

    def is_injective(self) -> bool:
        return self._native.is_injective()

    def is_surjective(self) -> bool:
        return self._native.is_surjective()

    def is_invertible(self) -> bool:
        return self._native.is_invertible()

    def equivalent(self, other: Layout) -> bool:
        """Whether both map every input to the same output (zero bases and dims of size 1 aside)."""
        return self._native.equivalent(other._native)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._native == other._native

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return str(self._native)

    def __repr__(self) -> str:
        if self.spelling is not None:
            return f"Layout({self.spelling!r}, shape={list(self.shape)})"
        return f"Layout.from_bases({self.bases()!r}, {self.out_dims!r})"


def _layout(x: Layout | str, shape: Sequence[int] | None) -> Layout:
    if isinstance(x, Layout):
        return x
    if isinstance(x, str):
        return Layout(x, shape)
    raise TypeError(f"expected a Layout or a layout spelling, got {type(x).__name__}")


# ----- conversions -----


@dataclass(frozen=True)
class ConversionPlan:
    """How a conversion moves data: `kind` is `noop`, `registers` (a permutation within each thread), `shuffle`
    (between the lanes of a warp) or `shared` (a round trip through shared memory); for `shared`, `vector_width`
    elements per access, the bank conflicts of the stores and the loads (wavefronts beyond the ideal, over one
    CTA), the scratch bytes per CTA and the repetitions. `text` is the plan as `tessel layout convert` prints it."""

    kind: str
    vector_width: int
    access_bytes: int
    store_conflicts: int
    load_conflicts: int
    scratch_bytes: int
    reps: int
    barrier: str | None
    shuffles: int
    shared_stores: int
    shared_loads: int
    barriers: int
    elem_bits: int
    text: str = field(repr=False)

    @property
    def conflicts(self) -> int:
        """Bank conflicts of the stores and the loads together."""
        return self.store_conflicts + self.load_conflicts

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class ConversionCheck:
    """The outcome of running a conversion plan on data: `ok` when every destination register holds the element
    the destination layout puts there; otherwise `message` explains the first wrong one."""

    ok: bool
    message: str | None
    plan: ConversionPlan

    def __bool__(self) -> bool:
        return self.ok


def plan_conversion(src: Layout | str, dst: Layout | str, bits: int, *, shape: Sequence[int] | None = None,
                    max_scratch_bytes: int | None = None, allow_shuffles: bool = True) -> ConversionPlan:
    """Plans the conversion of a tensor from layout `src` to layout `dst` for `bits`-bit elements (spellings
    need `shape`)."""
    s, d = _layout(src, shape), _layout(dst, shape)
    return ConversionPlan(**_tessel.plan_conversion(s._native, d._native, int(bits), max_scratch_bytes,
                                                    allow_shuffles))


def check_conversion(src: Layout | str, dst: Layout | str, bits: int, *, shape: Sequence[int] | None = None,
                     seed: int = 0, cases: int = 1, max_scratch_bytes: int | None = None,
                     allow_shuffles: bool = True, _corrupt: bool = False) -> ConversionCheck:
    """Plans the conversion, runs the plan on `cases` tensors of random `bits`-bit values and checks that every
    element lands where `dst` puts it. A conversion the planner refuses (different shapes, ...) raises
    `LayoutError`. `_corrupt=True` is a test hook: it redirects one data movement of the plan on purpose."""
    s, d = _layout(src, shape), _layout(dst, shape)
    ok, message, plan = _tessel.check_conversion(s._native, d._native, int(bits), int(seed), int(cases),
                                                 max_scratch_bytes, allow_shuffles, _corrupt)
    return ConversionCheck(ok, message, ConversionPlan(**plan))


@dataclass(frozen=True)
class BankReport:
    """Bank conflicts of moving a tensor between registers and shared memory, over one CTA: `conflicts` are the
    wavefronts beyond the ideal."""

    conflicts: int
    wavefronts: int
    ideal_wavefronts: int
    vector_width: int
    bytes_per_access: int
    instructions: int
    max_conflicts_per_instruction: int


def bank_conflicts(dist: Layout | str, shared: Layout | str, bits: int, *,
                   shape: Sequence[int] | None = None) -> BankReport:
    """Bank conflicts of storing a tensor laid out in registers by `dist` into shared memory laid out by
    `shared` (or loading it back), for `bits`-bit elements."""
    d, s = _layout(dist, shape), _layout(shared, shape)
    return BankReport(**_tessel.bank_conflicts(d._native, s._native, int(bits)))
