"""Makes `import triton` (and the submodules Triton scripts use) resolve to tessel, for `python -m tessel`.

The modules are installed in `sys.modules`, and a finder turns any other `triton.*` import into an ImportError
that names the module tessel does not provide (instead of a confusing error from a half-found package).

Each module has a `ModuleSpec` (torch probes `importlib.util.find_spec("triton")` when CUDA initializes, and
that raises on a module whose `__spec__` is None). torch's Triton integration (inductor, the sparse
Triton kernels: `torch.utils._triton.has_triton()`) drives tessel as Triton through its compiler face
(`triton.compiler`, `triton.compile`, `triton.backends`: see `_compiler_face`).

The modules are built by area in `tessel._triton` (`runtime`, `language`, `knobs`); every module has a `__file__`
inside the tessel package (the file that builds it), so `triton.__file__` names tessel. `python -m tessel shim
install` makes every process of the environment resolve `import triton` here (`tessel._triton.install`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

from . import autotuner as autotune, cublas, gluon, language, profiler, profiler_viewer, runtime, testing, tools
from . import _compiler_face
from ._triton import interface, knobs, language as language_face, runtime as runtime_face
from .gluon import _namespaces
from .jit import jit


def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


_allocator = None


def set_allocator(allocator):
    """`triton.set_allocator(fn)`: the function Triton calls for the global scratch memory of kernels that build
    tensor descriptors on the device (`fn(size, alignment, stream) -> tensor`). Stored (`get_allocator()`) so
    that Triton scripts run unchanged, but not called: tessel's launcher allocates that scratch itself, from the
    CUDA driver's memory pool in the launch's stream order, and keeps it for the kernel's next launch there."""
    global _allocator
    _allocator = allocator


def get_allocator():
    return _allocator


class _ShimLoader(importlib.abc.Loader):
    """The loader named by the shim modules' specs: they are created here, already complete."""

    def create_module(self, spec):
        return sys.modules.get(spec.name)

    def exec_module(self, module):
        pass


_LOADER = _ShimLoader()
# The `triton` modules the shim installed in this process (what the finder may put back).
_PROVIDED: set[str] = set()


def _module(name, doc, **attrs):
    """A shim module; its `__file__` is the tessel file that builds it (the caller's), unless given."""
    m = types.ModuleType(name, doc)
    m.__file__ = sys._getframe(1).f_globals.get("__file__", __file__)
    m.__dict__.update(attrs)
    m.__path__ = []  # a package: submodules resolve through sys.modules and the finder below
    m.__spec__ = importlib.machinery.ModuleSpec(name, _LOADER, is_package=True)
    m.__loader__ = _LOADER
    m.__package__ = name
    return m


