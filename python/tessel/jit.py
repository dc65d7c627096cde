"""`@tessel.jit` / `@triton.jit`: Triton's launch API over tessel's compiler.

`kernel[grid](*args, num_warps=4, num_stages=3, **constexprs)` binds the arguments the way Triton's launcher
does, builds the specialization (pointers by dtype and 16-byte alignment; integers as i32 when they fit, else
i64, with 1 as a constant and multiples of 16 marked; floats as fp32; None, bools given to constexpr
parameters, dtypes and Gluon layouts as constants; what a constexpr may be is in `_constants`), compiles it
once per specialization (cached in memory), and runs it:

* on numpy arrays and CPU torch tensors: in tessel's reference interpreter; every array the kernel can reach is
  copied in, and copied back into the same memory afterwards;
* on CUDA torch tensors: compiled to PTX, loaded into the primary context of the tensors' device (the context
  torch uses) and launched asynchronously on torch's current stream of that device, as Triton does: nothing
  waits for the kernel, and work queued on that stream before and after is ordered with it (unless
  `TRITON_INTERPRET=1`, which runs the interpreter on host copies).

The GPU path is the hot one: `kernel[grid](...)` binds the arguments with a function generated from the
kernel's signature (no `inspect` per call), builds the specialization key and the launch arguments in one pass
over them, and looks the key up in `cache` (a dict); a hit goes straight to the native launch.

The kernel's source is the whole file the function is defined in (the compiler resolves its imports, helpers
and module-level constants from it).
"""

from __future__ import annotations

import functools
import inspect
import keyword
import linecache
import re
import sys
import textwrap
import threading

from . import _modules, _tessel, profiler
from . import language as tl
from ._constants import const_key as _const_key, native_const
from ._launcher import (  # noqa: F401 - the launch options and helpers, used here and by importers of jit
    _AMD_OPTIONS, _IGNORED_OPTIONS, _LAUNCH_DEFAULTS, _LAUNCH_OPTIONS, _N_KEY_OPTIONS, _RUNTIME_OPTIONS, _grid3,
    _interpret_requested, _refuse_amd_options, _stream_of, fp_fusion, key_options, make_launcher,
)
from .compiled import CompiledKernel
from ._memory import HostRegions, is_cuda_tensor, is_torch_tensor, tensor_dtype_name
from ._triton.interface import KernelInterface
from .gluon._layouts import _Layout
from .tools import HostDescriptor

# The specializations of host descriptors (`tools.HostDescriptor._tessel_spec`): a base address, then integers.
_DESC_KINDS = ("desc", "desc_im2col")
_POINTER_KINDS = ("ptr",) + _DESC_KINDS

# What kind of argument a Python type is, decided once per type: the launcher dispatches on it.
_K_INT, _K_FLOAT, _K_BOOL, _K_TENSOR, _K_OTHER = range(5)
_TYPE_KINDS = {int: _K_INT, float: _K_FLOAT, bool: _K_BOOL}


def _kind_of_type(t):
    k = _TYPE_KINDS.get(t)
    if k is None:
        torch = sys.modules.get("torch")
        k = _K_TENSOR if torch is not None and issubclass(t, torch.Tensor) else _K_OTHER
        if k == _K_TENSOR or torch is not None:  # a type seen before torch was imported may be a tensor later
            _TYPE_KINDS[t] = k
    return k


# torch dtype -> Triton's name of it (`float32`, `int1` for bool), filled as dtypes are seen.
_TORCH_DTYPE_NAMES = {}


def _torch_dtype_name(dt):
    name = _TORCH_DTYPE_NAMES.get(dt)
    if name is None:
        name = str(dt).removeprefix("torch.")
        name = _TORCH_DTYPE_NAMES[dt] = "int1" if name == "bool" else name
    return name


