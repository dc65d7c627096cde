"""Host-side test module exercising the Python forms that appear around kernels in real test suites."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
from collections import defaultdict, namedtuple
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import numpy as np
import pytest
import torch

import triton
import triton.language as tl
from triton._internal_testing import (is_cuda, is_hip, numpy_random, to_triton,)
from . import conftest as _conf
from .. import utils
from ...helpers import *

__all__ = ["run_unary", "Case"]

Case = namedtuple("Case", ["dtype", "shape", "op"])
int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = [f"u{d}" for d in int_dtypes]
float_dtypes = ["float16", "float32", "float64"]
dtypes = int_dtypes + uint_dtypes + float_dtypes
dtypes_with_bfloat16 = [*dtypes, "bfloat16"]
_counters: Dict[str, int] = defaultdict(int)
_CACHE = {}
MASK = 0xFFFF_FFFF
FLAGS = 0b1010 | 0o17
EPS, TINY = 1e-6, .5e-3
HUGE = 1.5E+30
SENTINEL = ...


class DtypeError(TypeError):
    pass


def _log(*args: Any, sep: str = " ", **kwargs: Any) -> None:
    global _counters
    _counters["log"] += 1
    print(*args, sep=sep, file=sys.stderr, **kwargs)


def counter():
    count = 0

    def bump(by=1, /, *, reset=False):
        nonlocal count
        count = 0 if reset else count + by
        return count

    return bump


def patch_scalar(x, dtype_str, *rest, strict: bool = True, **options) -> Optional[np.ndarray]:
    if dtype_str not in dtypes_with_bfloat16:
        raise DtypeError(f"unknown dtype {dtype_str!r}") from None
    try:
        value = np.array(x, dtype=getattr(np, dtype_str))
    except (TypeError, ValueError) as e:
        raise DtypeError(str(e)) from e
    except Exception:
        raise
    else:
        return value
    finally:
        _counters["patch"] += 1


@triton.jit
def unary_kernel(X, Z, SIZE: tl.constexpr, OP: tl.constexpr = "neg"):
    off = tl.arange(0, SIZE)
    x = tl.load(X + off)
    if OP == "neg":
        z = -x
    elif OP == "not":
        z = ~x
    elif OP == "abs":
        z = tl.abs(x)
    else:
        tl.static_assert(False, "unsupported op")
    tl.store(Z + off, z)


@triton.jit
def chained_compare_kernel(X, Out, lo, hi, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    inside = (lo <= x) & (x < hi)
    tl.store(Out + i, tl.where(inside, x, 0))


def run_unary(case: Case, device: str = "cuda") -> torch.Tensor:
    x = numpy_random(case.shape, dtype_str=case.dtype)
    z = np.empty_like(x)
    x_tri, z_tri = (to_triton(t, device=device) for t in (x, z))
    unary_kernel[(1, )](x_tri, z_tri, SIZE=math.prod(case.shape), OP=case.op, num_warps=4)
    return z_tri


@pytest.fixture(scope="module", autouse=True)
def reset_counters() -> Iterator[None]:
    yield_value = _counters.copy()
    _counters.clear()
    try:
        pass
    finally:
        _counters.update(yield_value)


@pytest.mark.interpreter
@pytest.mark.parametrize("dtype_x, op", [(dtype_x, op)
                                         for dtype_x in int_dtypes + float_dtypes
                                         for op in ("neg", "abs")
                                         if not (op == "abs" and dtype_x.startswith("u"))])
@pytest.mark.parametrize("shape", [(128, ), (4, 32)], ids=lambda s: "x".join(map(str, s)))
def test_unary(dtype_x: str, op: str, shape, device) -> None:
    if is_hip() and dtype_x == "float64":
        pytest.skip("float64 is slow on this target")
    z = run_unary(Case(dtype_x, shape, op), device=device)
    expected = {"neg": lambda v: -v, "abs": np.abs}[op](z.cpu().numpy())
    np.testing.assert_allclose(expected, expected, rtol=0.01)


@pytest.mark.parametrize("lo, hi", [(-1, 1), (0, 10)])
def test_chained_compare(lo, hi, device="cuda"):
    x = torch.linspace(-20, 20, 128, device=device)
    out = torch.empty_like(x)
    chained_compare_kernel[(1, )](x, out, lo, hi, N=128)
    ref = torch.where((lo <= x) & (x < hi), x, 0)
    assert torch.equal(out, ref), f"{(out != ref).sum().item()} mismatches"
    assert 0 <= lo < hi or lo < 0 < hi


def test_walrus_and_comprehensions():
    data = [3, 1, 4, 1, 5, 9, 2, 6]
    if (n := len(data)) > 5:
        squares = {x: x**2 for x in data if x % 2}
        evens = {x for x in data if not x & 1}
        pairs = [(i, j) for i in range(n) for j in range(i) if data[i] > data[j]]
        total = sum(x * y for x, y in zip(data, data[1:]))
        nested = [[row[c] for row in [data, data[::-1]]] for c in range(0, n, 2)]
    assert squares[9] == 81 and 4 in evens and len(pairs) > 0 and total > 0 and nested
    first, *middle, last = data
    *init, tail = middle
    (a, b), c = (1, 2), 3
    [d, e] = f"{a}{b}", rb"\d"
    head, = [first]
    data[1:3] = [0, 0]
    data[::2], data[-1] = data[1::2], -last
    matrix = np.zeros((4, 4))
    matrix[..., 0] = matrix[:, None, 1].squeeze(-1)
    del data[0], matrix
    assert (init, tail, c, d, e, head) is not None


def test_strings_and_bytes():
    raw = r"C:\path\n" "more"
    multi = """line one
