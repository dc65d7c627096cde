"""`@tessel.jit` / `@triton.jit`: Triton's launch API over tessel's compiler.

`kernel[grid](*args, num_warps=4, num_stages=3, **constexprs)` binds the arguments the way Triton's launcher
does, builds the specialization (pointers by dtype and 16-byte alignment; integers as i32 when they fit, else
i64, with 1 as a constant and multiples of 16 marked; floats as fp32; None, bools given to constexpr
parameters and dtypes as constants), compiles it once per specialization (cached in memory), and runs it:

* on numpy arrays and CPU torch tensors: in tessel's reference interpreter; every array the kernel can reach is
  copied in, and copied back into the same memory afterwards;
* on CUDA torch tensors: compiled to PTX and launched on the GPU through tessel's runtime (unless
  `TRITON_INTERPRET=1`, which runs the interpreter on host copies).

The kernel's source is the whole file the function is defined in (the compiler resolves its imports, helpers
and module-level constants from it).
"""

from __future__ import annotations

import inspect
import linecache
import os
import sys
import threading

from . import _tessel
from . import language as tl
from ._memory import HostRegions, is_cuda_tensor, is_torch_tensor, tensor_dtype_name

_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


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
    def __init__(self, name, constexpr, default):
        self.name, self.constexpr, self.default = name, constexpr, default


def _unwrap(v):
    return v.value if isinstance(v, tl.constexpr) else v


def _const_key(v):
    """A hashable key of a compile-time value."""
    v = _unwrap(v)
    if isinstance(v, (tuple, list)):
        return ("t",) + tuple(_const_key(x) for x in v)
    if isinstance(v, tl.dtype):
        return ("dtype", v.name)
    return (type(v).__name__, v)


class CompiledKernel:
    """One specialization of a kernel: its tile IR (`asm["tile"]`), PTX on demand (`ptx(target)`)."""

    def __init__(self, native, spec_key, options):
        self.native = native
        self.spec_key = spec_key
        self.options = options
        self.name = native.name

    @property
    def asm(self):
        return {"tile": self.native.tile_ir()}

    def ptx(self, target="sm_90a"):
        return self.native.ptx(target)

    def __repr__(self):
        return f"<tessel.CompiledKernel {self.name} {self.options}>"


class JITFunction:
    """A kernel: launch it with `kernel[grid](*args, **kwargs)`."""

    def __init__(self, fn, *, do_not_specialize=(), decorator="tessel", **_unused):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.decorator = decorator
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.do_not_specialize = {self.arg_names[a] if isinstance(a, int) else a for a in do_not_specialize}
        self.filename, self.source = _module_source(fn)
        self._params = None
        self.cache = {}
        self._lock = threading.Lock()

    # --- the kernel's parameters, as the compiler reads them ---
    @property
    def params(self):
        if self._params is None:
            found = [k for k in _tessel.kernels(self.source, self.filename) if k[0] == self.__name__]
            if not found:
                raise _tessel.CompilationError(
                    f"{self.filename}: no jit kernel `{self.__name__}` at the top level of the module (tessel "
                    "compiles kernels defined at module level, decorated with @triton.jit, @gluon.jit or @tessel.jit)"
                )
            self._params = [KernelParam(*p) for p in found[-1][2]]
        return self._params

    @property
    def src_hash(self):
        import hashlib

        return hashlib.sha256(f"{self.__name__}\0{self.source}".encode()).hexdigest()

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"`{self.__name__}` is a kernel: launch it with {self.__name__}[grid](...)")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"

    # --- binding and specialization ---
    def bind(self, args, kwargs):
        """The value of every parameter by name (defaults applied) and the launch options."""
        opts = {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None}
        for k in _LAUNCH_OPTIONS:
            if k in kwargs:
                opts[k] = kwargs.pop(k)
        for k in ("debug", "enable_fp_fusion", "launch_cooperative_grid", "stream"):
            kwargs.pop(k, None)
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments), opts

    def specialize(self, values, opts, interpret):
        """(the native spelling of each parameter's specialization, a hashable cache key)."""
        specs = []
        for p in self.params:
            if p.name not in values:
                raise TypeError(f"{self.__name__}() missing a value for parameter `{p.name}`")
            specs.append(_spec_of(p, values[p.name], p.name in self.do_not_specialize))
        key = tuple(
            (s[0], _const_key(s[1])) if s[0] == "const" else tuple(tuple(x) if isinstance(x, list) else x for x in s)
            for s in specs
        )
        return specs, key + (opts["num_warps"], opts["num_stages"], opts["num_ctas"], opts["maxnreg"], interpret)

    def compile(self, values, opts, interpret):
        specs, key = self.specialize(values, opts, interpret)
        with self._lock:
            hit = self.cache.get(key)
        if hit is not None:
            return hit, specs
        if not interpret and (opts["num_ctas"] != 1 or opts["maxnreg"] is not None):
            raise NotImplementedError(
                "tessel's GPU pipeline takes num_warps and num_stages; num_ctas != 1 and maxnreg are not "
                "supported yet (the interpreter runs such launches, since they do not change results)"
            )
        native_specs = [("const", _unwrap(s[1])) if s[0] == "const" else s for s in specs]
        native = _tessel.compile(
            self.source, self.filename, self.__name__, native_specs, opts["num_warps"], opts["num_stages"]
        )
        compiled = CompiledKernel(native, key, dict(opts))
        with self._lock:
            compiled = self.cache.setdefault(key, compiled)
        return compiled, specs

    # --- launching ---
    def run(self, *args, grid, warmup=False, **kwargs):
        values, opts = self.bind(args, kwargs)
        interpret = _use_interpreter(values.values())
        compiled, specs = self.compile(values, opts, interpret)
        if warmup:
            if not interpret:
                # Compile to PTX now (into the disk cache, which the first launch's load then hits), so that the
                # autotuner's parallel warm-up covers code generation too. Untested: no GPU here.
                from .runtime import gpu_target

                target = gpu_target()
                if target is not None:
                    compiled.native.ptx(target)
            return compiled
        g = grid({**values, **opts}) if callable(grid) else grid
        g = _grid3(g)
        if 0 in g:
            return compiled
        if interpret:
            _run_interpreter(compiled, self.params, specs, values, g)
        else:
            _run_cuda(compiled, self.params, specs, values, g)
        return compiled

    def warmup(self, *args, grid=None, **kwargs):
        """Compiles the specialization these arguments select, without running it."""
        return self.run(*args, grid=grid, warmup=True, **kwargs)


