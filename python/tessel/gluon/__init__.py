"""`triton.experimental.gluon`: `@gluon.jit` kernels, compiled by tessel in gluon mode (layouts as written),
`@gluon.aggregate` classes (see `_aggregate`), and Gluon's host tensor descriptors (`gluon.nvidia.hopper`)."""

from ..jit import JITFunction
from . import language, nvidia
from ._aggregate import aggregate


def jit(fn=None, *, do_not_specialize=(), **kwargs):
    """`@gluon.jit`: a kernel whose body is in the `gl` namespace (see `tessel.jit` for the launch API)."""

    def wrap(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, decorator="gluon", **kwargs)

    return wrap(fn) if fn is not None else wrap


def must_use_result(fn):
    """`@gluon.must_use_result`: marks a function whose result callers must use (Gluon checks it when compiling).
    On the host it returns `fn`."""
    return fn


constexpr_function = language.constexpr_function

__all__ = ["aggregate", "constexpr_function", "jit", "language", "must_use_result", "nvidia"]
