"""`triton.runtime` and its submodules under the shim: `jit` (JITFunction, KernelInterface, jit), `autotuner`
(Autotuner, Heuristics, Config, and the errors Triton re-exports there), `errors`, `driver`, `cache` (the file
cache managers libraries subclass), `interpreter`.

`triton.runtime.cache`: `get_cache_manager(key)` gives a `FileCacheManager` (or the class `knobs.cache.
manager_class` / `$TRITON_CACHE_MANAGER` names, `module:Class`) over `knobs.cache.dir/<key>`; tessel's own
compiled kernels are cached by the native compiler, not through these managers. `triton.runtime.interpreter`
has no `InterpretedFunction` objects to offer: tessel's JITFunction runs in its interpreter itself (on host
arrays, or with `TRITON_INTERPRET=1`), so nothing is an instance of it and constructing one raises.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import uuid

from . import knobs
from .interface import AutotunerError, KernelInterface, OutOfResources, PTXASError, TritonError


def _knob_dir(name):
    return getattr(knobs.cache, name)


def default_cache_dir():
    """Where `FileCacheManager` keeps files: `knobs.cache.dir`."""
    return _knob_dir("dir")


def default_dump_dir():
    return _knob_dir("dump_dir")


def default_override_dir():
    return _knob_dir("override_dir")


class CacheManager:
    """Triton's cache manager interface: files by name under a key."""

    def __init__(self, key, override=False, dump=False):
        pass

    def get_file(self, filename):
        raise NotImplementedError(f"{type(self).__name__}.get_file")

    def put(self, data, filename, binary=True):
        raise NotImplementedError(f"{type(self).__name__}.put")

    def get_group(self, filename):
        raise NotImplementedError(f"{type(self).__name__}.get_group")

    def put_group(self, filename, group):
        raise NotImplementedError(f"{type(self).__name__}.put_group")


class FileCacheManager(CacheManager):
    """Files under `<knobs.cache.dir>/<key>` (`dump=True`: the dump directory; `override=True`: the override
    directory, not created). `put` writes through a temporary file and renames, so readers never see part of a
    file; `put_group(name, {child: path})` records a group of files, `get_group(name)` gives their paths back
    when all still exist."""

    def __init__(self, key, override=False, dump=False):
        self.key = key
        self.lock_path = None
        if dump:
            self.cache_dir = os.path.join(default_dump_dir(), key)
        elif override:
            self.cache_dir = os.path.join(default_override_dir(), key)
        else:
            base = default_cache_dir()
            if not base:
                raise RuntimeError("Could not create or locate cache dir")
            self.cache_dir = os.path.join(base, key)
        if not override:
            self.lock_path = os.path.join(self.cache_dir, "lock")
            os.makedirs(self.cache_dir, exist_ok=True)

    def _make_path(self, filename):
        return os.path.join(self.cache_dir, filename)

    def has_file(self, filename):
        return bool(self.cache_dir) and os.path.exists(self._make_path(filename))

    def get_file(self, filename):
        return self._make_path(filename) if self.has_file(filename) else None

    def get_group(self, filename):
        path = self.get_file(f"__grp__{filename}")
        if path is None:
            return None
        with open(path) as f:
            children = json.load(f).get("child_paths", {})
        if not all(os.path.exists(p) for p in children.values()):
            return None
        return dict(children)

    def put_group(self, filename, group):
        if not self.cache_dir:
            raise RuntimeError("Could not create or locate cache dir")
        return self.put(json.dumps({"child_paths": dict(group)}), f"__grp__{filename}", binary=False)

    def put(self, data, filename, binary=True):
        if not self.cache_dir:
            raise RuntimeError("Could not create or locate cache dir")
        binary = isinstance(data, bytes)
        if not binary:
            data = str(data)
        path = self._make_path(filename)
        tmp_dir = os.path.join(self.cache_dir, f"tmp.pid_{os.getpid()}_{uuid.uuid4().hex}")
        os.makedirs(tmp_dir, exist_ok=True)
        tmp = os.path.join(tmp_dir, filename)
        with open(tmp, "wb" if binary else "w") as f:
            f.write(data)
        os.replace(tmp, path)
        os.removedirs(tmp_dir)
        return path


class RemoteCacheBackend:
    """Triton's remote cache (Redis, ...): tessel has none."""

    def __init__(self, key):
        raise NotImplementedError("tessel has no remote kernel cache (triton.runtime.cache.RemoteCacheBackend)")


