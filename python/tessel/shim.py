"""Makes `import triton` (and the submodules Triton scripts use) resolve to tessel, for `python -m tessel`.

The modules are installed in `sys.modules`, and a finder turns any other `triton.*` import into an ImportError
that names the module tessel does not provide (instead of a confusing error from a half-found package).

Each module has a `ModuleSpec` (torch probes `importlib.util.find_spec("triton")` when CUDA initializes, and
that raises on a module whose `__spec__` is None). torch's optional Triton integration (inductor, the sparse
Triton kernels: `torch.utils._triton.has_triton()`) must see no usable Triton rather than crash or try to drive
tessel as Triton: `triton.backends.backends` is empty, so torch concludes "triton not built with the 'nvidia'
backend", and `triton.compiler` is not provided (older torch imports `triton.compiler.compiler.triton_key`
and treats the ImportError as "no Triton").
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

from . import autotuner as autotune, cublas, gluon, language, profiler, profiler_viewer, runtime, testing, tools
from . import _compiler_face
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


def _module(name, doc, **attrs):
    m = types.ModuleType(name, doc)
    m.__dict__.update(attrs)
    m.__path__ = []  # a package: submodules resolve through sys.modules and the finder below
    m.__spec__ = importlib.machinery.ModuleSpec(name, _LOADER, is_package=True)
    m.__loader__ = _LOADER
    m.__package__ = name
    return m


class _TritonFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "triton" or fullname.startswith("triton."):
            raise ModuleNotFoundError(
                f"tessel stands in for Triton here and does not provide the module `{fullname}`", name=fullname
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
    driver_mod = _module("triton.runtime.driver", runtime.__doc__, driver=runtime.driver)
    jit_mod = _module("triton.runtime.jit", jit_module.__doc__, JITFunction=jit_module.JITFunction, jit=jit)
    autotuner_mod = _module("triton.runtime.autotuner", autotune.__doc__, Autotuner=autotune.Autotuner,
                            Config=autotune.Config, Heuristics=autotune.Heuristics, autotune=autotune.autotune,
                            heuristics=autotune.heuristics)
    runtime_mod = _module("triton.runtime", runtime.__doc__, driver=runtime.driver, Autotuner=autotune.Autotuner,
                          Heuristics=autotune.Heuristics, Config=autotune.Config, JITFunction=jit_module.JITFunction,
                          jit=jit_mod, autotuner=autotuner_mod)
    testing_mod = _module("triton.testing", testing.__doc__, do_bench=testing.do_bench,
                          do_bench_cudagraph=testing.do_bench_cudagraph,
                          assert_close=testing.assert_close, Benchmark=testing.Benchmark, Mark=testing.Mark,
                          perf_report=testing.perf_report)
    # The device-function namespaces kernels call into (`libdevice.asin(x)`, `tl.extra.cuda.gdc_wait()`): tessel
    # compiles those calls from the kernel's source; the modules exist so that host code can import them, as it
    # does with Triton (calling them outside a kernel is an error there too).
    libdevice_mod = _module("triton.language.extra.libdevice",
                            "device functions (libdevice): compiled by tessel inside kernels only")
    cuda_libdevice_mod = _module("triton.language.extra.cuda.libdevice",
                                 "device functions (libdevice): compiled by tessel inside kernels only")
    cuda_mod = _module("triton.language.extra.cuda", "CUDA device functions: compiled by tessel inside kernels only",
                       libdevice=cuda_libdevice_mod)
    extra_mod = _module("triton.language.extra", "tessel's triton.language.extra", libdevice=libdevice_mod,
                        cuda=cuda_mod)
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
    # The target type scripts name (`from triton.backends.compiler import GPUTarget`), what
    # `driver.active.get_current_target()` returns.
    backends_compiler = _module("triton.backends.compiler", "tessel's triton.backends.compiler: the target type",
                                GPUTarget=runtime.GPUTarget)
    # No backends: torch's Triton integration finds none and stays off (see the module's docstring).
    backends = _module("triton.backends", "tessel's triton.backends: no Triton backends", backends={},
                       compiler=backends_compiler)
    triton = _module(
        "triton", "tessel standing in for Triton",
        __version__="3.5.0+tessel",
        jit=jit, autotune=autotune.autotune, Config=autotune.Config, heuristics=autotune.heuristics,
        JITFunction=jit_module.JITFunction, cdiv=cdiv, next_power_of_2=next_power_of_2, language=tl,
        testing=testing_mod, runtime=runtime_mod, experimental=experimental, tools=tools_mod, backends=backends,
        set_allocator=set_allocator, CompilationError=_compilation_error(), profiler=profiler_mod,
    )
    mods = {
        "triton": triton,
        "triton.language": tl,
        "triton.language.extra": extra_mod,
        "triton.language.extra.libdevice": libdevice_mod,
        "triton.language.extra.cuda": cuda_mod,
        "triton.language.extra.cuda.libdevice": cuda_libdevice_mod,
        "triton.testing": testing_mod,
        "triton.profiler": profiler_mod,
        "triton._C": c_mod,
        "triton._C.libtriton": libtriton_mod,
        "triton._C.libtriton.nvidia": nvidia_mod,
        "triton._C.libtriton.nvidia.cublas": cublas_mod,
        "triton.profiler.viewer": viewer_mod,
        "triton.runtime": runtime_mod,
        "triton.runtime.driver": driver_mod,
        "triton.runtime.jit": jit_mod,
        "triton.runtime.autotuner": autotuner_mod,
        "triton.backends": backends,
        "triton.backends.compiler": backends_compiler,
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
    if not any(isinstance(f, _TritonFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TritonFinder())
