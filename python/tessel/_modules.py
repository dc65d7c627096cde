"""The module set a kernel's module is compiled with, read from the live interpreter.

tessel compiles a kernel from the source of its whole module; what that module imports (a package's helper
module, torch inductor's `triton_helpers`, `from triton.language.extra.libdevice import rsqrt` chosen by a
module-level `if`/`try`) the compiler resolves through this list, which `_tessel.compile(..., modules=...)` and
`_tessel.kernels(..., modules=...)` take: one `(dotted_name, file, source, is_package, bindings)` per module,
the kernel's own module first.

`bindings` is what Python really bound each global of a module to, as a dotted path: a module's `__name__`, or
`module.name` of a function, `JITFunction` or class defined in another module. It overrides the compiler's static
reading of the module's imports name by name, so that whatever branch of a module-level `if`/`try` Python took
is the one compiled. The other modules are those the kernel code can reach: the walk starts at the kernel's
module and goes on only through modules that define kernel code (`@jit`, `@constexpr_function`, `@aggregate`);
from each it takes the modules defining what it binds and, one level deep, the modules it binds as a name
(`import pkg.helpers as h`), which are kept when they re-export kernel code. A module that defines no kernel
code is never walked through: what it imports cannot be called from a kernel, and walking it would reach
whole libraries (Liger's `liger_kernel.utils` imports `peft`, which reaches transformers and accelerate; reading
them took seconds per compile and imported lazy modules as a side effect). torch, numpy, Triton, tessel and the
standard library are not walked into, except torch inductor's runtime helpers.
"""

from __future__ import annotations

import inspect
import re
import sys
import threading
import types

# Definitions of kernel-language code: `@triton.jit`, `@gluon.jit`, `@jit(...)`, `@tl.constexpr_function`,
# `@gluon.aggregate`... The decorator's last name must be one of those (`@torch.jit.script` is not kernel code).
_KERNEL_CODE = re.compile(r"^[ \t]*@[ \t]*(?:\w+[ \t]*\.[ \t]*)*(?:jit|constexpr_function|aggregate)[ \t]*(?:\(|#|$)",
                          re.MULTILINE)

# Packages whose modules are never walked into (tessel stands in for triton; the others hold no kernel code
# tessel compiles), apart from the prefixes of `_WALKED`.
_SKIPPED = {"torch", "numpy", "triton", "tessel", "jax", "pytest", "_pytest", "IPython", "sympy"}
_WALKED = ("torch._inductor.runtime.", "torch._inductor.kernel.")

_lock = threading.Lock()
# module name -> (id of the module object, the modules its bindings reach: the list without its own entry)
_CACHE: dict[str, tuple] = {}


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _walked(name: str) -> bool:
    if not name or name == "__main__":
        return True
    if name.startswith(_WALKED):
        return True
    top = _top(name)
    return top not in _SKIPPED and top not in sys.stdlib_module_names and top != "builtins"


def _source(module) -> str | None:
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):
        return None


def _file(module) -> str | None:
    try:
        return inspect.getsourcefile(module) or getattr(module, "__file__", None)
    except TypeError:
        return getattr(module, "__file__", None)


def _name(module) -> str:
    spec = getattr(module, "__spec__", None)
    return getattr(spec, "name", None) or module.__name__


def _origin(value):
    """(module name, name) of a function, JITFunction or class defined at the top level of a module."""
    try:
        mod = getattr(value, "__module__", None)
        name = getattr(value, "__name__", None)
        qual = getattr(value, "__qualname__", name)
    except Exception:  # noqa: BLE001 - arbitrary host objects may raise anything from __getattr__
        return None
    if not isinstance(mod, str) or not isinstance(name, str) or qual != name:
        return None
    return mod, name


def bindings(module) -> dict[str, str]:
    """What the globals of `module` are bound to, as dotted paths (see the module's docstring)."""
    own = module.__name__
    out = {}
    for key, value in list(vars(module).items()):
        if key.startswith("__"):
            continue
        if isinstance(value, types.ModuleType):
            out[key] = value.__name__
            continue
        origin = _origin(value)
        if origin is None or origin[0] == own:
            continue
        mod, name = origin
        # tessel's own host objects (the `jit` decorator, the kernel language's host stand-ins, which do not all
        # name the module they stand for) are left to the compiler's reading of the import statements.
        if _top(mod) == "tessel":
            continue
        out[key] = f"{mod}.{name}"
    return out


