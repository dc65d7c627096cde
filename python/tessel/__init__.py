"""tessel from Python: Triton's launch API, autotuner and `python -m tessel SCRIPT.py`, on tessel's compiler.

    import tessel
    import tessel.language as tl

    @tessel.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offs, tl.load(x + offs, mask=offs < n) + tl.load(y + offs, mask=offs < n), mask=offs < n)

    add[(tessel.cdiv(n, 256),)](x, y, out, n, BLOCK=256)   # numpy arrays: the interpreter; CUDA tensors: the GPU
"""

from . import gluon, language, layouts, testing
from ._tessel import (CompilationError, DeadlockError, DeviceAssertionError, GPUError, InterpreterError,
                      OutOfBoundsError)
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from .jit import CompiledKernel, JITFunction, jit
from .shim import cdiv, next_power_of_2
from .testing import do_bench
from .tools import TensorDescriptor

__all__ = [
    "Autotuner", "CompilationError", "CompiledKernel", "Config", "DeadlockError", "DeviceAssertionError", "GPUError",
    "Heuristics", "InterpreterError", "JITFunction", "OutOfBoundsError", "TensorDescriptor", "autotune", "cdiv",
    "do_bench", "gluon", "heuristics", "jit", "language", "layouts", "next_power_of_2", "testing",
]
