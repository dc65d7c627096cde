"""Gluon's layout classes on the host (`gl.BlockedLayout(...)`, `gl.NVMMASharedLayout.get_default_for(...)`), so
that host code builds layouts and passes them to kernels as compile-time arguments, as it does with Triton.

A layout object keeps the arguments it was built with as attributes (`layout.order`), as Triton's dataclasses
do, and is checked and spelled by tessel's layout binder (`tessel_layouts::expr`, the one the compiler, the IR
text and `tessel compile --const` use: the same parameter names, defaults and checks): a bad parameter raises
`tessel.layouts.LayoutError` (a ValueError) when the layout is built. Passed to a kernel, the compiler receives
the layout's canonical spelling (`_tessel_const_expr`, `BlockedLayout([1,4],[8,4],[4,1],[1,0])`) and evaluates it
in the kernel's module, the constant `--const 'layout=gl.BlockedLayout(...)'` builds; two layouts are equal (and
share a compiled specialization) when their spellings are.
"""

from __future__ import annotations

import inspect

from .. import _tessel
from .. import language as _tl

_REQUIRED = inspect.Parameter.empty
# Triton 3.5's CTA parameters, which the binder still accepts (and turns into `cga_layout`).
_LEGACY_CGA = ("ctas_per_cga", "cta_split_num", "cta_order")


def _value(v):
    """A constructor argument as plain Python (a `gl.constexpr` unwrapped, tuples as lists)."""
    v = v.value if isinstance(v, _tl.constexpr) else v
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    return v


def _render(v, where: str) -> str:
    """`v` in the layout expression language."""
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_render(x, where) for x in v) + "]"
    if isinstance(v, _Layout):
        return v._tessel_const_expr
    if isinstance(v, _tl.dtype):
        return v.name
    raise TypeError(f"{where}: cannot use {v!r} ({type(v).__name__}) in a layout")


# What the compiler made of each layout source (`_tessel.gluon_layout`): host code builds the same layouts
# around every launch (tutorial 05's `get_default_for` per call), so each source is bound once per process.
_BOUND = {}
_BOUND_MAX = 4096
# Layouts made from arguments that freeze (`_frozen`): (their fields, their spelling), by class and arguments.
_MADE = {}


_UNFROZEN = object()  # what `_frozen` gives for a value that cannot be part of a key


def _frozen(v):
    """`v` as a hashable key when it holds only ints, bools, None, strings, dtypes and layouts in tuples and
    lists (a list freezes apart from a tuple of the same items, a bool apart from an int), else `_UNFROZEN`."""
    t = type(v)
    if t is int or t is str or v is None:
        return v
    if t is list or t is tuple:
        out = [t]
        for x in v:
            if type(x) is not int:  # flat lists of ints, the common case, take no call per item
                x = _frozen(x)
                if x is _UNFROZEN:
                    return _UNFROZEN
            out.append(x)
        return tuple(out)
    if t is bool:
        return ("bool", v)
    if isinstance(v, type) and issubclass(v, _Layout):
        return v
    if isinstance(v, _Layout):
        return (type(v), v._tessel_const_expr)
    if isinstance(v, _tl.dtype):
        return ("dtype", v.name)
    if isinstance(v, _tl.constexpr):
        inner = _frozen(v.value)
        return _UNFROZEN if inner is _UNFROZEN else ("constexpr", inner)
    return _UNFROZEN


def _copied(v):
    """`v` with its lists copied (a layout's fields are its own, as when it is built)."""
    if type(v) is not list:
        return v
    return [x if type(x) is not list else _copied(x) for x in v]


def _fill(layout, made):
    """Gives `layout` the fields and spelling of a `_MADE` entry (its lists copied: a layout's fields are its own)."""
    fields, spelling = made
    d = layout.__dict__
    for name, value in fields:
        d[name] = _copied(value) if type(value) is list else value
    d["_tessel_const_expr"] = spelling


def _made_key(cls, args, kwargs):
    """`_MADE`'s key for a constructor call: flat in the common case (every argument an int, a string, None or a
    flat list or tuple of ints; each list opens with its type and closes with None, keyword arguments follow their
    names, so no two calls share one), else `_frozen`'s."""
    out = [cls, len(args)]
    for v in args:
        if not _flat_into(out, v):
            return _frozen((cls, args, tuple(kwargs.items())))
    for k, v in kwargs.items():
        out.append(k)
        if not _flat_into(out, v):
            return _frozen((cls, args, tuple(kwargs.items())))
    return tuple(out)