def _grid3(g):
    if isinstance(g, int):
        g = (g,)
    g = tuple(int(_unwrap(x)) for x in g)
    if not 1 <= len(g) <= 3:
        raise ValueError(f"a grid has 1 to 3 dimensions, got {g}")
    if any(x < 0 or x >= 2**31 for x in g):
        raise ValueError(f"grid dimensions must be in [0, 2^31), got {g}")
    return g + (1,) * (3 - len(g))


def _is_array(v):
    return hasattr(v, "__array_interface__") or is_torch_tensor(v)


def _is_desc(v):
    from .tools import TensorDescriptor

    return isinstance(v, TensorDescriptor)


def _use_interpreter(values):
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
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
    if p.constexpr or v is None or isinstance(v, (tl.dtype, str)):
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
        return ("desc", tensor_dtype_name(v.base), list(v.block_shape), v.padding == "nan")
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
        elif kind == "desc":
            ir_args.append(("buf", regions.add(v.base)))
            ir_args += [("int", int(d)) for d in v.shape] + [("int", int(d)) for d in v.strides]
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


def _run_cuda(compiled, params, specs, values, grid):
    import torch

    ir_args = []
    for p, s in zip(params, specs):
        v = values[p.name]
        kind = s[0]
        if kind == "const":
            continue
        if kind in ("ptr", "desc"):
            t = v.base if kind == "desc" else v
            if not is_cuda_tensor(t):
                raise ValueError(f"argument `{p.name}` is on the host, but other arguments are CUDA tensors")
            if t.device.index not in (None, 0):
                raise NotImplementedError("tessel's runtime launches on CUDA device 0 only")
            ir_args.append(("ptr", t.data_ptr()))
            if kind == "desc":
                ir_args += [("int", int(d)) for d in v.shape] + [("int", int(d)) for d in v.strides]
        elif kind == "int":
            ir_args.append(("int", int(v)))
        else:
            ir_args.append(("float", float(v)))
    # tessel launches on its runtime's stream: order it after torch's work and before what follows.
    torch.cuda.current_stream().synchronize()
    compiled.native.launch_cuda(ir_args, list(grid))
    _tessel.Compiled.synchronize()


def jit(fn=None, *, do_not_specialize=(), **kwargs):
    """`@tessel.jit`, `@tessel.jit(do_not_specialize=[...])`."""

    def wrap(f):
        return JITFunction(f, do_not_specialize=do_not_specialize, **kwargs)

    return wrap(fn) if fn is not None else wrap
