"""`triton.knobs`: Triton's settings, grouped as Triton groups them (`knobs.cache.dir`,
`knobs.runtime.interpret`, `knobs.autotuning.print`, `knobs.nvidia.ptxas`, ...).

Each knob reads its environment variable (Triton's name and default) unless a value was assigned; assigning one
also sets the variable (as Triton does), so tessel's own readers and child processes see it, and assigning
`knobs.env` goes back to the environment. Every knob can be read. A knob tessel does not act on can only be set
to its default: any other value raises NotImplementedError naming the knob, rather than being silently ignored.
The hooks (`knobs.runtime.launch_enter_hook`, `jit_post_compile_hook`, ...) are empty, and adding one raises:
tessel's launcher calls no Triton hooks.

Where tessel differs: `knobs.cache.dir` (what `triton.runtime.cache`'s managers use, `$TRITON_CACHE_DIR`) defaults
to `$TESSEL_CACHE_DIR/triton` (else `~/.cache/tessel/triton`); tessel's compiled kernels are cached elsewhere.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass


class Env:
    """The type of `knobs.env`: assigned to a knob, it makes the knob read its environment variable again."""


env = Env()
_UNSET = object()
_TRUE = ("1", "true", "on", "yes")


def _tessel_cache(sub):
    base = os.environ.get("TESSEL_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tessel")
    return os.path.join(base, sub)


@dataclass
class NvidiaTool:
    """A CUDA tool found for `knobs.nvidia.*`: its path and its version (`12.8`)."""

    path: str
    version: str


def _find_tool(name, env_name):
    path = os.environ.get(env_name) or shutil.which(name)
    if not path and os.environ.get("CUDA_HOME"):
        path = os.path.join(os.environ["CUDA_HOME"], "bin", name)
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError(f"knobs.nvidia: no `{name}` found (set {env_name}, CUDA_HOME, or put it on PATH)")
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"release (\d+\.\d+)", out)
    return NvidiaTool(path, m.group(1) if m else "")


class Knob:
    """One setting: `env_var` parsed as `kind` (`str`, `bool`, `int`, `class`, `tool`, `opt`: an optional
    string), else `default` (a value, or a function of nothing). `honoured`: whether tessel acts on it (else it
    may only be set to its default)."""

    def __init__(self, env_var, kind="str", default=None, honoured=False):
        self.env_var, self.kind, self.default, self.honoured = env_var, kind, default, honoured

    def __set_name__(self, owner, name):
        self.name = f"{owner.__name__.removesuffix('_knobs')}.{name}"
        self.attr = name

    def _default(self):
        return self.default() if callable(self.default) else self.default

    def parse(self, raw):
        if self.kind == "bool":
            return raw.strip().lower() in _TRUE
        if self.kind == "int":
            return int(raw)
        if self.kind == "class":
            module, _, cls = raw.partition(":")
            return getattr(importlib.import_module(module), cls)
        if self.kind == "tool":
            return NvidiaTool(raw, "") if os.path.isfile(raw) else _find_tool(raw, self.env_var)
        return raw

    def get(self):
        raw = os.environ.get(self.env_var) if self.env_var else None
        if raw is None or (raw == "" and self.kind != "str"):
            if self.kind == "tool":
                return _find_tool(self.attr.replace("_", "-"), self.env_var)
            return self._default()
        return self.parse(raw)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__.get(self.attr, _UNSET)
        return self.get() if value is _UNSET else value

    def __set__(self, obj, value):
        if isinstance(value, Env):
            obj.__dict__.pop(self.attr, None)
            return
        if not self.honoured and value != self._default():
            raise NotImplementedError(
                f"triton.knobs.{self.name} = {value!r}: tessel does not implement this Triton setting "
                f"({self.env_var or 'no environment variable'}); only its default, {self._default()!r}, is accepted")
        obj.__dict__[self.attr] = self.parse(value) if self.kind == "tool" and isinstance(value, str) else value
        if self.env_var and value is not None:
            text = ("1" if value else "0") if isinstance(value, bool) else value
            if isinstance(text, (str, int)):
                os.environ[self.env_var] = str(text)
            elif isinstance(value, type):
                os.environ[self.env_var] = f"{value.__module__}:{value.__qualname__}"

    def __delete__(self, obj):
        obj.__dict__.pop(self.attr, None)


class HookChain:
    """Triton's chain of launch hooks. tessel's launcher calls none, so the chains stay empty: `add` raises."""

    def __init__(self, reversed=False, name="hook"):
        self.calls = []
        self.reversed = reversed
        self.name = name

    def add(self, func):
        raise NotImplementedError(f"triton.knobs.{self.name}.add(...): tessel's launcher does not call Triton's "
                                  "launch hooks (use triton.profiler's scopes, or time launches with do_bench)")

    def remove(self, func):
        if func in self.calls:
            self.calls.remove(func)

    def __call__(self, *args, **kwargs):
        for call in reversed(self.calls) if self.reversed else self.calls:
            call(*args, **kwargs)


class _Hook:
    """A hook slot tessel never calls: reads give the empty chain (or None); setting anything else raises."""

    def __init__(self, chain=None):
        self.chain = chain

    def __set_name__(self, owner, name):
        self.name = f"{owner.__name__.removesuffix('_knobs')}.{name}"
        self.attr = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if self.chain is None:
            return None
        return obj.__dict__.setdefault(self.attr, HookChain(self.chain == "reversed", self.name))

    def __set__(self, obj, value):
        if value is None or (isinstance(value, HookChain) and not value.calls) or isinstance(value, Env):
            return
        raise NotImplementedError(f"triton.knobs.{self.name}: tessel does not call Triton's compile and launch "
                                  "hooks, so it cannot take one")


class base_knobs:
    """What every group of knobs has: `knobs` (name -> value), `copy()`, `reset()`, `scope()`."""

    @property
    def knob_descriptors(self):
        return {k: v for k, v in type(self).__dict__.items() if isinstance(v, Knob)}

    @property
    def knobs(self):
        return {k: getattr(self, k) for k in self.knob_descriptors}

    def copy(self):
        res = type(self)()
        res.__dict__.update(self.__dict__)
        return res

    def reset(self):
        for k in self.knob_descriptors:
            self.__dict__.pop(k, None)
        return self

    @contextlib.contextmanager
    def scope(self):
        """Restores the group's values and environment variables on exit."""
        saved_env = {k.env_var: os.environ.get(k.env_var) for k in self.knob_descriptors.values() if k.env_var}
        saved = dict(self.__dict__)
        try:
            yield
        finally:
            self.__dict__.clear()
            self.__dict__.update(saved)
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


