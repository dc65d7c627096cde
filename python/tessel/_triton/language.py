"""The host side of Triton's device-function modules: `triton.language.core`, `triton.language.standard`,
`triton.language.math`, `triton.language.extra.libdevice`, `triton.language.extra.cuda(.libdevice)`.

tessel compiles kernel bodies from their source, resolving `from triton.language.extra.libdevice import rsqrt`
(and `libdevice.rsqrt(x)`, `tl.math.rsqrt(x)`) itself; these modules exist so that host code imports the same
names as with Triton. Each device function is a host stand-in whose `__module__` and `__name__` say what it is
(`triton.language.extra.libdevice`, `rsqrt`), so that whatever reads Python's bindings maps it back to the
device function; calling one on the host raises, as calling a device function outside a kernel does in Triton.
The names are read from tessel's kernel compiler (its builtin registry, `lang/src/elab/builtins`), so a name it
lacks is an ImportError here, as on a Triton without it.
"""

from __future__ import annotations

import inspect

from .. import _tessel
from .. import language as tl

# The host side's device-function modules list what the compiler registers (lang's builtin registry), so a name
# exists on the host exactly when a kernel can call it.
MATH_NAMES = _tessel.kernel_module_names("triton.language.math")
# `triton.language.extra.libdevice`'s own functions (it also has the math names).
LIBDEVICE_NAMES = _tessel.kernel_module_names("triton.language.extra.libdevice")
# The kernel-language functions Triton writes in `triton.language.standard` and tessel in its prelude: torch's
# inductor imports `_log2` from there.
STANDARD_NAMES = _tessel.kernel_module_names("triton.language", prelude=True)
# `triton.language.extra.cuda`'s own functions.
CUDA_NAMES = _tessel.kernel_module_names("triton.language.extra.cuda")

_SIGNATURE = inspect.Signature([
    inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
    inspect.Parameter("_semantic", inspect.Parameter.KEYWORD_ONLY, default=None),
    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
])


def device_function(module: str, name: str):
    """The host stand-in for the device function `module.name`: it names itself, and calling it raises."""

    def stand_in(*args, _semantic=None, **kwargs):
        raise RuntimeError(
            f"{module}.{name} is a device function: call it inside a @triton.jit kernel (tessel compiles kernel "
            "bodies from their source; on the host it cannot run)"
        )

    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__module__ = module
    stand_in.__signature__ = _SIGNATURE  # Triton 3.6's builtins take `_semantic` (torch's inductor probes it)
    stand_in.__triton_builtin__ = True
    return stand_in


def functions(module: str, names) -> dict:
    return {n: device_function(module, n) for n in names}


def builtin(fn):
    """`triton.language.core.builtin`: marks `fn` as a builtin of the kernel language. tessel's compiler
    implements its builtins itself, so a kernel calling a library's own builtin does not compile."""
    fn.__triton_builtin__ = True
    return fn


def is_builtin(fn) -> bool:
    return getattr(fn, "__triton_builtin__", False)


def _unwrap_if_constexpr(o):
    return o.value if isinstance(o, tl.constexpr) else o


def core_attrs() -> dict:
    """`triton.language.core`'s host names besides `triton.language`'s (the module falls back to those)."""
    from ..gluon._aggregate import aggregate

    attrs = functions("triton.language.core", ["view", "reshape", "full", "zeros", "load", "store", "cast", "dot",
                                               "where", "arange", "program_id", "num_programs", "static_assert",
                                               "static_print", "device_print", "device_assert"])
    attrs.update(_aggregate=aggregate, builtin=builtin, is_builtin=is_builtin,
                 _unwrap_if_constexpr=_unwrap_if_constexpr)
    return attrs


def module_getattr(module: str, fallback):
    """A module `__getattr__` that answers from `fallback` (`triton.language.core` from `triton.language`)."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(fallback, name)

    return __getattr__


def modules(make_module) -> dict:
    """The modules by name, made with the shim's `make_module(name, doc, **attrs)`."""
    core = make_module("triton.language.core", "triton.language's core names (host side)", **core_attrs())
    core.__getattr__ = module_getattr("triton.language.core", tl)
    standard = make_module("triton.language.standard", "triton.language's functions written in the language",
                           **functions("triton.language.standard", STANDARD_NAMES))
    standard.__getattr__ = module_getattr("triton.language.standard", tl)
    math_mod = make_module("triton.language.math", "device math functions: compiled by tessel inside kernels",
                           **functions("triton.language.math", MATH_NAMES))
    ld = "triton.language.extra.libdevice"
    libdevice = make_module(ld, "libdevice's device functions: compiled by tessel inside kernels",
                            **functions(ld, MATH_NAMES + LIBDEVICE_NAMES))
    cld = "triton.language.extra.cuda.libdevice"
    cuda_libdevice = make_module(cld, "libdevice's device functions: compiled by tessel inside kernels",
                                 **functions(cld, MATH_NAMES + LIBDEVICE_NAMES))
    cuda = make_module("triton.language.extra.cuda", "CUDA device functions: compiled by tessel inside kernels",
                       libdevice=cuda_libdevice, **functions("triton.language.extra.cuda", CUDA_NAMES))
    extra = make_module("triton.language.extra", "tessel's triton.language.extra", libdevice=libdevice, cuda=cuda)
    return {
        "triton.language.core": core,
        "triton.language.standard": standard,
        "triton.language.math": math_mod,
        "triton.language.extra": extra,
        "triton.language.extra.libdevice": libdevice,
        "triton.language.extra.cuda": cuda,
        "triton.language.extra.cuda.libdevice": cuda_libdevice,
    }
