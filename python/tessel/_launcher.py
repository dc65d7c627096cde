"""The launcher generated per kernel: `kernel[grid](...)`'s hot path.

`make_launcher(jf)` writes, from a kernel's signature, a Python function of `(grid, *args, **kwargs)` that checks
each argument's type inline, builds a flat key of what the specialization depends on and the packed runtime
arguments in one pass, and launches the cached kernel natively; anything it does not handle inline goes to the
kernel's generic path (`JITFunction._run_slow`), which raises the errors and fills the cache. `grid_fast` is the
grid check that path and `CompiledKernel[grid]` share. The launch options, `TRITON_INTERPRET`,
`TRITON_DEFAULT_FP_FUSION` and torch's current stream are read here too: the bottom of the launch path, which
`jit` and `compiled` build on.
"""

from __future__ import annotations

import keyword
import operator
import os
import sys

from . import language as tl
from ._tessel import DEFAULT_LAUNCH
from ._triton import knobs as _knobs
from ._constants import const_key as _const_key
from .runtime import TRUE_VALUES as _TRUE_VALUES
from .tools import TensorDescriptor

# The compile options a launch may give, in the order of the binder's options tuple; each keys the caches.
_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion")
# Their defaults in the launcher's signature: Triton's, from the compiler's `KernelConfig`, except
# `enable_fp_fusion`, whose None (not given) stands for `knobs.language.default_fp_fusion`, read when the
# specialization is compiled (`fp_fusion`): the launcher keys its cache on the options as given, as Triton does.
_LAUNCH_DEFAULTS = {**DEFAULT_LAUNCH, "enable_fp_fusion": None}
# Accepted for Triton compatibility and ignored. `extern_libs` names the libdevice bitcode Triton links; tessel
# compiles libdevice calls with its own routines, so the paths are not read.
_IGNORED_OPTIONS = ("debug", "launch_cooperative_grid", "stream", "extern_libs")
# Launch keywords that change how a compiled kernel is launched, not what is compiled: they follow the
# `_LAUNCH_OPTIONS` in the binder's options tuple and stay out of every cache key. `launch_pdl`: a programmatic
# dependent launch (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION), as Triton's launcher sets it.
_RUNTIME_OPTIONS = ("launch_pdl",)
# Launch options only AMD's backend has (tutorial 10's CDNA4 kernel passes `matrix_instr_nonkdim`).
_AMD_OPTIONS = ("matrix_instr_nonkdim", "waves_per_eu", "kpack")


def _refuse_amd_options(given):
    """The error for AMD-only launch options (`given`: their names)."""
    if given:
        raise NotImplementedError(f"AMD targets are not supported yet: the launch option(s) "
                                  f"{', '.join(f'`{k}`' for k in given)} exist only on AMD GPUs")


_N_KEY_OPTIONS = len(_LAUNCH_OPTIONS)


def fp_fusion(given):
    """Whether `a * b + c` may contract to one `fma` (Triton's `enable_fp_fusion`): `given`, else (None) Triton's
    default, `knobs.language.default_fp_fusion` (`TRITON_DEFAULT_FP_FUSION`, on unless set false)."""
    return _knobs.language.default_fp_fusion if given is None else bool(given)


def key_options(opts):
    """The compile options of a launch's options tuple (`_LAUNCH_OPTIONS` order, runtime options after them) as
    the kernel's cache keys them: `enable_fp_fusion` resolved by `fp_fusion`."""
    *given, fusion = opts[:_N_KEY_OPTIONS]
    return (*given, fp_fusion(fusion))


# `TRITON_INTERPRET`, read on every launch: `os.environ.get` costs about a microsecond (it encodes the key), so
# read the environment's underlying mapping when CPython exposes it.
_ENV_DATA = getattr(os.environ, "_data", None)
_INTERPRET_KEY = None
if isinstance(_ENV_DATA, dict) and hasattr(os.environ, "encodekey") and hasattr(os.environ, "decodevalue"):
    _INTERPRET_KEY = os.environ.encodekey("TRITON_INTERPRET")