class _TritonFinder(importlib.abc.MetaPathFinder):
    """Keeps `triton` tessel's while the shim is installed. A shim module something took out of `sys.modules`
    is put back (torch's CUDA start-up asks `importlib.util.find_spec("triton")`, which must answer, not raise);
    a module tessel does not provide is an error naming it, never upstream Triton's."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "triton" or fullname.startswith("triton."):
            if fullname in _PROVIDED:
                install()
                return sys.modules[fullname].__spec__
            raise ModuleNotFoundError(
                f"No module named '{fullname}': tessel stands in for Triton here and does not provide the module "
                f"`{fullname}`", name=fullname
            )
        return None


def modules():
    """The `triton` modules tessel provides, by name."""
    jit_module = sys.modules[jit.__module__]  # `tessel.jit` the module (the package's `jit` is the decorator)

    tl = language
    ttgl = gluon.language
    tensor_descriptor = _module("triton.tools.tensor_descriptor", tools.__doc__,
                                TensorDescriptor=tools.TensorDescriptor)
    tools_mod = _module("triton.tools", "tessel's triton.tools", tensor_descriptor=tensor_descriptor)
    gluon_mod = _module("triton.experimental.gluon", gluon.__doc__, jit=gluon.jit, language=ttgl,
                        constexpr_function=gluon.constexpr_function, aggregate=gluon.aggregate,
                        must_use_result=gluon.must_use_result, nvidia=gluon.nvidia)
    experimental = _module("triton.experimental", "tessel's triton.experimental", gluon=gluon_mod)
    runtime_mods = runtime_face.modules(_module)
    testing_mod = _module("triton.testing", testing.__doc__, do_bench=testing.do_bench,
                          do_bench_cudagraph=testing.do_bench_cudagraph,
                          assert_close=testing.assert_close, Benchmark=testing.Benchmark, Mark=testing.Mark,
                          perf_report=testing.perf_report, get_dram_gbps=testing.get_dram_gbps,
                          get_max_tensorcore_tflops=testing.get_max_tensorcore_tflops,
                          get_max_simd_tflops=testing.get_max_simd_tflops)
    # The device-function namespaces kernels call into (`libdevice.asin(x)`, `tl.extra.cuda.gdc_wait()`,
    # `tl.math.rsqrt`): host stand-ins, compiled by tessel inside kernels (see `tessel._triton.language`).
    language_mods = language_face.modules(_module)
    for sub in ("core", "standard", "math", "extra"):
        setattr(tl, sub, language_mods[f"triton.language.{sub}"])
    knobs_mod = _module("triton.knobs", knobs.__doc__, **knobs.module_attrs())
    errors_mod = _module("triton.errors", "tessel's triton.errors", TritonError=interface.TritonError)
    viewer_mod = _module("triton.profiler.viewer", profiler_viewer.__doc__, parse=profiler_viewer.parse,
                         print_tree=profiler_viewer.print_tree)
    profiler_mod = _module("triton.profiler", profiler.__doc__, start=profiler.start, activate=profiler.activate,
                           deactivate=profiler.deactivate, finalize=profiler.finalize, scope=profiler.scope,
                           enter_scope=profiler.enter_scope, exit_scope=profiler.exit_scope, viewer=viewer_mod)
    cublas_mod = _module("triton._C.libtriton.nvidia.cublas", cublas.__doc__, CublasLt=cublas.CublasLt)
    nvidia_mod = _module("triton._C.libtriton.nvidia", "tessel's stand-ins for Triton's NVIDIA bindings",
                         cublas=cublas_mod)
    libtriton_mod = _module("triton._C.libtriton", "tessel's triton._C.libtriton: the cuBLAS baseline only",
                            nvidia=nvidia_mod)
    c_mod = _module("triton._C", "tessel's triton._C", libtriton=libtriton_mod)
    triton = _module(
        "triton", "tessel standing in for Triton",
        __version__="3.5.0+tessel",
        jit=jit, autotune=autotune.autotune, Config=autotune.Config, heuristics=autotune.heuristics,
        JITFunction=jit_module.JITFunction, KernelInterface=interface.KernelInterface, cdiv=cdiv,
        next_power_of_2=next_power_of_2, language=tl, testing=testing_mod, runtime=runtime_mods["triton.runtime"],
        experimental=experimental, tools=tools_mod, set_allocator=set_allocator,
        CompilationError=_compilation_error(), OutOfResources=interface.OutOfResources, profiler=profiler_mod,
        knobs=knobs_mod, errors=errors_mod, TritonError=interface.TritonError,
        constexpr_function=language.constexpr_function, must_use_result=gluon.must_use_result,
    )
    mods = {
        "triton": triton,
        "triton.language": tl,
        **language_mods,
        "triton.testing": testing_mod,
        "triton.knobs": knobs_mod,
        "triton.errors": errors_mod,
        "triton.profiler": profiler_mod,
        "triton._C": c_mod,
        "triton._C.libtriton": libtriton_mod,
        "triton._C.libtriton.nvidia": nvidia_mod,
        "triton._C.libtriton.nvidia.cublas": cublas_mod,
        "triton.profiler.viewer": viewer_mod,
        **runtime_mods,
        "triton.experimental": experimental,
        "triton.experimental.gluon": gluon_mod,
        "triton.experimental.gluon.language": ttgl,
        "triton.experimental.gluon.nvidia": gluon.nvidia,
        "triton.experimental.gluon.nvidia.hopper": gluon.nvidia.hopper,
        "triton.experimental.gluon.nvidia.blackwell": gluon.nvidia.blackwell,
        **{f"{_namespaces.ROOT}.{rel}": m for rel, m in _namespaces.MODULES.items()},
        "triton.tools": tools_mod,
        "triton.tools.tensor_descriptor": tensor_descriptor,
    }
    # Triton's compiler face (`triton.compiler`, `triton.compile`, `triton.backends`): what torch.compile drives.
    mods.update(_compiler_face.modules(mods, _module))
    for name, m in mods.items():
        if isinstance(m, types.ModuleType) and getattr(m, "__file__", None) is None:
            # gluon's namespaces (`_namespaces.MODULES`) are built there
            m.__file__ = _namespaces.__file__ if name.startswith(_namespaces.ROOT) else __file__
    return mods


def _compilation_error():
    from . import _tessel

    return _tessel.CompilationError


def install():
    """Installs the `triton` modules (replacing an installed Triton for this process)."""
    for name in [n for n in sys.modules if n == "triton" or n.startswith("triton.")]:
        del sys.modules[name]
    mods = modules()
    for m in mods.values():
        if isinstance(m, types.ModuleType) and not hasattr(m, "__path__"):
            m.__path__ = []  # so `import triton.language.extra` reaches the finder and its message
    sys.modules.update(mods)
    _PROVIDED.update(name for name in mods if name == "triton" or name.startswith("triton."))
    # Under the shim the language's host classes are Triton's: code that names a value's type by its module
    # (torch's inductor writes `X: triton.language.constexpr = ...` into the kernels it generates) must find
    # them through `triton`.
    for cls in (language.dtype, language.constexpr):
        cls.__module__ = "triton.language"
    if not any(isinstance(f, _TritonFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TritonFinder())
