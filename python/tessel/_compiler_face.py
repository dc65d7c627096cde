"""Triton's compiler face under the shim: `triton.compiler`, `triton.compile` and `triton.backends`, the modules
torch.compile (inductor) drives."""

from __future__ import annotations


def modules(mods, make_module):
    """The compiler-face modules by name, given the shim's other modules `mods` (attributes may be added to
    `mods["triton"]`) and its module constructor `make_module(name, doc, **attrs)`."""
    return {}
