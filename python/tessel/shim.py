"""Makes `import triton` (and the submodules Triton scripts use) resolve to tessel, for `python -m tessel`.

The modules are installed in `sys.modules`, and a finder turns any other `triton.*` import into an ImportError
that names the module tessel does not provide (instead of a confusing error from a half-found package).
"""

from __future__ import annotations

import importlib.abc
import sys
import types

from . import autotuner as autotune, gluon, language, runtime, testing, tools
from .jit import jit


def cdiv(x, y):
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _module(name, doc, **attrs):
    m = types.ModuleType(name, doc)
    m.__dict__.update(attrs)
    m.__path__ = []  # a package: submodules resolve through sys.modules and the finder below
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
    tl = language
    ttgl = gluon.language
    tensor_descriptor = _module("triton.tools.tensor_descriptor", tools.__doc__,
                                TensorDescriptor=tools.TensorDescriptor)
    tools_mod = _module("triton.tools", "tessel's triton.tools", tensor_descriptor=tensor_descriptor)
    gluon_mod = _module("triton.experimental.gluon", gluon.__doc__, jit=gluon.jit, language=ttgl,
                        constexpr_function=gluon.constexpr_function)
    experimental = _module("triton.experimental", "tessel's triton.experimental", gluon=gluon_mod)
    runtime_mod = _module("triton.runtime", runtime.__doc__, driver=runtime.driver, Autotuner=autotune.Autotuner,
                          Heuristics=autotune.Heuristics)
    testing_mod = _module("triton.testing", testing.__doc__, do_bench=testing.do_bench,
                          assert_close=testing.assert_close)
    triton = _module(
        "triton", "tessel standing in for Triton",
        __version__="3.5.0+tessel",
        jit=jit, autotune=autotune.autotune, Config=autotune.Config, heuristics=autotune.heuristics,
        cdiv=cdiv, next_power_of_2=next_power_of_2, language=tl, testing=testing_mod, runtime=runtime_mod,
        experimental=experimental, tools=tools_mod, CompilationError=_compilation_error(),
    )
    return {
        "triton": triton,
        "triton.language": tl,
        "triton.testing": testing_mod,
        "triton.runtime": runtime_mod,
        "triton.runtime.driver": runtime.driver,
        "triton.experimental": experimental,
        "triton.experimental.gluon": gluon_mod,
        "triton.experimental.gluon.language": ttgl,
        "triton.tools": tools_mod,
        "triton.tools.tensor_descriptor": tensor_descriptor,
    }


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