def _dir_name(key):
    """Triton names a key's directory by the base32 of the key's hex digest; other keys are hashed first."""
    try:
        raw = bytes.fromhex(key)
    except (TypeError, ValueError):
        raw = hashlib.sha256(str(key).encode()).digest()
    return base64.b32encode(raw).decode().rstrip("=")


def _manager_class():
    return knobs.cache.manager_class or FileCacheManager


def get_cache_manager(key):
    return _manager_class()(_dir_name(key))


def get_override_manager(key):
    return _manager_class()(_dir_name(key), override=True)


def get_dump_manager(key):
    return _manager_class()(_dir_name(key), dump=True)


class ConstexprFunction:
    """Triton's type of `@triton.constexpr_function` results. tessel's decorator returns the function itself
    (its compiler runs the source at compile time; on the host it is the plain function), so nothing is an
    instance of this: code that asks `isinstance(f, ConstexprFunction)` learns that `f` is not Triton's."""

    def __init__(self, fn):
        raise NotImplementedError("tessel's @constexpr_function returns the function itself; use the decorator")


class InterpretedFunction(KernelInterface):
    """Triton's interpreter-mode kernel. tessel has none: its JITFunction runs in the interpreter itself."""

    def __init__(self, fn, **kwargs):
        raise NotImplementedError("tessel has no InterpretedFunction: @triton.jit kernels run in tessel's "
                                  "interpreter themselves (on host arrays, or with TRITON_INTERPRET=1)")


def modules(make_module) -> dict:
    """The `triton.runtime` modules by name, made with the shim's `make_module(name, doc, **attrs)`."""
    from .. import _tessel, autotuner as autotune, language as tl, runtime
    from ..jit import JITFunction, jit

    jit_doc = sys.modules[JITFunction.__module__].__doc__
    errors_attrs = dict(OutOfResources=OutOfResources, PTXASError=PTXASError, AutotunerError=AutotunerError,
                        InterpreterError=_tessel.InterpreterError, TritonError=TritonError)
    errors = make_module("triton.runtime.errors", __doc__, **errors_attrs)
    jit_mod = make_module("triton.runtime.jit", jit_doc, JITFunction=JITFunction, KernelInterface=KernelInterface,
                          jit=jit, constexpr_function=tl.constexpr_function, ConstexprFunction=ConstexprFunction)
    autotuner = make_module("triton.runtime.autotuner", autotune.__doc__, Autotuner=autotune.Autotuner,
                            Config=autotune.Config, Heuristics=autotune.Heuristics, autotune=autotune.autotune,
                            heuristics=autotune.heuristics, KernelInterface=KernelInterface,
                            JITFunction=JITFunction, **errors_attrs)
    cache = make_module("triton.runtime.cache", __doc__, CacheManager=CacheManager,
                        FileCacheManager=FileCacheManager, RemoteCacheBackend=RemoteCacheBackend,
                        get_cache_manager=get_cache_manager, get_override_manager=get_override_manager,
                        get_dump_manager=get_dump_manager, default_cache_dir=default_cache_dir,
                        default_dump_dir=default_dump_dir, default_override_dir=default_override_dir)
    interpreter = make_module("triton.runtime.interpreter", __doc__, InterpretedFunction=InterpretedFunction)
    driver = make_module("triton.runtime.driver", runtime.__doc__, driver=runtime.driver)
    runtime_mod = make_module(
        "triton.runtime", runtime.__doc__, driver=runtime.driver, Autotuner=autotune.Autotuner,
        Heuristics=autotune.Heuristics, Config=autotune.Config, autotune=autotune.autotune,
        heuristics=autotune.heuristics, JITFunction=JITFunction, KernelInterface=KernelInterface,
        OutOfResources=OutOfResources, InterpreterError=_tessel.InterpreterError, jit=jit_mod,
        autotuner=autotuner, errors=errors, cache=cache, interpreter=interpreter,
    )
    return {
        "triton.runtime": runtime_mod,
        "triton.runtime.driver": driver,
        "triton.runtime.jit": jit_mod,
        "triton.runtime.autotuner": autotuner,
        "triton.runtime.errors": errors,
        "triton.runtime.cache": cache,
        "triton.runtime.interpreter": interpreter,
    }