def _module_of(path: str):
    """The loaded module a dotted binding path names, or holds (`pkg.utils.helper` → `pkg.utils`)."""
    while path:
        m = sys.modules.get(path)
        if m is not None:
            return m
        path = path.rpartition(".")[0]
    return None


def _collect(root) -> list[tuple]:
    """The modules the kernel code of `root` can reach (see the module's docstring), as
    `(name, file, source, is_package, bindings)`, `root` excluded."""
    sources = {}

    def has_kernel_code(m) -> bool:
        if id(m) not in sources:
            sources[id(m)] = _source(m)
        s = sources[id(m)]
        return bool(s and _KERNEL_CODE.search(s))

    seen = {id(root)}
    info = {}  # id -> (module, its bindings), for every module walked through
    order = []
    # (module, walked through because it is the root or defines kernel code: its aliases are looked into too)
    stack = [(root, True)]
    while stack:
        module, full = stack.pop()
        b = bindings(module)
        info[id(module)] = (module, b)
        order.append(module)
        for key, path in b.items():
            m = _module_of(path)
            if m is None or id(m) in seen or not _walked(_name(m)):
                continue
            alias = isinstance(vars(module).get(key), types.ModuleType)
            if has_kernel_code(m):
                seen.add(id(m))
                stack.append((m, True))
            elif alias and full:
                # `import pkg.helpers as h` in kernel code's module: `h.f` may be a re-exported kernel function.
                seen.add(id(m))
                stack.append((m, False))
    included = {id(m) for m in order if m is not root and has_kernel_code(m)}
    # Aliased modules that bind names into included ones (a package re-exporting a helper) resolve them.
    for m in order:
        if m is root or id(m) in included or not sources.get(id(m)):
            continue
        if any((t := _module_of(p)) is not None and id(t) in included for p in info[id(m)][1].values()):
            included.add(id(m))
    return [(_name(m), _file(m) or f"<{_name(m)}>", sources[id(m)], hasattr(m, "__path__"), info[id(m)][1])
            for m in order if id(m) in included]


def module_set(fn, filename: str, source: str) -> list[tuple] | None:
    """The module list for the kernel function `fn` (compiled from `source`, read from `filename`): its own module
    first, then the modules its imports reach. None when `fn`'s module is not loaded (the compiler then reads
    imported modules from beside `filename`)."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if module is None:
        return None
    return _module_set_of(module, filename, source)


def _module_set_of(module, filename: str, source: str) -> list[tuple]:
    """`module_set` of a module object (the compiler face passes one rebuilt from a kernel function's globals,
    where inductor's compile workers load a module without registering it in `sys.modules`)."""
    key = module.__name__
    with _lock:
        hit = _CACHE.get(key)
    if hit is not None and hit[0] == id(module):
        others = hit[1]
    else:
        others = _collect(module)
        with _lock:
            _CACHE[key] = (id(module), others)
    own = (_name(module), filename, source, hasattr(module, "__path__"), bindings(module))
    return [own] + [m for m in others if m[1] != filename]


def for_kernel(jit_function) -> list[tuple] | None:
    """`module_set` of a JITFunction, computed on its first compile and kept on it."""
    cached = getattr(jit_function, "_tessel_module_set", False)
    if cached is not False:
        return cached
    try:
        found = module_set(jit_function.fn, jit_function.filename, jit_function.source)
    except Exception as e:  # noqa: BLE001 - a module set that cannot be built falls back to reading the disk
        # Said, not hidden: the fallback compiles the module's imports as the CLI would (statically), which can
        # pick another branch of a module-level `if` than the one Python ran.
        import warnings

        warnings.warn(f"tessel: the modules `{jit_function.__name__}`'s module imports could not be read from the "
                      f"running interpreter ({type(e).__name__}: {e}); its imports are resolved from the files on "
                      "disk instead", RuntimeWarning, stacklevel=3)
        found = None
    jit_function._tessel_module_set = found
    return found
