"""Compile-time arguments of a launch: what a constexpr may be, its cache key, and how it reaches the compiler.

A constexpr is None, a bool, int, float or str, a dtype (`tl.float16`), a Gluon layout built on the host
(`gl.BlockedLayout(...)`, see `gluon._layouts`), a tuple or list of those, or an object the kernel's module names
at its top level (a `@jit` function or a class of the module, or one reached through a module it imports:
`t7.WGMMA`), or an `@gluon.aggregate` class made by a factory function the module names (`Scheduler(8)`, see
`gluon._aggregate`). Dtypes travel as their names; layouts and named objects as Python source the compiler evaluates in
the kernel's module (`_tessel_const_expr`), the constants `tessel compile --const NAME=SOURCE` builds. Anything
else is a TypeError naming the parameter, raised before anything is compiled or cached.
"""

from __future__ import annotations

import types

from . import language as tl
from .gluon._layouts import _Layout

_SCALARS = (bool, int, float, str, type(None))


def _unwrap(v):
    return v.value if isinstance(v, tl.constexpr) else v


def _refuse(v, name, why=""):
    what = f"{v!r}" if len(repr(v)) <= 80 else f"a {type(v).__name__}"
    raise TypeError(
        f"argument `{name}`: cannot pass {what} ({type(v).__module__}.{type(v).__qualname__}) as a compile-time "
        f"constant{why}; tessel passes None, bool, int, float, str, dtypes, Gluon layouts (gl.BlockedLayout(...)), "
        "tuples and lists of those, and the kernel module's own jit functions and classes"
    )


def const_key(v, name="?"):
    """A hashable key of the compile-time value `v` of parameter `name` (a TypeError naming it if `v` cannot be
    one)."""
    v = _unwrap(v)
    if isinstance(v, _SCALARS):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)):
        return ("t",) + tuple(const_key(x, name) for x in v)
    if isinstance(v, tl.dtype):
        return ("dtype", v.name)
    if isinstance(v, _Layout):
        return ("layout", type(v).__name__, v._tessel_const_expr)
    factory = _factory_of(v)
    if factory is not None:
        return ("factory",) + factory.key()
    if isinstance(v, types.ModuleType) or _is_data(v):
        _refuse(v, name)
    try:
        hash(v)
    except TypeError:
        _refuse(v, name, " (it is not hashable)")
    return ("object", v)


def _factory_of(v):
    """How an aggregate class made by a host factory function was made (`gluon._aggregate.FactoryCall`), or None
    for any other value."""
    return getattr(v, "_tessel_factory", None) if isinstance(v, type) and "_tessel_factory" in vars(v) else None


def _is_data(v):
    """Arrays, tensors and descriptors: runtime data, never constants."""
    return hasattr(v, "__array_interface__") or hasattr(v, "data_ptr") or hasattr(v, "base") and hasattr(
        v, "block_shape")


class _Source:
    """A constant the compiler rebuilds from Python source in the kernel's module."""

    def __init__(self, src):
        self._tessel_const_expr = src


def _module_name_of(v, module_globals):
    """The source that names `v` in a module with these globals (`WGMMA`, `t7.WGMMA`), or None."""
    for k, g in module_globals.items():
        if g is v and k.isidentifier():
            return k
    for k, g in module_globals.items():
        if isinstance(g, types.ModuleType) and k.isidentifier():
            for attr, x in vars(g).items():
                if x is v and attr.isidentifier():
                    return f"{k}.{attr}"
    return None


def native_const(v, name, module_globals):
    """`v` as the native module takes a compile-time value (see the module's docstring)."""
    v = _unwrap(v)
    if isinstance(v, (_SCALARS, tl.dtype, _Layout)):
        return v
    if isinstance(v, (tuple, list)):
        items = [native_const(x, name, module_globals) for x in v]
        if any(isinstance(x, (_Layout, _Source)) for x in items):
            raise TypeError(
                f"argument `{name}`: a layout or an object inside a tuple cannot be passed to tessel yet; pass it "
                "as a constexpr of its own"
            )
        return items if isinstance(v, list) else tuple(items)
    src = _module_name_of(v, module_globals)
    factory = _factory_of(v)
    if src is None and factory is not None:
        src = _factory_source(v, factory, name, module_globals)
    if src is None:
        _refuse(v, name, " (the kernel's module does not name it at its top level)")
    return _Source(src)


def _factory_source(v, factory, name, module_globals):
    """`Factory(args)`: the call that made the aggregate class `v`, as the kernel's module names the factory."""
    why = factory.error
    if why is None:
        fname = _module_name_of(factory.function, module_globals)
        if fname is not None:
            return f"{fname}({factory.args_source})"
        why = f"the kernel's module does not name its factory `{factory.function.__name__}` at its top level"
    raise TypeError(f"argument `{name}`: cannot pass the aggregate class {v.__qualname__} as a compile-time "
                    f"constant: {why}")
