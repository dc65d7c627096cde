"""Triton's compiler face under the shim: `triton.compiler` (`ASTSource`, `compile`, `make_backend`,
`CompiledKernel`, `triton_key`), `triton.compiler.errors`, `triton.compile` and `triton.backends` (an `nvidia`
backend when tessel finds a usable GPU, a `cpu` backend served by tessel's interpreter always), the modules
torch.compile (inductor) drives.

Written from Triton's documented and observable behaviour (Triton 3.6): an `ASTSource` names a `@triton.jit`
kernel, its signature (`{"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}`), its constants (by name or by
`(index,)`) and its attributes (`{(index,): [["tt.divisibility", 16]]}`); `compile(src, target, options)` maps
those to tessel's specialization (`("ptr", dtype, aligned)`, `("int", ty, multiple_of_16)`, `("float", ty)`,
`("const", value)`) and returns a `compiled.CompiledKernel`, launched with Triton's ABI (`run(gx, gy, gz, stream,
function, packed_metadata, launch_metadata, enter_hook, exit_hook, *args)`, by `launch` here): on the GPU for a
`cuda` target, in the interpreter for a `cpu` one.

Every `compile` is counted (`compile_count`, `compiled_names`) so that tests can see what went through tessel.

inductor's static CUDA launcher (`use_static_cuda_launcher`) launches a Triton cubin with Triton's own kernel
ABI, which tessel's PTX does not share; it looks for that cubin in Triton's cache directory under the kernel's
hash, finds none (tessel writes none there), and falls back to `CompiledKernel.run`. inductor's compile workers
(`compile_threads` > 1) compile with this module too when they were started under `python -m tessel` (which
puts the shim on their path); a compiled kernel carries its recipe (source, specialization, module set) so that
the parent rebuilds the native code after unpickling it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import threading
from typing import Optional, Tuple

from . import _tessel
from ._constants import native_const
from ._launcher import _LAUNCH_OPTIONS, fp_fusion
from .runtime import GPUTarget, _ActiveDriver, gpu_target

CompilationError = _tessel.CompilationError

# What went through `compile`, in order (kernel names), for tests and reports.
compiled_names = []
_count_lock = threading.Lock()


def compile_count() -> int:
    return len(compiled_names)


# --- the source and its specialization ---

class ASTSource:
    """Triton's `ASTSource(fn, signature, constexprs=None, attrs=None)`: a kernel and one specialization of it."""

    def __init__(self, fn, signature, constexprs=None, attrs=None):
        self.fn = fn
        self.name = fn.__name__
        self.ext = "ttir"
        self.signature = dict(signature)
        for k in self.signature:
            if not isinstance(k, str):
                raise TypeError("Signature keys must be string")
        self.constants = {}
        for k, v in (constexprs or {}).items():
            k = (fn.arg_names.index(k),) if isinstance(k, str) else k
            if not isinstance(k, tuple):
                raise TypeError(f"constexpr keys are parameter names or (index,) tuples, got {k!r}")
            self.constants[k] = v
        self.attrs = dict(attrs or {})

    def hash(self):
        sig = [v for _, v in sorted(self.signature.items())]
        consts = "-".join(str(v) for _, v in sorted(self.constants.items()))
        key = f"{self.fn.src_hash}-{sorted(self.attrs.items())}-{sig}-{consts}"
        return hashlib.sha256(key.encode()).hexdigest()

    def parse_options(self):
        return {}


# Triton's scalar type names in signatures -> tessel's (the compiler takes Triton's spellings too).
_INT_TYPES = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64"}
_FLOAT_TYPES = {"fp16", "bf16", "fp32", "fp64", "f16", "f32", "f64"}


def _divisible(attrs, index) -> bool:
    for name, value in attrs.get((index,), ()):
        if name == "tt.divisibility" and value % 16 == 0:
            return True
    return False


def specialization(src):
    """(tessel's spec per parameter, the launch kind per parameter: "ptr", "int", "float" or None for a
    constant) for `src`."""
    fn = src.fn
    specs, kinds = [], []
    names = fn.arg_names
    for i, name in enumerate(names):
        ty = src.signature.get(name, "constexpr")
        if (i,) in src.constants or ty == "constexpr":
            if (i,) not in src.constants:
                raise CompilationError(f"`{src.name}`: constexpr parameter `{name}` has no value in the ASTSource")
            v = src.constants[(i,)]
            specs.append(("const", native_const(v, name, getattr(fn.fn, "__globals__", None) or {})))
            kinds.append(None)
        elif ty.startswith("*"):
            elem = ty[1:].removeprefix("k")  # `*kfp32`: a pointer to constant memory
            specs.append(("ptr", elem, _divisible(src.attrs, i)))
            kinds.append("ptr")
        elif ty in _INT_TYPES:
            specs.append(("int", ty, ty != "i1" and _divisible(src.attrs, i)))
            kinds.append("int")
        elif ty in _FLOAT_TYPES:
            specs.append(("float", ty))
            kinds.append("float")
        else:
            raise NotImplementedError(
                f"`{src.name}`: parameter `{name}` has type `{ty}`, which tessel's triton.compile does not take "
                "(it takes pointers `*dtype`, integers, floats and constexprs)")
    return specs, kinds