def _flat_into(out, v):
    """Appends `v` to `out` for `_made_key`; False when `v` is not an int, a string, None or a flat list of ints."""
    t = type(v)
    if t is list or t is tuple:
        for x in v:
            if type(x) is not int:
                return False
        out.append(t)
        out.extend(v)
        out.append(None)
        return True
    if t is int or t is str or v is None:
        out.append(v)
        return True
    return False


class _Layout:
    """A Gluon layout built on the host; subclasses name their constructor's parameters (`_params`: (name,
    default) pairs, `_REQUIRED` for none) in Gluon's order."""

    _params: tuple = ()
    _signature: inspect.Signature

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d) for n, d in cls._params]
        if any(n == "cga_layout" for n, _ in cls._params):
            params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in _LEGACY_CGA]
        cls._signature = inspect.Signature(params)

    def __init__(self, *args, **kwargs):
        # Host code builds the same layouts around every launch: a layout made before from equal arguments is
        # copied (its fields and spelling), not bound and rendered again.
        key = _made_key(type(self), args, kwargs)
        made = _MADE.get(key) if key is not _UNFROZEN else None
        if made is not None:
            _fill(self, made)
            return
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"gl.{type(self).__name__}: {e}") from None
        given = {k: _value(v) for k, v in bound.arguments.items()}
        for name, default in self._params:
            default = [] if name == "cga_layout" else list(default) if isinstance(default, list) else default
            object.__setattr__(self, name, given.get(name, default))
        where = f"gl.{type(self).__name__}"
        args = ", ".join(f"{k}={_render(v, where)}" for k, v in given.items() if v is not None)
        self._bind(f"{type(self).__name__}({args})")
        if key is not _UNFROZEN and len(_MADE) < _BOUND_MAX:
            _MADE[key] = (tuple((n, _copied(getattr(self, n))) for n, _ in self._params), self._tessel_const_expr)

    def _bind(self, source: str):
        bound = _BOUND.get(source)
        if bound is None:
            bound = _tessel.gluon_layout(source)
            if len(_BOUND) < _BOUND_MAX:
                _BOUND[source] = bound
        spelling, kind, fields = bound
        fields = dict(fields) if isinstance(fields, dict) else fields
        if kind != self._kind():
            raise TypeError(f"`{source}` is a {kind}, not a {self._kind()}")
        object.__setattr__(self, "_tessel_const_expr", spelling)
        return fields

    @classmethod
    def _kind(cls) -> str:
        """The layout the binder builds for this class (its own name, except for aliases of another layout)."""
        return cls.__name__

    def __setattr__(self, name, value):
        raise AttributeError(f"gl.{type(self).__name__} is immutable (as Gluon's layouts are)")

    def __eq__(self, other):
        return type(self) is type(other) and self._tessel_const_expr == other._tessel_const_expr

    def __hash__(self):
        return hash((type(self).__name__, self._tessel_const_expr))

    def __repr__(self):
        return self._tessel_const_expr


class DistributedLayout(_Layout):
    """A layout of a tensor in registers (the base of `BlockedLayout`, `SliceLayout`, ...)."""


class SharedLayout(_Layout):
    """A layout of a buffer in shared memory (the base of `NVMMASharedLayout`, `SwizzledSharedLayout`, ...)."""


class BlockedLayout(DistributedLayout):
    _params = (("size_per_thread", _REQUIRED), ("threads_per_warp", _REQUIRED), ("warps_per_cta", _REQUIRED),
               ("order", _REQUIRED), ("cga_layout", None))


class SliceLayout(DistributedLayout):
    _params = (("dim", _REQUIRED), ("parent", _REQUIRED))


class DistributedLinearLayout(DistributedLayout):
    _params = (("reg_bases", _REQUIRED), ("lane_bases", _REQUIRED), ("warp_bases", _REQUIRED),
               ("block_bases", _REQUIRED), ("shape", _REQUIRED))


class DotOperandLayout(DistributedLayout):
    _params = (("operand_index", _REQUIRED), ("parent", _REQUIRED), ("k_width", _REQUIRED))


class NVMMADistributedLayout(DistributedLayout):
    _params = (("version", _REQUIRED), ("warps_per_cta", _REQUIRED), ("instr_shape", _REQUIRED),
               ("cga_layout", None))


class SwizzledSharedLayout(SharedLayout):
    _params = (("vec", _REQUIRED), ("per_phase", _REQUIRED), ("max_phase", _REQUIRED), ("order", _REQUIRED),
               ("cga_layout", None))


