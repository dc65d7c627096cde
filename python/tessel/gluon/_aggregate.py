"""`@gluon.aggregate` on the host.

An aggregate is a class whose annotated fields and `@gluon.jit` methods kernels use as a value type
(`WGMMA(acc, use_acc)`, `mma.issue_async_mma(a, b)`); tessel compiles those uses from the kernel's source, so on
the host the decorator only checks that it decorates a class, records its fields, and returns the class itself.
Host code passes the class to kernels as a constexpr (`MMAImpl=WGMMA`); the compiler receives the Python source
that names it in the kernel's module (see `_constants.native_const`):

* a class defined at the top level of a module is named directly (`WGMMA`, or `t7.WGMMA` through a module the
  kernel's module imports);
* a class made by a host factory function (a template: `def Scheduler(GROUP): ... @gluon.aggregate class Impl:
  ...; return Impl`) is named by the call that made it, `Scheduler(8)`, which the compiler evaluates in the
  kernel's module. The call is read when the class is decorated: the factory is the function whose frame the
  decorator runs in, found at the top level of its module, and its arguments are its parameters' values in that
  frame (a value wrapped in `gl.constexpr` counts as the value). Arguments must be Python literals (None, bools,
  ints, floats, strings, tuples and lists of them) or host layouts. Two classes made by the same call are the
  same constexpr, so they share a compiled specialization, as Triton's launcher keys them by name.
"""

from __future__ import annotations

import inspect
import sys

from .. import language as _tl
from ._layouts import _Layout

_LITERALS = (bool, int, float, str, type(None))


class FactoryCall:
    """How a factory-made aggregate class was made: `function(*args)`, its arguments as Python source, or why they
    cannot be written as source (`error`)."""

    def __init__(self, function, args_source, error=None):
        self.function, self.args_source, self.error = function, args_source, error

    def key(self):
        return (self.function, self.args_source, self.error)


def _source(v) -> str:
    """`v` as Python source the compiler can evaluate (a TypeError when it has none)."""
    v = v.value if isinstance(v, _tl.constexpr) else v
    if isinstance(v, _LITERALS):
        return repr(v)
    if isinstance(v, (list, tuple)):
        items = ", ".join(_source(x) for x in v)
        return f"[{items}]" if isinstance(v, list) else f"({items}{',' if len(v) == 1 else ''})"
    if isinstance(v, _Layout):
        return v._tessel_const_expr
    raise TypeError(f"{v!r} ({type(v).__name__}) cannot be written as a compile-time argument")


def _factory_call(frame):
    """The call of the factory function running in `frame`, or None when `frame` is not a function's (a module or
    a class body)."""
    code = frame.f_code
    if code.co_name.startswith("<") or not code.co_flags & inspect.CO_OPTIMIZED:
        return None
    function = next((f for f in frame.f_globals.values() if getattr(f, "__code__", None) is code), None)
    if function is None:
        return FactoryCall(None, None, f"its factory `{code.co_name}` is not a function at the top level of its "
                                       "module")
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return FactoryCall(function, None, f"its factory `{code.co_name}` takes *args or **kwargs")
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    try:
        args = [_source(frame.f_locals[n]) for n in names[:code.co_argcount]]
        args += [f"{n}={_source(frame.f_locals[n])}" for n in names[code.co_argcount:]]
    except TypeError as e:
        return FactoryCall(function, None, f"an argument of its factory `{code.co_name}`: {e}")
    return FactoryCall(function, ", ".join(args))


def aggregate(cls):
    """`@gluon.aggregate`: marks `cls` as an aggregate and returns it (see the module's docstring)."""
    if not isinstance(cls, type):
        raise TypeError(f"@gluon.aggregate decorates a class, not {cls!r}")
    cls._tessel_aggregate_fields = tuple(cls.__dict__.get("__annotations__", {}))
    cls._tessel_factory = _factory_call(sys._getframe(1))  # the frame the class statement ran in
    return cls