def module_set(fn):
    """The module set `fn`'s module is compiled with (`_tessel.compile`'s `modules=`: the modules its imports
    reach, such as torch inductor's `triton_helpers`), read from the live interpreter by `tessel._modules`; None
    without one. inductor's compile workers load a kernel's module without registering it in `sys.modules`, so
    the module is then rebuilt from the kernel function's globals."""
    import types

    from . import _modules

    found = _modules.for_kernel(fn)
    if found is None:
        g = getattr(getattr(fn, "fn", None), "__globals__", None)
        if isinstance(g, dict) and isinstance(g.get("__name__"), str):
            module = types.ModuleType(g["__name__"])
            module.__dict__.update(g)
            found = _modules._module_set_of(module, fn.filename, fn.source)
            fn._tessel_module_set = found
    return found


def _options_dict(options):
    """The options `compile` compiles with, from Triton's (a dict): each given one, else its default;
    `enable_fp_fusion`'s is `knobs.language.default_fp_fusion`, as in Triton's `parse_options`."""
    o = dict(options or {})
    d = _tessel.DEFAULT_LAUNCH
    out = {k: int(o.get(k, d[k])) for k in ("num_warps", "num_stages", "num_ctas")}
    out["maxnreg"] = o.get("maxnreg", d["maxnreg"])
    out["enable_fp_fusion"] = fp_fusion(o.get("enable_fp_fusion"))
    for k in ("launch_pdl", "launch_cooperative_grid", "debug"):
        out[k] = bool(o.get(k, False))
    return out


def compile(src, target=None, options=None, _env_vars=None):  # noqa: A001 - Triton's name
    """`triton.compile(src, target=None, options=None)`: compiles `src` (an `ASTSource`) with tessel for
    `target` (the active driver's when None): a `cuda` target compiles for the GPU, a `cpu` one for tessel's
    interpreter."""
    from .compiled import CompiledKernel, build_native
    from .runtime import driver

    if not isinstance(src, ASTSource):
        raise NotImplementedError(
            f"tessel's triton.compile takes an ASTSource (a @triton.jit kernel), not {type(src).__name__} (IR files "
            "are Triton's own formats)")
    if target is None:
        target = driver.active.get_current_target()
    if target.backend not in ("cuda", "cpu"):
        raise NotImplementedError(f"tessel compiles for cuda and its interpreter (cpu), not `{target.backend}`")
    if options is not None and not isinstance(options, dict):
        options = dataclasses.asdict(options) if dataclasses.is_dataclass(options) else dict(vars(options))
    opts = _options_dict(options)
    interpret = target.backend == "cpu"
    fn = src.fn
    specs, kinds = specialization(src)
    recipe = (fn.source, fn.filename, fn.__name__, tuple(specs), opts["num_warps"], opts["num_stages"],
              opts["maxnreg"], opts["num_ctas"], opts["enable_fp_fusion"], module_set(fn))
    native = build_native(recipe)
    key = tuple(tuple(s) for s in specs) + tuple(opts[k] for k in _LAUNCH_OPTIONS) + (interpret,)
    h = hashlib.sha256(f"{src.hash()}-{sorted(opts.items())}-{target}-{triton_key()}".encode()).hexdigest()
    compiled = CompiledKernel(native, key, opts, fn, src=src, recipe=recipe, target=target, hash=h)
    compiled._arg_kinds = tuple(kinds)
    with _count_lock:
        compiled_names.append(fn.__name__)
    return compiled


# --- backends ---

@functools.lru_cache(None)
def triton_key() -> str:
    """What identifies this compiler (Triton's `triton_key()`): tessel's version and a hash of its native
    extension and Python files, so that caches keyed on it (inductor's) are invalidated when tessel changes."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.endswith((".py", ".so")):
            with open(os.path.join(here, name), "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
    return f"tessel-{h.hexdigest()}"


@dataclasses.dataclass(frozen=True)
class TesselOptions:
    """The compile options (the fields of Triton's CUDA options that torch reads; tessel compiles with
    num_warps, num_stages, num_ctas, maxnreg, enable_fp_fusion and launch_pdl, and accepts the others)."""

    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    warp_size: int = 32
    maxnreg: Optional[int] = None
    enable_fp_fusion: bool = True
    enable_reflect_ftz: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    supported_fp8_dtypes: Tuple[str, ...] = ("fp8e5", "fp8e4nv")
    deprecated_fp8_dot_operand_dtypes: Tuple[str, ...] = ()
    default_dot_input_precision: str = "tf32"
    allowed_dot_input_precisions: Tuple[str, ...] = ("tf32", "tf32x3", "ieee")
    max_num_imprecise_acc_default: Optional[int] = None
    extern_libs: Optional[tuple] = None
    debug: bool = False
    sanitize_overflow: bool = True
    backend_name: str = "cuda"
    arch: Optional[str] = None

    def hash(self):
        key = "_".join(f"{k}-{v}" for k, v in sorted(dataclasses.asdict(self).items()))
        return hashlib.sha256(key.encode()).hexdigest()


class BaseBackend:
    """Triton's `BaseBackend`: a compiler for one target (`supports_target`, `hash`, `parse_options`)."""

    def __init__(self, target):
        self.target = target
        if not self.supports_target(target):
            raise ValueError(f"{type(self).__name__} does not compile for {target}")

    @staticmethod
    def supports_target(target):
        raise NotImplementedError


