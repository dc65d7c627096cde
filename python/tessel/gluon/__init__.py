"""`triton.experimental.gluon`: `@gluon.jit` kernels, compiled by tessel in gluon mode (layouts as written)."""

from ..jit import JITFunction
from . import language


def jit(fn=None, *, do_not_specialize=(), **kwargs):
    """`@gluon.jit`: a kernel whose body is in the `gl` namespace (see `tessel.jit` for the launch API)."""

    def wrap(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, decorator="gluon", **kwargs)

    return wrap(fn) if fn is not None else wrap


constexpr_function = language.constexpr_function

__all__ = ["jit", "language", "constexpr_function"]
