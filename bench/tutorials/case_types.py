"""What a tutorial case is: a kernel of a tutorial (`Case`), the configurations it is compiled at (`Config`), and
the small problem it runs in the interpreter (`Problem`), whose arguments are NumPy arrays, numbers, or buffers
the harness spells for the CLI (`Gen`, `Desc`, `Ptrs`). `cases.py` and `cases_gemm.py` define cases; `harness.py`
runs them.

A case has two sets of configurations: `configs`, what the tutorial runs on an sm_90 GPU (the harness's default
mode), and `bw`, what its own code picks on a capability-10 GPU (`--arch sm_100a`): the same list retargeted
when the tutorial does not tell the two apart (`bw=None`), else a list of its own (empty: the tutorial does not
run the kernel there).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass
class Gen:
    """A buffer the CLI generates (`rand:SHAPE:DTYPE`): for dtypes NumPy lacks (fp8); the reference reads the
    values back from the interpreter's output directory."""
    spec: str  # e.g. "randn:64x32:fp8e5"

    @property
    def dtype(self) -> str:
        return self.spec.split(":")[2]


@dataclass
class Desc:
    """A host TensorDescriptor over buffer `buf` (row-major over `shape`, or the buffer's own shape)."""
    buf: str
    block: tuple
    shape: tuple | None = None


@dataclass
class Ptrs:
    """A buffer of int64 device addresses of other buffers (grouped GEMM's pointer arrays)."""
    bufs: list


@dataclass
class Problem:
    grid: tuple
    args: dict  # parameter -> np.ndarray | Gen | Desc | Ptrs | int | float (the parameters' order)
    check: object  # fn(buffers: dict name -> np.ndarray (float64 or int)) -> list[(name, got, expected, tol)]
    extra: dict = field(default_factory=dict)  # buffers that are not parameters (viewed by Desc or Ptrs)


@dataclass
class Config:
    label: str
    consts: dict
    num_warps: int = 4
    num_stages: int = 3
    arch: str = "sm_90a"
    interp: bool = True  # also run this configuration in the interpreter (else compile only)
    fast: bool = False  # part of the fast (CI) subset
    maxnreg: int | None = None  # the launch's register cap (Triton's `maxnreg`)
    # sm_100a: whether Triton 3.6 runs this configuration's dots on tcgen05 (False where no tcgen05 instruction
    # takes the tile, e.g. fewer than 4 warps or 32-row tiles: there mma.sync is what Triton emits too)
    tcgen05: bool = True


@dataclass
class Case:
    tutorial: str  # file stem, e.g. "01-vector-add"
    kernel: str
    configs: list
    problem: object  # fn(config, rng) -> Problem
    # The tutorial's own sizes of integer arguments, where they differ from the small problem's in divisibility
    # by 16: the PTX is compiled for Triton's specialization at the tutorial's sizes.
    tut_ints: dict = field(default_factory=dict)
    bw: list | None = None  # the capability-10 configurations (see the module's doc); None: `configs` on sm_100a
    # what the sm_100a PTX must contain when the kernel has a dot: "tcgen05.mma", or "block_scale" for
    # `tl.dot_scaled` (None: no dot)
    tc: str | None = None

    def configs_for(self, arch: str) -> list:
        if arch == "sm_90a":
            return self.configs
        return self.bw if self.bw is not None else on_sm100(self.configs)


def on_sm100(cfgs: list, **consts) -> list:
    """`cfgs` compiled for sm_100a, with `consts` (e.g. the B200's SM count) replacing theirs."""
    out = []
    for c in cfgs:
        new = {**c.consts, **{k: v for k, v in consts.items() if k in c.consts}}
        out.append(dataclasses.replace(c, consts=new, arch="sm_100a"))
    return out