class TesselBackend(BaseBackend):
    """tessel's compiler for a target: `cuda` (the GPU) or `cpu` (the interpreter)."""

    @staticmethod
    def supports_target(target):
        return target.backend in ("cuda", "cpu")

    def hash(self):
        return f"{triton_key()}-{self.target.backend}-{self.target.arch}"

    def parse_options(self, options):
        fields = {f.name for f in dataclasses.fields(TesselOptions)}
        given = {k: v for k, v in dict(options).items() if k in fields}
        given.setdefault("backend_name", self.target.backend)
        if "enable_fp_fusion" not in given:
            given["enable_fp_fusion"] = fp_fusion(None)  # Triton's default: knobs.language.default_fp_fusion
        if self.target.backend == "cuda" and "arch" not in given:
            given["arch"] = f"sm{self.target.arch}"
        if given.get("extern_libs") is not None:
            given["extern_libs"] = tuple(dict(given["extern_libs"]).items())
        return TesselOptions(**given)

    def get_codegen_implementation(self, options):
        return {}

    def get_module_map(self):
        return {}

    def add_stages(self, stages, options, language=None):
        raise NotImplementedError("tessel compiles through its own pipeline (triton.compile), not Triton's stages")

    def load_dialects(self, context):
        raise NotImplementedError("tessel has no MLIR dialects")


class DriverBase(_ActiveDriver):
    """Triton's driver interface (`triton.backends.driver.DriverBase`)."""


class CudaDriver(DriverBase):
    """The GPU driver: active when tessel finds a usable GPU."""

    @staticmethod
    def is_active():
        return gpu_target() is not None


class CpuDriver(DriverBase):
    """The interpreter's driver: kernels compiled for the `cpu` target run in tessel's interpreter on CPU tensors
    and numpy arrays."""

    @staticmethod
    def is_active():
        return True

    def get_current_target(self):
        return GPUTarget("cpu", "interpreter", 32)

    def get_active_torch_device(self):
        import torch

        return torch.device("cpu")


@dataclasses.dataclass(frozen=True)
class Backend:
    """An entry of `triton.backends.backends`: its compiler and driver classes."""

    compiler: type
    driver: type


def backends():
    """`triton.backends.backends`: `nvidia` when tessel finds a usable GPU, and `cpu` (the interpreter) always."""
    found = {}
    if gpu_target() is not None:
        found["nvidia"] = Backend(TesselBackend, CudaDriver)
    found["cpu"] = Backend(TesselBackend, CpuDriver)
    return found


def make_backend(target):
    """Triton's `make_backend(target)`: tessel's backend for `target`."""
    return TesselBackend(target)


def modules(mods, make_module):
    """The compiler-face modules by name, given the shim's other modules `mods` (attributes may be added to
    `mods["triton"]`) and its module constructor `make_module(name, doc, **attrs)`."""
    from .compiled import CompiledKernel

    errors = make_module("triton.compiler.errors", "tessel's compilation errors", CompilationError=CompilationError)
    face = dict(ASTSource=ASTSource, CompiledKernel=CompiledKernel, compile=compile, make_backend=make_backend,
                triton_key=triton_key, CompilationError=CompilationError)
    compiler_compiler = make_module("triton.compiler.compiler", __doc__, **face)
    compiler = make_module("triton.compiler", __doc__, compiler=compiler_compiler, errors=errors, **face)
    backends_compiler = make_module("triton.backends.compiler", "tessel's triton.backends.compiler",
                                    BaseBackend=BaseBackend, GPUTarget=GPUTarget)
    backends_driver = make_module("triton.backends.driver", "tessel's triton.backends.driver",
                                  DriverBase=DriverBase, GPUDriver=CudaDriver)
    backends_mod = make_module("triton.backends", "tessel's triton.backends: `nvidia` (with a usable GPU) and "
                               "`cpu` (tessel's interpreter)", backends=backends(), Backend=Backend,
                               compiler=backends_compiler, driver=backends_driver)
    triton = mods["triton"]
    triton.compile = compile
    triton.compiler = compiler
    triton.backends = backends_mod
    triton.CompilationError = CompilationError
    return {
        "triton.compiler": compiler,
        "triton.compiler.compiler": compiler_compiler,
        "triton.compiler.errors": errors,
        "triton.backends": backends_mod,
        "triton.backends.compiler": backends_compiler,
        "triton.backends.driver": backends_driver,
    }