class cache_knobs(base_knobs):
    home_dir = Knob("TRITON_HOME", default=lambda: os.path.expanduser("~/"), honoured=True)
    dir = Knob("TRITON_CACHE_DIR", default=lambda: _tessel_cache("triton"), honoured=True)
    dump_dir = Knob("TRITON_DUMP_DIR", default=lambda: _tessel_cache("triton-dump"), honoured=True)
    override_dir = Knob("TRITON_OVERRIDE_DIR", default=lambda: _tessel_cache("triton-override"), honoured=True)
    manager_class = Knob("TRITON_CACHE_MANAGER", "class", honoured=True)
    remote_manager_class = Knob("TRITON_REMOTE_CACHE_BACKEND", "class")


class compilation_knobs(base_knobs):
    override = Knob("TRITON_KERNEL_OVERRIDE", "bool", False)
    dump_ir = Knob("TRITON_KERNEL_DUMP", "bool", False)
    dump_ir_extract_di_local_variables = Knob("LLVM_EXTRACT_DI_LOCAL_VARIABLES", "bool", False)
    store_binary_only = Knob("TRITON_STORE_BINARY_ONLY", "bool", False)
    always_compile = Knob("TRITON_ALWAYS_COMPILE", "bool", False)
    use_ir_loc = Knob("USE_IR_LOC", "opt")
    enable_asan = Knob("TRITON_ENABLE_ASAN", "bool", False)
    disable_line_info = Knob("TRITON_DISABLE_LINE_INFO", "bool", False)
    front_end_debugging = Knob("TRITON_FRONT_END_DEBUGGING", "bool", False)
    allow_non_constexpr_globals = Knob("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "bool", False)
    instrumentation_mode = Knob("TRITON_INSTRUMENTATION_MODE", "str", "")
    listener = _Hook()


class autotuning_knobs(base_knobs):
    # tessel keeps every kernel's timings on disk (tessel.autotuner): `cache` True is what it does.
    cache = Knob("TRITON_CACHE_AUTOTUNING", "bool", True)
    print = Knob("TRITON_PRINT_AUTOTUNING", "bool", False, honoured=True)


class runtime_knobs(base_knobs):
    interpret = Knob("TRITON_INTERPRET", "bool", False, honoured=True)
    debug = Knob("TRITON_DEBUG", "bool", False)
    override_arch = Knob("TRITON_OVERRIDE_ARCH", "opt")
    launch_enter_hook = _Hook("forward")
    launch_exit_hook = _Hook("reversed")
    kernel_load_start_hook = _Hook("forward")
    kernel_load_end_hook = _Hook("reversed")
    jit_cache_hook = _Hook()
    jit_post_compile_hook = _Hook()
    add_stages_inspection_hook = _Hook()


class language_knobs(base_knobs):
    fp32_default = Knob("TRITON_F32_DEFAULT", "opt")
    default_fp_fusion = Knob("TRITON_DEFAULT_FP_FUSION", "bool", True, honoured=True)


class nvidia_knobs(base_knobs):
    cuobjdump = Knob("TRITON_CUOBJDUMP_PATH", "tool", honoured=True)
    nvdisasm = Knob("TRITON_NVDISASM_PATH", "tool", honoured=True)
    ptxas = Knob("TRITON_PTXAS_PATH", "tool", honoured=True)
    dump_nvptx = Knob("NVPTX_ENABLE_DUMP", "bool", False)
    disable_ptxas_opt = Knob("DISABLE_PTXAS_OPT", "bool", False)
    ptxas_options = Knob("PTXAS_OPTIONS", "opt")
    mock_ptx_version = Knob("TRITON_MOCK_PTX_VERSION", "opt")
    dump_ptxas_log = Knob("TRITON_DUMP_PTXAS_LOG", "bool", False)
    libdevice_path = Knob("TRITON_LIBDEVICE_PATH", "opt")
    libcuda_path = Knob("TRITON_LIBCUDA_PATH", "opt")


class amd_knobs(base_knobs):
    use_buffer_ops = Knob("AMDGCN_USE_BUFFER_OPS", "bool", True)
    use_buffer_atomics = Knob("AMDGCN_USE_BUFFER_ATOMICS", "bool", True)
    dump_amdgcn = Knob("AMDGCN_ENABLE_DUMP", "bool", False)
    libhip_path = Knob("TRITON_LIBHIP_PATH", "opt")


class build_knobs(base_knobs):
    cc = Knob("CC", "opt")
    cudacrt_path = Knob("TRITON_CUDACRT_PATH", "opt")
    cudart_path = Knob("TRITON_CUDART_PATH", "opt")


class proton_knobs(base_knobs):
    disable = Knob("TRITON_PROTON_DISABLE", "bool", False)
    enable_nvtx = Knob("TRITON_ENABLE_NVTX", "bool", True)


# One instance of each group, shared by `triton.knobs` and tessel's readers of it (the cache managers).
cache = cache_knobs()
compilation = compilation_knobs()
autotuning = autotuning_knobs()
runtime = runtime_knobs()
language = language_knobs()
nvidia = nvidia_knobs()
amd = amd_knobs()
build = build_knobs()
proton = proton_knobs()
_GROUPS = dict(cache=cache, compilation=compilation, autotuning=autotuning, runtime=runtime, language=language,
               nvidia=nvidia, amd=amd, build=build, proton=proton)


def module_attrs():
    """The attributes of the `triton.knobs` module: the groups, and the helper types."""
    return dict(_GROUPS, env=env, Env=Env, HookChain=HookChain, NvidiaTool=NvidiaTool, base_knobs=base_knobs,
                **{type(g).__name__: type(g) for g in _GROUPS.values()})
