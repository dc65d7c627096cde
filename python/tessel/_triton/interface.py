"""`triton.runtime.KernelInterface` (the base of everything launched as `kernel[grid](...)`: JITFunction,
Autotuner, Heuristics, and libraries' own subclasses) and the errors of `triton.runtime.errors`.

Kept free of tessel's other Python modules so that `tessel.jit` can derive from it (the native module's
`CompilationError` is the base of `OutOfSharedMemory`).
"""

from __future__ import annotations

from typing import Generic, TypeVar

from tessel._tessel import CompilationError as _CompilationError

T = TypeVar("T")


class KernelInterface(Generic[T]):
    """A launchable kernel: `kernel[grid](*args, **kwargs)` calls `kernel.run(*args, grid=grid, warmup=False,
    **kwargs)` and `kernel.warmup(*args, grid=grid, **kwargs)` calls `run(..., warmup=True)`; subclasses define
    `run`."""

    def run(self, *args, grid, warmup, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define run(*args, grid, warmup, **kwargs)")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def warmup(self, *args, grid, **kwargs):
        return self.run(*args, grid=grid, warmup=True, **kwargs)


class TritonError(Exception):
    """`triton.errors.TritonError`: the base of the runtime's errors."""


class OutOfResources(TritonError):
    """A kernel needs more of a resource (shared memory, registers) than the device has."""

    def __init__(self, required, limit, name):
        super().__init__(required, limit, name)
        self.required, self.limit, self.name = required, limit, name

    def __str__(self):
        return (f"out of resource: {self.name}, Required: {self.required}, Hardware limit: {self.limit}. "
                "Reducing block sizes or `num_stages` may help.")

    def __reduce__(self):
        return type(self), (self.required, self.limit, self.name)


class CompilationOutOfResources(_CompilationError, OutOfResources):
    """A kernel needs more of a CTA's resources (`name`: shared memory, registers, warps) than the target has.
    tessel finds it compiling, so it is a `CompilationError`; Triton finds it loading the kernel and raises
    `OutOfResources(required, limit, name)`, which code written for Triton catches (to skip a config, or to fall
    back to smaller blocks)."""

    def __init__(self, message, required, limit, name):
        OutOfResources.__init__(self, required, limit, name)
        self.message = message

    def __str__(self):
        return self.message

    def __reduce__(self):
        return type(self), (self.message, self.required, self.limit, self.name)


class OutOfSharedMemory(CompilationOutOfResources):
    """A kernel needs more shared memory than one CTA may have: `OutOfResources(required, limit, "shared
    memory")`, as Triton raises it."""

    def __init__(self, message, required, limit):
        CompilationOutOfResources.__init__(self, message, required, limit, "shared memory")

    def __reduce__(self):
        return type(self), (self.message, self.required, self.limit)


class _MessageError(TritonError):
    _prefix = ""

    def __init__(self, error_message=None):
        super().__init__(error_message)
        self.error_message = error_message

    def __str__(self):
        return self._prefix + (self.error_message or "")


class PTXASError(_MessageError):
    """ptxas failed on a kernel's PTX."""

    _prefix = "PTXAS error: "


class AutotunerError(_MessageError, RuntimeError):
    """The autotuner cannot choose a config (none left after pruning, none compiled)."""

    _prefix = "Autotuner error: "
