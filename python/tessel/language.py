"""The host-side face of the kernel language (`triton.language` as `tl`, and tessel's own).

tessel compiles kernel bodies from their source, so Python never runs them: this module only holds what a
script touches at module level or on the host: the dtypes (`tl.float16`), `tl.constexpr` (as an annotation and
as a wrapper of constants), `tl.tensor` and friends as annotations, `tl.constexpr_function`. Other names exist
only inside kernels; asking for one from host code raises an AttributeError that says so.
"""

from __future__ import annotations

import builtins


class dtype:
    """A scalar type; passed to a kernel it is a compile-time constant."""

    def __init__(self, name: str, bits: int, kind: str):
        self.name = name
        self.primitive_bitwidth = bits
        self._kind = kind
        # What the native module reads to turn this into a compile-time dtype.
        self._tessel_dtype = name

    def is_floating(self) -> bool:
        return self._kind == "float"

    def is_int(self) -> bool:
        return self._kind in ("int", "uint")

    def is_int_signed(self) -> bool:
        return self._kind == "int"

    def is_int_unsigned(self) -> bool:
        return self._kind == "uint"

    def is_fp16(self) -> bool:
        return self.name == "float16"

    def is_bf16(self) -> bool:
        return self.name == "bfloat16"

    def is_fp32(self) -> bool:
        return self.name == "float32"

    def is_fp64(self) -> bool:
        return self.name == "float64"

    def __eq__(self, other):
        return isinstance(other, dtype) and other.name == self.name

    def __hash__(self):
        return hash(("tessel.dtype", self.name))

    def __repr__(self):
        return f"triton.language.{self.name}"

    __str__ = __repr__


int1 = dtype("int1", 1, "int")
int8 = dtype("int8", 8, "int")
int16 = dtype("int16", 16, "int")
int32 = dtype("int32", 32, "int")
int64 = dtype("int64", 64, "int")
uint8 = dtype("uint8", 8, "uint")
uint16 = dtype("uint16", 16, "uint")
uint32 = dtype("uint32", 32, "uint")
uint64 = dtype("uint64", 64, "uint")
float8e4nv = dtype("float8e4nv", 8, "float")
float8e5 = dtype("float8e5", 8, "float")
float16 = dtype("float16", 16, "float")
bfloat16 = dtype("bfloat16", 16, "float")
float32 = dtype("float32", 32, "float")
float64 = dtype("float64", 64, "float")
# Triton's aliases.
bool = int1  # noqa: A001 - Triton's name
float8e4m3fn = float8e4nv
float8e5m2 = float8e5


class constexpr:
    """A compile-time constant: `BLOCK: tl.constexpr` marks a parameter, `tl.constexpr(128)` wraps a value."""

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __index__(self):
        return self.value.__index__()

    def __int__(self):
        return int(self.value)

    def __bool__(self):
        return builtins.bool(self.value)  # `bool` below is Triton's int1 alias

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, constexpr) else other)

    def __hash__(self):
        return hash(self.value)


def constexpr_function(fn):
    """Marks a function the compiler runs at compile time; on the host it is the plain function."""
    return fn


class _AnnotationType(type):
    """The metaclass of the kernel language's types on the host: they appear in annotations (`x: tl.tensor`,
    aggregate fields such as `acc: Union[warpgroup_mma_accumulator, gl.tensor]`) and are subscripted
    (`tl.tensor[...]`); the kernel's compiler reads the source, not these objects. They are classes, as in
    Triton, so that `typing.Union[...]` takes them on every Python tessel supports."""

    def __repr__(cls):
        return f"{cls._module}.{cls.__name__}"

    def __getitem__(cls, _):
        return cls


def _annotation(module: str, name: str):
    """The host-side stand-in for the kernel-language type `module.name`: usable in annotations; constructing
    one on the host raises."""

    def construct(cls, *args, **kwargs):
        _host_only(module, name)

    return _AnnotationType(name, (), {"_module": module, "__new__": construct, "__module__": module})


tensor = _annotation("triton.language", "tensor")
pointer_type = _annotation("triton.language", "pointer_type")
block_type = _annotation("triton.language", "block_type")
tensor_descriptor = _annotation("triton.language", "tensor_descriptor")
tuple_type = _annotation("triton.language", "tuple")

_DTYPES = {
    d.name: d
    for d in (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float8e4nv, float8e5, float16,
              bfloat16, float32, float64)
}


def from_name(name: str) -> dtype:
    """The dtype named `float16`, `int32`, ... (Triton's names)."""
    return _DTYPES[name]


def _host_only(module: str, name: str):
    raise AttributeError(
        f"{module}.{name} is part of the kernel language: tessel compiles kernel bodies from their source, and "
        f"host code cannot call it (module {module} on the host only has dtypes, constexpr and annotations)"
    )


def _kernel_only(module: str, name: str):
    """What `module.name` is on the host for a builtin of the kernel language: it exists (host code may test for
    it, as the tutorials test for `tl.make_tensor_descriptor`), and calling it raises."""

    def builtin(*args, **kwargs):
        _host_only(module, name)

    builtin.__name__ = builtin.__qualname__ = name
    builtin.__module__ = module  # what it stands for (torch's inductor writes `from triton.language import store`)
    return builtin


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _kernel_names():
        return _kernel_only("triton.language", name)
    _host_only("triton.language", name)


def _kernel_names() -> frozenset:
    global _KERNEL_NAMES
    if _KERNEL_NAMES is None:
        from . import _tessel
        _KERNEL_NAMES = frozenset(_tessel.kernel_language_names())
    return _KERNEL_NAMES


_KERNEL_NAMES = None