def _interpret_requested() -> bool:
    """Whether `TRITON_INTERPRET` asks for the interpreter."""
    if _INTERPRET_KEY is not None:
        v = _ENV_DATA.get(_INTERPRET_KEY)
        if v is None:
            return False
        v = os.environ.decodevalue(v)
    else:
        v = os.environ.get("TRITON_INTERPRET")
        if v is None:
            return False
    return v in _TRUE_VALUES or v.strip().lower() in _TRUE_VALUES


_current_stream = None


def _stream_of(device):
    """torch's current stream of CUDA device `device`, as a `CUstream` handle (an int)."""
    global _current_stream
    if _current_stream is None:
        try:
            from torch._C import _cuda_getCurrentRawStream as raw  # what Triton's launcher uses: no Stream object
        except ImportError:
            import torch

            def raw(d):
                return torch.cuda.current_stream(d).cuda_stream

        _current_stream = raw
    return _current_stream(device)


# CUDA's grid limits: programs along x, y and z.
_GRID_LIMITS = (2**31 - 1, 65535, 65535)


def _grid3(g):
    """A grid as 3 ints, checked: each an integer (not a float, which would be truncated), at most CUDA's limit
    for its axis; a zero dimension is an empty grid. Errors name the axis and the limit."""
    if isinstance(g, int) or hasattr(g, "__index__"):
        g = (g,)
    try:
        dims = tuple(g)
    except TypeError:
        raise TypeError(f"grid: expected an int, a tuple of 1 to 3 ints, or a function of the meta-parameters "
                        f"returning one; got {g!r}") from None
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"grid: a grid has 1 to 3 dimensions, got {dims}")
    out = []
    for axis, x in zip("xyz", dims):
        v = x.value if isinstance(x, tl.constexpr) else x
        try:
            n = operator.index(v)
        except TypeError:
            raise TypeError(f"grid: programs along {axis} must be an integer, got {v!r}") from None
        limit = _GRID_LIMITS["xyz".index(axis)]
        if n < 0:
            raise ValueError(f"grid: {n} programs along {axis}: a grid dimension cannot be negative")
        if n > limit:
            raise ValueError(f"grid: {n} programs along {axis} is more than CUDA allows ({limit})")
        out.append(n)
    return tuple(out) + (1,) * (3 - len(out))


_SIMPLE_CONST_TYPES = frozenset({int, bool, float, str, type(None)})


def grid_fast(g):
    """`g` as 3 positive ints, or None for an empty grid."""
    if g.__class__ is tuple:
        n = len(g)
        if n == 1:
            x = g[0]
            if x.__class__ is int and 0 < x < 2**31:
                return (x, 1, 1)
        elif n == 2:
            x, y = g
            if x.__class__ is int and y.__class__ is int and 0 < x < 2**31 and 0 < y < 65536:
                return (x, y, 1)
        elif n == 3:
            x, y, z = g
            if x.__class__ is int and y.__class__ is int and z.__class__ is int and 0 < x < 2**31 and 0 < y < 65536 \
                    and 0 < z < 65536:
                return g
    g = _grid3(g)
    return None if 0 in g else g