def _module_source(fn) -> tuple[str, str]:
    """(file name, text) of the module `fn` is defined in."""
    filename = fn.__code__.co_filename
    module = sys.modules.get(fn.__module__)
    text = None
    if module is not None and getattr(module, "__file__", None):
        try:
            text = inspect.getsource(module)
        except (OSError, TypeError):
            text = None
    if text is None:
        lines = linecache.getlines(filename, fn.__globals__)
        text = "".join(lines) if lines else None
    if not text:
        raise RuntimeError(
            f"tessel compiles `{fn.__name__}` from the source of its module, but the source of {filename} "
            "cannot be read (kernels must be defined in a .py file)"
        )
    return filename, text


class KernelParam:
    """A kernel parameter; `num` (its position) and `is_constexpr` as Triton's (torch's inductor reads them)."""

    def __init__(self, name, constexpr, default, num=None):
        self.name, self.constexpr, self.default, self.num = name, constexpr, default, num

    @property
    def is_constexpr(self):
        return self.constexpr


def _unwrap(v):
    return v.value if isinstance(v, tl.constexpr) else v


class JITFunction(KernelInterface):
    """A kernel: launch it with `kernel[grid](*args, **kwargs)`."""

    def __init__(self, fn, *, do_not_specialize=(), do_not_specialize_on_alignment=(), decorator="tessel",
                 launch_metadata=None, **_unused):
        self.fn = fn
        # `launch_metadata(grid, kernel, args) -> {"name": .., "flops16": ..}`: how triton.profiler's launch hook
        # names and measures this kernel's launches.
        self.launch_metadata = launch_metadata
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.decorator = decorator
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.do_not_specialize = {self.arg_names[a] if isinstance(a, int) else a for a in do_not_specialize or ()}
        # Kept for Triton's readers (`params[i].do_not_specialize_on_alignment`); pointers are still specialized on
        # 16-byte alignment, which only adds specializations and changes no result.
        self.do_not_specialize_on_alignment = {
            self.arg_names[a] if isinstance(a, int) else a for a in do_not_specialize_on_alignment or ()}
        self.module = fn.__module__  # Triton's attributes
        self.__globals__ = fn.__globals__
        self.filename, self.source = _module_source(fn)
        self._params = None
        self._plan = None
        self._binder = self._make_binder()
        self.cache = _KernelCache()
        self._launcher = self._first_launch
        self._lock = threading.Lock()
        # Triton's attributes torch's inductor reads (and blanks) before sending a kernel to its compile workers.
        self.used_global_vals = {}
        self.repr = lambda _: self.__name__

    # --- pickling (torch's inductor sends kernels to and from its compile worker processes) ---
    def __getstate__(self):
        """What pickles: the generated binder and launcher, the lock and the compiled specializations (native code)
        stay behind and are rebuilt; the Python function itself pickles by reference (inductor blanks it first)."""
        state = dict(self.__dict__)
        for k in ("_binder", "_launcher", "_lock", "cache", "_plan"):
            state.pop(k, None)
        if callable(state.get("repr")) and getattr(state["repr"], "__name__", None) == "<lambda>":
            state["repr"] = None  # the default `repr`; rebuilt below
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self.__dict__.get("repr") is None:
            self.repr = lambda _: self.__name__
        self._plan = None
        self._binder = self._make_binder()
        self.cache = _KernelCache()
        self._launcher = self._first_launch
        self._lock = threading.Lock()

    # --- the kernel's parameters, as the compiler reads them ---
    @property
    def params(self):
        if self._params is None:
            modules = _modules.for_kernel(self)
            found = [k for k in _tessel.kernels(self.source, self.filename, modules=modules) if k[0] == self.__name__]
            if not found:
                raise _tessel.CompilationError(
                    f"{self.filename}: no jit kernel `{self.__name__}` at the top level of the module (tessel "
                    "compiles kernels defined at module level, decorated with @triton.jit, @gluon.jit or @tessel.jit)"
                )
            self._params = [KernelParam(*p, num=i) for i, p in enumerate(found[-1][2])]
            for p in self._params:
                p.do_not_specialize = p.name in self.do_not_specialize
                p.do_not_specialize_on_alignment = p.name in self.do_not_specialize_on_alignment
        return self._params

    @property
    def src(self):
        """The kernel function's source text as Triton's `JITFunction.src` has it: dedented, from its `def` on
        (decorators left out; torch parses it as a function definition)."""
        try:
            text = textwrap.dedent(inspect.getsource(self.fn))
        except (OSError, TypeError):
            return self.source
        m = re.search(r"^(async\s+)?def\s+\w+\s*\(", text, re.MULTILINE)
        return text[m.start():] if m else text

    @property
    def _fn_name(self):
        """Triton's full name of the kernel function, `module.qualname`."""
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    @property
    def constexprs(self):
        """The positions of the constexpr parameters (Triton's attribute)."""
        return [p.num for p in self.params if p.is_constexpr]

    @property
    def cache_key(self):
        """Triton's `cache_key`: a hash that changes when the kernel's source (its module's text) changes."""
        return self.src_hash

    @property
    def src_hash(self):
        import hashlib

        return hashlib.sha256(f"{self.__name__}\0{self.source}".encode()).hexdigest()

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"`{self.__name__}` is a kernel: launch it with {self.__name__}[grid](...)")

    def __getitem__(self, grid):
        if profiler.hooked():
            return functools.partial(self._profiled_launch, grid)
        return functools.partial(self._launcher, grid)

    def _profiled_launch(self, grid, *args, **kwargs):
        """A launch timed for triton.profiler (a session with hook='triton' is active)."""
        bound = self.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in self.arg_names})
        bound.apply_defaults()
        named = dict(bound.arguments)
        resolved = grid(named) if callable(grid) else grid
        return profiler.launch(self, resolved, named, self.launch_metadata,
                               lambda: self._launcher(grid, *args, **kwargs))

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    # --- binding and specialization ---
    def bind(self, args, kwargs):
        """The value of every parameter by name (defaults applied) and the launch options."""
        opts = {**_LAUNCH_DEFAULTS, "launch_pdl": False}
        kwargs = dict(kwargs)
        params = self.signature.parameters
        _refuse_amd_options([k for k in _AMD_OPTIONS if k in kwargs and k not in params])
        for k in _RUNTIME_OPTIONS:
            if k in kwargs and k not in params:
                opts[k] = bool(kwargs.pop(k))
        # A keyword that names both a launch option and a parameter (a `num_stages: tl.constexpr` parameter)
        # is both, as in Triton.
        for k in _LAUNCH_OPTIONS:
            if k in kwargs:
                opts[k] = kwargs[k] if k in params else kwargs.pop(k)
        for k in _IGNORED_OPTIONS:
            if k not in params:
                kwargs.pop(k, None)
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments), opts

    def _make_binder(self):
        """A function `(*args, **kwargs) -> (values in signature order, (num_warps, num_stages, num_ctas,
        maxnreg, enable_fp_fusion, launch_pdl))`, generated from the signature as Triton does, so that a launch
        binds its arguments with one Python call; `bind` (through `inspect`) when the signature is not a plain list
        of parameters."""
        params = list(self.signature.parameters.values())
        names = [p.name for p in params]
        reserved = set(_LAUNCH_OPTIONS) | set(_IGNORED_OPTIONS) | set(_RUNTIME_OPTIONS) | set(_AMD_OPTIONS)
        reserved |= {"_tessel_defaults", "_tessel_refuse_amd"}
        plain = all(
            p.kind is p.POSITIONAL_OR_KEYWORD and p.name.isidentifier() and not keyword.iskeyword(p.name)
            and p.name not in reserved
            for p in params
        )
        if not plain:
            def slow(*args, **kwargs):
                values, opts = self.bind(args, kwargs)
                return tuple(values[n] for n in names), tuple(opts[k] for k in _LAUNCH_OPTIONS + _RUNTIME_OPTIONS)

            return slow
        defaults = [p.default for p in params]
        sig = [p.name if p.default is p.empty else f"{p.name}=_tessel_defaults[{i}]" for i, p in enumerate(params)]
        sig.append("*")
        sig += [f"{k}={_LAUNCH_DEFAULTS[k]!r}" for k in _LAUNCH_OPTIONS]
        sig += [f"{k}=None" for k in _IGNORED_OPTIONS]
        sig += ["launch_pdl=False"]
        sig += [f"{k}=None" for k in _AMD_OPTIONS]
        amd = " or ".join(f"{k} is not None" for k in _AMD_OPTIONS)
        body = (
            f"    if {amd}:\n"
            f"        _tessel_refuse_amd([k for k, v in zip({_AMD_OPTIONS!r}, ({', '.join(_AMD_OPTIONS)},)) "
            "if v is not None])\n"
            f"    return ({''.join(n + ', ' for n in names)}), "
            f"({', '.join(_LAUNCH_OPTIONS)}, bool(launch_pdl))\n"
        )
        src = f"def binder({', '.join(sig)}):\n{body}"
        scope = {"_tessel_defaults": defaults, "_tessel_refuse_amd": _refuse_amd_options}
        exec(compile(src, f"<tessel binder of {self.__name__}>", "exec"), scope)  # noqa: S102 - our own text
        binder = scope["binder"]
        # Binding errors name the kernel ("add_kernel() takes 4 positional arguments but 5 were given").
        code = binder.__code__
        named = {"co_name": self.__name__}
        if hasattr(code, "co_qualname"):
            named["co_qualname"] = self.__name__
        binder.__code__ = code.replace(**named)
        binder.__name__ = binder.__qualname__ = self.__name__
        return binder

    def _launch_plan(self):
        """For each compiler parameter, in order: (its index in the signature, name, is constexpr, do not
        specialize)."""
        if self._plan is None:
            index = {n: i for i, n in enumerate(self.arg_names)}
            plan = []
            for p in self.params:
                if p.name not in index:
                    raise TypeError(f"{self.__name__}() has no parameter `{p.name}` in its Python signature")
                plan.append((index[p.name], p.name, p.constexpr, p.name in self.do_not_specialize))
            self._plan = plan
        return self._plan

    def specialize(self, values, opts, interpret):
        """(the native spelling of each parameter's specialization, a hashable cache key); `opts` by name, an
        option left out taking its default."""
        specs = []
        for p in self.params:
            if p.name not in values:
                raise TypeError(f"{self.__name__}() missing a value for parameter `{p.name}`")
            specs.append(_spec_of(p, values[p.name], p.name in self.do_not_specialize))
        key = tuple(
            (s[0], _const_key(s[1], p.name)) if s[0] == "const"
            else tuple(tuple(x) if isinstance(x, list) else x for x in s)
            for p, s in zip(self.params, specs)
        )
        given = tuple(opts.get(k, _LAUNCH_DEFAULTS[k]) for k in _LAUNCH_OPTIONS)
        return specs, key + key_options(given) + (interpret,)

    def compile(self, values, opts, interpret):
        """The compiled specialization (and its specs) of `values` under the launch options `opts` (a dict), from
        the cache or compiled now; its `options` hold `enable_fp_fusion` as compiled (`fp_fusion`)."""
        opts = {**opts, "enable_fp_fusion": fp_fusion(opts.get("enable_fp_fusion"))}
        specs, key = self.specialize(values, opts, interpret)
        with self._lock:
            hit = self.cache.get(key)
        if hit is not None:
            return hit, specs
        native_specs = [
            ("const", native_const(s[1], p.name, self.fn.__globals__)) if s[0] == "const" else s
            for p, s in zip(self.params, specs)
        ]
        native = _tessel.compile(
            self.source, self.filename, self.__name__, native_specs, opts["num_warps"], opts["num_stages"],
            opts["maxnreg"], opts["num_ctas"], modules=_modules.for_kernel(self), fp_fusion=opts["enable_fp_fusion"],
        )
        compiled = CompiledKernel(native, key, dict(opts), self)
        with self._lock:
            compiled = self.cache.setdefault(key, compiled)
        return compiled, specs

    # --- launching ---
    def run(self, *args, grid, warmup=False, **kwargs):
        if not warmup:
            if profiler.hooked():
                return self._profiled_launch(grid, *args, **kwargs)
            return self._launcher(grid, *args, **kwargs)
        # Warm-up takes the launcher's path up to the launch: a warmed-up specialization is found by the
        # launcher's cheap key (tutorial 02 warms up before every launch).
        return self._launcher(grid, *_mock_dtypes(args), _t_warmup=True, **kwargs)

    def _first_launch(self, grid, *args, **kwargs):
        """Builds the launcher (on the first launch: it needs the compiler's view of the parameters), then
        launches."""
        self._launcher = make_launcher(self)
        return self._launcher(grid, *args, **kwargs)

    def _launch_miss(self, key, grid, values, opts, warmup=False):
        """The generated launcher's key is not cached: launch (or, for a warm-up, compile and load) through the
        generic path, and remember the compiled kernel under the key when it is a GPU one."""
        compiled = self._run_cuda(values, opts, grid, warmup)
        if compiled is not None:
            self.cache.fast[key] = compiled
            return compiled
        return self._run_slow(values, opts, grid, warmup)

    def _run_slow(self, values, opts, grid, warmup=False):
        """The generic launch: `values` in signature order, `opts` as `_LAUNCH_OPTIONS`."""
        compiled = self._run_cuda(values, opts, grid, warmup)
        if compiled is not None:
            return compiled
        values = dict(zip(self.arg_names, values))
        opts = dict(zip(_LAUNCH_OPTIONS, opts))
        interpret = _use_interpreter(values.values())
        if warmup and interpret and any(type(v) is _MockTensor for v in values.values()):
            # `warmup(torch.float16, ...)` (dtypes for tensors, as Triton allows) compiles for the GPU when there
            # is one, as Triton compiles for the active driver.
            from .runtime import gpu_target

            interpret = gpu_target() is None
        compiled, specs = self.compile(values, opts, interpret)
        if warmup:
            if not interpret:
                _prepare_ptx(compiled)
            return compiled
        g = grid({**values, **opts}) if callable(grid) else grid
        g = _grid3(g)
        if 0 in g:
            return compiled
        # Only the interpreter gets here: `_run_cuda` launched (or refused) every launch with a CUDA tensor.
        _run_interpreter(compiled, self.params, specs, values, g)
        return compiled

    def _run_cuda(self, values, opts, grid, warmup=False):
        """Launches on the GPU when an argument is a CUDA tensor (and `TRITON_INTERPRET` is unset): the compiled
        kernel; None when the launch is the interpreter's. One pass over the arguments builds both the cache key
        (the same as `specialize`'s) and the kernel's runtime arguments. A warm-up compiles and loads only."""
        plan = self._plan if self._plan is not None else self._launch_plan()
        key = []
        ir_args = []
        device = -1
        host = None  # the first argument in host memory
        for index, name, constexpr, dont_specialize in plan:
            v = values[index]
            if constexpr:
                key.append(("const", _const_key(v, name)))
                continue
            kind = _TYPE_KINDS.get(type(v))
            if kind is None:
                kind = _kind_of_type(type(v))
            if kind == _K_TENSOR:
                ptr = v.data_ptr()
                d = v.get_device()
                if d < 0:
                    host = host or name
                elif device != d:
                    if device >= 0:
                        raise ValueError(
                            f"argument `{name}` is on cuda:{d}, but an earlier argument is on cuda:{device}: a "
                            "kernel launches on one device"
                        )
                    device = d
                key.append(("ptr", _torch_dtype_name(v.dtype), ptr % 16 == 0))
                ir_args.append(ptr)
            elif kind == _K_INT:
                if v == 1 and not dont_specialize:
                    key.append(("const", ("int", 1)))
                    continue
                if -(2**31) <= v < 2**31:
                    ty = "i32"
                elif -(2**63) <= v < 2**63:
                    ty = "i64"
                elif 0 <= v < 2**64:
                    ty = "u64"
                else:
                    raise OverflowError(f"argument `{name}` = {v} does not fit in 64 bits")
                key.append(("int", ty, v % 16 == 0 and not dont_specialize))
                ir_args.append(v)
            elif kind == _K_FLOAT:
                key.append(("float", "fp32"))
                ir_args.append(v)
            elif kind == _K_BOOL:
                key.append(("int", "i1", False))
                ir_args.append(int(v))
            else:
                s = _spec_of(KernelParam(name, False, None), v, dont_specialize)
                if s[0] == "const":
                    key.append(("const", _const_key(s[1], name)))
                    continue
                key.append(tuple(tuple(x) if isinstance(x, list) else x for x in s))
                if s[0] in _POINTER_KINDS:
                    t = v.base if s[0] in _DESC_KINDS else v
                    d = t.get_device() if is_cuda_tensor(t) else -1
                    if d < 0:
                        host = host or name
                    elif device != d:
                        if device >= 0:
                            raise ValueError(
                                f"argument `{name}` is on cuda:{d}, but an earlier argument is on cuda:{device}: a "
                                "kernel launches on one device"
                            )
                        device = d
                    ir_args.append(t.data_ptr() if d >= 0 else 0)
                    if s[0] in _DESC_KINDS:
                        ir_args += v._tessel_runtime_ints()
                elif s[0] == "int":
                    ir_args.append(int(v))
                else:
                    ir_args.append(float(v))
        if device < 0 or _interpret_requested():
            return None
        if host is not None:
            raise ValueError(f"argument `{host}` is in host memory, but other arguments are CUDA tensors")
        key = tuple(key) + key_options(opts) + (False,)
        compiled = self.cache.get(key)
        if compiled is None:
            named = dict(zip(self.arg_names, values))
            compiled, _ = self.compile(named, dict(zip(_LAUNCH_OPTIONS, opts)), False)
            # The compiled kernel is cached under `specialize`'s key, which this one must equal.
            assert compiled.spec_key == key, (compiled.spec_key, key)
            if not warmup:
                # Load it now: compile and load errors surface before the launch (and outside the timed path).
                compiled.native.load(device)
        if warmup:
            # Every warm-up of a specialization that has no code raises (the autotuner skips such configs), not
            # only the first.
            _prepare_ptx(compiled)
            return compiled
        if callable(grid):
            meta = dict(zip(self.arg_names, values))
            meta.update(zip(_LAUNCH_OPTIONS, opts))
            grid = grid(meta)
        n = len(grid) if type(grid) is tuple else 0
        if n == 1 and type(grid[0]) is int and 0 < grid[0] < 2**31:
            g = (grid[0], 1, 1)
        else:
            g = _grid3(grid)
            if 0 in g:
                return compiled
        if len(opts) > _N_KEY_OPTIONS and opts[_N_KEY_OPTIONS]:
            compiled.native.launch(device, _stream_of(device), g, ir_args, True)
        else:
            compiled.native.launch(device, _stream_of(device), g, ir_args)
        return compiled

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles the specialization these arguments select, without running it: the launcher's path up to the
        launch, as `run(..., warmup=True)` takes it (called directly: tutorial 02 warms up before every launch)."""
        return self._launcher(grid, *_mock_dtypes(args), _t_warmup=True, **kwargs)


class _KernelCache(dict):
    """The compiled specializations by `specialize`'s key; `fast` maps the generated launcher's cheaper key to the
    same compiled kernels, and is emptied with it."""

    def __init__(self):
        super().__init__()
        self.fast = {}

    def clear(self):
        self.fast.clear()
        super().clear()

    def pop(self, *args):
        self.fast.clear()
        return super().pop(*args)

    def popitem(self):
        self.fast.clear()
        return super().popitem()

    def __delitem__(self, key):
        self.fast.clear()
        super().__delitem__(key)


def _prepare_ptx(compiled):
    """Compiles a warmed-up GPU specialization to PTX (into the disk cache, which its first load then hits), so
    that the autotuner's parallel warm-up covers code generation too; once per specialization."""
    if compiled._ptx_ready:
        return
    from .runtime import gpu_target

    target = gpu_target()
    if target is not None:
        compiled.native.ptx(target)
    compiled._ptx_ready = True