class SharedLinearLayout(SharedLayout):
    _params = (("offset_bases", _REQUIRED), ("block_bases", []), ("alignment", 16))


class NVMMASharedLayout(SharedLayout):
    _params = (("swizzle_byte_width", _REQUIRED), ("element_bitwidth", _REQUIRED), ("rank", 2),
               ("transposed", False), ("fp4_padded", False), ("cga_layout", None))

    @staticmethod
    def get_default_for(block_shape, dtype, transposed=False, fp4_padded=False, cga_layout=None):
        """The NVMMA layout a TMA copy of `block_shape` elements of `dtype` uses by default (the widest swizzle
        the block's contiguous rows fill), computed by the compiler's own rule."""
        # Host code asks for the same layouts around every launch (tutorial 05's `small_mma`, three per call): a
        # layout made before from equal arguments is copied, not rendered and bound again.
        shape = tuple(block_shape) if isinstance(block_shape, tuple) else block_shape  # torch.Size, say
        key = _frozen((NVMMASharedLayout.get_default_for, shape, dtype, transposed, fp4_padded, cga_layout))
        made = _MADE.get(key) if key is not _UNFROZEN else None
        layout = object.__new__(NVMMASharedLayout)
        if made is not None:
            _fill(layout, made)
            return layout
        args = {"block_shape": _value(block_shape), "dtype": _value(dtype), "transposed": _value(transposed),
                "fp4_padded": _value(fp4_padded), "cga_layout": _value(cga_layout)}
        where = "gl.NVMMASharedLayout.get_default_for"
        source = f"NVMMASharedLayout.get_default_for({', '.join(f'{k}={_render(v, where)}' for k, v in args.items())})"
        fields = layout._bind(source)
        for name, value in fields.items():
            object.__setattr__(layout, name, value)
        object.__setattr__(layout, "cga_layout", args["cga_layout"] or [])
        if key is not _UNFROZEN and len(_MADE) < _BOUND_MAX:
            kept = tuple((n, _copied(v)) for n, v in layout.__dict__.items() if n != "_tessel_const_expr")
            _MADE[key] = (kept, layout._tessel_const_expr)
        return layout


class _Placeholder(DistributedLayout):
    """`AutoLayout()` / `CoalescedLayout()`: no layout of their own (the compiler picks one); in a kernel they are
    what the elaborator makes of them, no layout (`None`)."""

    def __init__(self):
        object.__setattr__(self, "_tessel_const_expr", "None")

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self).__name__)

    def __repr__(self):
        return f"{type(self).__name__}()"


class AutoLayout(_Placeholder):
    pass


class CoalescedLayout(_Placeholder):
    pass


class PaddedSharedLayout(SharedLayout):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("gl.PaddedSharedLayout is not supported by tessel yet")


class MBarrierLayout(SwizzledSharedLayout):
    """`mbarrier.MBarrierLayout()`: the layout of an mbarrier array, a `SwizzledSharedLayout(1, 1, 1, [0])` (as in
    Gluon, where it is that layout's subclass)."""

    _params = (("cga_layout", None),)

    @classmethod
    def _kind(cls) -> str:
        return "SwizzledSharedLayout"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, value in (("vec", 1), ("per_phase", 1), ("max_phase", 1), ("order", [0])):
            object.__setattr__(self, name, value)


class TensorMemoryLayout(_Layout):
    """`blackwell.TensorMemoryLayout(block, col_stride, ...)`: a layout of Blackwell's tensor memory. It binds
    and spells as Gluon's; tessel's code generator has no tensor-memory support yet, so kernels that allocate
    tensor memory do not compile."""

    _params = (("block", _REQUIRED), ("col_stride", _REQUIRED), ("cga_layout", None), ("two_ctas", False),
               ("fp4_padded", False))


class TensorMemoryScalesLayout(_Layout):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("blackwell.TensorMemoryScalesLayout is not supported by tessel yet")


LAYOUT_CLASSES = (
    AutoLayout, BlockedLayout, CoalescedLayout, DistributedLayout, DistributedLinearLayout, DotOperandLayout,
    MBarrierLayout, NVMMADistributedLayout, NVMMASharedLayout, PaddedSharedLayout, SharedLayout, SharedLinearLayout,
    SliceLayout, SwizzledSharedLayout, TensorMemoryLayout, TensorMemoryScalesLayout,
)