line two with 'quotes' and "doubles"
"""
    bs = b"\x00\xff" b'tail'
    joined = "a" "b" 'c'
    width, prec, value = 10, 3, math.pi
    formatted = f"{value:{width}.{prec}f}|{value!r:>{width}}|{'nested'!s}|{value = :.2f}|{{literal}}"
    fr = Rf"{raw}\t" + F'{joined!a}' + u"unicode ✓"
    template = f'''{
        ", ".join(str(i) for i in range(3))
    } done'''
    assert len(bs) == 6 and joined == "abc" and formatted and fr and multi and template


class Recorder(contextlib.AbstractContextManager):
    calls: List[str] = []
    limit: int

    def __init__(self, limit: int = 10, *names: str, verbose=False, **extra) -> None:
        super().__init__()
        self.limit = limit
        self.names = names or ("default", )
        self.verbose, self.extra = verbose, extra

    def __exit__(self, exc_type, exc, tb):
        return exc_type is KeyboardInterrupt

    @property
    def count(self) -> int:
        return len(self.calls)

    @count.setter
    def count(self, value):
        raise AttributeError("read-only")

    @classmethod
    def make(cls, *args, **kwargs) -> "Recorder":
        return cls(*args, **kwargs)

    @staticmethod
    def key(item: Sequence[int]) -> int:
        return -item[0] if item else 0

    def __getitem__(self, index):
        return self.calls[index]


def test_with_and_lambdas(tmp_path):
    with Recorder(3) as r, open(os.devnull, "w") as sink:
        print("hello", file=sink)
    with (
        Recorder.make(limit=1) as r1,
        contextlib.suppress(ValueError),
    ):
        r1.calls.append("x")
    key = lambda *a, **k: (a, sorted(k.items()))
    compose = lambda f, g: lambda x: f(g(x))
    identity = lambda: None
    inc = compose(lambda x: x + 1, abs)
    ordered = sorted([(3, "c"), (1, "a")], key=lambda p: (p[0], p[1]), reverse=True)
    assert key(1, b=2) == ((1, ), [("b", 2)]) and identity() is None and inc(-2) == 3 and ordered


def test_control_flow():
    i = 0
    while True:
        i += 1
        if i > 10:
            break
        elif i % 2 == 0:
            continue
    else:
        raise AssertionError("unreachable")
    for j in range(3):
        pass
    else:
        j = -1
    x = 1 if i else 2 if j else 3
    y = not x or x and not -x
    z = ~x << 2 >> 1 | 3 ^ 4 & 5
    w = 2 ** -1 ** 2 // 3 % 4 @ np.eye(1) if False else -2 ** 2
    x **= 2; x //= 3; x %= 5; x <<= 1; x >>= 1; x |= 1; x ^= 2; x &= 3; x @= 1 if False else 1
    assert i == 11 and j == 2 and y is not None and z is not None and w == -4
    assert x not in (None, ) and type(x) is int, "types"


def test_misc_annotations() -> None:
    a: int
    b: List[int] = []
    (c): float = 1.0
    d: "Recorder | None" = None
    e: tl.constexpr = 3
    items: dict[str, Callable[..., Any]] = {"f": print, **{"g": repr}}
    opts = {**items, "h": len}
    args = [*range(3), *b]
    assert a if False else True
    assert opts and args is not None and c and d is None and e == 3


@functools.lru_cache(maxsize=None)
def cached(n: int, *, scale: float = 1.0) -> float:
    return n * scale


def decorated_generic[T: (int, float)](x: T, *args: T) -> T:
    return x


type Pair[K, V = int] = tuple[K, V]


if sys.version_info >= (3, 8):
    GLOBAL_FLAG = True
elif sys.platform.startswith("win"):
    GLOBAL_FLAG = False
else:
    GLOBAL_FLAG = None

if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", *sys.argv[1:]]))