def make_launcher(jf):
    """The launcher of one kernel: a function of `(grid, *args, **kwargs)`, generated from its signature (as
    Triton generates its binder), that checks each argument's type inline, builds a flat key of what the
    specialization depends on and the packed runtime arguments, and launches the cached kernel natively. Anything
    it does not handle inline (no CUDA tensor, `TRITON_INTERPRET`, tensor subclasses, descriptors other than
    `TensorDescriptor` over a torch tensor, None, numpy scalars, mixed devices, a new specialization) goes to the generic path (`_run_slow`), which raises the errors
    and fills the cache."""
    params = list(jf.signature.parameters.values())
    names = [p.name for p in params]
    torch = sys.modules.get("torch")

    def generic(grid, *args, _t_warmup=False, **kwargs):
        if torch is None and "torch" in sys.modules:
            jf._launcher = make_launcher(jf)  # torch arrived: later launches may be on CUDA tensors
        values, opts = jf._binder(*args, **kwargs)
        return jf._run_slow(values, opts, grid, _t_warmup)

    reserved = set(_IGNORED_OPTIONS) | set(_RUNTIME_OPTIONS) | set(_AMD_OPTIONS)
    plain = all(
        p.kind is p.POSITIONAL_OR_KEYWORD and p.name.isidentifier() and not keyword.iskeyword(p.name)
        and not p.name.startswith("_t_") and p.name not in reserved
        for p in params
    )
    compiler = [(p.name, p.constexpr) for p in jf.params]
    if torch is None or not plain or [n for n, _ in compiler] != names:
        return generic
    constexpr = {n: c for n, c in compiler}
    # A parameter named like a launch option (tutorial 02's `num_stages: tl.constexpr`) is a variable of its own
    # inside the launcher; a wrapper gives a keyword of that name to both (see `_shared_option_launcher`).
    var = {n: f"_t_p_{n}" if n in _LAUNCH_OPTIONS else n for n in names}
    sig = ["_t_grid"]
    sig += [var[p.name] if p.default is p.empty else f"{var[p.name]}=_t_defaults[{i}]" for i, p in enumerate(params)]
    # Extra positional arguments land in `_t_extra` and raise an error counting the kernel's own parameters (a
    # plain signature would count the grid too).
    sig += ["*_t_extra"] + [f"{k}={_LAUNCH_DEFAULTS[k]!r}" for k in _LAUNCH_OPTIONS]
    sig += [f"{k}=None" for k in _IGNORED_OPTIONS]
    sig += ["launch_pdl=False"]
    sig += [f"{k}=None" for k in _AMD_OPTIONS]
    sig += ["_t_warmup=False"]
    values = "(" + "".join(f"{var[n]}, " for n in names) + ")"
    opts = f"({', '.join(_LAUNCH_OPTIONS)}, bool(launch_pdl))"
    slow = f"return _t_slow(_t_grid, {values}, {opts}, _t_warmup)"
    amd = " or ".join(f"{k} is not None" for k in _AMD_OPTIONS)
    lines = [
        f"def launcher({', '.join(sig)}):",
        "    if _t_extra:",
        "        _t_too_many(len(_t_extra))",
        f"    if {amd}:",
        f"        _t_refuse_amd([k for k, v in zip({_AMD_OPTIONS!r}, ({', '.join(_AMD_OPTIONS)},)) if v is not None])",
        "    _t_args = []",
        "    _t_dev = -2",
    ]
    key = []
    for i, n in enumerate(names):
        v = var[n]
        if constexpr[n]:
            lines += [
                f"    _t_k{i} = {v}.__class__",
                f"    _t_c{i} = {v} if _t_k{i} in _t_simple else _t_const_key({v}, {n!r})",
            ]
        else:
            one = n not in jf.do_not_specialize
            lines += [
                f"    _t_k{i} = {v}.__class__",
                f"    if _t_k{i} is _t_tensor:",
                f"        _t_a = {v}.data_ptr()",
                f"        _t_d = {v}.get_device()",
                "        if _t_d != _t_dev:",
                "            if _t_dev != -2 or _t_d < 0:",
                f"                {slow}",
                "            _t_dev = _t_d",
                f"        _t_k{i} = {v}.dtype",
                f"        _t_c{i} = _t_a & 15 == 0",
                "        _t_args.append(_t_a)",
                f"    elif _t_k{i} is int:",
                f"        if {one} and {v} == 1:",
                f"            _t_c{i} = 0",
                f"        elif -2147483648 <= {v} < 2147483648:",
                f"            _t_c{i} = 2 if {one} and {v} & 15 == 0 else 1",
                f"            _t_args.append({v})",
                f"        elif -9223372036854775808 <= {v} < 9223372036854775808:",
                f"            _t_c{i} = 4 if {one} and {v} & 15 == 0 else 3",
                f"            _t_args.append({v})",
                "        else:",
                f"            {slow}",
                f"    elif _t_k{i} is float:",
                f"        _t_c{i} = 10",
                f"        _t_args.append({v})",
                f"    elif _t_k{i} is bool:",
                f"        _t_c{i} = 11",
                f"        _t_args.append(1 if {v} else 0)",
                # A host tensor descriptor (tutorial 06 passes four per launch): its base tensor's pointer, then
                # its shape and strides; the key holds the dtype, the block shape and the padding.
                f"    elif _t_k{i} is _t_desc and {v}.base.__class__ is _t_tensor:",
                f"        _t_b = {v}.base",
                "        _t_d = _t_b.get_device()",
                "        if _t_d != _t_dev:",
                "            if _t_dev != -2 or _t_d < 0:",
                f"                {slow}",
                "            _t_dev = _t_d",
                f"        _t_k{i} = _t_b.dtype",
                f"        _t_c{i} = (*{v}.block_shape, {v}.padding)",
                "        _t_args.append(_t_b.data_ptr())",
                f"        _t_args += {v}.shape",
                f"        _t_args += {v}.strides",
                "    else:",
                f"        {slow}",
            ]
        key += [f"_t_k{i}", f"_t_c{i}"]
    meta = "{" + "".join(f"{k!r}: {k}, " for k in _LAUNCH_OPTIONS if k not in var) + "".join(
        f"{n!r}: {var[n]}, " for n in names) + "}"
    lines += [
        "    if _t_dev < 0 or _t_interpret():",
        f"        {slow}",
        f"    _t_key = ({''.join(k + ', ' for k in key)}{', '.join(_LAUNCH_OPTIONS)})",
        "    _t_c = _t_fast_get(_t_key)",
        "    if _t_c is None:",
        f"        return _t_miss(_t_key, _t_grid, {values}, {opts}, _t_warmup)",
        "    if _t_warmup:",
        "        return _t_c",
        "    if _t_grid.__class__ is not tuple and callable(_t_grid):",
        f"        _t_grid = _t_grid({meta})",
        "    _t_g = _t_grid_fast(_t_grid)",
        "    if _t_g is not None and launch_pdl:",
        "        _t_c.native.launch(_t_dev, _t_stream(_t_dev), _t_g, _t_args, True)",
        "    elif _t_g is not None:",
        "        _t_c.native.launch(_t_dev, _t_stream(_t_dev), _t_g, _t_args)",
        "    return _t_c",
    ]
    scope = {
        "_t_defaults": [p.default for p in params],
        "_t_tensor": torch.Tensor,
        "_t_desc": TensorDescriptor,
        "_t_simple": _SIMPLE_CONST_TYPES,
        "_t_const_key": _const_key,
        "_t_interpret": _interpret_requested,
        "_t_fast_get": jf.cache.fast.get,
        "_t_miss": jf._launch_miss,
        "_t_slow": lambda grid, values, opts, warmup: jf._run_slow(values, opts, grid, warmup),
        "_t_refuse_amd": _refuse_amd_options,
        "_t_grid_fast": grid_fast,
        "_t_stream": _stream_of,
        "_t_too_many": lambda extra: _too_many_arguments(jf.__name__, params, extra),
    }
    src = "\n".join(lines) + "\n"
    exec(compile(src, f"<tessel launcher of {jf.__name__}>", "exec"), scope)  # noqa: S102 - our own text
    launcher = scope["launcher"]
    launcher.source = src
    # Binding errors name the kernel ("add_kernel() missing 1 required positional argument: 'BLOCK'").
    launcher.__name__ = launcher.__qualname__ = jf.__name__
    shared = [n for n in names if n in _LAUNCH_OPTIONS]
    return _shared_option_launcher(launcher, shared) if shared else launcher


def _too_many_arguments(name, params, extra):
    """Python's own error for too many positional arguments, counting the kernel's parameters."""
    most = len(params)
    least = sum(p.default is p.empty for p in params)
    takes = f"{most}" if least == most else f"from {least} to {most}"
    raise TypeError(f"{name}() takes {takes} positional argument{'s' if most != 1 else ''} but "
                    f"{most + extra} were given")


def _shared_option_launcher(inner, shared):
    """`inner` (a generated launcher whose parameters named like launch options are renamed `_t_p_NAME`) called
    as the kernel is: a keyword of such a name sets both the parameter and the option, as in Triton."""
    renamed = [(n, f"_t_p_{n}") for n in shared]

    def launcher(grid, *args, **kwargs):
        for name, param in renamed:
            if name in kwargs:
                kwargs[param] = kwargs[name]
        return inner(grid, *args, **kwargs)

    launcher.source = inner.source
    return launcher
