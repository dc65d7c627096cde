"""Triton's module tree as tessel provides it under the shim (`python -m tessel`, or `python -m tessel shim
install`), by Triton area: `interface` (KernelInterface and the runtime's errors, which tessel's own classes
derive from), `runtime` (`triton.runtime.*`), `language` (`triton.language.core`, `.math`, `.extra.*`),
`knobs` (`triton.knobs`); `install` and `startup` make `import triton` resolve to tessel in every process of an
environment. `tessel.shim` assembles the modules (`shim.modules()`, `shim.install()`).
"""