class _MockTensor:
    """What `warmup` binds for a dtype given in place of a tensor (`kernel.warmup(torch.float16, ...)`, as
    Triton's warm-up accepts): a 16-byte-aligned pointer of that element type, with no memory."""

    def __init__(self, dtype):
        self.dtype = dtype

    def data_ptr(self):
        return 0


def _mock_dtypes(args):
    """`args` with each torch dtype replaced by a `_MockTensor` of it."""
    dtype = getattr(sys.modules.get("torch"), "dtype", None)
    for a in args:
        if a.__class__ is dtype:
            return tuple(_MockTensor(a) if type(a) is dtype else a for a in args)
    return args


def _is_array(v):
    return hasattr(v, "__array_interface__") or is_torch_tensor(v)


def _is_desc(v):
    return isinstance(v, HostDescriptor)


def _use_interpreter(values):
    if _interpret_requested():
        return True
    for v in values:
        t = v.base if _is_desc(v) else v
        if is_cuda_tensor(t):
            return False
    return True


def _spec_of(p, v, dont_specialize):
    """The specialization of one parameter, as Triton's launcher decides it."""
    v = _unwrap(v) if p.constexpr or isinstance(v, tl.constexpr) else v
    if type(v).__module__ == "numpy" and hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        v = v.item()  # numpy scalars are scalars, not arrays
    if p.constexpr or v is None or isinstance(v, (tl.dtype, str, _Layout)):
        return ("const", v)
    if isinstance(v, bool):
        return ("int", "i1", False)
    if isinstance(v, int):
        if v == 1 and not dont_specialize:
            return ("const", 1)
        if -(2**31) <= v < 2**31:
            ty = "i32"
        elif -(2**63) <= v < 2**63:
            ty = "i64"
        elif v < 2**64:
            ty = "u64"
        else:
            raise OverflowError(f"argument `{p.name}` = {v} does not fit in 64 bits")
        return ("int", ty, v % 16 == 0 and not dont_specialize)
    if isinstance(v, float):
        return ("float", "fp32")
    if _is_desc(v):
        return v._tessel_spec()
    if type(v) is _MockTensor:
        return ("ptr", _torch_dtype_name(v.dtype), True)
    if _is_array(v):
        from ._memory import data_ptr

        return ("ptr", tensor_dtype_name(v), data_ptr(v) % 16 == 0)
    if isinstance(v, tuple):
        return ("const", v)
    raise TypeError(f"cannot pass {type(v).__name__} as argument `{p.name}` of a kernel")


def _run_interpreter(compiled, params, specs, values, grid):
    regions = HostRegions()
    ir_args = []
    for p, s in zip(params, specs):
        v = values[p.name]
        kind = s[0]
        if kind == "const":
            continue
        if kind == "ptr":
            ir_args.append(("buf", regions.add(v)))
        elif kind in _DESC_KINDS:
            ir_args.append(("buf", regions.add(v.base)))
            ir_args += [("int", d) for d in v._tessel_runtime_ints()]
        elif kind == "int":
            ir_args.append(("int", int(v)))
        else:
            ir_args.append(("float", float(v)))
    if len(ir_args) != compiled.native.num_ir_args():
        raise RuntimeError(
            f"`{compiled.name}` takes {compiled.native.num_ir_args()} runtime arguments, the launch gives "
            f"{len(ir_args)}"
        )
    out, log = compiled.native.interpret(regions.buffers(), ir_args, list(grid))
    regions.write_back(out)
    for line in log:
        print(line)


def jit(fn=None, *, do_not_specialize=(), **kwargs):
    """`@tessel.jit`, `@tessel.jit(do_not_specialize=[...])`."""

    def wrap(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, **kwargs)

    return wrap(fn) if fn is not None else wrap
