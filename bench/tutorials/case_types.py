"""What a tutorial case is: a kernel of a tutorial (`Case`), the configurations it is compiled at (`Config`), and
the small problem it runs in the interpreter (`Problem`), whose arguments are NumPy arrays, numbers, or buffers
the harness spells for the CLI (`Gen`, `Desc`, `Ptrs`). `cases.py` and `cases_gemm.py` define cases; `harness.py`
runs them.
"""

from __future__ import annotations

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


@dataclass
class Case:
    tutorial: str  # file stem, e.g. "01-vector-add"
    kernel: str
    configs: list
    problem: object  # fn(config, rng) -> Problem
    # The tutorial's own sizes of integer arguments, where they differ from the small problem's in divisibility
    # by 16: the PTX is compiled for Triton's specialization at the tutorial's sizes.
    tut_ints: dict = field(default_factory=dict)
